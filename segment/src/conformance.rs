//! The store conformance suite: the behaviour every [`SegmentStore`] must show.
//!
//! Enabled by the `conformance` feature. A store's tests call [`run_all`] (or one check per
//! `#[test]`) with a factory that returns a store over a *fresh, empty* table each time it
//! is called (a new file, schema, table or key prefix). Each check panics with a message
//! naming what broke.
//!
//! ```
//! # #[cfg(feature = "conformance")] {
//! use std::sync::Arc;
//! use ferroflake_segment::conformance::run_all;
//! use ferroflake_segment::{MemoryStore, SegmentStore};
//!
//! run_all(&|| Arc::new(MemoryStore::new()) as Arc<dyn SegmentStore>);
//! # }
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use std::thread;

use crate::{Range, SegmentError, SegmentStore, MAX_STEP, MAX_TABLE_ID};

/// A factory for stores over fresh, empty tables.
pub type Fresh<'a> = &'a dyn Fn() -> Arc<dyn SegmentStore>;

/// What a store's test does to its table behind the store's back, as an operator, a lost
/// write or a restored backup would, for the fault checks ([`run_faults`]).
pub trait Tamper {
    /// Deletes the key's row (a `DELETE`, a `DEL`, a lost write), leaving everything else.
    fn delete_row(&self, key: &str);
    /// Sets the key's `max_id` (a row restored from a backup, or edited by hand).
    fn set_max_id(&self, key: &str, max_id: u64);
}

/// A factory for stores over fresh, empty tables, each with a [`Tamper`] on its table.
pub type FreshTampered<'a> = &'a dyn Fn() -> (Arc<dyn SegmentStore>, Box<dyn Tamper>);

/// Runs every check below, in order.
pub fn run_all(fresh: Fresh<'_>) {
    leaf_ranges(fresh);
    create_refuses_bad_input(fresh);
    unknown_keys(fresh);
    exhaustion_never_wraps(fresh);
    give_back_is_conditional(fresh);
    concurrent_allocations_are_disjoint(fresh);
    recover_creates_and_never_lowers(fresh);
    set_step_changes_the_step_alone(fresh);
}

/// Runs every fault check below, in order.
pub fn run_faults(fresh: FreshTampered<'_>) {
    a_lost_row_is_never_recreated_below_its_mark(fresh);
    a_row_moved_back_is_refused(fresh);
    recovery_starts_above_the_floor_and_the_mark(fresh);
}

/// [`SegmentStore::recover`] makes a missing key at the floor plus one, raises a key below
/// the floor, never lowers a key above it, and always moves a row that is there, so that a
/// range taken before the recovery is not given back.
pub fn recover_creates_and_never_lowers(fresh: Fresh<'_>) {
    let store = fresh();
    let made = store.recover("r", 99, 10).unwrap();
    assert_eq!(
        (made.max_id, made.step),
        (100, 10),
        "a missing key made above the floor"
    );
    assert_eq!(
        store.allocate("r", 10).unwrap().range,
        Range {
            start: 100,
            end: 110
        },
        "the first range after recovery"
    );
    let kept = store.recover("r", 5, 50).unwrap();
    assert_eq!(
        (kept.max_id, kept.step),
        (111, 10),
        "a floor below the row lowers nothing (the row moves past itself), and the table's \
         step stays"
    );
    assert!(
        !store
            .give_back(
                "r",
                Range {
                    start: 103,
                    end: 110
                },
                110
            )
            .unwrap(),
        "a range taken before the recovery does not go back: it may hold the IDs the \
         floor names"
    );
    assert_eq!(store.peek("r").unwrap().unwrap().max_id, 111);
    assert_eq!(
        store.recover("r", 499, 10).unwrap().max_id,
        500,
        "raised to the floor"
    );
    assert!(
        matches!(
            store.recover("r", MAX_TABLE_ID, 10),
            Err(SegmentError::InvalidConfig { .. })
        ),
        "a floor at the table's last ID"
    );
    assert!(
        matches!(
            store.recover("", 1, 10),
            Err(SegmentError::InvalidKey { .. })
        ),
        "an empty key"
    );
}

/// [`SegmentStore::set_step`] changes the key's stored step and nothing else: `max_id`
/// stays, the next allocation reports the new step, and a key without a row or a step the
/// table cannot hold is refused.
pub fn set_step_changes_the_step_alone(fresh: Fresh<'_>) {
    let store = fresh();
    store.create("s", 1, 10).unwrap();
    store.allocate("s", 10).unwrap(); // max_id 11
    let row = store.set_step("s", 250).unwrap();
    assert_eq!((row.max_id, row.step), (11, 250), "the row after set_step");
    let peeked = store.peek("s").unwrap().unwrap();
    assert_eq!((peeked.max_id, peeked.step), (11, 250), "the row as read");
    let next = store.allocate("s", 250).unwrap();
    assert_eq!(
        (next.range, next.table_step),
        (
            Range {
                start: 11,
                end: 261
            },
            250
        ),
        "the allocation after set_step"
    );
    assert_eq!(store.set_step("s", MAX_STEP).unwrap().step, MAX_STEP);
    assert!(
        matches!(
            store.set_step("nope", 10),
            Err(SegmentError::UnknownKey { .. })
        ),
        "a key without a row"
    );
    assert!(
        store.peek("nope").unwrap().is_none(),
        "set_step makes no row"
    );
    for bad in [0, MAX_STEP + 1] {
        assert!(
            matches!(
                store.set_step("s", bad),
                Err(SegmentError::InvalidConfig { .. })
            ),
            "step {bad}"
        );
    }
    assert!(
        matches!(store.set_step("", 10), Err(SegmentError::InvalidKey { .. })),
        "an empty key"
    );
    assert_eq!(
        store.peek("s").unwrap().unwrap().step,
        MAX_STEP,
        "refusals change nothing"
    );
}

/// A key whose row is lost after it issued IDs is never created again below what it
/// reached (the create-at-start pattern of every quickstart), nor recreated by an
/// allocation; created above that, it goes on from there.
pub fn a_lost_row_is_never_recreated_below_its_mark(fresh: FreshTampered<'_>) {
    let (store, tamper) = fresh();
    store.create("lost", 1, 10).unwrap();
    store.allocate("lost", 10).unwrap();
    let last = store.allocate("lost", 10).unwrap().range; // 11..21
    assert!(
        matches!(
            store.create("lost", 1, 10),
            Err(SegmentError::KeyExists { .. })
        ),
        "a create at start of a key whose row is there is KeyExists (the usual start-up)"
    );
    tamper.delete_row("lost");
    assert!(
        matches!(store.set_step("lost", 5), Err(SegmentError::Rewound { .. })),
        "a step set on a lost row makes no row"
    );
    assert!(
        matches!(
            store.allocate("lost", 10),
            Err(SegmentError::Rewound { .. })
        ),
        "an allocation after the row was lost must be Rewound"
    );
    assert!(
        matches!(
            store.create("lost", 1, 10),
            Err(SegmentError::Rewound { .. })
        ),
        "creating the key again at its old start must be Rewound"
    );
    assert!(
        matches!(
            store.create("lost", 20, 10),
            Err(SegmentError::Rewound { .. })
        ),
        "creating it again inside its last range must be Rewound"
    );
    assert!(
        matches!(store.peek("lost"), Err(SegmentError::Rewound { .. })),
        "no row was made by the refusals, and reading the lost key says it is lost"
    );
    store
        .create("lost", last.end as i64, 10)
        .expect("a create above everything issued");
    assert_eq!(
        store.allocate("lost", 10).unwrap().range.start,
        last.end,
        "the key goes on above what it issued"
    );
}

/// An allocation from a row whose `max_id` went back (a restored row, a hand edit) is
/// refused, and the row is left as it was.
pub fn a_row_moved_back_is_refused(fresh: FreshTampered<'_>) {
    let (store, tamper) = fresh();
    store.create("back", 1, 10).unwrap();
    store.allocate("back", 10).unwrap();
    store.allocate("back", 10).unwrap(); // max_id 21
    tamper.set_max_id("back", 11);
    assert!(
        matches!(
            store.allocate("back", 10),
            Err(SegmentError::Rewound { .. })
        ),
        "an allocation from a row below its mark must be Rewound"
    );
    assert_eq!(
        store.peek("back").unwrap().map(|r| r.max_id),
        Some(11),
        "the refused allocation must leave the row as it was"
    );
    tamper.set_max_id("back", 40);
    assert_eq!(
        store.allocate("back", 10).unwrap().range.start,
        40,
        "a row moved forward (a Leaf server sharing the table) is fine"
    );
}

/// After a loss, [`SegmentStore::recover`] starts the key above both the operator's floor
/// and what the store knows it reached, whichever is higher.
pub fn recovery_starts_above_the_floor_and_the_mark(fresh: FreshTampered<'_>) {
    let (store, tamper) = fresh();
    store.create("rec", 1, 10).unwrap();
    store.allocate("rec", 10).unwrap();
    store.allocate("rec", 10).unwrap(); // max_id 21
    tamper.delete_row("rec");
    let row = store.recover("rec", 5, 10).unwrap();
    assert_eq!(row.max_id, 21, "a floor below the mark: the mark wins");
    assert_eq!(store.allocate("rec", 10).unwrap().range.start, 21);
    tamper.set_max_id("rec", 3);
    assert_eq!(
        store.recover("rec", 1000, 10).unwrap().max_id,
        1001,
        "the floor above the mark"
    );
    assert_eq!(store.allocate("rec", 10).unwrap().range.start, 1001);
}

/// Leaf's convention: a key created at `start` with `step` first yields `[start, start +
/// step)`; each allocation of `s` yields `[max_id - s, max_id)` after the update; a
/// custom step leaves the table's step as it was.
pub fn leaf_ranges(fresh: Fresh<'_>) {
    let store = fresh();
    store.create("orders", 1000, 100).unwrap();
    let first = store.allocate("orders", 100).unwrap();
    assert_eq!(
        first.range,
        Range {
            start: 1000,
            end: 1100
        },
        "first range"
    );
    assert_eq!(first.table_step, 100, "table step");
    let second = store.allocate("orders", 250).unwrap();
    assert_eq!(
        second.range,
        Range {
            start: 1100,
            end: 1350
        },
        "a custom step"
    );
    assert_eq!(
        second.table_step, 100,
        "a custom step must not change the table's step"
    );
    let row = store.peek("orders").unwrap().expect("the row");
    assert_eq!(
        (row.max_id, row.step),
        (1350, 100),
        "the row after two allocations"
    );
    store.create("other", 1, 1).unwrap();
    assert_eq!(
        store.allocate("other", 1).unwrap().range,
        Range { start: 1, end: 2 },
        "keys are independent"
    );
}

/// Duplicate keys, empty and over-long keys, a step of 0 or above 2^31 - 1 and a start
/// below 1 are refused with typed errors; a 128-byte key is accepted.
pub fn create_refuses_bad_input(fresh: Fresh<'_>) {
    let store = fresh();
    store.create("k", 1, 10).unwrap();
    assert!(
        matches!(
            store.create("k", 1, 10),
            Err(SegmentError::KeyExists { .. })
        ),
        "a duplicate key must be KeyExists"
    );
    let long = "x".repeat(129);
    for key in ["", long.as_str()] {
        assert!(
            matches!(
                store.create(key, 1, 10),
                Err(SegmentError::InvalidKey { .. })
            ),
            "create({key:?}) must be InvalidKey"
        );
        assert!(
            matches!(
                store.allocate(key, 10),
                Err(SegmentError::InvalidKey { .. })
            ),
            "allocate({key:?}) must be InvalidKey"
        );
    }
    store
        .create(&"y".repeat(128), 1, 10)
        .expect("a 128-byte key");
    for step in [0, MAX_STEP + 1] {
        assert!(
            matches!(
                store.create("s", 1, step),
                Err(SegmentError::InvalidConfig { .. })
            ),
            "step {step} must be InvalidConfig"
        );
        assert!(
            matches!(
                store.allocate("k", step),
                Err(SegmentError::InvalidConfig { .. })
            ),
            "allocate with step {step} must be InvalidConfig"
        );
    }
    for start in [-1, 0] {
        assert!(
            matches!(
                store.create("n", start, 10),
                Err(SegmentError::InvalidConfig { .. })
            ),
            "start {start} must be InvalidConfig"
        );
    }
    assert_eq!(
        store.peek("n").unwrap(),
        None,
        "a refused create must add nothing"
    );
    assert_eq!(
        store.peek("k").unwrap().unwrap().max_id,
        1,
        "refusals change nothing"
    );
}

/// A key without a row: allocate and give-back are UnknownKey, peek is None. Keys are never
/// created by use.
pub fn unknown_keys(fresh: Fresh<'_>) {
    let store = fresh();
    assert!(
        matches!(
            store.allocate("nope", 10),
            Err(SegmentError::UnknownKey { .. })
        ),
        "allocate of an unknown key must be UnknownKey"
    );
    assert_eq!(store.peek("nope").unwrap(), None, "peek of an unknown key");
    let rest = Range { start: 5, end: 10 };
    assert!(
        matches!(
            store.give_back("nope", rest, 10),
            Err(SegmentError::UnknownKey { .. })
        ),
        "give-back to an unknown key must be UnknownKey"
    );
    assert_eq!(
        store.peek("nope").unwrap(),
        None,
        "nothing was created by use"
    );
}

/// An allocation that would pass 2^63 - 1 is Exhausted and leaves the row as it was; one
/// that ends exactly at 2^63 - 1 succeeds.
pub fn exhaustion_never_wraps(fresh: Fresh<'_>) {
    let store = fresh();
    let start = MAX_TABLE_ID - 5;
    store.create("top", start as i64, 10).unwrap();
    assert!(
        matches!(
            store.allocate("top", 10),
            Err(SegmentError::Exhausted { .. })
        ),
        "an allocation past 2^63 - 1 must be Exhausted"
    );
    assert_eq!(
        store.peek("top").unwrap().unwrap().max_id,
        start,
        "row unchanged"
    );
    let last = store.allocate("top", 5).unwrap();
    assert_eq!(
        last.range,
        Range {
            start,
            end: MAX_TABLE_ID
        },
        "the last range"
    );
    assert!(
        matches!(
            store.allocate("top", 1),
            Err(SegmentError::Exhausted { .. })
        ),
        "nothing after the end"
    );
}

/// A give-back lowers `max_id` to the rest's start only while nobody has allocated since;
/// otherwise it is refused with `Ok(false)` and the row is unchanged. A rest that does not
/// end at the expected `max_id` is refused as InvalidConfig.
pub fn give_back_is_conditional(fresh: Fresh<'_>) {
    let store = fresh();
    store.create("g", 1, 10).unwrap();
    let a = store.allocate("g", 10).unwrap().range; // 1..11
    let rest = Range {
        start: 4,
        end: a.end,
    };
    assert_eq!(
        store.give_back("g", rest, a.end),
        Ok(true),
        "give-back while unchanged"
    );
    assert_eq!(
        store.peek("g").unwrap().unwrap().max_id,
        4,
        "max_id lowered"
    );
    assert_eq!(
        store.allocate("g", 10).unwrap().range,
        Range { start: 4, end: 14 },
        "the next allocation continues from what was given back"
    );
    let mine = store.allocate("g", 10).unwrap().range; // 14..24
    let theirs = store.allocate("g", 10).unwrap().range; // 24..34
    let late = Range {
        start: mine.start + 2,
        end: mine.end,
    };
    assert_eq!(
        store.give_back("g", late, mine.end),
        Ok(false),
        "refused after another allocation"
    );
    assert_eq!(
        store.peek("g").unwrap().unwrap().max_id,
        theirs.end,
        "row unchanged"
    );
    assert!(
        matches!(
            store.give_back("g", Range { start: 30, end: 33 }, 34),
            Err(SegmentError::InvalidConfig { .. })
        ),
        "a rest that does not end at the expected max_id"
    );
    assert_eq!(
        store.peek("g").unwrap().unwrap().max_id,
        theirs.end,
        "row unchanged"
    );
}

/// Threads allocating from one store (each with its own handle from the factory's store)
/// get disjoint ranges that together cover the key without a gap.
pub fn concurrent_allocations_are_disjoint(fresh: Fresh<'_>) {
    const THREADS: usize = 4;
    const EACH: usize = 40;
    let store = fresh();
    store.create("c", 1, 7).unwrap();
    let barrier = Arc::new(Barrier::new(THREADS));
    let ranges: Vec<Range> = (0..THREADS)
        .map(|i| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                (0..EACH)
                    .map(|_| store.allocate("c", 3 + i as u64).unwrap().range)
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let by_start: BTreeMap<u64, Range> = ranges.iter().map(|r| (r.start, *r)).collect();
    assert_eq!(
        by_start.len(),
        ranges.len(),
        "two allocations started at the same ID"
    );
    let mut expect = 1;
    for r in by_start.values() {
        assert_eq!(r.start, expect, "ranges overlap or leave a gap at {expect}");
        expect = r.end;
    }
    assert_eq!(
        store.peek("c").unwrap().unwrap().max_id,
        expect,
        "max_id is the end"
    );
}
