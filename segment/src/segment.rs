//! One key's IDs in memory: a cursor and the current segment's bounds, which the hot path
//! reads, and the double buffer, which the slow path keeps.
//!
//! The cursor is the next ID itself. A call reads the bounds, takes IDs with one
//! `fetch_add` on the cursor, and keeps them if they lie within the bounds. A switch (under
//! the slow-path lock, once the cursor has passed the end) resets the cursor to the new
//! segment's start, then publishes the new bounds. Two rules make that safe without a lock
//! or a pointer to chase:
//!
//! - **The bounds are read as a pair or as nothing.** A switch writes `start` and `mark`,
//!   then `end` (release); a caller reads `end` (acquire), then `start` and `mark`. A caller
//!   sees one segment's pair, or a newer `start` with an older `end`, which is empty because
//!   segments only go up. So a value inside the bounds lies inside a segment this key owns.
//! - **A value is checked against bounds no newer than its cursor.** A caller that sees the
//!   new `end` increments after the reset (the release and acquire on `end` order them), so
//!   an increment from before the reset, which overshot the old segment, is only ever checked
//!   against the old bounds, where it fails. The reset may hand the same value out again,
//!   to a caller that sees the new bounds.
//!
//! A caller that read the old bounds and increments just after the reset burns one ID of
//! the new segment (it fails against the old bounds and takes again): a gap, never a
//! duplicate. Increments that overshoot a used-up segment (callers waiting for a fetch,
//! or failing through a store outage) cost nothing: the reset takes them back.
//!
//! Leaf instead refills its two slots in place and takes a read-write lock on every call to
//! keep late increments out of a refilled slot.

use crossbeam_utils::CachePadded;

use crate::sync::{lock, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::Range;

/// The cursor of a sealed key: above every ID a key can issue (2^63 - 1 at most), with 2^63
/// of room below `u64::MAX` for the increments still in flight.
const SEALED: u64 = 1 << 63;

/// IDs taken by one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    pub first: u64,
    pub count: u64,
    /// This call took the segment's prefetch mark: it asks for the next segment (exactly
    /// one call per segment does).
    pub prefetch: bool,
}

/// A range handed out from memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The IDs this segment issues (clipped to the key's limit).
    pub ids: Range,
    /// The `max_id` the table held after the allocation (the give-back's expectation).
    pub table_end: u64,
    /// The ID whose taker asks for the next segment.
    pub mark: u64,
}

impl Segment {
    pub(crate) fn new(ids: Range, table_end: u64, prefetch_share: f64) -> Self {
        let len = ids.len();
        let offset = ((len as f64) * prefetch_share) as u64;
        Segment {
            ids,
            table_end,
            mark: ids.start + offset.min(len.saturating_sub(1)),
        }
    }
}

/// The current segment's bounds, as the hot path reads them (see the module docs).
struct Bounds {
    start: AtomicU64,
    mark: AtomicU64,
    end: AtomicU64,
}

impl Bounds {
    /// The IDs of `first..first + n` that these bounds hold, if `first` is one of them.
    #[inline]
    fn take(start: u64, mark: u64, end: u64, first: u64, n: u64) -> Option<Taken> {
        if first < start || first >= end {
            return None;
        }
        let count = n.min(end - first);
        Some(Taken {
            first,
            count,
            prefetch: first <= mark && mark < first + count,
        })
    }
}

/// What the slow path found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advance {
    /// The current segment has IDs (again): take from it.
    Retry,
    /// The next segment became current; this is the one switched out. Take again.
    Switched(Segment),
    /// Both buffers are empty.
    Empty,
    /// The key is closed.
    Closed,
}

/// The IDs of one key: the cursor and the bounds the hot path reads (each on its own cache
/// line: the cursor is written by every call, the bounds only by a switch), and the slow
/// path's state behind a lock, with whatever else the slow path keeps (`S`).
pub(crate) struct Buffers<S> {
    cursor: CachePadded<AtomicU64>,
    bounds: CachePadded<Bounds>,
    slow: Mutex<Slow<S>>,
}

/// The slow path's state.
pub(crate) struct Slow<S> {
    /// The segment the bounds show.
    pub current: Segment,
    pub next: Option<Segment>,
    pub closed: bool,
    pub rest: S,
}

impl<S> Buffers<S> {
    pub(crate) fn new(current: Segment, rest: S) -> Self {
        Buffers {
            cursor: CachePadded::new(AtomicU64::new(current.ids.start)),
            bounds: CachePadded::new(Bounds {
                start: AtomicU64::new(current.ids.start),
                mark: AtomicU64::new(current.mark),
                end: AtomicU64::new(current.ids.end),
            }),
            slow: Mutex::new(Slow {
                current,
                next: None,
                closed: false,
                rest,
            }),
        }
    }

    /// The hot path: three loads of the bounds, one `fetch_add`, a bounds check. Up to `n`
    /// IDs (fewer at the end of the segment), or `None`: take the slow path.
    #[inline]
    pub(crate) fn take(&self, n: u64) -> Option<Taken> {
        let end = self.bounds.end.load(Ordering::Acquire);
        let start = self.bounds.start.load(Ordering::Relaxed);
        let mark = self.bounds.mark.load(Ordering::Relaxed);
        let first = self.advance_cursor(n);
        Bounds::take(start, mark, end, first, n)
    }

    /// The hot path for batches: a batch first checks that the segment has room, so that
    /// a used-up segment sees at most one large increment per caller in flight.
    pub(crate) fn take_batch(&self, n: u64) -> Option<Taken> {
        let end = self.bounds.end.load(Ordering::Acquire);
        if self.cursor.load(Ordering::Relaxed) >= end {
            return None;
        }
        self.take(n)
    }

    #[cfg(not(ferroflake_loom_mutant))]
    #[inline]
    fn advance_cursor(&self, n: u64) -> u64 {
        self.cursor.fetch_add(n, Ordering::Relaxed)
    }

    /// The mutant the loom model must catch: a read and a write in place of the increment.
    #[cfg(ferroflake_loom_mutant)]
    fn advance_cursor(&self, n: u64) -> u64 {
        let first = self.cursor.load(Ordering::Relaxed);
        self.cursor.store(first + n, Ordering::Relaxed);
        first
    }

    pub(crate) fn slow(&self) -> MutexGuard<'_, Slow<S>> {
        lock(&self.slow)
    }

    /// The unissued rest of the current segment (callers in flight may still take some).
    pub(crate) fn current_rest(&self, slow: &Slow<S>) -> Range {
        let ids = slow.current.ids;
        let cursor = self.cursor.load(Ordering::Relaxed);
        Range {
            start: cursor.clamp(ids.start, ids.end),
            end: ids.end,
        }
    }

    /// Closes the key: stops the cursor and drops the next segment. Returns the unissued
    /// rest to give back and the `max_id` the table should still hold (the end of the
    /// latest allocation), or `None` if the key was closed already.
    pub(crate) fn seal(&self) -> Option<(Range, u64)> {
        let mut slow = self.slow();
        if slow.closed {
            return None;
        }
        slow.closed = true; // from here on the slow path switches nothing in
                            // Every ID of the current segment issued, now or by a caller still in flight, is
                            // below the cursor as it was; every later increment lands at SEALED or above.
        let taken_to = self.cursor.swap(SEALED, Ordering::Relaxed);
        let current = slow.current;
        let next = slow.next.take();
        drop(slow);
        let current_rest = taken_to.clamp(current.ids.start, current.ids.end);
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

    /// Under the slow-path lock: switches the next segment in once the current one is used
    /// up.
    pub(crate) fn advance(&self, slow: &mut Slow<S>) -> Advance {
        if slow.closed {
            return Advance::Closed;
        }
        if self.cursor.load(Ordering::Relaxed) < slow.current.ids.end {
            return Advance::Retry;
        }
        match slow.next.take() {
            Some(next) => {
                let old = std::mem::replace(&mut slow.current, next);
                self.publish(&next);
                Advance::Switched(old)
            }
            None => Advance::Empty,
        }
    }

    /// Makes `next` the segment the hot path reads.
    #[cfg(not(ferroflake_loom_mutant_switch))]
    fn publish(&self, next: &Segment) {
        // The cursor first: a caller that sees the new `end` increments after the reset.
        // A swap rather than a store: a read-modify-write, ordered among the increments as
        // they are among themselves. With a plain relaxed store the loom model reports
        // duplicate IDs.
        self.cursor.swap(next.ids.start, Ordering::Relaxed);
        self.publish_bounds(next);
    }

    /// The mutant the loom model must catch: the bounds go out before the cursor is reset,
    /// so a value that overshot the old segment can pass the new bounds and then be handed
    /// out again after the reset.
    #[cfg(ferroflake_loom_mutant_switch)]
    fn publish(&self, next: &Segment) {
        self.publish_bounds(next);
        self.cursor.swap(next.ids.start, Ordering::Relaxed);
    }

    fn publish_bounds(&self, next: &Segment) {
        self.bounds.start.store(next.ids.start, Ordering::Relaxed);
        self.bounds.mark.store(next.mark, Ordering::Relaxed);
        self.bounds.end.store(next.ids.end, Ordering::Release);
    }
}
