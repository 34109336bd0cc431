//! `ferroflake segment order-number` as a user runs it: numbers across runs on one store,
//! the width limit, a signal (the rest given back), bad settings.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn lines(output: &Output) -> Vec<String> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn runs_on_one_store_never_repeat_and_a_full_counter_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("segments.db");
    let store = store.to_str().unwrap();
    let base = [
        "segment",
        "order-number",
        "--zone",
        "Asia/Shanghai",
        "--store",
        store,
    ];
    let mut seen = HashSet::new();
    for _ in 0..3 {
        let output = run(&[&base[..], &["-n", "4", "--width", "2", "--step", "5"]].concat());
        assert!(output.status.success(), "{output:?}");
        for number in lines(&output) {
            assert_eq!(number.len(), 10, "{number}");
            assert!(number.starts_with("20"), "{number}");
            assert!(seen.insert(number.clone()), "{number} issued twice");
        }
    }
    // Runs give their unprinted numbers back: the counter went on from 1 to 12.
    let counters: HashSet<String> = seen.iter().map(|n| n[8..].to_owned()).collect();
    assert_eq!(counters, (1..=12).map(|c| format!("{c:02}")).collect());
    // 99 numbers fit two digits; the rest of the request is refused with exit status 1.
    let output = run(&[&base[..], &["-n", "100", "--width", "2", "--step", "50"]].concat());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(lines(&output).len(), 99 - 12);
    let message = String::from_utf8(output.stderr).unwrap();
    assert!(
        message.contains("is exhausted") && message.contains("limit 99"),
        "{message}"
    );
}

/// A day's row lost after the day issued numbers (deleted, or the table restored) is never
/// made again at 000001: the next run is refused, and issues nothing.
#[test]
fn a_lost_day_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("segments.db");
    let store = store.to_str().unwrap();
    let args = ["segment", "order-number", "-n", "3", "--store", store];
    let first = run(&args);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(lines(&first).len(), 3);
    let conn = rusqlite::Connection::open(store).unwrap();
    let deleted = conn
        .execute("DELETE FROM leaf_alloc WHERE biz_tag LIKE 'orders:%'", [])
        .unwrap();
    assert_eq!(deleted, 1, "the day's row");
    drop(conn);
    let again = run(&args);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(lines(&again).is_empty(), "nothing issued: {again:?}");
    let message = String::from_utf8(again.stderr).unwrap();
    assert!(
        message.contains("went back") && message.contains("segment recover orders:"),
        "{message}"
    );
}

/// SIGTERM stops issuing and gives the day's unissued rest back: the next run goes on right
/// after the last number printed, and the run exits 143.
#[test]
fn sigterm_stops_and_gives_the_rest_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("segments.db");
    let store = store.to_str().unwrap();
    let base = ["segment", "order-number", "--zone", "UTC", "--store", store];
    let mut child = Command::new(BIN)
        .args(base)
        .args(["-n", "1000000000", "--width", "10", "--step", "100000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed: Vec<String> = out.by_ref().take(1000).map(Result::unwrap).collect();
    assert_eq!(printed.len(), 1000, "the run prints before it is stopped");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    printed.extend(out.map(Result::unwrap)); // to the end: the child has exited
    let ended = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(143), "{err}");
    assert!(
        err.contains("interrupted by SIGTERM: stopped after") && err.contains("given back"),
        "{err}"
    );
    let counter = |number: &str| number[8..].parse::<u64>().unwrap();
    let last = printed.last().unwrap();
    let next = run(&[&base[..], &["-n", "1", "--width", "10"]].concat());
    assert!(next.status.success(), "{next:?}");
    let next = &lines(&next)[0];
    assert_eq!(
        (&next[..8], counter(next)),
        (&last[..8], counter(last) + 1),
        "the next run goes on after {last}"
    );
}

#[test]
fn bad_settings_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("segments.db");
    for bad in [
        ["--zone", "Mars/Olympus"],
        ["--width", "11"],
        ["--step", "0"],
    ] {
        let output = run(&[
            &[
                "segment",
                "order-number",
                "--store",
                store.to_str().unwrap(),
            ][..],
            &bad[..],
        ]
        .concat());
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {output:?}");
    }
}
