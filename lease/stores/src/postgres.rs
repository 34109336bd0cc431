//! The PostgreSQL registry: one row per node id, and one namespace marker row, in one
//! table. Every operation is one short transaction that reads the rows (locked with
//! `FOR UPDATE`) and the database's clock (`clock_timestamp()`), decides in Rust with
//! [`ferroflake_lease::protocol`], and writes the outcome.
//!
//! Rows (all times on the database clock, in ms):
//! - `node_id = -1`: the namespace marker: `floor_until_ms` and `claimed` (how many ids
//!   have ever been claimed; ids are first claimed lowest-first, so every id below
//!   `claimed` must have a row). Claims lock it, so claims in one table take turns.
//! - `node_id >= 0`: `token` (NULL once released), `holder` (kept on release, for
//!   [`Registry::list`]), `expires_ms`, `high_water_ms`,
//!   `epoch`, and `floor_until_ms` when the row was found lost; for [`Registry::list`]
//!   also `since_ms` (the claim), `renewed_ms` (the last renewal) and `clock_skew_ms`
//!   (the holder's, at that renewal), NULL when unknown (in a row an earlier version
//!   wrote, whose table gets the columns when a session opens).
//!
//! **Lost records.** When the marker is missing (a new table, `DELETE FROM`, `TRUNCATE`,
//! `DROP TABLE` (the table is made again), a server restarted on a new data directory),
//! the claim writes a new marker with a floor of [`LeaseRequest::floor_window`] from the
//! database's clock, and every claim until then reports the rest in
//! [`Grant::floor_wait`]. An id below `claimed` with no row lost only its own row: it gets
//! a floor of its own. Every floor but a new marker's own lasts the widest lost-records
//! window (max_ttl + quarantine) any claim of the table asked for, kept in
//! `<table>_history` (which outlives a `DELETE FROM` or `TRUNCATE` of the lease table), or
//! the claimant's own if wider: a claimant with a short TTL still waits out a holder with a
//! long one.
//!
//! **Restores.** Every claim raises a count kept twice: in the table `<table>_history` and
//! in the marker's `epoch` column. A lease table restored on its own (`pg_dump -t` then
//! `psql`) carries an older count, so the claim that finds the two differ starts a
//! namespace floor. Each claim also records the server's system identifier and timeline
//! there: a standby promoted (which may lag behind what the old primary granted), a
//! recovery to an earlier point in time, or the database restored into another cluster
//! shows a new one, and the claim that finds it starts a namespace floor. A database
//! restored whole into the same cluster and timeline (a data directory copied back) brings
//! everything back alike: after one, run `ferroflake lease restored`.
//!
//! **The registry's id** ([`Registry::identity`]) is the one row of `<table>_registry`:
//! 32 random hex digits inserted (`ON CONFLICT DO NOTHING`) by the first registry to
//! connect, read back by every other. Claims do not read it, and it outlives a
//! `DELETE FROM` or `TRUNCATE` of the lease table as `<table>_history` does.
//!
//! A renewal proves its claim by token and expiry
//! ([`prove_held`](ferroflake_lease::protocol::prove_held)): a missing row is
//! [`Loss::Missing`], another token [`Loss::Taken`], a passed TTL [`Loss::Expired`].

use std::time::Duration;

use ferroflake_lease::protocol::{self, Candidate, RecordView, Standing};
use ferroflake_lease::{
    check_reservation, Grant, LeaseError, LeaseRequest, Loss, NodeState, NodeView, Registry,
    RegistryView, Renewal, Reservation,
};
use ferroflake_store_address::redact;
use tokio::sync::Mutex;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, IsolationLevel, NoTls, Transaction};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// Node ids leased from a PostgreSQL table.
pub struct PostgresRegistry {
    io: Blocking,
    config: Config,
    table: String,
    /// What [`Registry::locator`] says.
    locator: String,
    /// What [`Registry::identity`] says: `<table>_registry` as read at connect.
    identity: String,
    /// The current session; made again when it closes (server restart, network loss).
    /// Transactions need it to themselves, hence the lock.
    session: Mutex<Option<Client>>,
}

/// What a transaction decided (errors from the database travel separately).
enum Outcome<T> {
    Done(T),
    Lost(Loss),
    NoneFree,
}

type PgResult<T> = Result<Outcome<T>, Abort>;

/// Why a transaction stopped short (it is rolled back).
enum Abort {
    /// The database refused a statement, or the session broke.
    Db(tokio_postgres::Error),
    /// A value no registry writes (the text says where, and what to do).
    Unreadable(String),
}

impl From<tokio_postgres::Error> for Abort {
    fn from(e: tokio_postgres::Error) -> Self {
        Abort::Db(e)
    }
}

/// One node id's row.
struct Row {
    token: Option<String>,
    expires_ms: u64,
    quarantine_ms: u64,
    epoch: u64,
    high_water_ms: u64,
    floor_until_ms: u64,
}

/// The columns [`PostgresRegistry::decode_row`] reads.
const ROW_COLUMNS: &str = "token, expires_ms, quarantine_ms, epoch, high_water_ms, floor_until_ms";

/// A stored time, mark, epoch or count: `None` if negative, which no registry writes (read
/// as 0 it would be "no mark", "long expired" or "no floor").
fn stored(value: i64) -> Option<u64> {
    u64::try_from(value).ok()
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The database clock in µs.
/// The server's system identifier and timeline, as `SYSTEM/TIMELINE`: the identifier stays
/// with a cluster for its life (its copies and standbys too), and the timeline grows by
/// one at each promotion of a standby or recovery to a point in time. `None` from a server
/// that keeps these from its users (some hosted services). Only a primary answers: a
/// claim writes, so it runs on one.
async fn server_history(tx: &Transaction<'_>) -> Result<Option<String>, Abort> {
    let row = tx
        .query_one(
            "SELECT CASE WHEN has_function_privilege('pg_control_system()', 'EXECUTE')
                          AND has_function_privilege('pg_walfile_name(pg_lsn)', 'EXECUTE')
                     THEN (SELECT system_identifier::text FROM pg_control_system())
                          || '/' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8)
                     END",
            &[],
        )
        .await?;
    Ok(row.try_get(0)?)
}

/// What `<table>_history` records.
struct Recorded {
    /// Claims made: -1 if the row is missing, when nothing vouches for the rows.
    count: i64,
    /// The widest lost-records window any claim asked for, in ms (0 if none).
    window_ms: u64,
    /// The server's history at the last claim ([`server_history`]).
    server: Option<String>,
}

async fn now_us(tx: &Transaction<'_>) -> Result<u64, Abort> {
    let row = tx
        .query_one(
            "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint",
            &[],
        )
        .await?;
    let us: i64 = row.get(0);
    stored(us).ok_or_else(|| {
        Abort::Unreadable(format!(
            "the database clock reads {us} µs, before 1970; check the server's clock"
        ))
    })
}

/// The client's reading of `url`: [`LeaseError::BadAddress`] for what it refuses.
pub(crate) fn client_config(url: &str) -> Result<Config, LeaseError> {
    url.parse()
        .map_err(|e: tokio_postgres::Error| LeaseError::BadAddress {
            address: redact(url),
            detail: e.to_string(),
        })
}

impl PostgresRegistry {
    /// Connects with `url` (`postgres://user@host:port/db`), creating `table` if missing.
    ///
    /// # Errors
    /// [`LeaseError::BadAddress`] if the URL is refused; [`LeaseError::Unavailable`] if the
    /// server does not answer within a few seconds; [`LeaseError::Store`] if the lease
    /// table cannot be made or the registry's id is unreadable.
    pub fn connect(url: &str, table: &str) -> Result<Self, LeaseError> {
        let mut config = client_config(url)?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("ferroflake-lease");
        let registry = PostgresRegistry {
            io: Blocking::new("postgres")?,
            config,
            table: table.to_owned(),
            locator: crate::address::locator("postgres", url, table),
            identity: String::new(),
            session: Mutex::new(None),
        };
        let identity = registry
            .io
            .run("connecting to PostgreSQL", CONNECT_TIMEOUT * 2, async {
                let mut session = registry.session.lock().await;
                let client = registry.open(&mut session).await?;
                registry.read_or_make_identity(client).await
            })?;
        Ok(PostgresRegistry {
            identity,
            ..registry
        })
    }

    /// The id in `<table>_registry` (made by [`Self::create_sql`]), inserted (random,
    /// once) by the first registry to connect.
    async fn read_or_make_identity(&self, client: &Client) -> Result<String, LeaseError> {
        let table = format!("{}_registry", self.table);
        let fresh = crate::identity::new_id("postgres")?;
        client
            .execute(
                &format!(
                    "INSERT INTO {table} (one, id) VALUES (1, $1) ON CONFLICT (one) DO NOTHING"
                ),
                &[&fresh],
            )
            .await
            .map_err(|e| self.failed("recording the registry's id", e))?;
        // A statement of its own: it sees the row that won, ours or another registry's,
        // which a concurrent insert's snapshot would not.
        let row = client
            .query_opt(&format!("SELECT id FROM {table} WHERE one = 1"), &[])
            .await
            .map_err(|e| self.failed("reading the registry's id", e))?;
        let unreadable = || {
            self.io.store_error(format!(
                "unreadable registry id in {table}; {}",
                crate::identity::DELETE_IT
            ))
        };
        let Some(row) = row else {
            return Err(self.io.unavailable(format!(
                "the registry's id in {table} vanished as it was made"
            )));
        };
        let id: String = row.try_get(0).map_err(|_| unreadable())?;
        crate::identity::readable(id.as_bytes()).ok_or_else(unreadable)
    }

    fn create_sql(&self) -> String {
        let table = &self.table;
        format!(
            "BEGIN;
             SELECT pg_advisory_xact_lock(hashtext('ferroflake-lease-table'));
             CREATE TABLE IF NOT EXISTS {table} (
                 node_id        bigint PRIMARY KEY,
                 holder         text,
                 token          text,
                 expires_ms     bigint NOT NULL DEFAULT 0,
                 quarantine_ms  bigint NOT NULL DEFAULT 0,
                 high_water_ms  bigint NOT NULL DEFAULT 0,
                 epoch          bigint NOT NULL DEFAULT 0,
                 floor_until_ms bigint NOT NULL DEFAULT 0,
                 claimed        bigint NOT NULL DEFAULT 0
             );
             ALTER TABLE {table}
                 ADD COLUMN IF NOT EXISTS since_ms bigint,
                 ADD COLUMN IF NOT EXISTS renewed_ms bigint,
                 ADD COLUMN IF NOT EXISTS clock_skew_ms bigint;
             CREATE TABLE IF NOT EXISTS {table}_history (generation bigint NOT NULL);
             ALTER TABLE {table}_history
                 ADD COLUMN IF NOT EXISTS floor_window_ms bigint NOT NULL DEFAULT 0,
                 ADD COLUMN IF NOT EXISTS server text;
             INSERT INTO {table}_history
                 SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM {table}_history);
             CREATE TABLE IF NOT EXISTS {table}_registry (
                 one integer PRIMARY KEY CHECK (one = 1),
                 id  text NOT NULL
             );
             COMMIT;"
        )
    }

    /// The open session in `slot`, or a new one (the table created if missing).
    async fn open<'a>(&self, slot: &'a mut Option<Client>) -> Result<&'a mut Client, LeaseError> {
        if slot.as_ref().is_some_and(Client::is_closed) {
            *slot = None;
        }
        if slot.is_none() {
            let (client, connection) = self.config.connect(NoTls).await.map_err(|e| {
                self.io
                    .unavailable(format!("cannot connect: {}", with_causes(&e)))
            })?;
            self.io.spawn(async move {
                let _ = connection.await; // ends when the session closes
            });
            client
                .batch_execute(&self.create_sql())
                .await
                .map_err(|e| self.failed("creating the lease table", e))?;
            *slot = Some(client);
        }
        Ok(slot.as_mut().expect("just set"))
    }

    /// Runs `op` in a transaction (committed on `Done`, rolled back otherwise). A table
    /// dropped under us is made again and `op` tried once more: its records are lost, and
    /// `op` then sees that.
    async fn transact(&self, what: &str, op: Op<'_>) -> Result<Outcome<Answer>, LeaseError> {
        let mut slot = self.session.lock().await;
        for attempt in 0..2 {
            let client = self.open(&mut slot).await?;
            let result = async {
                let tx = client.transaction().await?;
                // On an error the transaction is dropped, which rolls it back.
                let outcome = self.run_op(&tx, &op).await?;
                if matches!(outcome, Outcome::Done(_)) {
                    tx.commit().await?;
                } else {
                    tx.rollback().await?;
                }
                Ok::<_, Abort>(outcome)
            }
            .await;
            match result {
                Ok(outcome) => return Ok(outcome),
                Err(Abort::Unreadable(detail)) => return Err(self.io.store_error(detail)),
                Err(Abort::Db(e))
                    if attempt == 0 && e.code() == Some(&SqlState::UNDEFINED_TABLE) =>
                {
                    client
                        .batch_execute(&self.create_sql())
                        .await
                        .map_err(|e| self.failed("creating the lease table", e))?;
                }
                Err(Abort::Db(e)) => {
                    if e.is_closed() || e.as_db_error().is_none() {
                        *slot = None;
                    }
                    return Err(self.failed(what, e));
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    fn failed(&self, what: &str, e: tokio_postgres::Error) -> LeaseError {
        if e.is_closed() || e.as_db_error().is_none() {
            self.io.unavailable(format!("{what}: {}", with_causes(&e)))
        } else {
            self.io.store_error(format!("{what}: {}", with_causes(&e)))
        }
    }

    async fn read_row(&self, tx: &Transaction<'_>, node_id: i64) -> Result<Option<Row>, Abort> {
        let sql = format!(
            "SELECT {ROW_COLUMNS} FROM {} WHERE node_id = $1 FOR UPDATE",
            self.table
        );
        match tx.query_opt(&sql, &[&node_id]).await? {
            Some(r) => Ok(Some(self.decode_row(&r, node_id)?)),
            None => Ok(None),
        }
    }

    /// The row of `node_id` (read with [`ROW_COLUMNS`]).
    fn decode_row(&self, r: &tokio_postgres::Row, node_id: i64) -> Result<Row, Abort> {
        Ok(Row {
            token: r
                .try_get("token")
                .map_err(|e| self.unreadable(node_id, format!("token: {e}")))?,
            expires_ms: self.number(r, node_id, "expires_ms")?,
            quarantine_ms: self.number(r, node_id, "quarantine_ms")?,
            epoch: self.number(r, node_id, "epoch")?,
            high_water_ms: self.number(r, node_id, "high_water_ms")?,
            floor_until_ms: self.number(r, node_id, "floor_until_ms")?,
        })
    }

    /// Column `column` of the row of `node_id` (-1: the marker), a [`stored`] number.
    fn number(&self, r: &tokio_postgres::Row, node_id: i64, column: &str) -> Result<u64, Abort> {
        let value: i64 = r
            .try_get(column)
            .map_err(|e| self.unreadable(node_id, format!("{column}: {e}")))?;
        stored(value).ok_or_else(|| self.unreadable(node_id, format!("{column} is {value}")))
    }

    /// As [`PostgresRegistry::number`] for a column that may be NULL (unknown).
    fn maybe_number(
        &self,
        r: &tokio_postgres::Row,
        node_id: i64,
        column: &str,
    ) -> Result<Option<u64>, Abort> {
        let value: Option<i64> = r
            .try_get(column)
            .map_err(|e| self.unreadable(node_id, format!("{column}: {e}")))?;
        value
            .map(|v| stored(v).ok_or_else(|| self.unreadable(node_id, format!("{column} is {v}"))))
            .transpose()
    }

    /// A row holding what no registry writes: an error, never read as zeros or missing.
    fn unreadable(&self, node_id: i64, what: String) -> Abort {
        let then = if node_id < 0 {
            "the table then waits out a floor"
        } else {
            "its id then waits out a floor"
        };
        Abort::Unreadable(format!(
            "unreadable row node_id = {node_id} of table {} ({what}); delete the row ({then})",
            self.table
        ))
    }

    /// What `<table>_history` records; with `lock`, its row is locked for the rest of the
    /// transaction (claims lock the marker first, then this).
    async fn history(&self, tx: &Transaction<'_>, lock: bool) -> Result<Recorded, Abort> {
        let history = format!("{}_history", self.table);
        let lock = if lock { " FOR UPDATE" } else { "" };
        let counted = tx
            .query_opt(
                &format!("SELECT generation, floor_window_ms, server FROM {history}{lock}"),
                &[],
            )
            .await?;
        let Some(row) = counted else {
            return Ok(Recorded {
                count: -1,
                window_ms: 0,
                server: None,
            });
        };
        let window: i64 = row.try_get(1)?;
        let window = stored(window).ok_or_else(|| {
            Abort::Unreadable(format!(
                "unreadable floor_window_ms {window} in table {history}; set it to 0 (claims \
                 then floor by their own window until one records it again)"
            ))
        })?;
        Ok(Recorded {
            count: row.try_get(0)?,
            window_ms: window,
            server: row.try_get(2)?,
        })
    }

    /// Raises the namespace marker's floor to `window` (or the widest recorded, if wider)
    /// from now (made if missing), and records `window` as asked for.
    async fn restored_tx(&self, tx: &Transaction<'_>, window: Duration) -> Result<Duration, Abort> {
        let t = &self.table;
        // Read unlocked: the marker is locked before the history, as claims do.
        let recorded = self.history(tx, false).await?;
        let window = protocol::widest_window(window, recorded.window_ms);
        let now_ms = now_us(tx).await? / 1000;
        let until = i(protocol::floor_until(now_ms, window));
        let row = tx
            .query_one(
                &format!(
                    "INSERT INTO {t} (node_id, floor_until_ms) VALUES (-1, $1)
                     ON CONFLICT (node_id) DO UPDATE
                     SET floor_until_ms = GREATEST({t}.floor_until_ms, EXCLUDED.floor_until_ms)
                     RETURNING floor_until_ms"
                ),
                &[&until],
            )
            .await?;
        let floor = self.number(&row, -1, "floor_until_ms")?;
        tx.execute(
            &format!("UPDATE {t}_history SET floor_window_ms = GREATEST(floor_window_ms, $1)"),
            &[&i(protocol::ms(window))],
        )
        .await?;
        Ok(protocol::floor_wait(floor, now_ms))
    }

    async fn claim(
        &self,
        tx: &Transaction<'_>,
        request: &LeaseRequest,
        token: &str,
    ) -> PgResult<Grant> {
        let t = &self.table;
        let now_us = now_us(tx).await?;
        let now_ms = now_us / 1000;
        let asked = request.floor_window();
        // The marker: made, with a floor, when missing (new or lost records).
        let marker_sql =
            format!("SELECT floor_until_ms, claimed, epoch FROM {t} WHERE node_id = -1 FOR UPDATE");
        let marker = match tx.query_opt(&marker_sql, &[]).await? {
            Some(row) => row,
            None => {
                let floor = i(protocol::floor_until(now_ms, asked));
                tx.execute(
                    &format!(
                        "INSERT INTO {t} (node_id, floor_until_ms) VALUES (-1, $1)
                         ON CONFLICT (node_id) DO NOTHING"
                    ),
                    &[&floor],
                )
                .await?;
                tx.query_one(&marker_sql, &[]).await?
            }
        };
        let (mut ns_floor, claimed) = (
            self.number(&marker, -1, "floor_until_ms")?,
            self.number(&marker, -1, "claimed")?,
        );
        // Claims count in a table of their own and in the marker's epoch column. A table
        // restored alone (from `pg_dump -t`) carries an older count: its rows may have
        // forgotten live holders, so the namespace waits out a floor.
        let history = format!("{t}_history");
        let recorded = self.history(tx, true).await?;
        let count = recorded.count;
        let marker_count: i64 = marker.try_get("epoch")?;
        // Every floor from here on lasts the widest window any holder asked for.
        let window = protocol::widest_window(asked, recorded.window_ms);
        // A server on another timeline (a standby promoted, which may lag behind what the
        // old primary granted; a recovery to an earlier point) or another system (the
        // database restored into a new cluster) has records that may forget live holders.
        // A table whose last claim recorded no server (deleted, or one an earlier version
        // wrote) vouches for nothing either: one floor, then it is recorded.
        let server = server_history(tx).await?;
        let moved = server.is_some() && server != recorded.server;
        if count != marker_count || moved {
            ns_floor = ns_floor.max(protocol::floor_until(now_ms, window));
            tx.execute(
                &format!("UPDATE {t} SET floor_until_ms = $1 WHERE node_id = -1"),
                &[&i(ns_floor)],
            )
            .await?;
        }
        let next = count.max(marker_count).saturating_add(1);
        tx.execute(&format!("DELETE FROM {history}"), &[]).await?;
        tx.execute(
            &format!(
                "INSERT INTO {history} (generation, floor_window_ms, server) VALUES ($1, $2, $3)"
            ),
            &[&next, &i(protocol::ms(window)), &server],
        )
        .await?;
        tx.execute(
            &format!("UPDATE {t} SET epoch = $1 WHERE node_id = -1"),
            &[&next],
        )
        .await?;
        let n = request.node_count;
        let rows = tx
            .query(
                &format!(
                    "SELECT node_id, {ROW_COLUMNS} FROM {t}
                     WHERE node_id >= 0 AND node_id < $1 ORDER BY node_id"
                ),
                &[&i(n)],
            )
            .await?;
        let mut free = Vec::new();
        let mut recorded = std::collections::BTreeSet::new();
        for r in &rows {
            // The primary key: never NULL, and not negative by the query.
            let node_id: i64 = r.get("node_id");
            let row = self.decode_row(r, node_id)?;
            let id = self.number(r, node_id, "node_id")?;
            recorded.insert(id);
            // The claimant's quarantine, or the holder's if longer.
            let q = row.quarantine_ms.max(protocol::ms(request.quarantine));
            if protocol::standing(row.token.is_some(), row.expires_ms, q, now_ms) == Standing::Free
            {
                free.push(Candidate {
                    id,
                    mark_ms: row.high_water_ms,
                    lost: false,
                });
            }
        }
        // Below `claimed` an id without a row lost it; from `claimed` on, none was claimed.
        let lost = (0..claimed.min(n)).filter(|id| !recorded.contains(id));
        free.extend(lost.map(|id| Candidate {
            id,
            mark_ms: 0,
            lost: true,
        }));
        let never_claimed = (claimed..n).find(|id| !recorded.contains(id));
        let Some(node_id) = protocol::pick_node(request.prefer_node, never_claimed, free) else {
            return Ok(Outcome::NoneFree);
        };
        let row = self.read_row(tx, i(node_id)).await?;
        let (epoch, mark, node_floor) = match &row {
            Some(r) => (r.epoch, r.high_water_ms, r.floor_until_ms),
            // Below `claimed` a missing row was lost, not new: a floor of its own.
            None if node_id < claimed => (0, 0, protocol::floor_until(now_ms, window)),
            None => (0, 0, 0),
        };
        if let Some(r) = &row {
            let q = r.quarantine_ms.max(protocol::ms(request.quarantine));
            if protocol::standing(r.token.is_some(), r.expires_ms, q, now_ms) != Standing::Free {
                return Ok(Outcome::NoneFree); // cannot happen under the marker's lock
            }
        }
        let epoch = protocol::next_epoch(epoch, now_us);
        let expires = now_ms.saturating_add(protocol::ms(request.ttl));
        tx.execute(
            &format!(
                "INSERT INTO {t} AS l (node_id, holder, token, expires_ms, quarantine_ms,
                                       high_water_ms, epoch, floor_until_ms, since_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (node_id) DO UPDATE SET holder = EXCLUDED.holder,
                     token = EXCLUDED.token, expires_ms = EXCLUDED.expires_ms,
                     quarantine_ms = EXCLUDED.quarantine_ms, epoch = EXCLUDED.epoch,
                     floor_until_ms = EXCLUDED.floor_until_ms, since_ms = EXCLUDED.since_ms,
                     renewed_ms = NULL, clock_skew_ms = NULL"
            ),
            &[
                &i(node_id),
                &request.holder,
                &token,
                &i(expires),
                &i(protocol::ms(request.quarantine)),
                &i(mark),
                &i(epoch),
                &i(node_floor),
                &i(now_ms),
            ],
        )
        .await?;
        if node_id >= claimed {
            tx.execute(
                &format!("UPDATE {t} SET claimed = $1 WHERE node_id = -1"),
                &[&i(node_id + 1)],
            )
            .await?;
        }
        Ok(Outcome::Done(Grant {
            node_id,
            token: token.to_owned(),
            epoch,
            previous_high_water_ms: mark,
            floor_wait: protocol::floor_wait_within(ns_floor.max(node_floor), now_ms, window),
        }))
    }

    async fn renew_tx(
        &self,
        tx: &Transaction<'_>,
        grant: &Grant,
        renewal: &Renewal,
    ) -> PgResult<()> {
        let now_ms = now_us(tx).await? / 1000;
        let id = i(grant.node_id);
        let row = self.read_row(tx, id).await?;
        let view = row.as_ref().map(|r| RecordView {
            token: r.token.as_deref(),
            expires_ms: r.expires_ms,
        });
        if let Err(loss) = protocol::prove_held(view, &grant.token, now_ms) {
            return Ok(Outcome::Lost(loss));
        }
        let expires = now_ms.saturating_add(protocol::ms(renewal.ttl));
        tx.execute(
            &format!(
                "UPDATE {} SET expires_ms = $2, high_water_ms = GREATEST(high_water_ms, $3),
                     renewed_ms = $4, clock_skew_ms = $5
                 WHERE node_id = $1",
                self.table
            ),
            &[
                &id,
                &i(expires),
                &i(renewal.high_water_ms),
                &i(now_ms),
                &renewal.clock_skew_ms,
            ],
        )
        .await?;
        Ok(Outcome::Done(()))
    }

    async fn release_tx(&self, tx: &Transaction<'_>, grant: &Grant, mark: u64) -> PgResult<()> {
        let now_ms = now_us(tx).await? / 1000;
        let id = i(grant.node_id);
        let row = self.read_row(tx, id).await?;
        let view = row.as_ref().map(|r| RecordView {
            token: r.token.as_deref(),
            expires_ms: r.expires_ms,
        });
        // Ours, live or past its TTL (nobody else has it): record the final mark as given.
        match protocol::prove_held(view, &grant.token, now_ms) {
            Ok(()) | Err(Loss::Expired) => {}
            Err(loss) => return Ok(Outcome::Lost(loss)),
        }
        tx.execute(
            &format!(
                "UPDATE {} SET token = NULL, expires_ms = 0, high_water_ms = $2
                 WHERE node_id = $1",
                self.table
            ),
            &[&id, &i(mark)],
        )
        .await?;
        Ok(Outcome::Done(()))
    }
}

impl PostgresRegistry {
    /// Writes a reservation over `node_id`'s row if the protocol allows it. The table is
    /// locked first (`EXCLUSIVE`: reads go on, claims wait), since a claim locks the
    /// namespace marker, which a reservation must not make, and then upserts the row it
    /// picked.
    async fn reserve_tx(
        &self,
        tx: &Transaction<'_>,
        node_id: u64,
        holder: &str,
    ) -> Result<Reservation, Abort> {
        let t = &self.table;
        tx.batch_execute(&format!("LOCK TABLE {t} IN EXCLUSIVE MODE"))
            .await?;
        let now_ms = now_us(tx).await? / 1000;
        let row = self.read_row(tx, i(node_id)).await?;
        let outcome = match &row {
            None => Reservation::Made,
            Some(r) => {
                let standing =
                    protocol::standing(r.token.is_some(), r.expires_ms, r.quarantine_ms, now_ms);
                protocol::reservation_over(r.token.as_deref(), standing)
            }
        };
        if outcome == Reservation::Made {
            tx.execute(
                &format!(
                    "INSERT INTO {t} AS l (node_id, holder, token, expires_ms, quarantine_ms,
                                           since_ms)
                     VALUES ($1, $2, $3, $4, 0, $5)
                     ON CONFLICT (node_id) DO UPDATE SET holder = EXCLUDED.holder,
                         token = EXCLUDED.token, expires_ms = EXCLUDED.expires_ms,
                         quarantine_ms = 0, since_ms = EXCLUDED.since_ms,
                         renewed_ms = NULL, clock_skew_ms = NULL"
                ),
                &[
                    &i(node_id),
                    &holder,
                    &protocol::RESERVED_TOKEN,
                    &i(protocol::NEVER_MS),
                    &i(now_ms),
                ],
            )
            .await?;
        }
        Ok(outcome)
    }
}

/// What a transaction does.
enum Op<'a> {
    Claim(&'a LeaseRequest, &'a str),
    Renew(&'a Grant, &'a Renewal),
    Release(&'a Grant, u64),
    Restored(Duration),
    Reserve(u64, &'a str),
    /// Reads the database's clock.
    Clock,
}

/// What a transaction that went through gives back.
enum Answer {
    Granted(Grant),
    Nothing,
    /// How long claims wait from now.
    Floor(Duration),
    /// The database's clock, Unix µs.
    Clock(u64),
    Reserved(Reservation),
}

impl PostgresRegistry {
    async fn run_op(&self, tx: &Transaction<'_>, op: &Op<'_>) -> PgResult<Answer> {
        let some = |o: Outcome<()>| match o {
            Outcome::Done(()) => Outcome::Done(Answer::Nothing),
            Outcome::Lost(l) => Outcome::Lost(l),
            Outcome::NoneFree => Outcome::NoneFree,
        };
        Ok(match *op {
            Op::Claim(request, token) => match self.claim(tx, request, token).await? {
                Outcome::Done(g) => Outcome::Done(Answer::Granted(g)),
                Outcome::Lost(l) => Outcome::Lost(l),
                Outcome::NoneFree => Outcome::NoneFree,
            },
            Op::Renew(grant, renewal) => some(self.renew_tx(tx, grant, renewal).await?),
            Op::Release(grant, mark) => some(self.release_tx(tx, grant, mark).await?),
            Op::Restored(window) => {
                Outcome::Done(Answer::Floor(self.restored_tx(tx, window).await?))
            }
            Op::Clock => Outcome::Done(Answer::Clock(now_us(tx).await?)),
            Op::Reserve(node_id, holder) => Outcome::Done(Answer::Reserved(
                self.reserve_tx(tx, node_id, holder).await?,
            )),
        })
    }
}

impl PostgresRegistry {
    /// Every row and the marker's floor, in one read-only transaction (no row locked, so
    /// it waits for no claim).
    async fn view(&self) -> Result<RegistryView, LeaseError> {
        let mut slot = self.session.lock().await;
        let client = self.open(&mut slot).await?;
        let read = async {
            let tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let now_ms = now_us(&tx).await? / 1000;
            let sql = format!(
                "SELECT node_id, holder, claimed, since_ms, renewed_ms, clock_skew_ms,
                        {ROW_COLUMNS}
                 FROM {} ORDER BY node_id",
                self.table
            );
            let rows = match tx.query(&sql, &[]).await {
                Ok(rows) => rows,
                // Dropped: no records (the next claim makes the table again).
                Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Vec::new(),
                Err(e) => return Err(Abort::Db(e)),
            };
            let mut floor_until_ms = 0;
            let mut nodes = Vec::new();
            for r in &rows {
                let node_id: i64 = r.get("node_id");
                let row = self.decode_row(r, node_id)?;
                if node_id < 0 {
                    // Unread otherwise, but refused here as claims refuse it.
                    self.number(r, node_id, "claimed")?;
                    floor_until_ms = row.floor_until_ms;
                    continue;
                }
                let holder: Option<String> = r
                    .try_get("holder")
                    .map_err(|e| self.unreadable(node_id, format!("holder: {e}")))?;
                let held = row.token.is_some();
                let standing = protocol::standing(held, row.expires_ms, row.quarantine_ms, now_ms);
                let time = |column: &str| self.maybe_number(r, node_id, column);
                let skew: Option<i64> = r
                    .try_get("clock_skew_ms")
                    .map_err(|e| self.unreadable(node_id, format!("clock_skew_ms: {e}")))?;
                nodes.push(
                    NodeView::new(
                        self.number(r, node_id, "node_id")?,
                        holder,
                        row.epoch,
                        NodeState::of(held, standing),
                        row.expires_ms,
                        row.high_water_ms,
                    )
                    .with_times(time("since_ms")?, time("renewed_ms")?, skew),
                );
            }
            // Unread otherwise, but a garbled window is refused here as claims refuse it;
            // last, since a missing table ends the transaction.
            match self.history(&tx, false).await {
                Err(Abort::Db(e)) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => {}
                checked => {
                    checked?;
                }
            }
            Ok::<_, Abort>(RegistryView::new(now_ms, floor_until_ms, nodes))
        }
        .await;
        match read {
            Ok(view) => Ok(view),
            Err(Abort::Unreadable(detail)) => Err(self.io.store_error(detail)),
            Err(Abort::Db(e)) => {
                if e.is_closed() || e.as_db_error().is_none() {
                    *slot = None;
                }
                Err(self.failed("listing the records", e))
            }
        }
    }
}

/// The error and its sources (the client's own message hides "connection refused").
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Registry for PostgresRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        request.validate()?;
        let token = new_token("postgres")?;
        let outcome = self.io.run("claiming a node id", CALL_TIMEOUT, async {
            self.transact("claiming a node id", Op::Claim(request, &token))
                .await
        })?;
        match outcome {
            Outcome::Done(Answer::Granted(grant)) => Ok(grant),
            _ => Err(LeaseError::NoFreeNode {
                node_count: request.node_count,
            }),
        }
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        let outcome = self.io.run("renewing", renew_limit(renewal.ttl), async {
            self.transact("renewing", Op::Renew(grant, renewal)).await
        })?;
        match outcome {
            Outcome::Done(_) => Ok(()),
            Outcome::Lost(why) => Err(grant.lost(why)),
            Outcome::NoneFree => unreachable!("renewals claim nothing"),
        }
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.io.run("releasing", CALL_TIMEOUT, async {
            self.transact("releasing", Op::Release(grant, high_water_ms))
                .await
        })?;
        Ok(())
    }

    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        check_reservation(node_id, holder)?;
        let outcome = self.io.run("reserving a node id", CALL_TIMEOUT, async {
            self.transact("reserving a node id", Op::Reserve(node_id, holder))
                .await
        })?;
        match outcome {
            Outcome::Done(Answer::Reserved(reservation)) => Ok(reservation),
            _ => unreachable!("a reservation answers with its outcome"),
        }
    }

    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        let outcome = self.io.run("starting a floor", CALL_TIMEOUT, async {
            self.transact("starting a floor", Op::Restored(window))
                .await
        })?;
        match outcome {
            Outcome::Done(Answer::Floor(floor)) => Ok(floor),
            _ => unreachable!("starting a floor answers with the floor"),
        }
    }

    fn list(&self) -> Result<RegistryView, LeaseError> {
        self.io
            .run("listing the records", CALL_TIMEOUT, self.view())
    }

    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        let outcome = self.io.run("reading the clock", CALL_TIMEOUT, async {
            self.transact("reading the clock", Op::Clock).await
        })?;
        match outcome {
            Outcome::Done(Answer::Clock(us)) => Ok(Some(us / 1000)),
            _ => unreachable!("reading the clock answers with the clock"),
        }
    }

    fn name(&self) -> &str {
        "postgres"
    }

    fn locator(&self) -> String {
        self.locator.clone()
    }

    fn identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_stored_numbers_are_garbled() {
        assert_eq!(stored(1_700_000_000_123), Some(1_700_000_000_123));
        assert_eq!(stored(0), Some(0));
        assert_eq!(stored(-1), None);
        assert_eq!(stored(i64::MIN), None);
    }
}
