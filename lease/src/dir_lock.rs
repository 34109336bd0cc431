//! The short exclusive lock taken around each read-modify-write of the embedded registry's
//! records: `flock` on a lock file beside them, released when the file is closed.
//!
//! Liveness is never judged by who holds this lock (a stopped process would keep it): the
//! records carry expiry times. A holder stopped *inside* a read-modify-write blocks the
//! others, so waiting for the lock is bounded and then reported as unavailable.
//!
//! A lock on a file that is no longer at its path excludes nobody: whoever opens the path
//! next gets another file and another lock. So after locking, the file must still be the
//! one at the path (same device and inode); if it was deleted or replaced meanwhile, the
//! lock is dropped and taken again on the file now there. The lock file also carries the
//! registry's write count (see `witness`), so one deleted while an operation was inside
//! shows up as lost records rather than going unnoticed.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

/// An exclusive lock on the registry directory; unlocked on drop.
pub struct DirLock {
    file: File,
}

impl DirLock {
    /// Locks `path` (created if missing), waiting at most `timeout`.
    ///
    /// # Errors
    /// The file cannot be opened, or the lock stayed busy for `timeout` (`TimedOut`).
    pub fn acquire(path: &Path, timeout: Duration) -> std::io::Result<DirLock> {
        Self::lock_opened(crate::private_dir::open_nofollow(path)?, path, timeout)
    }

    /// Locks `file`, opened from `path` a moment ago, or whatever file is at `path` now.
    fn lock_opened(mut file: File, path: &Path, timeout: Duration) -> std::io::Result<DirLock> {
        let give_up = Instant::now() + timeout;
        loop {
            lock_until(&file, path, give_up, timeout)?;
            if still_at(&file, path)? {
                return Ok(DirLock { file });
            }
            // Deleted or replaced while we waited: lock the file that is there now.
            file = crate::private_dir::open_nofollow(path)?;
        }
    }

    /// The locked file, which holds the registry's write count.
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Takes the exclusive lock on `file`, retrying until `give_up`.
fn lock_until(
    file: &File,
    path: &Path,
    give_up: Instant,
    timeout: Duration,
) -> std::io::Result<()> {
    let mut pause = Duration::from_micros(200);
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
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

/// Whether `file` is still the file at `path` (not deleted, not replaced).
fn still_at(file: &File, path: &Path) -> std::io::Result<bool> {
    let held = file.metadata()?;
    match std::fs::symlink_metadata(path) {
        Ok(there) => Ok(there.dev() == held.dev() && there.ino() == held.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
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

    /// A lock won on a file that was deleted and recreated meanwhile must not count: the
    /// process holding the new file's lock would otherwise run beside us.
    #[test]
    fn a_lock_on_a_replaced_file_is_taken_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let old = crate::private_dir::open_nofollow(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let new_holder = DirLock::acquire(&path, Duration::from_secs(1)).unwrap();
        // The old, unlinked file locks at once, but it excludes nobody: the lock must be
        // sought on the file at the path, which the other holder has.
        let err = DirLock::lock_opened(old, &path, Duration::from_millis(50))
            .err()
            .expect("the file at the path is held by another");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        drop(new_holder);
    }
}
