//! What the PostgreSQL and MySQL stores share: Leaf's table and the statements on it (the
//! two dialects differ only in placeholders, quoting and a few clauses), the store
//! operations written once over a [`Session`], the checks on the rows that come back, and
//! the rule for when a connection is dropped ([`Failure::Lost`]).
#![cfg(any(feature = "postgres", feature = "mysql"))]

use std::error::Error;
use std::time::Duration;

use ferroflake_segment::marks::{recovered_max_id, recreated_below_mark, row_below_mark, row_gone};
use ferroflake_segment::{
    check_create, check_give_back, check_key, check_step, range_after, Allocation, KeyRecord,
    Range, SegmentError, StoreHistory, MAX_TABLE_ID,
};

/// The bound on each wait of a SQL store: a connection attempt, a row lock, a statement, one
/// read or write on the socket.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(3);

/// The SQL dialect a store speaks. (A build with one SQL store uses one of them.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(all(feature = "postgres", feature = "mysql")), allow(dead_code))]
pub(crate) enum Dialect {
    Postgres,
    Mysql,
}

/// The statements on one table. Parameters are numbered in the order they appear, so both
/// dialects bind the same values in the same order.
#[derive(Debug)]
pub(crate) struct Statements {
    /// The table's name, unquoted (for messages).
    pub(crate) table: String,
    /// Leaf's table, if it is missing.
    pub(crate) create_table: String,
    /// Reads no row but fails unless the table has Leaf's columns.
    pub(crate) probe: String,
    /// (key, start, step): a new row.
    pub(crate) insert: String,
    /// (step, key, bound): Leaf's increment, refused past the bound and on malformed rows.
    /// PostgreSQL's returns the row's `max_id` and `step`.
    pub(crate) increment: String,
    /// (key): the row's `max_id` and `step` (and on MySQL its `biz_tag`).
    pub(crate) read: String,
    /// (new max_id, key, expected max_id): the conditional give-back.
    pub(crate) lower: String,
    /// (key, max_id, step): a row made or raised, never lowered, by a recovery.
    pub(crate) raise: String,
    /// (step, key): the row's step set, its max_id left alone.
    pub(crate) set_step: String,
    /// The marks table ([`ferroflake_segment::marks`]), if it is missing.
    pub(crate) create_marks: String,
    /// (key): the key's mark.
    pub(crate) read_mark: String,
    /// (key, high): the mark made or raised, never lowered.
    pub(crate) raise_mark: String,
    /// (new high, key, expected high): the mark lowered with a give-back.
    pub(crate) lower_mark: String,
    /// The one-row table of the store's own id ([`SegmentStore::identity`]), if missing.
    ///
    /// [`SegmentStore::identity`]: ferroflake_segment::SegmentStore::identity
    pub(crate) create_store_id: String,
    /// A random id in that table, unless it has one.
    pub(crate) insert_store_id: String,
    /// (): the id.
    pub(crate) read_store_id: String,
}

impl Statements {
    /// The statements of `dialect` on `table`, a plain identifier (the address checked it;
    /// it is quoted anyway, so a reserved word works too).
    pub(crate) fn new(dialect: Dialect, table: &str) -> Statements {
        let pg = dialect == Dialect::Postgres;
        let quote = |name: &str| {
            if pg {
                format!("\"{name}\"")
            } else {
                format!("`{name}`")
            }
        };
        let quoted = quote(table);
        let marks = quote(&format!("{table}_marks"));
        let store_id = quote(&format!("{table}_store"));
        // Raise a column to the value offered, never lower it.
        let at_least = |column: &str| {
            if pg {
                format!("{column} = GREATEST(t.{column}, EXCLUDED.{column})")
            } else {
                format!("{column} = GREATEST({column}, VALUES({column}))")
            }
        };
        let upsert = if pg {
            "ON CONFLICT (biz_tag) DO UPDATE SET"
        } else {
            "ON DUPLICATE KEY UPDATE"
        };
        let alias = if pg { " AS t" } else { "" };
        // The n-th parameter as text or as a bigint: PostgreSQL prepares with the type
        // named, so every integer is sent as an i64; MySQL takes the type from the value.
        let text = |n: u8| if pg { format!("${n}") } else { "?".into() };
        let int = |n: u8| {
            if pg {
                format!("${n}::bigint")
            } else {
                "?".into()
            }
        };
        // PostgreSQL answers `int` columns as int4: cast, so both columns read as i64.
        let columns = if pg {
            "CAST(max_id AS bigint), CAST(step AS bigint)"
        } else {
            "max_id, step"
        };
        // MySQL's default collations ignore case and trailing spaces; the table we create
        // compares keys byte for byte, as the other stores do.
        let (key_type, on_update, engine) = if pg {
            ("varchar(128)", "", "")
        } else {
            (
                "varchar(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                " ON UPDATE CURRENT_TIMESTAMP",
                " ENGINE=InnoDB",
            )
        };
        let returning = if pg {
            format!(" RETURNING {columns}")
        } else {
            String::new()
        };
        Statements {
            table: table.to_owned(),
            create_table: format!(
                "CREATE TABLE IF NOT EXISTS {quoted} (
                    biz_tag     {key_type} NOT NULL DEFAULT '',
                    max_id      bigint NOT NULL DEFAULT 1,
                    step        int NOT NULL,
                    description varchar(256) DEFAULT NULL,
                    update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP{on_update},
                    PRIMARY KEY (biz_tag)
                ){engine}"
            ),
            probe: format!(
                "SELECT biz_tag, max_id, step, description, update_time FROM {quoted} WHERE 1 = 0"
            ),
            insert: format!(
                "INSERT INTO {quoted} (biz_tag, max_id, step, description, update_time)
                 VALUES ({}, {}, {}, 'created by ferroflake', CURRENT_TIMESTAMP)",
                text(1),
                int(2),
                int(3)
            ),
            // `max_id >= 0 AND step >= 0`: a malformed row is left alone, then read and
            // reported. `max_id <= bound` keeps `max_id + step` inside bigint.
            increment: format!(
                "UPDATE {quoted} SET max_id = max_id + {}, update_time = CURRENT_TIMESTAMP
                 WHERE biz_tag = {} AND max_id >= 0 AND step >= 0 AND max_id <= {}{returning}",
                int(1),
                text(2),
                int(3)
            ),
            // MySQL's also returns the row's own spelling of the key: its collation may
            // match the key given to a row spelled otherwise (see `MysqlStore`).
            read: format!(
                "SELECT {columns}{} FROM {quoted} WHERE biz_tag = {}",
                if pg { "" } else { ", biz_tag" },
                text(1)
            ),
            lower: format!(
                "UPDATE {quoted} SET max_id = {}, update_time = CURRENT_TIMESTAMP
                 WHERE biz_tag = {} AND max_id = {}",
                int(1),
                text(2),
                int(3)
            ),
            raise: format!(
                "INSERT INTO {quoted}{alias} (biz_tag, max_id, step, description, update_time)
                 VALUES ({}, {}, {}, 'recovered by ferroflake', CURRENT_TIMESTAMP)
                 {upsert} {}, update_time = CURRENT_TIMESTAMP",
                text(1),
                int(2),
                int(3),
                at_least("max_id")
            ),
            set_step: format!(
                "UPDATE {quoted} SET step = {}, update_time = CURRENT_TIMESTAMP
                 WHERE biz_tag = {}",
                int(1),
                text(2)
            ),
            create_marks: format!(
                "CREATE TABLE IF NOT EXISTS {marks} (
                    biz_tag {key_type} NOT NULL,
                    high    bigint NOT NULL,
                    PRIMARY KEY (biz_tag)
                ){engine}"
            ),
            read_mark: format!("SELECT high FROM {marks} WHERE biz_tag = {}", text(1)),
            raise_mark: format!(
                "INSERT INTO {marks}{alias} (biz_tag, high) VALUES ({}, {}) {upsert} {}",
                text(1),
                int(2),
                at_least("high")
            ),
            lower_mark: format!(
                "UPDATE {marks} SET high = {} WHERE biz_tag = {} AND high = {}",
                int(1),
                text(2),
                int(3)
            ),
            create_store_id: format!(
                "CREATE TABLE IF NOT EXISTS {store_id} (
                    one integer NOT NULL PRIMARY KEY,
                    id  varchar(64) NOT NULL
                ){engine}"
            ),
            insert_store_id: if pg {
                format!(
                    "INSERT INTO {store_id} (one, id)
                     VALUES (1, md5(random()::text || clock_timestamp()::text))
                     ON CONFLICT (one) DO NOTHING"
                )
            } else {
                format!("INSERT IGNORE INTO {store_id} (one, id) VALUES (1, UUID())")
            },
            read_store_id: format!("SELECT id FROM {store_id} WHERE one = 1"),
        }
    }
}

/// Why an operation on a connection failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection is gone or in doubt (a socket error, a timeout, the server closing the
    /// session): drop it, answer [`SegmentError::Unavailable`], reconnect on the next call.
    Lost(String),
    /// The server answered; the connection stays. Busy answers (a lock or statement timeout,
    /// too many connections) are already [`SegmentError::Unavailable`].
    Said(SegmentError),
}

impl Failure {
    /// What the caller sees.
    pub(crate) fn into_error(self, store: &str) -> SegmentError {
        match self {
            Failure::Lost(detail) => unavailable(store, detail),
            Failure::Said(e) => e,
        }
    }
}

impl From<SegmentError> for Failure {
    fn from(e: SegmentError) -> Self {
        Failure::Said(e)
    }
}

/// [`SegmentError::Unavailable`] from `store`.
pub(crate) fn unavailable(store: &str, detail: impl Into<String>) -> SegmentError {
    SegmentError::Unavailable {
        store: store.into(),
        detail: detail.into(),
    }
}

/// [`SegmentError::Store`] from `store`.
/// The refusal of a table name that names a view (`kind`, as the server calls it): one
/// table under two names would keep two marks tables, two ids and two host records, and
/// recreate under one name a key the other took ranges from.
pub(crate) fn not_a_base_table(store: &str, table: &str, kind: &str) -> SegmentError {
    SegmentError::InvalidConfig {
        detail: format!(
            "{store}: {table} is a {kind}, not a table: name the table it shows; under two \
             names one table would be two stores, each unaware of the other's ranges"
        ),
    }
}

pub(crate) fn store_error(store: &str, detail: impl Into<String>) -> SegmentError {
    SegmentError::Store {
        store: store.into(),
        detail: detail.into(),
    }
}

/// An error and its causes, as one line: clients often keep the useful part (the OS error,
/// the server's message) in a cause.
pub(crate) fn describe(e: &(dyn Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// One connection's operations on Leaf's table and its marks, in its client's terms.
/// Integers are the table's (`bigint`); the store operations below check them, and run
/// each in one transaction.
pub(crate) trait Session {
    /// The store's name, for errors.
    const STORE: &'static str;

    /// Refuses a key that this connection's table cannot hold as it is given, before any
    /// statement runs for it (a MySQL `biz_tag` in the 3-byte `utf8`); by default every
    /// key [`check_key`] lets through is held.
    fn admits(&self, _key: &str) -> Result<(), SegmentError> {
        Ok(())
    }

    /// Runs a statement without parameters or rows (`START TRANSACTION`, `COMMIT`, ...).
    fn batch(&mut self, text: &str) -> Result<(), Failure>;

    /// Adds the row; `Ok(false)` if the key already has one.
    fn insert(&mut self, key: &str, start: i64, step: i64) -> Result<bool, Failure>;

    /// Runs the increment (with `bound`, see [`Statements::increment`]) and returns the row
    /// it changed as `(max_id, step)`; `None` if it changed no row.
    fn increment(
        &mut self,
        key: &str,
        step: i64,
        bound: i64,
    ) -> Result<Option<(i64, i64)>, Failure>;

    /// Runs the conditional give-back; whether it changed the row.
    fn lower(&mut self, key: &str, to: i64, expected: i64) -> Result<bool, Failure>;

    /// The row's `(max_id, step)`, if any.
    fn read(&mut self, key: &str) -> Result<Option<(i64, i64)>, Failure>;

    /// Makes the row at `max_id`, or raises it to `max_id` (never lowers it).
    fn raise(&mut self, key: &str, max_id: i64, step: i64) -> Result<(), Failure>;

    /// Sets the row's step (see [`Statements::set_step`]).
    fn set_step(&mut self, key: &str, step: i64) -> Result<(), Failure>;

    /// The key's mark, if any.
    fn read_mark(&mut self, key: &str) -> Result<Option<i64>, Failure>;

    /// Makes the key's mark, or raises it to `high` (never lowers it).
    fn raise_mark(&mut self, key: &str, high: i64) -> Result<(), Failure>;

    /// Lowers the key's mark to `to` if it is `expected`.
    fn lower_mark(&mut self, key: &str, to: i64, expected: i64) -> Result<(), Failure>;

    /// Where the server stands in its own history; `None` if it does not say.
    fn history(&mut self) -> Result<Option<StoreHistory>, Failure>;

    /// The id the table's store keeps in `<table>_store`, read when the connection opened;
    /// `None` where the user could not make or read it.
    fn store_id(&self) -> Option<String>;
}

/// Runs `op` in a transaction: committed if it succeeds, rolled back if the server or the
/// checks refused. A lost connection is left alone: the server rolls back when it closes.
/// Statements rather than the clients' transaction guards, which would roll back on a lost
/// connection too and wait out another timeout.
fn in_transaction<C: Session, T>(
    conn: &mut C,
    op: impl FnOnce(&mut C) -> Result<T, Failure>,
) -> Result<T, Failure> {
    conn.batch("START TRANSACTION")?;
    match op(conn) {
        Ok(out) => {
            conn.batch("COMMIT")?;
            Ok(out)
        }
        Err(Failure::Said(e)) => {
            conn.batch("ROLLBACK")?;
            Err(Failure::Said(e))
        }
        Err(lost) => Err(lost),
    }
}

/// How a store reaches its server: runs `op` on a connection, connecting first if it has
/// none, within its time bound, and drops the connection when `op` reports it
/// [`Failure::Lost`].
pub(crate) trait Link {
    /// The connection type.
    type Conn: Session;

    /// Runs `op`.
    fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Self::Conn) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, SegmentError>;
}

/// Runs `op` on `held`, or on a new connection from `connect`; returns the connection to
/// keep (none if it was lost) and the outcome.
pub(crate) fn on_connection<C, T>(
    held: Option<C>,
    connect: impl FnOnce() -> Result<C, Failure>,
    op: impl FnOnce(&mut C) -> Result<T, Failure>,
) -> (Option<C>, Result<T, Failure>) {
    let mut conn = match held.map_or_else(connect, Ok) {
        Ok(conn) => conn,
        Err(failure) => return (None, Err(failure)),
    };
    let out = op(&mut conn);
    let keep = !matches!(out, Err(Failure::Lost(_)));
    (keep.then_some(conn), out)
}

/// Creates Leaf's table if it is missing, then checks that the table (ours or a Leaf
/// server's) has Leaf's columns. `execute` runs a statement without parameters or rows.
pub(crate) fn prepare_table(
    store: &str,
    sql: &Statements,
    mut execute: impl FnMut(&str) -> Result<(), Failure>,
) -> Result<(), Failure> {
    // A failed CREATE is not final: another process may have created the table at the
    // same moment, or the table exists and the user may not create tables. The probe says.
    let created = match execute(&sql.create_table) {
        Err(Failure::Lost(detail)) => return Err(Failure::Lost(detail)),
        other => other,
    };
    let probed = execute(&sql.probe).map_err(|failure| match failure {
        Failure::Said(e @ SegmentError::Store { .. }) => {
            let why = match created {
                Err(Failure::Said(c)) => format!("{c}; then {e}"),
                _ => e.to_string(),
            };
            store_error(
                store,
                format!(
                    "table {} is missing or is not Leaf's leaf_alloc (biz_tag, max_id, step, \
                     description, update_time): {why}",
                    sql.table
                ),
            )
            .into()
        }
        busy_or_lost => busy_or_lost,
    });
    probed?;
    execute(&sql.create_marks)
        .or_else(|failure| match failure {
            // Another process creating it at the same moment: PostgreSQL reports the race
            // as a unique violation, and the table is there once that process committed.
            Failure::Said(SegmentError::Store { .. }) => execute(&sql.create_marks),
            busy_or_lost => Err(busy_or_lost),
        })
        .map_err(|failure| match failure {
            Failure::Said(e @ SegmentError::Store { .. }) => store_error(
                store,
                format!(
                    "cannot create the table {}_marks, where each key's highest max_id is kept \
                     (a user allowed CREATE TABLE, or the table made by an administrator): {e}",
                    sql.table
                ),
            )
            .into(),
            busy_or_lost => busy_or_lost,
        })?;
    // The store's own id, which a dump carries into another database. A user that may not
    // make it goes without: the host then knows the store by its address alone.
    for statement in [&sql.create_store_id, &sql.insert_store_id] {
        if let Err(Failure::Lost(detail)) = execute(statement) {
            return Err(Failure::Lost(detail));
        }
    }
    Ok(())
}

/// [`SegmentStore::create`](ferroflake_segment::SegmentStore::create) over `link`.
pub(crate) fn create<L: Link>(
    link: &L,
    key: &str,
    start: i64,
    step: u64,
) -> Result<(), SegmentError> {
    let first = check_create(key, start, step)?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        in_transaction(conn, |conn| {
            let store = L::Conn::STORE;
            if !conn.insert(&key, start, step as i64)? {
                return Err(SegmentError::KeyExists { key }.into());
            }
            // The refusal rolls the insert back.
            if let Some(mark) = mark(store, &key, conn.read_mark(&key)?)? {
                if mark > first {
                    return Err(recreated_below_mark(store, &key, first, mark).into());
                }
            }
            conn.raise_mark(&key, start)
        })
    })
}

/// [`SegmentStore::allocate`](ferroflake_segment::SegmentStore::allocate) over `link`.
pub(crate) fn allocate<L: Link>(
    link: &L,
    key: &str,
    step: u64,
) -> Result<Allocation, SegmentError> {
    check_key(key)?;
    check_step(step)?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        in_transaction(conn, |conn| {
            let store = L::Conn::STORE;
            let bound = (MAX_TABLE_ID - step) as i64;
            let incremented = conn.increment(&key, step as i64, bound)?;
            let high = mark(store, &key, conn.read_mark(&key)?)?;
            let Some((max_id, table_step)) = incremented else {
                // Nothing changed: no row, a row at its bound, or a malformed row (which
                // the read reports).
                return Err(match (record(store, &key, conn.read(&key)?)?, high) {
                    (None, Some(high)) => row_gone(store, &key, high),
                    (None, None) => SegmentError::UnknownKey { key },
                    (Some(_), _) => SegmentError::Exhausted {
                        key,
                        limit: MAX_TABLE_ID,
                    },
                }
                .into());
            };
            let max_id = non_negative(store, &key, "max_id", max_id)?;
            if max_id < step {
                return Err(malformed(store, &key, "max_id", max_id as i64 - step as i64).into());
            }
            // The refusal rolls the increment back: the row stays as it was.
            if let Some(high) = high.filter(|&high| high > max_id - step) {
                return Err(row_below_mark(store, &key, max_id - step, high).into());
            }
            conn.raise_mark(&key, max_id as i64)?;
            Ok(Allocation {
                range: range_after(max_id, step),
                table_step: non_negative(store, &key, "step", table_step)?,
            })
        })
    })
}

/// [`SegmentStore::give_back`](ferroflake_segment::SegmentStore::give_back) over `link`.
pub(crate) fn give_back(
    link: &impl Link,
    key: &str,
    rest: Range,
    expected_max_id: u64,
) -> Result<bool, SegmentError> {
    check_give_back(key, rest, expected_max_id)?;
    let expected = i64::try_from(expected_max_id).map_err(|_| SegmentError::InvalidConfig {
        detail: format!("give-back expects max_id {expected_max_id}, above the table's 2^63 - 1"),
    })?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        in_transaction(conn, |conn| {
            if conn.lower(&key, rest.start as i64, expected)? {
                // The mark comes down with the row, or the next allocation would be refused.
                conn.lower_mark(&key, rest.start as i64, expected)?;
                return Ok(true);
            }
            match conn.read(&key)? {
                None => Err(SegmentError::UnknownKey { key }.into()),
                Some(_) => Ok(false),
            }
        })
    })
}

/// [`SegmentStore::recover`](ferroflake_segment::SegmentStore::recover) over `link`.
pub(crate) fn recover<L: Link>(
    link: &L,
    key: &str,
    above: u64,
    step: u64,
) -> Result<KeyRecord, SegmentError> {
    check_key(key)?;
    check_step(step)?;
    recovered_max_id(above, None, None)?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        in_transaction(conn, |conn| {
            let store = L::Conn::STORE;
            let row = record(store, &key, conn.read(&key)?)?;
            let high = mark(store, &key, conn.read_mark(&key)?)?;
            let max_id = recovered_max_id(above, row.map(|r| r.max_id), high)? as i64;
            conn.raise(&key, max_id, step as i64)?;
            conn.raise_mark(&key, max_id)?;
            record(store, &key, conn.read(&key)?)?.ok_or_else(|| {
                store_error(store, format!("row {key:?} missing after recovery")).into()
            })
        })
    })
}

/// [`SegmentStore::set_step`](ferroflake_segment::SegmentStore::set_step) over `link`.
pub(crate) fn set_step<L: Link>(link: &L, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
    check_key(key)?;
    check_step(step)?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        in_transaction(conn, |conn| {
            let store = L::Conn::STORE;
            conn.set_step(&key, step as i64)?;
            // The read refuses (and so rolls back) a row that MySQL's collation matched
            // to a key spelled otherwise.
            match record(store, &key, conn.read(&key)?)? {
                Some(row) => Ok(row),
                None => Err(match mark(store, &key, conn.read_mark(&key)?)? {
                    Some(high) => row_gone(store, &key, high),
                    None => SegmentError::UnknownKey { key },
                }
                .into()),
            }
        })
    })
}

/// [`SegmentStore::history`](ferroflake_segment::SegmentStore::history) over `link`.
pub(crate) fn history<L: Link>(link: &L) -> Result<Option<StoreHistory>, SegmentError> {
    link.run(|conn| conn.history())
}

/// [`SegmentStore::peek`](ferroflake_segment::SegmentStore::peek) over `link`.
pub(crate) fn peek<L: Link>(link: &L, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
    check_key(key)?;
    let key = key.to_owned();
    link.run(move |conn| {
        conn.admits(&key)?;
        let store = L::Conn::STORE;
        match record(store, &key, conn.read(&key)?)? {
            None => match mark(store, &key, conn.read_mark(&key)?)? {
                Some(high) => Err(row_gone(store, &key, high).into()),
                None => Ok(None),
            },
            row => Ok(row),
        }
    })
}

/// A mark as an ID, refusing a negative one.
fn mark(store: &str, key: &str, high: Option<i64>) -> Result<Option<u64>, SegmentError> {
    high.map(|h| non_negative(store, key, "mark", h))
        .transpose()
}

/// A row as a [`KeyRecord`], refusing negative values.
fn record(
    store: &str,
    key: &str,
    row: Option<(i64, i64)>,
) -> Result<Option<KeyRecord>, SegmentError> {
    row.map(|(max_id, step)| {
        Ok(KeyRecord {
            max_id: non_negative(store, key, "max_id", max_id)?,
            step: non_negative(store, key, "step", step)?,
        })
    })
    .transpose()
}

fn non_negative(store: &str, key: &str, column: &str, value: i64) -> Result<u64, SegmentError> {
    u64::try_from(value).map_err(|_| malformed(store, key, column, value))
}

fn malformed(store: &str, key: &str, column: &str, value: i64) -> SegmentError {
    store_error(
        store,
        format!("row {key:?} has {column} {value}: IDs below 0 are not handed out"),
    )
}

/// Implements [`SegmentStore`](ferroflake_segment::SegmentStore) for a SQL store by the
/// functions above: the SQL stores differ only in how they reach their server ([`Link`]).
macro_rules! segment_store_over_link {
    ($store:ty, $name:expr) => {
        impl ferroflake_segment::SegmentStore for $store {
            fn create(
                &self,
                key: &str,
                start: i64,
                step: u64,
            ) -> Result<(), ferroflake_segment::SegmentError> {
                $crate::sql::create(self, key, start, step)
            }

            fn allocate(
                &self,
                key: &str,
                step: u64,
            ) -> Result<ferroflake_segment::Allocation, ferroflake_segment::SegmentError> {
                $crate::sql::allocate(self, key, step)
            }

            fn give_back(
                &self,
                key: &str,
                rest: ferroflake_segment::Range,
                expected_max_id: u64,
            ) -> Result<bool, ferroflake_segment::SegmentError> {
                $crate::sql::give_back(self, key, rest, expected_max_id)
            }

            fn peek(
                &self,
                key: &str,
            ) -> Result<Option<ferroflake_segment::KeyRecord>, ferroflake_segment::SegmentError>
            {
                $crate::sql::peek(self, key)
            }

            fn recover(
                &self,
                key: &str,
                above: u64,
                step: u64,
            ) -> Result<ferroflake_segment::KeyRecord, ferroflake_segment::SegmentError> {
                $crate::sql::recover(self, key, above, step)
            }

            fn set_step(
                &self,
                key: &str,
                step: u64,
            ) -> Result<ferroflake_segment::KeyRecord, ferroflake_segment::SegmentError> {
                $crate::sql::set_step(self, key, step)
            }

            fn history(
                &self,
            ) -> Result<Option<ferroflake_segment::StoreHistory>, ferroflake_segment::SegmentError>
            {
                $crate::sql::history(self)
            }

            fn identity(&self) -> Option<String> {
                self.store_id
                    .as_ref()
                    .map(|id| format!("{} store {id}", $name))
            }

            fn name(&self) -> &str {
                $name
            }
        }
    };
}
pub(crate) use segment_store_over_link;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_differ_only_in_placeholders_quoting_and_clauses() {
        let pg = Statements::new(Dialect::Postgres, "leaf_alloc");
        let my = Statements::new(Dialect::Mysql, "leaf_alloc");
        assert!(pg.increment.contains("max_id + $1::bigint"));
        assert!(pg.increment.contains("biz_tag = $2 AND"));
        assert!(pg
            .increment
            .ends_with("RETURNING CAST(max_id AS bigint), CAST(step AS bigint)"));
        assert_eq!(my.increment.matches('?').count(), 3);
        assert!(!my.increment.contains("RETURNING"));
        assert!(my.create_table.contains("ON UPDATE CURRENT_TIMESTAMP"));
        assert!(my.create_table.ends_with("ENGINE=InnoDB"));
        assert!(pg
            .lower
            .contains("WHERE biz_tag = $2 AND max_id = $3::bigint"));
        // MySQL's read returns the row's spelling of the key too (see `MysqlStore`).
        assert!(my
            .read
            .starts_with("SELECT max_id, step, biz_tag FROM `leaf_alloc`"));
        assert!(pg.read.starts_with(
            "SELECT CAST(max_id AS bigint), CAST(step AS bigint) FROM \"leaf_alloc\""
        ));
        assert!(pg.set_step.contains("SET step = $1::bigint"));
        assert_eq!(my.set_step.matches('?').count(), 2);
    }

    #[test]
    fn a_lost_connection_is_not_kept() {
        let (kept, out) = on_connection(Some(1), || unreachable!(), |_| Ok::<_, Failure>(()));
        assert!(kept.is_some() && out.is_ok());
        let (kept, out) = on_connection(
            None,
            || Ok(2),
            |_| Err::<(), _>(Failure::Said(store_error("x", "said"))),
        );
        assert!(kept.is_some() && matches!(out, Err(Failure::Said(_))));
        let (kept, out) = on_connection(
            Some(3),
            || unreachable!(),
            |_| Err::<(), _>(Failure::Lost("gone".into())),
        );
        assert!(kept.is_none());
        assert!(matches!(
            out.unwrap_err().into_error("x"),
            SegmentError::Unavailable { .. }
        ));
    }
}
