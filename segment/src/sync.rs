//! The only place that names atomics and locks. Under the `ferroflake_loom` cfg (build.rs) the model
//! checker's versions replace them, so `tests/loom.rs` explores every interleaving of the
//! hot path, the segment switch and the seal.

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
