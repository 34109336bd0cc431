//! Fork safety: a generator made before `fork()` must not issue IDs in the child.
//!
//! Parent and child would share the node id, the clock and the generator's last state, so
//! both would issue the same IDs. A `pthread_atfork` child handler bumps a process-wide
//! generation; each generator remembers the generation it was made in and compares it on
//! every call (one relaxed load, no syscall: `getpid()` is not cached by glibc). Hooking
//! libc's fork, not Python's `os.register_at_fork`, also covers forks made by C code.

use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use crate::errors::new_error;

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn after_fork_in_child() {
    // Async-signal-safe: one atomic add, in the child's only thread.
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Installs the child handler once per process.
pub fn install_fork_hook() -> PyResult<()> {
    static INSTALL: Once = Once::new();
    let mut rc = 0;
    INSTALL.call_once(|| {
        // SAFETY: registers a plain extern "C" fn with no captured state.
        rc = unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
    });
    if rc != 0 {
        return Err(PyOSError::new_err(format!(
            "pthread_atfork failed ({rc}): fork detection unavailable"
        )));
    }
    Ok(())
}

/// The process a generator was made in.
#[derive(Debug, Clone, Copy)]
pub struct ForkGuard {
    generation: u64,
    pid: u32,
}

impl ForkGuard {
    /// Remembers the current process.
    pub fn here() -> Self {
        ForkGuard {
            generation: FORK_GENERATION.load(Ordering::Relaxed),
            pid: std::process::id(),
        }
    }

    /// `ForkedGeneratorError` if this process is a fork of the one the guard was made in.
    #[inline]
    pub fn check(&self, py: Python<'_>) -> PyResult<()> {
        if FORK_GENERATION.load(Ordering::Relaxed) == self.generation {
            Ok(())
        } else {
            Err(self.forked_error(py))
        }
    }

    #[cold]
    fn forked_error(&self, py: Python<'_>) -> PyErr {
        let message = format!(
            "this Generator was made in process {} and inherited through fork(); process {} \
             must not issue IDs under its parent's node id. Make a new Generator in the child \
             with a node id of its own (lease one with ferroflake-lease)",
            self.pid,
            std::process::id()
        );
        // Not a core error kind: code 0 is never used by the core.
        match new_error(py, "ForkedGeneratorError", message, "GENERATOR_FORKED", 0) {
            Ok(exc) => PyErr::from_value(exc),
            Err(failed) => failed,
        }
    }
}
