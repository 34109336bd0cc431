//! loom models of the hot path and the switch: every interleaving of callers taking IDs
//! across a segment switch (increments that overshoot the old segment included), with the
//! next segment right after the current one or above a gap another allocator owns.
//!
//! Run: `FERROFLAKE_CFG=ferroflake_loom LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! ferroflake-segment --no-default-features --features loom --test loom --profile
//! cfg-variants` (scripts/test-segment.sh does). With `ferroflake_loom_mutant` added to
//! FERROFLAKE_CFG, the increment becomes a read and a write; with
//! `ferroflake_loom_mutant_switch`, a switch publishes the new bounds before it resets the
//! cursor. Either way the models must fail with "duplicate
//! IDs".
#![cfg(ferroflake_loom)]

use std::collections::HashSet;
use std::sync::Arc;

use ferroflake_segment::loom_model::Model;
use ferroflake_segment::Range;

fn take(model: &Model, each: usize) -> Vec<u64> {
    (0..each).map_while(|_| model.next_id()).collect()
}

/// Every thread takes `each` IDs (or stops at `None`); checks all of them.
fn run(threads: usize, each: usize, current: Range, next: Range) {
    loom::model(move || {
        let model = Arc::new(Model::new(current, next));
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let model = Arc::clone(&model);
                loom::thread::spawn(move || take(&model, each))
            })
            .collect();
        let mut all = vec![take(&model, each)];
        all.extend(handles.into_iter().map(|h| h.join().unwrap()));
        let mut seen = HashSet::new();
        for ids in &all {
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "out-of-order IDs in one thread: {all:?}"
            );
            for id in ids {
                assert!(
                    current.contains(*id) || next.contains(*id),
                    "ID {id} outside both segments: {all:?}"
                );
                assert!(seen.insert(*id), "duplicate IDs: {all:?}");
            }
        }
        // A caller that read the old bounds and increments just after the switch burns one
        // ID of the new segment: at most one per thread, with one switch.
        let asked = threads * each;
        let available = (current.len() + next.len()) as usize;
        assert!(
            seen.len() + threads >= asked.min(available),
            "more IDs lost than callers racing the switch: {all:?}"
        );
    });
}

#[test]
fn two_threads_two_ids_across_a_switch() {
    run(2, 2, Range { start: 0, end: 2 }, Range { start: 2, end: 4 });
}

#[test]
fn three_threads_one_id_with_a_stale_increment() {
    // One ID in the first segment: two of three callers overshoot it and must move on.
    run(
        3,
        1,
        Range { start: 10, end: 11 },
        Range { start: 11, end: 13 },
    );
}

#[test]
fn two_threads_run_both_segments_dry() {
    run(2, 3, Range { start: 0, end: 1 }, Range { start: 1, end: 3 });
}

#[test]
fn next_segment_above_a_gap() {
    // 2..5 belongs to another allocator: increments that overshoot into it issue nothing.
    run(2, 2, Range { start: 0, end: 2 }, Range { start: 5, end: 7 });
}

/// Two callers taking batches of two from segments of three: a batch that runs past the
/// end of a segment gets the part inside it, and nobody gets an ID twice.
#[test]
fn batches_across_a_switch() {
    loom::model(|| {
        let current = Range { start: 0, end: 3 };
        let next = Range { start: 3, end: 6 };
        let model = Arc::new(Model::new(current, next));
        let other = {
            let model = Arc::clone(&model);
            loom::thread::spawn(move || (0..2).filter_map(|_| model.next_ids(2)).collect())
        };
        let mine: Vec<(u64, u64)> = (0..2).filter_map(|_| model.next_ids(2)).collect();
        let theirs: Vec<(u64, u64)> = other.join().unwrap();
        let mut seen = HashSet::new();
        for &(first, count) in mine.iter().chain(&theirs) {
            assert!(
                count >= 1 && count <= 2,
                "batch of {count}: {mine:?} {theirs:?}"
            );
            for id in first..first + count {
                assert!(
                    current.contains(id) || next.contains(id),
                    "ID {id} outside both segments: {mine:?} {theirs:?}"
                );
                assert!(seen.insert(id), "duplicate IDs: {mine:?} {theirs:?}");
            }
        }
    });
}

/// Shutdown racing two callers: every ID a caller got lies below the rest that shutdown
/// would give back, so a given-back ID was never issued.
#[test]
fn seal_races_callers() {
    loom::model(|| {
        let model = Arc::new(Model::new(
            Range { start: 0, end: 3 },
            Range { start: 3, end: 5 },
        ));
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let model = Arc::clone(&model);
                loom::thread::spawn(move || take(&model, 2))
            })
            .collect();
        let rest = model.seal();
        let all: Vec<Vec<u64>> = callers.into_iter().map(|h| h.join().unwrap()).collect();
        let mut seen = HashSet::new();
        for id in all.iter().flatten() {
            assert!(seen.insert(*id), "duplicate IDs: {all:?}");
            assert!(
                *id < rest,
                "ID {id} issued at or above the given-back rest {rest}: {all:?}"
            );
        }
    });
}
