//! Long runs that criterion's per-iteration statistics do not capture: the sustained rate
//! against a layout's cap, the worst window of 1,024 consecutive calls, and duplicate and
//! order checks of everything issued. Prints a table, and writes it as JSON lines to
//! `$FERROFLAKE_BENCH_REPORT` when that is set (benches/run.sh sets it).
//!
//! An optional filter argument (as with criterion) runs only the entries whose name
//! contains it.

mod common;

use std::fmt::Write as _;
use std::time::Duration;

use ferroflake::{Clock, FastClock, Generator, Layout, Options};
use ferroflake_benches::{
    collect_on_two_threads, count_duplicates, count_order_breaks, uncapped_layout, Trace,
};

/// How long each single-thread run lasts.
const RUN_FOR: Duration = Duration::from_millis(1500);
/// The window the worst-chunk figure is taken over.
const CHUNK: usize = 1024;
const ONE_MS_NS: f64 = 1e6;

/// One line of the report.
struct Row {
    name: String,
    threads: u32,
    calls: usize,
    secs: f64,
    /// The layout's cap for one node, IDs per second (None: no cap).
    cap_per_second: Option<f64>,
    worst_chunk_ns: Option<f64>,
    stalls_over_1ms: Option<usize>,
    /// Calls that returned an error (recorded as ID 0, left out of the two counts below).
    errors: usize,
    duplicates: usize,
    order_breaks: usize,
}

impl Row {
    fn per_second(&self) -> f64 {
        self.calls as f64 / self.secs
    }

    fn json(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v:.1}"));
        format!(
            "{{\"name\":\"{}\",\"threads\":{},\"calls\":{},\"secs\":{:.4},\"per_second\":{:.1},\
             \"cap_per_second\":{},\"worst_chunk_ns\":{},\"stalls_over_1ms\":{},\
             \"errors\":{},\"duplicates\":{},\"order_breaks\":{}}}",
            self.name,
            self.threads,
            self.calls,
            self.secs,
            self.per_second(),
            opt(self.cap_per_second),
            opt(self.worst_chunk_ns),
            self.stalls_over_1ms
                .map_or("null".to_string(), |n| n.to_string()),
            self.errors,
            self.duplicates,
            self.order_breaks,
        )
    }

    fn line(&self) -> String {
        let fraction = self.cap_per_second.map_or("-".to_string(), |cap| {
            format!("{:.2}%", 100.0 * self.per_second() / cap)
        });
        let worst = self
            .worst_chunk_ns
            .map_or("-".to_string(), |ns| format!("{:.1} us", ns / 1e3));
        let over = self
            .stalls_over_1ms
            .map_or("-".to_string(), |n| n.to_string());
        format!(
            "{:<34} {:>2} {:>10} {:>14.0} {:>9} {:>12} {:>8} {:>6} {:>5} {:>5}",
            self.name,
            self.threads,
            self.calls,
            self.per_second(),
            fraction,
            worst,
            over,
            self.errors,
            self.duplicates,
            self.order_breaks
        )
    }
}

/// Calls a generator on one thread for `RUN_FOR` and turns the trace into a row.
fn single<T: Copy + Default + Ord>(
    name: &str,
    cap_per_second: Option<f64>,
    max_calls: usize,
    next: impl FnMut() -> T,
) -> Row {
    let trace = Trace::record(RUN_FOR, max_calls, next);
    Row {
        name: name.to_string(),
        threads: 1,
        calls: trace.calls(),
        secs: trace.elapsed.as_secs_f64(),
        cap_per_second,
        worst_chunk_ns: Some(trace.worst_window_ns(CHUNK)),
        stalls_over_1ms: Some(trace.stalls_over(CHUNK, ONE_MS_NS)),
        ..checked(&[&trace.ids])
    }
}

/// Two threads sharing one generator, `per_thread` calls each.
fn shared<T: Copy + Default + Ord + Send>(
    name: &str,
    cap_per_second: Option<f64>,
    per_thread: usize,
    next: impl Fn() -> T + Sync,
) -> Row {
    let ([a, b], elapsed) = collect_on_two_threads(per_thread, next);
    let secs = elapsed.as_secs_f64();
    Row {
        name: name.to_string(),
        threads: 2,
        calls: a.len() + b.len(),
        secs,
        cap_per_second,
        worst_chunk_ns: None,
        stalls_over_1ms: None,
        ..checked(&[&a, &b])
    }
}

/// Error, duplicate and order counts over the IDs each thread issued (errors are ID 0).
fn checked<T: Copy + Default + Ord>(threads: &[&[T]]) -> Row {
    let issued: Vec<Vec<T>> = threads
        .iter()
        .map(|ids| {
            ids.iter()
                .copied()
                .filter(|&id| id != T::default())
                .collect()
        })
        .collect();
    let total: usize = threads.iter().map(|ids| ids.len()).sum();
    let ok: usize = issued.iter().map(Vec::len).sum();
    Row {
        name: String::new(),
        threads: 0,
        calls: 0,
        secs: 0.0,
        cap_per_second: None,
        worst_chunk_ns: None,
        stalls_over_1ms: None,
        errors: total - ok,
        duplicates: count_duplicates(issued.iter().flatten().copied()),
        order_breaks: issued.iter().map(|ids| count_order_breaks(ids)).sum(),
    }
}

/// Calls for a capped run: the cap over `RUN_FOR`, with room to spare.
fn calls_at(cap_per_second: f64) -> usize {
    (cap_per_second * RUN_FOR.as_secs_f64() * 1.25) as usize + 65_536
}

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with("--"))
        .unwrap_or_default();
    let wanted = |name: &str| name.contains(filter.as_str());
    let mut rows = Vec::new();

    let twitter = Layout::twitter();
    let twitter_cap = twitter.capacity_per_second() as f64;
    let sonyflake = Layout::sonyflake();
    let sonyflake_cap = sonyflake.capacity_per_second() as f64;
    let fast = FastClock::for_tick_ms(1);
    let coarse = FastClock::for_tick_ms(sonyflake.tick_ms());
    eprintln!(
        "FastClock sources: 1 ms tick -> {:?}, 10 ms tick -> {:?}",
        fast.source(),
        coarse.source()
    );

    let mut run = |row: &dyn Fn() -> Row, name: &str| {
        if wanted(name) {
            let row = row();
            eprintln!("{}", row.line());
            rows.push(row);
        }
    };

    // One thread at the cap: sustained rate and worst chunk.
    run(
        &|| {
            let generator = Generator::new(twitter, 1).expect("twitter generator");
            let row = single(
                "ferroflake twitter system",
                Some(twitter_cap),
                calls_at(twitter_cap),
                || generator.next_id().unwrap_or(0),
            );
            note_counters(&generator);
            row
        },
        "ferroflake twitter system",
    );
    run(
        &|| {
            let generator = Generator::with_clock(twitter, 1, fast, Options::default())
                .expect("twitter generator on the fast clock");
            let row = single(
                "ferroflake twitter fast",
                Some(twitter_cap),
                calls_at(twitter_cap),
                || generator.next_id().unwrap_or(0),
            );
            note_counters(&generator);
            row
        },
        "ferroflake twitter fast",
    );
    run(
        &|| {
            let generator = Generator::with_clock(sonyflake, 1, coarse, Options::default())
                .expect("sonyflake generator on the fast clock");
            let row = single(
                "ferroflake sonyflake fast",
                Some(sonyflake_cap),
                calls_at(sonyflake_cap),
                || generator.next_id().unwrap_or(0),
            );
            note_counters(&generator);
            row
        },
        "ferroflake sonyflake fast",
    );
    // One thread, no cap: the worst chunk of the code alone.
    run(
        &|| {
            let generator = Generator::new(uncapped_layout(), 1).expect("wide generator");
            single("ferroflake wide system", None, 60_000_000, || {
                generator.next_id().unwrap_or(0)
            })
        },
        "ferroflake wide system",
    );
    run(
        &|| {
            let generator = common::snowflaked();
            single(
                "snowflaked",
                Some(twitter_cap),
                calls_at(twitter_cap),
                || generator.generate::<u64>(),
            )
        },
        "snowflaked",
    );
    run(
        &|| {
            let mut generator = snowflake::SnowflakeIdGenerator::new(1, 1);
            let mut next = || generator.real_time_generate();
            // `single` takes FnMut; the generator lives in this closure.
            single(
                "rs-snowflake",
                Some(twitter_cap),
                calls_at(twitter_cap),
                &mut next,
            )
        },
        "rs-snowflake",
    );
    run(
        &|| {
            let generator = common::snowflake_me();
            single(
                "snowflake_me",
                Some(twitter_cap),
                calls_at(twitter_cap),
                || generator.next_id().map_or(0, |id| id.as_u64()),
            )
        },
        "snowflake_me",
    );
    run(
        &|| {
            // Its defaults: 8 worker + 8 sequence bits, sequence values 5..=255 per ms.
            common::idgenerator_init(8, 8);
            single(
                "idgenerator (defaults)",
                Some(251_000.0),
                40_000_000,
                idgenerator::IdInstance::next_id,
            )
        },
        "idgenerator (defaults)",
    );
    run(
        &|| {
            let generator = common::sonyflake();
            single(
                "sonyflake",
                Some(sonyflake_cap),
                calls_at(sonyflake_cap),
                || generator.next_id().map_or(0, |id| id.to_u64()),
            )
        },
        "sonyflake",
    );

    // Two threads sharing one generator: rate, duplicates, per-thread order.
    run(
        &|| {
            let generator = Generator::new(twitter, 1).expect("twitter generator");
            let row = shared(
                "ferroflake twitter system x2",
                Some(twitter_cap),
                3_000_000,
                || generator.next_id().unwrap_or(0),
            );
            note_counters(&generator);
            row
        },
        "ferroflake twitter system x2",
    );
    run(
        &|| {
            let generator = Generator::new(uncapped_layout(), 1).expect("wide generator");
            shared("ferroflake wide system x2", None, 10_000_000, || {
                generator.next_id().unwrap_or(0)
            })
        },
        "ferroflake wide system x2",
    );
    run(
        &|| {
            let generator = common::snowflaked();
            shared("snowflaked x2", Some(twitter_cap), 3_000_000, || {
                generator.generate::<u64>()
            })
        },
        "snowflaked x2",
    );
    run(
        &|| {
            let generator = common::rs_snowflake();
            shared(
                "rs-snowflake mutex x2",
                Some(twitter_cap),
                3_000_000,
                || common::rs_snowflake_next(&generator),
            )
        },
        "rs-snowflake mutex x2",
    );
    run(
        &|| {
            let generator = common::snowflake_me();
            shared("snowflake_me x2", Some(twitter_cap), 3_000_000, || {
                generator.next_id().map_or(0, |id| id.as_u64())
            })
        },
        "snowflake_me x2",
    );
    run(
        &|| {
            let generator = common::snowflake_me_uncapped();
            shared("snowflake_me wide x2", None, 5_000_000, || {
                generator.next_id().map_or(0, |id| id.as_u64())
            })
        },
        "snowflake_me wide x2",
    );
    run(
        &|| {
            common::idgenerator_init(8, 8);
            shared(
                "idgenerator (defaults) x2",
                Some(251_000.0),
                3_000_000,
                idgenerator::IdInstance::next_id,
            )
        },
        "idgenerator (defaults) x2",
    );
    run(
        &|| {
            let generator = common::sonyflake();
            shared("sonyflake x2", Some(sonyflake_cap), 10_000, || {
                generator.next_id().map_or(0, |id| id.to_u64())
            })
        },
        "sonyflake x2",
    );
    run(
        &|| {
            shared("uuid now_v7 x2", None, 5_000_000, || {
                uuid::Uuid::now_v7().as_u128()
            })
        },
        "uuid now_v7 x2",
    );
    run(
        &|| {
            let generator = common::ulid_monotonic();
            shared("ulid generator mutex x2", None, 5_000_000, || {
                common::ulid_next(&generator)
            })
        },
        "ulid generator mutex x2",
    );

    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<34} {:>2} {:>10} {:>14} {:>9} {:>12} {:>8} {:>6} {:>5} {:>5}",
        "run", "th", "calls", "IDs/s", "of cap", "worst 1024", "stalls", "errors", "dups", "order"
    );
    for row in &rows {
        let _ = writeln!(table, "{}", row.line());
    }
    println!("{table}");
    if let Ok(path) = std::env::var("FERROFLAKE_BENCH_REPORT") {
        let lines: Vec<String> = rows.iter().map(Row::json).collect();
        if let Err(error) = std::fs::write(&path, lines.join("\n") + "\n") {
            eprintln!("could not write {path}: {error}");
        }
    }
}

fn note_counters<C: Clock>(generator: &Generator<C>) {
    let counters = generator.counters();
    eprintln!(
        "  counters: waits {}, borrowed ticks {}, rollbacks {}",
        counters.waits, counters.borrowed_ticks, counters.rollbacks
    );
}
