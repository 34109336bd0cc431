//! A write-ahead log left beside a name must belong to the table file's present. SQLite
//! replays whatever `-wal` lies beside the name a file is opened by, and checks only that
//! its page size fits. A process killed between a commit and its checkpoint leaves such a
//! log; if the file is then written under another name (renamed, or reached by a link) and
//! later opened by the first name again, the old log would lay old rows over newer ones and
//! ranges would be issued twice.
//!
//! Every change stamps the file: a random file id kept for its life, a generation that
//! counts commits, and a random nonce per commit. Before opening, the stamp is read from the
//! table file alone (SQLite's `immutable` mode does not look at the log); after opening,
//! through the log. The log belongs if it is the same commit or a later one of the same file.
//! A log that does not is never needed: a range leaves the store only once the table file
//! records it (`sqlite::checkpoint`), so the refusal loses nothing that was handed out.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::SegmentError;

/// Created with the table; one row.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS ferroflake_file (
    id         integer PRIMARY KEY CHECK (id = 1),
    file_id    bigint  NOT NULL,
    generation bigint  NOT NULL,
    nonce      bigint  NOT NULL
);
INSERT INTO ferroflake_file (id, file_id, generation, nonce)
    SELECT 1, random(), 0, random() WHERE NOT EXISTS (SELECT 1 FROM ferroflake_file)";

/// Run in every transaction that changes the table, before it commits.
pub(crate) const STAMP: &str =
    "UPDATE ferroflake_file SET generation = generation + 1, nonce = random() WHERE id = 1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    file_id: i64,
    generation: i64,
    nonce: i64,
}

/// The stamp in the table file alone, as the last checkpoint left it; `None` for a new file
/// or one written before stamps existed.
pub(crate) fn in_file(real: &Path) -> Result<Option<Stamp>, SegmentError> {
    if std::fs::metadata(real).map(|m| m.len()).unwrap_or(0) == 0 {
        return Ok(None);
    }
    let uri = format!("file:{}?immutable=1", uri_path(real));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags).map_err(|e| refused(real, e))?;
    read(&conn).map_err(|e| refused(real, e))
}

/// The stamp as `conn` sees it, through the log.
pub(crate) fn through_log(conn: &Connection) -> rusqlite::Result<Option<Stamp>> {
    read(conn)
}

/// Whether the log beside `real` may be used, given the stamps before and after it.
pub(crate) fn check(
    real: &Path,
    file: Option<Stamp>,
    log: Option<Stamp>,
) -> Result<(), SegmentError> {
    let Some(file) = file else { return Ok(()) };
    let belongs = log.is_some_and(|log| {
        log.file_id == file.file_id && (log == file || log.generation > file.generation)
    });
    if belongs {
        return Ok(());
    }
    Err(SegmentError::Store {
        store: "sqlite".into(),
        detail: format!(
            "{}-wal is older than the table file: it was left by a process killed while it \
             used this name, and the file has since been written under another name. \
             Replaying it would bring back old rows. Nothing in it was handed out: with no \
             process using the file, move it (and the -shm beside it) away and open again",
            real.display()
        ),
    })
}

fn read(conn: &Connection) -> rusqlite::Result<Option<Stamp>> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ferroflake_file')",
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(None);
    }
    conn.query_row(
        "SELECT file_id, generation, nonce FROM ferroflake_file WHERE id = 1",
        [],
        |r| {
            Ok(Stamp {
                file_id: r.get(0)?,
                generation: r.get(1)?,
                nonce: r.get(2)?,
            })
        },
    )
    .optional()
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
