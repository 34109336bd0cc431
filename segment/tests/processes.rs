//! Real processes on one SQLite file: 4 processes x 2 threads with a step of 10 share no
//! ID, and a process killed with SIGKILL mid-segment is followed by IDs above all of its.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROBE: &str = env!("CARGO_BIN_EXE_ferroflake-segment-probe");

fn probe(db: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(PROBE);
    command
        .arg("--db")
        .arg(db)
        .args(["--key", "shared"])
        .args(extra);
    command
}

/// `<thread> <id>` lines into per-thread ID lists.
fn parse(output: &str) -> HashMap<u32, Vec<u64>> {
    let mut by_thread: HashMap<u32, Vec<u64>> = HashMap::new();
    for line in output.lines() {
        let (t, id) = line.split_once(' ').expect("`<thread> <id>`");
        by_thread
            .entry(t.parse().unwrap())
            .or_default()
            .push(id.parse().unwrap());
    }
    by_thread
}

#[test]
fn four_processes_two_threads_step_10_share_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // Create the key first so that no process races on creation.
    let status = probe(&db, &["--count", "1"]).output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let children: Vec<_> = (0..4)
        .map(|_| {
            probe(
                &db,
                &["--threads", "2", "--count", "1500", "--step-max", "10"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut seen = HashSet::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "probe failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let by_thread = parse(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(by_thread.len(), 2);
        for ids in by_thread.values() {
            assert_eq!(ids.len(), 1500);
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's IDs do not increase"
            );
            for id in ids {
                assert!(seen.insert(*id), "ID {id} issued by two processes");
            }
        }
    }
    assert_eq!(seen.len(), 4 * 2 * 1500, "0 duplicates");
}

#[test]
fn sigkill_mid_segment_then_restart_issues_above_everything() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let mut child = probe(
        &db,
        &[
            "--create-step",
            "100",
            "--count",
            "100000",
            "--pace-us",
            "200",
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut old = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(20);
    while old.len() < 150 {
        // mid-segment: 150 is half-way into the second segment (100, then 100 or 200)
        assert!(Instant::now() < give_up, "the probe is too slow");
        let line = lines.next().expect("probe output").unwrap();
        old.push(line.split_once(' ').unwrap().1.parse::<u64>().unwrap());
    }
    child.kill().unwrap(); // SIGKILL: no shutdown, no give-back
    child.wait().unwrap();
    for line in lines {
        // lines written before the kill and not yet read
        old.push(line.unwrap().split_once(' ').unwrap().1.parse().unwrap());
    }
    let highest_old = *old.iter().max().unwrap();
    let out = probe(&db, &["--count", "50"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let new: Vec<u64> = parse(&String::from_utf8(out.stdout).unwrap())
        .into_values()
        .flatten()
        .collect();
    assert_eq!(new.len(), 50);
    assert!(
        new.iter().all(|id| *id > highest_old),
        "after the kill an ID at or below {highest_old} was issued again: {:?}",
        new.iter().min()
    );
}
