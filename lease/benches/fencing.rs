//! Fencing overhead: the leased generator's `next_id` (fence check in the hot path, renewal
//! thread running) against the plain generator's, in the same run.
//!
//! The layout has 18 sequence bits (262,144 IDs per ms), so neither generator meets the
//! sequence cap and the figures are the uncapped cost per ID.
//!
//! Run: `cargo bench -p ferroflake-lease --bench fencing`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferroflake::{Clock, FastClock, Generator, Layout, Options, SystemClock, TWITTER_EPOCH_MS};
use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator, Registry};

fn wide_layout() -> Layout {
    Layout::builder(41, 4, 18).epoch_ms(TWITTER_EPOCH_MS as i64).build().unwrap()
}

fn compare<C: Clock + Send + Sync + 'static>(
    c: &mut Criterion,
    name: &str,
    registry: &Arc<dyn Registry>,
    clock: impl Fn() -> C,
) {
    let layout = wide_layout();
    let plain = Generator::with_clock(layout, 3, clock(), Options::default()).unwrap();
    let leased =
        LeasedGenerator::start(layout, clock(), Arc::clone(registry), LeaseConfig::default()).unwrap();
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(60);
    targets = fencing
}
criterion_main!(benches);
