//! The embedded default store: Leaf's table in a SQLite file, shared by the processes of one
//! host. Every change runs in a `BEGIN IMMEDIATE` transaction (the write lock is taken
//! before the row is read, so two processes never both read the old `max_id`), with a busy
//! timeout, in WAL mode, by one name at a time (`sqlite_name`), with a log that belongs to
//! the file (`sqlite_log`).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};

use crate::marks::{recovered_max_id, recreated_below_mark, row_below_mark, row_gone};
use crate::private_dir::{private_dir, trusted_file};
use crate::sqlite_log;
use crate::sqlite_name::{self, NameClaim};
use crate::store::{check_create, check_give_back, check_key, check_step, range_after};
use crate::{Allocation, KeyRecord, Range, SegmentError, SegmentStore, MAX_TABLE_ID};

/// How long a call waits for another process's write lock before it counts as unavailable.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS leaf_alloc (
    biz_tag     varchar(128) NOT NULL PRIMARY KEY,
    max_id      bigint       NOT NULL DEFAULT 1,
    step        int          NOT NULL,
    description varchar(256),
    update_time timestamp    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS leaf_alloc_marks (
    biz_tag varchar(128) NOT NULL PRIMARY KEY,
    high    bigint       NOT NULL
)";

/// A [`SegmentStore`] over a SQLite file (Leaf's `leaf_alloc` table).
pub struct SqliteStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    busy_timeout: Duration,
    /// The table file by the name it was opened through, and its device and inode then.
    file: PathBuf,
    file_id: (u64, u64),
    /// The `-shm` beside the name, and its device and inode when the store opened.
    shm: PathBuf,
    shm_id: (u64, u64),
    /// The random id the file keeps for its life (`ferroflake_file`), copies included.
    identity: String,
    // After `conn`: fields drop in order, and the name stays claimed until the connection
    // has closed.
    name: NameClaim,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish()
    }
}

impl SqliteStore {
    /// The per-user default file: `segments.db` in ferroflake's state directory,
    /// `/var/lib/ferroflake` for root, else `~/.local/state/ferroflake`: a directory the
    /// OS does not clean, unlike `/var/tmp`
    /// (created mode 0700; it must belong to the caller).
    /// Without a state directory ([`state_dir`](crate::state_dir)) the path is shown as
    /// `$HOME/.local/state/ferroflake/segments.db`, and [`open_default`](Self::open_default)
    /// refuses.
    pub fn default_path() -> PathBuf {
        crate::state_dir::state_dir()
            .unwrap_or_else(|| PathBuf::from("$HOME/.local/state/ferroflake"))
            .join("segments.db")
    }

    /// Opens (or creates) the store at [`default_path`](Self::default_path).
    ///
    /// # Errors
    /// [`SegmentError::Unavailable`] if the directory cannot be made or trusted, or the file
    /// cannot be opened; also while the default file of earlier versions,
    /// `/var/tmp/ferroflake-segments-<uid>/segments.db`, is there and the new one is not: a
    /// new table beside it would start its keys again.
    pub fn open_default() -> Result<Self, SegmentError> {
        let uid = rustix::process::getuid().as_raw();
        let earlier = PathBuf::from(format!("/var/tmp/ferroflake-segments-{uid}/segments.db"));
        let path = crate::state_dir::required_state_dir("sqlite")?.join("segments.db");
        Self::open_default_in(&path, &earlier)
    }

    /// [`open_default`](Self::open_default) with the new and the earlier default named.
    fn open_default_in(path: &Path, earlier: &Path) -> Result<Self, SegmentError> {
        if earlier.exists() && !path.exists() {
            return Err(SegmentError::Unavailable {
                store: "sqlite".into(),
                detail: format!(
                    "the default table moved from {} (a directory the OS may clean) to {}; \
                     stop the processes using it, then move it there with its -wal and -shm \
                     files, or name it with --store: a new table beside it would start its \
                     keys again",
                    earlier.display(),
                    path.display()
                ),
            });
        }
        if let Some(dir) = path.parent() {
            private_dir(dir, "sqlite")?;
        }
        Self::open(path)
    }

    /// Opens (or creates) a store in the file `path`, with the table if it is missing.
    ///
    /// # Errors
    /// [`SegmentError::Unavailable`] if the file cannot be opened or set up, or is reached
    /// by another name than a store open on it uses; [`SegmentError::InvalidConfig`] if
    /// `path` is not a regular file; [`SegmentError::Store`] if the write-ahead log beside
    /// it does not continue the file's history (`sqlite_log`).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SegmentError> {
        Self::open_with_timeout(path, DEFAULT_BUSY_TIMEOUT)
    }

    /// [`open`](Self::open), waiting up to `busy_timeout` for other processes' locks.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_with_timeout(
        path: impl AsRef<Path>,
        busy_timeout: Duration,
    ) -> Result<Self, SegmentError> {
        let path = path.as_ref().to_owned();
        // SQLite would open a device or a pipe, and make its journal beside it (`/dev/null`
        // gets a `/dev/null-journal`).
        if fs::metadata(&path).is_ok_and(|meta| !meta.is_file()) {
            return Err(SegmentError::InvalidConfig {
                detail: format!(
                    "{} is not a regular file: the table needs a file of its own",
                    path.display()
                ),
            });
        }
        trusted_file(&path, "sqlite")?;
        // Before the first read of the table: through another name it could be stale.
        let (real, name) = sqlite_name::claim(&path)?;
        // The whole open in the write turn: the file read alone is not being written, and
        // the log this connection reads holds every commit made so far.
        let turn = name.write_turn(busy_timeout)?;
        let in_file = sqlite_log::in_file(&real)?;
        let conn = Connection::open(&real).map_err(unavailable)?;
        conn.busy_timeout(busy_timeout).map_err(unavailable)?;
        // Closing the last connection copies the log into the file: not before the log is
        // known to belong to it.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(unavailable)?;
        sqlite_log::check(&real, &conn, in_file)?;
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false)
            .map_err(unavailable)?;
        // Processes opening a new file at once: SQLite can answer BUSY at once, without
        // its busy handler, to a connection that switches the journal to WAL while another
        // does. The setup is tried again until busy_timeout has passed.
        let deadline = std::time::Instant::now() + busy_timeout;
        loop {
            match set_up(&conn) {
                Ok(()) => break,
                Err(error) if is_busy(&error) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(error) => return Err(unavailable(error)),
            }
        }
        checkpoint(&conn, busy_timeout)?;
        let identity = sqlite_log::identity(&conn).map_err(unavailable)?;
        let table_id = file_id(&real).map_err(|e| SegmentError::Unavailable {
            store: "sqlite".into(),
            detail: format!("cannot read {}: {e}", real.display()),
        })?;
        let shm = PathBuf::from(format!("{}-shm", real.display()));
        let shm_id = file_id(&shm).map_err(|e| SegmentError::Unavailable {
            store: "sqlite".into(),
            detail: format!("cannot read {}: {e}", shm.display()),
        })?;
        drop(turn);
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            path,
            busy_timeout,
            file: real,
            file_id: table_id,
            shm,
            shm_id,
            name,
            identity,
        })
    }

    /// The file this store uses.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with_tx<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, SegmentError>,
    ) -> Result<T, SegmentError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let _turn = self.name.write_turn(self.busy_timeout)?;
        // A table file deleted or replaced under the store: the processes started since use
        // another table, which may begin again at a key's start, while this one would go on
        // alone. Stop here rather than issue beside them.
        if file_id(&self.file).ok() != Some(self.file_id) {
            return Err(SegmentError::Store {
                store: "sqlite".into(),
                detail: format!(
                    "the table file {} was deleted or replaced while this store had it open: \
                     new processes would use another table, so this one stops issuing new \
                     ranges; find out what removed it, restore it, and open the store again",
                    self.file.display()
                ),
            });
        }
        // SQLite's locks are in the `-shm` this store opened; deleted or replaced, the
        // processes opened since lock another one, and would write beside this store.
        if file_id(&self.shm).ok() != Some(self.shm_id) {
            return Err(SegmentError::Store {
                store: "sqlite".into(),
                detail: format!(
                    "{} was deleted or replaced while this store had it open: SQLite's locks \
                     are in it, so this store can no longer write safely beside the processes \
                     opened since; open the store again",
                    self.shm.display()
                ),
            });
        }
        // A log the file has fallen behind (a reader on an old snapshot kept the last
        // change's copy from finishing) takes no further change until the file has caught
        // up: the file's last commit then always stays among those the log keeps, and a
        // store opened later finds the log continuing it (`sqlite_log`).
        caught_up(&conn, self.busy_timeout)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(classify)?;
        let out = f(&tx)?; // an error drops `tx`, which rolls back
        sqlite_log::record_commit(&tx).map_err(classify)?;
        tx.commit().map_err(classify)?;
        checkpoint(&conn, self.busy_timeout)?;
        Ok(out)
    }
}

impl SegmentStore for SqliteStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        let start = check_create(key, start, step)?;
        self.with_tx(|tx| {
            let inserted = tx
                .execute(
                    "INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time)
                     VALUES (?1, ?2, ?3, 'created by ferroflake', CURRENT_TIMESTAMP)
                     ON CONFLICT (biz_tag) DO NOTHING",
                    params![key, start as i64, step as i64],
                )
                .map_err(classify)?;
            if inserted == 0 {
                return Err(SegmentError::KeyExists { key: key.into() });
            }
            if let Some(mark) = read_mark(tx, key)?.filter(|&mark| mark > start) {
                return Err(recreated_below_mark("sqlite", key, start, mark));
            }
            set_mark(tx, key, start)
        })
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        self.with_tx(|tx| {
            // The bound keeps `max_id + step` inside bigint: SQLite would turn an overflow
            // into a float, and a float max_id would lose IDs.
            let row: Option<(i64, i64)> = tx
                .query_row(
                    "UPDATE leaf_alloc SET max_id = max_id + ?2, update_time = CURRENT_TIMESTAMP
                     WHERE biz_tag = ?1 AND max_id <= ?3 RETURNING max_id, step",
                    params![key, step as i64, (MAX_TABLE_ID - step) as i64],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(classify)?;
            let mark = read_mark(tx, key)?;
            let Some((max_id, table_step)) = row else {
                return Err(match (read(tx, key)?, mark) {
                    (None, Some(mark)) => row_gone("sqlite", key, mark),
                    (None, None) => SegmentError::UnknownKey { key: key.into() },
                    (Some(_), _) => SegmentError::Exhausted {
                        key: key.into(),
                        limit: MAX_TABLE_ID,
                    },
                });
            };
            let max_id = non_negative(key, "max_id", max_id)?;
            if max_id < step {
                return Err(malformed(key, "max_id", max_id as i64 - step as i64));
            }
            // An error rolls the increment back: the row stays as it was.
            if let Some(mark) = mark.filter(|&mark| mark > max_id - step) {
                return Err(row_below_mark("sqlite", key, max_id - step, mark));
            }
            set_mark(tx, key, max_id)?;
            Ok(Allocation {
                range: range_after(max_id, step),
                table_step: non_negative(key, "step", table_step)?,
            })
        })
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        check_give_back(key, rest, expected_max_id)?;
        self.with_tx(|tx| {
            let changed = tx
                .execute(
                    "UPDATE leaf_alloc SET max_id = ?2, update_time = CURRENT_TIMESTAMP
                     WHERE biz_tag = ?1 AND max_id = ?3",
                    params![key, rest.start as i64, expected_max_id as i64],
                )
                .map_err(classify)?;
            if changed == 0 && read(tx, key)?.is_none() {
                return Err(SegmentError::UnknownKey { key: key.into() });
            }
            if changed == 1 && read_mark(tx, key)? == Some(expected_max_id) {
                set_mark(tx, key, rest.start)?;
            }
            Ok(changed == 1)
        })
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        check_key(key)?;
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        match read(&conn, key)? {
            None => match read_mark(&conn, key)? {
                Some(mark) => Err(row_gone("sqlite", key, mark)),
                None => Ok(None),
            },
            row => Ok(row),
        }
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        self.with_tx(|tx| {
            let row = read(tx, key)?;
            let max_id = recovered_max_id(above, row.map(|r| r.max_id), read_mark(tx, key)?)?;
            tx.execute(
                "INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time)
                 VALUES (?1, ?2, ?3, 'recovered by ferroflake', CURRENT_TIMESTAMP)
                 ON CONFLICT (biz_tag) DO UPDATE SET max_id = excluded.max_id,
                     update_time = CURRENT_TIMESTAMP",
                params![key, max_id as i64, step as i64],
            )
            .map_err(classify)?;
            set_mark(tx, key, max_id)?;
            Ok(KeyRecord {
                max_id,
                step: row.map_or(step, |r| r.step),
            })
        })
    }

    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        self.with_tx(|tx| {
            tx.execute(
                "UPDATE leaf_alloc SET step = ?2, update_time = CURRENT_TIMESTAMP
                 WHERE biz_tag = ?1",
                params![key, step as i64],
            )
            .map_err(classify)?;
            match read(tx, key)? {
                Some(row) => Ok(row),
                None => Err(match read_mark(tx, key)? {
                    Some(mark) => row_gone("sqlite", key, mark),
                    None => SegmentError::UnknownKey { key: key.into() },
                }),
            }
        })
    }

    fn identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }

    fn name(&self) -> &str {
        "sqlite"
    }
}

/// The key's mark ([`crate::marks`]), if it has one.
fn read_mark(conn: &Connection, key: &str) -> Result<Option<u64>, SegmentError> {
    let high: Option<i64> = conn
        .query_row(
            "SELECT high FROM leaf_alloc_marks WHERE biz_tag = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()
        .map_err(classify)?;
    high.map(|h| non_negative(key, "mark", h)).transpose()
}

fn set_mark(conn: &Connection, key: &str, high: u64) -> Result<(), SegmentError> {
    conn.execute(
        "INSERT INTO leaf_alloc_marks (biz_tag, high) VALUES (?1, ?2)
         ON CONFLICT (biz_tag) DO UPDATE SET high = excluded.high",
        params![key, high as i64],
    )
    .map_err(classify)?;
    Ok(())
}

fn read(conn: &Connection, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
    let row: Option<(i64, i64)> = conn
        .query_row(
            "SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ?1",
            params![key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(classify)?;
    row.map(|(max_id, step)| {
        Ok(KeyRecord {
            max_id: non_negative(key, "max_id", max_id)?,
            step: non_negative(key, "step", step)?,
        })
    })
    .transpose()
}

fn non_negative(key: &str, column: &str, value: i64) -> Result<u64, SegmentError> {
    u64::try_from(value).map_err(|_| malformed(key, column, value))
}

fn malformed(key: &str, column: &str, value: i64) -> SegmentError {
    SegmentError::Store {
        store: "sqlite".into(),
        detail: format!("row {key:?} has {column} {value}: IDs below 0 are not handed out"),
    }
}

/// Locks held past the busy timeout and files that cannot be opened are `Unavailable`
/// (worth retrying); everything else is `Store`.
fn classify(e: rusqlite::Error) -> SegmentError {
    match e.sqlite_error_code() {
        Some(
            ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::CannotOpen
            | ErrorCode::SystemIoFailure,
        ) => unavailable(e),
        _ => SegmentError::Store {
            store: "sqlite".into(),
            detail: e.to_string(),
        },
    }
}

fn unavailable(e: rusqlite::Error) -> SegmentError {
    SegmentError::Unavailable {
        store: "sqlite".into(),
        detail: e.to_string(),
    }
}

/// WAL (readers do not block the writer; a crash never loses a committed allocation), full
/// syncs, and the table if it is missing.
fn set_up(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(sqlite_log::SCHEMA)
}

/// Copies the log into the table file before a change is reported: a range leaves the store
/// only once the file itself records it, so a process that dies holding a log leaves nothing
/// that another name for the file (which reads the file alone) would miss. The log is also
/// emptied where no reader is in it, leaving fewer old pages to replay.
///
/// One connection checkpoints at a time and SQLite answers the others at once, without its
/// busy handler: they try again until `busy_timeout` has passed. A range still not in the
/// file then is an error, and is never issued.
fn checkpoint(conn: &Connection, busy_timeout: Duration) -> Result<(), SegmentError> {
    let deadline = std::time::Instant::now() + busy_timeout;
    loop {
        let (busy, frames, copied): (i64, i64, i64) = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(classify)?;
        if busy == 0 || (frames >= 0 && copied == frames) {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(SegmentError::Unavailable {
                store: "sqlite".into(),
                detail: "the write-ahead log could not be copied into the table file: other \
                         connections kept it busy"
                    .into(),
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Copies what the log holds beyond the table file into it, if anything: one probe that
/// waits for nobody when the file already holds every commit, else [`checkpoint`].
fn caught_up(conn: &Connection, busy_timeout: Duration) -> Result<(), SegmentError> {
    let (frames, copied): (i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get(1)?, r.get(2)?))
        })
        .map_err(classify)?;
    if copied >= frames {
        return Ok(());
    }
    checkpoint(conn, busy_timeout)
}

/// The device and inode of the file at `path`.
fn file_id(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// Another connection holds the lock this one needs.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earlier_default_file_is_not_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (path, earlier) = (
            dir.path().join("state/segments.db"),
            dir.path().join("old.db"),
        );
        std::fs::write(&earlier, b"").unwrap();
        let refused = SqliteStore::open_default_in(&path, &earlier).unwrap_err();
        assert!(
            refused.to_string().contains("the default table moved"),
            "{refused}"
        );
        std::fs::rename(&earlier, dir.path().join("moved.db")).unwrap();
        let store = SqliteStore::open_default_in(&path, &earlier).unwrap();
        assert_eq!(store.path(), path);
        std::fs::write(&earlier, b"").unwrap();
        drop(store);
        SqliteStore::open_default_in(&path, &earlier).expect("both there: the new one is used");
    }
}
