//! The segment store as the server sees it: every call timed, counted and logged, so that
//! fetches, their latency and store errors show in `/metrics` and in the log without the
//! allocator knowing.

use std::sync::Arc;
use std::time::Instant;

use ferroflake_segment::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, StoreHistory};

use crate::metrics::{Metrics, FETCHES, FETCH_SECONDS, STORE_ERRORS};

/// Wraps a store; passes every call through unchanged.
pub struct MeteredStore {
    inner: Arc<dyn SegmentStore>,
    metrics: Arc<Metrics>,
}

impl MeteredStore {
    /// `inner`, counted into `metrics`.
    pub fn new(inner: Arc<dyn SegmentStore>, metrics: Arc<Metrics>) -> Self {
        MeteredStore { inner, metrics }
    }

    fn failed(&self, op: &'static str, e: &SegmentError) {
        self.metrics
            .counter(STORE_ERRORS, &[("op", op), ("kind", e.name())])
            .increment(1);
    }
}

impl SegmentStore for MeteredStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        self.inner.create(key, start, step)
    }

    /// Only keys with a row get here (the allocator peeks first), so the `key` label is
    /// bounded by the table.
    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        let began = Instant::now();
        let result = self.inner.allocate(key, step);
        let took = began.elapsed();
        self.metrics
            .histogram(FETCH_SECONDS, &[("key", key)])
            .record(took.as_secs_f64());
        match &result {
            Ok(a) => {
                self.metrics
                    .counter(FETCHES, &[("key", key), ("outcome", "ok")])
                    .increment(1);
                tracing::info!(
                    event = "segment_fetch",
                    key,
                    start = a.range.start,
                    end = a.range.end,
                    step,
                    ms = took.as_secs_f64() * 1e3,
                    "segment fetched"
                );
            }
            Err(e) => {
                self.metrics
                    .counter(FETCHES, &[("key", key), ("outcome", "error")])
                    .increment(1);
                self.failed("allocate", e);
                tracing::warn!(
                    event = "segment_fetch_failed",
                    key,
                    kind = e.name(),
                    ms = took.as_secs_f64() * 1e3,
                    error = %e,
                    "segment fetch failed"
                );
            }
        }
        result
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        let result = self.inner.give_back(key, rest, expected_max_id);
        match &result {
            Ok(true) => tracing::info!(
                event = "segment_given_back",
                key,
                start = rest.start,
                end = rest.end,
                "unissued IDs given back"
            ),
            Ok(false) => tracing::info!(
                event = "segment_dropped",
                key,
                start = rest.start,
                end = rest.end,
                "unissued IDs not given back: the table moved on, so they are skipped"
            ),
            Err(e) => {
                self.failed("give_back", e);
                tracing::warn!(event = "segment_give_back_failed", key, error = %e,
                    "giving unissued IDs back failed; they are skipped");
            }
        }
        result
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        let result = self.inner.peek(key);
        if let Err(e) = &result {
            self.failed("peek", e);
        }
        result
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        let result = self.inner.recover(key, above, step);
        if let Err(e) = &result {
            self.failed("recover", e);
        }
        result
    }

    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        let result = self.inner.set_step(key, step);
        if let Err(e) = &result {
            self.failed("set_step", e);
        }
        result
    }

    fn history(&self) -> Result<Option<StoreHistory>, SegmentError> {
        self.inner.history()
    }

    fn identity(&self) -> Option<String> {
        self.inner.identity()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}
