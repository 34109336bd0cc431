//! ferroflake on a table that Leaf made, on PostgreSQL and MySQL/MariaDB: the table is
//! created by hand with Leaf's DDL and filled as a Leaf operator would, and ferroflake's
//! ranges continue Leaf's row, interleave with a Leaf server's own allocations and leave
//! the table's shape alone. Then the connection under a store is broken: the server killed
//! and restarted, or frozen with SIGSTOP; calls answer `Unavailable` within their bound and
//! the store heals by itself.
//!
//! Needs the servers of scripts/test-segment-stores.sh, with its `FF_SERVERS_DIR` (to kill
//! and freeze them), hence `#[ignore]`. The tests of this file run one at a time, since
//! some of them take a server away.
#![cfg(all(feature = "postgres", feature = "mysql"))]

mod common;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use ferroflake_segment::{Range, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore};

/// Leaf's DDL for MySQL, as its README gives it.
const LEAF_MYSQL_DDL: &str = "CREATE TABLE `{table}` (
  `biz_tag` varchar(128)  NOT NULL DEFAULT '',
  `max_id` bigint(20) NOT NULL DEFAULT '1',
  `step` int(11) NOT NULL,
  `description` varchar(256)  DEFAULT NULL,
  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`biz_tag`)
) ENGINE=InnoDB";

/// The same table in PostgreSQL's words (no `ON UPDATE`, no display widths).
const LEAF_POSTGRES_DDL: &str = "CREATE TABLE {table} (
  biz_tag varchar(128) NOT NULL DEFAULT '',
  max_id bigint NOT NULL DEFAULT 1,
  step int NOT NULL,
  description varchar(256) DEFAULT NULL,
  update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)";

/// The row a Leaf operator inserts: the first range is `[5000, 7000)`.
const LEAF_ROW: &str = "INSERT INTO {table} (biz_tag, max_id, step, description) \
                        VALUES ('leaf-demo', 5000, 2000, 'inserted by hand, as for Leaf')";

/// What a Leaf server runs to take a range (`SegmentIDGenImpl` via its DAO), in one
/// transaction; the new `max_id` is read back after the commit here.
const LEAF_UPDATE: &str = "UPDATE {table} SET max_id = max_id + step WHERE biz_tag = 'leaf-demo'";

/// One test at a time: some kill or freeze the server the others use.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connection of the plain client, as an operator or a Leaf server has.
enum Raw {
    Postgres(Box<::postgres::Client>),
    Mysql(::mysql::Conn),
}

impl Raw {
    fn connect(backend: &str) -> Raw {
        let url = common::base_url(backend);
        match backend {
            "postgres" => Raw::Postgres(Box::new(
                ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap(),
            )),
            "mysql" => {
                Raw::Mysql(::mysql::Conn::new(::mysql::Opts::from_url(&url).unwrap()).unwrap())
            }
            other => panic!("no plain client for {other}"),
        }
    }

    /// Runs `sql` with `{table}` replaced by `table`.
    fn run(&mut self, sql: &str, table: &str) {
        let sql = sql.replace("{table}", table);
        match self {
            Raw::Postgres(c) => c.batch_execute(&sql).unwrap(),
            Raw::Mysql(c) => ::mysql::prelude::Queryable::query_drop(c, &sql).unwrap(),
        }
    }

    fn max_id(&mut self, table: &str, key: &str) -> i64 {
        let sql = format!("SELECT max_id FROM {table} WHERE biz_tag = '{key}'");
        match self {
            Raw::Postgres(c) => c.query_one(&sql, &[]).unwrap().get(0),
            Raw::Mysql(c) => ::mysql::prelude::Queryable::query_first(c, &sql)
                .unwrap()
                .unwrap(),
        }
    }

    /// The table's definition as the server describes it.
    fn shape(&mut self, table: &str) -> String {
        match self {
            Raw::Postgres(c) => c
                .query(
                    "SELECT column_name::text, data_type::text, character_maximum_length::int, \
                            column_default::text, is_nullable::text \
                     FROM information_schema.columns WHERE table_name::text = $1 \
                     ORDER BY ordinal_position",
                    &[&table],
                )
                .unwrap()
                .iter()
                .map(|r| {
                    let length: Option<i32> = r.get(2);
                    let default: Option<String> = r.get(3);
                    format!(
                        "{} {} {length:?} {default:?} {}",
                        r.get::<_, String>(0),
                        r.get::<_, String>(1),
                        r.get::<_, String>(4)
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Raw::Mysql(c) => {
                let row: (String, String) = ::mysql::prelude::Queryable::query_first(
                    c,
                    format!("SHOW CREATE TABLE {table}"),
                )
                .unwrap()
                .unwrap();
                row.1
            }
        }
    }
}

/// A new table made by hand with Leaf's DDL and Leaf's row in it; returns a plain
/// connection, the table, and the store's address for it.
fn leaf_table(backend: &str) -> (Raw, String, String) {
    let table = common::unique("leaf");
    let mut raw = Raw::connect(backend);
    let ddl = match backend {
        "postgres" => LEAF_POSTGRES_DDL,
        _ => LEAF_MYSQL_DDL,
    };
    raw.run(ddl, &table);
    raw.run(LEAF_ROW, &table);
    let address = format!("{}?table={table}", common::base_url(backend));
    (raw, table, address)
}

fn open(address: &str) -> Arc<dyn SegmentStore> {
    ferroflake_segment_stores::open(Some(address)).unwrap_or_else(|e| panic!("open {address}: {e}"))
}

/// Ranges continue Leaf's row, a Leaf server's allocation in between is respected, the
/// table's step is reported, and the table's shape is left as Leaf made it.
fn ranges_continue_leafs_row(backend: &str) {
    let _one = one_at_a_time();
    let (mut raw, table, address) = leaf_table(backend);
    let shape = raw.shape(&table);
    let store = open(&address);
    let first = store.allocate("leaf-demo", 2000).unwrap();
    assert_eq!(
        first.range,
        Range {
            start: 5000,
            end: 7000
        }
    );
    assert_eq!(first.table_step, 2000);
    let second = store.allocate("leaf-demo", 2000).unwrap();
    assert_eq!(
        second.range,
        Range {
            start: 7000,
            end: 9000
        }
    );
    assert_eq!(
        raw.max_id(&table, "leaf-demo"),
        9000,
        "the row as Leaf reads it"
    );

    // A Leaf server takes [9000, 11000) with its own statement; ferroflake goes on after it.
    raw.run(LEAF_UPDATE, &table);
    let third = store.allocate("leaf-demo", 500).unwrap();
    assert_eq!(
        third.range,
        Range {
            start: 11000,
            end: 11500
        }
    );
    assert_eq!(
        third.table_step, 2000,
        "a custom step leaves the table's step alone"
    );

    assert_eq!(
        raw.shape(&table),
        shape,
        "the store changed the table's definition"
    );
    assert!(matches!(
        store.create("leaf-demo", 1, 10),
        Err(SegmentError::KeyExists { .. })
    ));
}

/// A `SegmentAllocator` on Leaf's row issues 5000, 5001, ... and gives its unissued rest
/// back on shutdown, so that Leaf's next range starts right after the last ID issued.
fn allocator_issues_from_leafs_row(backend: &str) {
    let _one = one_at_a_time();
    let (mut raw, table, address) = leaf_table(backend);
    let allocator = SegmentAllocator::new(open(&address), SegmentConfig::default()).unwrap();
    let demo = allocator.key("leaf-demo").unwrap();
    let ids: Vec<u64> = (0..5).map(|_| demo.next_id().unwrap()).collect();
    assert_eq!(ids, [5000, 5001, 5002, 5003, 5004]);
    assert_eq!(
        raw.max_id(&table, "leaf-demo"),
        7000,
        "one range of the table's step"
    );
    let report = allocator.shutdown();
    assert_eq!(report.given_back, 1995, "{report:?}");
    assert_eq!(raw.max_id(&table, "leaf-demo"), 5005, "the rest went back");
}

/// A table of that name without Leaf's columns is refused when the store opens, with a
/// message that names it, and is left alone.
fn foreign_table_is_refused(backend: &str) {
    let _one = one_at_a_time();
    let table = common::unique("other");
    let mut raw = Raw::connect(backend);
    raw.run(
        "CREATE TABLE {table} (biz_tag varchar(128) PRIMARY KEY, n int)",
        &table,
    );
    let shape = raw.shape(&table);
    let address = format!("{}?table={table}", common::base_url(backend));
    match ferroflake_segment_stores::open(Some(&address)) {
        Err(SegmentError::Store { detail, .. }) => {
            assert!(detail.contains("not Leaf's"), "{detail}")
        }
        Err(other) => panic!("expected a Store error, got {other}"),
        Ok(store) => panic!("a foreign table was taken by {}", store.name()),
    }
    assert_eq!(raw.shape(&table), shape);
}

/// No server at the address: opening the store says so, at once.
#[test]
fn unreachable_server_is_unavailable_at_open() {
    for address in [
        "postgres://postgres@127.0.0.1:1/postgres",
        "mysql://root@127.0.0.1:1/ferroflake",
    ] {
        unavailable_within(Duration::from_secs(4), address, || {
            ferroflake_segment_stores::open(Some(address)).map(|s| s.name().to_owned())
        });
    }
}

/// Calls `f` until it succeeds, at most 40 times a quarter of a second apart.
fn until_ok<T>(what: &str, mut f: impl FnMut() -> Result<T, SegmentError>) -> T {
    let mut last = None;
    for _ in 0..40 {
        match f() {
            Ok(v) => return v,
            Err(e) => last = Some(e),
        }
        thread::sleep(Duration::from_millis(250));
    }
    panic!("{what} did not heal within 10 s: {last:?}");
}

/// Asserts that `f` fails with `Unavailable` within `bound`.
fn unavailable_within<T: std::fmt::Debug>(
    bound: Duration,
    what: &str,
    f: impl FnOnce() -> Result<T, SegmentError>,
) {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    assert!(
        matches!(out, Err(SegmentError::Unavailable { .. })),
        "{what}: expected Unavailable, got {out:?}"
    );
    assert!(took < bound, "{what}: took {took:?}, more than {bound:?}");
}

/// Starts a killed server again when dropped, even if the test failed in between.
struct Killed(&'static str);

impl Drop for Killed {
    fn drop(&mut self) {
        common::ctl("start", self.0);
    }
}

/// The server is killed (SIGKILL) under a connected store and started again: calls answer
/// `Unavailable` while it is down, and the store reconnects by itself afterwards, carrying
/// on above every range it handed out.
fn killed_connection_heals(backend: &'static str) {
    let _one = one_at_a_time();
    let store = open(&common::fresh_address(backend, &std::env::temp_dir()));
    store.create("k", 1, 10).unwrap();
    let before = store.allocate("k", 10).unwrap().range;
    let killed = Killed(backend);
    common::ctl("kill", backend);
    unavailable_within(
        Duration::from_secs(6),
        "allocate on a killed connection",
        || store.allocate("k", 10),
    );
    unavailable_within(
        Duration::from_secs(6),
        "peek while the server is down",
        || store.peek("k"),
    );
    drop(killed); // starts it again
    let after = until_ok("allocate after the restart", || store.allocate("k", 10)).range;
    assert!(after.start >= before.end, "{after:?} overlaps {before:?}");
    assert_eq!(store.peek("k").unwrap().unwrap().max_id, after.end);
}

/// The server's processes, stopped with SIGSTOP (a hung server: the kernel still accepts
/// connections and acknowledges packets, nothing answers) until dropped.
struct Frozen(Vec<u32>);

impl Frozen {
    fn new(backend: &str) -> Frozen {
        let dir = std::env::var("FF_SERVERS_DIR")
            .expect("FF_SERVERS_DIR is not set: run scripts/test-segment-stores.sh");
        let pidfile = format!("{dir}/{backend}.pid");
        let pid: u32 = std::fs::read_to_string(&pidfile)
            .unwrap_or_else(|e| panic!("{pidfile}: {e}"))
            .trim()
            .parse()
            .unwrap();
        let mut pids = vec![pid];
        pids.extend(children(pid));
        signal("-STOP", &pids);
        Frozen(pids)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal("-CONT", &self.0);
    }
}

/// The processes whose parent is `parent` (PostgreSQL's backends and helpers).
fn children(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (name) state ppid ...`; the name may hold spaces and parentheses.
        let after_name = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after_name.split_whitespace().nth(1) == Some(parent.to_string().as_str()) {
            found.push(pid);
        }
    }
    found
}

fn signal(sig: &str, pids: &[u32]) {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    // bash's built-in kill: no procps needed.
    let status = std::process::Command::new("bash")
        .args(["-c", &format!("kill {sig} {}", list.join(" "))])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} {list:?} failed");
}

/// The server hangs (SIGSTOP) under a connected store: each call answers `Unavailable`
/// within its bound instead of waiting for it, and the store heals once the server runs
/// again.
fn frozen_server_is_unavailable_not_a_hang(backend: &'static str) {
    let _one = one_at_a_time();
    let store = open(&common::fresh_address(backend, &std::env::temp_dir()));
    store.create("k", 1, 10).unwrap();
    let before = store.allocate("k", 10).unwrap().range;
    let frozen = Frozen::new(backend);
    unavailable_within(
        Duration::from_secs(8),
        "allocate on a frozen server",
        || store.allocate("k", 10),
    );
    unavailable_within(Duration::from_secs(8), "peek on a frozen server", || {
        store.peek("k")
    });
    drop(frozen);
    let after = until_ok("allocate after the server woke", || store.allocate("k", 10)).range;
    assert!(after.start >= before.end, "{after:?} overlaps {before:?}");
}

/// On Leaf's case-insensitive DDL, a row deleted after use and made again in another
/// spelling (`LEAF-DEMO` after `leaf-demo`) is the same row to the table: its mark,
/// matched as the table matches keys, refuses the create below what it issued.
#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn mysql_marks_match_keys_as_the_table_does() {
    let _one = one_at_a_time();
    let table = common::unique("leaf_ci_marks");
    let mut raw = Raw::connect("mysql");
    raw.run(
        &format!("{LEAF_MYSQL_DDL} DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci"),
        &table,
    );
    raw.run(LEAF_ROW, &table);
    let store = open(&format!("{}?table={table}", common::base_url("mysql")));
    assert_eq!(store.allocate("leaf-demo", 2000).unwrap().range.end, 7000);
    raw.run("DELETE FROM {table} WHERE biz_tag = 'leaf-demo'", &table);
    match store.create("LEAF-DEMO", 1, 10) {
        Err(SegmentError::Rewound { detail, .. }) => assert!(detail.contains("7000"), "{detail}"),
        other => panic!("made again below its mark: {other:?}"),
    }
    assert!(store.peek("LEAF-DEMO").is_err(), "no row was made");
}

/// 300 other spellings of `key` that a case-insensitive, PAD SPACE collation folds onto
/// it: every mix of case, then trailing spaces.
fn spellings(key: &str) -> Vec<String> {
    let letters: Vec<usize> = key
        .char_indices()
        .filter(|(_, c)| c.is_ascii_lowercase())
        .map(|(i, _)| i)
        .collect();
    let mut all = Vec::new();
    for mask in 1u32..(1 << letters.len()) {
        let mut bytes = key.as_bytes().to_vec();
        for (bit, &at) in letters.iter().enumerate() {
            if mask & (1 << bit) != 0 {
                bytes[at] = bytes[at].to_ascii_uppercase();
            }
        }
        all.push(String::from_utf8(bytes).unwrap());
    }
    let mut spaces = 1;
    while all.len() < 300 {
        all.push(format!("{key}{}", " ".repeat(spaces)));
        spaces += 1;
    }
    all.truncate(300);
    all
}

/// On Leaf's DDL with a case-insensitive collation (`utf8_general_ci`), and on the table
/// the store creates (`utf8mb4_bin`, which still ignores trailing spaces), a key names its
/// row only in the row's spelling: every other spelling the collation folds onto it is
/// refused by peek, allocate, create, recover and set_step, and changes nothing in the row.
#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn mysql_refuses_spellings_its_collation_folds_onto_another_row() {
    let _one = one_at_a_time();
    let table = common::unique("leaf_ci");
    let mut raw = Raw::connect("mysql");
    raw.run(
        &format!("{LEAF_MYSQL_DDL} DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci"),
        &table,
    );
    raw.run(LEAF_ROW, &table);
    let store = open(&format!("{}?table={table}", common::base_url("mysql")));
    let others = spellings("leaf-demo");
    assert_eq!(others.len(), 300);
    let folded = |e: SegmentError, spelling: &str, op: &str| match e {
        SegmentError::InvalidKey { key, detail } => {
            assert_eq!(key, spelling, "{op}");
            let row = spelling.trim_end().to_lowercase();
            let named = detail.contains(&format!("{row:?}")) || detail.contains("\"Orders\"");
            assert!(named, "{op} {spelling:?}: {detail}");
        }
        other => panic!("{op} {spelling:?}: {other:?}"),
    };
    for spelling in &others {
        folded(store.peek(spelling).unwrap_err(), spelling, "peek");
        folded(
            store.allocate(spelling, 10).unwrap_err(),
            spelling,
            "allocate",
        );
        folded(
            store.create(spelling, 1, 10).unwrap_err(),
            spelling,
            "create",
        );
        folded(
            store.recover(spelling, 1_000_000, 10).unwrap_err(),
            spelling,
            "recover",
        );
        folded(
            store.set_step(spelling, 7).unwrap_err(),
            spelling,
            "set_step",
        );
    }
    assert_eq!(
        store.peek("leaf-demo").unwrap().unwrap().step,
        2000,
        "the step stays"
    );
    assert_eq!(
        raw.max_id(&table, "leaf-demo"),
        5000,
        "no spelling took an ID"
    );
    let allocator = SegmentAllocator::new(Arc::clone(&store), SegmentConfig::default()).unwrap();
    for spelling in &others[..20] {
        let Err(e) = allocator.key(spelling) else {
            panic!("{spelling:?} opened")
        };
        folded(e, spelling, "open");
    }
    assert!(allocator.status().is_empty(), "no spelling opened a key");
    // The row's own spelling is the key, as before.
    assert_eq!(allocator.key("leaf-demo").unwrap().next_id().unwrap(), 5000);
    assert_eq!(allocator.status().len(), 1);
    drop(allocator);

    // A new key takes the spelling it is created in, and only that one names it.
    store.create("Orders", 1, 10).unwrap();
    folded(
        store.allocate("orders", 10).unwrap_err(),
        "orders",
        "allocate",
    );
    assert!(matches!(
        store.create("ORDERS", 1, 10),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert_eq!(store.allocate("Orders", 10).unwrap().range.start, 1);

    // The table the store creates compares case, but pads trailing spaces.
    let own = open(&common::fresh_address("mysql", std::path::Path::new("/")));
    own.create("k", 1, 10).unwrap();
    own.create("K", 100, 10).unwrap();
    assert!(matches!(
        own.peek("k "),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert!(matches!(
        own.allocate("K  ", 10),
        Err(SegmentError::InvalidKey { .. })
    ));
    assert_eq!(own.allocate("k", 10).unwrap().range.start, 1);
    assert_eq!(own.allocate("K", 10).unwrap().range.start, 100);
}

/// The server's global `sql_mode`, put back when dropped.
struct GlobalSqlMode {
    before: String,
}

impl GlobalSqlMode {
    fn set(mode: &str) -> GlobalSqlMode {
        let mut raw = Raw::connect("mysql");
        let Raw::Mysql(c) = &mut raw else {
            unreachable!()
        };
        let before: String =
            ::mysql::prelude::Queryable::query_first(c, "SELECT @@GLOBAL.sql_mode")
                .unwrap()
                .unwrap();
        raw.run(&format!("SET GLOBAL sql_mode = '{mode}'"), "");
        GlobalSqlMode { before }
    }
}

impl Drop for GlobalSqlMode {
    fn drop(&mut self) {
        Raw::connect("mysql").run(&format!("SET GLOBAL sql_mode = '{}'", self.before), "");
    }
}

/// On Leaf's DDL in the 3-byte `utf8` (`utf8mb3`), a key with a character outside the
/// Basic Multilingual Plane (an emoji) cannot be stored: every store call given one is
/// `InvalidKey` (the caller's input), not the server's collation or string error as a
/// `Store` failure, and nothing is written, with a strict `sql_mode` or without one (where
/// the server would store `?` in the emoji's place). Keys of 3-byte characters still work.
#[test]
#[ignore = "needs the servers of scripts/test-segment-stores.sh"]
fn mysql_utf8mb3_table_refuses_keys_past_the_bmp_as_invalid() {
    let _one = one_at_a_time();
    let table = common::unique("leaf_mb3");
    let mut raw = Raw::connect("mysql");
    raw.run(
        &format!("{LEAF_MYSQL_DDL} DEFAULT CHARSET=utf8 COLLATE=utf8_general_ci"),
        &table,
    );
    raw.run(LEAF_ROW, &table);
    let address = format!("{}?table={table}", common::base_url("mysql"));
    let rows = |raw: &mut Raw| -> Vec<String> {
        let Raw::Mysql(c) = raw else { unreachable!() };
        ::mysql::prelude::Queryable::query(c, format!("SELECT biz_tag FROM {table} ORDER BY 1"))
            .unwrap()
    };
    let emoji = "leaf-demo-\u{1F600}";
    let refused = |e: SegmentError, op: &str| match e {
        SegmentError::InvalidKey { key, detail } => {
            assert_eq!(key, emoji, "{op}");
            assert!(
                detail.contains("U+1F600") && detail.contains("Basic Multilingual Plane"),
                "{op}: {detail}"
            );
        }
        other => panic!("{op}: {other:?}"),
    };
    for strict in [true, false] {
        let _mode = (!strict).then(|| GlobalSqlMode::set(""));
        let store = open(&address); // a new connection, in the server's mode now
        refused(store.peek(emoji).unwrap_err(), "peek");
        refused(store.create(emoji, 1, 10).unwrap_err(), "create");
        refused(store.allocate(emoji, 10).unwrap_err(), "allocate");
        refused(store.recover(emoji, 100, 10).unwrap_err(), "recover");
        refused(store.set_step(emoji, 10).unwrap_err(), "set_step");
        let rest = Range { start: 1, end: 11 };
        refused(store.give_back(emoji, rest, 11).unwrap_err(), "give_back");
        let allocator =
            SegmentAllocator::new(Arc::clone(&store), SegmentConfig::default()).unwrap();
        refused(
            allocator
                .key_or_create(emoji, ferroflake_segment::LIMIT_I64, 1, 10)
                .err()
                .unwrap(),
            "key_or_create",
        );
        assert!(
            allocator.status().is_empty(),
            "strict {strict}: no key opened"
        );
        assert_eq!(
            rows(&mut raw),
            ["leaf-demo"],
            "strict {strict}: no row made"
        );
        assert_eq!(raw.max_id(&table, "leaf-demo"), 5000, "strict {strict}");
    }
    // Characters inside the plane, 3-byte ones included, are keys as before.
    let store = open(&address);
    store.create("\u{8BA2}\u{5355}", 1, 10).unwrap();
    assert_eq!(
        store.allocate("\u{8BA2}\u{5355}", 10).unwrap().range,
        Range { start: 1, end: 11 }
    );
}

macro_rules! server_tests {
    ($($backend:ident),*) => {$(
        mod $backend {
            #[test]
            #[ignore = "needs the servers of scripts/test-segment-stores.sh"]
            fn ranges_continue_leafs_row() {
                super::ranges_continue_leafs_row(stringify!($backend));
            }

            #[test]
            #[ignore = "needs the servers of scripts/test-segment-stores.sh"]
            fn allocator_issues_from_leafs_row() {
                super::allocator_issues_from_leafs_row(stringify!($backend));
            }

            #[test]
            #[ignore = "needs the servers of scripts/test-segment-stores.sh"]
            fn foreign_table_is_refused() {
                super::foreign_table_is_refused(stringify!($backend));
            }

            #[test]
            #[ignore = "needs the servers of scripts/test-segment-stores.sh; kills one"]
            fn killed_connection_heals() {
                super::killed_connection_heals(stringify!($backend));
            }

            #[test]
            #[ignore = "needs the servers of scripts/test-segment-stores.sh; freezes one"]
            fn frozen_server_is_unavailable_not_a_hang() {
                super::frozen_server_is_unavailable_not_a_hang(stringify!($backend));
            }
        }
    )*};
}

server_tests!(postgres, mysql);
