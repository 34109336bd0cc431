//! The etcd registry: one etcd lease with keepalive per claim, claims made by a
//! create-if-absent transaction, and a persistent high-water key per node id.
//!
//! Keys under the prefix `P`:
//! - `P/claims/ID` = owner token, attached to the claim's etcd lease (gone when it expires);
//! - `P/holders/ID` = who holds it, on the same lease;
//! - `P/marks/ID` = the high-water mark, 20 zero-padded digits, never attached to a lease,
//!   so it outlives every holder.
//!
//! The etcd lease's TTL is the claim's TTL plus its quarantine, rounded up to whole
//! seconds (etcd's unit; it also raises TTLs below its minimum, about 2 s): the holder's
//! own deadline comes from the TTL alone, so an expired holder has stopped a quarantine
//! before etcd frees the id. The epoch is the claim key's create revision, which grows
//! with every claim in the cluster. A keepalive answered with TTL ≤ 0 means the etcd
//! lease is gone: [`LeaseError::Lost`].

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, LeaseKeepAliveStream, LeaseKeeper,
    PutOptions, Txn, TxnOp, TxnOpResponse,
};
use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Registry};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// Node ids leased from etcd (v3 API).
pub struct EtcdRegistry {
    io: Blocking,
    client: Client,
    prefix: String,
    /// Open keepalive streams, by owner token.
    keepers: Mutex<HashMap<String, Keepalive>>,
}

struct Keepalive {
    lease_id: i64,
    keeper: LeaseKeeper,
    stream: LeaseKeepAliveStream,
}

impl EtcdRegistry {
    /// Connects to the etcd member at `endpoint` (`http://host:port`), keeping keys under
    /// `prefix`, and checks that it answers.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if etcd does not answer within a few seconds.
    pub fn connect(endpoint: &str, prefix: &str) -> Result<Self, LeaseError> {
        let io = Blocking::new("etcd")?;
        let options = ConnectOptions::new()
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_timeout(CALL_TIMEOUT);
        let client = io.run("connecting to etcd", CONNECT_TIMEOUT * 2, async {
            let mut client = Client::connect([endpoint], Some(options))
                .await
                .map_err(|e| io.unavailable(format!("cannot connect to {endpoint}: {e}")))?;
            // The channel connects lazily: ask something to know etcd is there.
            client
                .status()
                .await
                .map_err(|e| io.unavailable(format!("{endpoint} does not answer: {e}")))?;
            Ok(client)
        })?;
        Ok(EtcdRegistry {
            io,
            client,
            prefix: prefix.to_owned(),
            keepers: Mutex::new(HashMap::new()),
        })
    }

    fn key(&self, kind: &str, node_id: u64) -> String {
        format!("{}/{kind}/{node_id}", self.prefix)
    }

    fn failed(&self, what: &str, e: etcd_client::Error) -> LeaseError {
        self.io.unavailable(format!("{what}: {e}"))
    }

    /// Sends one keepalive for `grant`'s etcd lease; `Ok(false)` if etcd says it is gone.
    async fn keep_alive(&self, grant: &Grant) -> Result<bool, LeaseError> {
        let cached = self
            .keepers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&grant.token);
        let mut keepalive = match cached {
            Some(k) => k,
            None => match self.open_keepalive(grant).await? {
                Some(k) => k,
                None => return Ok(false),
            },
        };
        let answer = async {
            keepalive.keeper.keep_alive().await?;
            keepalive.stream.message().await
        }
        .await;
        let ttl = match answer {
            Ok(Some(response)) => response.ttl(),
            // The stream broke (etcd restarted, connection lost): reopen it next time.
            Ok(None) => return Err(self.io.unavailable("keepalive stream closed")),
            Err(e) => return Err(self.failed("keepalive", e)),
        };
        if ttl <= 0 {
            return Ok(false);
        }
        self.keepers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(grant.token.clone(), keepalive);
        Ok(true)
    }

    /// Finds the etcd lease behind `grant` from its claim key; `None` if not held.
    async fn open_keepalive(&self, grant: &Grant) -> Result<Option<Keepalive>, LeaseError> {
        let mut client = self.client.clone();
        let response = client
            .get(self.key("claims", grant.node_id), None)
            .await
            .map_err(|e| self.failed("reading the claim", e))?;
        let Some(kv) = response.kvs().first() else {
            return Ok(None);
        };
        if kv.value() != grant.token.as_bytes() {
            return Ok(None);
        }
        let lease_id = kv.lease();
        let (keeper, stream) = client
            .lease_keep_alive(lease_id)
            .await
            .map_err(|e| self.failed("opening a keepalive stream", e))?;
        Ok(Some(Keepalive {
            lease_id,
            keeper,
            stream,
        }))
    }

    /// Writes the mark if the claim is still `grant`'s; `Ok(false)` if it is not.
    async fn write_mark_if_held(
        &self,
        grant: &Grant,
        mark: u64,
        then_delete: bool,
    ) -> Result<bool, LeaseError> {
        let claim = self.key("claims", grant.node_id);
        let mut ops = vec![TxnOp::put(
            self.key("marks", grant.node_id),
            mark_value(mark),
            None,
        )];
        if then_delete {
            ops.push(TxnOp::delete(claim.clone(), None));
            ops.push(TxnOp::delete(self.key("holders", grant.node_id), None));
        }
        let txn = Txn::new()
            .when([Compare::value(
                claim,
                CompareOp::Equal,
                grant.token.as_bytes(),
            )])
            .and_then(ops);
        let response = self
            .client
            .clone()
            .txn(txn)
            .await
            .map_err(|e| self.failed("writing the high-water mark", e))?;
        Ok(response.succeeded())
    }

    /// Reads the recorded mark of `node_id` (0 if none).
    async fn read_mark(&self, node_id: u64) -> Result<u64, LeaseError> {
        let response = self
            .client
            .clone()
            .get(self.key("marks", node_id), None)
            .await
            .map_err(|e| self.failed("reading the high-water mark", e))?;
        Ok(response
            .kvs()
            .first()
            .map_or(0, |kv| parse_mark(kv.value())))
    }
}

/// Zero-padded, so that etcd's byte-wise value order is numeric order.
fn mark_value(mark: u64) -> String {
    format!("{mark:020}")
}

fn parse_mark(bytes: &[u8]) -> u64 {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// etcd lease TTLs are whole seconds: round up, so the store never frees an id early.
fn lease_seconds(ttl: Duration, quarantine: Duration) -> i64 {
    let ms = (ttl + quarantine).as_millis();
    i64::try_from(ms.div_ceil(1000)).unwrap_or(i64::MAX).max(1)
}

impl Registry for EtcdRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        let none_free = LeaseError::NoFreeNode {
            node_count: request.node_count,
        };
        if request.node_count == 0 {
            return Err(none_free);
        }
        let token = new_token("etcd")?;
        self.io.run("claiming a node id", CALL_TIMEOUT * 4, async {
            let mut client = self.client.clone();
            let claims = format!("{}/claims/", self.prefix);
            let listed = client
                .get(
                    claims.as_str(),
                    Some(GetOptions::new().with_prefix().with_keys_only()),
                )
                .await
                .map_err(|e| self.failed("listing claims", e))?;
            let taken: BTreeSet<u64> = listed
                .kvs()
                .iter()
                .filter_map(|kv| kv.key_str().ok()?.strip_prefix(&claims)?.parse().ok())
                .collect();
            let mut free = (0..request.node_count)
                .filter(|id| !taken.contains(id))
                .peekable();
            if free.peek().is_none() {
                return Err(none_free);
            }
            let lease = client
                .lease_grant(lease_seconds(request.ttl, request.quarantine), None)
                .await
                .map_err(|e| self.failed("granting an etcd lease", e))?;
            let on_lease = || Some(PutOptions::new().with_lease(lease.id()));
            for node_id in free {
                let claim = self.key("claims", node_id);
                let txn = Txn::new()
                    .when([Compare::create_revision(claim.clone(), CompareOp::Equal, 0)])
                    .and_then([
                        TxnOp::put(claim, token.as_str(), on_lease()),
                        TxnOp::put(
                            self.key("holders", node_id),
                            request.holder.as_str(),
                            on_lease(),
                        ),
                        TxnOp::get(self.key("marks", node_id), None),
                    ]);
                let response = client
                    .txn(txn)
                    .await
                    .map_err(|e| self.failed("claiming a node id", e))?;
                if !response.succeeded() {
                    continue; // someone was faster: try the next id
                }
                let epoch = response.header().map_or(0, |h| h.revision()) as u64;
                let previous = response
                    .op_responses()
                    .into_iter()
                    .find_map(|op| match op {
                        TxnOpResponse::Get(get) => {
                            Some(get.kvs().first().map_or(0, |kv| parse_mark(kv.value())))
                        }
                        _ => None,
                    })
                    .unwrap_or(0);
                if let Ok((keeper, stream)) = client.lease_keep_alive(lease.id()).await {
                    let keepalive = Keepalive {
                        lease_id: lease.id(),
                        keeper,
                        stream,
                    };
                    self.keepers
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(token.clone(), keepalive);
                }
                return Ok(Grant {
                    node_id,
                    token: token.clone(),
                    epoch,
                    previous_high_water_ms: previous,
            floor_wait: Duration::ZERO,
                });
            }
            let _ = client.lease_revoke(lease.id()).await;
            Err(none_free)
        })
    }

    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError> {
        let lost = LeaseError::Lost {
            node_id: grant.node_id,
            why: ferroflake_lease::Loss::Taken,
        };
        self.io.run("renewing", renew_limit(ttl), async {
            if !self.keep_alive(grant).await? {
                self.keepers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&grant.token);
                return Err(lost);
            }
            // Only the holder writes its mark; never write below what is recorded.
            let mark = high_water_ms.max(self.read_mark(grant.node_id).await?);
            if self.write_mark_if_held(grant, mark, false).await? {
                Ok(())
            } else {
                Err(lost)
            }
        })
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        let keepalive = self
            .keepers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&grant.token);
        self.io.run("releasing", CALL_TIMEOUT, async {
            let mark = high_water_ms.max(self.read_mark(grant.node_id).await?);
            let held = self.write_mark_if_held(grant, mark, true).await?;
            if let (true, Some(k)) = (held, keepalive) {
                // The keys are gone already; revoking just frees the etcd lease early.
                let _ = self.client.clone().lease_revoke(k.lease_id).await;
            }
            Ok(())
        })
    }

    fn name(&self) -> &str {
        "etcd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_sort_as_numbers_and_parse_back() {
        assert!(mark_value(9) < mark_value(10));
        assert_eq!(
            parse_mark(mark_value(1_700_000_000_123).as_bytes()),
            1_700_000_000_123
        );
        assert_eq!(parse_mark(b"garbage"), 0);
    }

    #[test]
    fn lease_seconds_round_up() {
        assert_eq!(
            lease_seconds(Duration::from_millis(1500), Duration::from_millis(600)),
            3
        );
        assert_eq!(
            lease_seconds(Duration::from_secs(2), Duration::from_secs(1)),
            3
        );
        assert_eq!(lease_seconds(Duration::ZERO, Duration::ZERO), 1);
    }
}
