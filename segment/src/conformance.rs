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

/// Runs every check below, in order.
pub fn run_all(fresh: Fresh<'_>) {
    leaf_ranges(fresh);
    create_refuses_bad_input(fresh);
    unknown_keys(fresh);
    exhaustion_never_wraps(fresh);
    give_back_is_conditional(fresh);
    concurrent_allocations_are_disjoint(fresh);
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
    store.create("other", 0, 1).unwrap();
    assert_eq!(
        store.allocate("other", 1).unwrap().range,
        Range { start: 0, end: 1 },
        "keys are independent, and 0 is a valid start"
    );
}

/// Duplicate keys, empty and over-long keys, a step of 0 or above 2^31 - 1 and a negative
/// start are refused with typed errors; a 128-byte key is accepted.
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
    assert!(
        matches!(
            store.create("n", -1, 10),
            Err(SegmentError::InvalidConfig { .. })
        ),
        "a negative start must be InvalidConfig"
    );
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
