//! Model checks of the generator's CAS loop with loom: every interleaving of 2–3 threads,
//! with a clock that advances and goes back.
//!
//! Run (scripts/test-rust.sh does):
//! `FERROFLAKE_CFG=ferroflake_loom LOOM_MAX_PREEMPTIONS=2 cargo test -p ferroflake --features loom --test loom --profile cfg-variants`
//! With `FERROFLAKE_CFG=ferroflake_loom,ferroflake_loom_mutant` the CAS becomes a plain store,
//! and these models must fail.
#![cfg(ferroflake_loom)]

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;

use ferroflake::{Clock, Generator, Layout, ManualClock, Options};

const NOW: u64 = 1_700_000_000_000;

/// Shares a manual clock between the model's threads (loom needs its own `Arc`).
#[derive(Clone)]
struct SharedClock(Arc<ManualClock>);

impl Clock for SharedClock {
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
    fn wait_until_ms(&self, target_ms: u64) {
        self.0.wait_until_ms(target_ms);
    }
}

/// Two sequence bits: four IDs per tick, so the models reach the exhaustion path too.
fn tiny_layout() -> Layout {
    Layout::builder(41, 2, 2).epoch_ms(0).build().unwrap()
}

fn generator(clock: &SharedClock, drift: u64) -> Arc<Generator<SharedClock>> {
    let mut options = Options::default();
    options.max_drift_ticks = drift;
    options.max_backward_wait_ms = 1_000;
    Arc::new(Generator::with_clock(tiny_layout(), 1, clock.clone(), options).unwrap())
}

fn assert_increasing_and_unique(per_thread: &[Vec<u64>]) {
    let mut all: Vec<u64> = Vec::new();
    for ids in per_thread {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread's IDs went down: {ids:?}"
        );
        all.extend(ids);
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicate IDs: {per_thread:?}");
}

#[test]
fn two_threads_three_ids_each_with_a_clock_that_moves_both_ways() {
    loom::model(|| {
        let clock = SharedClock(Arc::new(ManualClock::new(NOW)));
        let g = generator(&clock, 0);
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let g = g.clone();
                thread::spawn(move || (0..3).map(|_| g.next_id().unwrap()).collect::<Vec<_>>())
            })
            .collect();
        clock.0.advance_ms(1);
        clock.0.rewind_ms(1);
        let mut per_thread: Vec<Vec<u64>> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        per_thread.push(vec![g.next_id().unwrap()]);
        assert_increasing_and_unique(&per_thread);
    });
}

#[test]
fn three_threads_with_drift_borrowing_ahead() {
    loom::model(|| {
        let clock = SharedClock(Arc::new(ManualClock::new(NOW)));
        let g = generator(&clock, 1);
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let g = g.clone();
                thread::spawn(move || (0..2).map(|_| g.next_id().unwrap()).collect::<Vec<_>>())
            })
            .collect();
        let per_thread: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_increasing_and_unique(&per_thread);
        // 6 IDs at four per tick: at most one tick borrowed, the clock never waited on.
        assert!(g.counters().borrowed_ticks <= 1);
    });
}

#[test]
fn an_id_issued_after_another_became_visible_is_larger() {
    loom::model(|| {
        let clock = SharedClock(Arc::new(ManualClock::new(NOW)));
        let g = generator(&clock, 0);
        let published = Arc::new(AtomicU64::new(0));
        let writer = {
            let (g, published) = (g.clone(), published.clone());
            thread::spawn(move || {
                let id = g.next_id().unwrap();
                published.store(id, Ordering::Release);
                id
            })
        };
        let seen = published.load(Ordering::Acquire);
        let mine = g.next_id().unwrap();
        if seen != 0 {
            assert!(mine > seen, "linearization violated: {mine} after {seen}");
        }
        let theirs = writer.join().unwrap();
        assert_ne!(mine, theirs);
    });
}

#[test]
fn a_manual_clock_moved_both_ways_at_once_loses_neither_move() {
    // `rewind_ms` was a load then a store: an `advance_ms` between the two was lost.
    loom::model(|| {
        let clock = Arc::new(ManualClock::new(NOW));
        let forward = {
            let clock = clock.clone();
            thread::spawn(move || clock.advance_ms(7))
        };
        clock.rewind_ms(3);
        forward.join().unwrap();
        assert_eq!(clock.now_ms(), NOW + 4, "a concurrent move was lost");
    });
}
