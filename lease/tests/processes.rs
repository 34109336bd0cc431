//! Real processes sharing one embedded registry: racing for ids, handing ids over under
//! load, a holder stopped with SIGSTOP past its TTL, the registry deleted under a running
//! holder, and a holder whose wall clock steps forward (libfaketime).

mod support;

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferroflake::{Layout, TWITTER_EPOCH_MS};
use support::wait_for;

const PROBE: &str = env!("CARGO_BIN_EXE_ferroflake-lease-probe");

fn probe(args: &[&str]) -> Command {
    let mut command = Command::new(PROBE);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits at most `limit` for all `children` to exit, reading their output meanwhile (a
/// full pipe would block a child that holds an id others wait for); kills them and panics
/// if they do not finish. Returns each child's stdout.
fn finish_all(children: Vec<Child>, limit: Duration) -> Vec<String> {
    let give_up = Instant::now() + limit;
    let waiting: Vec<_> = children
        .into_iter()
        .map(|child| {
            let pid = child.id();
            let (done, result) = std::sync::mpsc::channel();
            thread::spawn(move || done.send(child.wait_with_output()));
            (pid, result)
        })
        .collect();
    let mut outputs = Vec::new();
    let mut late = Vec::new();
    for (pid, result) in &waiting {
        let left = give_up.saturating_duration_since(Instant::now());
        match result.recv_timeout(left) {
            Ok(output) => outputs.push(output.unwrap()),
            Err(_) => late.push(*pid),
        }
    }
    if !late.is_empty() {
        for pid in &late {
            Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .ok();
        }
        panic!("probes {late:?} did not finish within {limit:?}");
    }
    outputs
        .into_iter()
        .map(|output| {
            assert!(
                output.status.success(),
                "probe failed: {}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8(output.stdout).unwrap()
        })
        .collect()
}

fn layout(node_bits: u32) -> Layout {
    Layout::builder(41, node_bits, 12)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .unwrap()
}

fn ids_of(output: &str) -> Vec<u64> {
    output.lines().filter_map(|l| l.parse().ok()).collect()
}

fn node_of(output: &str) -> u64 {
    let line = output.lines().next().unwrap_or_default();
    line.strip_prefix("node ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no node line: {line:?}"))
}

#[test]
fn thirty_two_processes_race_for_sixteen_ids_and_exactly_sixteen_win() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let mut racers: Vec<Child> = (0..32)
        .map(|_| {
            probe(&[
                "race",
                "--dir",
                dir,
                "--node-count",
                "16",
                "--hold-ms",
                "60000",
            ])
            .spawn()
            .unwrap()
        })
        .collect();
    // Winners hold their ids until every racer has answered, however slowly they start.
    let mut outputs: Vec<String> = racers
        .iter_mut()
        .map(|racer| {
            let mut line = String::new();
            BufReader::new(racer.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            line
        })
        .collect();
    std::fs::write(std::path::Path::new(dir).join("done"), "").unwrap();
    let rest = finish_all(racers, Duration::from_secs(60));
    assert!(
        rest.iter().all(String::is_empty),
        "one line per racer: {rest:?}"
    );
    outputs.retain(|o| !o.is_empty());
    let won: Vec<u64> = outputs
        .iter()
        .filter_map(|o| o.trim().strip_prefix("won ").map(|n| n.parse().unwrap()))
        .collect();
    let lost = outputs.iter().filter(|o| o.starts_with("lost ")).count();
    assert_eq!(won.len(), 16, "exactly 16 winners: {outputs:?}");
    assert_eq!(
        won.iter().collect::<BTreeSet<_>>().len(),
        16,
        "winners hold distinct ids: {won:?}"
    );
    assert!(won.iter().all(|&id| id < 16));
    assert_eq!(lost, 16, "the other 16 are told no id is free: {outputs:?}");
}

#[test]
fn eight_processes_sharing_four_ids_issue_800k_ids_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    // Twice as many processes as ids: ids are handed over, each new holder waiting for the
    // previous holder's high-water mark.
    let children: Vec<Child> = (0..8)
        .map(|_| {
            probe(&[
                "issue",
                "--dir",
                dir,
                "--node-bits",
                "2",
                "--count",
                "100000",
                "--acquire-retry-ms",
                "60000",
                "--skew-ms",
                "50",
            ])
            .spawn()
            .unwrap()
        })
        .collect();
    let outputs = finish_all(children, Duration::from_secs(120));
    let layout = layout(2);
    let mut all = HashSet::new();
    for output in &outputs {
        let node = node_of(output);
        let ids = ids_of(output);
        assert_eq!(ids.len(), 100_000);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "each process's IDs increase"
        );
        assert!(ids
            .iter()
            .all(|&id| layout.decode(id).unwrap().node == node));
        all.extend(ids);
    }
    assert_eq!(all.len(), 800_000, "0 duplicates across 8 processes");
}

/// Reads a child's stdout lines into a shared list as they come.
fn collect_lines(child: &mut Child) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let reader = BufReader::new(child.stdout.take().unwrap());
    let sink = Arc::clone(&lines);
    thread::spawn(move || {
        for line in reader.lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {name} failed");
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn a_holder_stopped_past_its_ttl_issues_nothing_more_and_its_id_moves_on() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap();
    let ttl_ms = 1_500;
    // One node id (0 node bits), one ID per ms, lease TTL 1.5 s (quarantine 300 ms).
    let args = paced_holder(dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut first = probe(&args).spawn().unwrap();
    let first_lines = collect_lines(&mut first);
    wait_for("the first holder to issue", Duration::from_secs(10), || {
        first_lines.lock().unwrap().len() > 200
    });

    signal(&first, "-STOP");
    let stopped_at = wall_ms();
    thread::sleep(Duration::from_millis(ttl_ms + 300 + 300));
    let issued_while_held = ids_of(&first_lines.lock().unwrap().join("\n")).len();

    let mut second = probe(&args).spawn().unwrap();
    let second_lines = collect_lines(&mut second);
    wait_for(
        "the second holder to issue",
        Duration::from_secs(10),
        || second_lines.lock().unwrap().len() > 300,
    );

    // Resume the stopped holder while the registry's lock is held, so its renewal thread
    // cannot learn that the lease is lost: only its own fence can stop it from issuing.
    let lock = std::fs::File::open(std::path::Path::new(dir).join("leases.lock")).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    signal(&first, "-CONT");
    thread::sleep(Duration::from_millis(400));
    assert!(
        first.try_wait().unwrap().is_none(),
        "without the registry, the holder cannot know it lost"
    );
    drop(lock);
    let first_output = {
        let give_up = Instant::now() + Duration::from_secs(10);
        while first.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < give_up,
                "the stopped holder did not stop after SIGCONT"
            );
            thread::sleep(Duration::from_millis(10));
        }
        thread::sleep(Duration::from_millis(50)); // let the reader drain the pipe
        first_lines.lock().unwrap().join("\n")
    };
    thread::sleep(Duration::from_millis(200)); // the second holder keeps issuing meanwhile
    second.kill().unwrap();
    second.wait().unwrap();
    thread::sleep(Duration::from_millis(50));
    let second_output = second_lines.lock().unwrap().join("\n");

    assert_eq!(node_of(&first_output), 0);
    assert_eq!(
        node_of(&second_output),
        0,
        "the stopped holder's id went to the second process"
    );
    assert!(
        first_output.contains("\nrefused "),
        "after SIGCONT the first holder is refused:\n{first_output}"
    );
    assert!(
        first_output.ends_with("\nlost"),
        "and learns that its lease is lost"
    );
    let first_ids = ids_of(&first_output);
    let second_ids = ids_of(&second_output);
    assert_eq!(
        first_ids.len(),
        issued_while_held,
        "nothing issued after SIGCONT"
    );
    let layout = layout(0);
    let last_first_ms = layout
        .decode(*first_ids.iter().max().unwrap())
        .unwrap()
        .timestamp_ms;
    assert!(
        last_first_ms < stopped_at + ttl_ms,
        "the stopped holder issued past its deadline ({last_first_ms} vs stop at {stopped_at})"
    );
    let first_set: HashSet<u64> = first_ids.iter().copied().collect();
    assert!(
        second_ids.iter().all(|id| !first_set.contains(id)),
        "0 duplicates"
    );
    assert!(second_ids.iter().min().unwrap() > first_ids.iter().max().unwrap());
}

/// Waits at most `limit` for `child` to exit; panics if it does not.
fn wait_exit(child: &mut Child, limit: Duration, what: &str) {
    let give_up = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < give_up,
            "{what} did not exit within {limit:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
    thread::sleep(Duration::from_millis(50)); // let the reader drain the pipe
}

/// One node id, one ID per ms, TTL 1.5 s (quarantine 300 ms): a holder in `dir`.
fn paced_holder(dir: &str) -> Vec<String> {
    [
        "issue",
        "--dir",
        dir,
        "--node-bits",
        "0",
        "--pace-us",
        "1000",
        "--ttl-ms",
        "1500",
        "--skew-ms",
        "50",
        "--acquire-retry-ms",
        "10000",
        "--max-run-ms",
        "30000",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn a_registry_deleted_under_a_running_holder_never_hands_its_id_out_live() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join("registry");
    let args = paced_holder(dir.to_str().unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut first = probe(&args).spawn().unwrap();
    let first_lines = collect_lines(&mut first);
    wait_for("the first holder to issue", Duration::from_secs(20), || {
        first_lines.lock().unwrap().len() > 200
    });
    // logind at logout, a tmp cleaner, or an operator: the whole directory goes.
    std::fs::remove_dir_all(&dir).unwrap();
    let mut second = probe(&args).spawn().unwrap();
    let second_lines = collect_lines(&mut second);
    wait_exit(&mut first, Duration::from_secs(10), "the first holder");
    let first_output = first_lines.lock().unwrap().join("\n");
    wait_for(
        "the second holder to issue",
        Duration::from_secs(10),
        || second_lines.lock().unwrap().len() > 100,
    );
    second.kill().unwrap();
    second.wait().unwrap();
    thread::sleep(Duration::from_millis(50));
    let second_output = second_lines.lock().unwrap().join("\n");
    assert_eq!(node_of(&second_output), 0, "the same id, claimed afresh");
    let first_ids: HashSet<u64> = ids_of(&first_output).into_iter().collect();
    let second_ids = ids_of(&second_output);
    let shared = second_ids
        .iter()
        .filter(|id| first_ids.contains(id))
        .count();
    assert_eq!(shared, 0, "IDs issued by both holders");
    assert!(
        second_ids.iter().min().unwrap() > first_ids.iter().max().unwrap(),
        "the second holder starts after everything the first issued"
    );
    assert!(
        first_output.ends_with("\nlost"),
        "the first holder must learn at its next renewal that its record is gone:\n{}",
        &first_output[first_output.len().saturating_sub(300)..]
    );
    assert!(
        first_output.contains("no record of it"),
        "and say that its record is gone"
    );
}

#[test]
fn a_wall_clock_stepped_forward_does_not_end_a_healthy_lease() {
    let faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
    assert!(
        std::path::Path::new(faketime).exists(),
        "libfaketime is missing: run scripts/install-deps.sh"
    );
    let dir = tempfile::tempdir().unwrap();
    let registry = dir.path().join("registry");
    let offset = dir.path().join("offset");
    std::fs::write(&offset, "+0\n").unwrap();
    let args = paced_holder(registry.to_str().unwrap());
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--count", "3000"]);
    let mut holder = probe(&args)
        .env("LD_PRELOAD", faketime)
        .env("FAKETIME_TIMESTAMP_FILE", &offset)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .spawn()
        .unwrap();
    let lines = collect_lines(&mut holder);
    wait_for("the holder to issue", Duration::from_secs(20), || {
        lines.lock().unwrap().len() > 500
    });
    // NTP steps the clock 30 s ahead: far past the mark reserved one TTL (1.5 s) ahead.
    std::fs::write(&offset, "+30\n").unwrap();
    wait_exit(&mut holder, Duration::from_secs(30), "the holder");
    assert!(holder.wait().unwrap().success(), "the holder failed");
    let output = lines.lock().unwrap().join("\n");
    assert!(
        !output.contains("refused"),
        "a forward step must not refuse a healthy lease:\n{}",
        output
            .lines()
            .find(|l| l.starts_with("refused"))
            .unwrap_or_default()
    );
    let ids = ids_of(&output);
    assert_eq!(ids.len(), 3000, "every ID issued");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs strictly increase");
    let layout = layout(0);
    let span = layout.decode(ids[2999]).unwrap().timestamp_ms
        - layout.decode(ids[0]).unwrap().timestamp_ms;
    assert!(span >= 30_000, "the step shows in the IDs ({span} ms)");
}
