//! Leaf's table in Redis: one hash per key, and Lua scripts in place of the SQL updates.
//!
//! | Leaf's `leaf_alloc` | here |
//! |---|---|
//! | a row, `biz_tag` | the hash `{prefix}{key}` (prefix `ferroflake:segment:` by default) |
//! | `max_id`, `step`, `description`, `update_time` | hash fields of the same names (`update_time` in Unix seconds, on Redis's clock) |
//! | `UPDATE ... SET max_id = max_id + step` | `HINCRBY max_id step` in a script that first checks the hash exists and `max_id <= 2^63 - 1 - step` |
//! | `INSERT` | a script that writes the hash only if it is absent |
//! | give-back: `UPDATE ... WHERE max_id = expected` | a script that compares, then `HSET` |
//! | the store's id ([`SegmentStore::identity`]) | the string `{prefix}` NUL `store`, set once by the first store to connect |
//!
//! Each script runs atomically on the server, so allocations from any number of processes
//! get disjoint ranges, `[max_id - step, max_id)` after the increment, as with Leaf. Numbers
//! stay decimal strings inside the scripts (Lua's numbers are doubles and would round IDs
//! above 2^53); the increment itself is Redis's 64-bit `HINCRBY`.
//!
//! # Failing closed
//!
//! A SQL database keeps a committed row. Redis may forget one, or bring an old one back, and
//! a counter that goes back hands out the same IDs twice. The store refuses to go on
//! whenever that may have happened, and leaves the repair to an operator:
//!
//! - **The hash is gone** (`FLUSHALL`, `FLUSHDB`, a restart without persistence, `DEL`):
//!   allocation never recreates it. A key this store has seen before answers
//!   [`SegmentError::Rewound`]; one it has not seen answers
//!   [`SegmentError::UnknownKey`] (the allocator turns that into `Rewound` too for a key it
//!   has issued from). Only [`create`](SegmentStore::create) makes a hash.
//! - **The hash may be older than the last allocation** (a restart that loaded an RDB
//!   snapshot or an `everysec` AOF, a failover to a replica that had not caught up): every
//!   write records the server's `run_id` (`INFO server`) in the hash, in the field `run_id`.
//!   When the next allocation finds another `run_id`, the server restarted or failed over
//!   since the hash was last written, and the allocation is refused with `Rewound`. It is
//!   let through only if both the write that left the hash and the server now persist every
//!   write before answering (`appendonly yes` and `appendfsync always`; each write records
//!   that in the field `durable`), and the server was not promoted from a replica
//!   (`second_repl_offset:-1`). A server that does not allow `CONFIG GET appendfsync`
//!   counts as not durable.
//! - **Redis may lose writes it acknowledged** (no AOF, or `appendfsync` other than
//!   `always`): refused at [`connect`](RedisStore::connect), since every crash would then
//!   stop keys until an operator recovers them, unless the operator accepts that by name
//!   ([`connect_accepting_lost_writes`](RedisStore::connect_accepting_lost_writes),
//!   `accept=lost-writes` in an address). The checks above still hold either way.
//! - **Redis may evict keys** (any `maxmemory-policy` but `noeviction`): refused at
//!   [`connect`](RedisStore::connect) and on every create and allocation with
//!   [`SegmentError::InvalidConfig`]. With `noeviction` a full Redis refuses writes, which
//!   the allocator retries, instead of dropping a counter.
//!
//! - **The hash was deleted and made again** (`DEL`, then a create at start-up): every
//!   key's highest `max_id` is also kept in the hash `{prefix}` NUL `marks`, and a create
//!   or allocation below it is refused with `Rewound` ([`ferroflake_segment::marks`]).
//!
//! To re-arm a refused key, find the highest ID issued for it, then run `ferroflake segment
//! recover KEY --above <that ID>` ([`SegmentStore::recover`]): it raises the hash above that
//! and above its mark, and writes it as the current server's.
//!
//! What no check here can see: an AOF restored from a backup by hand; a promoted replica
//! restarted before its first allocation; `appendfsync` lowered from `always` at run time
//! and a crash within the next second. The allocator's own check
//! ([`SegmentAllocator`](ferroflake_segment::SegmentAllocator) refuses a range below one it
//! already had) still covers the processes that were running.
//!
//! Every call is bounded: 3 s to connect, 3 s per read or write. A connection that fails or
//! times out is dropped ([`SegmentError::Unavailable`]) and made again on the next call.
//! Calls of one store share one connection, one at a time. The store wants one Redis (or a
//! primary with replicas), not Redis Cluster, and a user allowed `EVAL`/`EVALSHA` and
//! `INFO`.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ferroflake_segment::marks::{recovered_max_id, recreated_below_mark, row_below_mark, row_gone};
use ferroflake_segment::{
    check_create, check_give_back, check_key, check_step, range_after, Allocation, KeyRecord,
    Range, SegmentError, SegmentStore, MAX_TABLE_ID,
};
use redis::{Client, Connection, RedisError, Script};

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one read or write on the connection may take.
pub const IO_TIMEOUT: Duration = Duration::from_secs(3);

/// Helpers every script starts with. Numbers are compared as canonical decimal strings.
const PRELUDE: &str = r"
local function info(section, pattern)
  return string.match(redis.call('INFO', section), pattern)
end
local function run_id() return info('server', 'run_id:(%x+)') end
local function evicting()
  local policy = info('memory', 'maxmemory_policy:([%w%-]+)')
  if policy == 'noeviction' then return nil end
  return policy or 'unknown'
end
local function aof_on() return info('persistence', 'aof_enabled:(%d)') == '1' end
local function promoted() return info('replication', 'second_repl_offset:(%-?%d+)') ~= '-1' end
local function canonical(v)
  return type(v) == 'string' and #v <= 19 and (v == '0' or string.match(v, '^[1-9]%d*$') ~= nil)
end
local function at_most(a, b)
  if #a ~= #b then return #a < #b end
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return true
end
-- A canonical number plus one, as text (Lua's numbers lose integers past 2^53); never past
-- the table's last ID.
local function plus_one(v)
  if v == '9223372036854775807' then return v end
  local i = #v
  while i >= 1 and string.byte(v, i) == 57 do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #v) end
  return string.sub(v, 1, i - 1) .. string.char(string.byte(v, i) + 1) .. string.rep('0', #v - i)
end
local function stamp(key, durable, ...)
  redis.call('HSET', key, 'run_id', run_id(), 'durable', durable,
    'update_time', redis.call('TIME')[1], ...)
end
";

/// KEYS[1] the hash, KEYS[2] the marks; ARGV max_id, step, whether appendfsync is `always`
/// ('1'/'0'), the key.
const CREATE: &str = r"
local policy = evicting()
if policy then return {'evicting', policy} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists'} end
local mark = redis.call('HGET', KEYS[2], ARGV[4])
if mark and not (canonical(mark) and at_most(mark, ARGV[1])) then
  return {'below_mark', ARGV[1], mark}
end
local durable = (ARGV[3] == '1' and aof_on()) and '1' or '0'
stamp(KEYS[1], durable, 'max_id', ARGV[1], 'step', ARGV[2],
  'description', 'created by ferroflake')
redis.call('HSET', KEYS[2], ARGV[4], ARGV[1])
return {'ok'}
";

/// KEYS[1] the hash, KEYS[2] the marks; ARGV step, the highest max_id the step may be added
/// to, whether appendfsync is `always`, the key. Answers {'ok', new max_id, table step}, or
/// why not.
const ALLOCATE: &str = r"
local policy = evicting()
if policy then return {'evicting', policy} end
local mark = redis.call('HGET', KEYS[2], ARGV[4])
if mark and not canonical(mark) then return {'malformed_mark', mark} end
if redis.call('EXISTS', KEYS[1]) == 0 then
  if mark then return {'gone', mark} end
  return {'missing'}
end
local row = redis.call('HMGET', KEYS[1], 'max_id', 'step', 'run_id', 'durable')
local max_id, step, was, was_durable = row[1], row[2], row[3], row[4]
if not canonical(max_id) or not canonical(step) then
  return {'malformed', tostring(max_id), tostring(step)}
end
local now = run_id()
local durable = (ARGV[3] == '1' and aof_on()) and '1' or '0'
if was and was ~= now then
  local moved = promoted()
  if not (was_durable == '1' and durable == '1' and not moved) then
    return {'restarted', was, now, max_id, was_durable or '0', durable, moved and '1' or '0'}
  end
end
if mark and not at_most(mark, max_id) then return {'below_mark', max_id, mark} end
if not at_most(max_id, ARGV[2]) then return {'exhausted', max_id} end
redis.call('HINCRBY', KEYS[1], 'max_id', ARGV[1])
stamp(KEYS[1], durable)
local now_max = redis.call('HGET', KEYS[1], 'max_id')
redis.call('HSET', KEYS[2], ARGV[4], now_max)
return {'ok', now_max, step}
";

/// KEYS[1] the hash, KEYS[2] the marks; ARGV the new max_id, the expected max_id, whether
/// appendfsync is `always`, the key. Lowers max_id (and the mark with it) only if it is
/// still the expected one and the server has not restarted since the hash was written.
const GIVE_BACK: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local row = redis.call('HMGET', KEYS[1], 'max_id', 'run_id')
if row[1] ~= ARGV[2] then return {'changed'} end
if row[2] and row[2] ~= run_id() then return {'restarted'} end
stamp(KEYS[1], (ARGV[3] == '1' and aof_on()) and '1' or '0', 'max_id', ARGV[1])
if redis.call('HGET', KEYS[2], ARGV[4]) == ARGV[2] then
  redis.call('HSET', KEYS[2], ARGV[4], ARGV[1])
end
return {'ok'}
";

/// KEYS[1] the hash, KEYS[2] the marks; ARGV the operator's floor plus one, the step for a
/// new hash, whether appendfsync is `always`, the key. Raises max_id to the floor, the
/// hash's max_id and the mark, whichever is highest, and writes the hash as this server's
/// (the operator has vouched for it). Answers {'ok', max_id, step}.
const RECOVER: &str = r"
local policy = evicting()
if policy then return {'evicting', policy} end
local row = redis.call('HMGET', KEYS[1], 'max_id', 'step')
local mark = redis.call('HGET', KEYS[2], ARGV[4])
local top = ARGV[1]
for i, v in ipairs({row[1] or false, mark or false}) do
  if v then
    if not canonical(v) then return {'malformed', tostring(row[1]), tostring(row[2])} end
    -- Strictly above the row (marks::recovered_max_id): a range taken before cannot go back.
    if i == 1 then v = plus_one(v) end
    if not at_most(v, top) then top = v end
  end
end
local step = row[2] or ARGV[2]
if not canonical(step) then return {'malformed', tostring(row[1]), tostring(row[2])} end
local durable = (ARGV[3] == '1' and aof_on()) and '1' or '0'
if row[1] then
  stamp(KEYS[1], durable, 'max_id', top)
else
  stamp(KEYS[1], durable, 'max_id', top, 'step', step, 'description', 'recovered by ferroflake')
end
redis.call('HSET', KEYS[2], ARGV[4], top)
return {'ok', top, step}
";

/// KEYS[1] the hash, KEYS[2] the marks; ARGV the step, the key. Sets the hash's step and
/// nothing else: the stamp of the run that last wrote max_id stays, so a restart that
/// lost writes is still seen by the next allocation. Answers {'ok', max_id, step}.
const SET_STEP: &str = r"
local policy = evicting()
if policy then return {'evicting', policy} end
if redis.call('EXISTS', KEYS[1]) == 0 then
  local mark = redis.call('HGET', KEYS[2], ARGV[2])
  if mark then return {'gone', mark} end
  return {'missing'}
end
redis.call('HSET', KEYS[1], 'step', ARGV[1], 'update_time', redis.call('TIME')[1])
local row = redis.call('HMGET', KEYS[1], 'max_id', 'step')
return {'ok', tostring(row[1]), tostring(row[2])}
";

/// A [`SegmentStore`] on Redis: one hash per key (see the module docs).
pub struct RedisStore {
    client: Client,
    prefix: String,
    /// The connection; dropped after a failure, made again on the next call.
    connection: Mutex<Option<Connection>>,
    /// Keys whose hash this store has seen: a missing hash among them was lost.
    seen: Mutex<HashSet<String>>,
    create: Script,
    allocate: Script,
    give_back: Script,
    recover: Script,
    set_step: Script,
    /// The id kept in the database beside the keys ([`store_key`](Self::store_key)):
    /// what tells this store from another Redis database's.
    store_id: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field(
                "server",
                &self.client.get_connection_info().addr().to_string(),
            )
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port/db`, or `redis+unix:///path/to/socket`),
    /// keeping one hash per key at `{prefix}{key}`, and checks that Redis answers, will not
    /// evict keys, and persists every write before answering (`appendonly yes` and
    /// `appendfsync always`): a Redis that loses acknowledged writes in a crash comes back
    /// below IDs it handed out, and every key it serves stops with `Rewound` until an
    /// operator recovers it.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] if the client refuses the URL, Redis may evict keys,
    /// or may lose writes (see [`connect_accepting_lost_writes`](Self::connect_accepting_lost_writes));
    /// [`SegmentError::Unavailable`] if Redis does not answer within a few seconds.
    pub fn connect(url: &str, prefix: &str) -> Result<Self, SegmentError> {
        let store = Self::connect_accepting_lost_writes(url, prefix)?;
        let aof: String = store.call("reading INFO persistence", |c| {
            redis::cmd("INFO").arg("persistence").query(c)
        })?;
        let appendonly = aof.lines().any(|l| l.trim() == "aof_enabled:1");
        if appendonly && store.fsync_always()? {
            return Ok(store);
        }
        Err(crate::address::may_lose_writes(
            "Redis",
            &format!(
                "appendonly {}, appendfsync not always, or not readable with CONFIG GET",
                if appendonly { "yes" } else { "no" }
            ),
            "set appendonly yes and appendfsync always",
        ))
    }

    /// As [`connect`](Self::connect), but also to a Redis that may lose acknowledged writes
    /// (`accept=lost-writes` in an address): the store still fails closed when it finds one
    /// came back older (run id, marks), but the keys then stop until an operator recovers
    /// them.
    ///
    /// # Errors
    /// As [`connect`](Self::connect), less the check on writes.
    pub fn connect_accepting_lost_writes(url: &str, prefix: &str) -> Result<Self, SegmentError> {
        let client = Client::open(url).map_err(|e| SegmentError::InvalidConfig {
            detail: format!(
                "Redis address {:?}: {e}",
                ferroflake_store_address::redact(url)
            ),
        })?;
        let script = |body: &str| Script::new(&format!("{PRELUDE}{body}"));
        let store = RedisStore {
            client,
            prefix: prefix.to_owned(),
            connection: Mutex::new(None),
            seen: Mutex::new(HashSet::new()),
            create: script(CREATE),
            allocate: script(ALLOCATE),
            give_back: script(GIVE_BACK),
            recover: script(RECOVER),
            set_step: script(SET_STEP),
            store_id: String::new(),
        };
        let info: String = store.call("reading INFO memory", |c| {
            redis::cmd("PING").query::<String>(c)?;
            redis::cmd("INFO").arg("memory").query(c)
        })?;
        let policy = info
            .lines()
            .find_map(|l| l.strip_prefix("maxmemory_policy:"))
            .map(str::trim);
        if let Some(p) = policy.filter(|p| *p != "noeviction") {
            return Err(evicting(p));
        }
        let store_id = store.call("reading the store's id", |c| {
            // The first store to connect names the database: its server's time and its
            // connection's number, which no other server gives at the same instant.
            let (seconds, micros): (String, String) = redis::cmd("TIME").query(c)?;
            let client: u64 = redis::cmd("CLIENT").arg("ID").query(c)?;
            let fresh = format!("{seconds}.{micros:0>6}-{client}");
            redis::cmd("SET")
                .arg(store.store_key())
                .arg(fresh)
                .arg("NX")
                .query::<()>(c)?;
            redis::cmd("GET").arg(store.store_key()).query(c)
        })?;
        Ok(RedisStore { store_id, ..store })
    }

    /// The string that names this database's keys as one store: `{prefix}` then a NUL
    /// byte then `store`.
    pub fn store_key(&self) -> String {
        format!("{}\0store", self.prefix)
    }

    /// The hash of `key`.
    pub fn hash_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The hash of every key's mark ([`ferroflake_segment::marks`]), one field per key:
    /// `{prefix}` then a NUL byte then `marks`. No key holds a NUL byte, so no key's hash
    /// has this name.
    pub fn marks_key(&self) -> String {
        format!("{}\0marks", self.prefix)
    }

    fn connection(&self) -> MutexGuard<'_, Option<Connection>> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the connection (made first if there is none), bounded in time.
    fn call<T>(
        &self,
        what: &str,
        f: impl FnOnce(&mut Connection) -> redis::RedisResult<T>,
    ) -> Result<T, SegmentError> {
        let mut slot = self.connection();
        let connection = match &mut *slot {
            Some(c) => c,
            empty => empty.insert(self.open().map_err(|e| classify("connecting", e))?),
        };
        f(connection).map_err(|e| {
            // A reply from the server leaves the connection in step; anything else (a
            // timeout, a reset, a reply that did not parse) may not.
            if e.code().is_none() {
                *slot = None;
            }
            classify(what, e)
        })
    }

    fn open(&self) -> redis::RedisResult<Connection> {
        let connection = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        connection.set_read_timeout(Some(IO_TIMEOUT))?;
        connection.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(connection)
    }

    /// Whether the server fsyncs every write before answering, as far as this client may
    /// read (`appendfsync always`; the script checks `appendonly` itself). Any failure to
    /// read it counts as no.
    fn fsync_always(&self) -> Result<bool, SegmentError> {
        self.call("reading appendfsync", |c| {
            match redis::cmd("CONFIG")
                .arg("GET")
                .arg("appendfsync")
                .query::<Vec<String>>(c)
            {
                Ok(pair) => Ok(matches!(pair.as_slice(), [_, value] if value == "always")),
                // The server refused (CONFIG renamed away, or not allowed to this user).
                Err(e) if e.code().is_some() => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn run(
        &self,
        script: &Script,
        what: &str,
        key: &str,
        args: &[String],
    ) -> Result<Vec<String>, SegmentError> {
        let (hash, marks) = (self.hash_key(key), self.marks_key());
        self.call(what, |c| {
            let mut invocation = script.prepare_invoke();
            invocation.key(&hash).key(&marks);
            for a in args {
                invocation.arg(a);
            }
            invocation.arg(key);
            invocation.invoke(c)
        })
    }

    fn saw(&self, key: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if !seen.contains(key) {
            seen.insert(key.to_owned()); // allocated once per key, not per call
        }
    }

    fn has_seen(&self, key: &str) -> bool {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(key)
    }

    /// The error for a hash that is not there.
    fn missing(&self, key: &str) -> SegmentError {
        if !self.has_seen(key) {
            return SegmentError::UnknownKey { key: key.into() };
        }
        SegmentError::Rewound {
            store: "redis".into(),
            key: key.into(),
            detail: format!(
                "the hash {} is gone after this store used it (FLUSHALL or FLUSHDB, a restart \
                 without persistence, DEL or eviction); it is never recreated by an allocation",
                self.hash_key(key)
            ),
        }
    }
}

impl SegmentStore for RedisStore {
    fn create(&self, key: &str, start: i64, step: u64) -> Result<(), SegmentError> {
        let max_id = check_create(key, start, step)?;
        let durable = self.fsync_always()?;
        let reply = self.run(
            &self.create,
            "creating the key",
            key,
            &[max_id.to_string(), step.to_string(), flag(durable)],
        )?;
        match status(&reply) {
            "ok" => {
                self.saw(key);
                Ok(())
            }
            "exists" => Err(SegmentError::KeyExists { key: key.into() }),
            "below_mark" => Err(recreated_below_mark(
                "redis",
                key,
                number(key, "max_id", reply.get(1))?,
                number(key, "mark", reply.get(2))?,
            )),
            _ => Err(self.refusal(key, &reply)),
        }
    }

    fn allocate(&self, key: &str, step: u64) -> Result<Allocation, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let durable = self.fsync_always()?;
        let reply = self.run(
            &self.allocate,
            "allocating",
            key,
            &[
                step.to_string(),
                (MAX_TABLE_ID - step).to_string(),
                flag(durable),
            ],
        )?;
        if status(&reply) != "ok" {
            return Err(self.refusal(key, &reply));
        }
        self.saw(key);
        let max_id = number(key, "max_id", reply.get(1))?;
        let table_step = number(key, "step", reply.get(2))?;
        if max_id < step {
            return Err(malformed(
                key,
                &format!("max_id {max_id} after adding {step}"),
            ));
        }
        Ok(Allocation {
            range: range_after(max_id, step),
            table_step,
        })
    }

    fn give_back(
        &self,
        key: &str,
        rest: Range,
        expected_max_id: u64,
    ) -> Result<bool, SegmentError> {
        check_give_back(key, rest, expected_max_id)?;
        let durable = self.fsync_always()?;
        let reply = self.run(
            &self.give_back,
            "giving back",
            key,
            &[
                rest.start.to_string(),
                expected_max_id.to_string(),
                flag(durable),
            ],
        )?;
        match status(&reply) {
            "ok" => Ok(true),
            // Lowering a hash the server may have brought back from an older state could
            // only make things worse; keeping it is always safe.
            "changed" | "restarted" => Ok(false),
            _ => Err(self.refusal(key, &reply)),
        }
    }

    fn peek(&self, key: &str) -> Result<Option<KeyRecord>, SegmentError> {
        check_key(key)?;
        let hash = self.hash_key(key);
        let (max_id, step): (Option<String>, Option<String>) =
            self.call("reading the key", |c| {
                redis::cmd("HMGET")
                    .arg(&hash)
                    .arg("max_id")
                    .arg("step")
                    .query(c)
            })?;
        match (max_id, step) {
            (None, None) => {
                let marks = self.marks_key();
                let mark: Option<String> = self.call("reading the key's mark", |c| {
                    redis::cmd("HGET").arg(&marks).arg(key).query(c)
                })?;
                match mark {
                    Some(mark) => Err(row_gone("redis", key, number(key, "mark", Some(&mark))?)),
                    None => Ok(None),
                }
            }
            (max_id, step) => {
                let record = KeyRecord {
                    max_id: number(key, "max_id", max_id.as_ref())?,
                    step: number(key, "step", step.as_ref())?,
                };
                self.saw(key);
                Ok(Some(record))
            }
        }
    }

    fn recover(&self, key: &str, above: u64, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let floor = recovered_max_id(above, None, None)?;
        let durable = self.fsync_always()?;
        let reply = self.run(
            &self.recover,
            "recovering the key",
            key,
            &[floor.to_string(), step.to_string(), flag(durable)],
        )?;
        if status(&reply) != "ok" {
            return Err(self.refusal(key, &reply));
        }
        self.saw(key);
        Ok(KeyRecord {
            max_id: number(key, "max_id", reply.get(1))?,
            step: number(key, "step", reply.get(2))?,
        })
    }

    fn set_step(&self, key: &str, step: u64) -> Result<KeyRecord, SegmentError> {
        check_key(key)?;
        check_step(step)?;
        let reply = self.run(&self.set_step, "setting the step", key, &[step.to_string()])?;
        if status(&reply) != "ok" {
            return Err(self.refusal(key, &reply));
        }
        self.saw(key);
        Ok(KeyRecord {
            max_id: number(key, "max_id", reply.get(1))?,
            step: number(key, "step", reply.get(2))?,
        })
    }

    fn identity(&self) -> Option<String> {
        Some(format!("redis store {}", self.store_id))
    }

    fn name(&self) -> &str {
        "redis"
    }
}

impl RedisStore {
    /// The error for a script's refusal (anything but its success answer).
    fn refusal(&self, key: &str, reply: &[String]) -> SegmentError {
        let field = |i: usize| reply.get(i).map_or("?", String::as_str);
        match status(reply) {
            "evicting" => evicting(field(1)),
            "missing" => self.missing(key),
            "gone" => match number(key, "mark", reply.get(1)) {
                Ok(mark) => row_gone("redis", key, mark),
                Err(e) => e,
            },
            "below_mark" => match (
                number(key, "max_id", reply.get(1)),
                number(key, "mark", reply.get(2)),
            ) {
                (Ok(max_id), Ok(mark)) => row_below_mark("redis", key, max_id, mark),
                (Err(e), _) | (_, Err(e)) => e,
            },
            "malformed_mark" => malformed(key, &format!("the mark {:?}", field(1))),
            "exhausted" => SegmentError::Exhausted {
                key: key.into(),
                limit: MAX_TABLE_ID,
            },
            "malformed" => malformed(
                key,
                &format!("max_id {:?} and step {:?}", field(1), field(2)),
            ),
            "restarted" => SegmentError::Rewound {
                store: "redis".into(),
                key: key.into(),
                detail: format!(
                    "the hash {hash} was last written by Redis run {was}{was_durable}, and the \
                     server now runs as {now}{now_durable}{promoted}: it restarted or failed \
                     over since, and may have come back with an older max_id than it handed \
                     out (it reads {max_id} now)",
                    hash = self.hash_key(key),
                    was = field(1),
                    now = field(2),
                    max_id = field(3),
                    was_durable = if field(4) == "1" {
                        ""
                    } else {
                        " without fsyncing every write"
                    },
                    promoted = if field(6) == "1" {
                        ", promoted from a replica"
                    } else {
                        ""
                    },
                    now_durable = if field(5) == "1" {
                        ""
                    } else {
                        " (not appendonly yes with appendfsync always)"
                    },
                ),
            },
            other => SegmentError::Store {
                store: "redis".into(),
                detail: format!("unexpected script answer {other:?} for key {key:?}"),
            },
        }
    }
}

fn status(reply: &[String]) -> &str {
    reply.first().map_or("", String::as_str)
}

fn flag(on: bool) -> String {
    if on { "1" } else { "0" }.to_owned()
}

fn number(key: &str, field: &str, value: Option<&String>) -> Result<u64, SegmentError> {
    value
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| *v <= MAX_TABLE_ID)
        .ok_or_else(|| malformed(key, &format!("{field} {value:?}")))
}

fn malformed(key: &str, what: &str) -> SegmentError {
    SegmentError::Store {
        store: "redis".into(),
        detail: format!(
            "the hash of key {key:?} holds {what}: expected whole numbers from 0 to 2^63 - 1"
        ),
    }
}

fn evicting(policy: &str) -> SegmentError {
    SegmentError::InvalidConfig {
        detail: format!(
            "this Redis may evict keys (maxmemory-policy {policy}), and an evicted counter \
             stops its key until an operator repairs it; segment keys need maxmemory-policy \
             noeviction, or a Redis of their own"
        ),
    }
}

/// Unreachable, timed out, loading, busy, read-only (a replica), out of memory: worth
/// retrying. Anything else the server says is a store error.
fn classify(what: &str, e: RedisError) -> SegmentError {
    let transient = match e.code() {
        None => e.is_io_error() || e.is_timeout() || e.is_connection_dropped(),
        Some(code) => matches!(
            code,
            "LOADING" | "BUSY" | "TRYAGAIN" | "CLUSTERDOWN" | "MASTERDOWN" | "READONLY" | "OOM"
        ),
    };
    let detail = format!("{what}: {e}");
    if transient {
        SegmentError::Unavailable {
            store: "redis".into(),
            detail,
        }
    } else {
        SegmentError::Store {
            store: "redis".into(),
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RedisStore;

    #[test]
    fn an_address_the_client_refuses_is_shown_without_its_password() {
        let e = RedisStore::connect("redis://:SeCrEtXYZ@127.0.0.1:1/x", "p").unwrap_err();
        let shown = e.to_string();
        assert!(
            !shown.contains("SeCrEtXYZ") && shown.contains("***"),
            "{shown}"
        );
    }
}
