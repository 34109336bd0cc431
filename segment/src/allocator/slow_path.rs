//! A key's slow path, under its lock: switching to the next segment, asking the fetch
//! worker for one, and waiting for it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferroflake::ForkGuard;

use super::fetcher::Fetcher;
use super::status::{Counters, KeyStatus};
use crate::segment::{Advance, Buffers, Slow, Taken};
use crate::sync::Condvar;
use crate::{Range, SegmentConfig, SegmentError};

pub(super) struct KeyState {
    pub(super) key: String,
    pub(super) limit: u64,
    /// The allocator's, copied here so the hot path reads it without a pointer to chase.
    pub(super) fork_guard: ForkGuard,
    pub(super) buffers: Buffers<KeySlow>,
    pub(super) arrived: Condvar,
    pub(super) fetcher: Arc<Fetcher>,
}

/// The slow path's per-key state, under the key's lock.
pub(super) struct KeySlow {
    pub(super) fetching: bool,
    pub(super) hungry: bool,
    /// A failure that retrying cannot fix (the key's limit, a missing row).
    pub(super) permanent: bool,
    pub(super) failures: u32,
    pub(super) last_error: Option<SegmentError>,
    /// The end of the highest range the store has given this key: no later range may
    /// start below it.
    pub(super) high_water: u64,
    pub(super) step: u64,
    pub(super) min_step: u64,
    pub(super) last_fetch: Option<Instant>,
    pub(super) current_since: Instant,
    pub(super) rate_per_sec: Option<f64>,
    pub(super) counters: Counters,
}

/// Whether a caller that finds both buffers empty waits for the fetch in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// Up to [`SegmentConfig::max_wait`].
    Bounded,
    /// Not at all.
    Never,
}

/// What the slow path did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refilled {
    /// Take from the current segment again.
    TakeAgain,
    /// Both buffers are empty and the caller asked not to wait.
    WouldWait,
}

impl KeyState {
    fn config(&self) -> &SegmentConfig {
        &self.fetcher.config
    }

    /// Passes `taken` on, after asking for the next segment if it took the prefetch mark.
    #[inline]
    pub(super) fn issued(self: &Arc<Self>, taken: Taken) -> Taken {
        if taken.prefetch {
            self.prefetch();
        }
        taken
    }

    /// Asks for the next segment unless one is there or on its way.
    #[cold]
    fn prefetch(self: &Arc<Self>) {
        let mut slow = self.buffers.slow();
        if slow.closed || slow.next.is_some() {
            return;
        }
        self.start_fetch(&mut slow);
    }

    pub(super) fn start_fetch(self: &Arc<Self>, slow: &mut Slow<KeySlow>) {
        if slow.rest.fetching || slow.rest.permanent {
            return;
        }
        slow.rest.fetching = true;
        self.fetcher.enqueue(Arc::clone(self), Instant::now());
    }

    /// The slow path: switch to the next segment, or ask for one and wait as `wait` says.
    pub(super) fn refill(
        self: &Arc<Self>,
        waiting_since: &mut Option<Instant>,
        wait: Wait,
    ) -> Result<Refilled, SegmentError> {
        let mut slow = self.buffers.slow();
        loop {
            match self.buffers.advance(&mut slow) {
                Advance::Retry => return Ok(Refilled::TakeAgain),
                Advance::Closed => {
                    return Err(SegmentError::Closed {
                        key: self.key.clone(),
                    })
                }
                Advance::Switched(old) => {
                    let now = Instant::now();
                    let lasted = now.duration_since(slow.rest.current_since).as_secs_f64();
                    if !old.ids.is_empty() && lasted > 0.0 {
                        slow.rest.rate_per_sec = Some(old.ids.len() as f64 / lasted);
                    }
                    slow.rest.current_since = now;
                    slow.rest.counters.switches += 1;
                    return Ok(Refilled::TakeAgain);
                }
                Advance::Empty => {}
            }
            if waiting_since.is_none() {
                slow.rest.counters.waits += 1;
                // A caller had to wait: the next fetch doubles the step.
                slow.rest.hungry = true;
            }
            if slow.rest.permanent || (slow.rest.failures > 0 && slow.rest.last_error.is_some()) {
                // The store is failing (the worker retries) or the key cannot go on: say
                // so at once rather than make every caller wait.
                slow.rest.counters.store_errors += 1;
                let e = slow.rest.last_error.clone();
                return Err(e.unwrap_or_else(|| SegmentError::NotReady {
                    key: self.key.clone(),
                    waited: Duration::ZERO,
                }));
            }
            self.start_fetch(&mut slow);
            if wait == Wait::Never {
                return Ok(Refilled::WouldWait);
            }
            let since = *waiting_since.get_or_insert_with(Instant::now);
            let waited = since.elapsed();
            let max_wait = self.config().max_wait;
            if waited >= max_wait {
                slow.rest.counters.not_ready += 1;
                return Err(SegmentError::NotReady {
                    key: self.key.clone(),
                    waited,
                });
            }
            slow = match self.arrived.wait_timeout(slow, max_wait - waited) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Closes the key (see [`Buffers::seal`]) and wakes its waiters.
    pub(super) fn seal(&self) -> Option<(Range, u64)> {
        let sealed = self.buffers.seal();
        self.arrived.notify_all();
        sealed
    }

    pub(super) fn status(&self) -> KeyStatus {
        let slow = self.buffers.slow();
        let current = self.buffers.current_rest(&slow);
        let next = slow.next.map(|n| n.ids);
        let runway_ids = current.len() + next.map_or(0, |n| n.len());
        KeyStatus {
            key: self.key.clone(),
            limit: self.limit,
            current,
            next,
            runway_ids,
            runway_secs: slow.rest.rate_per_sec.map(|rate| runway_ids as f64 / rate),
            step: slow.rest.step,
            fetching: slow.rest.fetching,
            last_error: slow.rest.last_error.clone(),
            counters: slow.rest.counters,
        }
    }
}
