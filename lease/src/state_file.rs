//! A holder's claim kept on its own host ([`LeaseConfig::state_file`]), so that a process
//! restarted while the registry cannot be reached resumes the claim instead of stopping.
//!
//! The file holds what a holder needs to go on without the registry: the node id, owner
//! token and epoch; the mark the registry reserved; the lease's local deadline on the
//! host's boot clock, with the boot id; and a local mark, kept a little ahead of the clock
//! and synced to disk before IDs up to it are issued. A process that resumes issues above
//! the local mark and up to the earlier of the reserved mark and the deadline: IDs the
//! registry has already reserved for this claim, so the next holder is kept above them as
//! before, and no clock assumption is added.
//!
//! The same rules as the embedded registry: a directory only its owner can change, no
//! symbolic links, atomic replaces, and one live process per file, by a lock on a file
//! beside it (`<file>.lock`). The lock file also counts the writes, and the state file
//! records the lock file's change time after each count, which the kernel sets and no
//! restore can set back. A state file that does not carry the lock file's count and change
//! time, or names another lock file, is a copy, a hard link left behind or a restored
//! backup (of one file or both): its local mark may be older than what was issued under
//! it, so it is not resumed. The one exception is a write cut short between the count and
//! the file's replacement (a process killed there): the count also names the file it
//! replaces, by inode and change time, and that file, still in place, is the latest whole
//! one, since nothing is issued under a write before it returns.
//!
//! [`LeaseConfig::state_file`]: crate::LeaseConfig::state_file

use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::dir_lock::DirLock;
use crate::host_clock::{boot_id, host_now_ms};
use crate::witness::{FileStamp, Witness};
use crate::{private_dir, LeaseError};

/// How far ahead of the clock the local mark is kept under a lease of `ttl`: a tenth of
/// it, within 100 ms to 2 s. A process resumed after a crash waits at most this long for
/// its clock to pass the mark.
pub(crate) fn local_ahead(ttl: Duration) -> Duration {
    (ttl / 10).clamp(Duration::from_millis(100), Duration::from_secs(2))
}

/// How often the local mark is moved on: four times before the clock could reach it.
pub(crate) fn local_every(ttl: Duration) -> Duration {
    local_ahead(ttl) / 4
}

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The lock file's write count when this was written.
    pub generation: u64,
    /// The lock file's device and inode: a copy of the state file beside another lock
    /// file is not this one.
    pub lock_file: (u64, u64),
    /// The lock file's change time (ns) once this write's count was in it: a lock file
    /// written since, or restored, has another.
    #[serde(default)]
    pub lock_changed_ns: u64,
    /// The registry's locator ([`Registry::locator`](crate::Registry::locator)): the claim
    /// is resumed only on the same registry.
    pub registry: String,
    /// The layout's node count.
    pub node_count: u64,
    /// The node id last held: a fresh claim asks for it first.
    pub node_id: u64,
    /// The claim, while one is held (`None` once released or lost).
    pub claim: Option<SavedClaim>,
}

/// A claim as the file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SavedClaim {
    /// The owner token (a secret: the file is its owner's only).
    pub token: String,
    /// The claim's fencing epoch.
    pub epoch: u64,
    /// The boot the deadline was taken on.
    pub boot_id: String,
    /// The lease's local deadline on the host's boot clock, ms.
    pub deadline_boot_ms: u64,
    /// The mark the registry holds for the claim (Unix ms).
    pub reserved_ms: u64,
    /// Nothing above this (Unix ms) was issued under the claim.
    pub local_mark_ms: u64,
}

/// A claim that may be resumed now, with its deadline on this process's monotonic clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resumable {
    pub node_id: u64,
    pub claim: SavedClaim,
    pub deadline: Instant,
}

/// The open, locked state file of one live process.
pub(crate) struct StateFile {
    path: PathBuf,
    lock: DirLock,
    lock_file: (u64, u64),
    generation: u64,
    /// This boot's id, which every saved claim carries.
    boot_id: String,
    /// The node id the file last named: a fresh claim asks for it first.
    node_id: Option<u64>,
    /// The file in place, if it is the latest whole one: the next count names it.
    latest: Option<FileStamp>,
}

impl std::fmt::Debug for StateFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl StateFile {
    /// Locks the state file at `path` for this process, and reads what it holds.
    ///
    /// `Ok((file, None))` if there is nothing to go on (no file, or one that is not this
    /// lock file's latest: then `why_not` says why, for the start's report).
    ///
    /// # Errors
    /// [`LeaseError::StateFile`] if the directory or the file cannot be trusted (another
    /// owner, writable by others, a link), another live process holds the lock, or the
    /// file is unreadable.
    pub fn open(
        path: &Path,
        why_not: &mut dyn FnMut(&str),
    ) -> Result<(StateFile, Option<Saved>), LeaseError> {
        let fail = |detail: String| LeaseError::StateFile {
            path: path.display().to_string(),
            detail,
        };
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        if path.file_name().is_none() || path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(fail("names a directory, not a file".into()));
        }
        private_dir::prepare(dir).map_err(fail)?;
        let lock_path = lock_path(path);
        let lock = DirLock::acquire(&lock_path, Duration::ZERO).map_err(|e| {
            fail(match e.kind() {
                std::io::ErrorKind::TimedOut => format!(
                    "another live process holds it (its lock {} is taken): one process \
                     per state file",
                    lock_path.display()
                ),
                _ => format!("cannot lock {}: {}", lock_path.display(), link_said(&e)),
            })
        })?;
        let meta = lock.file().metadata().map_err(|e| fail(e.to_string()))?;
        let lock_file = (meta.dev(), meta.ino());
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me || meta.permissions().mode() & 0o077 != 0 {
            return Err(fail(format!(
                "its lock file {} belongs to uid {} with mode {:o}: it must be ours (uid \
                 {me}) and private (chmod 600), since it vouches for the state file",
                lock_path.display(),
                meta.uid(),
                meta.permissions().mode() & 0o7777
            )));
        }
        let lock_changed_ns =
            crate::witness::change_time_ns(lock.file()).map_err(|e| fail(e.to_string()))?;
        let boot_id = boot_id().map_err(|e| fail(format!("cannot read this boot's id: {e}")))?;
        let witness = Witness::read(lock.file())
            .map_err(|e| fail(e.to_string()))?
            .unwrap_or_default();
        let generation = witness.generation;
        let mut file = StateFile {
            path: path.to_owned(),
            lock,
            lock_file,
            generation,
            boot_id,
            node_id: None,
            latest: None,
        };
        let saved = file.read().map_err(fail)?;
        let stamp = FileStamp::of_path(path).map_err(|e| fail(e.to_string()))?;
        let saved = match saved {
            Some(saved) if saved.lock_file != lock_file => {
                why_not(&format!(
                    "state file {} was written beside another lock file (a copy, or its \
                     lock file was deleted or replaced): its claim is not resumed",
                    path.display()
                ));
                None
            }
            Some(saved)
                if (saved.generation == generation && saved.lock_changed_ns == lock_changed_ns)
                    || (stamp.is_some() && witness.replacing == stamp) =>
            {
                // The latest whole write, or the file a write cut short was to replace.
                Some(saved)
            }
            Some(_) => {
                why_not(&format!(
                    "state file {} is not the latest its lock file vouches for (a restored \
                     or left-behind copy, a lock file rewritten, or a write cut short): its \
                     claim is not resumed",
                    path.display(),
                ));
                None
            }
            None => None,
        };
        // Whatever was read, the next write starts from the lock file's count.
        file.generation = generation;
        file.node_id = saved.as_ref().map(|saved| saved.node_id);
        file.latest = saved.as_ref().and(stamp);
        Ok((file, saved))
    }

    /// Reads and checks the state file itself: owned by us, private, one link.
    fn read(&self) -> Result<Option<Saved>, String> {
        let Some(text) = private_dir::read_nofollow(&self.path)
            .map_err(|e| format!("cannot read it: {}", link_said(&e)))?
        else {
            return Ok(None);
        };
        let meta = std::fs::symlink_metadata(&self.path).map_err(|e| e.to_string())?;
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(format!(
                "it belongs to uid {}, not to us (uid {me}): refusing a claim someone else \
                 wrote",
                meta.uid()
            ));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "it is readable or writable by other users (mode {:o}): it holds the lease's \
                 owner token; make it private with chmod 600",
                meta.permissions().mode() & 0o7777
            ));
        }
        if meta.nlink() != 1 {
            return Err(format!(
                "it has {} hard links: another path could resume the same claim",
                meta.nlink()
            ));
        }
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("unreadable ({e}); move it aside to start afresh"))
    }

    /// Writes `saved` (its count, lock file and boot set here): the lock file's count first, then
    /// the state file, replaced whole and synced. Returns only once both are on disk.
    ///
    /// # Errors
    /// [`LeaseError::StateFile`] if either cannot be written.
    pub fn save(&mut self, saved: &mut Saved) -> Result<(), LeaseError> {
        self.count().map_err(|e| self.write_failed(e))?;
        self.replace(saved).map_err(|e| self.write_failed(e))
    }

    /// The first half of a write: the lock file's count, naming the file it replaces.
    fn count(&mut self) -> std::io::Result<()> {
        let generation = self.generation + 1;
        Witness {
            generation,
            replacing: self.latest.take(),
            ..Witness::default()
        }
        .write(self.lock.file())?;
        self.generation = generation;
        Ok(())
    }

    /// The second half: the state file, carrying the count, replaced whole and synced.
    fn replace(&mut self, saved: &mut Saved) -> std::io::Result<()> {
        saved.generation = self.generation;
        saved.lock_file = self.lock_file;
        if let Some(claim) = &mut saved.claim {
            claim.boot_id.clone_from(&self.boot_id);
        }
        saved.lock_changed_ns = crate::witness::change_time_ns(self.lock.file())?;
        let mut bytes = serde_json::to_vec_pretty(saved).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        private_dir::replace(&self.path, &bytes)?;
        self.node_id = Some(saved.node_id);
        if let Ok(dir) = File::open(self.path.parent().unwrap_or(Path::new("."))) {
            // The rename itself is durable only once the directory is synced.
            dir.sync_all()?;
        }
        self.latest = FileStamp::of_path(&self.path)?;
        Ok(())
    }

    fn write_failed(&self, e: std::io::Error) -> LeaseError {
        LeaseError::StateFile {
            path: self.path.display().to_string(),
            detail: format!("cannot write it: {e}"),
        }
    }

    /// The node id the file last named, if it can be trusted: what a fresh claim asks for
    /// first, so that a process that restarts keeps its id when it is free.
    pub fn node_id(&self) -> Option<u64> {
        self.node_id
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// An error opening a file, saying so when the path is a symbolic link (which is never
/// followed: whoever planted it could point it at another file).
fn link_said(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
        "it is a symbolic link, which is never followed; use the file itself".to_owned()
    } else {
        e.to_string()
    }
}

/// The lock file beside a state file: `<file>.lock`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

impl Saved {
    /// A file with no claim, keeping `node_id` to be asked for first.
    pub fn released(registry: &str, node_count: u64, node_id: u64) -> Saved {
        Saved {
            generation: 0,
            lock_file: (0, 0),
            lock_changed_ns: 0,
            registry: registry.to_owned(),
            node_count,
            node_id,
            claim: None,
        }
    }

    /// The claim, if it may be resumed now by a holder of the registry at `locator` with
    /// `node_count` ids: same registry and layout, same boot, deadline not passed.
    /// Otherwise why not.
    pub fn resumable(&self, locator: &str, node_count: u64) -> Result<Resumable, String> {
        let Some(claim) = &self.claim else {
            return Err("its claim was released".into());
        };
        if self.registry != locator {
            return Err(format!(
                "it holds a claim on another registry ({}), not this one ({locator})",
                self.registry
            ));
        }
        if self.node_count != node_count {
            return Err(format!(
                "it holds a claim among {} node ids, not {node_count}",
                self.node_count
            ));
        }
        let boot = boot_id().map_err(|e| format!("cannot read this boot's id: {e}"))?;
        if claim.boot_id != boot {
            return Err("its claim was taken before the host last booted".into());
        }
        let (now, at) = (host_now_ms(), Instant::now());
        let left = claim.deadline_boot_ms.saturating_sub(now);
        if left == 0 {
            return Err("its claim's deadline has passed".into());
        }
        Ok(Resumable {
            node_id: self.node_id,
            claim: claim.clone(),
            deadline: at + Duration::from_millis(left),
        })
    }
}

/// The deadline `left` from now, on the host's boot clock (ms, rounded down so that it
/// never moves later).
pub(crate) fn boot_deadline_ms(left: Duration) -> u64 {
    host_now_ms().saturating_add(crate::protocol::ms(left))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(claim: Option<SavedClaim>) -> Saved {
        Saved {
            generation: 0,
            lock_file: (0, 0),
            lock_changed_ns: 0,
            registry: "embedded".into(),
            node_count: 1024,
            node_id: 7,
            claim,
        }
    }

    fn claim(left_ms: u64) -> SavedClaim {
        SavedClaim {
            token: "t".into(),
            epoch: 1,
            boot_id: boot_id().unwrap(),
            deadline_boot_ms: host_now_ms() + left_ms,
            reserved_ms: 10,
            local_mark_ms: 5,
        }
    }

    /// A state file saved twice by a process that then ended: its folder, its path, and
    /// the contents of the first save.
    fn saved_twice() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.state");
        let (mut file, _) = StateFile::open(&path, &mut |_| {}).unwrap();
        file.save(&mut saved(Some(claim(60_000)))).unwrap();
        let older = std::fs::read(&path).unwrap();
        file.save(&mut saved(Some(claim(60_000)))).unwrap();
        (dir, path, older)
    }

    /// Opens `path` as the next process would, which must resume nothing; why not.
    fn not_resumed(path: &Path) -> String {
        let mut said = String::new();
        let (_file, read) = StateFile::open(path, &mut |why| said = why.to_owned()).unwrap();
        assert_eq!(read, None);
        said
    }

    #[test]
    fn a_saved_claim_reads_back_for_the_next_process_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.state");
        let (mut file, none) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(none, None);
        let mut written = saved(Some(claim(60_000)));
        file.save(&mut written).unwrap();
        let busy = StateFile::open(&path, &mut |_| {}).unwrap_err();
        assert!(busy.to_string().contains("another live process"), "{busy}");
        drop(file);
        let (_file, read) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(read, Some(written));
    }

    #[test]
    fn a_copy_or_an_older_version_is_not_resumed() {
        let (dir, path, older) = saved_twice();

        // The older version put back: the lock file has counted past it.
        std::fs::write(&path, &older).unwrap();
        let said = not_resumed(&path);
        assert!(said.contains("not the latest"), "{said}");

        // A copy beside another lock file.
        let copy = dir.path().join("copy.state");
        std::fs::copy(&path, &copy).unwrap();
        let said = not_resumed(&copy);
        assert!(said.contains("another lock file"), "{said}");
    }

    #[test]
    fn a_write_cut_short_after_its_count_leaves_the_file_it_was_to_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.state");
        let (mut file, _) = StateFile::open(&path, &mut |_| {}).unwrap();
        let mut whole = saved(Some(claim(60_000)));
        file.save(&mut whole).unwrap();
        let copy = std::fs::read(&path).unwrap();
        // Killed between the count and the replacement, twice in a row.
        file.count().unwrap();
        drop(file);
        let (mut file, read) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(read.as_ref(), Some(&whole));
        file.count().unwrap();
        drop(file);
        let (mut file, read) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(read.as_ref(), Some(&whole));

        // The same contents put back after a cut: another file, not resumed.
        file.count().unwrap();
        drop(file);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &copy).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let said = not_resumed(&path);
        assert!(said.contains("not the latest"), "{said}");
    }

    #[test]
    fn a_cut_after_opening_a_file_not_resumed_vouches_for_nothing() {
        let (_dir, path, older) = saved_twice();
        std::fs::write(&path, &older).unwrap();
        let (mut file, read) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(read, None);
        file.count().unwrap();
        drop(file);
        let (_file, read) = StateFile::open(&path, &mut |_| {}).unwrap();
        assert_eq!(read, None, "the older copy is still not the latest");
    }

    #[test]
    fn a_lock_file_not_ours_alone_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.state");
        drop(StateFile::open(&path, &mut |_| {}).unwrap());
        let lock = lock_path(&path);
        std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o666)).unwrap();
        let open = StateFile::open(&path, &mut |_| {}).unwrap_err();
        assert!(open.to_string().contains("its lock file"), "{open}");
    }

    #[test]
    fn a_shared_or_linked_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease.state");
        let (mut file, _) = StateFile::open(&path, &mut |_| {}).unwrap();
        file.save(&mut saved(Some(claim(60_000)))).unwrap();
        drop(file);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = StateFile::open(&path, &mut |_| {}).unwrap_err();
        assert!(open.to_string().contains("chmod 600"), "{open}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::hard_link(&path, dir.path().join("other.state")).unwrap();
        let linked = StateFile::open(&path, &mut |_| {}).unwrap_err();
        assert!(linked.to_string().contains("hard links"), "{linked}");
    }

    #[test]
    fn only_a_live_claim_of_the_same_registry_and_layout_resumes() {
        assert!(saved(Some(claim(60_000)))
            .resumable("embedded", 1024)
            .is_ok());
        let stale = saved(Some(claim(0)))
            .resumable("embedded", 1024)
            .unwrap_err();
        assert!(stale.contains("deadline has passed"), "{stale}");
        assert!(saved(None).resumable("embedded", 1024).is_err());
        assert!(saved(Some(claim(60_000))).resumable("redis", 1024).is_err());
        assert!(saved(Some(claim(60_000)))
            .resumable("embedded", 16)
            .is_err());
        let mut rebooted = claim(60_000);
        rebooted.boot_id = "another boot".into();
        let other = saved(Some(rebooted))
            .resumable("embedded", 1024)
            .unwrap_err();
        assert!(other.contains("booted"), "{other}");
    }
}
