//! The only place that names atomics. Under the `ferroflake_loom` cfg (build.rs) the model checker's
//! atomics replace the real ones, so `tests/loom.rs` explores every interleaving of the
//! generator's CAS loop and of the manual clock.

#[cfg(ferroflake_loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, Ordering};

#[cfg(not(ferroflake_loom))]
pub(crate) use core::sync::atomic::{AtomicU64, Ordering};
