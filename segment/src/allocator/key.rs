//! A key's handle and its hot path: an ID from the current segment without a lock, and the
//! slow path only when that segment is used up.

use std::sync::Arc;
use std::time::Duration;

use ferroflake::ForkGuard;

use super::slow_path::{KeyState, Refilled, Wait};
use super::status::KeyStatus;
use crate::config::MAX_BATCH;
use crate::{Range, SegmentError};

/// A key's IDs. Cheap to clone; each clone issues from the same segments.
#[derive(Clone)]
pub struct KeyHandle {
    pub(super) state: Arc<KeyState>,
}

impl KeyHandle {
    /// The next ID of the key.
    ///
    /// # Errors
    /// [`SegmentError::NotReady`] if both buffers stayed empty for
    /// [`SegmentConfig::max_wait`](crate::SegmentConfig::max_wait); the store's error if it
    /// is failing and memory is empty; [`SegmentError::Exhausted`] at the key's limit;
    /// [`SegmentError::Closed`] after shutdown; [`SegmentError::Forked`] in a process forked
    /// from the one the allocator was made in. Nothing is issued on an error; calling again
    /// is safe.
    #[inline]
    pub fn next_id(&self) -> Result<u64, SegmentError> {
        self.check_fork()?;
        match self.state.buffers.take(1) {
            Some(taken) => Ok(self.state.issued(taken).first),
            // A bounded wait ends in an ID or an error, never in "would wait".
            None => self
                .next_id_slow(Wait::Bounded)?
                .ok_or_else(|| SegmentError::NotReady {
                    key: self.state.key.clone(),
                    waited: Duration::ZERO,
                }),
        }
    }

    /// [`next_id`](Self::next_id) that never blocks: `Ok(None)` where `next_id` would wait
    /// for the fetch in flight (both buffers empty; the fetch has been asked for). For
    /// callers that must not block, such as an async executor's worker, which can then
    /// call `next_id` where blocking is allowed.
    ///
    /// # Errors
    /// As [`next_id`](Self::next_id), except [`SegmentError::NotReady`].
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<u64>, SegmentError> {
        self.check_fork()?;
        match self.state.buffers.take(1) {
            Some(taken) => Ok(Some(self.state.issued(taken).first)),
            None => self.next_id_slow(Wait::Never),
        }
    }

    /// Switches segments or waits as `wait` says until an ID can be taken; `Ok(None)`
    /// where waiting was not allowed.
    #[cold]
    fn next_id_slow(&self, wait: Wait) -> Result<Option<u64>, SegmentError> {
        let mut waiting_since = None;
        loop {
            if self.state.refill(&mut waiting_since, wait)? == Refilled::WouldWait {
                return Ok(None);
            }
            if let Some(taken) = self.state.buffers.take(1) {
                return Ok(Some(self.state.issued(taken).first));
            }
        }
    }

    /// `n` IDs (1 to [`MAX_BATCH`]) at once, as increasing ranges (more than one if the
    /// batch spans segments).
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] for `n` outside 1..=2^32; otherwise as
    /// [`next_id`](Self::next_id). On an error the IDs already taken for the batch are
    /// dropped, never issued again.
    pub fn next_ids(&self, n: u64) -> Result<Vec<Range>, SegmentError> {
        self.check_fork()?;
        if n == 0 || n > MAX_BATCH {
            return Err(SegmentError::InvalidConfig {
                detail: format!("a batch of {n} IDs is outside 1..=2^32"),
            });
        }
        let mut ranges: Vec<Range> = Vec::new();
        let mut left = n;
        let mut waiting_since = None;
        while left > 0 {
            let Some(taken) = self.state.buffers.take_batch(left) else {
                self.state.refill(&mut waiting_since, Wait::Bounded)?;
                continue;
            };
            let taken = self.state.issued(taken);
            let range = Range {
                start: taken.first,
                end: taken.first + taken.count,
            };
            match ranges.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                _ => ranges.push(range),
            }
            left -= taken.count;
        }
        Ok(ranges)
    }

    /// [`SegmentError::Forked`] in a process forked from the one the allocator was made
    /// in, as [`SegmentAllocator::check_fork`](crate::SegmentAllocator::check_fork); check
    /// it before [`status`](Self::status) there.
    ///
    /// # Errors
    /// [`SegmentError::Forked`].
    #[inline]
    pub fn check_fork(&self) -> Result<(), SegmentError> {
        if self.state.fork_guard.is_forked() {
            return Err(forked(&self.state.fork_guard));
        }
        Ok(())
    }

    /// The key's runway, step, fetch state and counters. It takes the key's lock, which
    /// in a forked child the parent's fetch worker may have held at the fork: check
    /// [`check_fork`](Self::check_fork) first there.
    pub fn status(&self) -> KeyStatus {
        self.state.status()
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.state.key
    }

    /// Lets a key stopped by [`SegmentError::Rewound`] fetch again, once an operator has
    /// raised its row above every ID it issued (the store's `recover`). The check that
    /// stopped it stays: a range that still starts below what this key received stops it
    /// again. Returns whether the key was stopped by `Rewound`; any other stop stays.
    pub fn resume_after_rewind(&self) -> bool {
        let mut slow = self.state.buffers.slow();
        let rewound = matches!(slow.rest.last_error, Some(SegmentError::Rewound { .. }));
        if !(slow.rest.permanent && rewound) || slow.closed {
            return false;
        }
        slow.rest.permanent = false;
        slow.rest.last_error = None;
        slow.rest.failures = 0;
        self.state.start_fetch(&mut slow);
        true
    }
}

/// [`SegmentError::Forked`] for an allocator made under `guard`.
#[cold]
pub(super) fn forked(guard: &ForkGuard) -> SegmentError {
    SegmentError::Forked {
        made_in_pid: guard.made_in_pid(),
        pid: std::process::id(),
    }
}
