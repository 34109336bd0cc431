//! A small process the store fault tests start many of: it leases a node id from a store
//! registry and races, issues or holds. Not an end-user tool: use the `ferroflake` CLI.
//!
//! ```text
//! ferroflake-store-probe --lease URL [--node-bits B] [--ttl-ms T] [--quarantine-ms Q]
//!     [--skew-ms S] [--max-ttl-ms M] race --start-at-ms WALL --answered-dir DIR --racers N
//! ferroflake-store-probe --lease URL ... issue --out FILE [--count N] [--run-ms D]
//!     [--per-ms K] [--reacquire] [--give-up-ms G]
//! ```
//!
//! Lines on stdout: `node=N epoch=E` after each start, `lost node=N` when the registry
//! says the lease is gone, `done issued=K`. IDs go to FILE as little-endian u64s.
//! Exit codes: 0 done, 2 start failed, 3 no free node id, 4 lease lost (without
//! `--reacquire`), 5 fenced longer than `--give-up-ms`, 6 any other generator error, 64 usage.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroflake::{Error, Layout, SystemClock};
use ferroflake_lease::{LeaseConfig, LeaseError, LeaseStatus, LeasedGenerator, Registry};

struct Args {
    lease: String,
    node_bits: u32,
    ttl: Duration,
    max_ttl: Option<Duration>,
    quarantine: Duration,
    skew: Duration,
    mode: String,
    start_at_ms: u64,
    answered_dir: Option<String>,
    racers: usize,
    out: Option<String>,
    count: u64,
    run: Duration,
    per_ms: u64,
    reacquire: bool,
    give_up: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        lease: String::new(),
        node_bits: 10,
        ttl: Duration::from_millis(1000),
        max_ttl: None,
        quarantine: Duration::from_millis(500),
        skew: Duration::from_millis(100),
        mode: String::new(),
        start_at_ms: 0,
        answered_dir: None,
        racers: 0,
        out: None,
        count: 0,
        run: Duration::ZERO,
        per_ms: 0,
        reacquire: false,
        give_up: Duration::from_secs(20),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--reacquire" {
            args.reacquire = true;
            continue;
        }
        if flag == "race" || flag == "issue" {
            args.mode = flag;
            continue;
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {value}"))
        };
        match flag.as_str() {
            "--lease" => args.lease = value.clone(),
            "--node-bits" => args.node_bits = number()? as u32,
            "--ttl-ms" => args.ttl = Duration::from_millis(number()?),
            "--max-ttl-ms" => args.max_ttl = Some(Duration::from_millis(number()?)),
            "--quarantine-ms" => args.quarantine = Duration::from_millis(number()?),
            "--skew-ms" => args.skew = Duration::from_millis(number()?),
            "--start-at-ms" => args.start_at_ms = number()?,
            "--answered-dir" => args.answered_dir = Some(value.clone()),
            "--racers" => args.racers = number()? as usize,
            "--out" => args.out = Some(value.clone()),
            "--count" => args.count = number()?,
            "--run-ms" => args.run = Duration::from_millis(number()?),
            "--per-ms" => args.per_ms = number()?,
            "--give-up-ms" => args.give_up = Duration::from_millis(number()?),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if args.lease.is_empty() || args.mode.is_empty() {
        return Err("need --lease URL and a mode (race or issue)".into());
    }
    Ok(args)
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn sleep_until_wall(ms: u64) {
    let now = wall_ms();
    if ms > now {
        thread::sleep(Duration::from_millis(ms - now));
    }
}

fn layout(node_bits: u32) -> Result<Layout, Error> {
    let twitter = Layout::twitter();
    Layout::builder(41, node_bits, 22 - node_bits.min(21))
        .epoch_ms(twitter.epoch_ms() as i64)
        .build()
}

type Leased = LeasedGenerator<SystemClock>;

fn start(args: &Args, registry: &Arc<dyn Registry>) -> Result<Leased, LeaseError> {
    let mut config = LeaseConfig::with_ttl(args.ttl);
    config.quarantine = args.quarantine;
    if let Some(max_ttl) = args.max_ttl {
        config.max_ttl = max_ttl;
    }
    config.skew_allowance = args.skew;
    let generator = LeasedGenerator::start(
        layout(args.node_bits)?,
        SystemClock,
        Arc::clone(registry),
        config,
    )?;
    println!(
        "node={} epoch={}",
        generator.node(),
        generator.grant().epoch
    );
    Ok(generator)
}

fn start_error(e: &LeaseError) -> ExitCode {
    eprintln!("ferroflake-store-probe: cannot start: {e}");
    ExitCode::from(if matches!(e, LeaseError::NoFreeNode { .. }) {
        3
    } else {
        2
    })
}

fn race(args: &Args, registry: &Arc<dyn Registry>) -> ExitCode {
    let Some(dir) = &args.answered_dir else {
        eprintln!("ferroflake-store-probe: race needs --answered-dir DIR --racers N");
        return ExitCode::from(64);
    };
    sleep_until_wall(args.start_at_ms);
    let attempt = start(args, registry);
    // Tell the others this racer has answered; winners hold their ids until all have, so
    // a late racer can never find an id a winner already gave back.
    let marker = format!("{dir}/{}", std::process::id());
    if let Err(e) = File::create(&marker) {
        eprintln!("ferroflake-store-probe: cannot write {marker}: {e}");
        return ExitCode::from(64);
    }
    let generator = match attempt {
        Ok(g) => g,
        Err(e) => return start_error(&e),
    };
    let until = Instant::now() + Duration::from_secs(60);
    while std::fs::read_dir(dir).map_or(0, |d| d.count()) < args.racers {
        if Instant::now() > until {
            eprintln!(
                "ferroflake-store-probe: not all {} racers answered within 60 s",
                args.racers
            );
            return ExitCode::from(6);
        }
        thread::sleep(Duration::from_millis(20));
    }
    match generator.next_id() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferroflake-store-probe: lease not held to the end: {e}");
            ExitCode::from(6)
        }
    }
}

fn issue(args: &Args, registry: &Arc<dyn Registry>) -> ExitCode {
    let Some(path) = &args.out else {
        eprintln!("ferroflake-store-probe: issue needs --out FILE");
        return ExitCode::from(64);
    };
    let mut out = match File::create(path) {
        Ok(f) => BufWriter::new(f),
        Err(e) => {
            eprintln!("ferroflake-store-probe: cannot write {path}: {e}");
            return ExitCode::from(64);
        }
    };
    let mut generator = match start(args, registry) {
        Ok(g) => g,
        Err(e) => return start_error(&e),
    };
    let began = Instant::now();
    let mut issued = 0u64;
    let mut fenced_since: Option<Instant> = None;
    let mut fenced_since_reported: Option<Instant> = None;
    let code = loop {
        let done = if args.count > 0 {
            issued >= args.count
        } else {
            began.elapsed() >= args.run
        };
        if done {
            break 0;
        }
        match generator.next_id() {
            Ok(id) => {
                fenced_since = None;
                fenced_since_reported = None;
                let _ = out.write_all(&id.to_le_bytes());
                issued += 1;
                if args.per_ms > 0 && issued.is_multiple_of(args.per_ms) {
                    thread::sleep(Duration::from_millis(1));
                }
            }
            Err(e @ Error::LeaseExpired { .. }) => {
                let since = *fenced_since.get_or_insert_with(Instant::now);
                let status = generator.status();
                if fenced_since_reported.is_none() {
                    // Once per outage: say why issuing stopped.
                    eprintln!(
                        "ferroflake-store-probe: fenced on node {}: {status:?}",
                        generator.node()
                    );
                    fenced_since_reported = Some(since);
                }
                match status {
                    LeaseStatus::Lost => {
                        println!("lost node={}", generator.node());
                        if !args.reacquire {
                            eprintln!(
                                "ferroflake-store-probe: lease on node {} lost: {}",
                                generator.node(),
                                generator.explain(&e)
                            );
                            break 4;
                        }
                        drop(generator);
                        generator = loop {
                            match start(args, registry) {
                                Ok(g) => break g,
                                Err(e) if since.elapsed() < args.give_up => {
                                    eprintln!("ferroflake-store-probe: re-acquiring: {e}");
                                    thread::sleep(Duration::from_millis(200));
                                }
                                Err(e) => {
                                    let _ = out.flush();
                                    return start_error(&e);
                                }
                            }
                        };
                    }
                    status if since.elapsed() >= args.give_up => {
                        eprintln!(
                            "ferroflake-store-probe: fenced for {:?}: {status:?}",
                            since.elapsed()
                        );
                        break 5;
                    }
                    _ => thread::sleep(Duration::from_millis(2)),
                }
            }
            Err(e) => {
                eprintln!("ferroflake-store-probe: generator error: {e}");
                break 6;
            }
        }
    };
    if let Err(e) = out.flush() {
        eprintln!("ferroflake-store-probe: cannot write {path}: {e}");
        return ExitCode::from(64);
    }
    println!("done issued={issued}");
    drop(generator);
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ferroflake-store-probe: {e}");
            return ExitCode::from(64);
        }
    };
    let registry = match ferroflake_lease_stores::connect(&args.lease) {
        Ok(r) => r,
        Err(e) => return start_error(&e),
    };
    if args.mode == "race" {
        race(&args, &registry)
    } else {
        issue(&args, &registry)
    }
}
