//! How an allocator fetches, waits and sizes its segments.

use std::time::Duration;

use crate::store::MAX_STEP;
use crate::SegmentError;

/// The largest ID a key may issue by default: 2^63 - 1 (positive in every signed 64-bit
/// integer).
pub const LIMIT_I64: u64 = i64::MAX as u64;

/// The largest ID for keys whose IDs reach JavaScript as a `number`: 2^53 - 1.
pub const LIMIT_JS: u64 = (1 << 53) - 1;

/// The most IDs one [`next_ids`](crate::KeyHandle::next_ids) call may ask for: 2^32.
pub const MAX_BATCH: u64 = 1 << 32;

/// Allocator settings. `Default` gives Leaf's behaviour with bounded waits.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentConfig {
    /// The share of a segment used before the next one is fetched: in (0, 1]. Default 0.1
    /// (Leaf's 10%).
    pub prefetch_share: f64,
    /// How long a caller waits for the fetch in flight when both buffers are empty, before
    /// [`NotReady`](SegmentError::NotReady). Default 500 ms.
    pub max_wait: Duration,
    /// A segment used up faster than this doubles the next step (Leaf: 15 minutes).
    pub fast_segment: Duration,
    /// A segment lasting longer than this halves the next step, never below the table's
    /// step (Leaf: 30 minutes).
    pub slow_segment: Duration,
    /// The largest step the allocator grows to (Leaf: 1,000,000). A table step above it is
    /// used as it is.
    pub max_step: u64,
    /// The first retry after a failed fetch; each further failure doubles it. Default 50 ms.
    pub retry_min: Duration,
    /// The longest wait between retries. Default 5 s.
    pub retry_max: Duration,
}

impl Default for SegmentConfig {
    fn default() -> Self {
        SegmentConfig {
            prefetch_share: 0.1,
            max_wait: Duration::from_millis(500),
            fast_segment: Duration::from_secs(15 * 60),
            slow_segment: Duration::from_secs(30 * 60),
            max_step: 1_000_000,
            retry_min: Duration::from_millis(50),
            retry_max: Duration::from_secs(5),
        }
    }
}

impl SegmentConfig {
    /// Refuses settings that cannot work.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`], saying which setting and why.
    pub fn validate(&self) -> Result<(), SegmentError> {
        let bad = |detail: String| Err(SegmentError::InvalidConfig { detail });
        if !(self.prefetch_share > 0.0 && self.prefetch_share <= 1.0) {
            return bad(format!(
                "prefetch_share {} is outside (0, 1]",
                self.prefetch_share
            ));
        }
        if self.max_step == 0 || self.max_step > MAX_STEP {
            return bad(format!(
                "max_step {} is outside 1..=2^31 - 1",
                self.max_step
            ));
        }
        if self.fast_segment > self.slow_segment {
            return bad("fast_segment is longer than slow_segment".into());
        }
        if self.retry_min.is_zero() || self.retry_min > self.retry_max {
            return bad("retry_min must be above 0 and at most retry_max".into());
        }
        Ok(())
    }
}
