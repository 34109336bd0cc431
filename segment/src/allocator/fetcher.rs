//! The fetch worker: one thread per allocator that takes each key's next segment from the
//! store, checks it, and retries a failing store with backoff.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::slow_path::KeyState;
use super::step::next_step;
use crate::segment::Segment;
use crate::sync::{lock, Condvar, Mutex};
use crate::{Allocation, Range, SegmentConfig, SegmentError, SegmentStore};

pub(super) struct Fetcher {
    pub(super) store: Arc<dyn SegmentStore>,
    pub(super) config: SegmentConfig,
    pub(super) queue: Mutex<Queue>,
    pub(super) wake: Condvar,
}

#[derive(Default)]
pub(super) struct Queue {
    pub(super) jobs: Vec<(Instant, Arc<KeyState>)>,
    pub(super) stop: bool,
}

impl Fetcher {
    pub(super) fn enqueue(&self, key: Arc<KeyState>, at: Instant) {
        let mut queue = lock(&self.queue);
        if queue.stop {
            return;
        }
        queue.jobs.push((at, key));
        drop(queue);
        self.wake.notify_one();
    }

    /// The worker: fetches each due key, in order of due time, until stopped.
    pub(super) fn run(&self) {
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                loop {
                    if queue.stop {
                        return;
                    }
                    let now = Instant::now();
                    let soonest = queue
                        .jobs
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, (at, _))| *at)
                        .map(|(i, (at, _))| (i, *at));
                    match soonest {
                        Some((i, at)) if at <= now => break queue.jobs.swap_remove(i).1,
                        Some((_, at)) => {
                            queue = match self.wake.wait_timeout(queue, at - now) {
                                Ok((guard, _)) => guard,
                                Err(poisoned) => poisoned.into_inner().0,
                            };
                        }
                        None => {
                            queue = self
                                .wake
                                .wait(queue)
                                .unwrap_or_else(std::sync::PoisonError::into_inner);
                        }
                    }
                }
            };
            self.fetch(&job);
        }
    }

    fn fetch(&self, state: &Arc<KeyState>) {
        let step = {
            let mut slow = state.buffers.slow();
            if slow.closed {
                return;
            }
            let rest = &slow.rest;
            let lasted = rest.last_fetch.map(|t| t.elapsed());
            let step = next_step(rest.step, rest.min_step, lasted, rest.hungry, &self.config);
            slow.rest.hungry = false;
            step
        };
        let result = self.store.allocate(&state.key, step);
        let mut slow = state.buffers.slow();
        let now = Instant::now();
        let high_water = slow.rest.high_water;
        let result = result
            .map_err(|e| self.row_lost(&state.key, high_water, e))
            .and_then(|a| self.not_rewound(&state.key, high_water, a))
            .and_then(|a| {
                clip(&state.key, a.range, state.limit, &self.config)
                    .map(|s| (a.table_step, a.range.end, s))
            });
        match result {
            Ok((table_step, end, segment)) => {
                slow.next = Some(segment);
                let rest = &mut slow.rest;
                rest.high_water = end;
                rest.fetching = false;
                rest.failures = 0;
                rest.last_error = None;
                rest.step = step;
                rest.min_step = table_step.max(1);
                rest.last_fetch = Some(now);
                rest.counters.fetches += 1;
            }
            Err(e) => {
                let rest = &mut slow.rest;
                rest.counters.fetch_failures += 1;
                let retry = matches!(
                    e,
                    SegmentError::Unavailable { .. } | SegmentError::Store { .. }
                );
                rest.last_error = Some(e);
                if retry {
                    rest.failures = rest.failures.saturating_add(1);
                    let delay = backoff(&self.config, rest.failures);
                    // Still "fetching": the retry is this key's one fetch in flight.
                    self.enqueue(Arc::clone(state), now + delay);
                } else {
                    rest.permanent = true;
                    rest.fetching = false;
                }
            }
        }
        drop(slow);
        state.arrived.notify_all();
    }

    /// A key that has issued IDs and then has no row lost it (a flushed or restored store,
    /// a deleted row): recreating it at its old start would issue those IDs again, so this
    /// is [`SegmentError::Rewound`], not the `UnknownKey` of a key never created.
    fn row_lost(&self, key: &str, high_water: u64, e: SegmentError) -> SegmentError {
        match e {
            SegmentError::UnknownKey { .. } => SegmentError::Rewound {
                store: self.store.name().into(),
                key: key.into(),
                detail: format!(
                    "the key's row is gone, after this allocator had received IDs up to {}",
                    high_water.saturating_sub(1)
                ),
            },
            other => other,
        }
    }

    /// Refuses a range that starts below the end of one the key already received.
    fn not_rewound(
        &self,
        key: &str,
        high_water: u64,
        allocation: Allocation,
    ) -> Result<Allocation, SegmentError> {
        if allocation.range.start >= high_water {
            return Ok(allocation);
        }
        Err(SegmentError::Rewound {
            store: self.store.name().into(),
            key: key.into(),
            detail: format!(
                "it handed out {}..{}, but this allocator had already received IDs up to {}",
                allocation.range.start,
                allocation.range.end,
                high_water - 1
            ),
        })
    }
}

/// The wait before retry number `failures`: doubling from `retry_min` up to `retry_max`,
/// then shortened at random ([`ferroflake::shortened_at_random`]).
fn backoff(config: &SegmentConfig, failures: u32) -> Duration {
    let doubled = config
        .retry_min
        .saturating_mul(1 << failures.saturating_sub(1).min(20));
    let delay = doubled.min(config.retry_max);
    ferroflake::shortened_at_random(delay, getrandom::u32().unwrap_or(0))
}

/// The segment for an allocated range, cut at the key's limit.
pub(super) fn clip(
    key: &str,
    range: Range,
    limit: u64,
    config: &SegmentConfig,
) -> Result<Segment, SegmentError> {
    if range.start > limit {
        return Err(SegmentError::Exhausted {
            key: key.into(),
            limit,
        });
    }
    let ids = Range {
        start: range.start,
        end: range.end.min(limit + 1),
    };
    Ok(Segment::new(ids, range.end, config.prefetch_share))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_bounds_with_jitter() {
        let config = SegmentConfig {
            retry_min: Duration::from_millis(100),
            retry_max: Duration::from_millis(1000),
            ..SegmentConfig::default()
        };
        for (failures, full) in [(1, 100), (2, 200), (4, 800), (5, 1000), (60, 1000)] {
            let d = backoff(&config, failures).as_millis() as u64;
            assert!(
                d <= full && d >= full * 8 / 10,
                "{failures} failures: {d} ms"
            );
        }
    }
}
