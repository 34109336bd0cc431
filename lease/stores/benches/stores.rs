//! What a lease costs on each store: acquiring, renewing, and `next_id` on a leased
//! generator, with the embedded registry and the plain generator measured in the same run.
//!
//! Store addresses come from `FERROFLAKE_TEST_<ETCD|REDIS|ZOOKEEPER|POSTGRES>`;
//! `bash scripts/servers/with-servers.sh cargo bench -p ferroflake-lease-stores --bench stores`
//! starts the servers and sets them. A store without an address is left out (and said so).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferroflake::{Generator, Layout, SystemClock};
use ferroflake_lease::{
    EmbeddedRegistry, LeaseConfig, LeaseRequest, LeasedGenerator, Registry, Renewal,
};

/// 16 sequence bits: 65,536 IDs per ms, so a call never waits for the next tick and the
/// benchmark measures the call, not the layout's capacity.
fn layout() -> Layout {
    Layout::builder(39, 8, 16)
        .epoch_ms(1_704_067_200_000) // 2024-01-01
        .build()
        .expect("valid layout")
}

fn registries() -> Vec<(&'static str, Arc<dyn Registry>)> {
    let dir = std::env::temp_dir().join(format!("ff-bench-embedded-{}", std::process::id()));
    let mut all: Vec<(&'static str, Arc<dyn Registry>)> = vec![(
        "embedded",
        Arc::new(EmbeddedRegistry::open(&dir).expect("embedded registry")),
    )];
    let namespace = format!("bench{}", std::process::id());
    for (name, var) in [
        ("etcd", "FERROFLAKE_TEST_ETCD"),
        ("redis", "FERROFLAKE_TEST_REDIS"),
        ("zookeeper", "FERROFLAKE_TEST_ZOOKEEPER"),
        ("postgres", "FERROFLAKE_TEST_POSTGRES"),
    ] {
        let Ok(base) = std::env::var(var) else {
            eprintln!("{name}: {var} not set, left out");
            continue;
        };
        let url = match name {
            "redis" => format!("{base}?prefix={namespace}"),
            "postgres" => format!("{base}?table={namespace}"),
            _ => format!("{base}/{namespace}"),
        };
        let registry =
            ferroflake_lease_stores::connect(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        all.push((name, registry));
    }
    all
}

fn request() -> LeaseRequest {
    LeaseRequest {
        node_count: layout().max_node() + 1,
        ttl: Duration::from_secs(10),
        quarantine: Duration::from_secs(2),
        holder: "bench".into(),
        max_ttl: Duration::from_secs(10),
        prefer_node: None,
    }
}

/// The node id of the plain generator, live through every measurement.
const PLAIN_NODE: u64 = 1;

/// Starts a generator leased from `registry` whose node id no live generator of this
/// process holds (`live`), and adds its id there. A process refuses a second live generator
/// of one node id, and each registry picks its ids alone, so the ids of `live` are first
/// claimed in `registry` as other hosts would hold them.
fn leased_beside(registry: Arc<dyn Registry>, live: &mut Vec<u64>) -> LeasedGenerator<SystemClock> {
    for &id in live.iter() {
        let elsewhere = LeaseRequest {
            holder: "another host".into(),
            prefer_node: Some(id),
            ..request()
        };
        registry.acquire(&elsewhere).expect("claim as another host");
    }
    let mut config = LeaseConfig::with_ttl(Duration::from_secs(10));
    config.skew_allowance = Duration::from_millis(10);
    let leased = LeasedGenerator::start(layout(), SystemClock, registry, config).expect("lease");
    live.push(leased.node());
    leased
}

fn lease_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("lease");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(4));
    for (name, registry) in registries() {
        // The claim alone is timed; each is released (untimed) so ids never run out.
        group.bench_function(format!("acquire/{name}"), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    let began = Instant::now();
                    let grant = registry.acquire(&request()).expect("acquire");
                    spent += began.elapsed();
                    registry.release(&grant, 0).expect("release");
                }
                spent
            })
        });
        let grant = registry.acquire(&request()).expect("acquire");
        // A realistic mark: the clock's reading (a mark far ahead would hold the id's next
        // holder back until then).
        let now_ms = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("clock after 1970")
                .as_millis() as u64
        };
        group.bench_function(format!("renew/{name}"), |b| {
            b.iter(|| {
                registry
                    .renew(&grant, &Renewal::new(Duration::from_secs(10), now_ms()))
                    .expect("renew")
            })
        });
        registry.release(&grant, now_ms()).expect("release");
    }
    group.finish();
}

fn next_id(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id");
    group.throughput(Throughput::Elements(1));
    let plain = Generator::new(layout(), PLAIN_NODE).expect("generator");
    group.bench_function("plain", |b| {
        b.iter(|| black_box(plain.next_id().expect("id")))
    });
    for (name, registry) in registries() {
        let leased = leased_beside(registry, &mut vec![PLAIN_NODE]);
        group.bench_function(format!("leased/{name}"), |b| {
            b.iter(|| black_box(leased.next_id().expect("id")))
        });
        leased.shutdown().expect("release");
    }
    group.finish();
}

/// The same comparison, interleaved: every generator is live at once, and each round
/// times 1,000,000 calls on each in turn, so drifting load on a shared machine hits all of
/// them alike. Prints the median and spread of 15 rounds, and each one's ratio to plain;
/// with `FERROFLAKE_BENCH_REPORT` set, also writes them there as JSON lines.
fn next_id_interleaved(_c: &mut Criterion) {
    const CALLS: u32 = 1_000_000;
    const ROUNDS: usize = 15;
    let plain = Generator::new(layout(), PLAIN_NODE).expect("generator");
    let mut live = vec![PLAIN_NODE];
    let leased: Vec<(&str, LeasedGenerator<SystemClock>)> = registries()
        .into_iter()
        .map(|(name, registry)| (name, leased_beside(registry, &mut live)))
        .collect();
    let time = |f: &dyn Fn() -> u64| {
        let began = Instant::now();
        for _ in 0..CALLS {
            black_box(f());
        }
        began.elapsed().as_nanos() as f64 / f64::from(CALLS)
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); leased.len() + 1];
    for _ in 0..ROUNDS {
        samples[0].push(time(&|| plain.next_id().expect("id")));
        for (i, (_, g)) in leased.iter().enumerate() {
            samples[i + 1].push(time(&|| g.next_id().expect("id")));
        }
    }
    let names: Vec<&str> = std::iter::once("plain")
        .chain(leased.iter().map(|(n, _)| *n))
        .collect();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let (plain_median, ..) = median(&mut samples[0].clone());
    println!("next_id interleaved: ns/call, median [min max] of {ROUNDS} rounds x {CALLS} calls");
    let mut lines = Vec::new();
    for (name, v) in names.iter().zip(samples.iter_mut()) {
        let (mid, lo, hi) = median(v);
        println!(
            "  {name:<10} {mid:6.1} [{lo:6.1} {hi:6.1}]  x{:.2} of plain",
            mid / plain_median
        );
        lines.push(format!(
            "{{\"kind\":\"interleaved\",\"generator\":\"{name}\",\"median_ns\":{mid:.3},\"min_ns\":{lo:.3},\"max_ns\":{hi:.3},\"vs_plain\":{:.4},\"rounds\":{ROUNDS},\"calls\":{CALLS}}}",
            mid / plain_median
        ));
    }
    if let Ok(path) = std::env::var("FERROFLAKE_BENCH_REPORT") {
        if let Err(error) = std::fs::write(&path, lines.join("\n") + "\n") {
            eprintln!("could not write {path}: {error}");
        }
    }
    for (_, g) in leased {
        g.shutdown().expect("release");
    }
}

criterion_group!(benches, lease_calls, next_id, next_id_interleaved);
criterion_main!(benches);
