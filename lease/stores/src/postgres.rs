//! The PostgreSQL registry: one row per node id with holder, owner token, expiry, epoch
//! and high-water mark. Expiry is judged by the database's clock (`now()`), and a claim is
//! one atomic statement.
//!
//! The claim picks the lowest id that has no row, or whose row's expiry plus the
//! claimant's quarantine has passed, and writes it with `INSERT ... ON CONFLICT DO UPDATE
//! ... WHERE expired RETURNING`. Two claimants that pick the same id serialize on the
//! row: the second re-checks the `WHERE` against the first's committed row, updates
//! nothing, and tries again. A renewal that updates zero rows means the token no longer
//! holds the id: [`LeaseError::Lost`]. Rows are never deleted, so the mark and the epoch
//! outlive every holder.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Registry};
use tokio_postgres::{Client, Config, NoTls, Statement};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// Node ids leased from a PostgreSQL table.
pub struct PostgresRegistry {
    io: Blocking,
    config: Config,
    sql: Sql,
    /// The current session; replaced when it closes (server restart, network loss).
    session: Mutex<Option<Arc<Session>>>,
}

/// The statements, for one table.
struct Sql {
    create: String,
    claim: String,
    free: String,
    renew: String,
    release: String,
}

impl Sql {
    fn for_table(table: &str) -> Sql {
        // `$n::float8 * interval '1 millisecond'` turns a ms count into an interval.
        let expired = "l.expires_at + $2::float8 * interval '1 millisecond' <= now()";
        Sql {
            create: format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock(hashtext('ferroflake-lease-table'));
                 CREATE TABLE IF NOT EXISTS {table} (
                     node_id       bigint PRIMARY KEY,
                     holder        text,
                     token         text,
                     expires_at    timestamptz NOT NULL,
                     high_water_ms bigint NOT NULL DEFAULT 0,
                     epoch         bigint NOT NULL DEFAULT 0
                 );
                 COMMIT;"
            ),
            // $1 node count, $2 quarantine ms, $3 holder, $4 token, $5 TTL ms.
            claim: format!(
                "WITH candidate AS (
                     SELECT g.id FROM generate_series(0::bigint, $1::bigint - 1) AS g(id)
                     LEFT JOIN {table} l ON l.node_id = g.id
                     WHERE l.node_id IS NULL OR {expired}
                     ORDER BY g.id LIMIT 1)
                 INSERT INTO {table} AS l (node_id, holder, token, expires_at, high_water_ms, epoch)
                 SELECT id, $3, $4, now() + $5::float8 * interval '1 millisecond', 0, 1 FROM candidate
                 ON CONFLICT (node_id) DO UPDATE
                     SET holder = EXCLUDED.holder, token = EXCLUDED.token,
                         expires_at = EXCLUDED.expires_at, epoch = l.epoch + 1
                     WHERE {expired}
                 RETURNING l.node_id, l.epoch, l.high_water_ms"
            ),
            free: format!(
                "SELECT 1 FROM generate_series(0::bigint, $1::bigint - 1) AS g(id)
                 LEFT JOIN {table} l ON l.node_id = g.id
                 WHERE l.node_id IS NULL OR {expired}
                 LIMIT 1"
            ),
            renew: format!(
                "UPDATE {table} SET expires_at = now() + $3::float8 * interval '1 millisecond',
                                    high_water_ms = GREATEST(high_water_ms, $4)
                 WHERE node_id = $1 AND token = $2"
            ),
            // '-infinity' makes the row claimable at once, whatever the claimant's quarantine.
            release: format!(
                "UPDATE {table} SET token = NULL, holder = NULL, expires_at = '-infinity',
                                    high_water_ms = GREATEST(high_water_ms, $3)
                 WHERE node_id = $1 AND token = $2"
            ),
        }
    }
}

/// A connection with the statements prepared on it.
struct Session {
    client: Client,
    claim: Statement,
    free: Statement,
    renew: Statement,
    release: Statement,
}

impl PostgresRegistry {
    /// Connects with `url` (`postgres://user@host:port/db`), creating `table` if missing.
    ///
    /// # Errors
    /// [`LeaseError::BadAddress`] if the URL is refused; [`LeaseError::Unavailable`] if the
    /// server does not answer within a few seconds.
    pub fn connect(url: &str, table: &str) -> Result<Self, LeaseError> {
        let mut config: Config =
            url.parse()
                .map_err(|e: tokio_postgres::Error| LeaseError::BadAddress {
                    address: url.into(),
                    detail: e.to_string(),
                })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("ferroflake-lease");
        let registry = PostgresRegistry {
            io: Blocking::new("postgres")?,
            config,
            sql: Sql::for_table(table),
            session: Mutex::new(None),
        };
        registry
            .io
            .run("connecting to PostgreSQL", CONNECT_TIMEOUT * 2, async {
                registry.session().await.map(drop)
            })?;
        Ok(registry)
    }

    /// The current session, or a new one (table created, statements prepared).
    async fn session(&self) -> Result<Arc<Session>, LeaseError> {
        let cached = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(session) = cached.filter(|s| !s.client.is_closed()) {
            return Ok(session);
        }
        let (client, connection) = self.config.connect(NoTls).await.map_err(|e| {
            self.io
                .unavailable(format!("cannot connect: {}", with_causes(&e)))
        })?;
        self.io.spawn(async move {
            let _ = connection.await; // ends when the session closes
        });
        client
            .batch_execute(&self.sql.create)
            .await
            .map_err(|e| self.failed("creating the lease table", e))?;
        let prepare = |sql| client.prepare(sql);
        let (claim, free, renew, release) = (
            prepare(&self.sql.claim).await,
            prepare(&self.sql.free).await,
            prepare(&self.sql.renew).await,
            prepare(&self.sql.release).await,
        );
        let prepared = |r: Result<Statement, tokio_postgres::Error>| {
            r.map_err(|e| self.failed("preparing statements", e))
        };
        let session = Arc::new(Session {
            claim: prepared(claim)?,
            free: prepared(free)?,
            renew: prepared(renew)?,
            release: prepared(release)?,
            client,
        });
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(&session));
        Ok(session)
    }

    fn failed(&self, what: &str, e: tokio_postgres::Error) -> LeaseError {
        if e.is_closed() || e.as_db_error().is_none() {
            *self.session.lock().unwrap_or_else(|p| p.into_inner()) = None;
            self.io.unavailable(format!("{what}: {}", with_causes(&e)))
        } else {
            self.io.store_error(format!("{what}: {}", with_causes(&e)))
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

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Registry for PostgresRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        if request.node_count == 0 {
            return Err(LeaseError::NoFreeNode { node_count: 0 });
        }
        let token = new_token("postgres")?;
        let n = as_i64(request.node_count);
        let (ttl, quarantine) = (
            millis(request.ttl) as f64,
            millis(request.quarantine) as f64,
        );
        // Each lost race means another claimant won an id, so this ends within node_count
        // rounds; the bound only guards against a store that misbehaves.
        let rounds = request.node_count.min(4096) + 8;
        for _ in 0..rounds {
            let row = self.io.run("claiming a node id", CALL_TIMEOUT, async {
                let session = self.session().await?;
                let row = session
                    .client
                    .query_opt(
                        &session.claim,
                        &[&n, &quarantine, &request.holder, &token, &ttl],
                    )
                    .await
                    .map_err(|e| self.failed("claiming a node id", e))?;
                if row.is_some() {
                    return Ok(Ok(row));
                }
                // No row: either nothing is free, or another claimant took our pick.
                let free = session
                    .client
                    .query_opt(&session.free, &[&n, &quarantine])
                    .await
                    .map_err(|e| self.failed("looking for a free id", e))?;
                Ok(if free.is_some() { Ok(None) } else { Err(()) })
            })?;
            match row {
                Err(()) => break,     // nothing free
                Ok(None) => continue, // lost a race for the id: look again
                Ok(Some(row)) => {
                    let node_id: i64 = row.get(0);
                    let epoch: i64 = row.get(1);
                    let mark: i64 = row.get(2);
                    return Ok(Grant {
                        node_id: node_id as u64,
                        token,
                        epoch: epoch as u64,
                        previous_high_water_ms: mark.max(0) as u64,
                    });
                }
            }
        }
        Err(LeaseError::NoFreeNode {
            node_count: request.node_count,
        })
    }

    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError> {
        let updated = self.io.run("renewing", renew_limit(ttl), async {
            let session = self.session().await?;
            let (id, ttl, mark) = (
                as_i64(grant.node_id),
                millis(ttl) as f64,
                as_i64(high_water_ms),
            );
            session
                .client
                .execute(&session.renew, &[&id, &grant.token, &ttl, &mark])
                .await
                .map_err(|e| self.failed("renewing", e))
        })?;
        if updated == 1 {
            Ok(())
        } else {
            Err(LeaseError::Lost {
                node_id: grant.node_id,
            })
        }
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.io.run("releasing", CALL_TIMEOUT, async {
            let session = self.session().await?;
            let (id, mark) = (as_i64(grant.node_id), as_i64(high_water_ms));
            session
                .client
                .execute(&session.release, &[&id, &grant.token, &mark])
                .await
                .map_err(|e| self.failed("releasing", e))
        })?;
        Ok(())
    }

    fn name(&self) -> &str {
        "postgres"
    }
}
