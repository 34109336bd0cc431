//! What a key reports: its runway, step, fetch state and event counts.

use crate::{Range, SegmentError};

/// What a key's status call shows.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyStatus {
    /// The key.
    pub key: String,
    /// The largest ID the key may issue.
    pub limit: u64,
    /// The unissued rest of the current segment.
    pub current: Range,
    /// The next segment, if it has been fetched.
    pub next: Option<Range>,
    /// IDs in memory: the rest of the current segment plus the next.
    pub runway_ids: u64,
    /// How long the runway lasts at the rate the last segment was used, if known.
    pub runway_secs: Option<f64>,
    /// The step of the latest fetch (adaptive).
    pub step: u64,
    /// Whether a fetch is in flight (or waiting to retry).
    pub fetching: bool,
    /// The latest fetch's error, until a fetch succeeds.
    pub last_error: Option<SegmentError>,
    /// Event counts since the key was opened.
    pub counters: Counters,
}

/// Slow-path events of one key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Segments fetched from the store (the first included).
    pub fetches: u64,
    /// Fetches that failed.
    pub fetch_failures: u64,
    /// Calls that found both buffers empty and had to wait or fail.
    pub waits: u64,
    /// Calls that got [`SegmentError::NotReady`].
    pub not_ready: u64,
    /// Calls that got the store's error because memory was empty.
    pub store_errors: u64,
    /// Segment switches.
    pub switches: u64,
}
