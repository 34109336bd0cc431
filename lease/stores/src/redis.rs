//! The Redis registry: `SET claim token NX PX` claims with a 128-bit random owner token,
//! Lua scripts that check the token on renew and release, and a persistent high-water key
//! per node id.
//!
//! Keys under the prefix `P` (default `ferroflake:lease:`):
//! - `P claim:ID` = owner token, expiring TTL + quarantine after the last renewal;
//! - `P holder:ID` = who holds it, with the same expiry;
//! - `P mark:ID` = the high-water mark (Unix ms), no expiry, raised by renew and release;
//! - `P epoch:ID` = the last epoch handed out for the id, no expiry.
//!
//! The claim scans ids inside one script, so one round trip claims the lowest free id.
//! Scripts build key names from the prefix, so this registry wants a single Redis (or a
//! primary with replicas), not Redis Cluster.
//!
//! # Redis restarting without persistence
//!
//! A Redis without RDB/AOF (or restored from an old snapshot) comes back with claims and
//! marks gone or stale. What happens then:
//! - every holder's next renewal finds its claim missing and gets [`LeaseError::Lost`];
//!   the leased generator stops issuing at its local deadline (last successful renewal's
//!   send time + TTL − margin) and never resumes under that claim;
//! - a new claimant could take the same id at once, and the recorded mark that would make
//!   it wait out the old holder is gone.
//!
//! The registry makes this safe with a clock floor: a holder that renewed with the old
//! server stops at most TTL after that server went away, so every claim also reports, as
//! the previous mark, at least *the current server's start time + TTL + quarantine*
//! (start time = Redis `TIME` − whole `uptime_in_seconds`, never earlier than the true
//! start), when that floor is still ahead of the server's clock. A
//! [`LeasedGenerator`](ferroflake_lease::LeasedGenerator) waits past that before issuing,
//! so within the first TTL + quarantine after a restart new holders wait, and after that
//! the floor is in the past and costs nothing. Epochs come from `max(last + 1, server
//! ms)`, so they keep growing across a restart as long as the server clock does. The
//! floor assumes every holder of the namespace uses a TTL no longer than the claimant's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use ferroflake_lease::{Grant, LeaseError, LeaseRequest, Registry};
use redis::aio::MultiplexedConnection;
use redis::{Client, Script};

use crate::blocking::{renew_limit, Blocking, CALL_TIMEOUT, CONNECT_TIMEOUT};
use ferroflake_lease::new_token;

/// Claims the lowest free id in `0..n`: returns `{id, epoch, previous mark}` or nil.
const CLAIM: &str = r"
local prefix, n, token, holder, px, wait_ms =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local uptime = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)'))
-- A holder of the previous server's life stops within TTL of its end (see the docs).
local floor = now_ms - uptime * 1000 + wait_ms
for id = 0, n - 1 do
  local claim = prefix .. 'claim:' .. id
  if redis.call('SET', claim, token, 'NX', 'PX', px) then
    redis.call('SET', prefix .. 'holder:' .. id, holder, 'PX', px)
    local mark = tonumber(redis.call('GET', prefix .. 'mark:' .. id) or '0')
    if floor > now_ms and floor > mark then mark = floor end
    local epoch = tonumber(redis.call('GET', prefix .. 'epoch:' .. id) or '0') + 1
    if epoch < now_ms then epoch = now_ms end
    redis.call('SET', prefix .. 'epoch:' .. id, string.format('%.0f', epoch))
    return {id, epoch, mark}
  end
end
return false
";

/// KEYS claim, holder, mark; ARGV token, px, mark. 1 if held (and extended), 0 if not.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
if tonumber(ARGV[3]) > tonumber(redis.call('GET', KEYS[3]) or '0') then
  redis.call('SET', KEYS[3], ARGV[3])
end
return 1
";

/// KEYS claim, holder, mark; ARGV token, mark. Deletes the claim only if it is the token's.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[2]) > tonumber(redis.call('GET', KEYS[3]) or '0') then
  redis.call('SET', KEYS[3], ARGV[2])
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
";

/// Node ids leased from Redis.
pub struct RedisRegistry {
    io: Blocking,
    client: Client,
    prefix: String,
    /// The current connection; dropped on an I/O error and made again on the next call.
    connection: Mutex<Option<MultiplexedConnection>>,
    /// The quarantine each claim was made with, by owner token, so renewals keep it.
    quarantines: Mutex<HashMap<String, Duration>>,
    claim: Script,
    renew: Script,
    release: Script,
}

impl RedisRegistry {
    /// Connects to `url` (`redis://host:port/db`), keeping keys under `prefix`, and checks
    /// that Redis answers.
    ///
    /// # Errors
    /// [`LeaseError::Unavailable`] if Redis does not answer within a few seconds;
    /// [`LeaseError::BadAddress`] if the client refuses the URL.
    pub fn connect(url: &str, prefix: &str) -> Result<Self, LeaseError> {
        let io = Blocking::new("redis")?;
        let client = Client::open(url).map_err(|e| LeaseError::BadAddress {
            address: url.into(),
            detail: e.to_string(),
        })?;
        let registry = RedisRegistry {
            io,
            client,
            prefix: prefix.to_owned(),
            connection: Mutex::new(None),
            quarantines: Mutex::new(HashMap::new()),
            claim: Script::new(CLAIM),
            renew: Script::new(RENEW),
            release: Script::new(RELEASE),
        };
        registry
            .io
            .run("connecting to Redis", CONNECT_TIMEOUT, async {
                let mut connection = registry.connection().await?;
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .map_err(|e| {
                        registry
                            .io
                            .unavailable(format!("{url} does not answer: {e}"))
                    })?;
                Ok(())
            })?;
        Ok(registry)
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

    fn key(&self, kind: &str, node_id: u64) -> String {
        format!("{}{kind}:{node_id}", self.prefix)
    }

    fn claim_px(ttl: Duration, quarantine: Duration) -> u64 {
        u64::try_from((ttl + quarantine).as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }
}

impl Registry for RedisRegistry {
    fn acquire(&self, request: &LeaseRequest) -> Result<Grant, LeaseError> {
        if request.node_count == 0 {
            return Err(LeaseError::NoFreeNode { node_count: 0 });
        }
        let token = new_token("redis")?;
        let px = Self::claim_px(request.ttl, request.quarantine);
        let claimed: Option<(u64, u64, u64)> =
            self.io.run("claiming a node id", CALL_TIMEOUT, async {
                let mut connection = self.connection().await?;
                self.claim
                    .prepare_invoke()
                    .arg(&self.prefix)
                    .arg(request.node_count)
                    .arg(&token)
                    .arg(&request.holder)
                    .arg(px)
                    .arg(px)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(|e| self.failed("claiming a node id", e))
            })?;
        let Some((node_id, epoch, previous)) = claimed else {
            return Err(LeaseError::NoFreeNode {
                node_count: request.node_count,
            });
        };
        self.quarantines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), request.quarantine);
        Ok(Grant {
            node_id,
            token,
            epoch,
            previous_high_water_ms: previous,
            floor_wait: Duration::ZERO,
        })
    }

    fn renew(&self, grant: &Grant, ttl: Duration, high_water_ms: u64) -> Result<(), LeaseError> {
        // A grant this instance did not make keeps a quarantine as long as its TTL.
        let quarantine = self
            .quarantines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&grant.token)
            .copied()
            .unwrap_or(ttl);
        let held: i64 = self.io.run("renewing", renew_limit(ttl), async {
            let mut connection = self.connection().await?;
            self.renew
                .key(self.key("claim", grant.node_id))
                .key(self.key("holder", grant.node_id))
                .key(self.key("mark", grant.node_id))
                .arg(&grant.token)
                .arg(Self::claim_px(ttl, quarantine))
                .arg(high_water_ms)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| self.failed("renewing", e))
        })?;
        if held == 1 {
            Ok(())
        } else {
            self.quarantines
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&grant.token);
            Err(LeaseError::Lost {
                node_id: grant.node_id,
                why: ferroflake_lease::Loss::Taken,
            })
        }
    }

    fn release(&self, grant: &Grant, high_water_ms: u64) -> Result<(), LeaseError> {
        self.quarantines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&grant.token);
        let _held: i64 = self.io.run("releasing", CALL_TIMEOUT, async {
            let mut connection = self.connection().await?;
            self.release
                .key(self.key("claim", grant.node_id))
                .key(self.key("holder", grant.node_id))
                .key(self.key("mark", grant.node_id))
                .arg(&grant.token)
                .arg(high_water_ms)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| self.failed("releasing", e))
        })?;
        Ok(())
    }

    fn name(&self) -> &str {
        "redis"
    }
}
