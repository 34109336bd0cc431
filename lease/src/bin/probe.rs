//! A small process for the multi-process lease tests (not an end-user tool: use the
//! `ferroflake` CLI).
//!
//! ```text
//! ferroflake-lease-probe race  --dir D --node-count N --hold-ms H
//!     claims one id; prints `won <id>` (holds it until the file D/done exists, at most
//!     H ms, then releases) or `lost <error>`
//! ferroflake-lease-probe issue --dir D --node-bits B [--count N] [--pace-us P]
//!     [--ttl-ms T] [--skew-ms S] [--acquire-retry-ms R] [--max-run-ms M]
//!     leases an id for a 41/B/12 layout (Twitter epoch) and prints `node <id>`, then one
//!     decimal ID per line: N of them (0 = until the lease is lost), one every P µs.
//!     On a refusal it prints `refused <error>` once; once the lease is lost, `lost`, and
//!     exits 0. Exits 3 on any other error, with a message on stderr.
//! ```

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflake::{Error, Layout, SystemClock, TWITTER_EPOCH_MS};
use ferroflake_lease::{
    EmbeddedRegistry, LeaseConfig, LeaseError, LeaseRequest, LeaseStatus, LeasedGenerator, Registry,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((mode, flags)) = args.split_first() else {
        fail("usage: probe race|issue --flag value ...")
    };
    let flags = parse_flags(flags);
    let result = match mode.as_str() {
        "race" => race(&flags),
        "issue" => issue(&flags),
        other => fail(&format!("unknown mode {other:?}")),
    };
    if let Err(e) = result {
        fail(&e.to_string());
    }
}

fn race(flags: &Flags) -> Result<(), LeaseError> {
    let registry = EmbeddedRegistry::open(flags.text("dir"))?;
    let request = LeaseRequest {
        node_count: flags.number("node-count", 16),
        ttl: Duration::from_secs(30),
        quarantine: Duration::from_secs(1),
        holder: format!("probe {}", std::process::id()),
        max_ttl: Duration::from_secs(30),
    };
    match registry.acquire(&request) {
        Ok(grant) => {
            println!("won {}", grant.node_id);
            std::io::stdout().flush().ok();
            let done = std::path::Path::new(flags.text("dir")).join("done");
            let give_up = Instant::now() + Duration::from_millis(flags.number("hold-ms", 30_000));
            while !done.exists() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(10));
            }
            registry.release(&grant, 0)
        }
        Err(e @ LeaseError::NoFreeNode { .. }) => {
            println!("lost {e}");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn issue(flags: &Flags) -> Result<(), LeaseError> {
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(flags.text("dir"))?);
    let layout = Layout::builder(41, flags.number("node-bits", 10) as u32, 12)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()?;
    let mut config = LeaseConfig::with_ttl(Duration::from_millis(flags.number("ttl-ms", 2_000)));
    config.skew_allowance = Duration::from_millis(flags.number("skew-ms", 100));
    config.max_ttl = config.ttl; // every probe of a run uses the same TTL
    let count = flags.number("count", 0);
    let pace = Duration::from_micros(flags.number("pace-us", 0));
    let started = Instant::now();
    let max_run = Duration::from_millis(flags.number("max-run-ms", 60_000));
    let retry_until = started + Duration::from_millis(flags.number("acquire-retry-ms", 0));
    let generator = loop {
        match LeasedGenerator::start(layout, SystemClock, Arc::clone(&registry), config.clone()) {
            Ok(g) => break g,
            Err(LeaseError::NoFreeNode { .. }) if Instant::now() < retry_until => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let io = |e: std::io::Error| LeaseError::Store {
        registry: "probe".into(),
        detail: e.to_string(),
    };
    writeln!(out, "node {}", generator.node()).map_err(io)?;
    out.flush().map_err(io)?;
    let mut issued = 0u64;
    let mut refused = false;
    while count == 0 || issued < count {
        if started.elapsed() > max_run {
            return Err(LeaseError::Store {
                registry: "probe".into(),
                detail: "max run time reached".into(),
            });
        }
        match generator.next_id() {
            Ok(id) => {
                writeln!(out, "{id}").map_err(io)?;
                issued += 1;
                if !pace.is_zero() {
                    out.flush().map_err(io)?;
                    std::thread::sleep(pace);
                }
            }
            Err(e @ Error::LeaseExpired { .. }) => {
                if !refused {
                    writeln!(out, "refused {}", generator.explain(&e)).map_err(io)?;
                    out.flush().map_err(io)?;
                    refused = true;
                }
                if generator.status() == LeaseStatus::Lost {
                    writeln!(out, "lost").map_err(io)?;
                    out.flush().map_err(io)?;
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e.into()),
        }
    }
    out.flush().map_err(io)?;
    drop(out);
    generator.shutdown()
}

struct Flags(HashMap<String, String>);

impl Flags {
    fn text(&self, name: &str) -> &str {
        self.0
            .get(name)
            .map_or_else(|| fail(&format!("--{name} is required")), String::as_str)
    }
    fn number(&self, name: &str, default: u64) -> u64 {
        self.0.get(name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| fail(&format!("--{name} needs a number, got {v:?}")))
        })
    }
}

fn parse_flags(args: &[String]) -> Flags {
    let mut flags = HashMap::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let Some(name) = flag.strip_prefix("--") else {
            fail(&format!("expected --flag, got {flag:?}"))
        };
        let Some(value) = rest.next() else {
            fail(&format!("--{name} needs a value"))
        };
        flags.insert(name.to_owned(), value.clone());
    }
    Flags(flags)
}

fn fail(message: &str) -> ! {
    eprintln!("ferroflake-lease-probe: {message}");
    std::process::exit(3);
}
