//! One SQLite file, one name. In WAL mode SQLite keeps a file's `-wal` and `-shm` beside the
//! name it was opened by, so processes that reach one file by two names (a hard link, a file
//! bind-mounted into a container under another directory) each see only their own writes
//! and take the same ranges. Each open store claims its name on the file itself, the one
//! place every name leads to: a shared open-file-description lock on one byte, far past the
//! bytes SQLite locks, at an offset the name's directory and file name give. A store that
//! finds another name's byte locked refuses to open.
//!
//! The path is resolved once, here, and SQLite opens the resolved name: a symbolic link is
//! the same name, and one swapped while the store opens cannot split the claim from the
//! file SQLite uses. The claim guards against mistakes; whoever can make links beside the
//! table can rewrite it anyway. Where open-file-description locks are missing (outside
//! Linux) the claim checks nothing.
//!
//! The claim also gives writes their turn ([`NameClaim::write_turn`]): an exclusive lock on
//! another byte, held across a transaction and its checkpoint and across a store's open.
//! SQLite's own write lock lives in the `-shm` file beside the name; one deleted under open
//! stores leaves them with a lock nobody else sees, and two processes would write at once.
//! The turn does not depend on it, and each store checks under it that the `-shm` it opened
//! is still the one at the name (`sqlite`).

/// Held by an open [`SqliteStore`](crate::SqliteStore) for as long as it lives.
#[derive(Debug)]
pub(crate) struct NameClaim {
    #[cfg(all(target_os = "linux", not(ferroflake_portable)))]
    file: (u64, u64),
    #[cfg(all(target_os = "linux", not(ferroflake_portable)))]
    shared: std::sync::Arc<linux::Shared>,
}

/// The name to open `path` by, claimed.
#[cfg(not(all(target_os = "linux", not(ferroflake_portable))))]
pub(crate) fn claim(
    path: &std::path::Path,
) -> Result<(std::path::PathBuf, NameClaim), crate::SegmentError> {
    Ok((path.to_owned(), NameClaim {}))
}

/// A store's turn to write, until dropped.
pub(crate) struct WriteTurn<'a> {
    #[cfg(all(target_os = "linux", not(ferroflake_portable)))]
    _in_process: std::sync::MutexGuard<'a, ()>,
    #[cfg(all(target_os = "linux", not(ferroflake_portable)))]
    file: &'a std::fs::File,
    #[cfg(not(all(target_os = "linux", not(ferroflake_portable))))]
    _claim: std::marker::PhantomData<&'a ()>,
}

#[cfg(not(all(target_os = "linux", not(ferroflake_portable))))]
impl NameClaim {
    /// Without open-file-description locks, SQLite's own locks are all there is.
    pub(crate) fn write_turn(
        &self,
        _wait: std::time::Duration,
    ) -> Result<WriteTurn<'_>, crate::SegmentError> {
        Ok(WriteTurn {
            _claim: std::marker::PhantomData,
        })
    }
}

#[cfg(all(target_os = "linux", not(ferroflake_portable)))]
pub(crate) use linux::claim;

#[cfg(all(target_os = "linux", not(ferroflake_portable)))]
mod linux {
    use std::collections::HashMap;
    use std::fs::{self, File, OpenOptions};
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, PoisonError, TryLockError};
    use std::time::{Duration, Instant};

    use super::{NameClaim, WriteTurn};
    use crate::SegmentError;

    /// The names' bytes: 2^61 of them from 2^61 on, past SQLite's lock bytes (at 1 GiB) and
    /// any real file's length; locks beyond the end of a file are allowed and write nothing.
    const NAMES_START: i64 = 1 << 61;
    const NAMES_LEN: i64 = 1 << 61;
    /// Held exclusively while a process claims a name, so two processes opening by two names
    /// at once cannot both miss each other.
    const GATE: i64 = NAMES_START - 1;
    /// Held exclusively by the store whose turn it is to write.
    const WRITER: i64 = NAMES_START - 2;

    /// The files this process has claimed, by device and inode: the claim's file, the offset
    /// of the name it was claimed by, and the open stores using it. One descriptor a file:
    /// closing any descriptor of a file drops the POSIX locks SQLite's connections in this
    /// process hold on it, so a claim's descriptor closes only with the last store.
    static CLAIMED: Mutex<Option<HashMap<(u64, u64), Claimed>>> = Mutex::new(None);

    struct Claimed {
        shared: Arc<Shared>,
        name: i64,
        stores: usize,
    }

    /// The claim's descriptor, and the turn of this process's stores on it (they share the
    /// descriptor, and so its locks).
    #[derive(Debug)]
    pub(crate) struct Shared {
        file: File,
        turn: Mutex<()>,
    }

    impl NameClaim {
        /// Waits up to `wait` for this store's turn to write: other stores in this process,
        /// then other processes.
        pub(crate) fn write_turn(&self, wait: Duration) -> Result<WriteTurn<'_>, SegmentError> {
            let deadline = Instant::now() + wait;
            let busy = || SegmentError::Unavailable {
                store: "sqlite".into(),
                detail: format!("another store kept its turn to write for {wait:?}"),
            };
            let in_process = loop {
                match self.shared.turn.try_lock() {
                    Ok(guard) => break guard,
                    Err(TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
                    Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(TryLockError::WouldBlock) => return Err(busy()),
                }
            };
            let file = &self.shared.file;
            loop {
                match lock(file, libc::F_WRLCK, WRITER, 1, false) {
                    Ok(()) => break,
                    Err(e) if is_contended(&e) && Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) if is_contended(&e) => return Err(busy()),
                    Err(e) => {
                        return Err(SegmentError::Unavailable {
                            store: "sqlite".into(),
                            detail: format!("cannot lock the table file: {e}"),
                        })
                    }
                }
            }
            Ok(WriteTurn {
                _in_process: in_process,
                file,
            })
        }
    }

    impl Drop for WriteTurn<'_> {
        fn drop(&mut self) {
            let _ = lock(self.file, libc::F_UNLCK, WRITER, 1, false);
        }
    }

    fn is_contended(e: &io::Error) -> bool {
        matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES))
    }

    pub(crate) fn claim(path: &Path) -> Result<(PathBuf, NameClaim), SegmentError> {
        let fail = |what: &str, e: io::Error| SegmentError::Unavailable {
            store: "sqlite".into(),
            detail: format!("cannot {what} {}: {e}", path.display()),
        };
        // Created as SQLite would create it, so that there is a file to resolve and lock. A
        // new file has no other descriptor in this process, so closing this one drops nothing.
        if fs::metadata(path).is_err() {
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| fail("create", e))?;
        }
        let real = fs::canonicalize(path).map_err(|e| fail("resolve", e))?;
        let meta = fs::metadata(&real).map_err(|e| fail("read", e))?;
        let key = (meta.dev(), meta.ino());
        let dir = real.parent().unwrap_or(Path::new("/"));
        let dir_meta = fs::metadata(dir).map_err(|e| fail("read the directory of", e))?;
        let file_name = real.file_name().map(|n| n.as_bytes()).unwrap_or_default();
        let name = NAMES_START
            + (name_hash(dir_meta.dev(), dir_meta.ino(), file_name) % NAMES_LEN as u64) as i64;

        // A file this process has claimed is decided here, without a descriptor of its own:
        // closing one would drop the locks this process's stores hold on the file.
        let mut claimed = CLAIMED.lock().unwrap_or_else(PoisonError::into_inner);
        let claimed = claimed.get_or_insert_with(HashMap::new);
        if let Some(entry) = claimed.get_mut(&key) {
            if entry.name != name {
                return Err(aliased(path, "this process"));
            }
            entry.stores += 1;
            let shared = Arc::clone(&entry.shared);
            return Ok((real, NameClaim { file: key, shared }));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&real)
            .map_err(|e| fail("open", e))?;
        let opened = file.metadata().map_err(|e| fail("read", e))?;
        if (opened.dev(), opened.ino()) != key {
            return Err(fail(
                "open",
                io::Error::other("the path changed while the store opened"),
            ));
        }
        lock(&file, libc::F_WRLCK, GATE, 1, true).map_err(|e| fail("lock", e))?;
        let outcome = lock(&file, libc::F_RDLCK, name, 1, false).and_then(|()| {
            Ok(held(&file, NAMES_START, name - NAMES_START)?
                || held(&file, name + 1, NAMES_START + NAMES_LEN - name - 1)?)
        });
        let _ = lock(&file, libc::F_UNLCK, GATE, 1, false);
        match outcome {
            Err(e) => Err(fail("lock", e)),
            Ok(true) => Err(aliased(path, "another process")),
            Ok(false) => {
                let shared = Arc::new(Shared {
                    file,
                    turn: Mutex::new(()),
                });
                claimed.insert(
                    key,
                    Claimed {
                        shared: Arc::clone(&shared),
                        name,
                        stores: 1,
                    },
                );
                Ok((real, NameClaim { file: key, shared }))
            }
        }
    }

    impl Drop for NameClaim {
        fn drop(&mut self) {
            let mut map = CLAIMED.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(claimed) = map.as_mut() else {
                return;
            };
            if let Some(entry) = claimed.get_mut(&self.file) {
                entry.stores -= 1;
                if entry.stores == 0 {
                    // The descriptor closes with this claim's reference: the name is free.
                    claimed.remove(&self.file);
                }
            }
            if claimed.is_empty() {
                *map = None; // nothing kept once no store is open
            }
        }
    }

    fn aliased(path: &Path, holder: &str) -> SegmentError {
        SegmentError::Unavailable {
            store: "sqlite".into(),
            detail: format!(
                "{} is open in {holder} under another name (a hard link, or the file \
                 bind-mounted elsewhere): SQLite keeps the write-ahead log beside each name, \
                 so the two would issue the same IDs; open it by one path",
                path.display()
            ),
        }
    }

    /// FNV-1a over the directory's device and inode and the file name: fixed, so that every
    /// build of every face puts one name at one offset.
    fn name_hash(dev: u64, ino: u64, file_name: &[u8]) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in dev
            .to_le_bytes()
            .iter()
            .chain(&ino.to_le_bytes())
            .chain(file_name)
        {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        hash
    }

    fn flock(kind: libc::c_int, start: i64, len: i64) -> libc::flock {
        // SAFETY: `flock` is plain data; all zeroes is a valid value (and l_pid must be 0
        // for the open-file-description commands).
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = kind as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        lock.l_start = start;
        lock.l_len = len;
        lock
    }

    /// Sets (or clears, with `F_UNLCK`) an open-file-description lock, waiting for it if `wait`.
    fn lock(file: &File, kind: libc::c_int, start: i64, len: i64, wait: bool) -> io::Result<()> {
        let lock = flock(kind, start, len);
        let command = if wait {
            libc::F_OFD_SETLKW
        } else {
            libc::F_OFD_SETLK
        };
        loop {
            // SAFETY: a valid descriptor and a pointer to a live `flock`.
            if unsafe { libc::fcntl(file.as_raw_fd(), command, &lock) } == 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// Whether another open file description holds a lock anywhere in the range.
    fn held(file: &File, start: i64, len: i64) -> io::Result<bool> {
        if len == 0 {
            return Ok(false);
        }
        let mut lock = flock(libc::F_WRLCK, start, len);
        // SAFETY: a valid descriptor and a pointer to a live `flock`, which F_OFD_GETLK fills.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
    }
}
