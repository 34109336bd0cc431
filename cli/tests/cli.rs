//! The `ferroflake` command as a user runs it: next (with a node id, and leased), decode,
//! layout, and the refusals.

use std::collections::HashSet;
use std::process::{Command, Output, Stdio};

use ferroflake::{Format, Layout, Parts};

const BIN: &str = env!("CARGO_BIN_EXE_ferroflake");

/// Runs the command with its lease directory in `lease_dir`.
fn ferroflake(lease_dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("FERROFLAKE_LEASE_DIR", lease_dir)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ferroflake failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn next_with_a_node_prints_increasing_ids_of_that_node() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&ferroflake(
        dir.path(),
        &["next", "-n", "5000", "--node", "42"],
    ));
    let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids
        .iter()
        .all(|&id| Layout::twitter().decode(id).unwrap().node == 42));
    assert!(
        !dir.path().join("leases.json").exists(),
        "--node takes no lease"
    );
}

#[test]
fn next_prints_each_string_format_and_the_layout_and_shard_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [
        ("base62", Format::Base62),
        ("base32", Format::Base32),
        ("dec", Format::Decimal),
    ] {
        let out = stdout(&ferroflake(
            dir.path(),
            &[
                "next", "-n", "3", "--node", "9", "--layout", "sharded", "--shard", "5",
                "--format", name,
            ],
        ));
        for line in out.lines() {
            if let Some(width) = format.width() {
                assert_eq!(line.len(), width, "{name} is fixed-width");
            }
            let parts = Layout::sharded()
                .decode(format.parse(line).unwrap())
                .unwrap();
            assert_eq!((parts.node, parts.shard), (9, 5));
        }
    }
}

#[test]
fn next_without_a_node_leases_one_and_says_so_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&ferroflake(
        dir.path(),
        &["next", "-n", "3", "--format", "json"],
    ));
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["layout"], "twitter");
    assert_eq!(value["lease"]["registry"], "embedded");
    let node = value["node"].as_u64().unwrap();
    let ids: Vec<u64> = value["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids
        .iter()
        .all(|&id| Layout::twitter().decode(id).unwrap().node == node));
    let records = std::fs::read_to_string(dir.path().join("leases.json")).unwrap();
    assert!(
        records.contains("\"token\": null"),
        "the lease is released at exit: {records}"
    );
}

#[test]
fn two_leased_runs_at_once_get_different_node_ids() {
    let dir = tempfile::tempdir().unwrap();
    // js53 issues 4096 IDs per second per node, so 12,000 IDs span 3 seconds' ticks and
    // take over a second: the two runs overlap, each holding its lease the whole time.
    let spawn = || {
        Command::new(BIN)
            .args([
                "next", "-n", "12000", "--layout", "js53", "--format", "json",
            ])
            .env("FERROFLAKE_LEASE_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let runs: Vec<serde_json::Value> = [a, b]
        .into_iter()
        .map(|child| serde_json::from_str(&stdout(&child.wait_with_output().unwrap())).unwrap())
        .collect();
    let node = |run: &serde_json::Value| run["node"].as_u64().unwrap();
    assert_ne!(
        node(&runs[0]),
        node(&runs[1]),
        "concurrent runs must not share a node id"
    );
    let span = |run: &serde_json::Value| {
        let times: Vec<u64> = run["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                Layout::js53()
                    .decode(v.as_str().unwrap().parse().unwrap())
                    .unwrap()
                    .timestamp_ms
            })
            .collect();
        (*times.iter().min().unwrap(), *times.iter().max().unwrap())
    };
    let ((a0, a1), (b0, b1)) = (span(&runs[0]), span(&runs[1]));
    assert!(
        a0 <= b1 && b0 <= a1,
        "the two runs really ran at the same time"
    );
    let all: HashSet<&str> = runs
        .iter()
        .flat_map(|r| r["ids"].as_array().unwrap())
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(all.len(), 24_000, "0 duplicates");
}

#[test]
fn eight_leased_runs_at_once_issue_800k_ids_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..8)
        .map(|_| {
            Command::new(BIN)
                .args(["next", "-n", "100000"])
                .env("FERROFLAKE_LEASE_DIR", dir.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut all = HashSet::new();
    let mut nodes = HashSet::new();
    for child in children {
        let out = stdout(&child.wait_with_output().unwrap());
        let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(ids.len(), 100_000);
        nodes.insert(Layout::twitter().decode(ids[0]).unwrap().node);
        all.extend(ids);
    }
    assert_eq!(all.len(), 800_000, "0 duplicates across 8 processes");
    assert_eq!(nodes.len(), 8, "each process leased its own node id");
}

#[test]
fn without_a_usable_registry_next_refuses_and_guesses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let unusable = blocker.join("leases");
    for output in [
        ferroflake(&unusable, &["next"]),
        ferroflake(dir.path(), &["next", "--lease", unusable.to_str().unwrap()]),
    ] {
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert!(output.stdout.is_empty(), "no ID may be printed");
        let message = stderr(&output);
        assert!(
            message.contains("cannot lease a node id from the embedded registry"),
            "{message}"
        );
        assert!(
            message.contains("never guesses a node id") && message.contains("--node N"),
            "{message}"
        );
    }
}

#[test]
fn store_urls_need_the_stores_feature_or_a_reachable_store() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens there.
    let output = ferroflake(dir.path(), &["next", "--lease", "redis://127.0.0.1:1/"]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    if cfg!(feature = "stores") {
        assert!(
            message.contains("cannot lease a node id from the registry at redis://"),
            "{message}"
        );
    } else {
        assert!(message.contains("--features stores"), "{message}");
        assert_eq!(output.status.code(), Some(2));
    }
    let output = ferroflake(dir.path(), &["next", "--lease", "ftp://x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown scheme"));
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["next", "--node", "1", "--lease", "/tmp/x"],
            "cannot be used with",
        ),
        (
            &["next", "--node", "1024"],
            "node id 1024 is out of range 0..=1023",
        ),
        (
            &["next", "--layout", "nope", "--node", "1"],
            "invalid value 'nope'",
        ),
        (
            &["next", "-n", "0", "--node", "1"],
            "invalid value '0' for '--count",
        ),
        (
            &["next", "--node", "1", "--shard", "1"],
            "shard 1 is out of range 0..=0",
        ),
    ];
    for (args, expected) in cases {
        let output = ferroflake(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn decode_shows_iso_time_node_sequence_and_shard() {
    let dir = tempfile::tempdir().unwrap();
    // 2019-10-26T02:40:48.000Z = 1572057648000 ms.
    let parts = Parts {
        timestamp_ms: 1_572_057_648_000,
        node: 5,
        sequence: 7,
        shard: 0,
    };
    let id = Layout::twitter().compose(&parts).unwrap();
    let out = stdout(&ferroflake(dir.path(), &["decode", &id.to_string()]));
    assert!(out.contains("2019-10-26T02:40:48.000Z"), "{out}");
    assert!(
        out.contains("node      5\n")
            && out.contains("sequence  7\n")
            && out.contains("shard     0\n"),
        "{out}"
    );

    let parts = Parts {
        timestamp_ms: 1_700_000_000_123,
        node: 3,
        sequence: 9,
        shard: 12,
    };
    let id = Layout::sharded().compose(&parts).unwrap();
    let base32 = Format::Base32.encode(id);
    let out = stdout(&ferroflake(
        dir.path(),
        &[
            "decode", &base32, "--format", "base32", "--layout", "sharded", "--json",
        ],
    ));
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["id"], id.to_string());
    assert_eq!(value["time"], "2023-11-14T22:13:20.123Z");
    assert_eq!(
        (
            value["node"].as_u64(),
            value["sequence"].as_u64(),
            value["shard"].as_u64()
        ),
        (Some(3), Some(9), Some(12))
    );
}

#[test]
fn decode_refuses_bad_ids() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (vec!["decode", "12x"], "invalid character"),
        (vec!["decode", "-5"], "never negative"),
        (vec!["decode", "99999999999999999999"], "longer than any ID"),
        (
            vec!["decode", "9223372036854775807", "--layout", "js53"],
            "not a js53 ID",
        ),
    ] {
        let output = ferroflake(dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(expected),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn layout_draws_bits_capacity_and_exhaustion() {
    let dir = tempfile::tempdir().unwrap();
    let out = stdout(&ferroflake(dir.path(), &["layout"]));
    assert!(
        out.starts_with("twitter: 41 time + 10 node + 12 sequence bits"),
        "{out}"
    );
    assert!(
        out.contains("| 0 |")
            && out.contains("time 41")
            && out.contains("node 10")
            && out.contains("sequence 12")
    );
    assert!(out.contains("4096000 IDs/s per node"), "{out}");
    assert!(out.contains("exhausts  2080-07-10T17:30:30.209Z"), "{out}");
    assert!(out.contains("epoch     2010-11-04T01:42:54.657Z"), "{out}");

    let out = stdout(&ferroflake(
        dir.path(),
        &["layout", "--layout", "sonyflake"],
    ));
    assert!(
        out.find("sequence 8").unwrap() < out.find("node 16").unwrap(),
        "sonyflake: machine lowest\n{out}"
    );
    assert!(out.contains("25600 IDs/s per node"), "{out}");

    let out = stdout(&ferroflake(dir.path(), &["layout", "--all"]));
    for name in Layout::PRESET_NAMES {
        assert!(out.contains(&format!("{name}: ")), "--all shows {name}");
    }
}
