//! The Redis store against real servers, in every way Redis forgets or goes back: the
//! conformance suite; `FLUSHALL` and a restart without persistence under four threads
//! taking IDs; an RDB snapshot brought back by a restart; a restart with an fsync-always AOF
//! (let through) and after an `everysec` write (refused); a replica promoted before it
//! caught up; an evicting `maxmemory-policy`; a server that stops answering.
//!
//! Needs the test server of scripts/servers/ctl.sh (`FERROFLAKE_TEST_REDIS`, and
//! `FF_SERVERS_DIR` / `FF_PORT_OFFSET` to kill and restart it), hence `#[ignore]`. Some
//! tests start servers of their own with `redis-server`. The tests take turns (one lock):
//! most of them take the shared server away or change it.

mod common;

use std::collections::HashSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use ferroflake_segment::conformance::run_all;
use ferroflake_segment::{KeyHandle, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore};
use ferroflake_segment_stores::RedisStore;

/// One test at a time: they flush, restart and reconfigure the shared server.
fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn base_url() -> String {
    common::base_url("redis")
}

/// A prefix no other test or run has used.
fn fresh_prefix(tag: &str) -> String {
    format!("ferroflake:{}:", common::unique(&format!("test-{tag}")))
}

fn fresh_store(tag: &str) -> RedisStore {
    RedisStore::connect_accepting_lost_writes(&base_url(), &fresh_prefix(tag)).unwrap()
}

/// A plain client connection, as an operator's `redis-cli`.
fn admin(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

fn cmd<T: redis::FromRedisValue>(url: &str, args: &[&str]) -> T {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(&mut admin(url))
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// scripts/servers/ctl.sh `command` redis.
fn ctl(command: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/servers/ctl.sh");
    let status = Command::new("bash")
        .arg(script)
        .args([command, "redis"])
        .status()
        .unwrap();
    assert!(status.success(), "ctl.sh {command} redis failed");
}

/// Settings that fetch all the time (step 10) and retry quickly.
fn config() -> SegmentConfig {
    SegmentConfig {
        max_step: 10,
        max_wait: Duration::from_secs(10),
        retry_min: Duration::from_millis(5),
        retry_max: Duration::from_millis(40),
        ..SegmentConfig::default()
    }
}

/// Threads taking IDs from one key until each meets an error that is not "try again" (or
/// has taken 300,000 IDs, or 60 s have passed: a store that never refuses must not run the
/// test out of memory).
struct Takers {
    threads: Vec<JoinHandle<(Vec<u64>, Option<SegmentError>)>>,
    issued: Arc<AtomicU64>,
}

impl Takers {
    fn start(handle: &KeyHandle, threads: usize) -> Takers {
        let issued = Arc::new(AtomicU64::new(0));
        let threads = (0..threads)
            .map(|_| {
                let handle = handle.clone();
                let issued = Arc::clone(&issued);
                thread::spawn(move || {
                    let give_up = Instant::now() + Duration::from_secs(60);
                    let mut ids = Vec::new();
                    while ids.len() < 300_000 && Instant::now() < give_up {
                        match handle.next_id() {
                            Ok(id) => {
                                ids.push(id);
                                issued.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(
                                SegmentError::Unavailable { .. } | SegmentError::NotReady { .. },
                            ) if Instant::now() < give_up => {
                                thread::sleep(Duration::from_millis(1));
                            }
                            Err(e) => return (ids, Some(e)),
                        }
                    }
                    (ids, None)
                })
            })
            .collect();
        Takers { threads, issued }
    }

    fn wait_for_ids(&self, n: u64) {
        let give_up = Instant::now() + Duration::from_secs(30);
        while self.issued.load(Ordering::Relaxed) < n {
            assert!(Instant::now() < give_up, "fewer than {n} IDs in 30 s");
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Every thread's IDs and final error; panics on an ID issued twice.
    fn finish(self) -> (Vec<u64>, Vec<SegmentError>) {
        let mut all = Vec::new();
        let mut errors = Vec::new();
        for t in self.threads {
            let (ids, e) = t.join().unwrap();
            all.extend(ids);
            errors.push(e);
        }
        let mut seen = HashSet::new();
        for id in &all {
            assert!(seen.insert(*id), "ID {id} issued twice");
        }
        let errors = errors
            .into_iter()
            .map(|e| e.expect("a thread took IDs until its limit and never met an error"))
            .collect();
        (all, errors)
    }
}

fn assert_rewound(errors: &[SegmentError], key: &str, says: &str) {
    for e in errors {
        assert!(
            matches!(e, SegmentError::Rewound { key: k, detail, .. } if k == key && detail.contains(says)),
            "expected Rewound ({says}) for {key}, got {e:?}"
        );
    }
}

/// The store passes the suite every store passes, each check under a fresh prefix.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn conformance() {
    let _turn = turn();
    run_all(&|| Arc::new(fresh_store("conf")) as Arc<dyn SegmentStore>);
}

/// The id a store keeps beside its keys tells two databases (or two prefixes) apart, and
/// is the same for every store on one: what lets a service's clients refuse an address
/// whose servers use two.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn each_database_and_prefix_is_one_store_by_its_id() {
    let _turn = turn();
    let prefix = fresh_prefix("identity");
    let on = |url: &str, prefix: &str| {
        RedisStore::connect_accepting_lost_writes(url, prefix)
            .unwrap()
            .identity()
            .unwrap()
    };
    let base = base_url();
    let first = on(&base, &prefix);
    assert_eq!(on(&base, &prefix), first, "one store, connected again");
    assert_ne!(
        on(&base, &fresh_prefix("identity")),
        first,
        "another prefix"
    );
    let other_db = format!(
        "{}/{}",
        base.trim_end_matches(|c: char| c.is_ascii_digit())
            .trim_end_matches('/'),
        5
    );
    assert_ne!(
        on(&other_db, &prefix),
        first,
        "another database: {other_db}"
    );
}

/// Four threads take IDs with step 10 while the server forgets every key (`fault`). They
/// drain memory, then every call is `Rewound`, no ID comes twice, retries do not bring the
/// key back, and nothing recreated the hash. A process started afterwards finds no key
/// (`UnknownKey`) rather than a counter back at 0.
fn forgotten_under_load(tag: &str, fault: impl FnOnce()) {
    let store = Arc::new(fresh_store(tag));
    store.create("k", 1, 10).unwrap();
    let allocator = SegmentAllocator::new(store.clone(), config()).unwrap();
    let handle = allocator.key("k").unwrap();
    let takers = Takers::start(&handle, 4);
    takers.wait_for_ids(3_000);
    fault();
    let (ids, errors) = takers.finish();
    assert!(ids.len() >= 3_000, "{} IDs", ids.len());
    assert_rewound(&errors, "k", "is gone");
    let failures = handle.status().counters.fetch_failures;
    thread::sleep(Duration::from_millis(200)); // time for retries, if there were any
    assert!(matches!(
        handle.next_id(),
        Err(SegmentError::Rewound { .. })
    ));
    assert_eq!(
        handle.status().counters.fetch_failures,
        failures,
        "retried after Rewound"
    );
    let hash = store.hash_key("k");
    assert_eq!(
        cmd::<i64>(&base_url(), &["EXISTS", &hash]),
        0,
        "the hash was recreated"
    );
    let err = store.allocate("k", 10).unwrap_err();
    assert!(matches!(err, SegmentError::Rewound { .. }), "{err:?}");
    assert!(
        err.to_string().contains("FLUSHALL"),
        "the message names the likely causes: {err}"
    );

    // A process started after the loss knows nothing of the key: a plain unknown key, and
    // still no hash.
    let prefix = store.hash_key("");
    let later = Arc::new(RedisStore::connect_accepting_lost_writes(&base_url(), &prefix).unwrap());
    let allocator = SegmentAllocator::new(later.clone(), config()).unwrap();
    assert!(matches!(
        allocator.key("k"),
        Err(SegmentError::UnknownKey { .. })
    ));
    assert!(matches!(
        later.allocate("k", 10),
        Err(SegmentError::UnknownKey { .. })
    ));
    assert_eq!(cmd::<i64>(&base_url(), &["EXISTS", &hash]), 0);
}

#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn flushall_under_a_running_allocator_fails_closed() {
    let _turn = turn();
    forgotten_under_load("flush", || {
        let _: String = cmd(&base_url(), &["FLUSHALL"]);
    });
}

#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn restart_without_persistence_under_a_running_allocator_fails_closed() {
    let _turn = turn();
    forgotten_under_load("restart", || {
        ctl("kill");
        thread::sleep(Duration::from_millis(200)); // calls fail meanwhile: Unavailable
        ctl("start");
    });
}

/// A restart that loads an RDB snapshot taken before the last allocations brings the hash
/// back with a lower `max_id`. The running allocator refuses it, and so does a process
/// started afterwards (the hash's `run_id` is the old server's). Re-armed as the message
/// says, the key goes on above every ID issued.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn a_restored_snapshot_is_refused_as_rewound() {
    let _turn = turn();
    let store = Arc::new(fresh_store("snapshot"));
    store.create("s", 1, 10).unwrap();
    let hash = store.hash_key("s");
    let allocator = SegmentAllocator::new(store.clone(), config()).unwrap();
    let handle = allocator.key("s").unwrap();
    let mut ids: Vec<u64> = (0..50).map(|_| handle.next_id().unwrap()).collect();
    // dump.rdb in the server's directory. The allocator may still be fetching its next
    // segment, so the snapshot's max_id is known once a SAVE falls between two equal reads.
    let saved = (0..100)
        .find_map(|_| {
            let before: u64 = cmd(&base_url(), &["HGET", &hash, "max_id"]);
            let _: String = cmd(&base_url(), &["SAVE"]);
            let after: u64 = cmd(&base_url(), &["HGET", &hash, "max_id"]);
            (before == after).then_some(after)
        })
        .expect("max_id settles while nothing takes IDs");
    ids.extend((0..200).map(|_| handle.next_id().unwrap()));
    ctl("kill");
    ctl("start");
    let dir: Vec<String> = cmd(&base_url(), &["CONFIG", "GET", "dir"]);
    std::fs::remove_file(Path::new(&dir[1]).join("dump.rdb")).unwrap(); // later restarts: empty
    let restored: u64 = cmd(&base_url(), &["HGET", &hash, "max_id"]);
    assert_eq!(restored, saved, "the snapshot's max_id came back");
    assert!(restored < ids.iter().max().unwrap() + 1);

    let takers = Takers::start(&handle, 2);
    let (more, errors) = takers.finish();
    ids.extend(more);
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "an ID was issued twice");
    assert_rewound(&errors, "s", "restarted or failed over");

    // A process started after the restart: the same refusal, from the hash alone.
    let later =
        RedisStore::connect_accepting_lost_writes(&base_url(), &store.hash_key("")).unwrap();
    let err = later.allocate("s", 10).unwrap_err();
    assert!(
        matches!(&err, SegmentError::Rewound { detail, .. } if detail.contains(&format!("reads {saved} now"))),
        "{err:?}"
    );
    assert_eq!(
        cmd::<u64>(&base_url(), &["HGET", &hash, "max_id"]),
        saved,
        "a refusal changes nothing"
    );

    // The operator's repair, as the message gives it.
    let above = (ids.iter().max().unwrap() + 1).to_string();
    let _: i64 = cmd(&base_url(), &["HSET", &hash, "max_id", &above]);
    let _: i64 = cmd(&base_url(), &["HDEL", &hash, "run_id"]);
    let next = later.allocate("s", 10).unwrap().range;
    assert_eq!(
        next.start.to_string(),
        above,
        "continues above every ID issued"
    );
}

/// A `redis-server` of a test's own, on a Unix socket (or a free TCP port) in a temporary
/// directory that outlives its restarts; killed on drop.
struct OwnRedis {
    dir: tempfile::TempDir,
    port: u16,
    args: Vec<String>,
    child: Option<Child>,
}

impl OwnRedis {
    fn start(tcp: bool, args: &[&str]) -> OwnRedis {
        let port = if tcp {
            let probe = TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        } else {
            0
        };
        let mut own = OwnRedis {
            dir: tempfile::tempdir().unwrap(),
            port,
            args: args.iter().map(|a| a.to_string()).collect(),
            child: None,
        };
        own.restart();
        own
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
    }

    fn restart(&mut self) {
        let dir = self.dir.path();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("--unixsocket")
            .arg(self.socket())
            .arg("--dir")
            .arg(dir)
            .args(["--save", "", "--daemonize", "no"])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (scripts/install-deps.sh installs it)");
        self.child = Some(child);
        let give_up = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = redis::Client::open(self.url())
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if ready.is_ok() {
                return;
            }
            assert!(Instant::now() < give_up, "own redis-server did not start");
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL, as a crash.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Allocates, retrying while the store is unreachable (the first call after a restart
/// finds the old connection broken).
fn allocate_once_up(
    store: &RedisStore,
    key: &str,
    step: u64,
) -> Result<ferroflake_segment::Range, SegmentError> {
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        match store.allocate(key, step) {
            Err(SegmentError::Unavailable { .. }) if Instant::now() < give_up => {
                thread::sleep(Duration::from_millis(20));
            }
            other => return other.map(|a| a.range),
        }
    }
}

/// With `appendonly yes` and `appendfsync always`, a crash loses no write: the restart is
/// let through and the key goes on where it was. A write made while fsync was `everysec`
/// is marked as such in the hash, and the restart after it is refused, even though the
/// server is back on `always`.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn restarts_with_an_fsync_always_aof_are_let_through_and_everysec_is_not() {
    let _turn = turn();
    let mut own = OwnRedis::start(false, &["--appendonly", "yes", "--appendfsync", "always"]);
    let store = RedisStore::connect(&own.url(), "ferroflake:aof:").unwrap();
    store.create("a", 1, 10).unwrap();
    for _ in 0..3 {
        store.allocate("a", 10).unwrap();
    }
    let durable: String = cmd(&own.url(), &["HGET", "ferroflake:aof:a", "durable"]);
    assert_eq!(durable, "1");
    own.kill();
    own.restart();
    assert_eq!(
        allocate_once_up(&store, "a", 10).unwrap().start,
        31,
        "went on after a restart that lost nothing"
    );

    let _: String = cmd(&own.url(), &["CONFIG", "SET", "appendfsync", "everysec"]);
    assert_eq!(store.allocate("a", 10).unwrap().range.start, 41);
    let _: String = cmd(&own.url(), &["CONFIG", "SET", "appendfsync", "always"]);
    own.kill();
    own.restart();
    let err = allocate_once_up(&store, "a", 10).unwrap_err();
    assert!(
        matches!(&err, SegmentError::Rewound { detail, .. } if detail.contains("without fsyncing every write")),
        "{err:?}"
    );
}

/// A replica promoted to primary may not have received the last allocations; its
/// `run_id` differs from the one in the hash, and although both servers fsync every
/// write, a promoted server is refused.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn a_promoted_replica_is_refused() {
    let _turn = turn();
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let primary = OwnRedis::start(true, &aof);
    let replica = OwnRedis::start(false, &aof);
    let store = RedisStore::connect(&primary.url(), "ferroflake:failover:").unwrap();
    store.create("f", 1, 10).unwrap();
    store.allocate("f", 10).unwrap();
    let _: String = cmd(
        &replica.url(),
        &["REPLICAOF", "127.0.0.1", &primary.port.to_string()],
    );
    let give_up = Instant::now() + Duration::from_secs(20);
    while cmd::<Option<String>>(&replica.url(), &["HGET", "ferroflake:failover:f", "max_id"])
        != Some("11".into())
    {
        assert!(Instant::now() < give_up, "the replica never caught up");
        thread::sleep(Duration::from_millis(50));
    }
    let _: String = cmd(&replica.url(), &["REPLICAOF", "NO", "ONE"]);
    let promoted = RedisStore::connect(&replica.url(), "ferroflake:failover:").unwrap();
    let err = promoted.allocate("f", 10).unwrap_err();
    assert!(
        matches!(&err, SegmentError::Rewound { detail, .. }
            if detail.contains("promoted from a replica") && !detail.contains("fsync")),
        "{err:?}"
    );
}

/// Puts the shared server's `maxmemory-policy` back, also when the test fails.
struct PolicyBack;

impl Drop for PolicyBack {
    fn drop(&mut self) {
        let _: String = cmd(
            &base_url(),
            &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
        );
    }
}

/// A Redis that may evict keys is refused at connect and on every allocation, with a
/// message that says what to change; a running allocator stops (no retries).
/// A Redis that may lose writes it acknowledged (the test server runs without an AOF) is
/// refused unless the address accepts that by name; one that fsyncs every write is taken.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn a_redis_that_may_lose_writes_is_refused_unless_accepted() {
    let _turn = turn();
    let err = RedisStore::connect(&base_url(), "ferroflake:volatile:").unwrap_err();
    assert!(
        matches!(&err, SegmentError::InvalidConfig { detail }
            if detail.contains("appendonly no") && detail.contains("accept=lost-writes")),
        "{err:?}"
    );
    let by_name = format!("{}?prefix=volatile&accept=lost-writes", base_url());
    ferroflake_segment_stores::open(Some(&by_name)).expect("accepted by name");
    let refused = format!("{}?prefix=volatile", base_url());
    assert!(matches!(
        ferroflake_segment_stores::open(Some(&refused)),
        Err(SegmentError::InvalidConfig { .. })
    ));
    let everysec = OwnRedis::start(false, &["--appendonly", "yes", "--appendfsync", "everysec"]);
    let err = RedisStore::connect(&everysec.url(), "ferroflake:volatile:").unwrap_err();
    assert!(
        matches!(&err, SegmentError::InvalidConfig { detail } if detail.contains("appendonly yes")),
        "{err:?}"
    );
}

#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn an_evicting_policy_is_refused() {
    let _turn = turn();
    let store = Arc::new(fresh_store("evict"));
    store.create("e", 1, 10).unwrap();
    let allocator = SegmentAllocator::new(store.clone(), config()).unwrap();
    let handle = allocator.key("e").unwrap();
    let _back = PolicyBack;
    for policy in ["allkeys-lru", "volatile-ttl"] {
        let _: String = cmd(&base_url(), &["CONFIG", "SET", "maxmemory-policy", policy]);
        let err = RedisStore::connect(&base_url(), "ferroflake:evict:").unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, SegmentError::InvalidConfig { .. })
                && text.contains(policy)
                && text.contains("noeviction"),
            "{text}"
        );
        assert!(matches!(
            store.allocate("e", 10),
            Err(SegmentError::InvalidConfig { .. })
        ));
        assert!(matches!(
            store.create("other", 1, 10),
            Err(SegmentError::InvalidConfig { .. })
        ));
    }
    let mut last = Ok(0);
    for _ in 0..30 {
        last = handle.next_id();
        if last.is_err() {
            break;
        }
    }
    assert!(
        matches!(last, Err(SegmentError::InvalidConfig { .. })),
        "{last:?}"
    );
    assert_eq!(handle.status().counters.fetch_failures, 1, "not retried");
}

/// A server that stops answering (`CLIENT PAUSE`): the call gives up after the read
/// timeout with `Unavailable`, drops the connection (a late reply must not be taken for
/// the next call's), and the next call after the pause works on a new one. A range the
/// server may have taken without reporting it is skipped, never issued.
#[test]
#[ignore = "needs a Redis server: FERROFLAKE_TEST_REDIS"]
fn a_server_that_stops_answering_is_unavailable_within_the_timeout() {
    let _turn = turn();
    let own = OwnRedis::start(false, &[]);
    let store = RedisStore::connect_accepting_lost_writes(&own.url(), "ferroflake:pause:").unwrap();
    store.create("p", 1, 10).unwrap();
    assert_eq!(store.allocate("p", 10).unwrap().range.start, 1);
    // WRITE: reads (CONFIG GET) go on, the allocation script waits until we unpause (or
    // for 10 s, over three read timeouts). A call that waited for the server would get its
    // answer then and succeed: `Unavailable` itself says it gave up while the server was
    // still silent, however slow this machine is.
    let _: String = cmd(&own.url(), &["CLIENT", "PAUSE", "10000", "WRITE"]);
    let t0 = Instant::now();
    let err = store.allocate("p", 10).unwrap_err();
    let took = t0.elapsed();
    assert!(matches!(err, SegmentError::Unavailable { .. }), "{err:?}");
    assert!(
        took >= Duration::from_millis(2500),
        "gave up after {took:?}, before the read timeout"
    );
    let _: String = cmd(&own.url(), &["CLIENT", "UNPAUSE"]);
    let next = store.allocate("p", 10).unwrap().range;
    assert!(next.start >= 11, "{next:?}");

    // Nothing listens: Unavailable at once, at connect and later.
    let gone = RedisStore::connect("redis+unix:///nonexistent/sock", "x:").unwrap_err();
    assert!(matches!(gone, SegmentError::Unavailable { .. }), "{gone:?}");
}
