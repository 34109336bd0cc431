//! `ferroflake segment order-number` as a user runs it: numbers across runs on one store,
//! the width limit, bad settings.

use std::collections::HashSet;
use std::process::{Command, Output};

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
