//! A small process for the multi-process segment tests (not an end-user tool).
//!
//! ```text
//! ferroflake-segment-probe --store ADDRESS --key K [--create-step S] [--step-max M]
//!     [--threads T] [--count N] [--pace-us P]
//! ```
//!
//! Opens the store at ADDRESS (a SQLite file or a server URL), creates K (start 1, step S) unless it exists, and takes N
//! IDs on each of T threads, printing `<thread> <id>` per ID. With `--pace-us` each line is
//! flushed at once and the thread sleeps P µs between IDs (so a test can kill the process
//! mid-segment and know what was issued). Exits 3 on any error, with its kind (`REWOUND`,
//! `STORE`, ...) and message on stderr.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use ferroflake_segment::{SegmentAllocator, SegmentConfig, SegmentError};

#[derive(Parser)]
#[command(about = "Takes segment IDs from a store (for the multi-process tests)")]
struct Args {
    /// The store: an absolute SQLite file path or a postgres://, mysql:// or redis:// URL.
    #[arg(long)]
    store: String,
    /// The key.
    #[arg(long)]
    key: String,
    /// The step of the key if this process creates it.
    #[arg(long, default_value_t = 10)]
    create_step: u64,
    /// The largest adaptive step.
    #[arg(long, default_value_t = 1_000_000)]
    step_max: u64,
    /// Threads taking IDs.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// IDs per thread.
    #[arg(long, default_value_t = 100)]
    count: u64,
    /// Pause between IDs, in µs; with it, every line is flushed at once.
    #[arg(long, default_value_t = 0)]
    pace_us: u64,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("ferroflake-segment-probe: {}: {e}", e.name());
        std::process::exit(3);
    }
}

fn run(args: &Args) -> Result<(), SegmentError> {
    let store = ferroflake_segment_stores::open(Some(&args.store))?;
    match store.create(&args.key, 1, args.create_step) {
        Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
        Err(e) => return Err(e),
    }
    let config = SegmentConfig {
        max_wait: Duration::from_secs(10),
        max_step: args.step_max,
        ..SegmentConfig::default()
    };
    let allocator = SegmentAllocator::new(store, config)?;
    let handle = allocator.key(&args.key)?;
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..args.threads)
        .map(|t| {
            let handle = handle.clone();
            let out = Arc::clone(&out);
            let (count, pace) = (args.count, args.pace_us);
            std::thread::spawn(move || -> Result<(), SegmentError> {
                let mut lines = String::new();
                for _ in 0..count {
                    let id = handle.next_id()?;
                    if pace > 0 {
                        let mut out = out.lock().unwrap();
                        writeln!(out, "{t} {id}").ok();
                        out.flush().ok();
                        drop(out);
                        std::thread::sleep(Duration::from_micros(pace));
                    } else {
                        lines.push_str(&format!("{t} {id}\n"));
                    }
                }
                out.lock().unwrap().write_all(lines.as_bytes()).ok();
                Ok(())
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a probe thread panicked")?;
    }
    let report = allocator.shutdown();
    if let Some((key, e)) = report.failed.first() {
        eprintln!("give-back of {key} failed: {e}");
    }
    Ok(())
}
