//! The ZooKeeper registry: an ephemeral znode per claimed id for liveness, and a persistent
//! znode per id carrying the high-water mark, the claim's epoch and when it was last renewed.
//!
//! Znodes under the base path `B`:
//! - `B/claims/ID` (ephemeral, owned by this registry's session) = `token holder`;
//! - `B/marks/ID` (persistent) = `MARK STATE EPOCH`, STATE `held` or `released`;
//! - `B/clock`, written to read the server's time (a znode's `mtime`).
//!
//! A claim and its mark change together in one `multi`, guarded by the mark's version, so
//! every claim, renewal and release bumps that version: a holder whose renewal finds a
//! different version has lost the id. The epoch is counted in the mark (never from
//! sequential-node numbers, which only grow and would run out). An id is claimable when
//! its mark is `released`, or when the server's time is past the mark's `mtime` (the last
//! renewal) + TTL + quarantine; a stale ephemeral left by a holder that stopped renewing
//! is then deleted in the same `multi`. When the session expires its ephemerals vanish and
//! the next renewal is [`LeaseError::Lost`]; the leased generator has stopped issuing at
//! its local deadline by then.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Registry};
use zookeeper_client::{Acls, Client, CreateMode, Error as ZkError, MultiWriteError};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// The session timeout asked of the server (it clamps it to its own bounds). Liveness of
/// claims comes from renewals; the session only has to outlive a short server restart.
const SESSION_TIMEOUT: Duration = Duration::from_secs(6);

/// Node ids leased from ZooKeeper.
pub struct ZooKeeperRegistry {
    io: Blocking,
    hosts: String,
    root: String,
    client: Mutex<Client>,
    /// What this registry holds, by owner token.
    held: Mutex<HashMap<String, Held>>,
}

#[derive(Clone)]
struct Held {
    /// The mark znode's version after our last write.
    version: i32,
    /// The highest mark written.
    mark: u64,
    epoch: u64,
    /// The session that owns the claim's ephemeral.
    session: i64,
}

/// A mark znode's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    high_water_ms: u64,
    released: bool,
    epoch: u64,
}

impl Mark {
    fn encode(&self) -> Vec<u8> {
        let state = if self.released { "released" } else { "held" };
        format!("{} {state} {}", self.high_water_ms, self.epoch).into_bytes()
    }

    fn decode(bytes: &[u8]) -> Option<Mark> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut parts = text.split(' ');
        let high_water_ms = parts.next()?.parse().ok()?;
        let released = match parts.next()? {
            "released" => true,
            "held" => false,
            _ => return None,
        };
        let epoch = parts.next()?.parse().ok()?;
        Some(Mark {
            high_water_ms,
            released,
            epoch,
        })
    }
}

impl ZooKeeperRegistry {
    /// Connects to `hosts` (`host:port[,host:port...]`), keeping znodes under `root`
    /// (created if missing), and checks that ZooKeeper answers.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if no session is established within a few seconds.
    pub fn connect(hosts: &str, root: &str) -> Result<Self, LeaseError> {
        let io = Blocking::new("zookeeper")?;
        let client = io.run(
            "connecting to ZooKeeper",
            CONNECT_TIMEOUT,
            Self::open(&io, hosts),
        )?;
        let registry = ZooKeeperRegistry {
            io,
            hosts: hosts.to_owned(),
            root: root.to_owned(),
            client: Mutex::new(client.clone()),
            held: Mutex::new(HashMap::new()),
        };
        registry
            .io
            .run("creating the base znodes", CALL_TIMEOUT, async {
                let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
                for dir in ["claims", "marks"] {
                    client
                        .mkdir(&format!("{root}/{dir}"), &persistent)
                        .await
                        .map_err(|e| registry.failed("creating the base znodes", e))?;
                }
                match client
                    .create(&format!("{root}/clock"), b"", &persistent)
                    .await
                {
                    Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                    Err(e) => Err(registry.failed("creating the clock znode", e)),
                }
            })?;
        Ok(registry)
    }

    async fn open(io: &Blocking, hosts: &str) -> Result<Client, LeaseError> {
        Client::connector()
            .with_session_timeout(SESSION_TIMEOUT)
            .with_connection_timeout(CONNECT_TIMEOUT)
            .with_fail_eagerly()
            .connect(hosts)
            .await
            .map_err(|e| io.unavailable(format!("no session with {hosts}: {e}")))
    }

    /// The client, replaced by a new session if the old one expired.
    fn client(&self) -> Result<Client, LeaseError> {
        let current = self
            .client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if !current.state().is_terminated() {
            return Ok(current);
        }
        let fresh = self.io.run(
            "reconnecting to ZooKeeper",
            CONNECT_TIMEOUT,
            Self::open(&self.io, &self.hosts),
        )?;
        *self.client.lock().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
        Ok(fresh)
    }

    fn failed(&self, what: &str, e: ZkError) -> LeaseError {
        self.io.unavailable(format!("{what}: {e}"))
    }

    fn claim_path(&self, node_id: u64) -> String {
        format!("{}/claims/{node_id}", self.root)
    }

    fn mark_path(&self, node_id: u64) -> String {
        format!("{}/marks/{node_id}", self.root)
    }

    fn forget(&self, token: &str) -> Option<Held> {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token)
    }

    /// The mark's current version if `held` still holds `node_id` (same epoch, not
    /// released, claim owned by `held`'s session), else `None`.
    async fn still_ours(
        &self,
        client: &Client,
        node_id: u64,
        held: &Held,
    ) -> Result<Option<i32>, LeaseError> {
        let (data, stat) = match client.get_data(&self.mark_path(node_id)).await {
            Ok(found) => found,
            Err(ZkError::NoNode | ZkError::SessionExpired) => return Ok(None),
            Err(e) => return Err(self.failed("reading a mark", e)),
        };
        let same_claim = Mark::decode(&data).is_some_and(|m| m.epoch == held.epoch && !m.released);
        let owner = match client.check_stat(&self.claim_path(node_id)).await {
            Ok(claim) => claim.map(|c| c.ephemeral_owner),
            Err(ZkError::SessionExpired) => return Ok(None),
            Err(e) => return Err(self.failed("checking a claim", e)),
        };
        Ok((same_claim && owner == Some(held.session)).then_some(stat.version))
    }

    /// Tries to claim `node_id`; `Ok(None)` if it is held, quarantined or was just taken.
    async fn try_claim(
        &self,
        client: &Client,
        node_id: u64,
        token: &str,
        request: &LeaseRequest,
        server_now_ms: i64,
    ) -> Result<Option<(Mark, i32)>, LeaseError> {
        let claim_path = self.claim_path(node_id);
        let mark_path = self.mark_path(node_id);
        let claim_data = format!("{token} {}", request.holder);
        let ephemeral = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
        let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
        let bad_path = |e: ZkError| self.io.store_error(format!("bad znode path: {e}"));
        let previous = match client.get_data(&mark_path).await {
            Ok((data, stat)) => Some((data, stat)),
            Err(ZkError::NoNode) => None,
            Err(e) => return Err(self.failed("reading a mark", e)),
        };
        let mut multi = client.new_multi_writer();
        let mark = match previous {
            None => {
                // Never claimed: create the claim and the mark together.
                let mark = Mark {
                    high_water_ms: 0,
                    released: false,
                    epoch: 1,
                };
                multi
                    .add_create(&claim_path, claim_data.as_bytes(), &ephemeral)
                    .map_err(bad_path)?;
                multi
                    .add_create(&mark_path, &mark.encode(), &persistent)
                    .map_err(bad_path)?;
                mark
            }
            Some((data, stat)) => {
                let old = Mark::decode(&data).ok_or_else(|| {
                    self.io
                        .store_error(format!("unreadable mark at {mark_path}"))
                })?;
                let quiet_ms = i64::try_from((request.ttl + request.quarantine).as_millis())
                    .unwrap_or(i64::MAX);
                let expired = stat.mtime.saturating_add(quiet_ms) <= server_now_ms;
                if !old.released && !expired {
                    return Ok(None);
                }
                let mark = Mark {
                    released: false,
                    epoch: old.epoch + 1,
                    ..old
                };
                multi
                    .add_set_data(&mark_path, &mark.encode(), Some(stat.version))
                    .map_err(bad_path)?;
                let stale = client
                    .check_stat(&claim_path)
                    .await
                    .map_err(|e| self.failed("checking a claim", e))?;
                if let Some(stale) = stale {
                    // Left by a holder that stopped renewing (its deadline is long past).
                    multi
                        .add_delete(&claim_path, Some(stale.version))
                        .map_err(bad_path)?;
                }
                multi
                    .add_create(&claim_path, claim_data.as_bytes(), &ephemeral)
                    .map_err(bad_path)?;
                mark
            }
        };
        match multi.commit().await {
            Ok(results) => {
                // A created mark has version 0 (the stat a multi returns for a create can be
                // invalid, and -1 would mean "any version" to later writes).
                let version = results
                    .into_iter()
                    .find_map(|r| match r {
                        zookeeper_client::MultiWriteResult::SetData { stat } => Some(stat.version),
                        _ => None,
                    })
                    .unwrap_or(0);
                if version < 0 {
                    return Err(self
                        .io
                        .store_error("ZooKeeper returned no version for the mark"));
                }
                Ok(Some((mark, version)))
            }
            // Someone else got there first (or the stale claim went away meanwhile).
            Err(MultiWriteError::OperationFailed {
                source: ZkError::NodeExists | ZkError::BadVersion | ZkError::NoNode,
                ..
            }) => Ok(None),
            Err(e) => Err(self.failed("claiming a node id", e.into())),
        }
    }
}

impl Registry for ZooKeeperRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        if request.node_count == 0 {
            return Err(LeaseError::NoFreeNode { node_count: 0 });
        }
        let token = new_token("zookeeper")?;
        let client = self.client()?;
        let limit = CALL_TIMEOUT * 4;
        let claimed = self.io.run("claiming a node id", limit, async {
            // The server's clock judges expiry: touch a znode and read its mtime.
            let now = client
                .set_data(&format!("{}/clock", self.root), b"", None)
                .await
                .map_err(|e| self.failed("reading the server clock", e))?
                .mtime;
            // Ids without a claim znode first: usually one of them is free, at one try.
            // Ids with one are taken only if their holder stopped renewing.
            let claimed: std::collections::BTreeSet<u64> = client
                .list_children(&format!("{}/claims", self.root))
                .await
                .map_err(|e| self.failed("listing claims", e))?
                .iter()
                .filter_map(|name| name.parse().ok())
                .collect();
            let unclaimed = (0..request.node_count).filter(|id| !claimed.contains(id));
            let stale_candidates = claimed
                .iter()
                .copied()
                .filter(|id| *id < request.node_count);
            for node_id in unclaimed.chain(stale_candidates) {
                if let Some((mark, version)) = self
                    .try_claim(&client, node_id, &token, request, now)
                    .await?
                {
                    return Ok(Some((node_id, mark, version)));
                }
            }
            Ok(None)
        })?;
        let Some((node_id, mark, version)) = claimed else {
            return Err(LeaseError::NoFreeNode {
                node_count: request.node_count,
            });
        };
        let held = Held {
            version,
            mark: mark.high_water_ms,
            epoch: mark.epoch,
            session: client.session_id().0,
        };
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), held);
        Ok(Grant {
            node_id,
            token,
            epoch: mark.epoch,
            previous_high_water_ms: mark.high_water_ms,
            floor_wait: Duration::ZERO,
        })
    }

    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError> {
        let lost = LeaseError::Lost {
            node_id: grant.node_id,
            why: ferroflake_lease::Loss::Taken,
        };
        let held = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&grant.token)
            .cloned();
        let Some(held) = held else {
            return Err(lost);
        };
        let client = self
            .client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if client.session_id().0 != held.session || client.state().is_terminated() {
            self.forget(&grant.token);
            return Err(lost);
        }
        let mark = Mark {
            high_water_ms: high_water_ms.max(held.mark),
            released: false,
            epoch: held.epoch,
        };
        let mark_path = self.mark_path(grant.node_id);
        let written = self.io.run("renewing", renew_limit(ttl), async {
            let mut version = held.version;
            // A second try only after a write of ours whose answer was lost (see below).
            for _ in 0..2 {
                match client
                    .set_data(&mark_path, &mark.encode(), Some(version))
                    .await
                {
                    Ok(stat) => return Ok(Some(stat)),
                    Err(ZkError::BadVersion) => {}
                    Err(ZkError::NoNode | ZkError::SessionExpired) => return Ok(None),
                    Err(e) => return Err(self.failed("renewing", e)),
                }
                // A renewal cut off by a lost connection may have been applied without our
                // seeing its answer, moving the version on. The claim is still ours if the
                // mark still carries our epoch and our session owns the claim's ephemeral.
                match self.still_ours(&client, grant.node_id, &held).await? {
                    Some(current) => version = current,
                    None => return Ok(None),
                }
            }
            Ok(None)
        })?;
        let Some(stat) = written.filter(|stat| stat.version >= 0) else {
            self.forget(&grant.token);
            return Err(lost);
        };
        let mut all = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = all.get_mut(&grant.token) {
            entry.version = stat.version;
            entry.mark = mark.high_water_ms;
        }
        Ok(())
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        let Some(held) = self.forget(&grant.token) else {
            return Ok(()); // not ours (any more): nothing to give back
        };
        let client = self
            .client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if client.session_id().0 != held.session {
            return Ok(()); // the session that held it is gone, and its ephemeral with it
        }
        let mark = Mark {
            high_water_ms: high_water_ms.max(held.mark),
            released: true,
            epoch: held.epoch,
        };
        let bad_path = |e: ZkError| self.io.store_error(format!("bad znode path: {e}"));
        self.io.run("releasing", CALL_TIMEOUT, async {
            let mut multi = client.new_multi_writer();
            multi
                .add_set_data(
                    &self.mark_path(grant.node_id),
                    &mark.encode(),
                    Some(held.version),
                )
                .map_err(bad_path)?;
            multi
                .add_delete(&self.claim_path(grant.node_id), None)
                .map_err(bad_path)?;
            match multi.commit().await {
                Ok(_) => Ok(()),
                Err(MultiWriteError::OperationFailed { .. }) => Ok(()), // taken over meanwhile
                Err(e) => Err(self.failed("releasing", e.into())),
            }
        })
    }

    fn name(&self) -> &str {
        "zookeeper"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_round_trip() {
        let mark = Mark {
            high_water_ms: 1_700_000_000_123,
            released: true,
            epoch: 7,
        };
        assert_eq!(Mark::decode(&mark.encode()), Some(mark));
        assert_eq!(Mark::decode(b"12 maybe 3"), None);
        assert_eq!(Mark::decode(b""), None);
    }
}
