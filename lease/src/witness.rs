//! The embedded registry's write count, kept in the lock file beside the records.
//!
//! Every write of the records raises a count that is written to both the records and the
//! lock file, lock file first. A records file that does not carry the lock file's count
//! is not the registry's latest state: it was replaced (by an empty or an older copy),
//! restored from a backup, or the lock file itself was deleted. Nobody can tell from the
//! records what was lost, so the registry treats it as lost records and starts a floor.
//!
//! The count alone misses an edit that keeps it: a record deleted or changed by hand in a
//! file that stays valid. The lock file therefore also carries a digest of the records as
//! the registry last wrote them ([`digest`]); records that do not match it were written by
//! someone else, and count as lost too.
//!
//! The lock file also keeps the longest lost-records window any holder asked for, so a
//! floor after lost records still covers a holder with a longer TTL than the claimant's.
//!
//! A holder's state file (`state_file`) uses the same count, and also records which file
//! its write replaces ([`FileStamp`]), so that a crash between the count and the file's
//! replacement leaves a file that can still be told apart from a restored one.

use std::fs::File;
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};

/// What the lock file records.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// The count of the last write of the records.
    pub generation: u64,
    /// The longest lost-records window (max_ttl + quarantine) any claim asked for, in ms.
    pub floor_window_ms: u64,
    /// The [`digest`] of the records written with `generation`; `None` in a lock file an
    /// earlier version wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<u64>,
    /// The file that the write counted here replaces, as it was when counted: if the
    /// write is cut short, that file is still the latest whole one. `None` when there is
    /// none to vouch for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacing: Option<FileStamp>,
}

/// One file as the kernel names it at one moment: device, inode and change time. A copy, a
/// restore, a rename, a link or a write gives another, so no file but the one stamped
/// carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub dev: u64,
    pub ino: u64,
    pub changed_ns: u64,
}

impl FileStamp {
    /// The stamp of the file at `path` (not following a link), `None` if there is none.
    ///
    /// # Errors
    /// The path cannot be stat'ed for another reason.
    pub fn of_path(path: &std::path::Path) -> std::io::Result<Option<FileStamp>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(Some(FileStamp::of(&meta))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn of(meta: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }
}

fn ns(seconds: i64, nanos: i64) -> u64 {
    let seconds = u64::try_from(seconds).unwrap_or(0);
    let nanos = u64::try_from(nanos).unwrap_or(0);
    seconds.saturating_mul(1_000_000_000).saturating_add(nanos)
}

impl Witness {
    /// Reads the witness from the locked file: `Some(default)` for an empty file (a new
    /// lock file, or one an earlier version left), `None` if its contents are unreadable.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn read(file: &File) -> std::io::Result<Option<Witness>> {
        let len = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
        if len == 0 {
            return Ok(Some(Witness::default()));
        }
        if len > 4096 {
            return Ok(None);
        }
        let mut bytes = vec![0; len];
        file.read_exact_at(&mut bytes, 0)?;
        Ok(serde_json::from_slice(&bytes).ok())
    }

    /// Writes the witness over the file's contents and syncs it, before the records it
    /// vouches for are written: a crash in between leaves a count the records lack, which
    /// reads as lost records (a floor), never the other way round.
    ///
    /// # Errors
    /// The file cannot be written or synced.
    pub fn write(&self, file: &File) -> std::io::Result<()> {
        let mut bytes = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        file.write_all_at(&bytes, 0)?;
        file.set_len(bytes.len() as u64)?;
        file.sync_data()
    }
}

/// FNV-1a (64-bit) of `bytes`: a digest against edits made by hand or by tools, not
/// against an adversary who can also rewrite the lock file (its change time gives that
/// away, see `Records::lock_ctime_ns`).
pub fn digest(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

/// The file's change time in ns: set by the kernel on every write, rename or link, and by
/// no tool that restores files (`cp -a`, `tar`, `rsync -t` set the modification time).
///
/// # Errors
/// The file cannot be stat'ed.
pub fn change_time_ns(file: &File) -> std::io::Result<u64> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    Ok(ns(meta.ctime(), meta.ctime_nsec()))
}

#[cfg(test)]
mod tests {
    use super::{digest, Witness};

    #[test]
    fn digests_are_fnv_1a() {
        // The published FNV-1a 64 test values.
        assert_eq!(digest(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(digest(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(digest(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn round_trips_and_reads_garbage_as_unknown() {
        let file = tempfile::tempfile().unwrap();
        assert_eq!(Witness::read(&file).unwrap(), Some(Witness::default()));
        let long = Witness {
            generation: 123_456_789,
            floor_window_ms: 32_000,
            digest: Some(u64::MAX),
            replacing: Some(super::FileStamp {
                dev: 1,
                ino: 2,
                changed_ns: 3,
            }),
        };
        long.write(&file).unwrap();
        let short = Witness {
            generation: 7,
            floor_window_ms: 1,
            digest: Some(5),
            replacing: None,
        };
        short.write(&file).unwrap();
        assert_eq!(
            Witness::read(&file).unwrap(),
            Some(short),
            "no tail of the longer one"
        );
        let earlier = br#"{"generation":7,"floor_window_ms":1}"#;
        file.set_len(0).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, earlier, 0).unwrap();
        assert_eq!(
            Witness::read(&file).unwrap(),
            Some(Witness {
                digest: None,
                ..short
            }),
            "an earlier version's lock file"
        );
        std::os::unix::fs::FileExt::write_all_at(&file, b"garbage", 0).unwrap();
        assert_eq!(Witness::read(&file).unwrap(), None);
    }
}
