//! Test helpers shared by the segment tests.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[allow(unused_imports)] // each test file uses part of it
pub use ferroflake_test_support::wait_for;

use ferroflake_segment::{Allocation, KeyRecord, Range, SegmentConfig, SegmentError, SegmentStore};

/// A store wrapper that a test switches off (every call `Unavailable`) and on, and can slow
/// down; it counts allocations.
pub struct Switchable {
    pub inner: Arc<dyn SegmentStore>,
    off: AtomicBool,
    /// A give-back is applied, and then its answer lost: the caller sees `Unavailable`.
    give_back_answer_lost: AtomicBool,
    delay_ms: AtomicU64,
    pub allocations: AtomicU64,
    in_flight: AtomicU64,
    /// The most allocations that were in flight at once.
    pub max_in_flight: AtomicU64,
}

impl Switchable {
    pub fn new(inner: Arc<dyn SegmentStore>) -> Arc<Self> {
        Arc::new(Switchable {
            inner,
            off: AtomicBool::new(false),
            give_back_answer_lost: AtomicBool::new(false),
            delay_ms: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
        })
    }
    pub fn set_off(&self, off: bool) {
        self.off.store(off, Ordering::SeqCst);
    }
    pub fn set_give_back_answer_lost(&self, lost: bool) {
        self.give_back_answer_lost.store(lost, Ordering::SeqCst);
    }
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }
    fn gate(&self) -> Result<(), SegmentError> {
        let delay = self.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        if self.off.load(Ordering::SeqCst) {
            return Err(SegmentError::Unavailable {
                store: "switchable".into(),
                detail: "switched off by the test".into(),
            });
        }
        Ok(())
    }
}

impl SegmentStore for Switchable {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        self.gate()?;
        self.inner.create(key, start, step)
    }
    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let result = self.gate().and_then(|()| {
            self.allocations.fetch_add(1, Ordering::SeqCst);
            self.inner.allocate(key, step)
        });
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        result
    }
    fn give_back(&self, key: &str, rest: Range, expected: u64) -> Result<bool, SegmentError> {
        self.gate()?;
        let given = self.inner.give_back(key, rest, expected)?;
        if self.give_back_answer_lost.load(Ordering::SeqCst) {
            return Err(SegmentError::Unavailable {
                store: "switchable".into(),
                detail: "the answer was lost after the store applied it".into(),
            });
        }
        Ok(given)
    }
    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        self.gate()?;
        self.inner.peek(key)
    }
    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        self.gate()?;
        self.inner.recover(key, above, step)
    }
    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        self.inner.set_step(key, step)
    }
    fn history(&self) -> Result<Option<ferroflake_segment::StoreHistory>, SegmentError> {
        self.inner.history()
    }
    fn name(&self) -> &str {
        "switchable"
    }
}

/// Settings for tests: quick retries, a short wait.
pub fn fast_config() -> SegmentConfig {
    SegmentConfig {
        max_wait: Duration::from_secs(10), // a loaded machine may starve the worker for a while
        retry_min: Duration::from_millis(5),
        retry_max: Duration::from_millis(40),
        ..SegmentConfig::default()
    }
}
