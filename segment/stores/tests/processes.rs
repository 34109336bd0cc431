//! Real processes and real servers, per store: 4 processes x 2 threads with a step of 10
//! share no ID; a process killed with SIGKILL mid-segment is followed by IDs above all of
//! its; a clean shutdown gives its rest back unless another allocator took a range since;
//! a SQL server killed mid-run costs errors but never a duplicate, and heals by itself.
//! What a store's faults do to processes is tests/faults.rs.
//!
//! The SQLite tests run everywhere. The server tests are ignored by default;
//! scripts/test-segment-stores.sh starts the servers and runs them with `--ignored`.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::probes::{parse, probe, run_ok};
use common::{ctl, fresh_address};
use ferroflake_segment::{SegmentAllocator, SegmentConfig, SegmentError};

fn four_processes_two_threads_step_10(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store = fresh_address(backend, scratch.path());
    // Create the key first so that no process races on creation.
    run_ok(&mut probe(&store, &["--count", "1"]));
    let children: Vec<_> = (0..4)
        .map(|_| {
            probe(
                &store,
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

fn sigkill_mid_segment_then_restart(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store = fresh_address(backend, scratch.path());
    let mut child = probe(
        &store,
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
    let new: Vec<u64> = parse(&run_ok(&mut probe(&store, &["--count", "50"])))
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

/// A clean shutdown gives the unissued rest back, so the next allocator starts right after
/// the last ID issued; after another allocator has taken a range, the give-back is refused
/// and the rest is dropped (the table's `max_id` stays where the other allocator left it).
fn give_back_on_shutdown_unless_someone_allocated_since(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store =
        ferroflake_segment_stores::open(Some(&fresh_address(backend, scratch.path()))).unwrap();
    store.create("k", 1, 100).unwrap();
    let a = SegmentAllocator::new(store.clone(), SegmentConfig::default()).unwrap();
    let a_key = a.key("k").unwrap();
    assert_eq!(a_key.next_id().unwrap(), 1);
    assert_eq!(a_key.next_id().unwrap(), 2);
    let report = a.shutdown();
    assert!(report.refused.is_empty() && report.failed.is_empty());
    assert_eq!(
        store.peek("k").unwrap().unwrap().max_id,
        3,
        "the rest 3.. went back"
    );

    let b = SegmentAllocator::new(store.clone(), SegmentConfig::default()).unwrap();
    let b_key = b.key("k").unwrap();
    assert_eq!(
        b_key.next_id().unwrap(),
        3,
        "the next allocator continues at once"
    );
    let c = SegmentAllocator::new(store.clone(), SegmentConfig::default()).unwrap();
    let c_first = c.key("k").unwrap().next_id().unwrap();
    assert!(c_first >= 103, "C's range follows B's: {c_first}");
    let after_c = store.peek("k").unwrap().unwrap().max_id;
    let report = b.shutdown();
    assert_eq!(
        report.refused,
        vec!["k".to_string()],
        "B's give-back must be refused after C allocated"
    );
    assert_eq!(store.peek("k").unwrap().unwrap().max_id, after_c);
    c.shutdown();
}

/// The server is killed under an allocator that keeps issuing: IDs in memory are still
/// issued, then calls fail with a typed error (no hang past the bounded wait), and once the
/// server is back, issuing resumes by itself. No ID is issued twice.
fn server_killed_mid_run(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store =
        ferroflake_segment_stores::open(Some(&fresh_address(backend, scratch.path()))).unwrap();
    store.create("k", 1, 10).unwrap();
    let config = SegmentConfig {
        max_wait: Duration::from_millis(200),
        max_step: 10,
        retry_min: Duration::from_millis(20),
        retry_max: Duration::from_millis(500),
        ..SegmentConfig::default()
    };
    let allocator = SegmentAllocator::new(store, config).unwrap();
    let key = allocator.key("k").unwrap();
    let ids = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (ids, errors, stop) = (ids.clone(), errors.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let started = Instant::now();
                match key.next_id() {
                    Ok(id) => ids.lock().unwrap().push((Instant::now(), id)),
                    Err(e) => errors.lock().unwrap().push((started.elapsed(), e)),
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let count = |ids: &Arc<Mutex<Vec<(Instant, u64)>>>| ids.lock().unwrap().len();
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(&ids) < 100 {
        assert!(Instant::now() < deadline, "no IDs before the kill");
        std::thread::sleep(Duration::from_millis(20));
    }
    ctl("kill", backend);
    let killed_at = Instant::now();
    while errors.lock().unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no error while the server was down"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    ctl("start", backend);
    let back_at = Instant::now();
    let before = count(&ids);
    while count(&ids) < before + 100 {
        assert!(
            Instant::now() < back_at + Duration::from_secs(20),
            "issuing did not resume within 20 s of the server's return"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
    worker.join().unwrap();
    allocator.shutdown();

    let ids = ids.lock().unwrap();
    let errors = errors.lock().unwrap();
    let unique: HashSet<u64> = ids.iter().map(|(_, id)| *id).collect();
    assert_eq!(unique.len(), ids.len(), "an ID was issued twice");
    assert!(ids.windows(2).all(|w| w[0].1 < w[1].1), "IDs must increase");
    for (took, e) in errors.iter() {
        assert!(
            matches!(
                e,
                SegmentError::Unavailable { .. } | SegmentError::NotReady { .. }
            ),
            "an outage must give Unavailable or NotReady, not {e:?}"
        );
        assert!(
            *took < Duration::from_secs(8),
            "a call took {took:?} while the server was down"
        );
    }
    let issued_while_down = ids
        .iter()
        .filter(|(t, _)| *t > killed_at && *t < back_at)
        .count();
    println!(
        "{backend}: {} IDs, {} errors, {issued_while_down} IDs from memory after the kill",
        ids.len(),
        errors.len()
    );
}

macro_rules! on_sqlite_and_servers {
    ($($check:ident),* $(,)?) => {
        mod sqlite {
            $( #[test] fn $check() { super::$check("sqlite"); } )*
        }
        mod postgres {
            $( #[test] #[ignore = "needs FERROFLAKE_TEST_POSTGRES"] fn $check() { super::$check("postgres"); } )*
        }
        mod mysql {
            $( #[test] #[ignore = "needs FERROFLAKE_TEST_MYSQL"] fn $check() { super::$check("mysql"); } )*
        }
        mod redis {
            $( #[test] #[ignore = "needs FERROFLAKE_TEST_REDIS"] fn $check() { super::$check("redis"); } )*
        }
    };
}

on_sqlite_and_servers!(
    four_processes_two_threads_step_10,
    sigkill_mid_segment_then_restart,
    give_back_on_shutdown_unless_someone_allocated_since,
);

// Redis is not here: a Redis restart without persistence loses the counter, and the store
// must then fail closed rather than heal (tests/redis_faults.rs).
mod server_killed {
    #[test]
    #[ignore = "needs FERROFLAKE_TEST_POSTGRES; kills and restarts the server"]
    fn postgres() {
        super::server_killed_mid_run("postgres");
    }
    #[test]
    #[ignore = "needs FERROFLAKE_TEST_MYSQL; kills and restarts the server"]
    fn mysql() {
        super::server_killed_mid_run("mysql");
    }
}
