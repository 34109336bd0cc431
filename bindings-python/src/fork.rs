//! Fork detection for what the core's own guard does not cover: a segment allocator
//! inherited through `fork()` holds the same ranges in memory as its parent, so both would
//! issue the same IDs.
//!
//! The same scheme as the core's generators: a `pthread_atfork` child handler counts forks,
//! and each allocator remembers the count it was made under (one relaxed load per call, no
//! syscall). It sees every fork made through libc: Python's `os.fork`, multiprocessing, C
//! code.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// Forks this process has gone through since the module was loaded.
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn after_fork_in_child() {
    // Async-signal-safe: one atomic add, in the child's only thread.
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// The process an object was made in.
#[derive(Debug, Clone, Copy)]
pub struct ForkMark {
    forks: u64,
    pid: u32,
}

impl ForkMark {
    /// Remembers this process (and registers the child handler, once).
    pub fn here() -> Self {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: registers a plain extern "C" fn that captures nothing. If it fails
            // (only for lack of memory), forks go unseen.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
        ForkMark {
            forks: FORKS.load(Ordering::Relaxed),
            pid: std::process::id(),
        }
    }

    /// Whether this process is a fork of the one the mark was made in.
    #[inline]
    pub fn forked(&self) -> bool {
        FORKS.load(Ordering::Relaxed) != self.forks
    }

    /// Why a forked child may not use what was made in its parent, for the error message.
    #[cold]
    pub fn refusal(&self, what: &str, instead: &str) -> String {
        format!(
            "this {what} was made in process {} and inherited through fork(); process {} \
             must not use it, since its parent holds the same IDs in memory: {instead}",
            self.pid,
            std::process::id()
        )
    }
}
