//! Fork detection: state inherited through `fork()` must not issue IDs.
//!
//! Parent and child share the node id, the clock and the generator's last state (or a
//! segment allocator's ranges in memory), so both would issue the same IDs. A
//! `pthread_atfork` child handler bumps a process-wide fork count; each guard remembers the
//! count it was made under and compares it on every call (one relaxed load of a global that
//! nothing else writes, no syscall: glibc does not cache `getpid()`). Hooking libc's `fork`,
//! not a language runtime's, covers forks made by Python's `os.fork`, by C code, and by Rust
//! alike. Without `std`, or where there is no `fork` (not Unix), the guard is empty and
//! always passes.

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
    /// fail for lack of memory), forks go unseen: guards still pass, unguarded.
    fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            // SAFETY: registers a plain extern "C" fn that captures nothing.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
    }

    /// Remembers the process it was made in, to tell whether the current one is a fork of
    /// it.
    ///
    /// State copied into a child by `fork()` (a generator's last timestamp and sequence, a
    /// segment allocator's ranges) issues the same IDs in parent and child. Anything that
    /// issues from memory keeps a guard made with [`here`](Self::here) and refuses once
    /// [`is_forked`](Self::is_forked) says so; the child makes its own state instead.
    /// [`Generator`](crate::Generator) does this itself
    /// ([`Error::GeneratorForked`](crate::Error::GeneratorForked)).
    ///
    /// Unix with the `std` feature: a `pthread_atfork` child handler counts forks, and
    /// `is_forked` is one relaxed atomic load. Elsewhere (no `std`, or no `fork`) the guard
    /// is empty and `is_forked` is always `false`.
    #[derive(Debug, Clone, Copy)]
    pub struct ForkGuard {
        forks: u64,
        pid: u32,
    }

    impl ForkGuard {
        /// A guard for this process (the first call registers the fork handler).
        pub fn here() -> Self {
            install();
            ForkGuard {
                forks: FORKS.load(Ordering::Relaxed),
                pid: std::process::id(),
            }
        }

        /// Whether this process is a fork (or a fork of a fork) of the one the guard was
        /// made in. One relaxed load; cheap enough for every call of a hot path.
        #[inline]
        pub fn is_forked(&self) -> bool {
            FORKS.load(Ordering::Relaxed) != self.forks
        }

        /// The id of the process the guard was made in (0 without `std`).
        pub fn made_in_pid(&self) -> u32 {
            self.pid
        }

        /// [`Error::GeneratorForked`] in a process forked from the one the guard was made in.
        #[inline]
        pub(crate) fn check(&self) -> Result<(), Error> {
            if self.is_forked() {
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

    /// Remembers the process it was made in, to tell whether the current one is a fork of
    /// it. Here (no `std`, or no `fork`) there is nothing to guard:
    /// [`is_forked`](Self::is_forked) is always `false`. On Unix with `std` it counts forks
    /// with a `pthread_atfork` handler.
    #[derive(Debug, Clone, Copy)]
    pub struct ForkGuard {
        pid: u32,
    }

    impl ForkGuard {
        /// A guard for this process.
        pub fn here() -> Self {
            #[cfg(feature = "std")]
            let pid = std::process::id();
            #[cfg(not(feature = "std"))]
            let pid = 0;
            ForkGuard { pid }
        }

        /// Always `false`: there is no `fork` to detect.
        #[inline]
        pub fn is_forked(&self) -> bool {
            false
        }

        /// The id of the process the guard was made in (0 without `std`).
        pub fn made_in_pid(&self) -> u32 {
            self.pid
        }

        #[inline]
        pub(crate) fn check(&self) -> Result<(), Error> {
            Ok(())
        }
    }
}

pub use imp::ForkGuard;
