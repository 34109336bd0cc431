//! Two threads sharing one generator: aggregate time per ID (criterion's throughput line is
//! the IDs/s of both threads together).
//!
//! "wide" entries use a layout whose cap no core reaches (20 sequence bits), so they show
//! the cost of sharing; the others run the layout's own cap (4,096 per ms for Twitter-style
//! layouts, 256 per 10 ms for sonyflake) and show what a user gets from defaults.

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferroflake::{FastClock, Generator, Layout, Options};
use ferroflake_benches::{on_two_threads, uncapped_layout};

fn ferroflake(c: &mut Criterion) {
    let mut group = c.benchmark_group("two_threads");
    group
        .sample_size(15)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));

    let wide = Generator::new(uncapped_layout(), 1).expect("wide generator");
    group.bench_function("ferroflake_system_wide", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || wide.next_id()))
    });
    let wide_fast = Generator::with_clock(
        uncapped_layout(),
        1,
        FastClock::for_tick_ms(1),
        Options::default(),
    )
    .expect("wide generator on the fast clock");
    group.bench_function("ferroflake_fast_wide", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || wide_fast.next_id()))
    });
    let twitter = Generator::new(Layout::twitter(), 1).expect("twitter generator");
    group.bench_function("ferroflake_system_twitter", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || twitter.next_id()))
    });

    let snowflake_me_wide = common::snowflake_me_uncapped();
    group.bench_function("snowflake_me_wide", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || snowflake_me_wide.next_id()))
    });
    // 2 worker + 20 sequence bits: the widest sequence idgenerator allows (22 bits in all).
    common::idgenerator_init(2, 20);
    group.bench_function("idgenerator_wide", |b| {
        b.iter_custom(|iters| on_two_threads(iters, idgenerator::IdInstance::next_id))
    });
    group.bench_function("uuid_now_v7", |b| {
        b.iter_custom(|iters| on_two_threads(iters, uuid::Uuid::now_v7))
    });
    let ulid_shared = common::ulid_monotonic();
    group.bench_function("ulid_generator_mutex", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || common::ulid_next(&ulid_shared)))
    });
    // No shared state at all (and no order between threads): a reference, not a peer
    // doing the same job.
    group.bench_function("ulid_generate_unshared", |b| {
        b.iter_custom(|iters| on_two_threads(iters, ulid::Ulid::generate))
    });

    let snowflaked = common::snowflaked();
    group.bench_function("snowflaked", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || snowflaked.generate::<u64>()))
    });
    let snowflake_me = common::snowflake_me();
    group.bench_function("snowflake_me", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || snowflake_me.next_id()))
    });
    let rs_snowflake = common::rs_snowflake();
    group.bench_function("rs_snowflake_mutex", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || common::rs_snowflake_next(&rs_snowflake)))
    });
    group.finish();

    let mut group = c.benchmark_group("two_threads");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(500))
        .throughput(Throughput::Elements(1));
    let sonyflake = common::sonyflake();
    group.bench_function("sonyflake", |b| {
        b.iter_custom(|iters| on_two_threads(iters, || sonyflake.next_id()))
    });
    group.finish();
}

criterion_group!(benches, ferroflake);
criterion_main!(benches);
