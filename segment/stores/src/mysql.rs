//! Leaf's table on MySQL or MariaDB: [`MysqlStore`].

use std::collections::HashMap;
use std::error::Error as _;
use std::io::ErrorKind;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferroflake_segment::{SegmentError, StoreHistory};
use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Row};
use url::Url;

use crate::sql::{self, describe, store_error, unavailable, Dialect, Failure, Link, Session};
use crate::sql::{Statements, TIMEOUT};

const STORE: &str = "mysql";

/// A [`SegmentStore`](ferroflake_segment::SegmentStore) on Leaf's table in MySQL or MariaDB.
///
/// The table is Leaf's `leaf_alloc`, created with Leaf's DDL if missing (InnoDB, `biz_tag
/// varchar(128)` primary key, `max_id bigint`, `step int`, `description varchar(256)`,
/// `update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP`)
/// and used as it is if a Leaf server made it. The operations are Leaf's:
///
/// - allocate: in one transaction, `UPDATE ... SET max_id = max_id + step WHERE biz_tag = ?
///   AND max_id <= 2^63 - 1 - step`, then `SELECT max_id, step` of the row, owning
///   `[max_id - step, max_id)`; when the update changes no row, a read tells an unknown key
///   from an exhausted one;
/// - give-back: `UPDATE ... SET max_id = rest.start WHERE biz_tag = ? AND max_id =
///   expected` (rows are counted as matched, not as changed, so an empty give-back counts);
/// - create: a plain `INSERT` (a duplicate key is [`SegmentError::KeyExists`]).
///
/// Keys: a key names a row only in the row's own spelling. MySQL compares `biz_tag` by the
/// column's collation, and the usual ones fold spellings onto one row: Leaf's DDL takes
/// the server's default (`utf8_general_ci`, `utf8mb4_general_ci`, `latin1_swedish_ci`),
/// which ignores case, some accents and trailing spaces, and even the `utf8mb4_bin` of the
/// table created here ignores trailing spaces (PAD SPACE). Were every spelling that finds
/// the row accepted, `Orders`, `ORDERS` and `orders ` would each be a key of their own to
/// an allocator or a service (each taking a range of the one row, each with its own
/// state and metrics) while the table holds one. So every read of a row checks that the
/// row spells the key byte for byte as it was given, and a key the collation folds onto a
/// row spelled otherwise is [`SegmentError::InvalidKey`] (naming the row's spelling) for
/// peek, allocate, create, recover and set_step alike, before anything is changed: an
/// allocation's increment, or a step set, is rolled back. Refusing rather than quietly using the row's spelling keeps a
/// key one string everywhere (in the allocator, in metrics, in scopes); the spelling the
/// row has is the one to use. A key with no row is created in the spelling given, which
/// then becomes the only one. (PostgreSQL, SQLite and Redis compare keys byte for byte, so
/// there a key is always its own row.)
///
/// A table whose `biz_tag` is in the 3-byte `utf8` (`utf8mb3`; Leaf's DDL on a server whose
/// default is that) or `ucs2` cannot store a character outside the Basic Multilingual
/// Plane, such as an emoji: every call given such a key is [`SegmentError::InvalidKey`],
/// before any statement runs for it. The server would otherwise refuse it with a
/// collation error, or, without a strict `sql_mode`, store `?` in the character's place.
///
/// Time bounds: a connection attempt gives up after 3 s, every read and write on the socket
/// after 3 s (a dead, hung or unreachable server is [`SegmentError::Unavailable`] within
/// that), and a row-lock wait after 2 s (`innodb_lock_wait_timeout`). A connection that
/// fails is dropped; the next call connects again.
pub struct MysqlStore {
    opts: Opts,
    sql: Arc<Statements>,
    conn: Mutex<Option<Connection>>,
    /// Refuses a server that may lose acknowledged commits.
    durable_only: bool,
    /// The id in `<table>_store`, read at connect.
    store_id: Option<String>,
}

impl std::fmt::Debug for MysqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MysqlStore")
            .field("host", &self.opts.get_ip_or_hostname())
            .field("port", &self.opts.get_tcp_port())
            .field("db", &self.opts.get_db_name())
            .field("table", &self.sql.table)
            .finish_non_exhaustive()
    }
}

impl MysqlStore {
    /// Connects to `url` (`mysql://user[:password]@host:port/db`, optionally with
    /// `connect_timeout` in seconds, `sslmode=disable|prefer` and `application_name`) and
    /// uses `table`, creating it with Leaf's DDL if it is missing.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] for a URL the client cannot use (this build has no
    /// TLS); [`SegmentError::Unavailable`] if the server cannot be reached within the
    /// bound; [`SegmentError::Store`] if it refuses (authentication, an unknown database,
    /// a table that is not Leaf's).
    pub fn connect(url: &str, table: &str) -> Result<Self, SegmentError> {
        Self::open_store(url, table, true)
    }

    /// As [`connect`](Self::connect), but also to a server that may lose commits it
    /// acknowledged (`innodb_flush_log_at_trx_commit` other than 1: `accept=lost-writes`
    /// in an address). The store still fails closed when it finds it came back older
    /// (marks, the host record), but keys then stop until an operator recovers them.
    ///
    /// # Errors
    /// As [`connect`](Self::connect), less the check on the log's flushing.
    pub fn connect_accepting_lost_writes(url: &str, table: &str) -> Result<Self, SegmentError> {
        Self::open_store(url, table, false)
    }

    fn open_store(url: &str, table: &str, durable_only: bool) -> Result<Self, SegmentError> {
        let mut store = MysqlStore {
            opts: options(url)?,
            sql: Arc::new(Statements::new(Dialect::Mysql, table)),
            conn: Mutex::new(None),
            durable_only,
            store_id: None,
        };
        // Connect now, so that an unreachable server shows here.
        store.store_id = store.run(|conn| Ok(conn.store_id()))?;
        Ok(store)
    }

    /// The table this store uses.
    pub fn table(&self) -> &str {
        &self.sql.table
    }
}

/// The client's options: the URL's, with the store's time bounds, its parameters that the
/// client does not know taken out, and affected rows counted as matched rows.
fn options(url: &str) -> Result<Opts, SegmentError> {
    let bad = |detail: String| SegmentError::InvalidConfig {
        detail: format!("MySQL address: {detail}"),
    };
    let mut url = Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let mut connect_timeout = TIMEOUT;
    let mut program = "ferroflake-segment".to_owned();
    let mut rest = Vec::new();
    for (name, value) in url.query_pairs().into_owned() {
        match name.as_str() {
            "connect_timeout" => match value.parse::<u64>() {
                Ok(secs) if secs > 0 => connect_timeout = Duration::from_secs(secs),
                _ => return Err(bad(format!("connect_timeout={value} is not whole seconds"))),
            },
            "application_name" => program = value,
            "sslmode" if matches!(value.as_str(), "disable" | "allow" | "prefer") => {}
            "sslmode" => {
                return Err(bad(format!(
                    "sslmode={value}: this build connects to MySQL without TLS"
                )))
            }
            _ => rest.push((name, value)),
        }
    }
    if rest.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(rest);
    }
    let opts = Opts::from_url(url.as_str()).map_err(|e| bad(e.to_string()))?;
    let lock_wait = (TIMEOUT.as_secs() * 2 / 3).max(1);
    Ok(OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(connect_timeout))
        .read_timeout(Some(TIMEOUT))
        .write_timeout(Some(TIMEOUT))
        // Stay on the address given, rather than switching to the server's local socket.
        .prefer_socket(false)
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS)
        // A server that turns autocommit off for every session would leave a create or a
        // give-back uncommitted, rolled back when the connection closes.
        .init(vec![
            format!("SET SESSION innodb_lock_wait_timeout = {lock_wait}"),
            "SET SESSION autocommit = 1".to_owned(),
        ])
        .connect_attrs(Some(HashMap::from([("program_name", program)])))
        .into())
}

impl Link for MysqlStore {
    type Conn = Connection;

    fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Connection) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, SegmentError> {
        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let (conn, out) = sql::on_connection(
            slot.take(),
            || Connection::open(&self.opts, &self.sql, self.durable_only),
            op,
        );
        *slot = conn;
        out.map_err(|f| f.into_error(STORE))
    }
}

sql::segment_store_over_link!(MysqlStore, STORE);

/// A client and the store's statements (the client caches them prepared).
pub(crate) struct Connection {
    conn: Conn,
    sql: Arc<Statements>,
    /// The id in `<table>_store`, if the user could make and read it.
    store_id: Option<String>,
    /// The character set of the table's `biz_tag`, read when the connection opened (a
    /// table this store creates has utf8mb4).
    key_charset: String,
}

/// Makes the marks table, if it is missing, with the character set and collation of the
/// table's `biz_tag`: the marks then match keys as the table does, so a row deleted after
/// use is still found by its mark when it is made again in a spelling the table folds
/// onto the old one (`Orders` after `orders`, on Leaf's case-insensitive DDL). A table not
/// there yet is made by [`sql::prepare_table`], with the marks beside it, both binary.
/// Returns the character set of the table's `biz_tag`, if the table is there.
fn marks_collated_as_keys(conn: &mut Conn, sql: &Statements) -> Result<Option<String>, Failure> {
    let column: Option<(String, String)> = conn
        .exec_first(
            "SELECT CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'biz_tag'",
            (&sql.table,),
        )
        .map_err(failure)?;
    let Some((charset, collation)) = column else {
        return Ok(None);
    };
    // Names the server itself reported; anything else is not put into a statement.
    let plain = |name: &str| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    if !(plain(&charset) && plain(&collation)) {
        return Ok(Some(charset));
    }
    let binary = "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
    debug_assert!(sql.create_marks.contains(binary));
    let collated = format!("CHARACTER SET {charset} COLLATE {collation}");
    conn.query_drop(sql.create_marks.replacen(binary, &collated, 1))
        .map_err(failure)?;
    Ok(Some(charset))
}

/// The character sets that hold only the Basic Multilingual Plane (U+0000 to U+FFFF):
/// MySQL's 3-byte `utf8` (`utf8mb3`, the default of Leaf's DDL on older servers) and
/// `ucs2`.
fn bmp_only(charset: &str) -> bool {
    ["utf8", "utf8mb3", "ucs2"]
        .iter()
        .any(|name| charset.eq_ignore_ascii_case(name))
}

/// [`SegmentError::InvalidKey`] for a key with a character that a `biz_tag` in `charset`
/// cannot store, if [`bmp_only`] says it is such a set. The server would answer such a key
/// with a collation error (1267) or "Incorrect string value" (1366), or, without a strict
/// `sql_mode`, store `?` in its place and so make or find another key.
fn outside_charset(charset: &str, key: &str) -> Result<(), SegmentError> {
    if !bmp_only(charset) {
        return Ok(());
    }
    match key.chars().find(|&c| u32::from(c) > 0xFFFF) {
        None => Ok(()),
        Some(c) => Err(SegmentError::InvalidKey {
            key: key.to_owned(),
            detail: format!(
                "holds U+{:04X}, a character outside the Basic Multilingual Plane, which the \
                 table's {charset} biz_tag cannot store (a table with biz_tag in utf8mb4 can)",
                u32::from(c)
            ),
        }),
    }
}

impl Connection {
    /// Connects and makes sure the table is there.
    fn open(opts: &Opts, sql: &Arc<Statements>, durable_only: bool) -> Result<Connection, Failure> {
        let mut conn = Conn::new(opts.clone()).map_err(failure)?;
        if durable_only {
            // The server's setting, for every session: 1 writes and flushes the log at each
            // commit; 0 and 2 leave the last second's commits to a crash.
            let flush: Option<String> = conn
                .query_first("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit")
                .map_err(failure)?;
            if flush.as_deref() != Some("1") {
                return Err(Failure::Said(crate::address::may_lose_writes(
                    "MySQL",
                    &format!(
                        "innodb_flush_log_at_trx_commit = {}",
                        flush.as_deref().unwrap_or("unknown")
                    ),
                    "set innodb_flush_log_at_trx_commit = 1",
                )));
            }
        }
        let charset = marks_collated_as_keys(&mut conn, sql)?;
        sql::prepare_table(STORE, sql, |text| conn.query_drop(text).map_err(failure))?;
        let kind: Option<String> = conn
            .exec_first(
                "SELECT TABLE_TYPE FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                (&sql.table,),
            )
            .map_err(failure)?;
        if let Some(kind) = kind.filter(|kind| kind != "BASE TABLE") {
            return Err(Failure::Said(sql::not_a_base_table(
                STORE,
                &sql.table,
                &kind.to_lowercase(),
            )));
        }
        let store_id = conn
            .query_first::<String, _>(&sql.read_store_id)
            .ok()
            .flatten();
        Ok(Connection {
            conn,
            store_id,
            sql: Arc::clone(sql),
            key_charset: charset.unwrap_or_else(|| "utf8mb4".to_owned()),
        })
    }

    /// The increment's statements inside its transaction.
    fn update_and_read(
        &mut self,
        key: &str,
        step: i64,
        bound: i64,
    ) -> Result<Option<(i64, i64)>, Failure> {
        self.conn
            .exec_drop(&self.sql.increment, (step, key, bound))
            .map_err(failure)?;
        if self.conn.affected_rows() != 1 {
            return Ok(None);
        }
        let row: Option<Row> = self
            .conn
            .exec_first(&self.sql.read, (key,))
            .map_err(failure)?;
        row.as_ref().map(|r| spelled_as_given(key, r)).transpose()
    }
}

impl Session for Connection {
    const STORE: &'static str = STORE;

    fn admits(&self, key: &str) -> Result<(), SegmentError> {
        outside_charset(&self.key_charset, key)
    }

    fn batch(&mut self, text: &str) -> Result<(), Failure> {
        self.conn.query_drop(text).map_err(failure)
    }

    fn insert(&mut self, key: &str, start: i64, step: i64) -> Result<bool, Failure> {
        match self.conn.exec_drop(&self.sql.insert, (key, start, step)) {
            Ok(()) => Ok(true),
            // The row may be another spelling that the collation folds this key onto: the
            // read says so.
            Err(mysql::Error::MySqlError(e)) if e.code == ER_DUP_ENTRY => {
                self.read(key).map(|_| false)
            }
            Err(e) => Err(failure(e)),
        }
    }

    fn increment(
        &mut self,
        key: &str,
        step: i64,
        bound: i64,
    ) -> Result<Option<(i64, i64)>, Failure> {
        // Leaf's transaction (the caller's): the update locks the row, the select reads it
        // as updated.
        self.update_and_read(key, step, bound)
    }

    fn lower(&mut self, key: &str, to: i64, expected: i64) -> Result<bool, Failure> {
        self.conn
            .exec_drop(&self.sql.lower, (to, key, expected))
            .map_err(failure)?;
        Ok(self.conn.affected_rows() > 0)
    }

    fn read(&mut self, key: &str) -> Result<Option<(i64, i64)>, Failure> {
        let row: Option<Row> = self
            .conn
            .exec_first(&self.sql.read, (key,))
            .map_err(failure)?;
        row.as_ref().map(|r| spelled_as_given(key, r)).transpose()
    }

    fn raise(&mut self, key: &str, max_id: i64, step: i64) -> Result<(), Failure> {
        self.conn
            .exec_drop(&self.sql.raise, (key, max_id, step))
            .map_err(failure)
    }

    fn set_step(&mut self, key: &str, step: i64) -> Result<(), Failure> {
        self.conn
            .exec_drop(&self.sql.set_step, (step, key))
            .map_err(failure)
    }

    fn read_mark(&mut self, key: &str) -> Result<Option<i64>, Failure> {
        let row: Option<Row> = self
            .conn
            .exec_first(&self.sql.read_mark, (key,))
            .map_err(failure)?;
        row.map(|r| match r.get_opt::<Option<i64>, _>(0) {
            Some(Ok(Some(v))) => Ok(v),
            other => Err(Failure::Said(store_error(
                STORE,
                format!("the mark of {key:?} is not a bigint: {other:?}"),
            ))),
        })
        .transpose()
    }

    fn raise_mark(&mut self, key: &str, high: i64) -> Result<(), Failure> {
        self.conn
            .exec_drop(&self.sql.raise_mark, (key, high))
            .map_err(failure)
    }

    fn lower_mark(&mut self, key: &str, to: i64, expected: i64) -> Result<(), Failure> {
        self.conn
            .exec_drop(&self.sql.lower_mark, (to, key, expected))
            .map_err(failure)
    }

    /// MariaDB's: the server's `server_id` (MariaDB keeps no identity of its own for an
    /// installation; replicas of one primary must differ in it, and another server's log
    /// positions are its own, never compared) and how far InnoDB has flushed its redo log
    /// (`Innodb_lsn_flushed`), which grows across restarts and crashes and goes back only
    /// with the data. `None` on a server without that status (MySQL).
    fn store_id(&self) -> Option<String> {
        self.store_id.clone()
    }

    fn history(&mut self) -> Result<Option<StoreHistory>, Failure> {
        let server_id: Option<u64> = self
            .conn
            .query_first("SELECT @@server_id")
            .map_err(failure)?;
        let flushed: Option<(String, String)> = self
            .conn
            .query_first("SHOW GLOBAL STATUS LIKE 'Innodb\\_lsn\\_flushed'")
            .map_err(failure)?;
        let (Some(server_id), Some((_, flushed))) = (server_id, flushed) else {
            return Ok(None);
        };
        let position = flushed.parse().map_err(|e: std::num::ParseIntError| {
            Failure::Said(store_error(
                STORE,
                format!("the server's history, Innodb_lsn_flushed {flushed:?}: {e}"),
            ))
        })?;
        Ok(Some(StoreHistory {
            system: format!("server_id={server_id}"),
            timeline: 0,
            position,
        }))
    }
}

/// `(max_id, step)` from a row of the read, if the row spells `key` as it was given
/// (see [`MysqlStore`] on keys); [`SegmentError::InvalidKey`] if the table's collation
/// matched `key` to a row spelled otherwise.
fn spelled_as_given(key: &str, row: &Row) -> Result<(i64, i64), Failure> {
    match row.get_opt::<Vec<u8>, _>(2) {
        Some(Ok(stored)) if stored == key.as_bytes() => pair(row),
        Some(Ok(stored)) => Err(Failure::Said(SegmentError::InvalidKey {
            key: key.to_owned(),
            detail: format!(
                "the table's collation matches it to the row {:?}, spelled otherwise (its \
                 biz_tag ignores case, accents or trailing spaces); only that spelling names \
                 the key",
                String::from_utf8_lossy(&stored)
            ),
        })),
        other => Err(Failure::Said(store_error(
            STORE,
            format!("the biz_tag of the row read for {key:?} is not text: {other:?}"),
        ))),
    }
}

/// `(max_id, step)` from a row of the read.
fn pair(row: &Row) -> Result<(i64, i64), Failure> {
    let column = |i: usize| match row.get_opt::<Option<i64>, _>(i) {
        Some(Ok(Some(v))) => Ok(v),
        other => Err(Failure::Said(store_error(
            STORE,
            format!("column {i} of the row is not a bigint: {other:?}"),
        ))),
    };
    Ok((column(0)?, column(1)?))
}

/// The server's code for a duplicate key.
const ER_DUP_ENTRY: u16 = 1062;

/// Sorts a client error. Socket, protocol and driver errors, and the server ending the
/// session, lose the connection; the server being busy (a lock wait or statement time
/// limit, a deadlock, too many connections, out of memory) is [`SegmentError::Unavailable`]
/// on a connection that stays; the rest is [`SegmentError::Store`].
fn failure(e: mysql::Error) -> Failure {
    let mut detail = describe(&e);
    let io = match &e {
        mysql::Error::IoError(io) => Some(io),
        mysql::Error::CodecError(codec) => codec.source().and_then(|s| s.downcast_ref()),
        _ => None,
    };
    // The socket's time limit shows as EAGAIN: say what it means.
    if io.is_some_and(|io| matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)) {
        detail = format!("no answer within {TIMEOUT:?} ({detail})");
    }
    match &e {
        mysql::Error::MySqlError(server) => match server.code {
            // Server shutdown; connection killed (MariaDB); idle connection closed (MySQL).
            1053 | 1927 | 4031 => Failure::Lost(detail),
            // Lock wait timeout, deadlock, too many connections, out of memory or sort
            // memory, query interrupted, statement time limit (MySQL 3024, MariaDB 1969).
            1205 | 1213 | 1040 | 1037 | 1038 | 1041 | 1317 | 3024 | 1969 => {
                Failure::Said(unavailable(STORE, detail))
            }
            _ => Failure::Said(store_error(STORE, detail)),
        },
        mysql::Error::FromValueError(_) | mysql::Error::FromRowError(_) => {
            Failure::Said(store_error(STORE, detail))
        }
        _ => Failure::Lost(detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_3_byte_utf8_biz_tag_refuses_characters_past_the_bmp() {
        let key = "orders-\u{1F600}";
        for charset in ["utf8", "utf8mb3", "UTF8MB3", "ucs2"] {
            match outside_charset(charset, key) {
                Err(SegmentError::InvalidKey { key: k, detail }) => {
                    assert_eq!(k, key);
                    assert!(detail.contains("U+1F600"), "{detail}");
                    assert!(detail.contains(charset), "{detail}");
                }
                other => panic!("{charset}: {other:?}"),
            }
            // The BMP's last character, and 3-byte ones, are held.
            outside_charset(charset, "\u{FFFF}-\u{4E2D}-caf\u{E9}").unwrap();
        }
        for charset in ["utf8mb4", "binary", "utf16", "utf32"] {
            outside_charset(charset, key).unwrap();
        }
    }
}
