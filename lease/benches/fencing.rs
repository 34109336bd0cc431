//! Fencing overhead: the leased generator's `next_id` (fence check in the hot path, renewal
//! thread running) against the plain generator's, in the same run.
//!
//! The layout has 18 sequence bits (262,144 IDs per ms), so neither generator meets the
//! sequence cap and the figures are the uncapped cost per ID.
//!
//! After criterion's figures, a paired measurement prints the median ratio over rounds of
//! alternating 1M-call blocks (plain, leased, plain, ...): on a shared, noisy machine the
//! pairing cancels load that drifts between criterion's separate runs. With
//! `FERROFLAKE_BENCH_REPORT` set, the paired figures also go there as JSON lines, one per
//! clock.
//!
//! Run: `cargo bench -p ferroflake-lease --bench fencing`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion, Throughput};
use ferroflake::{Clock, FastClock, Generator, Layout, Options, SystemClock, TWITTER_EPOCH_MS};
use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator, Registry};

fn wide_layout() -> Layout {
    Layout::builder(41, 4, 18)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .unwrap()
}

fn compare<C: Clock + Send + Sync + 'static>(
    c: &mut Criterion,
    name: &str,
    registry: &Arc<dyn Registry>,
    clock: impl Fn() -> C,
) {
    let layout = wide_layout();
    let plain = Generator::with_clock(layout, 3, clock(), Options::default()).unwrap();
    let leased = LeasedGenerator::start(
        layout,
        clock(),
        Arc::clone(registry),
        LeaseConfig::default(),
    )
    .unwrap();
    let mut group = c.benchmark_group(format!("fencing/{name}"));
    group.throughput(Throughput::Elements(1));
    group.bench_function("plain next_id", |b| b.iter(|| black_box(plain.next_id())));
    group.bench_function("leased next_id", |b| b.iter(|| black_box(leased.next_id())));
    group.finish();
    leased.shutdown().unwrap();
}

fn fencing(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    compare(c, "system_clock", &registry, || SystemClock);
    compare(c, "fast_clock", &registry, || FastClock::for_tick_ms(1));
}

/// Median over `rounds` of (leased block time / plain block time), and the median ns/ID
/// of each. Prints them and returns them as one JSON line.
fn paired<C: Clock + Send + Sync + 'static>(
    name: &str,
    registry: &Arc<dyn Registry>,
    clock: impl Fn() -> C,
) -> String {
    const BLOCK: u32 = 1_000_000;
    const ROUNDS: usize = 21;
    let layout = wide_layout();
    let plain = Generator::with_clock(layout, 3, clock(), Options::default()).unwrap();
    let leased = LeasedGenerator::start(
        layout,
        clock(),
        Arc::clone(registry),
        LeaseConfig::default(),
    )
    .unwrap();
    let time = |f: &dyn Fn() -> Result<u64, ferroflake::Error>| {
        let start = Instant::now();
        for _ in 0..BLOCK {
            black_box(f()).unwrap();
        }
        start.elapsed().as_secs_f64() * 1e9 / f64::from(BLOCK)
    };
    let (mut plain_ns, mut leased_ns, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let p = time(&|| plain.next_id());
        let l = time(&|| leased.next_id());
        plain_ns.push(p);
        leased_ns.push(l);
        ratios.push(l / p);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (plain_median, leased_median, ratio) = (
        median(&mut plain_ns),
        median(&mut leased_ns),
        median(&mut ratios),
    );
    println!(
        "paired {name}: plain {plain_median:.2} ns/ID, leased {leased_median:.2} ns/ID, median leased/plain ratio {ratio:.3} ({ROUNDS} rounds of {BLOCK} calls each)",
    );
    leased.shutdown().unwrap();
    format!(
        "{{\"kind\":\"paired\",\"clock\":\"{name}\",\"plain_ns\":{plain_median:.3},\"leased_ns\":{leased_median:.3},\"ratio\":{ratio:.4},\"rounds\":{ROUNDS},\"block\":{BLOCK}}}"
    )
}

fn paired_all() {
    let dir = tempfile::tempdir().unwrap();
    let registry: Arc<dyn Registry> = Arc::new(EmbeddedRegistry::open(dir.path()).unwrap());
    let lines = [
        paired("system_clock", &registry, || SystemClock),
        paired("fast_clock", &registry, || FastClock::for_tick_ms(1)),
    ];
    if let Ok(path) = std::env::var("FERROFLAKE_BENCH_REPORT") {
        if let Err(error) = std::fs::write(&path, lines.join("\n") + "\n") {
            eprintln!("could not write {path}: {error}");
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(60);
    targets = fencing
}
fn main() {
    benches();
    // Only under `cargo bench` (not `cargo test --benches`, which passes no --bench).
    if std::env::args().any(|a| a == "--bench") {
        paired_all();
    }
    Criterion::default().configure_from_args().final_summary();
}
