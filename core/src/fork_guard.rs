//! Fork detection: a generator inherited through `fork()` must not issue IDs.
//!
//! Parent and child share the node id, the clock and the generator's last state, so both
//! would issue the same IDs. A `pthread_atfork` child handler bumps a process-wide fork
//! count; each generator remembers the count it was made under and compares it on every
//! call (one relaxed load of a global that nothing else writes, no syscall: glibc does not
//! cache `getpid()`). Hooking libc's `fork`, not a language runtime's, covers forks made by
//! Python's `os.fork`, by C code, and by Rust alike. Without `std`, or where there is no
//! `fork` (not Unix), the guard is empty and always passes.

#[cfg(all(feature = "std", unix))]
mod imp {
    use core::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Once;

    use crate::Error;

    /// Forks this process has gone through: 0 in the process that loaded the crate, one
    /// more in each generation of children.
    static FORKS: AtomicU64 = AtomicU64::new(0);

    extern "C" fn after_fork_in_child() {
        // Async-signal-safe: one atomic add, in the child's only thread.
        FORKS.fetch_add(1, Ordering::Relaxed);
    }

    /// Registers the child handler, once per process. If registration fails (it can only
    /// fail for lack of memory), forks go unseen: generators still work, unguarded.
    fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: registers a plain extern "C" fn that captures nothing.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }

    /// The process a generator was made in.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct ForkGuard {
        forks: u64,
        pid: u32,
    }

    impl ForkGuard {
        /// Remembers this process.
        pub(crate) fn here() -> Self {
            install();
            ForkGuard {
                forks: FORKS.load(Ordering::Relaxed),
                pid: std::process::id(),
            }
        }

        /// Whether this process is a fork of the one the guard was made in.
        #[inline]
        pub(crate) fn forked(&self) -> bool {
            FORKS.load(Ordering::Relaxed) != self.forks
        }

        /// [`Error::GeneratorForked`] in a process forked from the one the guard was made in.
        #[inline]
        pub(crate) fn check(&self) -> Result<(), Error> {
            if self.forked() {
                Err(self.refusal())
            } else {
                Ok(())
            }
        }

        #[cold]
        fn refusal(&self) -> Error {
            Error::GeneratorForked {
                made_in_pid: self.pid,
                pid: std::process::id(),
            }
        }
    }
}

#[cfg(not(all(feature = "std", unix)))]
mod imp {
    use crate::Error;

    /// Without `std` or `fork`: nothing to guard.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct ForkGuard;

    impl ForkGuard {
        pub(crate) fn here() -> Self {
            ForkGuard
        }

        pub(crate) fn forked(&self) -> bool {
            false
        }

        #[inline]
        pub(crate) fn check(&self) -> Result<(), Error> {
            Ok(())
        }
    }
}

pub(crate) use imp::ForkGuard;
