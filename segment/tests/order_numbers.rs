//! Date-prefixed order numbers: midnight in a zone other than UTC, a DST day, the counter's
//! width limit, a clock that steps back, restarts and processes racing to create a day.

use std::collections::HashSet;
use std::sync::{Arc, Barrier};
use std::thread;

use ferroflake_segment::{
    ManualWallClock, MemoryStore, OrderNumberConfig, OrderNumbers, SegmentAllocator, SegmentConfig,
    SegmentError, SegmentStore, SqliteStore,
};

/// 2026-11-22T16:00:00Z: midnight of 2026-11-23 in Shanghai (UTC+8, no DST).
const SHANGHAI_MIDNIGHT: i64 = 1_795_363_200_000;
/// 2026-03-09T07:00:00Z: midnight of 2026-03-09 in Los Angeles, the first after the switch
/// to daylight saving time on 2026-03-08 (PDT, UTC-7; the day before began at 08:00Z).
const LA_MIDNIGHT_AFTER_DST: i64 = 1_773_039_600_000;
const LA_MIDNIGHT_BEFORE_DST: i64 = 1_772_956_800_000;

fn config(zone: &str, width: u32) -> OrderNumberConfig {
    OrderNumberConfig {
        zone: zone.into(),
        width,
        step: 10,
        ..OrderNumberConfig::default()
    }
}

fn orders(
    store: Arc<dyn SegmentStore>,
    config: OrderNumberConfig,
    clock: &Arc<ManualWallClock>,
) -> OrderNumbers {
    let allocator = Arc::new(SegmentAllocator::new(store, SegmentConfig::default()).unwrap());
    OrderNumbers::with_clock(allocator, config, clock.clone()).unwrap()
}

fn texts(orders: &OrderNumbers, n: usize) -> Vec<String> {
    (0..n).map(|_| orders.next().unwrap().to_string()).collect()
}

#[test]
fn midnight_in_shanghai_starts_a_new_days_key_and_counter() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT - 1));
    let shanghai = orders(store.clone(), config("Asia/Shanghai", 6), &clock);
    let utc = orders(
        store.clone(),
        OrderNumberConfig {
            prefix: "utc".into(),
            ..config("UTC", 6)
        },
        &clock,
    );
    assert_eq!(
        texts(&shanghai, 3),
        ["20261122000001", "20261122000002", "20261122000003"]
    );
    assert_eq!(texts(&utc, 1), ["20261122000001"]);
    clock.advance_ms(1);
    let first = shanghai.next().unwrap();
    assert_eq!(first.to_string(), "20261123000001");
    assert_eq!(
        (first.key(), first.counter()),
        ("orders:20261123".to_owned(), 1)
    );
    assert_eq!(first.value(), 20_261_123_000_001);
    assert_eq!(first.day().to_string(), "2026-11-23");
    // In UTC it is still the 22nd.
    assert_eq!(texts(&utc, 1), ["20261122000002"]);
    // Both days' keys are in the table; the old one is left as it was.
    assert!(store.peek("orders:20261122").unwrap().is_some());
    assert!(store.peek("orders:20261123").unwrap().is_some());
    assert!(store.peek("utc:20261123").unwrap().is_none());
}

#[test]
fn a_dst_day_in_los_angeles_ends_at_its_own_midnight() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(LA_MIDNIGHT_BEFORE_DST - 1));
    let la = orders(store, config("America/Los_Angeles", 4), &clock);
    assert_eq!(texts(&la, 1), ["202603070001"]);
    clock.set_ms(LA_MIDNIGHT_BEFORE_DST); // 00:00 PST, the day of the switch
    assert_eq!(texts(&la, 1), ["202603080001"]);
    // That day has 23 hours: at 07:00Z (not 08:00Z, as UTC-8 would say) it is over.
    clock.set_ms(LA_MIDNIGHT_AFTER_DST - 1);
    assert_eq!(texts(&la, 1), ["202603080002"]);
    clock.set_ms(LA_MIDNIGHT_AFTER_DST);
    assert_eq!(texts(&la, 1), ["202603090001"]);
}

#[test]
fn a_full_counter_is_a_typed_error_and_nothing_is_issued_twice() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT));
    let two_digits = orders(store.clone(), config("Asia/Shanghai", 2), &clock);
    assert_eq!(two_digits.max_counter(), 99);
    let numbers = texts(&two_digits, 99);
    assert_eq!(numbers.first().unwrap(), "2026112301");
    assert_eq!(numbers.last().unwrap(), "2026112399");
    assert_eq!(numbers.iter().collect::<HashSet<_>>().len(), 99);
    for _ in 0..3 {
        match two_digits.next() {
            Err(SegmentError::Exhausted { key, limit }) => {
                assert_eq!((key.as_str(), limit), ("orders:20261123", 99));
            }
            other => panic!("expected Exhausted, got {other:?}"),
        }
    }
    // A second process on the same table is refused too, and issues nothing of the day.
    let other = orders(store, config("Asia/Shanghai", 2), &clock);
    assert!(matches!(
        other.next(),
        Err(SegmentError::Exhausted { limit: 99, .. })
    ));
    // The next day starts again.
    clock.advance_ms(86_400_000);
    assert_eq!(texts(&two_digits, 1), ["2026112401"]);
}

#[test]
fn a_clock_that_steps_back_across_midnight_keeps_the_later_day() {
    let store = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT));
    let orders = orders(store.clone(), config("Asia/Shanghai", 6), &clock);
    assert_eq!(texts(&orders, 1), ["20261123000001"]);
    clock.advance_ms(-5_000);
    assert_eq!(texts(&orders, 1), ["20261123000002"]);
    assert!(store.peek("orders:20261122").unwrap().is_none());
}

#[test]
fn a_restart_continues_above_what_was_issued() {
    let store: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT));
    let allocator =
        Arc::new(SegmentAllocator::new(store.clone(), SegmentConfig::default()).unwrap());
    let first =
        OrderNumbers::with_clock(allocator.clone(), config("Asia/Shanghai", 6), clock.clone())
            .unwrap();
    let before = texts(&first, 25);
    allocator.shutdown();
    drop(first);
    // A crash (no shutdown) skips the rest of its segment; a clean stop gives it back.
    let second = orders(store, config("Asia/Shanghai", 6), &clock);
    let after = texts(&second, 5);
    assert_eq!(after[0], "20261123000026", "{before:?} then {after:?}");
}

/// A shut-down allocator makes no order numbers: refused when they are made (once the
/// settings are found good), as a key or a new key is.
#[test]
fn a_shut_down_allocator_makes_no_order_numbers() {
    let store: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT));
    let allocator = Arc::new(SegmentAllocator::new(store, SegmentConfig::default()).unwrap());
    allocator.shutdown();
    let made = OrderNumbers::with_clock(allocator.clone(), config("UTC", 6), clock.clone());
    assert!(
        matches!(&made, Err(SegmentError::Closed { key }) if key == "orders:yyyyMMdd"),
        "{made:?}"
    );
    // What is wrong with the request itself is said first.
    let bad = OrderNumbers::with_clock(allocator, config("Mars/Olympus", 6), clock);
    assert!(
        matches!(bad, Err(SegmentError::InvalidConfig { .. })),
        "{bad:?}"
    );
}

#[test]
fn processes_racing_to_create_a_day_never_share_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("segments.db");
    let clock = Arc::new(ManualWallClock::new(SHANGHAI_MIDNIGHT));
    let start = Arc::new(Barrier::new(4));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (path, clock, start) = (path.clone(), clock.clone(), start.clone());
            thread::spawn(move || {
                // Each its own store handle and allocator, as separate processes have.
                let store: Arc<dyn SegmentStore> = Arc::new(SqliteStore::open(&path).unwrap());
                let orders = orders(store, config("Asia/Shanghai", 6), &clock);
                start.wait();
                texts(&orders, 200)
            })
        })
        .collect();
    let all: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(all.len(), 800);
    assert_eq!(
        all.iter().collect::<HashSet<_>>().len(),
        800,
        "a number was issued twice"
    );
    assert!(all.iter().all(|n| n.starts_with("20261123")));
}

#[test]
fn bad_settings_are_refused() {
    let store: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let allocator = Arc::new(SegmentAllocator::new(store, SegmentConfig::default()).unwrap());
    let cases = [
        (
            OrderNumberConfig {
                zone: "Mars/Olympus_Mons".into(),
                ..OrderNumberConfig::default()
            },
            "time zone",
        ),
        (
            OrderNumberConfig {
                width: 0,
                ..OrderNumberConfig::default()
            },
            "width 0",
        ),
        (
            OrderNumberConfig {
                width: 11,
                ..OrderNumberConfig::default()
            },
            "width 11",
        ),
        (
            OrderNumberConfig {
                step: 0,
                ..OrderNumberConfig::default()
            },
            "step 0",
        ),
    ];
    for (config, expected) in cases {
        match OrderNumbers::new(allocator.clone(), config) {
            Err(SegmentError::InvalidConfig { detail }) => {
                assert!(detail.contains(expected), "{detail}")
            }
            other => panic!("{expected}: {other:?}"),
        }
    }
    let long = OrderNumberConfig {
        prefix: "x".repeat(120),
        ..OrderNumberConfig::default()
    };
    assert!(matches!(
        OrderNumbers::new(allocator.clone(), long),
        Err(SegmentError::InvalidKey { .. })
    ));
    // The system clock works with the defaults: today's number in UTC.
    let today = OrderNumbers::new(allocator, OrderNumberConfig::default())
        .unwrap()
        .next()
        .unwrap();
    assert_eq!(today.to_string().len(), 14);
    assert_eq!(today.counter(), 1);
}
