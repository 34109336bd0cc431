//! Leaf's table on PostgreSQL: [`PostgresStore`].

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use ferroflake_segment::{SegmentError, StoreHistory};
use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Row, Statement};

use crate::sql::{self, describe, unavailable, Dialect, Failure, Link, Session, Statements};
use crate::sql::{store_error, TIMEOUT};

const STORE: &str = "postgres";

/// The longest a call waits for the server, connecting included, before it is
/// [`SegmentError::Unavailable`]: the server's own statement timeout (3 s) plus a margin,
/// so that a busy server's answer normally arrives first.
const ANSWER_WITHIN: Duration = Duration::from_secs(4);

/// A [`SegmentStore`](ferroflake_segment::SegmentStore) on Leaf's table in PostgreSQL.
///
/// The table is Leaf's `leaf_alloc` with its columns and types unchanged (`biz_tag
/// varchar(128)` primary key, `max_id bigint`, `step int`, `description varchar(256)`,
/// `update_time timestamp`), created if missing and used as it is if a Leaf server made it.
/// Each operation is one statement in autocommit:
///
/// - allocate: `UPDATE ... SET max_id = max_id + step WHERE biz_tag = $key AND max_id <=
///   2^63 - 1 - step RETURNING max_id, step`, owning `[max_id - step, max_id)` as Leaf
///   does; when it changes no row, a read tells an unknown key from an exhausted one;
/// - give-back: `UPDATE ... SET max_id = rest.start WHERE biz_tag = $key AND max_id =
///   expected`;
/// - create: a plain `INSERT` (a unique violation is [`SegmentError::KeyExists`]).
///
/// PostgreSQL has no `ON UPDATE CURRENT_TIMESTAMP`, so every update sets `update_time`.
///
/// Time bounds: a connection attempt gives up after 3 s, the server cancels a statement after
/// 3 s and a row-lock wait after 2 s (`statement_timeout`, `lock_timeout`, sent with the
/// connection), and the kernel drops a connection whose data goes unacknowledged for 3 s
/// (`tcp_user_timeout`, keepalives). A server can still hang without any of these firing
/// (a frozen process whose host still acknowledges packets), and the client has no timeout
/// of its own, so each call runs on a short-lived thread and the caller waits at most
/// 4 s (`ANSWER_WITHIN`): past that the call is [`SegmentError::Unavailable`], its connection
/// is abandoned to the thread (whatever it brings back is never used), and further calls
/// answer `Unavailable` at once until that thread is done, so a hung server holds at most
/// one thread.
pub struct PostgresStore {
    config: Arc<Config>,
    sql: Arc<Statements>,
    slot: Mutex<Slot>,
    /// Refuses a server that may lose acknowledged commits.
    durable_only: bool,
    /// The id in `<table>_store`, read at connect.
    store_id: Option<String>,
}

/// The connection between calls.
#[derive(Default)]
struct Slot {
    conn: Option<Connection>,
    /// A call that outlived [`ANSWER_WITHIN`]: its thread, and when it was given up.
    abandoned: Option<(JoinHandle<()>, Instant)>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("hosts", &self.config.get_hosts())
            .field("ports", &self.config.get_ports())
            .field("dbname", &self.config.get_dbname())
            .field("table", &self.sql.table)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user[:password]@host:port/db`, optionally with
    /// `connect_timeout`, `sslmode=disable|prefer` and `application_name`) and uses
    /// `table`, creating it in Leaf's shape if it is missing.
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
    /// acknowledged (`fsync` off: `accept=lost-writes` in an address). The store still
    /// fails closed when it finds it came back older (marks, the host record), but keys
    /// then stop until an operator recovers them.
    ///
    /// # Errors
    /// As [`connect`](Self::connect), less the check on `fsync`.
    pub fn connect_accepting_lost_writes(url: &str, table: &str) -> Result<Self, SegmentError> {
        Self::open_store(url, table, false)
    }

    fn open_store(url: &str, table: &str, durable_only: bool) -> Result<Self, SegmentError> {
        let mut config: Config = url.parse().map_err(|e| SegmentError::InvalidConfig {
            detail: format!("PostgreSQL address: {}", describe(&e)),
        })?;
        if matches!(config.get_ssl_mode(), SslMode::Require) {
            return Err(SegmentError::InvalidConfig {
                detail: "sslmode=require: this build connects to PostgreSQL without TLS".into(),
            });
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("ferroflake-segment");
        }
        config
            .tcp_user_timeout(TIMEOUT)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(2))
            .keepalives_interval(Duration::from_secs(1))
            .keepalives_retries(2)
            .options(&format!(
                // Warnings and worse only: the table's `CREATE ... IF NOT EXISTS` would
                // otherwise send a notice on every connection, which the client logs.
                // Commits wait for the log on disk whatever the server's default: one lost
                // to a crash would hand its range out again.
                "-c statement_timeout={} -c lock_timeout={} -c client_min_messages=warning \
                 -c synchronous_commit=on",
                TIMEOUT.as_millis(),
                TIMEOUT.as_millis() * 2 / 3
            ));
        let mut store = PostgresStore {
            config: Arc::new(config),
            sql: Arc::new(Statements::new(Dialect::Postgres, table)),
            slot: Mutex::new(Slot::default()),
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

impl Link for PostgresStore {
    type Conn = Connection;

    fn run<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut Connection) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, SegmentError> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((thread, since)) = &slot.abandoned {
            if !thread.is_finished() {
                return Err(unavailable(
                    STORE,
                    format!(
                        "a call given up {:.1?} ago still has no answer from the server",
                        since.elapsed()
                    ),
                ));
            }
            slot.abandoned = None;
        }
        // A connection the client already knows is closed is not worth a round trip.
        let held = slot.conn.take().filter(|c| !c.client.is_closed());
        let (config, sql) = (Arc::clone(&self.config), Arc::clone(&self.sql));
        let durable_only = self.durable_only;
        let (answer, answered) = mpsc::sync_channel(1);
        let call = thread::Builder::new()
            .name("ferroflake-postgres".into())
            .spawn(move || {
                let outcome =
                    sql::on_connection(held, || Connection::open(&config, &sql, durable_only), op);
                // After the caller gave up nobody listens: the outcome, and the
                // connection with it, are dropped here.
                let _ = answer.send(outcome);
            })
            .map_err(|e| unavailable(STORE, format!("cannot start a thread for the call: {e}")))?;
        match answered.recv_timeout(ANSWER_WITHIN) {
            Ok((conn, out)) => {
                slot.conn = conn;
                out.map_err(|f| f.into_error(STORE))
            }
            Err(RecvTimeoutError::Timeout) => {
                slot.abandoned = Some((call, Instant::now()));
                Err(unavailable(
                    STORE,
                    format!("no answer within {ANSWER_WITHIN:?}; the connection is given up"),
                ))
            }
            // The thread ended without answering: `op` panicked. Pass the panic on.
            Err(RecvTimeoutError::Disconnected) => match call.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => Err(store_error(STORE, "the call ended without an answer")),
            },
        }
    }
}

sql::segment_store_over_link!(PostgresStore, STORE);

impl Drop for PostgresStore {
    /// The client closes its connection by blocking on a runtime of its own, which panics on
    /// a thread already inside one (a service's async worker dropping the store): it is
    /// closed on a thread of its own, waited for as long as a call is.
    fn drop(&mut self) {
        let slot = self.slot.get_mut().unwrap_or_else(PoisonError::into_inner);
        let Some(conn) = slot.conn.take() else { return };
        let (done, closed) = mpsc::sync_channel(1);
        let closer = thread::Builder::new()
            .name("ferroflake-postgres".into())
            .spawn(move || {
                drop(conn);
                let _ = done.send(());
            });
        if closer.is_ok() {
            let _ = closed.recv_timeout(ANSWER_WITHIN);
        }
    }
}

/// A client with the store's statements prepared on it.
pub(crate) struct Connection {
    client: Client,
    /// The id in `<table>_store`, if the user could make and read it.
    store_id: Option<String>,
    insert: Statement,
    increment: Statement,
    read: Statement,
    lower: Statement,
    raise: Statement,
    set_step: Statement,
    read_mark: Statement,
    raise_mark: Statement,
    lower_mark: Statement,
}

impl Connection {
    /// Connects, makes sure the table is there, and prepares the statements.
    fn open(config: &Config, sql: &Statements, durable_only: bool) -> Result<Connection, Failure> {
        let mut client = config.connect(NoTls).map_err(failure)?;
        if durable_only {
            let fsync: String = client
                .query_one("SHOW fsync", &[])
                .and_then(|row| row.try_get(0))
                .map_err(failure)?;
            if fsync != "on" {
                return Err(Failure::Said(crate::address::may_lose_writes(
                    "PostgreSQL",
                    "fsync is off",
                    "turn fsync on",
                )));
            }
        }
        sql::prepare_table(STORE, sql, |text| {
            client.batch_execute(text).map_err(failure)
        })?;
        let kind: Option<String> = client
            .query_opt(
                "SELECT CASE relkind WHEN 'r' THEN NULL WHEN 'p' THEN NULL \
                 WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' \
                 ELSE 'relation of kind ' || relkind::text END \
                 FROM pg_class WHERE oid = to_regclass($1)",
                &[&sql.table],
            )
            .map_err(failure)?
            .and_then(|row| row.get(0));
        if let Some(kind) = kind {
            return Err(Failure::Said(sql::not_a_base_table(
                STORE, &sql.table, &kind,
            )));
        }
        let mut prepare = |text: &str| client.prepare(text).map_err(failure);
        let (insert, increment) = (prepare(&sql.insert)?, prepare(&sql.increment)?);
        let (read, lower) = (prepare(&sql.read)?, prepare(&sql.lower)?);
        let (raise, read_mark) = (prepare(&sql.raise)?, prepare(&sql.read_mark)?);
        let (raise_mark, lower_mark) = (prepare(&sql.raise_mark)?, prepare(&sql.lower_mark)?);
        let set_step = prepare(&sql.set_step)?;
        let store_id = client
            .query_opt(&sql.read_store_id, &[])
            .ok()
            .flatten()
            .and_then(|row| row.try_get(0).ok());
        Ok(Connection {
            store_id,
            client,
            insert,
            increment,
            read,
            lower,
            raise,
            set_step,
            read_mark,
            raise_mark,
            lower_mark,
        })
    }
}

impl Session for Connection {
    const STORE: &'static str = STORE;

    fn batch(&mut self, text: &str) -> Result<(), Failure> {
        self.client.batch_execute(text).map_err(failure)
    }

    fn insert(&mut self, key: &str, start: i64, step: i64) -> Result<bool, Failure> {
        match self.client.execute(&self.insert, &[&key, &start, &step]) {
            Ok(_) => Ok(true),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => Ok(false),
            Err(e) => Err(failure(e)),
        }
    }

    fn increment(
        &mut self,
        key: &str,
        step: i64,
        bound: i64,
    ) -> Result<Option<(i64, i64)>, Failure> {
        let row = self
            .client
            .query_opt(&self.increment, &[&step, &key, &bound])
            .map_err(failure)?;
        row.as_ref().map(pair).transpose()
    }

    fn lower(&mut self, key: &str, to: i64, expected: i64) -> Result<bool, Failure> {
        let changed = self
            .client
            .execute(&self.lower, &[&to, &key, &expected])
            .map_err(failure)?;
        Ok(changed > 0)
    }

    fn read(&mut self, key: &str) -> Result<Option<(i64, i64)>, Failure> {
        let row = self
            .client
            .query_opt(&self.read, &[&key])
            .map_err(failure)?;
        row.as_ref().map(pair).transpose()
    }

    fn raise(&mut self, key: &str, max_id: i64, step: i64) -> Result<(), Failure> {
        self.client
            .execute(&self.raise, &[&key, &max_id, &step])
            .map_err(failure)?;
        Ok(())
    }

    fn set_step(&mut self, key: &str, step: i64) -> Result<(), Failure> {
        self.client
            .execute(&self.set_step, &[&step, &key])
            .map_err(failure)?;
        Ok(())
    }

    fn read_mark(&mut self, key: &str) -> Result<Option<i64>, Failure> {
        let row = self
            .client
            .query_opt(&self.read_mark, &[&key])
            .map_err(failure)?;
        row.map(|r| r.try_get::<_, i64>(0))
            .transpose()
            .map_err(|e| Failure::Said(store_error(STORE, format!("the mark: {}", describe(&e)))))
    }

    fn raise_mark(&mut self, key: &str, high: i64) -> Result<(), Failure> {
        self.client
            .execute(&self.raise_mark, &[&key, &high])
            .map_err(failure)?;
        Ok(())
    }

    fn lower_mark(&mut self, key: &str, to: i64, expected: i64) -> Result<(), Failure> {
        self.client
            .execute(&self.lower_mark, &[&to, &key, &expected])
            .map_err(failure)?;
        Ok(())
    }

    /// The cluster's system identifier (kept for its life, by copies and standbys too), the
    /// timeline of its last checkpoint, and how far its write-ahead log is flushed (on a
    /// standby, replayed). The log position grows across restarts and crashes, and goes
    /// back only with the data (a copy of the data directory, a base backup).
    fn store_id(&self) -> Option<String> {
        self.store_id.clone()
    }

    fn history(&mut self) -> Result<Option<StoreHistory>, Failure> {
        let row = match self.client.query_one(
            "SELECT s.system_identifier::text, c.timeline_id::bigint,
                    ((CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                           ELSE pg_current_wal_flush_lsn() END) - '0/0'::pg_lsn)::text
             FROM pg_control_system() s, pg_control_checkpoint() c",
            &[],
        ) {
            Ok(row) => row,
            // A server that keeps these from its users (some hosted services), or one
            // older than PostgreSQL 10: it does not say.
            Err(e)
                if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE)
                    || e.code() == Some(&SqlState::UNDEFINED_FUNCTION) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(failure(e)),
        };
        let said = |what: &str, e: String| {
            Failure::Said(store_error(
                STORE,
                format!("the server's history, {what}: {e}"),
            ))
        };
        let system: String = row.try_get(0).map_err(|e| said("system", describe(&e)))?;
        let timeline: i64 = row.try_get(1).map_err(|e| said("timeline", describe(&e)))?;
        let position: Option<String> =
            row.try_get(2).map_err(|e| said("position", describe(&e)))?;
        // A standby that has replayed nothing yet has no position to tell.
        let Some(position) = position else {
            return Ok(None);
        };
        Ok(Some(StoreHistory {
            system,
            timeline: u64::try_from(timeline).map_err(|e| said("timeline", e.to_string()))?,
            position: position
                .parse()
                .map_err(|e: std::num::ParseIntError| said("position", e.to_string()))?,
        }))
    }
}

/// `(max_id, step)` from a row of the increment or the read.
fn pair(row: &Row) -> Result<(i64, i64), Failure> {
    let column = |i: usize| {
        row.try_get::<_, Option<i64>>(i)
            .map_err(|e| describe(&e))
            .and_then(|v| v.ok_or_else(|| "NULL".to_owned()))
            .map_err(|e| Failure::Said(store_error(STORE, format!("column {i} of the row: {e}"))))
    };
    Ok((column(0)?, column(1)?))
}

/// Sorts a client error. Anything that is not the server's answer (a socket error, a closed
/// connection, a protocol error) and the server ending the session lose the connection;
/// the server being busy or out of resources is [`SegmentError::Unavailable`] on a
/// connection that stays; the rest is [`SegmentError::Store`].
fn failure(e: postgres::Error) -> Failure {
    let detail = describe(&e);
    let Some(code) = e.code() else {
        return Failure::Lost(detail);
    };
    let code = code.code();
    match &code[..2] {
        // Connection exceptions; the server shutting the session down.
        "08" => Failure::Lost(detail),
        "57" if code != "57014" => Failure::Lost(detail),
        // A statement or lock timeout (57014, 55P03), too many connections or no resources
        // (53), a failure of the server's system (58), a deadlock or serialisation
        // failure (40): worth retrying.
        "57" | "53" | "58" | "40" => Failure::Said(unavailable(STORE, detail)),
        _ if code == "55P03" => Failure::Said(unavailable(STORE, detail)),
        _ => Failure::Said(store_error(STORE, detail)),
    }
}
