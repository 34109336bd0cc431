//! Threads sharing one generator on the real system clock: no duplicates, each thread's IDs
//! strictly increasing, and an ID obtained after another thread's (via a release/acquire
//! hand-off) is larger.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ferroflake::{FastClock, Generator, Layout, Options};

const THREADS: usize = 4;
const PER_THREAD: usize = 100_000;

fn run_threads<F>(next: F) -> Vec<Vec<u64>>
where
    F: Fn() -> u64 + Send + Sync + 'static,
{
    let next = Arc::new(next);
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let next = next.clone();
            thread::spawn(move || (0..PER_THREAD).map(|_| next()).collect::<Vec<u64>>())
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn assert_unique_and_per_thread_increasing(per_thread: &[Vec<u64>]) {
    let mut all = HashSet::with_capacity(THREADS * PER_THREAD);
    for ids in per_thread {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread saw IDs go down"
        );
        for &id in ids {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), THREADS * PER_THREAD);
}

#[test]
fn threads_sharing_one_generator_get_no_duplicates() {
    let g = Generator::new(Layout::twitter(), 1).unwrap();
    assert_unique_and_per_thread_increasing(&run_threads(move || g.next_id().unwrap()));
}

#[test]
fn threads_on_the_fast_clock_get_no_duplicates() {
    let g = Generator::with_clock(
        Layout::twitter(),
        1,
        FastClock::for_tick_ms(1),
        Options::default(),
    )
    .unwrap();
    assert_unique_and_per_thread_increasing(&run_threads(move || g.next_id().unwrap()));
}

#[test]
fn threads_taking_batches_get_no_duplicates() {
    let g = Generator::new(Layout::sonyflake(), 77).unwrap();
    let per_thread = run_threads(move || {
        let mut one = [0u64; 1];
        g.next_ids(&mut one).unwrap();
        one[0]
    });
    assert_unique_and_per_thread_increasing(&per_thread);
}

#[test]
fn an_id_taken_after_seeing_another_threads_id_is_larger() {
    const ROUNDS: u64 = 50_000;
    // Hand-offs from distinct writer IDs the reader must see, so that the check ran while
    // the writer was issuing, not only against its last ID.
    const MIN_HAND_OFFS: u64 = 100;
    let g = Arc::new(Generator::new(Layout::twitter(), 2).unwrap());
    let published = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (g, published, stop) = (g.clone(), published.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                published.store(g.next_id().unwrap(), Ordering::Release);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut checked, mut hand_offs, mut last_seen) = (0u64, 0u64, 0u64);
    while checked < ROUNDS || hand_offs < MIN_HAND_OFFS {
        assert!(
            Instant::now() < deadline,
            "after 30 s: {checked} checks, {hand_offs} hand-offs"
        );
        let seen = published.load(Ordering::Acquire);
        let mine = g.next_id().unwrap();
        if seen == 0 {
            continue; // the writer has not issued yet
        }
        assert!(mine > seen, "{mine} was issued after {seen} became visible");
        checked += 1;
        hand_offs += u64::from(seen != last_seen);
        last_seen = seen;
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}
