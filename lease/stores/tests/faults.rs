//! Fault tests against each real server, with many `ferroflake-store-probe` processes:
//! 32 racing for 16 ids, 8 × 100,000 IDs merged, a SIGSTOPped holder taken over, the
//! server killed and restarted mid-run, and a first start against nothing.
//!
//! Needs the servers of scripts/test-lease-stores.sh (and its `FF_SERVERS_DIR`, to kill
//! and restart them), hence `#[ignore]`. Run one test at a time (`--test-threads=1`):
//! the restart step takes its server away.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroflake::Layout;

const PROBE: &str = env!("CARGO_BIN_EXE_ferroflake-store-probe");

/// How a backend is driven: its claim TTL and quarantine, and its base address.
struct Backend {
    name: &'static str,
    base: String,
    ttl_ms: u64,
    quarantine_ms: u64,
}

impl Backend {
    fn new(name: &'static str) -> Backend {
        // etcd counts lease TTLs in whole seconds and raises short ones to about 2 s, and
        // its remaining TTL is read rounded down, so a claim counts as expired up to 1 s
        // early: 3 s leaves renewals (every TTL/3) a second of slack with 32 processes on
        // two cores, where 2 s left a third of one.
        let (ttl_ms, quarantine_ms) = if name == "etcd" {
            (3000, 1000)
        } else {
            (1000, 500)
        };
        Backend {
            name,
            base: common::base_url(name),
            ttl_ms,
            quarantine_ms,
        }
    }

    fn fresh_url(&self, tag: &str) -> String {
        common::namespaced(self.name, &self.base, &common::unique(tag))
    }

    /// A probe command on `url` with this backend's timings.
    fn probe(&self, url: &str, node_bits: u32) -> Command {
        let mut cmd = Command::new(PROBE);
        cmd.args(["--lease", url, "--node-bits", &node_bits.to_string()])
            .args(["--ttl-ms", &self.ttl_ms.to_string()])
            .args(["--quarantine-ms", &self.quarantine_ms.to_string()])
            // Every holder here uses this TTL: the lost-records floor is TTL + quarantine.
            .args(["--max-ttl-ms", &self.ttl_ms.to_string()])
            .args(["--skew-ms", "50"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The probe's layout for `node_bits` (41 time bits, Twitter epoch).
fn layout(node_bits: u32) -> Layout {
    Layout::builder(41, node_bits, 22 - node_bits)
        .epoch_ms(Layout::twitter().epoch_ms() as i64)
        .build()
        .unwrap()
}

fn read_ids(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(common::unique(tag));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a finished probe said.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Finished {
    fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
    fn nodes(&self) -> Vec<u64> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix("node=")?.split(' ').next()?.parse().ok())
            .collect()
    }
}

/// Waits for `child` at most `limit`, killing it (and failing) if it overruns.
fn finish(mut child: Child, limit: Duration, what: &str) -> Finished {
    let until = Instant::now() + limit;
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Finished {
                status: out.status,
                stdout: String::from_utf8_lossy(&out.stdout).into(),
                stderr: String::from_utf8_lossy(&out.stderr).into(),
            };
        }
        if Instant::now() > until {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} did not finish within {limit:?}; stdout: {} stderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn ctl(command: &str, backend: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/servers/ctl.sh");
    let status = Command::new("bash")
        .arg(script)
        .args([command, backend])
        .status()
        .unwrap();
    assert!(status.success(), "ctl.sh {command} {backend} failed");
}

fn signal(child: &Child, sig: &str) {
    // bash's built-in kill: no procps needed.
    let status = Command::new("bash")
        .args(["-c", &format!("kill {sig} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success(), "kill {sig} failed");
}

/// Sorted IDs with no repeats, or a panic naming the first duplicate.
fn assert_unique(all: &mut [u64], layout: &Layout) {
    all.sort_unstable();
    if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
        panic!("duplicate ID {} = {:?}", w[0], layout.decode(w[0]));
    }
}

/// 1. 32 processes race for 16 ids: exactly 16 win, each a different id.
fn race(b: &Backend) {
    let url = b.fresh_url("race");
    let answered = scratch("race");
    let start_at = wall_ms() + 2500;
    let children: Vec<Child> = (0..32)
        .map(|_| {
            b.probe(&url, 4)
                .args(["race", "--start-at-ms", &start_at.to_string()])
                .args([
                    "--answered-dir",
                    answered.to_str().unwrap(),
                    "--racers",
                    "32",
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    let results: Vec<Finished> = children
        .into_iter()
        .map(|c| finish(c, Duration::from_secs(90), "racer"))
        .collect();
    let winners: Vec<&Finished> = results.iter().filter(|r| r.code() == 0).collect();
    let nodes: BTreeSet<u64> = winners.iter().flat_map(|r| r.nodes()).collect();
    for r in &results {
        assert!(
            r.code() == 0 || (r.code() == 3 && r.stderr.contains("node ids are leased")),
            "{}: a racer neither won nor found all ids taken: code {} stderr {}",
            b.name,
            r.code(),
            r.stderr
        );
    }
    assert_eq!(
        winners.len(),
        16,
        "{}: exactly 16 of 32 racers must win",
        b.name
    );
    assert_eq!(
        nodes,
        (0..16).collect(),
        "{}: the 16 winners must hold ids 0..16",
        b.name
    );
    println!("{}: race: 16 of 32 won, ids 0..16 once each", b.name);
}

/// 2. 8 processes × 100,000 IDs, merged: no duplicates.
fn merged(b: &Backend) {
    let url = b.fresh_url("merge");
    let dir = scratch("merge");
    let children: Vec<(Child, PathBuf)> = (0..8)
        .map(|i| {
            let out = dir.join(format!("{i}.ids"));
            let child = b
                .probe(&url, 10)
                .args(["issue", "--count", "100000", "--out", out.to_str().unwrap()])
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut all = Vec::new();
    let mut nodes = BTreeSet::new();
    for (child, out) in children {
        let r = finish(child, Duration::from_secs(60), "issuer");
        assert_eq!(r.code(), 0, "{}: an issuer failed: {}", b.name, r.stderr);
        nodes.extend(r.nodes());
        let ids = read_ids(&out);
        assert_eq!(
            ids.len(),
            100_000,
            "{}: an issuer wrote {} IDs",
            b.name,
            ids.len()
        );
        all.extend(ids);
    }
    assert_unique(&mut all, &layout(10));
    assert_eq!(all.len(), 800_000);
    std::fs::remove_dir_all(&dir).ok();
    // An issuer that finishes early releases its id, and a later one may take it over
    // (after the carried high-water mark): fewer distinct ids than processes is fine.
    println!(
        "{}: merged: 800000 IDs from 8 processes on {} node id(s), 0 duplicates",
        b.name,
        nodes.len()
    );
}

/// 3. A holder SIGSTOPped past its TTL issues nothing after its deadline; its id is
///    taken over; no duplicates.
fn stopped_holder(b: &Backend) {
    let url = b.fresh_url("stop");
    let dir = scratch("stop");
    let layout = layout(0); // one node id, so the takeover must take the stopped holder's
    let (old_out, new_out) = (dir.join("old.ids"), dir.join("new.ids"));
    let mut old = b
        .probe(&url, 0)
        .args([
            "issue",
            "--run-ms",
            "120000",
            "--per-ms",
            "20",
            "--out",
            old_out.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    BufReader::new(old.stdout.as_mut().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    assert!(
        first_line.starts_with("node=0"),
        "{}: the first holder did not start: {first_line:?}",
        b.name
    );
    thread::sleep(Duration::from_millis(700));
    signal(&old, "-STOP");
    let stopped_at = wall_ms();
    thread::sleep(Duration::from_millis(b.ttl_ms + b.quarantine_ms + 300));
    // The id frees when the store notices the TTL + quarantine passed (etcd sweeps leases
    // every 500 ms); retry the takeover a few times.
    let mut attempts = 0;
    let taker = loop {
        attempts += 1;
        let r = finish(
            b.probe(&url, 0)
                .args([
                    "issue",
                    "--count",
                    "20000",
                    "--per-ms",
                    "20",
                    "--out",
                    new_out.to_str().unwrap(),
                ])
                .spawn()
                .unwrap(),
            Duration::from_secs(30),
            "taker",
        );
        if r.code() == 3 && attempts < 20 {
            thread::sleep(Duration::from_millis(250));
            continue;
        }
        break r;
    };
    assert_eq!(
        taker.code(),
        0,
        "{}: the takeover failed: {}",
        b.name,
        taker.stderr
    );
    assert_eq!(taker.nodes(), vec![0]);
    signal(&old, "-CONT");
    let old = finish(old, Duration::from_secs(30), "stopped holder");
    assert_eq!(
        old.code(),
        4,
        "{}: the stopped holder must find its lease lost: {}",
        b.name,
        old.stderr
    );
    let old_ids = read_ids(&old_out);
    let new_ids = read_ids(&new_out);
    assert!(!old_ids.is_empty() && new_ids.len() == 20_000);
    let stamp = |id: &u64| layout.decode(*id).unwrap().timestamp_ms;
    let old_last = old_ids.iter().map(stamp).max().unwrap();
    let new_first = new_ids.iter().map(stamp).min().unwrap();
    // Its deadline was at most TTL after its last renewal, which came before the stop.
    assert!(
        old_last <= stopped_at + b.ttl_ms,
        "{}: the stopped holder issued at {old_last}, past its deadline (stopped at {stopped_at}, TTL {} ms)",
        b.name,
        b.ttl_ms
    );
    assert!(
        new_first > old_last,
        "{}: the new holder must start after the old one's last ID",
        b.name
    );
    let mut all = [old_ids, new_ids].concat();
    assert_unique(&mut all, &layout);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "{}: stopped holder: last ID {} ms after the stop, taken over after {attempts} attempt(s), 0 duplicates",
        b.name,
        old_last as i64 - stopped_at as i64
    );
}

/// 4. The server is killed and restarted mid-run: holders stop at their deadlines, then
///    every holder recovers and issues again after the restart (past the floor where the
///    store forgot its marks); no duplicates.
fn server_restart(b: &Backend) {
    let url = b.fresh_url("restart");
    let dir = scratch("restart");
    let outs: Vec<PathBuf> = (0..8).map(|i| dir.join(format!("{i}.ids"))).collect();
    let children: Vec<Child> = outs
        .iter()
        .map(|out| {
            b.probe(&url, 10)
                .args([
                    "issue",
                    "--run-ms",
                    "14000",
                    "--per-ms",
                    "10",
                    "--reacquire",
                ])
                .args(["--give-up-ms", "25000", "--out", out.to_str().unwrap()])
                .spawn()
                .unwrap()
        })
        .collect();
    // Every holder must be past its start (a new namespace's floor, TTL + quarantine).
    thread::sleep(Duration::from_millis(
        (b.ttl_ms + b.quarantine_ms + 2000).max(4000),
    ));
    let killed_at = wall_ms();
    ctl("kill", b.name);
    thread::sleep(Duration::from_millis(b.ttl_ms + 1500));
    let restart_from = wall_ms();
    ctl("start", b.name);
    let results: Vec<Finished> = children
        .into_iter()
        .map(|c| finish(c, Duration::from_secs(90), "issuer"))
        .collect();
    let layout = layout(10);
    let mut all = Vec::new();
    let mut recovered = 0;
    let mut issued_after = 0usize;
    for (i, (r, out)) in results.iter().zip(&outs).enumerate() {
        // Exit 0 only says the run time ran out (a holder still fenced then exits 0 too);
        // recovery is checked below, on the IDs issued after the restart.
        assert_eq!(
            r.code(),
            0,
            "{}: holder {i} did not run to its end: stdout {} stderr {}",
            b.name,
            r.stdout,
            r.stderr
        );
        let ids = read_ids(out);
        // While the server was down, nothing may be issued past the deadlines (last
        // renewal, at most the kill, + TTL).
        let by_ms: BTreeMap<u64, usize> = ids.iter().fold(BTreeMap::new(), |mut m, id| {
            *m.entry(layout.decode(*id).unwrap().timestamp_ms)
                .or_default() += 1;
            m
        });
        // Redis forgot every mark, so new holders must also wait out the floor: its start
        // (after `restart_from`) + TTL + quarantine.
        let quiet_until = if b.name == "redis" {
            restart_from + b.ttl_ms + b.quarantine_ms
        } else {
            restart_from
        };
        let in_outage: usize = by_ms
            .range(killed_at + b.ttl_ms + 1..quiet_until)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(
            in_outage, 0,
            "{}: {in_outage} IDs issued between the deadline after the kill and {quiet_until}",
            b.name
        );
        let mine_after: usize = by_ms.range(quiet_until..).map(|(_, n)| n).sum();
        assert!(
            mine_after > 0,
            "{}: holder {i} issued nothing after the restart (from {quiet_until}): \
             stdout {} stderr {}",
            b.name,
            r.stdout,
            r.stderr
        );
        recovered += 1;
        issued_after += mine_after;
        all.extend(ids);
    }
    assert_unique(&mut all, &layout);
    let lost: usize = results
        .iter()
        .map(|r| r.stdout.matches("lost node=").count())
        .sum();
    if b.name == "redis" {
        // The test Redis keeps nothing across a restart: every claim is gone, so every
        // holder must learn that its lease is lost (and re-acquire, past the floor).
        assert_eq!(
            lost, 8,
            "redis: all 8 claims vanished with the restart, but {lost} holders noticed"
        );
    }
    assert_eq!(recovered, 8, "{}: not every holder recovered", b.name);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "{}: restart: {recovered}/8 holders recovered ({lost} lease(s) lost and re-acquired), \
         {} IDs, {issued_after} after the restart, 0 in the outage, 0 duplicates",
        b.name,
        all.len()
    );
}

/// 5. The first start against a server that is not there fails at once, clearly.
fn unreachable(b: &Backend) {
    let url = match b.name {
        "etcd" => "etcd://127.0.0.1:1",
        "redis" => "redis://127.0.0.1:1/0",
        "zookeeper" => "zk://127.0.0.1:1",
        _ => "postgres://postgres@127.0.0.1:1/postgres",
    };
    let began = Instant::now();
    let r = finish(
        b.probe(url, 10)
            .args(["issue", "--count", "1", "--out", "/dev/null"])
            .spawn()
            .unwrap(),
        Duration::from_secs(20),
        "probe against nothing",
    );
    assert_eq!(
        r.code(),
        2,
        "{}: expected a start failure: {}",
        b.name,
        r.stderr
    );
    assert!(
        r.stderr.contains("registry unreachable"),
        "{}: the error must say the registry is unreachable: {}",
        b.name,
        r.stderr
    );
    assert!(r.nodes().is_empty());
    println!(
        "{}: unreachable: exit 2 after {:?}: {}",
        b.name,
        began.elapsed(),
        r.stderr.trim()
    );
}

/// How a test loses a namespace's records from outside.
#[derive(Debug, Clone, Copy)]
enum Loss {
    /// `etcdctl del --prefix`, Redis `FLUSHALL`, a recursive ZooKeeper delete, PostgreSQL
    /// `DELETE FROM`.
    Delete,
    /// PostgreSQL `TRUNCATE`.
    Truncate,
    /// PostgreSQL `DROP TABLE`.
    Drop,
    /// The server killed, its data directory wiped, and started again.
    WipedRestart,
}

fn lose(b: &Backend, url: &str, how: Loss) {
    let psql = |sql: String| {
        let ferroflake_lease_stores::StoreAddress::Postgres { url, table } =
            ferroflake_lease_stores::StoreAddress::parse(url).unwrap()
        else {
            unreachable!()
        };
        let sql = sql.replace("{t}", &table);
        let ok = Command::new("psql")
            .args([&url, "-qc", &sql])
            .status()
            .unwrap();
        assert!(ok.success(), "psql {sql} failed");
    };
    match (how, b.name) {
        (Loss::Delete, "redis") => {
            let ok = Command::new("redis-cli")
                .args(["-u", &b.base, "FLUSHALL"])
                .status()
                .unwrap();
            assert!(ok.success(), "FLUSHALL failed");
        }
        (Loss::Delete, "postgres") => psql("DELETE FROM {t}".into()),
        (Loss::Delete, _) => common::lose_records(b.name, url),
        (Loss::Truncate, _) => psql("TRUNCATE {t}".into()),
        (Loss::Drop, _) => psql("DROP TABLE {t}".into()),
        (Loss::WipedRestart, name) => {
            ctl("kill", name);
            let dir = std::env::var("FF_SERVERS_DIR").expect("FF_SERVERS_DIR");
            let data = Path::new(&dir).join(name);
            if name == "postgres" {
                // initdb wants the directory itself; ctl.sh makes it again.
                std::fs::remove_dir_all(&data).unwrap();
            } else {
                for entry in std::fs::read_dir(&data).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        std::fs::remove_dir_all(&path).unwrap();
                    } else {
                        std::fs::remove_file(&path).unwrap();
                    }
                }
            }
            ctl("start", name);
        }
    }
}

/// 6. The records vanish while holder A issues on the only id: holder B, started at
///    once, gets the id but issues nothing A issued, and A stops with a clear loss.
fn records_lost(b: &Backend, how: Loss) {
    let url = b.fresh_url("lost");
    let dir = scratch("lost");
    let layout = layout(0);
    let (a_out, b_out) = (dir.join("a.ids"), dir.join("b.ids"));
    let mut a = b
        .probe(&url, 0)
        .args(["issue", "--run-ms", "30000", "--per-ms", "20"])
        .args(["--give-up-ms", "20000", "--out", a_out.to_str().unwrap()])
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    BufReader::new(a.stdout.as_mut().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    assert!(
        first_line.starts_with("node=0"),
        "{}: holder A did not start: {first_line:?}",
        b.name
    );
    thread::sleep(Duration::from_millis(b.ttl_ms / 2));
    lose(b, &url, how);
    let new = finish(
        b.probe(&url, 0)
            .args(["issue", "--count", "20000", "--per-ms", "20"])
            .args(["--out", b_out.to_str().unwrap()])
            .spawn()
            .unwrap(),
        Duration::from_secs(60),
        "holder B",
    );
    assert_eq!(
        new.code(),
        0,
        "{} {how:?}: holder B failed: {}",
        b.name,
        new.stderr
    );
    assert_eq!(
        new.nodes(),
        vec![0],
        "{} {how:?}: B must get A's id",
        b.name
    );
    let old = finish(a, Duration::from_secs(60), "holder A");
    assert_eq!(
        old.code(),
        4,
        "{} {how:?}: holder A must stop with its lease lost: code {} stderr {}",
        b.name,
        old.code(),
        old.stderr
    );
    assert!(
        old.stderr.contains("lost: ") && old.stderr.contains("was lost"),
        "{} {how:?}: A's error must say the lease was lost: {}",
        b.name,
        old.stderr
    );
    let (a_ids, b_ids) = (read_ids(&a_out), read_ids(&b_out));
    assert!(!a_ids.is_empty() && b_ids.len() == 20_000);
    let a_set: BTreeSet<u64> = a_ids.iter().copied().collect();
    let shared = b_ids.iter().filter(|id| a_set.contains(id)).count();
    assert_eq!(
        shared, 0,
        "{} {how:?}: {shared} of B's IDs were also issued by A",
        b.name
    );
    let mut all = [a_ids.clone(), b_ids].concat();
    assert_unique(&mut all, &layout);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "{}: records lost ({how:?}): A issued {} IDs and stopped (lost), B issued 20000, 0 in common",
        b.name,
        a_ids.len()
    );
}

/// 7. A Redis that may evict keys is refused, clearly.
fn evicting_redis_refused(b: &Backend) {
    let config = |args: &[&str]| {
        let ok = Command::new("redis-cli")
            .args(["-u", &b.base, "CONFIG", "SET"])
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "CONFIG SET {args:?} failed");
    };
    config(&["maxmemory", "100mb"]);
    config(&["maxmemory-policy", "allkeys-lru"]);
    let r = finish(
        b.probe(&b.fresh_url("evict"), 4)
            .args(["issue", "--count", "1", "--out", "/dev/null"])
            .spawn()
            .unwrap(),
        Duration::from_secs(20),
        "probe against an evicting Redis",
    );
    config(&["maxmemory", "0"]);
    config(&["maxmemory-policy", "noeviction"]);
    assert_eq!(
        r.code(),
        2,
        "redis: an evicting Redis must be refused: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("noeviction"),
        "redis: the refusal must name noeviction: {}",
        r.stderr
    );
    println!("redis: evicting Redis refused: {}", r.stderr.trim());
}

fn all_faults(name: &'static str) {
    let backend = Backend::new(name);
    race(&backend);
    merged(&backend);
    stopped_holder(&backend);
    server_restart(&backend);
    unreachable(&backend);
    let losses: &[Loss] = match name {
        "postgres" => &[Loss::Delete, Loss::Truncate, Loss::Drop, Loss::WipedRestart],
        "redis" => &[Loss::Delete, Loss::WipedRestart],
        _ => &[Loss::Delete, Loss::WipedRestart],
    };
    for how in losses {
        records_lost(&backend, *how);
    }
    if name == "redis" {
        evicting_redis_refused(&backend);
    }
}

#[test]
#[ignore = "needs the servers of scripts/test-lease-stores.sh"]
fn etcd_faults() {
    all_faults("etcd");
}

#[test]
#[ignore = "needs the servers of scripts/test-lease-stores.sh"]
fn redis_faults() {
    all_faults("redis");
}

#[test]
#[ignore = "needs the servers of scripts/test-lease-stores.sh"]
fn zookeeper_faults() {
    all_faults("zookeeper");
}

#[test]
#[ignore = "needs the servers of scripts/test-lease-stores.sh"]
fn postgres_faults() {
    all_faults("postgres");
}
