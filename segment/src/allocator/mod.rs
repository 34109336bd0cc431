//! The allocator: per-key handles that issue IDs from memory, and one background worker that
//! fetches the next segment of each key before the current one runs out.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ferroflake::ForkGuard;

use crate::config::{LIMIT_I64, MAX_BATCH};
use crate::segment::{Advance, Buffers, Segment, Slow, Taken};
use crate::store::check_key;
use crate::sync::{lock, Condvar, Mutex};
use crate::{Allocation, Range, SegmentConfig, SegmentError, SegmentStore};

/// Hands out IDs per key from segments of a [`SegmentStore`].
///
/// Guarantees:
///
/// - **Unique**: every ID of a key is issued at most once, across the threads of this
///   allocator and across every allocator (in any process, Leaf servers included) sharing
///   the store's table: each range is owned by the one allocation that returned it, and a
///   switch resets the key's cursor before it publishes the new segment's bounds, so an
///   increment that overshot an old segment is never checked against a newer one.
/// - **Increasing per thread**: the IDs one thread gets from one handle increase (segments
///   are installed in the order they were allocated, and allocations increase). Across
///   threads they are unique but interleave.
/// - **Lock-free hot path**: [`KeyHandle::next_id`] is one relaxed load of the fork count
///   (see below), three plain loads of the current segment's bounds, one `fetch_add` and a
///   bounds check; no map lookup, no lock, no pointer to chase. A caller that races a switch may burn one ID (a gap, never a
///   duplicate). Locks are taken only to switch
///   segments, ask for a fetch, wait, or read the status.
/// - **Prefetch**: once [`SegmentConfig::prefetch_share`] of a segment is taken, the next is
///   fetched in the background; at most one fetch per key is in flight.
/// - **Bounded waits**: with both buffers empty a caller waits at most
///   [`SegmentConfig::max_wait`] for the fetch in flight, then gets
///   [`SegmentError::NotReady`]. With the store down, IDs in memory are still issued; once
///   they are gone callers get the store's error at once, while the worker retries with
///   backoff and jitter and the key recovers by itself when the store answers again.
/// - **No wrap**: a key never issues above its limit ([`LIMIT_I64`] by default); past it,
///   [`SegmentError::Exhausted`].
/// - **Fails closed when the store goes back**: each key remembers the end of the highest
///   range it has received. A later range that starts below it (a restored backup, a
///   failover that lost writes, a row lowered by hand), or a row that vanished after the
///   key issued from it, stops the key with [`SegmentError::Rewound`]: nothing from that
///   range is issued, and it is not retried (the IDs already in memory are still issued;
///   they were not handed out before). The check sits in the background fetch, off the
///   hot path.
/// - **Less waste**: [`shutdown`](Self::shutdown) gives the unissued rest back to the table
///   only if nobody allocated after us (a conditional update); otherwise it is dropped.
/// - **Refused after `fork()`**: a child inherits the parent's ranges in memory while the
///   parent goes on issuing them, so in a forked child every call that issues, opens a key
///   or reads the store gets [`SegmentError::Forked`] (one relaxed load per call, see
///   [`ForkGuard`]), and [`shutdown`](Self::shutdown) and drop give nothing back and leave
///   the fetch worker (a thread of the parent's, not copied) alone. The child makes an
///   allocator of its own.
pub struct SegmentAllocator {
    fetcher: Arc<Fetcher>,
    keys: Mutex<HashMap<String, Arc<KeyState>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    fork_guard: ForkGuard,
}

/// A key's IDs. Cheap to clone; each clone issues from the same segments.
#[derive(Clone)]
pub struct KeyHandle {
    state: Arc<KeyState>,
}

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

/// What [`SegmentAllocator::shutdown`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// IDs given back to the table.
    pub given_back: u64,
    /// Keys whose rest was dropped because someone allocated after us.
    pub refused: Vec<String>,
    /// Keys whose give-back failed, with the error.
    pub failed: Vec<(String, SegmentError)>,
}

struct KeyState {
    key: String,
    limit: u64,
    /// The allocator's, copied here so the hot path reads it without a pointer to chase.
    fork_guard: ForkGuard,
    buffers: Buffers<KeySlow>,
    arrived: Condvar,
    fetcher: Arc<Fetcher>,
}

/// The slow path's per-key state, under the key's lock.
struct KeySlow {
    fetching: bool,
    hungry: bool,
    /// A failure that retrying cannot fix (the key's limit, a missing row).
    permanent: bool,
    failures: u32,
    last_error: Option<SegmentError>,
    /// The end of the highest range the store has given this key: no later range may
    /// start below it.
    high_water: u64,
    step: u64,
    min_step: u64,
    last_fetch: Option<Instant>,
    current_since: Instant,
    rate_per_sec: Option<f64>,
    counters: Counters,
}

/// Whether a caller that finds both buffers empty waits for the fetch in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Up to [`SegmentConfig::max_wait`].
    Bounded,
    /// Not at all.
    Never,
}

/// What the slow path did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refilled {
    /// Take from the current segment again.
    TakeAgain,
    /// Both buffers are empty and the caller asked not to wait.
    WouldWait,
}

struct Fetcher {
    store: Arc<dyn SegmentStore>,
    config: SegmentConfig,
    queue: Mutex<Queue>,
    wake: Condvar,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<(Instant, Arc<KeyState>)>,
    stop: bool,
}

impl SegmentAllocator {
    /// An allocator over `store`, with its fetch worker started.
    ///
    /// One worker thread per allocator, not per key: the thread count stays fixed however
    /// many keys are open, and fetches are rare (one per segment), so serialising them
    /// costs little. A slow store call for one key delays the others' fetches, which the
    /// prefetch margin (90% of a segment by default) absorbs.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] for what [`SegmentConfig::validate`] refuses.
    pub fn new(store: Arc<dyn SegmentStore>, config: SegmentConfig) -> Result<Self, SegmentError> {
        config.validate()?;
        let fetcher = Arc::new(Fetcher {
            store,
            config,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        });
        let worker = {
            let fetcher = Arc::clone(&fetcher);
            std::thread::Builder::new()
                .name("ferroflake-segment".into())
                .spawn(move || fetcher.run())
                .map_err(|e| SegmentError::InvalidConfig {
                    detail: format!("cannot start the fetch worker: {e}"),
                })?
        };
        Ok(SegmentAllocator {
            fetcher,
            keys: Mutex::new(HashMap::new()),
            worker: Mutex::new(Some(worker)),
            fork_guard: ForkGuard::here(),
        })
    }

    /// The handle of `key`, with IDs up to [`LIMIT_I64`]. The first call per key loads its
    /// first segment from the store (synchronously); later calls return the same handle.
    ///
    /// # Errors
    /// [`SegmentError::InvalidKey`]; [`SegmentError::UnknownKey`] if the table has no row
    /// for it; the store's errors.
    pub fn key(&self, key: &str) -> Result<KeyHandle, SegmentError> {
        self.key_with_limit(key, LIMIT_I64)
    }

    /// [`key`](Self::key) with IDs up to `limit` (e.g. [`LIMIT_JS`](crate::LIMIT_JS)).
    ///
    /// # Errors
    /// As [`key`](Self::key), and [`SegmentError::InvalidConfig`] if the key is already
    /// open with another limit or `limit` is above [`LIMIT_I64`].
    pub fn key_with_limit(&self, key: &str, limit: u64) -> Result<KeyHandle, SegmentError> {
        self.check_fork()?;
        check_key(key)?;
        if limit > LIMIT_I64 {
            return Err(SegmentError::InvalidConfig {
                detail: format!("limit {limit} is above 2^63 - 1"),
            });
        }
        let mut keys = lock(&self.keys);
        if let Some(state) = keys.get(key) {
            if state.limit != limit {
                return Err(SegmentError::InvalidConfig {
                    detail: format!(
                        "key {key:?} is open with limit {}, asked for {limit}",
                        state.limit
                    ),
                });
            }
            return Ok(KeyHandle {
                state: Arc::clone(state),
            });
        }
        // After shutdown no key opens: its first segment would be issued with no fetch
        // worker behind it and never given back. Checked under the keys' lock, which
        // `close` takes after it sets `stop`, so a key opened first is sealed by it.
        if lock(&self.fetcher.queue).stop {
            return Err(SegmentError::Closed { key: key.into() });
        }
        let store = &self.fetcher.store;
        let record = store
            .peek(key)?
            .ok_or_else(|| SegmentError::UnknownKey { key: key.into() })?;
        let allocation = store.allocate(key, record.step)?;
        let first = clip(key, allocation.range, limit, &self.fetcher.config)?;
        let now = Instant::now();
        let state = Arc::new(KeyState {
            key: key.into(),
            limit,
            fork_guard: self.fork_guard,
            buffers: Buffers::new(
                first,
                KeySlow {
                    fetching: false,
                    hungry: false,
                    permanent: false,
                    failures: 0,
                    last_error: None,
                    high_water: allocation.range.end,
                    step: record.step,
                    min_step: allocation.table_step.max(1),
                    last_fetch: None,
                    current_since: now,
                    rate_per_sec: None,
                    counters: Counters {
                        fetches: 1,
                        ..Counters::default()
                    },
                },
            ),
            arrived: Condvar::new(),
            fetcher: Arc::clone(&self.fetcher),
        });
        keys.insert(key.into(), Arc::clone(&state));
        Ok(KeyHandle { state })
    }

    /// [`key_with_limit`](Self::key_with_limit), first creating the key with `start` and
    /// `step` if the table has no row for it (per-day keys, for example). A create that
    /// races another allocator's, in this process or another, is not an error: whoever
    /// made the row, each range comes from one atomic update, so no ID is issued twice.
    ///
    /// # Errors
    /// As [`key_with_limit`](Self::key_with_limit), and what
    /// [`SegmentStore::create`] refuses other than [`SegmentError::KeyExists`].
    pub fn key_or_create(
        &self,
        key: &str,
        limit: u64,
        start: i64,
        step: u64,
    ) -> Result<KeyHandle, SegmentError> {
        self.check_fork()?;
        match self.key_with_limit(key, limit) {
            Err(SegmentError::UnknownKey { .. }) => {}
            opened => return opened,
        }
        match self.fetcher.store.create(key, start, step) {
            Ok(()) | Err(SegmentError::KeyExists { .. }) => {}
            Err(e) => return Err(e),
        }
        self.key_with_limit(key, limit)
    }

    /// [`SegmentError::Forked`] in a process forked from the one the allocator was made
    /// in. For callers about to use what the allocator shares with its parent outside its
    /// own calls: its store, or [`status`](Self::status), which takes locks that the
    /// parent's threads may have held at the fork.
    ///
    /// # Errors
    /// [`SegmentError::Forked`].
    #[inline]
    pub fn check_fork(&self) -> Result<(), SegmentError> {
        if self.fork_guard.is_forked() {
            return Err(forked(&self.fork_guard));
        }
        Ok(())
    }

    /// The status of every open key, sorted by key. Check [`check_fork`](Self::check_fork)
    /// first in a process that may be a forked child.
    pub fn status(&self) -> Vec<KeyStatus> {
        let keys: Vec<Arc<KeyState>> = lock(&self.keys).values().cloned().collect();
        let mut all: Vec<KeyStatus> = keys.iter().map(|k| k.status()).collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        all
    }

    /// Stops issuing and fetching, and gives each key's unissued IDs back to the table
    /// where nobody allocated after us. Later calls on any handle, and opening a key not
    /// open before, get [`SegmentError::Closed`]. Calling it twice does nothing the second time.
    ///
    /// In a process forked from the one the allocator was made in it does nothing and
    /// reports nothing given back: the ranges in memory are the parent's, which still
    /// issues from them, and the fetch worker is the parent's thread.
    pub fn shutdown(&self) -> ShutdownReport {
        if self.fork_guard.is_forked() {
            return ShutdownReport::default();
        }
        self.close(true)
    }

    fn close(&self, give_back: bool) -> ShutdownReport {
        {
            let mut queue = lock(&self.fetcher.queue);
            queue.stop = true;
            queue.jobs.clear();
        }
        self.fetcher.wake.notify_all();
        if let Some(worker) = lock(&self.worker).take() {
            worker.join().ok(); // the fetch in flight finishes first
        }
        let mut report = ShutdownReport::default();
        let keys: Vec<Arc<KeyState>> = lock(&self.keys).values().cloned().collect();
        for state in keys {
            let Some((rest, expected)) = state.seal() else {
                continue;
            };
            if !give_back || rest.is_empty() {
                continue;
            }
            match self.fetcher.store.give_back(&state.key, rest, expected) {
                Ok(true) => report.given_back += rest.len(),
                Ok(false) => report.refused.push(state.key.clone()),
                Err(e) => report.failed.push((state.key.clone(), e)),
            }
        }
        report
    }
}

impl Drop for SegmentAllocator {
    /// Stops the worker and closes every key, without giving anything back (that needs
    /// store calls; use [`shutdown`](Self::shutdown)). In a forked child it takes no lock
    /// and joins nothing: fork did not copy the worker thread, so joining it would wait
    /// forever, and the parent's threads may have held the locks at the fork.
    fn drop(&mut self) {
        if self.fork_guard.is_forked() {
            let worker = self
                .worker
                .get_mut()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::forget(worker.take());
            return;
        }
        self.close(false);
    }
}

/// [`SegmentError::Forked`] for an allocator made under `guard`.
#[cold]
fn forked(guard: &ForkGuard) -> SegmentError {
    SegmentError::Forked {
        made_in_pid: guard.made_in_pid(),
        pid: std::process::id(),
    }
}

impl KeyHandle {
    /// The next ID of the key.
    ///
    /// # Errors
    /// [`SegmentError::NotReady`] if both buffers stayed empty for
    /// [`SegmentConfig::max_wait`]; the store's error if it is failing and memory is empty;
    /// [`SegmentError::Exhausted`] at the key's limit; [`SegmentError::Closed`] after
    /// shutdown; [`SegmentError::Forked`] in a process forked from the one the allocator
    /// was made in. Nothing is issued on an error; calling again is safe.
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
    /// in, as [`SegmentAllocator::check_fork`]; check it before [`status`](Self::status)
    /// there.
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

impl KeyState {
    fn config(&self) -> &SegmentConfig {
        &self.fetcher.config
    }

    /// Passes `taken` on, after asking for the next segment if it took the prefetch mark.
    #[inline]
    fn issued(self: &Arc<Self>, taken: Taken) -> Taken {
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

    fn start_fetch(self: &Arc<Self>, slow: &mut Slow<KeySlow>) {
        if slow.rest.fetching || slow.rest.permanent {
            return;
        }
        slow.rest.fetching = true;
        self.fetcher.enqueue(Arc::clone(self), Instant::now());
    }

    /// The slow path: switch to the next segment, or ask for one and wait as `wait` says.
    fn refill(
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
    fn seal(&self) -> Option<(Range, u64)> {
        let sealed = self.buffers.seal();
        self.arrived.notify_all();
        sealed
    }

    fn status(&self) -> KeyStatus {
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

impl Fetcher {
    fn enqueue(&self, key: Arc<KeyState>, at: Instant) {
        let mut queue = lock(&self.queue);
        if queue.stop {
            return;
        }
        queue.jobs.push((at, key));
        drop(queue);
        self.wake.notify_one();
    }

    /// The worker: fetches each due key, in order of due time, until stopped.
    fn run(&self) {
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
            let step = next_step(&slow.rest, &self.config);
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

/// Leaf's rule: a segment used up in under `fast_segment` doubles the step (up to
/// `max_step`); one that lasted `slow_segment` or more halves it (never below the table's
/// step). A caller that had to wait also doubles it.
fn next_step(slow: &KeySlow, config: &SegmentConfig) -> u64 {
    let top = config.max_step.max(slow.min_step);
    let lasted = slow.last_fetch.map(|t| t.elapsed());
    let step = if slow.hungry || lasted.is_some_and(|d| d < config.fast_segment) {
        slow.step.saturating_mul(2)
    } else if lasted.is_some_and(|d| d >= config.slow_segment) {
        slow.step / 2
    } else {
        slow.step
    };
    step.clamp(slow.min_step, top)
}

/// The wait before retry number `failures`: doubling from `retry_min` up to `retry_max`,
/// then shortened by a random 0-20% so that allocators that failed together do not retry
/// in lockstep.
fn backoff(config: &SegmentConfig, failures: u32) -> Duration {
    let doubled = config
        .retry_min
        .saturating_mul(1 << failures.saturating_sub(1).min(20));
    let delay = doubled.min(config.retry_max);
    let jitter = getrandom::u32().unwrap_or(0) % 201; // 0..=200 per mille
    delay - delay.mul_f64(f64::from(jitter) / 1000.0)
}

/// The segment for an allocated range, cut at the key's limit.
fn clip(
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

    fn slow(step: u64, min_step: u64, ago: Option<Duration>, hungry: bool) -> KeySlow {
        let now = Instant::now();
        KeySlow {
            fetching: false,
            hungry,
            permanent: false,
            failures: 0,
            last_error: None,
            high_water: 0,
            step,
            min_step,
            last_fetch: ago.map(|d| now - d),
            current_since: now,
            rate_per_sec: None,
            counters: Counters::default(),
        }
    }

    #[test]
    fn leaf_step_rule() {
        let config = SegmentConfig {
            max_step: 1000,
            ..SegmentConfig::default()
        };
        let min = |m: u64| Some(Duration::from_secs(60 * m));
        // Under 15 minutes: double, up to max_step.
        assert_eq!(next_step(&slow(100, 100, min(1), false), &config), 200);
        assert_eq!(next_step(&slow(800, 100, min(1), false), &config), 1000);
        // 15 to 30 minutes: keep.
        assert_eq!(next_step(&slow(400, 100, min(20), false), &config), 400);
        // 30 minutes or more: halve, never below the table's step.
        assert_eq!(next_step(&slow(400, 100, min(30), false), &config), 200);
        assert_eq!(next_step(&slow(150, 100, min(45), false), &config), 100);
        // The first background fetch keeps the step; a caller that waited doubles it.
        assert_eq!(next_step(&slow(100, 100, None, false), &config), 100);
        assert_eq!(next_step(&slow(100, 100, min(45), true), &config), 200);
        // A table step above max_step is used as it is.
        assert_eq!(next_step(&slow(5000, 5000, min(1), false), &config), 5000);
    }

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
