//! The allocator: per-key handles that issue IDs from memory, and one background worker that
//! fetches the next segment of each key before the current one runs out.
//!
//! [`SegmentAllocator`] opens keys and shuts them down; a [`KeyHandle`] issues a key's IDs
//! without a lock (`key`); switching segments, asking for a fetch and waiting for it happen
//! under the key's lock (`slow_path`); one worker per allocator refills the keys
//! (`fetcher`), sizing each segment by Leaf's rule (`step`); `status` is what a key reports.

mod fetcher;
mod key;
mod slow_path;
mod status;
mod step;

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use ferroflake::ForkGuard;

use self::fetcher::{clip, Fetcher, Queue};
use self::key::forked;
pub use self::key::KeyHandle;
use self::slow_path::{KeySlow, KeyState};
pub use self::status::{Counters, KeyStatus};
use crate::config::LIMIT_I64;
use crate::segment::Buffers;
use crate::store::check_key;
use crate::sync::{lock, Condvar, Mutex};
use crate::{SegmentConfig, SegmentError, SegmentStore};

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
        // After shutdown no key opens, not even one open before, as every other call is
        // refused: a new key's first segment would be issued with no fetch worker behind
        // it and never given back. Checked under the keys' lock, which `close` takes after
        // it sets `stop`, so a key opened first is sealed by it.
        self.refuse_if_closed(key)?;
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

    /// Adds `key` to the store ([`SegmentStore::create`]) through this allocator, which
    /// refuses it once shut down, as it refuses every other call.
    ///
    /// # Errors
    /// [`SegmentError::Closed`] after [`shutdown`](Self::shutdown); [`SegmentError::Forked`]
    /// in a forked child; what the store's `create` refuses.
    pub fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        self.check_fork()?;
        // What is wrong with the request itself is said first, as for a key.
        crate::store::check_create(key, start, step)?;
        self.refuse_if_closed(key)?;
        self.fetcher.store.create(key, start, step)
    }

    pub(crate) fn refuse_if_closed(&self, key: &str) -> Result<(), SegmentError> {
        if lock(&self.fetcher.queue).stop {
            return Err(SegmentError::Closed { key: key.into() });
        }
        Ok(())
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
    /// where nobody allocated after us. Later calls on any handle, opening any key and
    /// creating one get [`SegmentError::Closed`]. Calling it twice does nothing the second
    /// time.
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
