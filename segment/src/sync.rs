//! The only place that names atomics, locks and the segment pointer. Under
//! `--cfg ferroflake_loom` the model checker's versions replace them, so `tests/loom.rs`
//! explores every interleaving of the hot path and the segment switch.
//!
//! arc-swap does not run under loom (its hazard-pointer debts use plain atomics loom cannot
//! see), so under loom [`SegmentPtr`] is a loom mutex around an `Arc`: the model checks our
//! protocol (increment, bounds check, switch under the slow-path lock), and arc-swap's own
//! tests check its pointer swap.

use std::ops::Deref;
use std::sync::Arc;

#[cfg(ferroflake_loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicU64, Ordering},
    Condvar, Mutex, MutexGuard,
};

#[cfg(not(ferroflake_loom))]
pub(crate) use std::sync::{
    atomic::{AtomicU64, Ordering},
    Condvar, Mutex, MutexGuard,
};

/// Locks `mutex`, going on after a panic elsewhere: every critical section leaves its
/// state consistent before anything that can panic.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An atomically replaceable `Arc<T>`: readers never lock.
#[cfg(not(ferroflake_loom))]
pub(crate) struct SegmentPtr<T>(arc_swap::ArcSwap<T>);

#[cfg(not(ferroflake_loom))]
impl<T> SegmentPtr<T> {
    pub(crate) fn new(value: Arc<T>) -> Self {
        SegmentPtr(arc_swap::ArcSwap::new(value))
    }
    pub(crate) fn load(&self) -> impl Deref<Target = Arc<T>> {
        self.0.load()
    }
    pub(crate) fn store(&self, value: Arc<T>) {
        self.0.store(value);
    }
}

/// Under loom: a mutex-guarded `Arc<T>` (see the module docs).
#[cfg(ferroflake_loom)]
pub(crate) struct SegmentPtr<T>(loom::sync::Mutex<Arc<T>>);

#[cfg(ferroflake_loom)]
impl<T> SegmentPtr<T> {
    pub(crate) fn new(value: Arc<T>) -> Self {
        SegmentPtr(loom::sync::Mutex::new(value))
    }
    pub(crate) fn load(&self) -> impl Deref<Target = Arc<T>> {
        Box::new(Arc::clone(&lock(&self.0)))
    }
    pub(crate) fn store(&self, value: Arc<T>) {
        *lock(&self.0) = value;
    }
}
