//! Cost per ID on one thread: ferroflake on each clock, the clock reads themselves, batches,
//! and the peers.
//!
//! "edge" benches time bursts that start right after the generator's tick changes and stay
//! below the tick's sequence size, so no call waits for the cap: they measure the code on
//! the real layout. "wide" benches use a layout with 20+ sequence bits, where the cap is
//! never reached, so plain back-to-back calls measure the same thing; the two should agree.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use criterion::measurement::WallTime;
use ferroflake::{Clock, FastClock, Generator, Layout, Options};
use ferroflake_benches::{
    coarse_layout, system_ms, timed_bursts, uncapped_layout, wait_for_tick_change,
};

/// IDs per burst on a layout with 4,096 per tick: three quarters of a tick's sequence.
const BURST: u64 = 3_000;

/// Plain back-to-back calls: 20 samples, 1 s of measured time.
fn plain_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    group
}

/// Tick-edge bursts spend most of their wall time waiting for the next tick, so they get
/// less measured time (criterion counts only the time inside bursts).
fn edge_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(400))
        .throughput(Throughput::Elements(1));
    group
}

fn report_waits<C: Clock>(name: &str, generator: &Generator<C>) {
    let counters = generator.counters();
    eprintln!(
        "note: {name}: waits {} (0 means no call met the sequence cap), borrowed {}",
        counters.waits, counters.borrowed_ticks
    );
}

fn clocks(c: &mut Criterion) {
    let tsc = FastClock::for_tick_ms(1);
    let coarse = FastClock::for_tick_ms(10);
    eprintln!(
        "note: FastClock::for_tick_ms(1) picked {:?}; for_tick_ms(10) picked {:?}",
        tsc.source(),
        coarse.source()
    );
    let mut group = plain_group(c, "clock");
    group.bench_function("system_time_now_ms", |b| b.iter(system_ms));
    group.bench_function("fast_clock_1ms", |b| b.iter(|| tsc.now_ms()));
    group.bench_function("fast_clock_10ms", |b| b.iter(|| coarse.now_ms()));
    group.finish();
}

fn ferroflake_one_by_one(c: &mut Criterion) {
    let twitter = Layout::twitter();
    let system = Generator::new(twitter, 1).expect("twitter generator");
    let fast = Generator::with_clock(twitter, 1, FastClock::for_tick_ms(1), Options::default())
        .expect("twitter generator on the fast clock");
    let mut group = edge_group(c, "ferroflake_edge");
    group.bench_function("system_twitter", |b| {
        b.iter_custom(|iters| {
            let edge = || wait_for_tick_change(|| system.clock().now_ms());
            timed_bursts(iters, BURST, edge, || system.next_id())
        })
    });
    group.bench_function("fast_twitter", |b| {
        b.iter_custom(|iters| {
            let edge = || wait_for_tick_change(|| fast.clock().now_ms());
            timed_bursts(iters, BURST, edge, || fast.next_id())
        })
    });
    group.finish();
    report_waits("ferroflake_edge/system_twitter", &system);
    report_waits("ferroflake_edge/fast_twitter", &fast);

    let system = Generator::new(uncapped_layout(), 1).expect("wide generator");
    let fast = Generator::with_clock(
        uncapped_layout(),
        1,
        FastClock::for_tick_ms(1),
        Options::default(),
    )
    .expect("wide generator on the fast clock");
    let coarse_layout = coarse_layout();
    let coarse = Generator::with_clock(
        coarse_layout,
        1,
        FastClock::for_tick_ms(coarse_layout.tick_ms()),
        Options::default(),
    )
    .expect("10 ms generator on the fast clock");
    let mut group = plain_group(c, "ferroflake_wide");
    group.bench_function("system_1ms", |b| b.iter(|| system.next_id()));
    group.bench_function("fast_1ms", |b| b.iter(|| fast.next_id()));
    group.bench_function("fast_10ms", |b| b.iter(|| coarse.next_id()));
    group.finish();
    report_waits("ferroflake_wide/system_1ms", &system);
    report_waits("ferroflake_wide/fast_1ms", &fast);
    report_waits("ferroflake_wide/fast_10ms", &coarse);
}

fn ferroflake_batches(c: &mut Criterion) {
    let twitter = Generator::new(Layout::twitter(), 1).expect("twitter generator");
    let wide_fast = Generator::with_clock(
        uncapped_layout(),
        1,
        FastClock::for_tick_ms(1),
        Options::default(),
    )
    .expect("wide generator on the fast clock");
    for size in [64usize, 1024] {
        let mut group = edge_group(c, "ferroflake_next_ids");
        group.throughput(Throughput::Elements(size as u64));
        let mut buffer = vec![0u64; size];
        // Batches per burst: as many as fit in three quarters of a tick's sequence.
        let batches = BURST / size as u64;
        group.bench_function(format!("system_twitter_{size}"), |b| {
            b.iter_custom(|iters| {
                let edge = || wait_for_tick_change(|| twitter.clock().now_ms());
                timed_bursts(iters, batches, edge, || {
                    twitter.next_ids(black_box(&mut buffer))
                })
            })
        });
        group.finish();
        let mut group = plain_group(c, "ferroflake_next_ids");
        group.throughput(Throughput::Elements(size as u64));
        group.bench_function(format!("fast_wide_{size}"), |b| {
            b.iter(|| wide_fast.next_ids(black_box(&mut buffer)))
        });
        group.finish();
    }
    report_waits("ferroflake_next_ids/system_twitter", &twitter);
}

fn peers(c: &mut Criterion) {
    let millis = || wait_for_tick_change(system_ms);
    let mut group = edge_group(c, "peer_edge");

    let snowflaked = common::snowflaked();
    group.bench_function("snowflaked", |b| {
        b.iter_custom(|iters| timed_bursts(iters, BURST, millis, || snowflaked.generate::<u64>()))
    });

    // Single-threaded, as its docs use it: `&mut`, no lock.
    let mut rs_snowflake = snowflake::SnowflakeIdGenerator::new(1, 1);
    group.bench_function("rs_snowflake", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, BURST, millis, || rs_snowflake.real_time_generate())
        })
    });

    let snowflake_me = common::snowflake_me();
    group.bench_function("snowflake_me", |b| {
        b.iter_custom(|iters| timed_bursts(iters, BURST, millis, || snowflake_me.next_id()))
    });

    // Twitter-like widths (10 worker + 12 sequence bits: 4,091 per ms after its 5 reserved
    // sequence values), so a burst never makes it borrow ticks.
    common::idgenerator_init(10, 12);
    group.bench_function("idgenerator", |b| {
        b.iter_custom(|iters| {
            timed_bursts(iters, BURST, millis, idgenerator::IdInstance::next_id)
        })
    });
    group.finish();

    // sonyflake: 256 IDs per 10 ms, so bursts of 200 after each 10 ms edge. Each burst
    // costs 10 ms of wall time, so this one gets very little measured time.
    let mut group = c.benchmark_group("peer_edge");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(2))
        .measurement_time(Duration::from_millis(8))
        .throughput(Throughput::Elements(1));
    let sonyflake = common::sonyflake();
    group.bench_function("sonyflake", |b| {
        b.iter_custom(|iters| {
            let ten_ms = || wait_for_tick_change(|| system_ms() / 10);
            timed_bursts(iters, 200, ten_ms, || sonyflake.next_id())
        })
    });
    group.finish();

    let mut group = plain_group(c, "peer_plain");
    let snowflake_me_wide = common::snowflake_me_uncapped();
    group.bench_function("snowflake_me_wide", |b| b.iter(|| snowflake_me_wide.next_id()));
    group.bench_function("uuid_now_v7", |b| b.iter(uuid::Uuid::now_v7));
    group.bench_function("ulid_generate", |b| b.iter(ulid::Ulid::generate));
    let mut monotonic = ulid::Generator::new();
    group.bench_function("ulid_generator", |b| b.iter(|| monotonic.generate().is_ok()));
    group.finish();
}

criterion_group!(benches, clocks, ferroflake_one_by_one, ferroflake_batches, peers);
criterion_main!(benches);
