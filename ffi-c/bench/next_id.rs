//! The Rust side of the C-ABI overhead benchmark (ffi-c/bench/run.sh runs it next to
//! next_id.c in the same run). Prints one line per case: `<caller> <clock> <ns per call>`.
//!
//! Cases use a 41 time / 0 node / 22 sequence layout, so a tight loop never runs out of
//! sequence within a millisecond and the figures are call costs, not rate limits. The
//! callers take turns within each round, so load from other processes hits them alike.

use std::hint::black_box;
use std::time::Instant;

use ferroflake::{AnyClock, Generator, Layout, Options, TWITTER_EPOCH_MS};
use ferroflake_ffi::*;

const ROUNDS: usize = 15;
const MANUAL_START_MS: u64 = 1_700_000_000_000;

fn layout_spec() -> ferroflake_layout_spec {
    ferroflake_layout_spec {
        time_bits: 41,
        node_bits: 0,
        sequence_bits: 22,
        shard_bits: 0,
        tick_ms: 1,
        epoch_ms: TWITTER_EPOCH_MS as i64,
        order: FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE,
    }
}

fn rust_generator(clock: ferroflake_clock) -> Generator<AnyClock> {
    let spec = layout_spec();
    let layout = Layout::builder(spec.time_bits, spec.node_bits, spec.sequence_bits)
        .epoch_ms(spec.epoch_ms)
        .build()
        .expect("a valid layout");
    let clock = match clock {
        FERROFLAKE_CLOCK_MANUAL => AnyClock::manual(MANUAL_START_MS).0,
        FERROFLAKE_CLOCK_FAST => AnyClock::fast(1),
        _ => AnyClock::system(),
    };
    Generator::with_clock(layout, 0, clock, Options::default()).expect("a usable generator")
}

fn c_handle(clock: ferroflake_clock) -> *mut ferroflake_generator {
    let mut options = std::mem::MaybeUninit::uninit();
    let mut layout = std::ptr::null_mut();
    let mut handle = std::ptr::null_mut();
    // SAFETY: valid pointers throughout; the layout is freed once, after use.
    unsafe {
        assert_eq!(
            ferroflake_generator_options_default(options.as_mut_ptr()) as u32,
            0
        );
        let mut options = options.assume_init();
        options.clock = clock;
        options.manual_start_ms = MANUAL_START_MS;
        assert_eq!(ferroflake_layout_new(&layout_spec(), &mut layout) as u32, 0);
        assert_eq!(
            ferroflake_generator_new(layout, 0, &options, &mut handle) as u32,
            0
        );
        ferroflake_layout_free(layout);
    }
    handle
}

/// The same Rust call kept out of line: what any library call pays for not being inlined
/// into the caller's loop.
#[inline(never)]
fn next_id_out_of_line(g: &Generator<AnyClock>) -> u64 {
    g.next_id().expect("next_id")
}

/// Mean ns per call of `n` calls.
fn time_ns(n: u64, mut call: impl FnMut() -> u64) -> f64 {
    let start = Instant::now();
    let mut acc = 0u64;
    for _ in 0..n {
        acc ^= call();
    }
    black_box(acc);
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let n: u64 = std::env::var("FERROFLAKE_BENCH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    for (name, clock) in [
        ("manual", FERROFLAKE_CLOCK_MANUAL),
        ("fast", FERROFLAKE_CLOCK_FAST),
        ("system", FERROFLAKE_CLOCK_SYSTEM),
    ] {
        let g = rust_generator(clock);
        let handle = c_handle(clock);
        // Lowest over the rounds: on a shared, noisy machine the least disturbed figure.
        let mut best = [f64::INFINITY; 3];
        for _ in 0..ROUNDS {
            let samples = [
                time_ns(n, || g.next_id().expect("next_id")),
                time_ns(n, || next_id_out_of_line(&g)),
                time_ns(n, || {
                    let mut id = 0u64;
                    // SAFETY: a live handle and a valid out-pointer.
                    let rc = unsafe { ferroflake_generator_next_id(handle, &mut id) };
                    assert_eq!(rc as u32, 0);
                    id
                }),
            ];
            for (b, s) in best.iter_mut().zip(samples) {
                *b = b.min(s);
            }
        }
        println!("rust {name} {:.2}", best[0]);
        println!("rust-out-of-line {name} {:.2}", best[1]);
        println!("rust-via-c-abi {name} {:.2}", best[2]);
        // SAFETY: the handle came from ferroflake_generator_new and is freed once.
        unsafe { ferroflake_generator_free(handle) };
    }
}
