//! The allocator's guarantees, each against the store that shows it best: many threads on
//! one key with a tiny step, prefetch, bounded waits, a store that goes away and comes back,
//! give-back, limits, bad input, and a Leaf table filled by hand.

mod support;

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use ferroflake_segment::{
    MemoryStore, Range, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore, SqliteStore,
    LIMIT_JS, MAX_TABLE_ID,
};
use support::{fast_config, wait_for, Switchable};

/// `threads` threads take `each` IDs from one key (half one by one, half in batches of 3):
/// no ID twice, and each thread's IDs increase.
fn hammer(allocator: &SegmentAllocator, key: &str, threads: usize, each: usize) -> Vec<u64> {
    let handle = allocator.key(key).unwrap();
    let barrier = Arc::new(Barrier::new(threads));
    let per_thread: Vec<Vec<u64>> = (0..threads)
        .map(|t| {
            let handle = handle.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let mut ids = Vec::with_capacity(each);
                while ids.len() < each {
                    if t % 2 == 0 {
                        ids.push(handle.next_id().unwrap());
                    } else {
                        for r in handle.next_ids(3).unwrap() {
                            ids.extend(r.start..r.end);
                        }
                    }
                }
                ids
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let mut seen = HashSet::new();
    for (t, ids) in per_thread.iter().enumerate() {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "thread {t}: IDs do not increase"
        );
        for id in ids {
            assert!(seen.insert(*id), "ID {id} issued twice");
        }
    }
    per_thread.into_iter().flatten().collect()
}

#[test]
fn threads_on_one_key_with_step_10_memory() {
    let store = Switchable::new(Arc::new(MemoryStore::new()));
    store.create("k", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10, // keep fetching all the time
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let ids = hammer(&allocator, "k", 4, 20_000);
    assert!(ids.len() >= 80_000);
    let fetched = store.allocations.load(Ordering::SeqCst) * 10;
    // Two buffers' worth, and a little for callers that race a switch (each may burn one
    // ID: see src/segment.rs). A leak of fetches would show at every switch, thousands.
    assert!(
        fetched <= ids.len() as u64 + 2 * 10 + 40,
        "{fetched} IDs fetched for {} issued: a key fetched more than the two buffers hold",
        ids.len()
    );
    assert!(
        store.allocations.load(Ordering::SeqCst) >= 8_000,
        "step 10 fetches constantly"
    );
    assert_eq!(
        store.max_in_flight.load(Ordering::SeqCst),
        1,
        "at most one fetch per key in flight"
    );
}

#[test]
fn threads_on_one_key_with_step_10_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("s.db")).unwrap());
    store.create("k", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10,
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store, config).unwrap();
    hammer(&allocator, "k", 4, 1_000);
}

#[test]
fn prefetch_at_ten_percent_and_adaptive_step() {
    let store = Switchable::new(Arc::new(MemoryStore::new()));
    store.create("p", 1, 100).unwrap();
    let config = SegmentConfig {
        max_step: 400,
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let handle = allocator.key("p").unwrap();
    for _ in 0..10 {
        handle.next_id().unwrap();
    }
    assert_eq!(
        store.allocations.load(Ordering::SeqCst),
        1,
        "no fetch before 10% is used"
    );
    handle.next_id().unwrap(); // the 11th ID: offset 10 of 100
    wait_for("the prefetch", Duration::from_secs(5), || {
        handle.status().next.is_some()
    });
    let status = handle.status();
    assert_eq!(
        status.next,
        Some(Range {
            start: 101,
            end: 201
        }),
        "first prefetch keeps the step"
    );
    assert_eq!(status.runway_ids, 89 + 100);
    // The following segments are used up within 15 minutes: each fetch doubles the step,
    // up to max_step.
    let mut steps = Vec::new();
    for _ in 0..6 {
        let before = handle.status().counters.fetches;
        while handle.status().counters.fetches == before {
            handle.next_id().unwrap();
            if handle.status().fetching {
                wait_for("a fetch", Duration::from_secs(5), || {
                    !handle.status().fetching
                });
            }
        }
        steps.push(handle.status().step);
    }
    assert_eq!(
        steps,
        [200, 400, 400, 400, 400, 400],
        "doubling, capped at max_step"
    );
    assert!(
        handle.status().runway_secs.is_some(),
        "runway in seconds once a segment switched"
    );
}

/// A key with step 10 (IDs 1..=10 in its first segment) whose fetches take 600 ms from
/// the start: once those ten are taken, both buffers stay empty for a while.
fn key_with_a_slow_store(max_wait: Duration) -> (SegmentAllocator, ferroflake_segment::KeyHandle) {
    let store = Switchable::new(Arc::new(MemoryStore::new()));
    store.create("slow", 1, 10).unwrap();
    let config = SegmentConfig {
        max_wait,
        max_step: 10,
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let handle = allocator.key("slow").unwrap();
    store.set_delay(Duration::from_millis(600)); // every fetch is slow from now on
    (allocator, handle)
}

#[test]
fn try_next_id_never_blocks() {
    let (allocator, handle) = key_with_a_slow_store(Duration::from_secs(2));
    let ids: Vec<u64> = (0..10)
        .map(|_| handle.try_next_id().unwrap().unwrap())
        .collect();
    assert_eq!(ids, (1..11).collect::<Vec<_>>());
    let asked = Instant::now();
    assert_eq!(handle.try_next_id().unwrap(), None, "both buffers empty");
    assert!(
        asked.elapsed() < Duration::from_millis(100),
        "try_next_id waited {:?}",
        asked.elapsed()
    );
    // The fetch it asked for lands; the key goes on where it left off.
    wait_for("the slow fetch", Duration::from_secs(5), || {
        handle.status().next.is_some()
    });
    assert_eq!(handle.try_next_id().unwrap(), Some(11));
    assert_eq!(handle.status().counters.not_ready, 0);
    allocator.shutdown();
    assert!(matches!(
        handle.try_next_id(),
        Err(SegmentError::Closed { .. })
    ));
}

#[test]
fn after_shutdown_opening_any_key_and_creating_one_are_refused() {
    let store = Arc::new(MemoryStore::new());
    let allocator = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    allocator.create("open", 1, 10).unwrap();
    let open = allocator.key("open").unwrap();
    allocator.shutdown();
    let closed =
        |result: Result<(), SegmentError>| matches!(result, Err(SegmentError::Closed { .. }));
    assert!(closed(open.next_id().map(drop)), "a handle open before");
    assert!(closed(allocator.key("open").map(drop)), "a key open before");
    assert!(
        closed(allocator.create("late", 1, 10)),
        "a key created after"
    );
    assert!(store.peek("late").unwrap().is_none(), "nothing written");
    // What is wrong with the request itself is said first: it would be refused anyway.
    assert!(matches!(
        allocator.create("", 1, 10),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert!(matches!(
        allocator.key(""),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert!(matches!(
        allocator.create("late", 1, 0),
        Err(SegmentError::InvalidConfig { .. })
    ));
}

#[test]
fn both_buffers_empty_waits_a_bounded_time_then_not_ready() {
    let (_allocator, handle) = key_with_a_slow_store(Duration::from_millis(50));
    for _ in 0..10 {
        handle.next_id().unwrap(); // memory still has these
    }
    let err = handle.next_id().unwrap_err();
    assert!(
        matches!(err, SegmentError::NotReady { waited, .. } if waited < Duration::from_millis(500)),
        "both buffers empty: bounded wait, then NotReady, got {err:?}"
    );
    // The fetch in flight lands: the key goes on where it left off, nothing skipped twice.
    wait_for("the slow fetch", Duration::from_secs(5), || {
        handle.status().next.is_some()
    });
    assert_eq!(handle.next_id().unwrap(), 11);
    let status = handle.status();
    assert!(
        status.counters.waits >= 1 && status.counters.not_ready == 1,
        "{status:?}"
    );
}

#[test]
fn a_waiting_caller_gets_the_fetch_in_flight_and_doubles_the_step() {
    let store = Switchable::new(Arc::new(MemoryStore::new()));
    store.create("h", 1, 10).unwrap();
    let config = SegmentConfig {
        fast_segment: Duration::ZERO, // the time rule alone would keep the step
        slow_segment: Duration::from_secs(3600),
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let handle = allocator.key("h").unwrap();
    store.set_delay(Duration::from_millis(100));
    let ids: Vec<u64> = (0..30).map(|_| handle.next_id().unwrap()).collect();
    assert_eq!(
        ids,
        (1..31).collect::<Vec<_>>(),
        "waited, never failed, nothing skipped"
    );
    let status = handle.status();
    assert!(status.counters.waits >= 1, "{status:?}");
    assert!(
        status.step >= 20,
        "a caller waited, so the step doubled: {status:?}"
    );
}

#[test]
fn store_down_drains_memory_then_typed_error_then_recovers() {
    let store = Switchable::new(Arc::new(MemoryStore::new()));
    store.create("d", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10,
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let handle = allocator.key("d").unwrap();
    handle.next_id().unwrap();
    handle.next_id().unwrap(); // past 10%: the next segment is fetched
    wait_for("the prefetch", Duration::from_secs(5), || {
        handle.status().next.is_some()
    });
    store.set_off(true);
    let mut issued = vec![1, 2];
    let err = loop {
        match handle.next_id() {
            Ok(id) => issued.push(id),
            Err(e) => break e,
        }
    };
    assert_eq!(
        issued,
        (1..21).collect::<Vec<_>>(),
        "memory drained: both segments issued"
    );
    assert!(
        matches!(err, SegmentError::Unavailable { .. }),
        "typed error: {err:?}"
    );
    let status = handle.status();
    assert!(
        status.last_error.is_some() && status.runway_ids == 0,
        "{status:?}"
    );
    assert!(status.counters.fetch_failures >= 1, "{status:?}");
    // The worker retries on its own while the store is down: wait for two more failures.
    let failed = status.counters.fetch_failures;
    wait_for("two more retries to fail", Duration::from_secs(5), || {
        handle.status().counters.fetch_failures >= failed + 2
    });
    store.set_off(false);
    let mut next = None;
    wait_for("recovery", Duration::from_secs(5), || {
        next = handle.next_id().ok();
        next.is_some()
    });
    assert!(next.unwrap() > 20, "recovered with newer IDs");
    assert!(handle.status().last_error.is_none());
}

#[test]
fn give_back_on_shutdown_and_refused_after_another_allocation() {
    let store = Arc::new(MemoryStore::new());
    store.create("g", 1, 100).unwrap();
    let a = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    let ha = a.key("g").unwrap();
    for _ in 0..5 {
        ha.next_id().unwrap();
    }
    let report = a.shutdown();
    assert_eq!((report.given_back, report.refused.len()), (95, 0));
    assert_eq!(
        store.peek("g").unwrap().unwrap().max_id,
        6,
        "the rest went back"
    );
    assert!(
        matches!(ha.next_id(), Err(SegmentError::Closed { .. })),
        "closed after shutdown"
    );
    assert!(
        a.shutdown().given_back == 0,
        "a second shutdown does nothing"
    );
    // A key not open before shutdown does not open: nothing would fetch for it or give
    // its range back.
    store.create("late", 1, 100).unwrap();
    assert!(matches!(a.key("late"), Err(SegmentError::Closed { .. })));
    assert!(matches!(
        a.key_or_create("later", 1000, 1, 10),
        Err(SegmentError::Closed { .. })
    ));
    assert_eq!(
        store.peek("late").unwrap().unwrap().max_id,
        1,
        "no range taken"
    );

    // Another allocator took a range after ours: the rest is dropped, never handed out twice.
    let b = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    let hb = b.key("g").unwrap();
    assert_eq!(
        hb.next_id().unwrap(),
        6,
        "continues from what was given back"
    );
    let c = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    let hc = c.key("g").unwrap();
    let c_first = hc.next_id().unwrap();
    let report = b.shutdown();
    assert_eq!(report.refused, ["g"], "refused: c allocated after b");
    let max = store.peek("g").unwrap().unwrap().max_id;
    assert!(max > c_first, "the row still covers c's range");
    drop(c);
}

#[test]
fn js_limit_and_top_of_table_are_typed_exhaustion() {
    let store = Arc::new(MemoryStore::new());
    store.create("js", LIMIT_JS as i64 - 14, 10).unwrap();
    store.create("top", MAX_TABLE_ID as i64 - 25, 10).unwrap();
    let allocator = SegmentAllocator::new(store, fast_config()).unwrap();
    for (key, limit) in [("js", LIMIT_JS), ("top", MAX_TABLE_ID)] {
        let handle = if key == "js" {
            allocator.key_with_limit(key, LIMIT_JS).unwrap()
        } else {
            allocator.key(key).unwrap()
        };
        let mut last = 0;
        let err = loop {
            match handle.next_id() {
                Ok(id) => {
                    assert!(id > last && id <= limit, "{key}: {id} after {last}");
                    last = id;
                }
                Err(e) => break e,
            }
        };
        assert!(
            matches!(err, SegmentError::Exhausted { .. }),
            "{key}: {err:?}"
        );
        assert!(
            matches!(handle.next_id(), Err(SegmentError::Exhausted { .. })),
            "stays so"
        );
        if key == "js" {
            assert_eq!(last, LIMIT_JS, "the JS key issues up to 2^53 - 1 exactly");
        }
    }
}

#[test]
fn bad_input_is_typed() {
    let store = Arc::new(MemoryStore::new());
    store.create("k", 1, 10).unwrap();
    let allocator = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    assert!(matches!(
        allocator.key(""),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert!(matches!(
        allocator.key(&"x".repeat(129)),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert!(matches!(
        allocator.key("missing"),
        Err(SegmentError::UnknownKey { .. })
    ));
    assert!(matches!(
        allocator.key_with_limit("k", u64::MAX),
        Err(SegmentError::InvalidConfig { .. })
    ));
    let handle = allocator.key("k").unwrap();
    assert!(matches!(
        allocator.key_with_limit("k", LIMIT_JS),
        Err(SegmentError::InvalidConfig { .. })
    ));
    assert!(matches!(
        handle.next_ids(0),
        Err(SegmentError::InvalidConfig { .. })
    ));
    assert!(matches!(
        handle.next_ids(u64::MAX),
        Err(SegmentError::InvalidConfig { .. })
    ));
    for config in [
        SegmentConfig {
            prefetch_share: 0.0,
            ..SegmentConfig::default()
        },
        SegmentConfig {
            prefetch_share: f64::NAN,
            ..SegmentConfig::default()
        },
        SegmentConfig {
            max_step: 0,
            ..SegmentConfig::default()
        },
        SegmentConfig {
            retry_min: Duration::ZERO,
            ..SegmentConfig::default()
        },
    ] {
        assert!(matches!(
            SegmentAllocator::new(store.clone(), config),
            Err(SegmentError::InvalidConfig { .. })
        ));
    }
}

/// A table made with Leaf's own DDL and a row filled by hand (max_id 1000, step 100):
/// ferroflake continues from it, and a Leaf server updating the same row the way Leaf does
/// (`max_id = max_id + step`, then read) never overlaps with it.
#[test]
fn leaf_table_filled_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("leaf.db");
    let leaf = rusqlite::Connection::open(&file).unwrap();
    leaf.execute_batch(
        "CREATE TABLE leaf_alloc (
            biz_tag varchar(128) NOT NULL DEFAULT '',
            max_id bigint(20) NOT NULL DEFAULT '1',
            step int(11) NOT NULL,
            description varchar(256) DEFAULT NULL,
            update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
            PRIMARY KEY (biz_tag)
        );
        INSERT INTO leaf_alloc (biz_tag, max_id, step, description)
            VALUES ('leaf-segment-test', 1000, 100, 'Test leaf Segment Mode Get Id');",
    )
    .unwrap();
    let store = Arc::new(SqliteStore::open(&file).unwrap());
    let allocator = SegmentAllocator::new(store, fast_config()).unwrap();
    let handle = allocator.key("leaf-segment-test").unwrap();
    let mut ours: Vec<u64> = (0..100).map(|_| handle.next_id().unwrap()).collect();
    assert_eq!(
        ours,
        (1000..1100).collect::<Vec<_>>(),
        "continues from Leaf's row"
    );
    let mut leafs = Vec::new();
    for _ in 0..5 {
        // Leaf's updateMaxIdAndGetLeafAlloc: update, then read in one transaction.
        let (max_id, step): (i64, i64) = {
            leaf.execute_batch("BEGIN IMMEDIATE").unwrap();
            leaf.execute(
                "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = 'leaf-segment-test'",
                [],
            )
            .unwrap();
            let row = leaf
                .query_row(
                    "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            leaf.execute_batch("COMMIT").unwrap();
            row
        };
        leafs.extend((max_id - step) as u64..max_id as u64);
        ours.extend((0..150).map(|_| handle.next_id().unwrap()));
    }
    let theirs: HashSet<u64> = leafs.into_iter().collect();
    assert!(
        ours.iter().all(|id| !theirs.contains(id)),
        "ferroflake and Leaf overlap"
    );
}

/// Another process holding SQLite's write lock past the busy timeout makes the store
/// `Unavailable` (retried), not a hard error; the allocator keeps issuing from memory and
/// goes on once the lock is released.
#[test]
fn sqlite_lock_held_elsewhere_is_unavailable_and_heals() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    let store = Arc::new(SqliteStore::open_with_timeout(&file, Duration::from_millis(50)).unwrap());
    store.create("l", 1, 10).unwrap();
    let other = rusqlite::Connection::open(&file).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let err = store.allocate("l", 10).unwrap_err();
    assert!(matches!(err, SegmentError::Unavailable { .. }), "{err:?}");
    let allocator = SegmentAllocator::new(store.clone(), fast_config()).unwrap();
    assert!(matches!(
        allocator.key("l"),
        Err(SegmentError::Unavailable { .. })
    ));
    other.execute_batch("COMMIT").unwrap();
    let handle = allocator.key("l").unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let ids: Vec<u64> = (0..10).map(|_| handle.next_id().unwrap()).collect();
    assert_eq!(
        ids,
        (1..11).collect::<Vec<_>>(),
        "memory is issued while the lock is held"
    );
    assert!(matches!(
        handle.next_id(),
        Err(SegmentError::Unavailable { .. })
    ));
    other.execute_batch("COMMIT").unwrap();
    let mut next = None;
    wait_for("the lock's release", Duration::from_secs(5), || {
        next = handle.next_id().ok();
        next.is_some()
    });
    assert_eq!(next, Some(11));
}

/// Takes IDs until the first error (at most 1,000); returns them with the error.
fn drain(handle: &ferroflake_segment::KeyHandle) -> (Vec<u64>, SegmentError) {
    let mut ids = Vec::new();
    while ids.len() < 1_000 {
        match handle.next_id() {
            Ok(id) => ids.push(id),
            Err(e) => return (ids, e),
        }
    }
    panic!("1,000 IDs and no error: {:?}..", &ids[..20]);
}

/// A row lowered behind the allocator's back with its mark (a whole table restored) makes
/// the store hand out a range the key already had: the allocator refuses it with `Rewound`,
/// issues only what it held, and stays refused (no retry brings the range back).
#[test]
fn a_row_lowered_under_the_allocator_is_rewound_never_reissued() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    let store = Switchable::new(Arc::new(SqliteStore::open(&file).unwrap()));
    store.create("r", 1, 10).unwrap();
    store.create("witness", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10,
        ..fast_config()
    };
    let retry_max = config.retry_max;
    let allocator = SegmentAllocator::new(store.clone(), config).unwrap();
    let handle = allocator.key("r").unwrap(); // holds 1..11; the row says 11
    let edit = rusqlite::Connection::open(&file).unwrap();
    // The whole file restored: the row and its mark (which the store alone would catch).
    edit.execute_batch(
        "UPDATE leaf_alloc SET max_id = 1 WHERE biz_tag = 'r';
         UPDATE leaf_alloc_marks SET high = 1 WHERE biz_tag = 'r';",
    )
    .unwrap();
    let (ids, err) = drain(&handle);
    assert_eq!(ids, (1..11).collect::<Vec<_>>(), "only the range in memory");
    assert!(
        matches!(&err, SegmentError::Rewound { key, .. } if key == "r"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("1..11") && text.contains("segment recover r --above"),
        "the message says what came back and how to recover: {text}"
    );
    // A retry would be due within `retry_max` of the refusal. The one fetch worker takes
    // due fetches earliest first, so once a fetch asked for after that has arrived, any
    // retry has been tried: count the store's allocations across it.
    let refused_at = Instant::now();
    let allocations = store.allocations.load(Ordering::SeqCst);
    let witness = allocator.key("witness").unwrap(); // one allocation: 1..11
                                                     // Not a wait for an event: the instant by which the config makes any retry due.
    thread::sleep((refused_at + retry_max).saturating_duration_since(Instant::now()));
    witness.next_id().unwrap();
    witness.next_id().unwrap(); // past 10%: its next segment is fetched, one allocation
    wait_for("the witness's prefetch", Duration::from_secs(10), || {
        witness.status().next.is_some()
    });
    assert_eq!(
        store.allocations.load(Ordering::SeqCst),
        allocations + 2,
        "the witness's two allocations, none for the refused key"
    );
    assert!(matches!(
        handle.next_id(),
        Err(SegmentError::Rewound { .. })
    ));
    let status = handle.status();
    assert_eq!(status.counters.fetch_failures, 1, "not retried: {status:?}");
    assert_eq!(
        store.peek("r").unwrap().unwrap().max_id,
        11,
        "the refused range was taken from the table (and is lost, never issued)"
    );
}

/// A row that vanishes after the key issued from it is `Rewound`, not `UnknownKey`: the
/// usual cure for an unknown key (create it at its start) would issue the same IDs again.
#[test]
fn a_row_deleted_under_the_allocator_is_rewound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.db");
    let store = Arc::new(SqliteStore::open(&file).unwrap());
    store.create("gone", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10,
        ..fast_config()
    };
    let allocator = SegmentAllocator::new(store, config).unwrap();
    let handle = allocator.key("gone").unwrap();
    let edit = rusqlite::Connection::open(&file).unwrap();
    edit.execute("DELETE FROM leaf_alloc WHERE biz_tag = 'gone'", [])
        .unwrap();
    let (ids, err) = drain(&handle);
    assert_eq!(ids, (1..11).collect::<Vec<_>>());
    assert!(
        matches!(&err, SegmentError::Rewound { detail, .. } if detail.contains("gone after it reached max_id 11")),
        "{err:?}"
    );
}

/// A give-back by another allocator lowers the row, but never below what this one holds:
/// no false alarm.
#[test]
fn another_allocators_give_back_is_not_a_rewind() {
    let store = Arc::new(MemoryStore::new());
    store.create("shared", 1, 10).unwrap();
    let config = SegmentConfig {
        max_step: 10,
        ..fast_config()
    };
    let a = SegmentAllocator::new(store.clone(), config.clone()).unwrap();
    let ha = a.key("shared").unwrap(); // 1..11
    let b = SegmentAllocator::new(store.clone(), config).unwrap();
    let hb = b.key("shared").unwrap(); // 11..21
    assert_eq!(hb.next_id().unwrap(), 11);
    assert_eq!(b.shutdown().given_back, 9, "12..21 went back");
    let ids: Vec<u64> = (0..30).map(|_| ha.next_id().unwrap()).collect();
    let mut expected: Vec<u64> = (1..11).collect();
    expected.extend(12..32);
    assert_eq!(ids, expected, "continues from the given-back row");
}
