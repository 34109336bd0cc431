//! The Redis registry: one key per node id and one namespace marker, none with a TTL.
//! Every operation reads a snapshot (Redis `TIME` and the keys, in one read-only script),
//! decides in Rust with [`ferroflake_lease::protocol`], and writes the outcome with a
//! compare-and-set script that writes only if every key still holds what was read.
//!
//! Keys under the prefix `P` (default `ferroflake:lease:`), times on Redis's clock in ms:
//! - `P namespace` = `FLOOR_UNTIL CLAIMED`: the namespace floor, and how many ids have ever
//!   been claimed (ids are first claimed lowest-first, so every id below it has a key);
//! - `P node:ID` = `EPOCH MARK EXPIRES QUARANTINE FLOOR_UNTIL TOKEN HOLDER` (`TOKEN` is `-`
//!   once released);
//! - `P history` = the replication id (`master_replid`) of the server that wrote the last
//!   claim;
//! - `P window` = the widest lost-records window (max_ttl + quarantine, ms) any claim of
//!   the namespace asked for;
//! - `P registry` = the registry's id ([`Registry::identity`]), 32 random hex digits set
//!   with `SET NX` by the first registry to connect, read back by every other. Claims do
//!   not read it: a namespace whose other keys were lost still floors, whatever it says.
//!
//! **Lost records.** A missing marker means a new namespace, or keys lost to `FLUSHALL`,
//! `DEL`, or a restart without persistence: the claim writes a new marker with a floor of
//! [`LeaseRequest::floor_window`] on Redis's clock, and claims until then report the rest
//! in [`Grant::floor_wait`]. An id below `CLAIMED` with no key lost only its own key and
//! gets a floor of its own. Every such floor lasts the widest window recorded in
//! `P window` (or the claimant's own, if wider), so a claimant with a short TTL still waits
//! out a holder with a long one. A Redis restarted from an old snapshot brings back stale
//! records, so every claim also honours a restart floor: the server's start
//! (`TIME` − `uptime_in_seconds`, never before the true start) + the window. A replica
//! promoted to primary (a failover) takes a new replication id and may lag behind the
//! old primary's last claims: a claim that finds `P history` written under another id
//! starts a namespace floor. A restore into the running server (keys copied back with
//! `RESTORE`) shows none of these: after one, run `ferroflake lease restored`. Renewals
//! prove the claim by token and expiry
//! ([`prove_held`](ferroflake_lease::protocol::prove_held)).
//!
//! **Eviction.** A Redis that may evict keys (`maxmemory` set with any
//! `maxmemory-policy` but `noeviction`) can drop the registry's keys at any time, which
//! the floor cannot cover for a single id whose marker survives. [`RedisRegistry::connect`]
//! and every claim refuse such a Redis with [`LeaseError::InvalidConfig`]: use
//! `noeviction`, or a Redis of its own. Scripts build no key names, but a claim touches
//! keys of many ids at once, so this registry wants a single Redis (or a primary with
//! replicas), not Redis Cluster.

use std::sync::Mutex;
use std::time::Duration;

use ferroflake_lease::protocol;

use crate::record::{candidates, number, Marker, Record};
use ferroflake_lease::{
    check_reservation, Grant, LeaseError, LeaseRequest, Loss, Registry, RegistryView, Renewal,
    Reservation,
};
use redis::aio::MultiplexedConnection;
use redis::{Client, Script};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;
use ferroflake_store_address::redact;

/// Reads `TIME`, `uptime_in_seconds` and `master_replid` (`''` if INFO lacks them) and the
/// keys, atomically.
/// A key's value comes tagged: [`PRESENT`] + the value, or `''` if the key is missing, so
/// that a key holding `''` is told from a missing one (it is garbled, not lost). A nil
/// would end the reply's array early, hence `''` rather than nothing.
const SNAPSHOT: &str = r"
local t = redis.call('TIME')
local up = string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)')
local replid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
local out = {t[1], t[2], up or '', replid or ''}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  out[i + 4] = v and ('=' .. v) or ''
end
return out
";

/// The tag [`SNAPSHOT`] puts before a present key's value.
const PRESENT: char = '=';

/// Compare-and-set: ARGV = NOT_AFTER_MS, then (expected, new) per key, expected tagged as
/// [`SNAPSHOT`] reads it (`''`: absent). Writes every key only if all still hold what was
/// expected: 1; 0 if not. With NOT_AFTER_MS > 0, -1 if Redis's clock has reached it (a
/// renewal that arrives after the claim's TTL, as `protocol::prove_held` would find at this
/// instant).
const CAS: &str = r"
if ARGV[1] ~= '0' then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[1]) then
    return -1
  end
end
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if (v and ('=' .. v) or '') ~= ARGV[2 * i] then return 0 end
end
for i, k in ipairs(KEYS) do redis.call('SET', k, ARGV[2 * i + 1]) end
return 1
";

/// How often an operation re-reads after losing a compare-and-set to another client.
const CAS_ROUNDS: usize = 64;

/// Node ids leased from Redis.
pub struct RedisRegistry {
    io: Blocking,
    client: Client,
    prefix: String,
    /// What [`Registry::locator`] says.
    locator: String,
    /// What [`Registry::identity`] says: [`Self::identity_key`] as read at connect.
    identity: String,
    /// The current connection; dropped on an I/O error and made again on the next call.
    connection: Mutex<Option<MultiplexedConnection>>,
    snapshot: Script,
    cas: Script,
}

/// A snapshot: Redis's clock and the keys' values, tagged as [`SNAPSHOT`] reads them (what
/// a compare-and-set expects).
#[derive(Debug)]
struct Snapshot {
    now_us: u64,
    uptime_ms: u64,
    /// The server's replication id: a replica promoted to primary takes a new one.
    replid: String,
    values: Vec<String>,
}

impl Snapshot {
    fn now_ms(&self) -> u64 {
        self.now_us / 1000
    }

    /// Checks the snapshot script's reply for `key_count` keys. Every field must be there
    /// and readable: with the clock read as 0 a renewal would date its claim's expiry in
    /// 1970, for the next claimant to find long expired, and a short reply would make keys
    /// look missing.
    fn parse(raw: Vec<String>, key_count: usize) -> Result<Snapshot, String> {
        let Some([seconds, micros, uptime_s, replid]) = raw.get(..4) else {
            return Err(format!(
                "a reply of {} fields, too short for TIME",
                raw.len()
            ));
        };
        let (seconds, micros) = match (number(seconds), number(micros)) {
            (Some(s), Some(us)) if us < 1_000_000 => (s, us),
            _ => return Err(format!("TIME answered {seconds:?} {micros:?}")),
        };
        let uptime_s = number(uptime_s)
            .ok_or_else(|| format!("INFO server gave uptime_in_seconds {uptime_s:?}"))?;
        if replid.is_empty() {
            return Err("INFO replication gave no master_replid".to_owned());
        }
        let replid = replid.clone();
        let values = raw[4..].to_vec();
        if values.len() != key_count {
            return Err(format!("{} values for {key_count} keys", values.len()));
        }
        if let Some(odd) = values
            .iter()
            .find(|v| !v.is_empty() && !v.starts_with(PRESENT))
        {
            return Err(format!("a value {odd:?} the snapshot script never returns"));
        }
        Ok(Snapshot {
            now_us: seconds.saturating_mul(1_000_000).saturating_add(micros),
            uptime_ms: uptime_s.saturating_mul(1000),
            replid,
            values,
        })
    }
}

/// A key's value from its [`Snapshot`] form; `None` if the key is missing.
fn stored(tagged: &str) -> Option<&str> {
    tagged.strip_prefix(PRESENT)
}

/// The client for `url`, which it only reads: [`LeaseError::BadAddress`] for what it
/// refuses.
pub(crate) fn client(url: &str) -> Result<Client, LeaseError> {
    Client::open(url).map_err(|e| LeaseError::BadAddress {
        address: redact(url),
        detail: e.to_string(),
    })
}

impl RedisRegistry {
    /// Connects to `url` (`redis://host:port/db`), keeping keys under `prefix`, checks
    /// that Redis answers and cannot evict the registry's keys, and reads the registry's id
    /// (made if the prefix has none).
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if Redis does not answer within a few seconds;
    /// [`LeaseError::BadAddress`] if the client refuses the URL;
    /// [`LeaseError::InvalidConfig`] if Redis may evict keys (see the module docs);
    /// [`LeaseError::Store`] if the registry's id is unreadable (the error names the key).
    pub fn connect(url: &str, prefix: &str) -> Result<Self, LeaseError> {
        let io = Blocking::new("redis")?;
        let client = client(url)?;
        let registry = RedisRegistry {
            io,
            client,
            prefix: prefix.to_owned(),
            locator: crate::address::locator("redis", url, prefix),
            identity: String::new(),
            connection: Mutex::new(None),
            snapshot: Script::new(SNAPSHOT),
            cas: Script::new(CAS),
        };
        let identity = registry
            .io
            .run("connecting to Redis", CONNECT_TIMEOUT, async {
                let mut connection = registry.connection().await?;
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .map_err(|e| {
                        registry
                            .io
                            .unavailable(format!("{} does not answer: {e}", redact(url)))
                    })?;
                registry.check_eviction().await?;
                registry.read_or_make_identity().await
            })?;
        Ok(RedisRegistry {
            identity,
            ..registry
        })
    }

    /// The id at [`Self::identity_key`], made (random, once) by the first registry to
    /// connect to the namespace. Read first, so that a registry of a namespace that has
    /// one writes nothing here.
    async fn read_or_make_identity(&self) -> Result<String, LeaseError> {
        let key = self.identity_key();
        let mut connection = self.connection().await?;
        let found: Option<Vec<u8>> = redis::cmd("GET")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .map_err(|e| self.failed("reading the registry's id", e))?;
        let stored = match found {
            Some(stored) => stored,
            None => {
                let fresh = crate::identity::new_id("redis")?;
                // One transaction: the GET reads what won, ours or another registry's,
                // even if the key is deleted right after.
                let (stored,): (Vec<u8>,) = redis::pipe()
                    .atomic()
                    .cmd("SET")
                    .arg(&key)
                    .arg(&fresh)
                    .arg("NX")
                    .ignore()
                    .cmd("GET")
                    .arg(&key)
                    .query_async(&mut connection)
                    .await
                    .map_err(|e| self.failed("recording the registry's id", e))?;
                stored
            }
        };
        crate::identity::readable(&stored).ok_or_else(|| self.unreadable(&key))
    }

    async fn connection(&self) -> Result<MultiplexedConnection, LeaseError> {
        let cached = self
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(c) = cached {
            return Ok(c);
        }
        let fresh = self
            .client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| self.io.unavailable(format!("cannot connect: {e}")))?;
        *self.connection.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
        Ok(fresh)
    }

    /// Turns a client error into ours, forgetting a connection that broke.
    fn failed(&self, what: &str, e: redis::RedisError) -> LeaseError {
        if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
        {
            *self.connection.lock().unwrap_or_else(|p| p.into_inner()) = None;
            self.io.unavailable(format!("{what}: {e}"))
        } else {
            self.io.store_error(format!("{what}: {e}"))
        }
    }

    /// [`LeaseError::InvalidConfig`] if Redis may evict keys.
    async fn check_eviction(&self) -> Result<(), LeaseError> {
        let mut connection = self.connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut connection)
            .await
            .map_err(|e| self.failed("reading INFO memory", e))?;
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
                .unwrap_or("")
                .to_owned()
        };
        let (maxmemory, policy) = (field("maxmemory"), field("maxmemory_policy"));
        eviction_refusal(&maxmemory, &policy)
            .map_or(Ok(()), |detail| Err(LeaseError::InvalidConfig { detail }))
    }

    fn key(&self, node_id: u64) -> String {
        format!("{}node:{node_id}", self.prefix)
    }

    fn marker_key(&self) -> String {
        format!("{}namespace", self.prefix)
    }

    /// The replication id of the server that wrote the namespace's last claim.
    fn history_key(&self) -> String {
        format!("{}history", self.prefix)
    }

    /// The widest lost-records window any claim of the namespace asked for, in ms.
    fn window_key(&self) -> String {
        format!("{}window", self.prefix)
    }

    /// The registry's id ([`Registry::identity`]).
    fn identity_key(&self) -> String {
        format!("{}registry", self.prefix)
    }

    /// Records `asked` in [`Self::window_key`] if it is wider than what is recorded there;
    /// returns the window floors last ([`protocol::widest_window`]). Done before a claim
    /// is written, so a holder's window is on record before it may issue.
    async fn widen_window(&self, asked: Duration) -> Result<Duration, LeaseError> {
        let key = self.window_key();
        let asked_ms = protocol::ms(asked);
        for _ in 0..CAS_ROUNDS {
            let snap = self.read(std::slice::from_ref(&key)).await?;
            let raw = snap.values[0].as_str();
            let recorded = match stored(raw) {
                None => 0,
                Some(text) => number(text).ok_or_else(|| self.unreadable(&key))?,
            };
            if recorded >= asked_ms {
                return Ok(protocol::widest_window(asked, recorded));
            }
            let written = self
                .compare_and_set(
                    std::slice::from_ref(&key),
                    &[raw],
                    &[asked_ms.to_string()],
                    0,
                )
                .await?;
            if written == 1 {
                return Ok(protocol::widest_window(asked, asked_ms));
            }
        }
        Err(self.io.unavailable(format!(
            "recording the lost-records window: lost {CAS_ROUNDS} races in a row"
        )))
    }

    async fn read(&self, keys: &[String]) -> Result<Snapshot, LeaseError> {
        let mut connection = self.connection().await?;
        let mut invocation = self.snapshot.prepare_invoke();
        for k in keys {
            invocation.key(k);
        }
        let raw: Vec<String> = invocation
            .invoke_async(&mut connection)
            .await
            .map_err(|e| self.failed("reading the records", e))?;
        Snapshot::parse(raw, keys.len()).map_err(|detail| {
            self.io
                .store_error(format!("reading the records: garbled reply: {detail}"))
        })
    }

    /// Writes `new` over `keys` if they still hold `expected`: 1 written, 0 changed
    /// meanwhile, -1 Redis's clock reached `not_after_ms` (0: no limit).
    async fn compare_and_set(
        &self,
        keys: &[String],
        expected: &[&str],
        new: &[String],
        not_after_ms: u64,
    ) -> Result<i64, LeaseError> {
        let mut connection = self.connection().await?;
        let mut invocation = self.cas.prepare_invoke();
        invocation.arg(not_after_ms);
        for ((k, e), n) in keys.iter().zip(expected).zip(new) {
            invocation.key(k).arg(*e).arg(n);
        }
        invocation
            .invoke_async(&mut connection)
            .await
            .map_err(|e| self.failed("writing the records", e))
    }

    /// A key whose value no registry wrote (an empty string too): an error, never read as
    /// missing or as zeros.
    fn unreadable(&self, key: &str) -> LeaseError {
        let then = if key == self.marker_key() {
            "the namespace then waits out a floor"
        } else if key == self.identity_key() {
            return self.io.store_error(format!(
                "unreadable registry id at {key}; {}",
                crate::identity::DELETE_IT
            ));
        } else if key == self.window_key() {
            "claims then floor by their own window until one records it again"
        } else {
            "its id then waits out a floor"
        };
        self.io
            .store_error(format!("unreadable record at {key}; delete it ({then})"))
    }

    async fn claim(
        &self,
        request: &LeaseRequest,
        token: &str,
    ) -> Result<Option<Grant>, LeaseError> {
        self.check_eviction().await?;
        let window = self.widen_window(request.floor_window()).await?;
        let marker_key = self.marker_key();
        let history_key = self.history_key();
        let mut keys = vec![marker_key.clone(), history_key.clone()];
        keys.extend((0..request.node_count).map(|id| self.key(id)));
        for _ in 0..CAS_ROUNDS {
            let snap = self.read(&keys).await?;
            let now_ms = snap.now_ms();
            let marker_raw = snap.values[0].as_str();
            let mut marker = match stored(marker_raw) {
                // New namespace, or its keys were lost: a floor from now.
                None => Marker {
                    floor_until_ms: protocol::floor_until(now_ms, window),
                    claimed: 0,
                },
                Some(text) => Marker::decode(text).ok_or_else(|| self.unreadable(&marker_key))?,
            };
            // Records written under another replication id came from another history: a
            // replica promoted after a failover, which may lag behind what the old primary
            // granted. Its holders are unknown here, so the namespace waits out a floor. A
            // missing id vouches for nothing either (deleted, or a namespace an earlier
            // version wrote: one floor, then it is recorded).
            let history_raw = snap.values[1].as_str();
            if stored(history_raw) != Some(snap.replid.as_str()) {
                marker.floor_until_ms = marker
                    .floor_until_ms
                    .max(protocol::floor_until(now_ms, window));
            }
            // A restart from an old snapshot may have brought back stale records.
            let started_ms = now_ms.saturating_sub(snap.uptime_ms);
            let restart_floor = protocol::floor_until(started_ms, window);
            let quarantine = protocol::ms(request.quarantine);
            let mut records = Vec::new();
            for (id, raw) in (0..request.node_count).zip(snap.values.iter().skip(2)) {
                records.push(match stored(raw) {
                    None => None,
                    Some(text) => Some(
                        Record::decode(text)
                            .ok_or_else(|| self.unreadable(&keys[id as usize + 2]))?,
                    ),
                });
            }
            let never_claimed = (marker.claimed..request.node_count)
                .find(|&id| records.get(id as usize).is_some_and(Option::is_none));
            let free = candidates(
                marker.claimed,
                (0u64..).zip(records.iter().map(Option::as_ref)),
                quarantine,
                now_ms,
            );
            let Some(node_id) = protocol::pick_node(request.prefer_node, never_claimed, free)
            else {
                return Ok(None);
            };
            let raw = snap.values[node_id as usize + 2].as_str();
            let record = records[node_id as usize].take();
            let new = Record::claimed(
                record.as_ref(),
                node_id < marker.claimed,
                request,
                token,
                now_ms,
                snap.now_us,
                window,
            );
            let (mark, node_floor) = (new.mark, new.floor_until_ms);
            let new_marker = Marker {
                claimed: marker.claimed.max(node_id + 1),
                ..marker
            };
            let written = self
                .compare_and_set(
                    &[marker_key.clone(), history_key.clone(), self.key(node_id)],
                    &[marker_raw, history_raw, raw],
                    &[new_marker.encode(), snap.replid.clone(), new.encode()],
                    0,
                )
                .await?;
            if written == 1 {
                let floor = marker.floor_until_ms.max(node_floor).max(restart_floor);
                return Ok(Some(Grant {
                    node_id,
                    token: token.to_owned(),
                    epoch: new.epoch,
                    previous_high_water_ms: mark,
                    floor_wait: protocol::floor_wait_within(floor, now_ms, window),
                }));
            }
        }
        Err(self
            .io
            .unavailable(format!("claiming: lost {CAS_ROUNDS} races in a row")))
    }

    /// Raises the namespace's floor to `window` from now (an operator's word that the
    /// records were restored); returns the floor.
    async fn start_floor(&self, window: Duration) -> Result<Duration, LeaseError> {
        let window = self.widen_window(window).await?;
        let marker_key = self.marker_key();
        for _ in 0..CAS_ROUNDS {
            let snap = self.read(std::slice::from_ref(&marker_key)).await?;
            let now_ms = snap.now_ms();
            let raw = snap.values[0].as_str();
            let until = protocol::floor_until(now_ms, window);
            let marker = match stored(raw) {
                None => Marker {
                    floor_until_ms: until,
                    claimed: 0,
                },
                Some(text) => {
                    let marker =
                        Marker::decode(text).ok_or_else(|| self.unreadable(&marker_key))?;
                    Marker {
                        floor_until_ms: marker.floor_until_ms.max(until),
                        ..marker
                    }
                }
            };
            let written = self
                .compare_and_set(
                    std::slice::from_ref(&marker_key),
                    &[raw],
                    &[marker.encode()],
                    0,
                )
                .await?;
            if written == 1 {
                return Ok(protocol::floor_wait(marker.floor_until_ms, now_ms));
            }
        }
        Err(self.io.unavailable(format!(
            "starting a floor: lost {CAS_ROUNDS} races in a row"
        )))
    }

    /// Reads `grant`'s record and proves it held ([`protocol::prove_held`]), then writes
    /// `change`'s record if nothing changed meanwhile. `allow` lets a release of a claim
    /// past its TTL (nobody else's yet) through.
    async fn update_held(
        &self,
        grant: &Grant,
        allow_expired: bool,
        change: impl Fn(&Record, u64) -> Record,
    ) -> Result<Result<(), Loss>, LeaseError> {
        let key = self.key(grant.node_id);
        for _ in 0..CAS_ROUNDS {
            let snap = self.read(std::slice::from_ref(&key)).await?;
            let now_ms = snap.now_ms();
            let raw = snap.values[0].as_str();
            let record = match stored(raw) {
                None => None,
                Some(text) => Some(Record::decode(text).ok_or_else(|| self.unreadable(&key))?),
            };
            let proof =
                protocol::prove_held(record.as_ref().map(Record::view), &grant.token, now_ms);
            let Some(record) = record else {
                return Ok(proof);
            };
            let not_after = match proof {
                Ok(()) => record.expires_ms,
                Err(Loss::Expired) if allow_expired => 0,
                Err(loss) => return Ok(Err(loss)),
            };
            let new = change(&record, now_ms);
            match self
                .compare_and_set(
                    std::slice::from_ref(&key),
                    &[raw],
                    &[new.encode()],
                    not_after,
                )
                .await?
            {
                1 => return Ok(Ok(())),
                -1 => return Ok(Err(Loss::Expired)),
                _ => continue, // changed meanwhile: read and decide again
            }
        }
        Err(self
            .io
            .unavailable(format!("lost {CAS_ROUNDS} races in a row")))
    }
}

impl RedisRegistry {
    /// Writes a reservation over `node_id`'s record if [`Record::reserved`] allows it,
    /// with a compare-and-set against the record read.
    async fn reserve_node(&self, node_id: u64, holder: &str) -> Result<Reservation, LeaseError> {
        self.check_eviction().await?;
        let key = self.key(node_id);
        for _ in 0..CAS_ROUNDS {
            let snap = self.read(std::slice::from_ref(&key)).await?;
            let raw = snap.values[0].as_str();
            let record = match stored(raw) {
                None => None,
                Some(text) => Some(Record::decode(text).ok_or_else(|| self.unreadable(&key))?),
            };
            let (outcome, new) = Record::reserved(record.as_ref(), holder, snap.now_ms());
            let Some(new) = new else {
                return Ok(outcome);
            };
            let written = self
                .compare_and_set(std::slice::from_ref(&key), &[raw], &[new.encode()], 0)
                .await?;
            if written == 1 {
                return Ok(outcome);
            }
        }
        Err(self
            .io
            .unavailable(format!("reserving: lost {CAS_ROUNDS} races in a row")))
    }
}

/// How many `SCAN` calls a listing makes at most (1000 keys each, as a hint).
const SCAN_ROUNDS: usize = 1 << 16;

impl RedisRegistry {
    /// The ids that have a key under the prefix, found with `SCAN` (not atomic:
    /// [`RedisRegistry::view`] reads them again in one snapshot).
    async fn node_ids(&self) -> Result<Vec<u64>, LeaseError> {
        let mut connection = self.connection().await?;
        let under = format!("{}node:", self.prefix);
        let pattern = format!("{}*", glob_escaped(&under));
        let mut ids = std::collections::BTreeSet::new();
        let mut cursor = 0u64;
        for _ in 0..SCAN_ROUNDS {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut connection)
                .await
                .map_err(|e| self.failed("listing the records", e))?;
            // A key whose suffix is no id is no record a claim reads: not listed either.
            ids.extend(keys.iter().filter_map(|k| number(k.strip_prefix(&under)?)));
            if next == 0 {
                return Ok(ids.into_iter().collect());
            }
            cursor = next;
        }
        Err(self.io.unavailable(format!(
            "listing the records: SCAN did not finish in {SCAN_ROUNDS} calls"
        )))
    }

    /// Every record and the namespace floor, in one snapshot; writes nothing.
    async fn view(&self) -> Result<RegistryView, LeaseError> {
        // Unread otherwise, but a garbled window is refused here as claims refuse it.
        let window = self.window_key();
        let recorded = self.read(std::slice::from_ref(&window)).await?;
        if let Some(text) = stored(recorded.values[0].as_str()) {
            number(text).ok_or_else(|| self.unreadable(&window))?;
        }
        let ids = self.node_ids().await?;
        let mut keys = vec![self.marker_key()];
        keys.extend(ids.iter().map(|&id| self.key(id)));
        let snap = self.read(&keys).await?;
        let now_ms = snap.now_ms();
        let floor_until_ms = match stored(&snap.values[0]) {
            None => 0,
            Some(text) => {
                Marker::decode(text)
                    .ok_or_else(|| self.unreadable(&keys[0]))?
                    .floor_until_ms
            }
        };
        let mut nodes = Vec::new();
        for ((&id, key), raw) in ids.iter().zip(&keys[1..]).zip(&snap.values[1..]) {
            // Deleted since the scan: no record now.
            let Some(text) = stored(raw) else { continue };
            let r = Record::decode(text).ok_or_else(|| self.unreadable(key))?;
            nodes.push(r.node_view(id, now_ms));
        }
        Ok(RegistryView::new(now_ms, floor_until_ms, nodes))
    }
}

/// `text` with Redis glob characters escaped, for `SCAN MATCH`.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Why a Redis with this `maxmemory` and `maxmemory_policy` cannot hold the registry, if
/// it cannot.
fn eviction_refusal(maxmemory: &str, policy: &str) -> Option<String> {
    let limited = maxmemory.parse::<u64>().map_or(true, |m| m > 0);
    (limited && policy != "noeviction").then(|| {
        format!(
            "this Redis may evict keys (maxmemory {maxmemory}, maxmemory-policy {policy}), \
             and an evicted lease record would let two processes hold one node id; the \
             lease registry needs maxmemory-policy noeviction, or a Redis of its own"
        )
    })
}

impl Registry for RedisRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        request.validate()?;
        let token = new_token("redis")?;
        let limit = CALL_TIMEOUT * 2;
        self.io
            .run("claiming a node id", limit, self.claim(request, &token))?
            .ok_or(LeaseError::NoFreeNode {
                node_count: request.node_count,
            })
    }

    fn renew(&self, grant: &Grant, renewal: &Renewal) -> Result<(), LeaseError> {
        let proof = self.io.run(
            "renewing",
            renew_limit(renewal.ttl),
            self.update_held(grant, false, |record, now_ms| {
                record.renewed(now_ms, renewal)
            }),
        )?;
        proof.map_err(|why| grant.lost(why))
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        // The final mark as given: the holder has stopped issuing. Not held (any more):
        // nothing to give back, and not an error.
        let _not_held = self.io.run(
            "releasing",
            CALL_TIMEOUT,
            self.update_held(grant, true, |record, _| Record {
                mark: high_water_ms,
                token: None,
                ..record.clone()
            }),
        )?;
        Ok(())
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
            .run("listing the records", CALL_TIMEOUT * 2, self.view())
    }

    fn wall_clock_ms(&self) -> Result<Option<u64>, LeaseError> {
        let snapshot = self
            .io
            .run("reading the clock", CALL_TIMEOUT, self.read(&[]))?;
        Ok(Some(snapshot.now_ms()))
    }

    fn name(&self) -> &str {
        "redis"
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
    fn scan_patterns_match_the_prefix_literally() {
        assert_eq!(glob_escaped("ff:lease:node:"), "ff:lease:node:");
        assert_eq!(glob_escaped(r"a*b?[c]\d"), r"a\*b\?\[c\]\\d");
    }

    #[test]
    fn evicting_redis_is_refused() {
        assert_eq!(eviction_refusal("0", "noeviction"), None);
        assert_eq!(eviction_refusal("0", "allkeys-lru"), None);
        assert_eq!(eviction_refusal("1000000", "noeviction"), None);
        assert!(eviction_refusal("1000000", "allkeys-lru").is_some());
        assert!(eviction_refusal("1000000", "volatile-ttl").is_some());
    }

    fn reply(fields: &[&str]) -> Vec<String> {
        fields.iter().map(|f| (*f).to_owned()).collect()
    }

    #[test]
    fn snapshots_read_clock_uptime_and_tagged_values() {
        let snap = Snapshot::parse(
            reply(&["1700000000", "123456", "60", "ab12", "=1 2", ""]),
            2,
        )
        .unwrap();
        assert_eq!(snap.now_us, 1_700_000_000_123_456);
        assert_eq!(snap.uptime_ms, 60_000);
        assert_eq!(snap.replid, "ab12");
        assert_eq!(stored(&snap.values[0]), Some("1 2"));
        assert_eq!(stored(&snap.values[1]), None, "a missing key");
        assert_eq!(
            stored("="),
            Some(""),
            "a key holding '' is present, not missing"
        );
    }

    #[test]
    fn garbled_snapshots_are_refused() {
        for (fields, keys) in [
            (&["1700000000", "123456"][..], 0),       // short: no uptime
            (&["1700000000", "123456", "", "ab"], 0), // INFO without uptime_in_seconds
            (&["1700000000", "123456", "60", ""], 0), // INFO without master_replid
            (&["1700000000", "123456", "60"], 0),     // short: no replid
            (&["1700000000", "123456", "x", "ab"], 0),
            (&["", "123456", "60", "ab"], 0),
            (&["1700000000", "-1", "60", "ab"], 0),
            (&["1700000000", "1000000", "60", "ab"], 0),
            (&["1700000000", "123456", "60", "ab", "=a"], 2), // a value missing
            (&["1700000000", "123456", "60", "ab", "1 2"], 1), // untagged
        ] {
            assert!(Snapshot::parse(reply(fields), keys).is_err(), "{fields:?}");
        }
    }
}
