//! What a lease costs on each store: acquiring, renewing, and `next_id` on a leased
//! generator, with the embedded registry and the plain generator measured in the same run.
//!
//! Store addresses come from `FERROFLAKE_TEST_<ETCD|REDIS|ZOOKEEPER|POSTGRES>`;
//! scripts/bench-lease-stores.sh starts the servers and sets them. A store without an
//! address is left out (and said so).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferroflake::{Generator, Layout, SystemClock};
use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeaseRequest, LeasedGenerator, Registry};

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
    let mut all: Vec<(&'static str, Arc<dyn Registry>)> =
        vec![("embedded", Arc::new(EmbeddedRegistry::open(&dir).expect("embedded registry")))];
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
        let registry = ferroflake_lease_stores::connect(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
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
    }
}

fn lease_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("lease");
    group.sample_size(30).measurement_time(Duration::from_secs(4));
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
        let mut mark = 1_800_000_000_000u64;
        group.bench_function(format!("renew/{name}"), |b| {
            b.iter(|| {
                mark += 1;
                registry.renew(&grant, Duration::from_secs(10), mark).expect("renew")
            })
        });
        registry.release(&grant, mark).expect("release");
    }
    group.finish();
}

fn next_id(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id");
    group.throughput(Throughput::Elements(1));
    let plain = Generator::new(layout(), 1).expect("generator");
    group.bench_function("plain", |b| b.iter(|| black_box(plain.next_id().expect("id"))));
    for (name, registry) in registries() {
        let mut config = LeaseConfig::with_ttl(Duration::from_secs(10));
        config.skew_allowance = Duration::from_millis(10);
        let leased = LeasedGenerator::start(layout(), SystemClock, registry, config).expect("lease");
        group.bench_function(format!("leased/{name}"), |b| {
            b.iter(|| black_box(leased.next_id().expect("id")))
        });
        leased.shutdown().expect("release");
    }
    group.finish();
}

criterion_group!(benches, lease_calls, next_id);
criterion_main!(benches);
