//! `ferroflake layout --like PEER` and custom layout spellings on `next`, `decode` and
//! `layout`, as a user runs them.

use ferroflake::Layout;

mod common;
use common::{ferroflake, stdout};

/// The exit status and stderr of a run that must fail.
fn refusal(args: &[&str]) -> (i32, String) {
    let output = ferroflake(args);
    assert!(!output.status.success(), "{args:?} succeeded");
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn like(args: &[&str]) -> String {
    let out = stdout(&ferroflake(&[&["layout", "--like"], args].concat()));
    out.trim_end().to_owned()
}

#[test]
fn each_peer_with_its_defaults_prints_the_layout_of_its_ids() {
    let twitter = Layout::twitter().to_string();
    for (peer, expected) in [
        ("bwmarrin", twitter.as_str()),
        ("leaf", &twitter),
        ("hutool", &twitter),
        ("mybatis-plus", &twitter),
        (
            "sonyflake",
            "39/16/8@2014-09-01T00:00:00Z,tick=10ms,order=sequence_then_node",
        ),
        (
            "sonyflake-v2",
            "39/16/8@2025-01-01T00:00:00Z,tick=10ms,order=sequence_then_node",
        ),
        ("shardingsphere", "41/10/12@2016-11-01T00:00:00Z"),
        ("cosid", "41/10/12@2019-12-24T16:00:00Z"),
    ] {
        assert_eq!(like(&[peer]), expected, "{peer}");
    }
    assert_eq!(
        Layout::parse(&like(&["sonyflake"])),
        Ok(Layout::sonyflake())
    );
}

#[test]
fn a_peers_own_settings_change_its_layout() {
    assert_eq!(
        like(&[
            "bwmarrin",
            "--node-bits",
            "8",
            "--step-bits",
            "14",
            "--epoch",
            "1700000000000"
        ]),
        "41/8/14@2023-11-14T22:13:20Z"
    );
    assert_eq!(
        like(&[
            "sonyflake-v2",
            "--bits-sequence",
            "10",
            "--bits-machine-id",
            "12",
            "--time-unit",
            "1ms",
            "--start-time",
            "2025-01-01T00:00:00Z",
        ]),
        "41/12/10@2025-01-01T00:00:00Z,order=sequence_then_node"
    );
    assert_eq!(
        like(&["sonyflake-v2", "--time-unit", "1s"]),
        "39/16/8@2025-01-01T00:00:00Z,tick=1000ms,order=sequence_then_node"
    );
}

#[test]
fn peers_without_a_layout_and_bad_settings_are_refused_saying_why() {
    for (args, status, why) in [
        (&["seata"][..], 1, "node id above the timestamp"),
        (&["yitter"], 1, "reserves its lowest sequence numbers"),
        (
            &["sonyflake", "--node-bits", "8"],
            2,
            "--node-bits is a setting of --like bwmarrin",
        ),
        (
            &["bwmarrin", "--node-bits", "40", "--step-bits", "40"],
            2,
            "80 bits",
        ),
        (
            &["sonyflake-v2", "--time-unit", "1.5ms"],
            2,
            "whole milliseconds",
        ),
        (
            &["cosid", "--epoch", "2025-02-30T00:00:00Z"],
            2,
            "at byte 8",
        ),
        (&["cosid", "--epoch", "0,tick=5ms"], 2, "no ','"),
        (
            &["cosid", "--epoch", "1969-12-31T00:00:00Z"],
            2,
            "before 1970",
        ),
        (&["snowflake"], 2, "invalid value 'snowflake'"),
    ] {
        let (code, stderr) = refusal(&[&["layout", "--like"], args].concat());
        assert_eq!(code, status, "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
    let (code, stderr) = refusal(&["layout", "--node-bits", "8"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn next_decode_and_layout_take_a_spelling_where_they_take_a_preset() {
    let spelling = like(&["bwmarrin", "--node-bits", "8", "--step-bits", "14"]);
    let id = stdout(&ferroflake(&[
        "next", "--node", "255", "--layout", &spelling,
    ]));
    let id: u64 = id.trim().parse().unwrap();
    let parts = Layout::parse(&spelling).unwrap().decode(id).unwrap();
    assert_eq!(parts.node, 255);

    let decoded = stdout(&ferroflake(&[
        "decode",
        &id.to_string(),
        "--layout",
        &spelling,
        "--json",
    ]));
    let decoded: serde_json::Value = serde_json::from_str(&decoded).unwrap();
    assert_eq!(decoded["node"], 255);
    assert_eq!(decoded["layout"], spelling.as_str());
    // A preset spelled out is named by its spelling; a preset name keeps its name.
    let out = stdout(&ferroflake(&[
        "decode",
        "1",
        "--layout",
        "SONYFLAKE",
        "--json",
    ]));
    assert!(out.contains("\"layout\":\"sonyflake\""), "{out}");

    let out = stdout(&ferroflake(&["layout", "--layout", "41/6/12+4@0,tick=2ms"]));
    assert!(
        out.starts_with("41/6/12+4@1970-01-01T00:00:00Z,tick=2ms: 41 time + 6 node + 12 sequence + 4 shard bits"),
        "{out}"
    );
    assert!(out.contains("tick      2 ms"), "{out}");

    for (args, why) in [
        (
            &[
                "next",
                "--node",
                "1",
                "--layout",
                "41/10/12@2010-13-01T00:00:00Z",
            ][..],
            "at byte 14",
        ),
        (&["decode", "1", "--layout", "41/10/13@0"], "64 bits"),
        (
            &["layout", "--layout", "41/10/12@0,order=sideways"],
            "sequence_then_node",
        ),
    ] {
        let (code, stderr) = refusal(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

#[test]
fn decode_as_prints_the_parts_as_the_peer_shows_them() {
    // sonyflake v2 counts 10 ms units from 2025-01-01: 100 units, sequence 3, machine 258.
    let v2 = like(&["sonyflake-v2"]);
    let id = (100u64 << 24) | (3 << 16) | 258;
    let shown = stdout(&ferroflake(&[
        "decode",
        &id.to_string(),
        "--layout",
        &v2,
        "--as",
        "sonyflake-v2",
    ]));
    assert_eq!(
        shown,
        format!("{{\"id\":{id},\"machine\":258,\"sequence\":3,\"time\":100}}\n")
    );
    let native = stdout(&ferroflake(&[
        "decode",
        &id.to_string(),
        "--layout",
        &v2,
        "--json",
    ]));
    let native: serde_json::Value = serde_json::from_str(&native).unwrap();
    assert_eq!(native["time"], "2025-01-01T00:00:01.000Z");

    // Leaf's decode example: 1567733700834 ms, worker 39, sequence 3448.
    let leaf = ((1_567_733_700_834u64 - 1_288_834_974_657) << 22) | (39 << 12) | 3448;
    let leaf = leaf.to_string();
    for (peer, expected) in [
        (
            "leaf",
            r#"{"workerId":"39","sequenceId":"3448","timestamp":"1567733700834(2019-09-06 01:35:00.834)"}"#.to_owned(),
        ),
        (
            "bwmarrin",
            format!(r#"{{"id":"{leaf}","time":1567733700834,"node":39,"step":3448}}"#),
        ),
    ] {
        let shown = stdout(&ferroflake(&["decode", &leaf, "--as", peer]));
        assert_eq!(shown.trim_end(), expected, "{peer}");
    }
    let cosid = stdout(&ferroflake(&["decode", &leaf, "--as", "cosid"]));
    let cosid: serde_json::Value = serde_json::from_str(&cosid).unwrap();
    assert_eq!(cosid["friendlyId"], "20190906013500834-39-3448");

    for (args, why) in [
        (&["decode", "1", "--as", "Leaf"][..], "invalid value 'Leaf'"),
        (
            &["decode", "1", "--as", "leaf", "--json"],
            "cannot be used with",
        ),
        (
            &[
                "decode",
                "9007199254740992",
                "--layout",
                "js53",
                "--as",
                "leaf",
            ],
            "is not a js53 ID",
        ),
    ] {
        let (code, stderr) = refusal(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

#[test]
fn compose_builds_the_id_decode_takes_apart() {
    // sonyflake v2's Compose(2025-01-01T00:00:01.009Z, 3, 258): 100 whole 10 ms units.
    let v2 = like(&["sonyflake-v2"]);
    let id = stdout(&ferroflake(&[
        "compose",
        "--layout",
        &v2,
        "--time",
        "2025-01-01T00:00:01.009Z",
        "--sequence",
        "3",
        "--node",
        "258",
    ]));
    assert_eq!(
        id.trim_end(),
        ((100u64 << 24) | (3 << 16) | 258).to_string()
    );

    // Leaf's example, from its parts, and back; also in another text form.
    let leaf = ((1_567_733_700_834u64 - 1_288_834_974_657) << 22) | (39 << 12) | 3448;
    let parts = [
        "--time",
        "1567733700834",
        "--node",
        "39",
        "--sequence",
        "3448",
    ];
    let id = stdout(&ferroflake(&[&["compose"][..], &parts].concat()));
    assert_eq!(id.trim_end(), leaf.to_string());
    let base62 = stdout(&ferroflake(
        &[&["compose"][..], &parts, &["--format", "base62"]].concat(),
    ));
    let decoded = stdout(&ferroflake(&[
        "decode",
        base62.trim_end(),
        "--format",
        "base62",
        "--as",
        "bwmarrin",
    ]));
    assert!(decoded.contains(r#""node":39,"step":3448"#), "{decoded}");

    for (args, why) in [
        (&["--time", "0"][..], "before the layout's epoch"),
        (
            &["--time", "1567733700834", "--node", "1024"],
            "node id 1024",
        ),
        (
            &["--time", "1567733700834", "--sequence", "4096"],
            "sequence",
        ),
        (
            &["--time", "2019-02-29T00:00:00Z"],
            "--time \"2019-02-29T00:00:00Z\"",
        ),
        (&["--time", "1,tick=2ms"], "no ','"),
        (&["--node", "1"], "--time"),
    ] {
        let (code, stderr) = refusal(&[&["compose"][..], args].concat());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}
