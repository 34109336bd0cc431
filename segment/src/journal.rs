//! A small private file kept as a journal of lines: each change is appended and synced once
//! (`fdatasync`), and the file is written whole (beside it, then renamed into place) only
//! when it is new or has grown well past what it holds. An append costs one sync where a
//! rewrite costs two and a rename: on a fast store, that was most of the cost of a range.
//!
//! A crash during an append can leave a last line without its newline. Nothing was answered
//! from it (its sync had not returned), so it is left out when the file is read, and cut off
//! before the next append; a line that is whole but wrong is the reader's to refuse.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Lines a journal may hold beyond the ones its state needs before it is written whole.
const SLACK_LINES: usize = 64;

/// A journal as read: its complete lines.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    /// The complete lines, each with its newline.
    text: String,
    /// The file's length when read: past `text` when a last line was cut short; `None`
    /// when there is no file yet.
    file_len: Option<u64>,
}

impl Journal {
    /// Reads the journal at `path`: empty if there is none.
    ///
    /// # Errors
    /// The file cannot be read, or is not a regular file of this user's (see
    /// [`open_private`]).
    pub(crate) fn read(path: &Path) -> io::Result<Journal> {
        let mut raw = Vec::new();
        let file_len = match open_private(path, false) {
            Ok(mut file) => {
                file.read_to_end(&mut raw)?;
                Some(raw.len() as u64)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let complete = raw.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        raw.truncate(complete);
        let text = String::from_utf8(raw)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a line that is not UTF-8"))?;
        Ok(Journal {
            path: path.to_owned(),
            text,
            file_len,
        })
    }

    /// The complete lines.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Adds `lines` (each ending in a newline) to the journal, synced before this returns;
    /// or, for a new file or one that would hold more than `needed` lines plus some slack,
    /// writes `whole()` (the state in full) in its place.
    ///
    /// # Errors
    /// The file cannot be written or synced.
    pub(crate) fn append(
        &self,
        lines: &str,
        needed: usize,
        whole: impl FnOnce() -> String,
    ) -> io::Result<()> {
        let held = self.text.bytes().filter(|&b| b == b'\n').count();
        let added = lines.bytes().filter(|&b| b == b'\n').count();
        let Some(file_len) = self.file_len else {
            return replace(&self.path, &whole());
        };
        if held + added > needed + SLACK_LINES {
            return replace(&self.path, &whole());
        }
        let mut file = open_private(&self.path, true)?;
        let complete = self.text.len() as u64;
        if file_len != complete || file.metadata()?.len() != complete {
            file.set_len(complete)?;
        }
        file.seek(SeekFrom::Start(complete))?;
        file.write_all(lines.as_bytes())?;
        file.sync_data()
    }
}

/// Writes `path` whole: beside it first, synced, then renamed into place, the directory
/// synced.
pub(crate) fn replace(path: &Path, text: &str) -> io::Result<()> {
    let next = path.with_extension("next");
    let _ = fs::remove_file(&next);
    let mut file = open_private(&next, true)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs::rename(&next, path)?;
    File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()
}

/// Opens `path` read-only (or read-write, created mode 0600), never through a symbolic
/// link, and only if it is a regular file of the caller's.
pub(crate) fn open_private(path: &Path, write: bool) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .create(write)
        .mode(0o600)
        // NONBLOCK: a FIFO planted at the path would block the open (and the store's lock
        // held around it) until a writer came; on a regular file it changes nothing.
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != rustix::process::getuid().as_raw() {
        return Err(io::Error::other(
            "not a regular file of this user: refusing a record someone else controls",
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(dir: &Path) -> Journal {
        Journal::read(&dir.join("j")).unwrap()
    }

    #[test]
    fn a_fifo_in_place_of_the_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let error = Journal::read(&path).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(open_private(&path, true).is_err());
    }

    #[test]
    fn appends_after_the_first_whole_write_and_rewrites_past_the_slack() {
        let dir = tempfile::tempdir().unwrap();
        journal(dir.path())
            .append("a\n", 1, || "whole\n".into())
            .unwrap();
        assert_eq!(
            journal(dir.path()).text(),
            "whole\n",
            "a new file is written whole"
        );
        for i in 0..SLACK_LINES {
            let line = format!("{i}\n");
            journal(dir.path())
                .append(&line, 1, || unreachable!())
                .unwrap();
        }
        assert_eq!(journal(dir.path()).text().lines().count(), 1 + SLACK_LINES);
        journal(dir.path())
            .append("x\n", 1, || "compact\n".into())
            .unwrap();
        assert_eq!(journal(dir.path()).text(), "compact\n");
    }

    #[test]
    fn a_last_line_cut_short_is_left_out_and_cut_off_before_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        fs::write(&path, "one\ntwo\nthr").unwrap();
        let read = journal(dir.path());
        assert_eq!(read.text(), "one\ntwo\n");
        read.append("three\n", 10, || unreachable!()).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
    }
}
