//! The etcd registry: one etcd lease with keepalive per claim, claims made by a
//! compare-and-set transaction, and persistent per-id keys for the high-water mark and the
//! epoch. Decisions are made in Rust with [`ferroflake_lease::protocol`]; transactions
//! only apply them if nothing changed since the read.
//!
//! Keys under the prefix `P`:
//! - `P/claims/ID` = owner token, attached to the claim's etcd lease (gone when it expires);
//!   a reservation ([`Registry::reserve`]) is `reserved` on no etcd lease, so it never
//!   goes, and claims find the id taken as they find any claim key;
//! - `P/holders/ID` = who holds it, on the same lease; a release keeps it, off any lease,
//!   so that [`Registry::list`] still names who gave the id back;
//! - `P/marks/ID` = the high-water mark, 20 zero-padded digits, never on a lease;
//! - `P/epochs/ID` = the last epoch handed out for the id, never on a lease;
//! - `P/since/ID` = when the current (or last) claim was made, and `P/renewals/ID` =
//!   `RENEWED SKEW`, when it was last renewed and the holder's clock skew then (`-`: none
//!   read), for [`Registry::list`]: ms on the writing host's wall clock (etcd has none),
//!   never on a lease; a claim writes the first and deletes the second;
//! - `P/namespace` = how many ids have ever been claimed (ids are first claimed
//!   lowest-first, so every id below it has an epoch key), never on a lease;
//! - `P/floor` and `P/floors/ID`: present while a lost-records floor lasts, each on an etcd
//!   lease whose TTL is the floor's window;
//! - `P/window` = the widest lost-records window (max_ttl + quarantine, ms, zero-padded)
//!   any claim of the namespace asked for, never on a lease;
//! - `P/history` = `CLUSTER_ID RAFT_INDEX REVISION RAFT_TERM`: the cluster that applied
//!   the last claim, and its applied raft index, revision and raft term as read just
//!   before, never on a lease;
//! - `P/registry` = the registry's id ([`Registry::identity`]), 32 random hex digits put
//!   by the first registry to connect (a transaction on `create_revision == 0`) and read
//!   back by every other, never on a lease. Random, not the cluster id, which two
//!   clusters set up alike share. Claims do not read it: a prefix whose other keys were
//!   lost still floors, whatever it says.
//!
//! The etcd lease's TTL is the claim's TTL plus its quarantine, rounded up to whole
//! seconds (etcd's unit; it also raises TTLs below its minimum, about 2 s): the holder's
//! own deadline comes from the TTL alone, so an expired holder has stopped a quarantine
//! before etcd frees the id.
//!
//! **Renewals prove the claim** ([`prove_held`](ferroflake_lease::protocol::prove_held)):
//! the claim key must exist ([`Loss::Missing`]) and carry the token ([`Loss::Taken`]):
//! deleting keys does not revoke an etcd lease, so a keepalive alone proves nothing. The
//! claim's expiry is read from its etcd lease (remaining TTL, whole seconds, rounded down)
//! so that a renewal after the TTL is [`Loss::Expired`] rather than a revival.
//!
//! **Lost records.** etcd has no clock to read, so floors are etcd leases: when
//! `P/namespace` is missing (a new prefix, `etcdctl del --prefix`, a restart with its data
//! wiped) the claim writes it together with `P/floor` on a lease of
//! [`LeaseRequest::floor_window`] (rounded up to whole seconds), and every claim while that
//! key lives reports its lease's remaining TTL, plus one second for etcd's rounding down,
//! as [`Grant::floor_wait`]. An id below the claimed count with no epoch key gets
//! `P/floors/ID` the same way. Every such floor lasts the widest window recorded in
//! `P/window` (or the claimant's own, if wider), so a claimant with a short TTL still
//! waits out a holder with a long one.
//!
//! **Restores.** `etcdctl snapshot restore` (or `etcdutl`) brings back the keys as they
//! were at the snapshot, forgetting the claims made since, and starts a new raft log: the
//! raft index goes back to about the member count, while the revision stays the
//! snapshot's. A claim reads `P/history` (a linearizable read, so the member has applied
//! every claim before it) and then the member's applied raft index and revision. Within
//! one history every applied raft entry raises the revision by one at most (a write) or
//! not at all (a lease grant, a failed transaction, a leader's empty entry), so
//! `raft index - revision` never shrinks; after a restore it drops by about the
//! snapshot's raft index, and stays below the recorded one after any number of writes
//! (only as many entries that write nothing as the snapshot's raft index would bring it
//! back). The raft term only grows in one history (each election raises it, and a
//! restarted member holds one), while a restored cluster starts again at its first
//! terms: a term below the recorded one is a restore too, whatever entries came after,
//! if the snapshot's records were written after any election past the first. The claim
//! starts a floor when the raft index or term is below the recorded one, the gap has
//! shrunk, the cluster id differs, or the record lacks the revision (written by an
//! earlier version, or missing: a namespace floor, then it is recorded). The index
//! and revision are read in two status calls and bounded so that no interleaving with
//! other writes shows a shrink that did not happen (`History::followed_by`).
//! The applied index, not the committed one, is read: the revision is that of the
//! applied entries, and a member slow to apply would otherwise show a gap too wide,
//! which after a restore could hide the drop.
//!
//! A restore also brings back the snapshot's `P/window`, which forgets windows asked for
//! since: a restore so found floors by [`protocol::LONGEST_WINDOW`], the longest window
//! any claim may ask for, as no record says how long the forgotten holders may issue.
//! A data directory copied back file by file keeps its own raft log and shows nothing:
//! after one, run `ferroflake lease restored`. In a cluster of several members a claim
//! may read a lagging member and start a floor it did not need, never the other way
//! round.
//!
//! **Epochs** are [`next_epoch`](ferroflake_lease::protocol::next_epoch)(recorded, this
//! host's wall clock in µs): above every epoch recorded for the id, and, when the records
//! are lost, above every earlier one as long as the claimants' wall clocks are not behind
//! the earlier claimants' by more than the time between the claims.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, LeaseKeepAliveStream, LeaseKeeper,
    PutOptions, Txn, TxnOp, TxnOpResponse,
};
use ferroflake_lease::protocol::{self, Candidate, RecordView};
use ferroflake_lease::{
    check_reservation, Grant, LeaseError, LeaseRequest, Loss, NodeState, NodeView, Registry,
    RegistryView, Renewal, Reservation,
};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// Node ids leased from etcd (v3 API).
pub struct EtcdRegistry {
    io: Blocking,
    client: Client,
    prefix: String,
    /// What [`Registry::locator`] says.
    locator: String,
    /// What [`Registry::identity`] says: [`Self::identity_key`] as read at connect.
    identity: String,
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
    /// [`LeaseError::Unavailable`] if etcd does not answer within a few seconds;
    /// [`LeaseError::Store`] if the registry's id is unreadable (the error names the key).
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
        let registry = EtcdRegistry {
            io,
            client,
            prefix: prefix.to_owned(),
            locator: crate::address::locator("etcd", endpoint, prefix),
            identity: String::new(),
            keepers: Mutex::new(HashMap::new()),
        };
        let identity = registry.io.run(
            "reading the registry's id",
            CALL_TIMEOUT * 2,
            registry.read_or_make_identity(),
        )?;
        Ok(EtcdRegistry {
            identity,
            ..registry
        })
    }

    /// The id at [`Self::identity_key`], made (random, once) by the first registry to
    /// connect to the prefix.
    async fn read_or_make_identity(&self) -> Result<String, LeaseError> {
        let key = self.identity_key();
        for _ in 0..8 {
            if let Some((value, ..)) = self.get(&key).await? {
                return crate::identity::readable(&value).ok_or_else(|| {
                    self.io.store_error(format!(
                        "unreadable registry id at {key}; {}",
                        crate::identity::DELETE_IT
                    ))
                });
            }
            // Put only if absent; then read back what won, ours or another registry's.
            let fresh = crate::identity::new_id("etcd")?;
            let txn = Txn::new()
                .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(key.clone(), fresh, None)]);
            self.client
                .clone()
                .txn(txn)
                .await
                .map_err(|e| self.failed("recording the registry's id", e))?;
        }
        Err(self.io.unavailable(format!(
            "the registry's id at {key} keeps vanishing as it is made"
        )))
    }

    /// The keys under `P/kind/`, by node id, with their values.
    async fn list(&self, kind: &str) -> Result<BTreeMap<u64, Vec<u8>>, LeaseError> {
        let leased = self.list_leased(kind).await?;
        Ok(leased
            .into_iter()
            .map(|(id, (value, _))| (id, value))
            .collect())
    }

    fn key(&self, kind: &str, node_id: u64) -> String {
        format!("{}/{kind}/{node_id}", self.prefix)
    }

    fn failed(&self, what: &str, e: etcd_client::Error) -> LeaseError {
        self.io.unavailable(format!("{what}: {e}"))
    }

    /// The number stored at `key` (a mark, an epoch, the claimed count), or an error that
    /// names the key: a garbled value must not read as 0, "nothing recorded".
    fn stored_number(&self, key: &str, value: &[u8]) -> Result<u64, LeaseError> {
        parse_mark(value).ok_or_else(|| {
            let then = if key == self.namespace_key() {
                "delete it (the namespace then waits out a floor)".to_owned()
            } else if key == self.window_key() {
                "delete it (claims then floor by their own window until one records it again)"
                    .to_owned()
            } else if let Some(id) = key.strip_prefix(&format!("{}/marks/", self.prefix)) {
                // Without its epoch key the id counts as lost and gets a floor; a mark
                // deleted alone would read as 0 with none.
                format!(
                    "delete it and {}/epochs/{id} (the id then waits out a floor)",
                    self.prefix
                )
            } else {
                "delete it (its id then waits out a floor)".to_owned()
            };
            self.io
                .store_error(format!("unreadable value at {key}; {then}"))
        })
    }

    fn namespace_key(&self) -> String {
        format!("{}/namespace", self.prefix)
    }

    fn window_key(&self) -> String {
        format!("{}/window", self.prefix)
    }

    fn history_key(&self) -> String {
        format!("{}/history", self.prefix)
    }

    /// The registry's id ([`Registry::identity`]).
    fn identity_key(&self) -> String {
        format!("{}/registry", self.prefix)
    }

    /// The history as it stands now, after a floor if it moved back since the last claim
    /// recorded it (see the module docs): the claim records what this returns. The floor
    /// is of `window` when nothing says what was lost (no record, or one without its
    /// revision), and of [`protocol::LONGEST_WINDOW`] when the history moved back.
    async fn check_history(&self, window: Duration) -> Result<History, LeaseError> {
        let key = self.history_key();
        // Read first: a linearizable read returns only once the member has applied every
        // write before it, so its raft index below is at least what any claim recorded.
        let recorded = match self.get(&key).await? {
            Some((value, ..)) => Some(History::decode(&value).ok_or_else(|| {
                self.io.store_error(format!(
                    "unreadable value at {key}; delete it (the namespace then waits out a floor)"
                ))
            })?),
            None => None,
        };
        let before = self.read_status().await?;
        let after = self.read_status().await?;
        match recorded {
            Some(r) if r.revision.is_some() => {
                if !r.followed_by(&before, &after) {
                    self.put_floor(protocol::LONGEST_WINDOW).await?;
                }
            }
            _ => {
                self.put_floor(window).await?;
            }
        }
        Ok(History::recorded_from(&before, &after))
    }

    /// The member's cluster id, applied raft index and revision, from one status call.
    async fn read_status(&self) -> Result<Status, LeaseError> {
        let status = self
            .client
            .clone()
            .status()
            .await
            .map_err(|e| self.failed("reading the member's status", e))?;
        let header = status
            .header()
            .ok_or_else(|| self.io.store_error("etcd's status answer has no header"))?;
        let revision = u64::try_from(header.revision()).map_err(|_| {
            self.io.store_error(format!(
                "etcd's status answer has a negative revision ({})",
                header.revision()
            ))
        })?;
        // Servers before etcd 3.4 do not report the applied index: the committed one is
        // the nearest (at or above it).
        let raft_index = match status.raft_applied_index() {
            0 => status.raft_index(),
            applied => applied,
        };
        Ok(Status {
            cluster_id: header.cluster_id(),
            raft_index,
            revision,
            raft_term: status.raft_term(),
        })
    }

    /// Records `asked` at [`Self::window_key`] if it is wider than what is recorded there;
    /// returns the window floors last ([`protocol::widest_window`]). Done before a claim
    /// is written, so a holder's window is on record before it may issue.
    async fn widen_window(&self, asked: Duration) -> Result<Duration, LeaseError> {
        let key = self.window_key();
        let asked_ms = protocol::ms(asked);
        for _ in 0..8 {
            let unchanged = match self.get(&key).await? {
                Some((value, modified, _, _)) => {
                    let recorded = self.stored_number(&key, &value)?;
                    if recorded >= asked_ms {
                        return Ok(protocol::widest_window(asked, recorded));
                    }
                    Compare::mod_revision(key.clone(), CompareOp::Equal, modified)
                }
                None => Compare::create_revision(key.clone(), CompareOp::Equal, 0),
            };
            let txn = Txn::new().when([unchanged]).and_then([TxnOp::put(
                key.clone(),
                mark_value(asked_ms),
                None,
            )]);
            let written = self
                .client
                .clone()
                .txn(txn)
                .await
                .map_err(|e| self.failed("recording the lost-records window", e))?;
            if written.succeeded() {
                return Ok(protocol::widest_window(asked, asked_ms));
            }
        }
        Err(self
            .io
            .unavailable("the lost-records window keeps changing"))
    }

    /// The time to live of the etcd lease `lease` behind `key`.
    async fn read_lease_ttl(&self, key: &str, lease: i64) -> Result<LeaseTtl, LeaseError> {
        let answer = self
            .client
            .clone()
            .lease_time_to_live(lease, None)
            .await
            .map_err(|e| self.failed(&format!("reading the etcd lease of {key}"), e))?;
        lease_ttl(answer.ttl(), answer.granted_ttl()).ok_or_else(|| {
            self.io.store_error(format!(
                "etcd lease {lease:x} of {key} reports {} s left of {} s granted; check the \
                 etcd server",
                answer.ttl(),
                answer.granted_ttl()
            ))
        })
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
        renewal: Option<String>,
    ) -> Result<bool, LeaseError> {
        let claim = self.key("claims", grant.node_id);
        let mut ops = vec![TxnOp::put(
            self.key("marks", grant.node_id),
            mark_value(mark),
            None,
        )];
        if let Some(renewal) = renewal {
            ops.push(TxnOp::put(
                self.key("renewals", grant.node_id),
                renewal,
                None,
            ));
        }
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
        let key = self.key("marks", node_id);
        let response = self
            .client
            .clone()
            .get(key.as_str(), None)
            .await
            .map_err(|e| self.failed("reading the high-water mark", e))?;
        match response.kvs().first() {
            Some(kv) => self.stored_number(&key, kv.value()),
            None => Ok(0),
        }
    }
}

/// One status answer of an etcd member: its cluster, applied raft index, revision and
/// raft term. etcd reads the revision and the index one after the other, not at one
/// instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Status {
    cluster_id: u64,
    raft_index: u64,
    revision: u64,
    raft_term: u64,
}

/// What `P/history` records: the cluster that applied the last claim, and a raft index
/// and revision read before the claim, such that `raft_index - revision` is at most what
/// it was at some instant (see [`History::recorded_from`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct History {
    cluster_id: u64,
    raft_index: u64,
    /// `None` in a record of an earlier version, which recorded no revision.
    revision: Option<u64>,
    /// The raft term, which never goes back in one history (a restored cluster starts
    /// again at the first terms); `None` where no term was recorded.
    raft_term: Option<u64>,
}

impl History {
    /// What to record from two status answers, `before` then `after`: the index of the
    /// first, the revision of the second. The revision read after the index is at least
    /// the one of the entries up to that index, so the gap recorded is at most the gap
    /// the member had when `before` read its index.
    fn recorded_from(before: &Status, after: &Status) -> History {
        History {
            cluster_id: before.cluster_id,
            raft_index: before.raft_index,
            revision: Some(after.revision),
            raft_term: Some(before.raft_term),
        }
    }

    fn encode(&self) -> String {
        let mut text = format!("{} {}", self.cluster_id, self.raft_index);
        for field in [self.revision, self.raft_term].into_iter().flatten() {
            text.push_str(&format!(" {field}"));
        }
        text
    }

    /// `None` unless `bytes` is exactly what [`History::encode`] writes (or an earlier
    /// version wrote: no revision, or no term).
    fn decode(bytes: &[u8]) -> Option<History> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut fields = text.split(' ');
        let cluster_id = parse_mark(fields.next()?.as_bytes())?;
        let raft_index = parse_mark(fields.next()?.as_bytes())?;
        let mut optional = || match fields.next() {
            Some(field) => parse_mark(field.as_bytes()).map(Some),
            None => Some(None),
        };
        let revision = optional()?;
        let raft_term = optional()?;
        let whole = fields.next().is_none() && (revision.is_some() || raft_term.is_none());
        whole.then_some(History {
            cluster_id,
            raft_index,
            revision,
            raft_term,
        })
    }

    /// Whether two status answers read now, `before` then `after`, can come after this
    /// record in one history: the same cluster, a raft index not behind (a raft log only
    /// grows), and a gap between raft index and revision not shrunk (see the module
    /// docs), and a raft term not behind. A record without a revision is never followed:
    /// it cannot rule out a restore.
    ///
    /// The gap now is taken at its widest: `after`'s index less `before`'s revision, plus
    /// one. etcd may report the revision of an entry it is still applying beside the
    /// index before it, one revision ahead; with the index read in a later call, every
    /// entry up to it has been applied, so no answer shows a gap below the true one, and
    /// a history that did not move back is never taken for one that did.
    fn followed_by(&self, before: &Status, after: &Status) -> bool {
        let Some(revision) = self.revision else {
            return false;
        };
        let gap = |index: u64, revision: u64| i128::from(index) - i128::from(revision);
        self.cluster_id == before.cluster_id
            && self.cluster_id == after.cluster_id
            && !matches!(self.raft_term, Some(term) if before.raft_term < term)
            && after.raft_index >= self.raft_index
            && gap(after.raft_index, before.revision) + 1 >= gap(self.raft_index, revision)
    }
}

/// Zero-padded, so that etcd's byte-wise value order is numeric order.
fn mark_value(mark: u64) -> String {
    format!("{mark:020}")
}

/// `P/renewals/ID`'s value: `RENEWED SKEW`, the skew `-` if none was read.
fn renewal_value(renewed_ms: u64, skew_ms: Option<i64>) -> String {
    match skew_ms {
        Some(skew) => format!("{renewed_ms} {skew}"),
        None => format!("{renewed_ms} -"),
    }
}

/// [`renewal_value`] read back; `None` if garbled.
fn parse_renewal(value: &[u8]) -> Option<(u64, Option<i64>)> {
    let text = std::str::from_utf8(value).ok()?;
    let (renewed, skew) = text.split_once(' ')?;
    let renewed = crate::record::number(renewed)?;
    match skew {
        "-" => Some((renewed, None)),
        skew => Some((renewed, Some(crate::record::signed(skew)?))),
    }
}

/// A number as [`mark_value`] writes it: decimal digits only. `None` for anything else.
fn parse_mark(bytes: &[u8]) -> Option<u64> {
    let digits = !bytes.is_empty() && bytes.iter().all(u8::is_ascii_digit);
    digits
        .then(|| std::str::from_utf8(bytes).ok()?.parse().ok())
        .flatten()
}

/// etcd lease TTLs are whole seconds: round up, so the store never frees an id early.
fn lease_seconds(ttl: Duration, quarantine: Duration) -> i64 {
    let ms = (ttl + quarantine).as_millis();
    i64::try_from(ms.div_ceil(1000)).unwrap_or(i64::MAX).max(1)
}

/// This host's wall clock in µs (etcd has no clock of its own to read).
fn local_now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// What etcd says of an etcd lease's time to live.
#[derive(Debug, PartialEq, Eq)]
enum LeaseTtl {
    /// Unknown (etcd answers a TTL of -1), or expired and not yet revoked (etcd revokes
    /// expired leases in the background, and until then reports the time since expiry as a
    /// negative TTL: -2, -3, ...).
    Expired,
    /// Whole seconds left (rounded down) and granted.
    Live { left_s: u64, granted_s: u64 },
}

/// `None` for a live lease granted less than a second: etcd raises every grant to its
/// minimum TTL, so that answer is garbled, and read as 0 it would end a floor at once and
/// let a claim outlive its quarantine.
fn lease_ttl(remaining_s: i64, granted_s: i64) -> Option<LeaseTtl> {
    let Ok(left_s) = u64::try_from(remaining_s) else {
        return Some(LeaseTtl::Expired);
    };
    let granted_s = u64::try_from(granted_s).ok().filter(|&s| s >= 1)?;
    Some(LeaseTtl::Live { left_s, granted_s })
}

/// The rest of a floor from its etcd lease's remaining TTL, rounded up: etcd rounds the
/// remaining seconds down, so one second is added, within the TTL granted.
fn floor_left(remaining_s: u64, granted_s: u64) -> Duration {
    Duration::from_secs(remaining_s.saturating_add(1).min(granted_s))
}

/// A claim's expiry on this host's clock, from its etcd lease's remaining TTL: the etcd
/// lease lasts TTL + quarantine (`granted_s`), so the claim's TTL ends a quarantine before
/// it. `remaining_s` is rounded down by etcd, so this errs early, never late.
fn claim_expires_ms(now_ms: u64, remaining_s: u64, granted_s: u64, ttl: Duration) -> u64 {
    let quarantine_ms = granted_s
        .saturating_mul(1000)
        .saturating_sub(protocol::ms(ttl));
    now_ms
        .saturating_add(remaining_s.saturating_mul(1000))
        .saturating_sub(quarantine_ms)
}

impl EtcdRegistry {
    /// Reads a key: value, mod revision and lease (`None` if missing).
    async fn get(&self, key: &str) -> Result<Option<(Vec<u8>, i64, i64, i64)>, LeaseError> {
        let response = self
            .client
            .clone()
            .get(key, None)
            .await
            .map_err(|e| self.failed("reading a key", e))?;
        Ok(response.kvs().first().map(|kv| {
            (
                kv.value().to_vec(),
                kv.mod_revision(),
                kv.create_revision(),
                kv.lease(),
            )
        }))
    }

    /// How long the floor key `key` still lasts (zero if it is gone).
    async fn floor_wait_of(&self, key: &str) -> Result<Duration, LeaseError> {
        let Some((_, _, _, lease)) = self.get(key).await? else {
            return Ok(Duration::ZERO);
        };
        Ok(match self.read_lease_ttl(key, lease).await? {
            LeaseTtl::Expired => Duration::ZERO,
            LeaseTtl::Live { left_s, granted_s } => floor_left(left_s, granted_s),
        })
    }

    /// An etcd lease lasting `window` (rounded up to whole seconds), for a floor key.
    async fn floor_lease(&self, window: Duration) -> Result<i64, LeaseError> {
        let seconds = i64::try_from(window.as_millis().div_ceil(1000))
            .unwrap_or(i64::MAX)
            .max(1);
        Ok(self
            .client
            .clone()
            .lease_grant(seconds, None)
            .await
            .map_err(|e| self.failed("granting a floor lease", e))?
            .id())
    }

    /// Puts the namespace's floor key on a lease of `window` (or of the widest window
    /// recorded, if wider), unless it already lasts longer; returns how long it lasts.
    async fn start_floor(&self, window: Duration) -> Result<Duration, LeaseError> {
        let window = self.widen_window(window).await?;
        self.put_floor(window).await
    }

    /// Puts the namespace's floor key on a lease of `window`, unless it already lasts
    /// longer; returns how long it lasts.
    async fn put_floor(&self, window: Duration) -> Result<Duration, LeaseError> {
        let key = format!("{}/floor", self.prefix);
        let left = self.floor_wait_of(&key).await?;
        if left >= window {
            return Ok(left);
        }
        let lease = self.floor_lease(window).await?;
        self.client
            .clone()
            .put(key, "", Some(PutOptions::new().with_lease(lease)))
            .await
            .map_err(|e| self.failed("starting a floor", e))?;
        Ok(window)
    }

    /// The namespace marker's claimed count and revisions (mod, create), made with a floor
    /// if missing.
    async fn marker(&self, window: Duration) -> Result<(u64, i64, i64), LeaseError> {
        let key = self.namespace_key();
        for _ in 0..8 {
            if let Some((value, modified, created, _)) = self.get(&key).await? {
                return Ok((self.stored_number(&key, &value)?, modified, created));
            }
            // New prefix, or its keys were lost: a floor from now.
            let lease = self.floor_lease(window).await?;
            let txn = Txn::new()
                .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([
                    TxnOp::put(key.clone(), mark_value(0), None),
                    TxnOp::put(
                        format!("{}/floor", self.prefix),
                        "",
                        Some(PutOptions::new().with_lease(lease)),
                    ),
                ]);
            let made = self
                .client
                .clone()
                .txn(txn)
                .await
                .map_err(|e| self.failed("creating the namespace marker", e))?;
            if !made.succeeded() {
                let _ = self.client.clone().lease_revoke(lease).await;
            }
        }
        Err(self.io.unavailable("the namespace marker keeps changing"))
    }

    /// Why `grant` no longer holds its id, if it does not ([`protocol::prove_held`]).
    async fn prove(&self, grant: &Grant, ttl: Duration) -> Result<Result<(), Loss>, LeaseError> {
        let claim_key = self.key("claims", grant.node_id);
        let claim = self.get(&claim_key).await?;
        let Some((value, _, _, lease)) = claim else {
            return Ok(protocol::prove_held(None, &grant.token, 0));
        };
        let token = String::from_utf8_lossy(&value).into_owned();
        let now_ms = local_now_us() / 1000;
        let expires_ms = if token == grant.token {
            match self.read_lease_ttl(&claim_key, lease).await? {
                LeaseTtl::Expired => 0,
                LeaseTtl::Live { left_s, granted_s } => {
                    claim_expires_ms(now_ms, left_s, granted_s, ttl)
                }
            }
        } else {
            0
        };
        let view = RecordView {
            token: Some(&token),
            expires_ms,
        };
        Ok(protocol::prove_held(Some(view), &grant.token, now_ms))
    }

    async fn claim(
        &self,
        request: &LeaseRequest,
        token: &str,
    ) -> Result<Option<Grant>, LeaseError> {
        let window = self.widen_window(request.floor_window()).await?;
        let history = self.check_history(window).await?;
        let mut client = self.client.clone();
        for _ in 0..64 {
            let (claimed, marker_mod, marker_created) = self.marker(window).await?;
            let namespace_floor = self
                .floor_wait_of(&format!("{}/floor", self.prefix))
                .await?;
            // Claim keys live on etcd leases of TTL + quarantine: an id without one is free.
            let taken = self.list("claims").await?;
            // An id with an epoch key was claimed before; its mark says how long to wait.
            let recorded = self.list("epochs").await?;
            let marks = self.list("marks").await?;
            let n = request.node_count;
            let never_claimed =
                (claimed..n).find(|id| !taken.contains_key(id) && !recorded.contains_key(id));
            let mut free = Vec::new();
            for id in (0..n).filter(|id| !taken.contains_key(id)) {
                if recorded.contains_key(&id) {
                    // No mark yet (claimed, never renewed nor released): 0.
                    let mark_ms = match marks.get(&id) {
                        Some(value) => self.stored_number(&self.key("marks", id), value)?,
                        None => 0,
                    };
                    free.push(Candidate {
                        id,
                        mark_ms,
                        lost: false,
                    });
                } else if id < claimed {
                    free.push(Candidate {
                        id,
                        mark_ms: 0,
                        lost: true,
                    });
                }
            }
            let Some(node_id) = protocol::pick_node(request.prefer_node, never_claimed, free)
            else {
                return Ok(None);
            };
            let epoch_key = self.key("epochs", node_id);
            let recorded = self.get(&epoch_key).await?;
            let (recorded_epoch, epoch_mod) = match &recorded {
                Some((value, modified, _, _)) => {
                    (self.stored_number(&epoch_key, value)?, *modified)
                }
                None => (0, 0),
            };
            let node_floor_key = self.key("floors", node_id);
            let mut ops = Vec::new();
            let node_floor = if recorded.is_none() && node_id < claimed {
                // Below `claimed` a missing record was lost, not new: a floor of its own.
                let lease = self.floor_lease(window).await?;
                ops.push(TxnOp::put(
                    node_floor_key,
                    "",
                    Some(PutOptions::new().with_lease(lease)),
                ));
                window
            } else {
                self.floor_wait_of(&node_floor_key).await?
            };
            let epoch = protocol::next_epoch(recorded_epoch, local_now_us());
            let lease = client
                .lease_grant(lease_seconds(request.ttl, request.quarantine), None)
                .await
                .map_err(|e| self.failed("granting an etcd lease", e))?;
            let on_lease = || Some(PutOptions::new().with_lease(lease.id()));
            let claim = self.key("claims", node_id);
            let namespace = self.namespace_key();
            let mut when = vec![
                Compare::create_revision(claim.clone(), CompareOp::Equal, 0),
                Compare::mod_revision(epoch_key.clone(), CompareOp::Equal, epoch_mod),
                Compare::create_revision(namespace.clone(), CompareOp::Equal, marker_created),
            ];
            if node_id >= claimed {
                when.push(Compare::mod_revision(
                    namespace.clone(),
                    CompareOp::Equal,
                    marker_mod,
                ));
                ops.push(TxnOp::put(namespace, mark_value(node_id + 1), None));
            }
            ops.extend([
                TxnOp::put(claim, token, on_lease()),
                TxnOp::put(
                    self.key("holders", node_id),
                    request.holder.as_str(),
                    on_lease(),
                ),
                TxnOp::put(epoch_key, mark_value(epoch), None),
                TxnOp::put(
                    self.key("since", node_id),
                    mark_value(local_now_us() / 1000),
                    None,
                ),
                TxnOp::delete(self.key("renewals", node_id), None),
                TxnOp::put(self.history_key(), history.encode(), None),
                TxnOp::get(self.key("marks", node_id), None),
            ]);
            let response = client
                .txn(Txn::new().when(when).and_then(ops))
                .await
                .map_err(|e| self.failed("claiming a node id", e))?;
            if !response.succeeded() {
                let _ = client.lease_revoke(lease.id()).await;
                continue; // someone was faster, or the records changed: read again
            }
            let marks_key = self.key("marks", node_id);
            let previous = match response.op_responses().into_iter().find_map(|op| match op {
                TxnOpResponse::Get(get) => Some(get),
                _ => None,
            }) {
                Some(get) => match get.kvs().first() {
                    Some(kv) => self.stored_number(&marks_key, kv.value()),
                    None => Ok(0), // never renewed nor released
                },
                None => Err(self
                    .io
                    .store_error("etcd's answer to a claim lacks the mark it read")),
            };
            let previous = match previous {
                Ok(mark) => mark,
                Err(unreadable) => {
                    // Claimed, but with no mark to wait past: give the id back.
                    let _ = client.lease_revoke(lease.id()).await;
                    return Err(unreadable);
                }
            };
            if let Ok((keeper, stream)) = client.lease_keep_alive(lease.id()).await {
                let keepalive = Keepalive {
                    lease_id: lease.id(),
                    keeper,
                    stream,
                };
                self.keepers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(token.to_owned(), keepalive);
            }
            let now_ms = local_now_us() / 1000;
            // An id's floor never lasts longer than one window: a floor beyond it cannot be
            // this registry's. The namespace floor may: after a restore it lasts the
            // longest window (see the module docs), on an etcd lease of that TTL.
            let floor = namespace_floor
                .min(protocol::LONGEST_WINDOW)
                .max(node_floor.min(window));
            return Ok(Some(Grant {
                node_id,
                token: token.to_owned(),
                epoch,
                previous_high_water_ms: previous,
                floor_wait: protocol::floor_wait(protocol::floor_until(now_ms, floor), now_ms),
            }));
        }
        Err(self.io.unavailable("claiming: lost 64 races in a row"))
    }
}

impl EtcdRegistry {
    /// As [`EtcdRegistry::write_mark_if_held`] with the claim deleted, but the holder's
    /// name kept off the etcd lease, so that a listing still says who released the id.
    async fn release_keeping_holder(&self, grant: &Grant, mark: u64) -> Result<bool, LeaseError> {
        let claim = self.key("claims", grant.node_id);
        let holders = self.key("holders", grant.node_id);
        let holder = self.get(&holders).await?.map(|(value, ..)| value);
        let mut ops = vec![
            TxnOp::put(self.key("marks", grant.node_id), mark_value(mark), None),
            TxnOp::delete(claim.clone(), None),
        ];
        ops.push(match holder {
            Some(name) => TxnOp::put(holders, name, None),
            None => TxnOp::delete(holders, None),
        });
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
            .map_err(|e| self.failed("releasing", e))?;
        Ok(response.succeeded())
    }

    /// Puts a reservation's claim and holder keys, off any etcd lease, if no claim key
    /// exists (a transaction on its `create_revision`); else says what the key holds.
    async fn reserve_node(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        let claim = self.key("claims", node_id);
        for _ in 0..64 {
            if let Some((value, ..)) = self.get(&claim).await? {
                // A claim key lives only while its holder's TTL + quarantine runs.
                return Ok(protocol::reservation_over(
                    Some(&String::from_utf8_lossy(&value)),
                    protocol::Standing::Live,
                ));
            }
            let txn = Txn::new()
                .when([Compare::create_revision(claim.clone(), CompareOp::Equal, 0)])
                .and_then([
                    TxnOp::put(claim.clone(), protocol::RESERVED_TOKEN, None),
                    TxnOp::put(self.key("holders", node_id), holder, None),
                    TxnOp::put(
                        self.key("since", node_id),
                        mark_value(local_now_us() / 1000),
                        None,
                    ),
                    TxnOp::delete(self.key("renewals", node_id), None),
                ]);
            let response = self
                .client
                .clone()
                .txn(txn)
                .await
                .map_err(|e| self.failed("reserving a node id", e))?;
            if response.succeeded() {
                return Ok(Reservation::Made);
            }
        }
        Err(self.io.unavailable("reserving: lost 64 races in a row"))
    }

    /// The keys under `P/kind/`, by node id: value and etcd lease (0: none).
    async fn list_leased(&self, kind: &str) -> Result<BTreeMap<u64, (Vec<u8>, i64)>, LeaseError> {
        let under = format!("{}/{kind}/", self.prefix);
        let listed = self
            .client
            .clone()
            .get(under.as_str(), Some(GetOptions::new().with_prefix()))
            .await
            .map_err(|e| self.failed(&format!("listing {kind}"), e))?;
        Ok(listed
            .kvs()
            .iter()
            .filter_map(|kv| {
                let id = kv.key_str().ok()?.strip_prefix(&under)?.parse().ok()?;
                Some((id, (kv.value().to_vec(), kv.lease())))
            })
            .collect())
    }

    /// Every id's keys and the namespace floor, on this host's clock (etcd has none).
    ///
    /// A claim key is on an etcd lease of TTL + quarantine, and etcd records no TTL apart:
    /// a claim lists as held until its etcd lease ends (its expiry), as claims find it
    /// taken until then. Without a claim key, an id whose holder key outlived its etcd
    /// lease was released (the holder is kept on release); else it expired, and its
    /// holder went with the etcd lease.
    async fn view(&self) -> Result<RegistryView, LeaseError> {
        let floor_wait = self
            .floor_wait_of(&format!("{}/floor", self.prefix))
            .await?;
        // Unread otherwise, but a garbled count, window or history is refused here as
        // claims refuse it.
        for key in [self.namespace_key(), self.window_key()] {
            if let Some((value, ..)) = self.get(&key).await? {
                self.stored_number(&key, &value)?;
            }
        }
        let history = self.history_key();
        if let Some((value, ..)) = self.get(&history).await? {
            History::decode(&value).ok_or_else(|| {
                self.io.store_error(format!(
                    "unreadable value at {history}; delete it (the namespace then waits out \
                     a floor)"
                ))
            })?;
        }
        let claims = self.list_leased("claims").await?;
        let holders = self.list_leased("holders").await?;
        let epochs = self.list("epochs").await?;
        let marks = self.list("marks").await?;
        let since = self.list("since").await?;
        let renewals = self.list("renewals").await?;
        let now_ms = local_now_us() / 1000;
        let ids: std::collections::BTreeSet<u64> = claims
            .keys()
            .chain(holders.keys())
            .chain(epochs.keys())
            .chain(marks.keys())
            .copied()
            .collect();
        let mut nodes = Vec::new();
        for id in ids {
            let number = |kind: &str, found: Option<&Vec<u8>>| match found {
                Some(value) => self.stored_number(&self.key(kind, id), value),
                None => Ok(0),
            };
            let epoch = number("epochs", epochs.get(&id))?;
            let mark = number("marks", marks.get(&id))?;
            let holder = match holders.get(&id) {
                Some((value, _)) => Some(String::from_utf8(value.clone()).map_err(|_| {
                    self.io.store_error(format!(
                        "unreadable value at {} (not UTF-8)",
                        self.key("holders", id)
                    ))
                })?),
                None => None,
            };
            let (state, expires_ms) = match claims.get(&id) {
                // On no etcd lease: a reservation, which never expires.
                Some((_, 0)) => (NodeState::Held, protocol::NEVER_MS),
                Some((_, lease)) => {
                    let key = self.key("claims", id);
                    match self.read_lease_ttl(&key, *lease).await? {
                        LeaseTtl::Live { left_s, .. } => (
                            NodeState::Held,
                            now_ms.saturating_add(left_s.saturating_mul(1000)),
                        ),
                        // Past its etcd lease, not yet revoked: still taken.
                        LeaseTtl::Expired => (NodeState::Quarantined, now_ms),
                    }
                }
                None if holders.get(&id).is_some_and(|(_, lease)| *lease == 0) => {
                    (NodeState::Released, 0)
                }
                None => (NodeState::Expired, 0),
            };
            let since_ms = match since.get(&id) {
                Some(value) => Some(self.stored_number(&self.key("since", id), value)?),
                None => None,
            };
            let (renewed_ms, skew_ms) = match renewals.get(&id) {
                Some(value) => {
                    let (renewed, skew) = parse_renewal(value).ok_or_else(|| {
                        self.io.store_error(format!(
                            "unreadable value at {}; delete it (it only says when the \
                             claim was last renewed)",
                            self.key("renewals", id)
                        ))
                    })?;
                    (Some(renewed), skew)
                }
                None => (None, None),
            };
            nodes.push(
                NodeView::new(id, holder, epoch, state, expires_ms, mark)
                    .with_times(since_ms, renewed_ms, skew_ms),
            );
        }
        let floor_until_ms = if floor_wait.is_zero() {
            0
        } else {
            protocol::floor_until(now_ms, floor_wait)
        };
        Ok(RegistryView::new(now_ms, floor_until_ms, nodes))
    }
}

impl Registry for EtcdRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        request.validate()?;
        let token = new_token("etcd")?;
        self.io
            .run(
                "claiming a node id",
                CALL_TIMEOUT * 4,
                self.claim(request, &token),
            )?
            .ok_or(LeaseError::NoFreeNode {
                node_count: request.node_count,
            })
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        let (ttl, high_water_ms) = (renewal.ttl, renewal.high_water_ms);
        let lost = |why| grant.lost(why);
        let forget = || {
            self.keepers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&grant.token)
        };
        self.io.run("renewing", renew_limit(ttl), async {
            if let Err(why) = self.prove(grant, ttl).await? {
                forget();
                return Err(lost(why));
            }
            // Only the holder writes its mark; never write below what is recorded. Read
            // before the keepalive: a garbled mark fails the renewal without extending
            // the claim.
            let mark = high_water_ms.max(self.read_mark(grant.node_id).await?);
            if !self.keep_alive(grant).await? {
                forget();
                return Err(lost(Loss::Expired));
            }
            let renewed = renewal_value(local_now_us() / 1000, renewal.clock_skew_ms);
            if self
                .write_mark_if_held(grant, mark, false, Some(renewed))
                .await?
            {
                Ok(())
            } else {
                forget();
                let why = self.prove(grant, ttl).await?.err().unwrap_or(Loss::Taken);
                Err(lost(why))
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
            // The final mark as given: the holder has stopped issuing.
            let held = self.release_keeping_holder(grant, high_water_ms).await?;
            if let (true, Some(k)) = (held, keepalive) {
                // The keys are gone already; revoking just frees the etcd lease early.
                let _ = self.client.clone().lease_revoke(k.lease_id).await;
            }
            Ok(())
        })
    }

    fn reserve(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        check_reservation(node_id, holder)?;
        self.io.run(
            "reserving a node id",
            CALL_TIMEOUT * 2,
            self.reserve_node(node_id, holder),
        )
    }

    fn restored(&self, window: Duration) -> Result<Duration, LeaseError> {
        self.io.run(
            "starting a floor",
            CALL_TIMEOUT * 2,
            self.start_floor(window),
        )
    }

    fn list(&self) -> Result<RegistryView, LeaseError> {
        self.io
            .run("listing the records", CALL_TIMEOUT * 4, self.view())
    }

    fn name(&self) -> &str {
        "etcd"
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
    fn renewals_parse_back_and_garbled_ones_do_not() {
        for (renewed, skew) in [(5, Some(-12)), (1_700_000_000_123, None), (0, Some(7))] {
            let value = renewal_value(renewed, skew);
            assert_eq!(parse_renewal(value.as_bytes()), Some((renewed, skew)));
        }
        for garbled in [
            &b""[..],
            b"5",
            b"5 ",
            b"x -",
            b"5 +1",
            b"5 - ",
            b"-5 1",
            b"\xff -",
        ] {
            assert_eq!(parse_renewal(garbled), None, "{garbled:?}");
        }
    }

    #[test]
    fn marks_sort_as_numbers_and_parse_back() {
        assert!(mark_value(9) < mark_value(10));
        assert_eq!(
            parse_mark(mark_value(1_700_000_000_123).as_bytes()),
            Some(1_700_000_000_123)
        );
        assert_eq!(parse_mark(b"0"), Some(0));
    }

    #[test]
    fn garbled_marks_do_not_parse() {
        for garbled in [
            &b"garbage"[..],
            b"",
            b"-1",
            b"+5",
            b" 5",
            b"5 ",
            b"12x",
            b"99999999999999999999",
            b"\xff\xfe",
        ] {
            assert_eq!(parse_mark(garbled), None, "{garbled:?}");
        }
    }

    #[test]
    fn lease_ttls_expire_below_zero_and_need_a_grant() {
        let live = |left_s, granted_s| Some(LeaseTtl::Live { left_s, granted_s });
        assert_eq!(
            lease_ttl(-1, 0),
            Some(LeaseTtl::Expired),
            "an unknown lease"
        );
        assert_eq!(
            lease_ttl(-3, 5),
            Some(LeaseTtl::Expired),
            "awaiting revocation"
        );
        assert_eq!(lease_ttl(4, 5), live(4, 5));
        assert_eq!(lease_ttl(0, 5), live(0, 5));
        assert_eq!(lease_ttl(4, -5), None);
        assert_eq!(lease_ttl(4, 0), None);
        assert_eq!(lease_ttl(0, i64::MIN), None);
    }

    #[test]
    fn floors_and_expiries_from_lease_ttls() {
        assert_eq!(floor_left(4, 5), Duration::from_secs(5));
        assert_eq!(floor_left(5, 5), Duration::from_secs(5));
        // A TTL of 2 s + 3 s quarantine: 4 s left means the TTL ends in 1 s.
        assert_eq!(
            claim_expires_ms(10_000, 4, 5, Duration::from_secs(2)),
            11_000
        );
        assert_eq!(
            claim_expires_ms(10_000, 0, 5, Duration::from_secs(2)),
            7_000
        );
    }

    fn status(cluster_id: u64, raft_index: u64, revision: u64) -> Status {
        Status {
            cluster_id,
            raft_index,
            revision,
            raft_term: 5,
        }
    }

    #[test]
    fn history_moves_back_with_the_raft_index_or_another_cluster() {
        // Index 5,000 at revision 3,000 (read just after): a gap of 2,000.
        let recorded = History::recorded_from(&status(7, 5_000, 2_990), &status(7, 5_010, 3_000));
        assert_eq!(
            recorded,
            History {
                cluster_id: 7,
                raft_index: 5_000,
                revision: Some(3_000),
                raft_term: Some(5),
            }
        );
        assert_eq!(
            History::decode(recorded.encode().as_bytes()),
            Some(recorded)
        );
        let now = |cluster_id, raft_index, revision| {
            let at = status(cluster_id, raft_index, revision);
            recorded.followed_by(&at, &at)
        };
        assert!(now(7, 5_000, 3_000));
        assert!(now(7, 9_000, 7_000), "writes only");
        assert!(now(7, 9_000, 3_500), "entries that write nothing");
        assert!(!now(7, 4, 3_000), "a restored snapshot");
        assert!(
            !now(7, 9_000, 7_500),
            "a restored snapshot, its raft index grown past the recorded one by writes"
        );
        assert!(!now(7, 6_000, 5_000), "the same, sooner");
        assert!(!now(8, 9_000, 3_000), "another cluster");
        assert!(
            !recorded.followed_by(&status(7, 9_000, 3_000), &status(8, 9_000, 3_000)),
            "another cluster between the two reads"
        );
        // The revision may be read one write ahead of the index beside it (an entry still
        // being applied); the next call reads an index that has caught up. No false floor.
        assert!(recorded.followed_by(&status(7, 5_000, 3_001), &status(7, 5_001, 3_001)));
        assert!(
            !recorded.followed_by(&status(7, 5_000, 3_002), &status(7, 5_000, 3_002)),
            "two writes past the index is not one entry in flight"
        );
        // A restored cluster starts its terms again: a term behind the recorded one is a
        // restore, however the index and revision were brought back in line (entries
        // that write nothing, such as lease grants, widen the gap again).
        let at_term = |raft_term| Status {
            raft_term,
            ..status(7, 9_000, 3_500)
        };
        assert!(recorded.followed_by(&at_term(5), &at_term(5)));
        assert!(
            recorded.followed_by(&at_term(9), &at_term(9)),
            "elections since"
        );
        assert!(
            !recorded.followed_by(&at_term(2), &at_term(2)),
            "a restored cluster's first term"
        );
        // A record with no term (written before terms were) is judged without one.
        let no_term = History::decode(b"7 5000 3000").unwrap();
        assert_eq!(no_term.raft_term, None);
        assert_eq!(no_term.encode(), "7 5000 3000");
        assert!(no_term.followed_by(&at_term(2), &at_term(2)));
        // A record of an earlier version (no revision) cannot rule out a restore.
        let earlier = History::decode(b"7 5000").unwrap();
        assert_eq!(earlier.revision, None);
        assert_eq!(earlier.encode(), "7 5000");
        let at = status(7, 9_000, 3_000);
        assert!(!earlier.followed_by(&at, &at));
        for garbled in [
            &b""[..],
            b"7",
            b"7 ",
            b" 5",
            b"7 5 ",
            b"7 5 1 2 3",
            b"7 5 x",
            b"7 5 -1",
            b"7 -5",
            b"x 5",
            b"7  5",
        ] {
            assert_eq!(History::decode(garbled), None, "{garbled:?}");
        }
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
