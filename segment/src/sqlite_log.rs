//! A write-ahead log left beside a name must belong to the table file's present. SQLite
//! replays whatever `-wal` lies beside the name a file is opened by, and checks only that
//! its page size fits. A process killed between a commit and its checkpoint leaves such a
//! log; if the file is then written under another name (renamed, or reached by a link) and
//! later opened by the first name again, the old log would lay old rows over newer ones and
//! ranges would be issued twice.
//!
//! Every change records a commit in the file: a generation that counts commits and a random
//! nonce, the last `KEPT` of them kept, beside a random file id kept for the file's life.
//! Before opening, the last commit is read from the table file alone (SQLite's `immutable`
//! mode does not look at the log); after opening, the log is accepted only if the commits
//! it shows include that one: the log then continues the file's own history. A log that
//! does not (a branch the file left when it moved on under another name) is refused. Such a
//! log holds nothing that was handed out: a range leaves the store only once the table file
//! records it (`sqlite::checkpoint`), so the refusal loses nothing.
//!
//! Only the last `KEPT` commits are kept, so the log may run at most that far ahead of the
//! file. A store never lets it run further: a change whose copy into the file did not finish
//! (a reader held an old snapshot) is the last one until the file has caught up
//! (`sqlite::caught_up`), so the log is at most one commit of each store ahead, however many
//! commits other stores make between two of a store's changes.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::SegmentError;

/// How many commits the file keeps: a log further ahead of the file than this cannot be
/// told from a stale one, and is refused. The stores never leave one so far ahead; a writer
/// that does not copy each commit into the file (an older version, a hand-run session with
/// checkpoints off) can.
const KEPT: i64 = 256;

/// Created with the table.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS ferroflake_file (
    id         integer PRIMARY KEY CHECK (id = 1),
    file_id    bigint  NOT NULL
);
INSERT INTO ferroflake_file (id, file_id)
    SELECT 1, random() WHERE NOT EXISTS (SELECT 1 FROM ferroflake_file);
CREATE TABLE IF NOT EXISTS ferroflake_commits (
    generation integer PRIMARY KEY,
    nonce      bigint  NOT NULL
);
INSERT INTO ferroflake_commits (generation, nonce)
    SELECT 0, random() WHERE NOT EXISTS (SELECT 1 FROM ferroflake_commits)";

/// Run in every transaction that changes the table, before it commits. The statements are
/// kept prepared on the connection: this is on every allocation's path.
pub(crate) fn record_commit(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO ferroflake_commits (generation, nonce)
         SELECT max(generation) + 1, random() FROM ferroflake_commits",
    )?
    .execute([])?;
    tx.prepare_cached(
        "DELETE FROM ferroflake_commits
         WHERE generation <= (SELECT max(generation) FROM ferroflake_commits) - ?1",
    )?
    .execute(params![KEPT])?;
    Ok(())
}

/// The id the file keeps for its life, as a store identity: `sqlite-file <id>`.
pub(crate) fn identity(conn: &Connection) -> rusqlite::Result<String> {
    let id: i64 = conn.query_row(
        "SELECT file_id FROM ferroflake_file WHERE id = 1",
        [],
        |row| row.get(0),
    )?;
    Ok(format!("sqlite-file {id:016x}"))
}

/// The file's id and its last commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LastCommit {
    file_id: i64,
    generation: i64,
    nonce: i64,
}

/// What the table file alone records of its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileHistory {
    /// No commit: a new file, or one whose record was lost (written before commits were
    /// recorded, or edited by hand).
    Unrecorded,
    /// The last commit, as the last checkpoint left it.
    Last(LastCommit),
}

/// The table file's history, read from the file alone.
pub(crate) fn in_file(real: &Path) -> Result<FileHistory, SegmentError> {
    if std::fs::metadata(real).map(|m| m.len()).unwrap_or(0) == 0 {
        return Ok(FileHistory::Unrecorded);
    }
    let uri = format!("file:{}?immutable=1", uri_path(real));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags).map_err(|e| refused(real, e))?;
    let last = last_commit(&conn).map_err(|e| refused(real, e))?;
    Ok(last.map_or(FileHistory::Unrecorded, FileHistory::Last))
}

/// Whether the log beside `real`, as `conn` sees the table through it, continues the
/// file's history. A log beside a file that records none is refused unless it is empty:
/// there is nothing to tell it from a stale one by.
pub(crate) fn check(real: &Path, conn: &Connection, file: FileHistory) -> Result<(), SegmentError> {
    let file = match file {
        FileHistory::Last(file) => file,
        FileHistory::Unrecorded => {
            let log = format!("{}-wal", real.display());
            return match std::fs::metadata(&log).map(|m| m.len()) {
                Ok(1..) => Err(stale(
                    real,
                    "the table file records no commits to check it by",
                )),
                _ => Ok(()),
            };
        }
    };
    let continues = match last_commit(conn) {
        Ok(Some(log)) if log.file_id == file.file_id => conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM ferroflake_commits
                                WHERE generation = ?1 AND nonce = ?2)",
                params![file.generation, file.nonce],
                |r| r.get::<_, bool>(0),
            )
            .map_err(|e| stale(real, &format!("the table cannot be read through it: {e}")))?,
        Ok(_) => false,
        Err(e) => {
            return Err(stale(
                real,
                &format!("the table cannot be read through it: {e}"),
            ))
        }
    };
    if continues {
        return Ok(());
    }
    Err(stale(
        real,
        &format!(
            "it does not continue the table file's history (or is more than {KEPT} commits \
             ahead of it, which only a writer that does not copy its commits into the file \
             leaves)"
        ),
    ))
}

/// The refusal of the log beside `real`, and why.
fn stale(real: &Path, why: &str) -> SegmentError {
    SegmentError::Store {
        store: "sqlite".into(),
        detail: format!(
            "{}-wal is refused: {why}. A log is left so by a process stopped while it used \
             this name, the file written since under another name; replaying it would bring \
             back old rows. Nothing in it was handed out: with no process using the file, \
             move it (and the -shm beside it) away and open again",
            real.display()
        ),
    }
}

fn last_commit(conn: &Connection) -> rusqlite::Result<Option<LastCommit>> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'
         AND name IN ('ferroflake_file', 'ferroflake_commits')",
        [],
        |r| r.get(0),
    )?;
    if tables < 2 {
        return Ok(None);
    }
    let row: Option<(Option<i64>, i64, i64)> = conn
        .query_row(
            "SELECT (SELECT file_id FROM ferroflake_file WHERE id = 1), generation, nonce
             FROM ferroflake_commits ORDER BY generation DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(row.and_then(|(file_id, generation, nonce)| {
        Some(LastCommit {
            file_id: file_id?,
            generation,
            nonce,
        })
    }))
}

fn refused(real: &Path, e: rusqlite::Error) -> SegmentError {
    SegmentError::Unavailable {
        store: "sqlite".into(),
        detail: format!("cannot read the table file {}: {e}", real.display()),
    }
}

/// `path` as a URI path: every byte outside the unreserved set and `/` percent-encoded, so
/// `?`, `#` and `%` in a file name stay part of it.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_keep_query_characters_in_the_name() {
        assert_eq!(
            uri_path(Path::new("/tmp/a b/ids?mode=ro#1%.db")),
            "/tmp/a%20b/ids%3Fmode%3Dro%231%25.db"
        );
    }
}
