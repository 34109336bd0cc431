//! Cost per ID on one thread: ferroflake on each clock, the clock reads themselves, batches,
//! and the peers.
//!
//! Method. `*_edge` groups time bursts of at most 3,000 calls, each starting right after the
//! millisecond (the generator's tick) changes. On a layout with 4,096 IDs per tick a burst
//! never meets the sequence cap, so it measures the code, not the cap; on the wide layouts
//! the cap is out of reach anyway. A burst lasts tens of µs, so on this shared 2-core
//! machine a preemption almost always lands in the wait between bursts rather than inside
//! one: the figures are close to CPU time. The `clock` and `ferroflake_wide` groups time
//! plain back-to-back loops instead, as a cross-check of what a long loop sees when the
//! machine is busy.

mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ferroflake::{
    Clock, FastClock, Format, Generator, Layout, Mask, MaskKey, MaskKeyring, Options,
};
use ferroflake_benches::{
    coarse_layout, system_ms, timed_bursts, uncapped_layout, wait_for_tick_change,
};

/// IDs per burst: three quarters of a 4,096-ID tick.
const BURST: u64 = 3_000;

/// Plain back-to-back calls.
fn plain_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(1));
    group
}

/// Tick-edge bursts spend most of their wall time waiting for the next tick, and criterion
/// counts only the time inside bursts, so they get less measured time.
fn edge_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(400))
        .throughput(Throughput::Elements(1));
    group
}

/// Times `op` in bursts that start at the edges of `clock`'s milliseconds.
fn bursts_on<'a, C: Clock, T>(
    clock: &'a C,
    burst: u64,
    mut op: impl FnMut() -> T + 'a,
) -> impl FnMut(u64) -> Duration + 'a {
    move |iters| {
        timed_bursts(
            iters,
            burst,
            || wait_for_tick_change(|| clock.now_ms()),
            &mut op,
        )
    }
}

fn report_waits<C: Clock>(name: &str, generator: &Generator<C>) {
    let counters = generator.counters();
    eprintln!(
        "note: {name}: waits {} (0: no call met the sequence cap), borrowed ticks {}",
        counters.waits, counters.borrowed_ticks
    );
}

fn fast_generator(layout: Layout) -> Generator<FastClock> {
    let clock = FastClock::for_tick_ms(layout.tick_ms());
    Generator::with_clock(layout, 1, clock, Options::default()).expect("fast-clock generator")
}

fn clocks(c: &mut Criterion) {
    let tsc = FastClock::for_tick_ms(1);
    let coarse = FastClock::for_tick_ms(coarse_layout().tick_ms());
    eprintln!(
        "note: FastClock::for_tick_ms(1) picked {:?}; (10) picked {:?}; (1000) picked {:?}",
        tsc.source(),
        FastClock::for_tick_ms(10).source(),
        coarse.source()
    );
    let system = ferroflake::SystemClock;

    let mut group = plain_group(c, "clock");
    group.bench_function("system_time_now_ms", |b| b.iter(system_ms));
    group.bench_function("fast_clock_1ms", |b| b.iter(|| tsc.now_ms()));
    group.bench_function("fast_clock_1s", |b| b.iter(|| coarse.now_ms()));
    group.finish();

    let mut group = edge_group(c, "clock_edge");
    group.bench_function("system_time_now_ms", |b| {
        b.iter_custom(bursts_on(&system, BURST, system_ms))
    });
    // The read `Generator::new` does: ferroflake's SystemClock (clock_gettime on Unix,
    // without SystemTime's checks).
    group.bench_function("ferroflake_system_clock", |b| {
        b.iter_custom(bursts_on(&system, BURST, || system.now_ms()))
    });
    group.bench_function("fast_clock_1ms", |b| {
        b.iter_custom(bursts_on(&system, BURST, || tsc.now_ms()))
    });
    group.bench_function("fast_clock_1s", |b| {
        b.iter_custom(bursts_on(&system, BURST, || coarse.now_ms()))
    });
    // The floor of a generator on the TSC: its clock read and one uncontended
    // compare-and-swap of a word that the read feeds, as `next_id`'s loop does once.
    let word = AtomicU64::new(0);
    group.bench_function("fast_clock_1ms_cas", |b| {
        b.iter_custom(bursts_on(&system, BURST, || {
            let ms = tsc.now_ms();
            let current = word.load(Ordering::Relaxed);
            word.compare_exchange(
                current,
                ms ^ current.wrapping_add(1),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
        }))
    });
    group.finish();
}

fn ferroflake_one_by_one(c: &mut Criterion) {
    let twitter = Generator::new(Layout::twitter(), 1).expect("twitter generator");
    let twitter_fast = fast_generator(Layout::twitter());
    let wide = Generator::new(uncapped_layout(), 1).expect("wide generator");
    let wide_fast = fast_generator(uncapped_layout());
    let seconds_fast = fast_generator(coarse_layout());

    let mut group = edge_group(c, "ferroflake_edge");
    group.bench_function("system_twitter", |b| {
        b.iter_custom(bursts_on(twitter.clock(), BURST, || twitter.next_id()))
    });
    group.bench_function("fast_twitter", |b| {
        b.iter_custom(bursts_on(twitter_fast.clock(), BURST, || {
            twitter_fast.next_id()
        }))
    });
    group.bench_function("system_wide", |b| {
        b.iter_custom(bursts_on(wide.clock(), BURST, || wide.next_id()))
    });
    group.bench_function("fast_wide", |b| {
        b.iter_custom(bursts_on(wide_fast.clock(), BURST, || wide_fast.next_id()))
    });
    group.bench_function("fast_1s_tick", |b| {
        b.iter_custom(bursts_on(seconds_fast.clock(), BURST, || {
            seconds_fast.next_id()
        }))
    });
    group.finish();

    let mut group = plain_group(c, "ferroflake_wide");
    group.bench_function("system", |b| b.iter(|| wide.next_id()));
    group.bench_function("fast", |b| b.iter(|| wide_fast.next_id()));
    group.finish();

    report_waits("twitter system", &twitter);
    report_waits("twitter fast", &twitter_fast);
    report_waits("wide system", &wide);
    report_waits("wide fast", &wide_fast);
    report_waits("1 s tick fast", &seconds_fast);
}

fn ferroflake_batches(c: &mut Criterion) {
    let twitter = Generator::new(Layout::twitter(), 1).expect("twitter generator");
    let wide_fast = fast_generator(uncapped_layout());
    for size in [64usize, 1024] {
        let mut group = edge_group(c, "ferroflake_next_ids_edge");
        group.throughput(Throughput::Elements(size as u64));
        let mut buffer = vec![0u64; size];
        // Batches per burst: as many as fit in three quarters of a tick's sequence.
        let batches = BURST / size as u64;
        group.bench_function(format!("system_twitter_{size}"), |b| {
            b.iter_custom(bursts_on(twitter.clock(), batches, || {
                twitter.next_ids(black_box(&mut buffer))
            }))
        });
        group.bench_function(format!("fast_wide_{size}"), |b| {
            b.iter_custom(bursts_on(wide_fast.clock(), batches, || {
                wide_fast.next_ids(black_box(&mut buffer))
            }))
        });
        group.finish();
    }
    report_waits("next_ids twitter system", &twitter);
}

fn peers(c: &mut Criterion) {
    let system = ferroflake::SystemClock;
    let mut group = edge_group(c, "peer_edge");

    let snowflaked = common::snowflaked();
    group.bench_function("snowflaked", |b| {
        b.iter_custom(bursts_on(&system, BURST, || snowflaked.generate::<u64>()))
    });

    // Single-threaded, as its docs use it: `&mut`, no lock.
    let mut rs_snowflake = snowflake::SnowflakeIdGenerator::new(1, 1);
    group.bench_function("rs_snowflake", |b| {
        b.iter_custom(bursts_on(&system, BURST, || {
            rs_snowflake.real_time_generate()
        }))
    });

    let snowflake_me = common::snowflake_me();
    group.bench_function("snowflake_me", |b| {
        b.iter_custom(bursts_on(&system, BURST, || snowflake_me.next_id()))
    });
    let snowflake_me_wide = common::snowflake_me_uncapped();
    group.bench_function("snowflake_me_wide", |b| {
        b.iter_custom(bursts_on(&system, BURST, || snowflake_me_wide.next_id()))
    });

    // Twitter-like widths (10 worker + 12 sequence bits: 4,091 per ms after its 5 reserved
    // sequence values), so a burst never makes it borrow ticks.
    common::idgenerator_init(10, 12);
    group.bench_function("idgenerator", |b| {
        b.iter_custom(bursts_on(&system, BURST, idgenerator::IdInstance::next_id))
    });

    group.bench_function("uuid_now_v7", |b| {
        b.iter_custom(bursts_on(&system, BURST, uuid::Uuid::now_v7))
    });
    group.bench_function("ulid_generate", |b| {
        b.iter_custom(bursts_on(&system, BURST, ulid::Ulid::generate))
    });
    let mut monotonic = ulid::Generator::new();
    group.bench_function("ulid_generator", |b| {
        b.iter_custom(bursts_on(&system, BURST, || monotonic.generate().is_ok()))
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
}

/// The ID mask (10 SipHash-2-4 rounds) beside `next_id` on the same layout and clock, in
/// plain loops: the cost of a public ID is `next_id` plus `mask` (or `encode`).
fn masks(c: &mut Criterion) {
    let wide = Generator::new(uncapped_layout(), 1).expect("wide generator");
    let key = MaskKey::new(1, *b"bench mask key!!").expect("key");
    let ring = MaskKeyring::new(key.clone());
    let mask63 = Mask::new(&key, 63).expect("63-bit mask");
    let mask53 = Mask::new(&key, 53).expect("53-bit mask");
    let texts: Vec<String> = (0..1024u64)
        .map(|i| {
            mask63
                .encode(i << 20, Format::Base62)
                .expect("encode")
                .to_string()
        })
        .collect();

    let mut group = plain_group(c, "mask");
    group.bench_function("next_id_wide_system", |b| b.iter(|| wide.next_id()));
    // Inputs change every call, as IDs do.
    let mut x = 0u64;
    group.bench_function("mask_63", |b| {
        b.iter(|| {
            x = (x + 0x9e37_79b9) & mask63.max_value();
            mask63.mask(black_box(x))
        })
    });
    group.bench_function("unmask_63", |b| {
        b.iter(|| {
            x = (x + 0x9e37_79b9) & mask63.max_value();
            mask63.unmask(black_box(x))
        })
    });
    group.bench_function("mask_53", |b| {
        b.iter(|| {
            x = (x + 0x9e37_79b9) & mask53.max_value();
            mask53.mask(black_box(x))
        })
    });
    group.bench_function("next_id_then_encode_base62", |b| {
        b.iter(|| {
            wide.next_id()
                .and_then(|id| mask63.encode(id, Format::Base62))
        })
    });
    let mut i = 0usize;
    group.bench_function("keyring_decode_base62", |b| {
        b.iter(|| {
            i = (i + 1) % texts.len();
            ring.decode(black_box(&texts[i]), Format::Base62, 63)
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    clocks,
    ferroflake_one_by_one,
    ferroflake_batches,
    masks,
    peers
);
criterion_main!(benches);
