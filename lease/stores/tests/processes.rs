//! One multi-process suite, run against every registry by its address: many
//! `ferroflake-lease-probe` processes racing for ids, issuing side by side and handing ids
//! over, a holder stopped with SIGSTOP past its TTL, and, where they apply, a server
//! killed and restarted mid-run, a first start against nothing, an evicting Redis, and a
//! wall clock stepped forward (libfaketime). Faults of the registry's records under a
//! live holder are the fault suite's (tests/faults.rs).
//!
//! The embedded registry (a private temporary directory) needs nothing and always runs.
//! The server tests need the servers of scripts/test-lease-stores.sh (and its
//! `FF_SERVERS_DIR`, to kill and restart them), hence `#[ignore]`; run them one at a time
//! (`--ignored --test-threads=1`): some take their server away.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::probes::*;
use common::strikes::ctl;

/// Checks one issuer's run: it finished, leased one node id, and wrote `count` strictly
/// increasing IDs of that node. Returns the node id and the IDs.
fn check_issuer(
    b: &Backend,
    r: &Finished,
    out: &Path,
    count: usize,
    node_bits: u32,
) -> (u64, Vec<u64>) {
    assert_eq!(r.code(), 0, "{}: an issuer failed: {}", b.name, r.stderr);
    let nodes = r.nodes();
    assert_eq!(
        nodes.len(),
        1,
        "{}: one lease per issuer: {}",
        b.name,
        r.stdout
    );
    let ids = read_ids(out);
    assert_eq!(
        ids.len(),
        count,
        "{}: an issuer wrote {} IDs",
        b.name,
        ids.len()
    );
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "{}: each process's IDs increase",
        b.name
    );
    let layout = layout(node_bits);
    assert!(
        ids.iter()
            .all(|&id| layout.decode(id).unwrap().node == nodes[0]),
        "{}: every ID carries the issuer's node id",
        b.name
    );
    (nodes[0], ids)
}

/// 32 processes race for 16 ids: exactly 16 win, each a different id, and the other 16
/// are told that every id is leased.
fn race(b: &Backend) {
    let address = b.fresh_address("race");
    let answered = scratch("race");
    let start_at = wall_ms() + 2500;
    let children: Vec<Child> = (0..32)
        .map(|_| {
            b.probe(&address, 4)
                .args(["race", "--start-at-ms", &start_at.to_string()])
                .args(["--answered-dir", answered.to_str().unwrap()])
                .args(["--racers", "32"])
                .spawn()
                .unwrap()
        })
        .collect();
    let results = finish_all(children, Duration::from_secs(90), "racer");
    let winners: Vec<&Finished> = results.iter().filter(|r| r.code() == 0).collect();
    let won: Vec<u64> = winners.iter().flat_map(|r| r.nodes()).collect();
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
    assert_eq!(won.len(), 16, "{}: one id per winner: {won:?}", b.name);
    assert_eq!(
        won.iter().copied().collect::<BTreeSet<_>>(),
        (0..16).collect(),
        "{}: the 16 winners must hold ids 0..16",
        b.name
    );
    std::fs::remove_dir_all(&answered).ok();
    println!("{}: race: 16 of 32 won, ids 0..16 once each", b.name);
}

/// Runs 8 issuers of 100,000 IDs each on `address` (`node_bits` of node id; `extra`
/// arguments for each), checks each one's IDs, and that the 800,000 of them merged hold no
/// duplicate. Returns the node ids the issuers held.
fn eight_issuers(
    b: &Backend,
    address: &str,
    tag: &str,
    node_bits: u32,
    extra: &[&str],
) -> BTreeSet<u64> {
    let dir = scratch(tag);
    let outs: Vec<PathBuf> = (0..8).map(|i| dir.join(format!("{i}.ids"))).collect();
    let children: Vec<Child> = outs
        .iter()
        .map(|out| {
            b.probe(address, node_bits)
                .args(["issue", "--count", "100000", "--out", out.to_str().unwrap()])
                .args(extra)
                .spawn()
                .unwrap()
        })
        .collect();
    let results = finish_all(children, Duration::from_secs(120), "issuer");
    let mut all = Vec::new();
    let mut nodes = BTreeSet::new();
    for (r, out) in results.iter().zip(&outs) {
        let (node, ids) = check_issuer(b, r, out, 100_000, node_bits);
        nodes.insert(node);
        all.extend(ids);
    }
    assert_unique(&mut all, &layout(node_bits));
    assert_eq!(
        all.len(),
        800_000,
        "{}: 0 duplicates across 8 processes",
        b.name
    );
    std::fs::remove_dir_all(&dir).ok();
    nodes
}

/// 8 processes hold 8 different ids at once, then issue 100,000 IDs each: merged, no
/// duplicates.
fn merged(b: &Backend) {
    let address = b.fresh_address("merge");
    let together = scratch("merge-together");
    let wait_for_all = [
        "--together-dir",
        together.to_str().unwrap(),
        "--together",
        "8",
    ];
    let nodes = eight_issuers(b, &address, "merge", 10, &wait_for_all);
    assert_eq!(
        nodes.len(),
        8,
        "{}: 8 processes holding leases at once hold 8 ids: {nodes:?}",
        b.name
    );
    std::fs::remove_dir_all(&together).ok();
    println!(
        "{}: merged: 800000 IDs from 8 processes on 8 node ids, 0 duplicates",
        b.name
    );
}

/// 8 processes share 4 ids, 100,000 IDs each: ids are handed over, each new holder
/// starting past the previous holder's high-water mark; no duplicates.
fn handover(b: &Backend) {
    let address = b.fresh_address("handover");
    let nodes = eight_issuers(b, &address, "handover", 2, &["--acquire-retry-ms", "60000"]);
    assert!(
        nodes.iter().all(|n| *n < 4),
        "{}: node ids {nodes:?}",
        b.name
    );
    println!(
        "{}: handover: 800000 IDs from 8 processes on 4 node ids, 0 duplicates",
        b.name
    );
}

/// A holder SIGSTOPped past its TTL issues nothing after its deadline; its id is taken
/// over; after SIGCONT it is refused, learns that its lease is lost, and issues nothing
/// more. On the embedded registry the registry's lock is held while it resumes, so that
/// only its own fence can stop it.
fn stopped_holder(b: &Backend) {
    let address = b.fresh_address("stop");
    let dir = scratch("stop");
    let layout = layout(0); // one node id, so the takeover must take the stopped holder's
    let (old_out, new_out) = (dir.join("old.ids"), dir.join("new.ids"));
    let mut old = b
        .probe(&address, 0)
        .args(["issue", "--run-ms", "120000", "--per-ms", "20"])
        .args(["--out", old_out.to_str().unwrap()])
        .spawn()
        .unwrap();
    started_on_node_0(&mut old, &format!("{}: the first holder", b.name));
    thread::sleep(Duration::from_millis(700));
    stop_outside_registry_lock(&old, &address);
    let stopped_at = wall_ms();
    thread::sleep(Duration::from_millis(b.ttl_ms + b.quarantine_ms + 300));
    // The id frees once the registry sees TTL + quarantine passed (etcd sweeps leases
    // every 500 ms): the taker keeps trying for a while.
    let taker = finish(
        b.probe(&address, 0)
            .args(["issue", "--count", "20000", "--per-ms", "20"])
            .args(["--acquire-retry-ms", "10000"])
            .args(["--out", new_out.to_str().unwrap()])
            .spawn()
            .unwrap(),
        Duration::from_secs(30),
        "taker",
    );
    assert_eq!(
        taker.code(),
        0,
        "{}: the takeover failed: {}",
        b.name,
        taker.stderr
    );
    assert_eq!(
        taker.nodes(),
        vec![0],
        "{}: the stopped holder's id went to the taker",
        b.name
    );
    // The embedded registry's lock, held while the holder resumes: its renewals cannot
    // learn that the lease is lost.
    let lock = b.is_embedded().then(|| {
        let lock = std::fs::File::open(Path::new(&address).join("leases.lock")).unwrap();
        lock.lock().unwrap();
        lock
    });
    let continued_at = wall_ms();
    signal(&old, "-CONT");
    if let Some(lock) = lock {
        thread::sleep(Duration::from_millis(400));
        assert!(
            old.try_wait().unwrap().is_none(),
            "without the registry, the holder cannot know it lost"
        );
        drop(lock);
    }
    let old = finish(old, Duration::from_secs(30), "stopped holder");
    assert_eq!(
        old.code(),
        4,
        "{}: the stopped holder must find its lease lost: {}",
        b.name,
        old.stderr
    );
    assert!(
        said(&old.stdout, |l| l.starts_with("refused ")),
        "{}: after SIGCONT the stopped holder is refused:\n{}",
        b.name,
        old.stdout
    );
    assert!(
        said(&old.stdout, |l| l == "lost node=0"),
        "{}: and learns that its lease is lost:\n{}",
        b.name,
        old.stdout
    );
    let old_ids = read_ids(&old_out);
    let new_ids = read_ids(&new_out);
    assert!(!old_ids.is_empty() && new_ids.len() == 20_000);
    let stamp = |id: &u64| layout.decode(*id).unwrap().timestamp_ms;
    let after_cont = old_ids
        .iter()
        .filter(|id| stamp(id) >= continued_at)
        .count();
    assert_eq!(
        after_cont, 0,
        "{}: the stopped holder issued {after_cont} IDs after SIGCONT",
        b.name
    );
    let old_last = old_ids.iter().map(stamp).max().unwrap();
    let new_first = new_ids.iter().map(stamp).min().unwrap();
    // Its deadline was at most TTL after its last renewal, which came before the stop.
    assert!(
        old_last < stopped_at + b.ttl_ms,
        "{}: the stopped holder issued at {old_last}, past its deadline (stopped at {stopped_at}, TTL {} ms)",
        b.name,
        b.ttl_ms
    );
    assert!(
        new_first > old_last,
        "{}: the new holder must start after the old one's last ID",
        b.name
    );
    assert!(new_ids.iter().min() > old_ids.iter().max());
    let mut all = [old_ids, new_ids].concat();
    assert_unique(&mut all, &layout);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "{}: stopped holder: last ID {} ms after the stop, taken over, 0 duplicates",
        b.name,
        old_last as i64 - stopped_at as i64
    );
}

/// The server is killed and restarted mid-run: holders stop at their deadlines, then
/// every holder recovers and issues again after the restart (past the floor where the
/// store forgot its marks); no duplicates.
fn server_restart(b: &Backend) {
    let address = b.fresh_address("restart");
    let dir = scratch("restart");
    let outs: Vec<PathBuf> = (0..8).map(|i| dir.join(format!("{i}.ids"))).collect();
    let children: Vec<Child> = outs
        .iter()
        .map(|out| {
            b.probe(&address, 10)
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
    // Every holder must be past its start (a new namespace's floor, TTL + quarantine):
    // each has issued (its IDs file grows as it issues).
    wait_for("every holder to issue", Duration::from_secs(60), || {
        outs.iter().all(|out| !read_ids(out).is_empty())
    });
    let killed_at = wall_ms();
    ctl("kill", b.name);
    thread::sleep(Duration::from_millis(b.ttl_ms + 1500));
    let restart_from = wall_ms();
    ctl("start", b.name);
    let results = finish_all(children, Duration::from_secs(90), "issuer");
    let layout = layout(10);
    let mut all = Vec::new();
    let mut recovered = 0;
    let mut issued_after = 0usize;
    for (i, (r, out)) in results.iter().zip(&outs).enumerate() {
        // Exit 0 only says the run time ran out (a holder still refused then exits 0
        // too); recovery is checked below, on the IDs issued after the restart.
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

/// The first start against a server that is not there fails at once, clearly.
fn unreachable(b: &Backend) {
    let address = match b.name {
        "etcd" => "etcd://127.0.0.1:1",
        "redis" => "redis://127.0.0.1:1/0",
        "zookeeper" => "zk://127.0.0.1:1",
        _ => "postgres://postgres@127.0.0.1:1/postgres",
    };
    let began = Instant::now();
    let r = finish(
        b.probe(address, 10)
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

/// A Redis that may evict keys is refused, clearly.
fn evicting_redis_refused(b: &Backend) {
    let config = |args: &[&str]| {
        let ok = Command::new("redis-cli")
            .args(["-u", b.base(), "CONFIG", "SET"])
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success(), "CONFIG SET {args:?} failed");
    };
    config(&["maxmemory", "100mb"]);
    config(&["maxmemory-policy", "allkeys-lru"]);
    let r = finish(
        b.probe(&b.fresh_address("evict"), 4)
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

/// A holder's wall clock steps 30 s forward (under libfaketime), far from the registry's:
/// the next renewal finds the clocks apart, and the holder stops issuing and says why,
/// rather than issue on a clock the protocol's safety no longer covers. No ID carries the
/// stepped clock: the step passes the fence at once, and the renewal it asks for is the
/// one that finds the clocks apart. This runs on the embedded registry, whose clock (the
/// kernel's, read without the C library) libfaketime does not fake.
fn wall_clock_step(b: &Backend) {
    let faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    assert!(
        Path::new(faketime).exists(),
        "libfaketime is missing: run scripts/install-deps.sh"
    );
    let address = b.fresh_address("step");
    let dir = scratch("step");
    let (offset, out) = (dir.join("offset"), dir.join("ids"));
    std::fs::write(&offset, "+0\n").unwrap();
    let mut holder = b
        .probe(&address, 0)
        .args(["issue", "--run-ms", "20000", "--per-ms", "1"])
        .args(["--give-up-ms", "2000"])
        .args(["--out", out.to_str().unwrap()])
        .env("LD_PRELOAD", faketime)
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .spawn()
        .unwrap();
    started_on_node_0(&mut holder, "the holder");
    wait_for("the holder to issue", Duration::from_secs(20), || {
        read_ids(&out).len() > 500
    });
    let stepped_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    std::fs::write(&offset, "+30\n").unwrap();
    let r = finish(holder, Duration::from_secs(30), "the holder");
    assert_eq!(
        r.code(),
        5,
        "the holder must stop issuing on a clock 30 s ahead of the registry's (it ran its \
         20 s, issuing {} IDs): {}{}",
        read_ids(&out).len(),
        r.stdout,
        r.stderr
    );
    assert!(
        r.stdout.contains("refused")
            && r.stdout.contains("ahead")
            && r.stdout.contains("max_clock_skew"),
        "the refusal must say the clock is ahead of the registry's:\n{}",
        r.stdout
    );
    let ids = read_ids(&out);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs strictly increase");
    let layout = layout(0);
    let last = layout.decode(*ids.last().unwrap()).unwrap().timestamp_ms;
    assert!(
        last < stepped_at + 5_000,
        "an ID carries the stepped clock ({last}, stepped at {stepped_at})"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A newcomer run through `wrap` (a command that runs the probe, its arguments after it)
/// while a live holder issues on node 0, the only id; `None` if `wrap` itself could not
/// run here (`refused` is in what it said: the namespace needs root).
fn newcomer_beside_a_holder(
    b: &Backend,
    tag: &str,
    wrap: &[&str],
    refused: &[&str],
) -> Option<Finished> {
    let address = b.fresh_address(tag);
    let dir = scratch(tag);
    let mut holder = b
        .probe(&address, 0)
        .args(["issue", "--run-ms", "60000", "--per-ms", "50"])
        .args(["--out", dir.join("holder").to_str().unwrap()])
        .spawn()
        .unwrap();
    started_on_node_0(&mut holder, "the holder");
    let mut probe = b.probe(&address, 0);
    probe
        .args(["issue", "--count", "1000"])
        .args(["--out", dir.join("newcomer").to_str().unwrap()]);
    let newcomer = Command::new(wrap[0])
        .args(&wrap[1..])
        .arg(probe.get_program())
        .args(probe.get_args())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let r = finish(newcomer, Duration::from_secs(30), "the newcomer");
    signal(&holder, "-KILL");
    finish(holder, Duration::from_secs(30), "the holder");
    std::fs::remove_dir_all(&dir).ok();
    if refused.iter().any(|said| r.stderr.contains(said)) {
        eprintln!("skipped: {wrap:?} needs root here: {}", r.stderr.trim());
        return None;
    }
    Some(r)
}

/// A newcomer in a time namespace whose `CLOCK_BOOTTIME` runs a day ahead of the host's
/// (as `unshare --time` or a container runtime can make): the embedded registry's records
/// are judged on the host's clock, so it sees the live holder's lease and is told every id
/// is leased, rather than take node 0 as expired and issue beside the holder.
fn time_namespace(b: &Backend) {
    let wrap = ["unshare", "--time", "--boottime", "86400", "--fork", "--"];
    let Some(r) = newcomer_beside_a_holder(b, "timens", &wrap, &["unshare:"]) else {
        return;
    };
    assert_eq!(
        (r.code(), r.nodes()),
        (3, vec![]),
        "the newcomer must find node 0 leased: {}{}",
        r.stdout,
        r.stderr
    );
}

/// A process that cannot read this boot's id (a `/proc` that hides `/proc/sys`, as
/// systemd's `ProcSubset=pid` makes) is refused, saying why, rather than take every record
/// for one of an earlier boot and a live holder's id with it.
fn boot_id_hidden(b: &Backend) {
    let script = "mount -t tmpfs none /proc/sys && exec \"$0\" \"$@\"";
    let wrap = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
    ];
    let Some(r) = newcomer_beside_a_holder(b, "bootid", &wrap, &["unshare:", "mount:"]) else {
        return;
    };
    assert_eq!(
        (r.code(), r.nodes()),
        (2, vec![]),
        "the newcomer must be refused: {}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stderr.contains("cannot read this boot's id"),
        "{}",
        r.stderr
    );
}

/// A server killed for a while: started again when dropped, also when a test fails.
struct Outage(&'static str);

impl Outage {
    fn begin(b: &Backend) -> Outage {
        ctl("kill", b.name);
        Outage(b.name)
    }
}

impl Drop for Outage {
    fn drop(&mut self) {
        ctl("start", self.0);
    }
}

/// A holder killed (SIGKILL) while its registry cannot be reached, restarted with its
/// state file: the restart resumes the claim and issues, above every ID the killed one
/// wrote, until the claim's deadline, then is refused. Once the registry is back, a
/// process that takes the id issues none of the same IDs.
fn restart_in_an_outage(b: &Backend) {
    let address = b.fresh_address("outage");
    let dir = scratch("outage");
    let state = dir.join("state").join("lease.state");
    let ttl_ms = 4_000;
    let probe = || {
        let mut cmd = Command::new(PROBE);
        cmd.args(["--registry", &address, "--node-bits", "0"])
            .args(["--ttl-ms", &ttl_ms.to_string(), "--skew-ms", "50"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    let holder = |out: &Path, give_up_ms: &str| {
        let mut cmd = probe();
        cmd.args(["--state-file", state.to_str().unwrap()])
            .args(["issue", "--run-ms", "60000", "--per-ms", "20"])
            .args(["--give-up-ms", give_up_ms, "--out", out.to_str().unwrap()]);
        cmd
    };
    let (first_out, resumed_out) = (dir.join("first.ids"), dir.join("resumed.ids"));
    let mut first = holder(&first_out, "60000").spawn().unwrap();
    started_on_node_0(&mut first, "the first holder");
    wait_for("the first holder to issue", Duration::from_secs(30), || {
        read_ids(&first_out).len() >= 1_000
    });

    let outage = Outage::begin(b);
    signal(&first, "-KILL");
    first.wait().unwrap();
    let killed = read_ids(&first_out);
    let resumed = holder(&resumed_out, "1000").spawn().unwrap();
    let r = finish(resumed, Duration::from_secs(30), "the resumed holder");
    assert_eq!(
        (r.code(), r.nodes()),
        (5, vec![0]),
        "{}: the restart resumes node 0, then is refused at the deadline: {}{}",
        b.name,
        r.stdout,
        r.stderr
    );
    assert!(
        r.stderr.contains("resuming node id 0 without"),
        "{}",
        r.stderr
    );
    let resumed = read_ids(&resumed_out);
    assert!(
        !resumed.is_empty(),
        "{}: the restart issued nothing",
        b.name
    );
    assert!(
        resumed[0] > *killed.last().unwrap(),
        "{}: the restart issued at or below what the killed holder wrote",
        b.name
    );
    drop(outage);

    // The claim lapses at the registry; a process without the file takes the id.
    let taker_out = dir.join("taker.ids");
    let taker = probe()
        .args(["issue", "--count", "5000", "--acquire-retry-ms", "30000"])
        .args(["--out", taker_out.to_str().unwrap()])
        .spawn()
        .unwrap();
    let t = finish(taker, Duration::from_secs(60), "the taker");
    assert_eq!(t.code(), 0, "{}: {}{}", b.name, t.stdout, t.stderr);
    let taken = read_ids(&taker_out);
    assert!(
        taken[0] > *resumed.last().unwrap(),
        "{}: the taker went below",
        b.name
    );
    let mut all: Vec<u64> = killed.into_iter().chain(resumed).chain(taken).collect();
    assert_unique(&mut all, &layout(0));
}

/// One `#[test]` per scenario for a backend, in a module named after it; `#[ignore]` for
/// the servers, which scripts/test-lease-stores.sh starts.
macro_rules! backend_tests {
    ($backend:ident: $($scenario:ident),+ $(,)?) => {
        mod $backend {
            $(
                #[test]
                fn $scenario() {
                    super::$scenario(&super::Backend::new(stringify!($backend)));
                }
            )+
        }
    };
    (#[ignore] $backend:ident: $($scenario:ident),+ $(,)?) => {
        mod $backend {
            $(
                #[test]
                #[ignore = "needs the servers of scripts/test-lease-stores.sh"]
                fn $scenario() {
                    super::$scenario(&super::Backend::new(stringify!($backend)));
                }
            )+
        }
    };
}

backend_tests!(embedded: race, merged, handover, stopped_holder, wall_clock_step,
    time_namespace, boot_id_hidden);

backend_tests!(#[ignore] etcd: race, merged, handover, stopped_holder, server_restart, unreachable);

backend_tests!(#[ignore] redis: race, merged, handover, stopped_holder, server_restart, unreachable,
    evicting_redis_refused, restart_in_an_outage);

backend_tests!(#[ignore] zookeeper: race, merged, handover, stopped_holder, server_restart,
    unreachable);

backend_tests!(#[ignore] postgres: race, merged, handover, stopped_holder, server_restart,
    unreachable, restart_in_an_outage);
