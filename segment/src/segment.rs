//! One segment, and the per-key pair of buffers the hot path reads.
//!
//! A [`Segment`] is a range fixed when it is made; only its cursor moves, and only up. IDs
//! are taken with one `fetch_add` and a bounds check. A thread still holding an old segment
//! increments the old segment's cursor and fails the bounds check: segments are never
//! refilled in place (Leaf's ring reuses its two slots and needs a read-write lock around
//! every call to keep late increments out of a refilled slot), so a stale increment can never
//! land in a newer range.

use std::sync::Arc;

use crate::sync::{lock, AtomicU64, Mutex, MutexGuard, Ordering, SegmentPtr};
use crate::Range;

/// The cursor value of a sealed segment: far above any length, far below `u64::MAX`, so the
/// increments that can still arrive (one per caller in flight, each at most
/// [`MAX_BATCH`](crate::MAX_BATCH)) cannot wrap it.
const SEALED: u64 = 1 << 62;

/// IDs taken from one segment by one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    pub first: u64,
    pub count: u64,
    /// This call took the segment's prefetch mark: it asks for the next segment (exactly
    /// one call per segment does).
    pub prefetch: bool,
}

/// A range handed out from memory.
#[derive(Debug)]
pub(crate) struct Segment {
    /// The IDs this segment issues (clipped to the key's limit).
    pub ids: Range,
    /// The `max_id` the table held after the allocation (the give-back's expectation).
    pub table_end: u64,
    /// The offset whose taker asks for the next segment.
    prefetch_at: u64,
    /// The offset of the next ID; only grows.
    cursor: AtomicU64,
}

impl Segment {
    pub(crate) fn new(ids: Range, table_end: u64, prefetch_share: f64) -> Self {
        let len = ids.len();
        let mark = ((len as f64) * prefetch_share) as u64;
        Segment {
            ids,
            table_end,
            prefetch_at: mark.min(len.saturating_sub(1)),
            cursor: AtomicU64::new(0),
        }
    }

    /// Takes up to `n` IDs (fewer at the end of the segment), or `None` if it has none left.
    #[inline]
    pub(crate) fn take(&self, n: u64) -> Option<Taken> {
        let offset = self.advance(n);
        let len = self.ids.len();
        if offset >= len {
            return None;
        }
        let count = n.min(len - offset);
        Some(Taken {
            first: self.ids.start + offset,
            count,
            prefetch: offset <= self.prefetch_at && self.prefetch_at < offset + count,
        })
    }

    #[cfg(not(ferroflake_loom_mutant))]
    #[inline]
    fn advance(&self, n: u64) -> u64 {
        self.cursor.fetch_add(n, Ordering::Relaxed)
    }

    /// The mutant the loom model must catch: a read and a write in place of the increment.
    #[cfg(ferroflake_loom_mutant)]
    fn advance(&self, n: u64) -> u64 {
        let offset = self.cursor.load(Ordering::Relaxed);
        self.cursor.store(offset + n, Ordering::Relaxed);
        offset
    }

    /// IDs not yet taken.
    pub(crate) fn remaining(&self) -> u64 {
        self.ids
            .len()
            .saturating_sub(self.cursor.load(Ordering::Relaxed))
    }

    /// Stops the segment: every later take fails. Returns how many IDs were taken before.
    pub(crate) fn seal(&self) -> u64 {
        self.cursor
            .swap(SEALED, Ordering::Relaxed)
            .min(self.ids.len())
    }
}

/// What the slow path found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advance {
    /// The current segment has IDs (again): take from it.
    Retry,
    /// The next segment became current: take from it (and ask for another).
    Switched,
    /// Both buffers are empty.
    Empty,
    /// The key is closed.
    Closed,
}

/// The double buffer of one key: the current segment behind an atomic pointer (read
/// without locking) and the next one under the slow-path lock, with whatever else the slow
/// path keeps (`S`).
pub(crate) struct Buffers<S> {
    current: SegmentPtr<Segment>,
    slow: Mutex<Slow<S>>,
}

/// The slow path's state.
pub(crate) struct Slow<S> {
    pub next: Option<Arc<Segment>>,
    pub closed: bool,
    pub rest: S,
}

impl<S> Buffers<S> {
    pub(crate) fn new(current: Segment, rest: S) -> Self {
        Buffers {
            current: SegmentPtr::new(Arc::new(current)),
            slow: Mutex::new(Slow {
                next: None,
                closed: false,
                rest,
            }),
        }
    }

    /// The hot path: one pointer load, one increment, one bounds check.
    #[inline]
    pub(crate) fn take(&self, n: u64) -> Option<Taken> {
        self.current.load().take(n)
    }

    /// The hot path for batches: a batch first checks that the segment has room, so that
    /// an exhausted segment sees at most one increment per caller in flight.
    pub(crate) fn take_batch(&self, n: u64) -> Option<Taken> {
        let current = self.current.load();
        if current.remaining() == 0 {
            return None;
        }
        current.take(n)
    }

    pub(crate) fn slow(&self) -> MutexGuard<'_, Slow<S>> {
        lock(&self.slow)
    }

    pub(crate) fn current(&self) -> Arc<Segment> {
        Arc::clone(&self.current.load())
    }

    /// Closes the key: seals the current segment and drops the next. Returns the unissued
    /// rest to give back and the `max_id` the table should still hold (the end of the
    /// latest allocation), or `None` if the key was closed already.
    pub(crate) fn seal(&self) -> Option<(Range, u64)> {
        let mut slow = self.slow();
        if slow.closed {
            return None;
        }
        slow.closed = true; // from here on the slow path switches nothing in
        let current = self.current();
        let taken = current.seal();
        let next = slow.next.take();
        drop(slow);
        let current_rest = current.ids.start + taken;
        let (start, expected) = match next {
            // Contiguous: the current segment's rest joins the next one's.
            Some(n) if n.ids.start == current.table_end => (current_rest, n.table_end),
            Some(n) => (n.ids.start, n.table_end),
            None => (current_rest, current.table_end),
        };
        Some((
            Range {
                start: start.min(expected),
                end: expected,
            },
            expected,
        ))
    }

    /// Under the slow-path lock: moves the next segment in if the current one is used up.
    pub(crate) fn advance(&self, slow: &mut Slow<S>) -> Advance {
        if slow.closed {
            return Advance::Closed;
        }
        if self.current.load().remaining() > 0 {
            return Advance::Retry;
        }
        match slow.next.take() {
            Some(next) => {
                self.current.store(next);
                Advance::Switched
            }
            None => Advance::Empty,
        }
    }
}
