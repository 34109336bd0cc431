//! The Rust side of the C-ABI overhead benchmark (ffi-c/bench/run.sh runs it next to
//! next_id.c in the same run). Prints one line per case: `<caller> <clock> <ns per call>`.
//!
//! Cases use a 41 time / 0 node / 22 sequence layout, so a tight loop never runs out of
//! sequence within a millisecond and the figures are call costs, not rate limits. The
//! callers take turns within each round, so load from other processes hits them alike.
//!
//! Two more cases, on Unix: `leased`, a generator whose node id is leased from an embedded
//! registry in a temporary directory (system clock, 41 / 2 / 20, so the Rust generator and
//! the C handle each hold a node id), and `segment`, a key of a SQLite file in a temporary
//! directory with a step of 2^30, so no call waits for the store.

use std::hint::black_box;
use std::time::Instant;

use ferroflake::{AnyClock, Generator, Layout, Mask, MaskKeyring, Options, TWITTER_EPOCH_MS};
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
            ferroflake_generator_options_init(
                std::mem::size_of::<ferroflake_generator_options>(),
                options.as_mut_ptr()
            ) as u32,
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

/// The lowest, over the rounds, of the three callers' mean ns per call.
fn best_of_rounds(n: u64, calls: &mut [&mut dyn FnMut() -> u64; 3]) -> [f64; 3] {
    let mut best = [f64::INFINITY; 3];
    for _ in 0..ROUNDS {
        for (b, call) in best.iter_mut().zip(calls.iter_mut()) {
            *b = b.min(time_ns(n, &mut **call));
        }
    }
    best
}

fn report(name: &str, best: [f64; 3]) {
    println!("rust {name} {:.2}", best[0]);
    println!("rust-out-of-line {name} {:.2}", best[1]);
    println!("rust-via-c-abi {name} {:.2}", best[2]);
}

#[cfg(unix)]
mod sources {
    //! The leased and segment cases.
    use std::ffi::CString;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::time::Duration;

    use ferroflake::{AnyClock, Layout, TWITTER_EPOCH_MS};
    use ferroflake_ffi::*;
    use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeasedGenerator};
    use ferroflake_segment::{KeyHandle, SegmentAllocator, SegmentConfig, SqliteStore};

    /// The segment key's step: 2^30 ids per fetch, so no timed call waits for the store.
    pub const SEGMENT_STEP: u64 = 1 << 30;

    fn lease_config() -> LeaseConfig {
        let mut config = LeaseConfig::with_ttl(Duration::from_secs(2));
        config.max_ttl = config.ttl; // a new registry then makes the first holder wait 2 s
        config.quarantine = Duration::from_millis(10);
        config
    }

    #[inline(never)]
    fn leased_out_of_line(g: &LeasedGenerator<AnyClock>) -> u64 {
        g.next_id().expect("leased next_id")
    }

    #[inline(never)]
    fn segment_out_of_line(key: &KeyHandle) -> u64 {
        key.next_id().expect("segment next_id")
    }

    pub fn leased(n: u64) -> [f64; 3] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let layout = Layout::builder(41, 2, 20)
            .epoch_ms(TWITTER_EPOCH_MS as i64)
            .build()
            .expect("a valid layout");
        let registry = Arc::new(EmbeddedRegistry::open(dir.path()).expect("a registry"));
        let g = LeasedGenerator::start(layout, AnyClock::system(), registry, lease_config())
            .expect("a lease");
        let address = CString::new(dir.path().to_str().expect("UTF-8")).expect("no NUL");
        let mut options = std::mem::MaybeUninit::<ferroflake_lease_options>::uninit();
        let mut spec = super::layout_spec();
        (spec.node_bits, spec.sequence_bits) = (2, 20);
        let (mut c_layout, mut handle) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid pointers; the handles are freed once, after use.
        unsafe {
            let size = std::mem::size_of::<ferroflake_lease_options>();
            assert_eq!(
                ferroflake_lease_options_init(size, options.as_mut_ptr()) as u32,
                0
            );
            let mut options = options.assume_init();
            options.ttl_ms = 2000;
            options.max_ttl_ms = 2000;
            options.quarantine_ms = 10;
            assert_eq!(ferroflake_layout_new(&spec, &mut c_layout) as u32, 0);
            assert_eq!(
                ferroflake_leased_generator_new(c_layout, address.as_ptr(), &options, &mut handle)
                    as u32,
                0
            );
            ferroflake_layout_free(c_layout);
        }
        let best = super::best_of_rounds(
            n,
            &mut [
                &mut || g.next_id().expect("leased next_id"),
                &mut || leased_out_of_line(&g),
                &mut || {
                    let mut id = 0u64;
                    // SAFETY: a live handle and a valid out-pointer.
                    let rc = unsafe { ferroflake_leased_generator_next_id(handle, &mut id) };
                    assert_eq!(rc as u32, 0);
                    id
                },
            ],
        );
        // SAFETY: the handle is released once.
        unsafe { assert_eq!(ferroflake_leased_generator_release(handle) as u32, 0) };
        g.shutdown().expect("a clean release");
        best
    }

    pub fn segment(n: u64) -> [f64; 3] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("segments.db");
        let store = Arc::new(SqliteStore::open(&path).expect("a SQLite store"));
        use ferroflake_segment::SegmentStore;
        store.create("bench", 1, SEGMENT_STEP).expect("a new key");
        let allocator = SegmentAllocator::new(store, SegmentConfig::default()).expect("allocator");
        let key = allocator.key("bench").expect("the key");
        let address = CString::new(path.to_str().expect("UTF-8")).expect("no NUL");
        let name = CString::new("bench").expect("no NUL");
        let (mut c_allocator, mut handle) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid pointers; the handles are freed once, after use.
        unsafe {
            assert_eq!(
                ferroflake_segment_allocator_new(
                    address.as_ptr(),
                    std::ptr::null(),
                    &mut c_allocator
                ) as u32,
                0
            );
            assert_eq!(
                ferroflake_segment_allocator_key(c_allocator, name.as_ptr(), &mut handle) as u32,
                0
            );
        }
        let best = super::best_of_rounds(
            n,
            &mut [
                &mut || key.next_id().expect("segment next_id"),
                &mut || segment_out_of_line(&key),
                &mut || {
                    let mut id = 0u64;
                    // SAFETY: a live handle and a valid out-pointer.
                    let rc = unsafe { ferroflake_segment_key_next_id(handle, &mut id) };
                    assert_eq!(rc as u32, 0);
                    id
                },
            ],
        );
        // SAFETY: each handle is freed once.
        unsafe {
            ferroflake_segment_key_free(handle);
            ferroflake_segment_allocator_free(c_allocator);
        }
        allocator.shutdown();
        black_box(&dir);
        best
    }
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
        report(name, best);
        // SAFETY: the handle came from ferroflake_generator_new and is freed once.
        unsafe { ferroflake_generator_free(handle) };
    }
    #[cfg(unix)]
    {
        report("leased", sources::leased(n));
        report("segment", sources::segment(n));
    }
    let (masking, unmasking) = mask(n);
    report("mask", masking);
    report("unmask", unmasking);
}

const MASK_KEY: &str = "1:000102030405060708090a0b0c0d0e0f";

#[inline(never)]
fn mask_out_of_line(mask: &Mask, value: u64) -> u64 {
    mask.mask(value).expect("a 63-bit value")
}

#[inline(never)]
fn unmask_out_of_line(mask: &Mask, value: u64) -> u64 {
    mask.unmask(value).expect("a 63-bit value")
}

/// [`best_of_rounds`] of three callers of one step, each call taking its caller's previous
/// result, so that no call can be skipped or hoisted.
fn best_chain(n: u64, steps: [&dyn Fn(u64) -> u64; 3]) -> [f64; 3] {
    let [mut a, mut b, mut c] = [1u64; 3];
    best_of_rounds(
        n,
        &mut [
            &mut || {
                a = steps[0](a);
                a
            },
            &mut || {
                b = steps[1](b);
                b
            },
            &mut || {
                c = steps[2](c);
                c
            },
        ],
    )
}

/// A 63-bit mask, then unmask, of one number per call, as the C side does it: each call
/// takes the previous result. The Rust callers use a `Mask` made once; the C call finds
/// the keyring's current key and makes its mask on every call, as C users get it.
fn mask(n: u64) -> ([f64; 3], [f64; 3]) {
    let ring = MaskKeyring::parse(MASK_KEY).expect("a valid key");
    let mask = ring.current_mask(63).expect("a valid width");
    let mut handle = std::ptr::null_mut();
    // SAFETY: the key text is readable for its length; the out-pointer is valid.
    let rc = unsafe {
        ferroflake_mask_keyring_new(MASK_KEY.as_ptr().cast(), MASK_KEY.len(), &mut handle)
    };
    assert_eq!(rc as u32, 0);
    let c_call = |unmask: bool, value: u64| {
        let mut out = 0u64;
        // SAFETY: a live handle and a valid out-pointer.
        let rc = unsafe {
            if unmask {
                ferroflake_mask_keyring_unmask(handle, 63, value, &mut out)
            } else {
                ferroflake_mask_keyring_mask(handle, 63, value, &mut out)
            }
        };
        assert_eq!(rc as u32, 0);
        out
    };
    let masking = best_chain(
        n,
        [
            &|v| mask.mask(v).expect("a 63-bit value"),
            &|v| mask_out_of_line(&mask, v),
            &|v| c_call(false, v),
        ],
    );
    let unmasking = best_chain(
        n,
        [
            &|v| mask.unmask(v).expect("a 63-bit value"),
            &|v| unmask_out_of_line(&mask, v),
            &|v| c_call(true, v),
        ],
    );
    // SAFETY: the handle came from ferroflake_mask_keyring_new and is freed once.
    unsafe { ferroflake_mask_keyring_free(handle) };
    (masking, unmasking)
}
