//! The process the multi-process lease tests start many of: it opens a registry by its
//! address, leases a node id and races, issues or holds. Not an end-user tool: use the
//! `ferroflake` CLI.
//!
//! ```text
//! ferroflake-lease-probe --registry ADDRESS [--node-bits B] [--ttl-ms T] [--quarantine-ms Q]
//!     [--skew-ms S] [--state-file FILE] race --answered-dir DIR --racers N [--start-at-ms WALL]
//! ferroflake-lease-probe --registry ADDRESS ... issue --out FILE (--count N | --run-ms D)
//!     [--per-ms K] [--acquire-retry-ms R] [--together-dir DIR --together N]
//!     [--reacquire] [--give-up-ms G]
//! ```
//!
//! ADDRESS is an absolute directory path (the embedded registry) or an `etcd://`,
//! `redis://`, `zk://` or `postgres://` URL. Every holder of one run must use the same TTL:
//! it is also the `max_ttl` that sizes the floor after lost records.
//!
//! Lines on stdout: `node=N epoch=E` after each start, `refused <why>` once per stretch of
//! refusals, `lost node=N` when the registry says the lease is gone, `done issued=K`.
//! IDs go to FILE as little-endian u64s, flushed before each pause (`--per-ms`) and at exit.
//! Exit codes: 0 done, 2 start failed, 3 no free node id, 4 lease lost (without
//! `--reacquire`), 5 refused longer than `--give-up-ms`, 6 any other failure, 64 usage.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand};
use ferroflake::{Error, Layout, SystemClock, TWITTER_EPOCH_MS};
use ferroflake_lease::{
    EmbeddedRegistry, LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator, Registry,
};

/// Leases a node id from a registry and races for it or issues under it.
#[derive(Parser)]
#[command(name = "ferroflake-lease-probe")]
struct Cli {
    /// An absolute directory path (embedded registry) or a store URL.
    #[arg(long)]
    registry: String,
    /// Node-id bits of the layout (41 time bits, 12 sequence bits, Twitter epoch).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=10))]
    node_bits: u32,
    /// Lease TTL, also the max_ttl every holder of the run shares.
    #[arg(long, default_value_t = 1000)]
    ttl_ms: u64,
    /// Quarantine before a lapsed id is claimed again (default: TTL / 5).
    #[arg(long)]
    quarantine_ms: Option<u64>,
    /// How far a new holder's clock may lag the previous holder's mark.
    #[arg(long, default_value_t = 100)]
    skew_ms: u64,
    /// Keep the claim in this state file, so that a restart resumes it.
    #[arg(long)]
    state_file: Option<PathBuf>,
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Claim one id at `--start-at-ms`, say so in DIR, and hold it until all racers have.
    Race(RaceArgs),
    /// Issue IDs under a lease.
    Issue(IssueArgs),
}

#[derive(Args)]
struct RaceArgs {
    /// Wall-clock ms at which to claim, so that the racers claim together.
    #[arg(long, default_value_t = 0)]
    start_at_ms: u64,
    /// Where each racer leaves a file once it has won or lost.
    #[arg(long)]
    answered_dir: PathBuf,
    /// How many racers there are.
    #[arg(long)]
    racers: usize,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("length").required(true).args(["count", "run_ms"])))]
struct IssueArgs {
    /// Where the IDs go.
    #[arg(long)]
    out: PathBuf,
    /// Stop after this many IDs.
    #[arg(long)]
    count: Option<u64>,
    /// Stop after this long.
    #[arg(long)]
    run_ms: Option<u64>,
    /// Pause 1 ms after every K IDs (0: no pause).
    #[arg(long, default_value_t = 0)]
    per_ms: u64,
    /// Keep trying a first claim this long while every id is held.
    #[arg(long, default_value_t = 0)]
    acquire_retry_ms: u64,
    /// Once leased, wait until `--together` probes have left a file in this directory.
    #[arg(long, requires = "together")]
    together_dir: Option<PathBuf>,
    /// How many probes meet in `--together-dir`.
    #[arg(long, requires = "together_dir")]
    together: Option<usize>,
    /// After a loss, claim again (for at most `--give-up-ms`) instead of exiting 4.
    #[arg(long)]
    reacquire: bool,
    /// Exit 5 after this long without an ID.
    #[arg(long, default_value_t = 20_000)]
    give_up_ms: u64,
}

type Leased = LeasedGenerator<SystemClock>;

/// How long a probe waits for the others at a meeting point.
const MEETING_LIMIT: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(64);
        }
    };
    let registry = match open(&cli) {
        Ok(r) => r,
        Err(e) => return start_error(&e),
    };
    match &cli.mode {
        Mode::Race(args) => race(&cli, args, &registry),
        Mode::Issue(args) => issue(&cli, args, &registry),
    }
}

/// The registry at `address`: a directory path, or a URL for ferroflake-lease-stores
/// (with a state file, one that is down now is connected later).
fn open(cli: &Cli) -> Result<Arc<dyn Registry>, LeaseError> {
    if Path::new(&cli.registry).is_absolute() {
        Ok(Arc::new(EmbeddedRegistry::open(&cli.registry)?))
    } else {
        ferroflake_lease_stores::RegistryAddress::parse(&cli.registry)?.open_for(&config(cli))
    }
}

fn say(message: &str) {
    eprintln!("ferroflake-lease-probe: {message}");
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn config(cli: &Cli) -> LeaseConfig {
    let mut config = LeaseConfig::with_ttl(Duration::from_millis(cli.ttl_ms));
    if let Some(ms) = cli.quarantine_ms {
        config.quarantine = Duration::from_millis(ms);
    }
    config.max_ttl = config.ttl;
    config.skew_allowance = Duration::from_millis(cli.skew_ms);
    config.holder = format!("probe {}", std::process::id());
    config.state_file.clone_from(&cli.state_file);
    config
}

/// Leases an id, retrying for `retry` while every id is held, and prints its node line.
fn start(cli: &Cli, registry: &Arc<dyn Registry>, retry: Duration) -> Result<Leased, LeaseError> {
    let layout = Layout::builder(41, cli.node_bits, 12)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()?;
    let until = Instant::now() + retry;
    let generator = loop {
        match LeasedGenerator::start_reporting(
            layout,
            SystemClock,
            Arc::clone(registry),
            config(cli),
            &mut |line| say(line),
        ) {
            Ok(g) => break g,
            Err(LeaseError::NoFreeNode { .. }) if Instant::now() < until => {
                thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    };
    println!(
        "node={} epoch={}",
        generator.node(),
        generator.grant().epoch
    );
    Ok(generator)
}

fn start_error(e: &LeaseError) -> ExitCode {
    say(&format!("cannot start: {e}"));
    ExitCode::from(if matches!(e, LeaseError::NoFreeNode { .. }) {
        3
    } else {
        2
    })
}

/// Leaves this process's file in `dir`.
fn arrive(dir: &Path) -> Result<(), ExitCode> {
    let marker = dir.join(std::process::id().to_string());
    File::create(&marker).map(drop).map_err(|e| {
        say(&format!("cannot write {}: {e}", marker.display()));
        ExitCode::from(64)
    })
}

/// Waits until `parties` files are in `dir`.
fn await_all(dir: &Path, parties: usize) -> Result<(), ExitCode> {
    let until = Instant::now() + MEETING_LIMIT;
    while std::fs::read_dir(dir).map_or(0, Iterator::count) < parties {
        if Instant::now() > until {
            say(&format!(
                "not all {parties} probes arrived within {MEETING_LIMIT:?}"
            ));
            return Err(ExitCode::from(6));
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn race(cli: &Cli, args: &RaceArgs, registry: &Arc<dyn Registry>) -> ExitCode {
    let now = wall_ms();
    if args.start_at_ms > now {
        thread::sleep(Duration::from_millis(args.start_at_ms - now));
    }
    let attempt = start(cli, registry, Duration::ZERO);
    // Winners hold their ids until every racer has answered, so a late racer can never
    // find an id that a winner already gave back.
    if let Err(code) = arrive(&args.answered_dir) {
        return code;
    }
    let generator = match attempt {
        Ok(g) => g,
        Err(e) => return start_error(&e),
    };
    if let Err(code) = await_all(&args.answered_dir, args.racers) {
        return code;
    }
    match generator.next_id() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("lease not held to the end: {e}"));
            ExitCode::from(6)
        }
    }
}

fn issue(cli: &Cli, args: &IssueArgs, registry: &Arc<dyn Registry>) -> ExitCode {
    let mut out = match File::create(&args.out) {
        Ok(f) => BufWriter::new(f),
        Err(e) => {
            say(&format!("cannot write {}: {e}", args.out.display()));
            return ExitCode::from(64);
        }
    };
    let retry = Duration::from_millis(args.acquire_retry_ms);
    let mut generator = match start(cli, registry, retry) {
        Ok(g) => g,
        Err(e) => return start_error(&e),
    };
    if let (Some(dir), Some(parties)) = (&args.together_dir, args.together) {
        if let Err(code) = arrive(dir).and_then(|()| await_all(dir, parties)) {
            return code;
        }
    }
    let give_up = Duration::from_millis(args.give_up_ms);
    let run = args.run_ms.map(Duration::from_millis);
    let began = Instant::now();
    let mut issued = 0u64;
    let mut refused_since: Option<Instant> = None;
    let code = loop {
        let done = match (args.count, run) {
            (Some(count), _) => issued >= count,
            (None, Some(run)) => began.elapsed() >= run,
            (None, None) => unreachable!("clap requires --count or --run-ms"),
        };
        if done {
            break 0;
        }
        match generator.next_id() {
            Ok(id) => {
                refused_since = None;
                if out.write_all(&id.to_le_bytes()).is_err() {
                    break 64;
                }
                issued += 1;
                if args.per_ms > 0 && issued.is_multiple_of(args.per_ms) {
                    if out.flush().is_err() {
                        break 64;
                    }
                    thread::sleep(Duration::from_millis(1));
                }
            }
            Err(e @ Error::LeaseExpired { .. }) => {
                let since = match refused_since {
                    Some(since) => since,
                    None => {
                        // Once per stretch of refusals: say why issuing stopped.
                        println!("refused {}", generator.explain(&e));
                        *refused_since.insert(Instant::now())
                    }
                };
                match generator.status() {
                    LeaseStatus::Lost => {
                        println!("lost node={}", generator.node());
                        if !args.reacquire {
                            say(&format!(
                                "lease on node {} lost: {}",
                                generator.node(),
                                generator.explain(&e)
                            ));
                            break 4;
                        }
                        drop(generator);
                        generator = loop {
                            match start(cli, registry, Duration::ZERO) {
                                Ok(g) => break g,
                                Err(e) if since.elapsed() < give_up => {
                                    say(&format!("re-acquiring: {e}"));
                                    thread::sleep(Duration::from_millis(200));
                                }
                                Err(e) => {
                                    let _ = out.flush();
                                    return start_error(&e);
                                }
                            }
                        };
                    }
                    status if since.elapsed() >= give_up => {
                        say(&format!("refused for {:?}: {status:?}", since.elapsed()));
                        break 5;
                    }
                    _ => thread::sleep(Duration::from_millis(2)),
                }
            }
            Err(e) => {
                say(&format!("generator error: {e}"));
                break 6;
            }
        }
    };
    if let Err(e) = out.flush() {
        say(&format!("cannot write {}: {e}", args.out.display()));
        return ExitCode::from(64);
    }
    println!("done issued={issued}");
    drop(generator);
    ExitCode::from(code)
}
