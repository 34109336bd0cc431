//! The short exclusive lock taken around each read-modify-write of the embedded registry's
//! records: `flock` on a lock file beside them, released when the file is closed.
//!
//! Liveness is never judged by who holds this lock (a stopped process would keep it): the
//! records carry expiry times. A holder stopped *inside* a read-modify-write blocks the
//! others, so waiting for the lock is bounded and then reported as unavailable.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

/// An exclusive lock on the registry directory; unlocked on drop.
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Locks `path` (created if missing), waiting at most `timeout`.
    ///
    /// # Errors
    /// The file cannot be opened, or the lock stayed busy for `timeout` (`TimedOut`).
    pub fn acquire(path: &Path, timeout: Duration) -> std::io::Result<DirLock> {
        let file = crate::private_dir::open_nofollow(path)?;
        let give_up = Instant::now() + timeout;
        let mut pause = Duration::from_micros(200);
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(DirLock { _file: file }),
                Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            if Instant::now() >= give_up {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("lock {} stayed busy for {timeout:?}", path.display()),
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DirLock;
    use std::time::Duration;

    #[test]
    fn second_lock_waits_then_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let held = DirLock::acquire(&path, Duration::from_secs(1)).unwrap();
        let err = DirLock::acquire(&path, Duration::from_millis(30))
            .err()
            .expect("a second exclusive lock must not be granted");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        drop(held);
        DirLock::acquire(&path, Duration::from_millis(30)).expect("free after drop");
    }
}
