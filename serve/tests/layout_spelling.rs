//! Custom layouts over real HTTP: a server whose `layout` is a spelling issues and decodes
//! IDs of that layout, and `/v1/decode/{id}?layout=` reads a spelling as it reads a preset.

mod common;

use std::time::Duration;

use common::Place;
use ferroflake::Layout;

/// bwmarrin/snowflake with `NodeBits = 8`, `StepBits = 14` and its default epoch.
const BWMARRIN_8_14: &str = "41/8/14@2010-11-04T01:42:54.657Z";

/// sonyflake v2 with `BitsSequence = 10`, `BitsMachineID = 12`, `TimeUnit = 1ms` and a
/// start time of 2025-01-01: time above sequence above machine id.
const SONYFLAKE_V2: &str = "41/12/10@2025-01-01T00:00:00Z,order=sequence_then_node";

#[test]
fn a_server_with_a_spelled_layout_issues_and_decodes_ids_of_that_layout() {
    let place = Place::new();
    let mut config = place.config();
    config.layout = BWMARRIN_8_14.into();
    let server = place.start(config);
    server.wait_ready(Duration::from_secs(15));
    let layout = Layout::parse(BWMARRIN_8_14).unwrap();

    let id: u64 = server.get("/api/snowflake/get/k").body.parse().unwrap();
    let parts = layout.decode(id).unwrap();
    assert!(parts.node <= 255, "{parts:?}");

    // The server's own layout decodes by default, on both decode routes.
    let decoded = server.get(&format!("/v1/decode/{id}")).json();
    assert_eq!(decoded["layout"], BWMARRIN_8_14);
    assert_eq!(decoded["node"].as_u64(), Some(parts.node));
    assert_eq!(decoded["sequence"].as_u64(), Some(parts.sequence));
    assert_eq!(decoded["timestamp_ms"].as_u64(), Some(parts.timestamp_ms));
    let leaf = server
        .get(&format!("/decodeSnowflakeId?snowflakeId={id}"))
        .json();
    assert_eq!(leaf["workerId"], parts.node.to_string());
    assert_eq!(leaf["sequenceId"], parts.sequence.to_string());
    server.stop();
}

#[test]
fn the_decode_route_reads_a_spelling_and_refuses_a_bad_one_saying_where() {
    let place = Place::new();
    let server = place.start(place.config());
    server.wait_ready(Duration::from_secs(15));

    // Machine 513, sequence 7, 1000 ms after the start time.
    let id: u64 = (1000 << 22) | (7 << 12) | 513;
    let decoded = server
        .get(&format!("/v1/decode/{id}?layout={SONYFLAKE_V2}"))
        .json();
    assert_eq!(decoded["node"].as_u64(), Some(513), "{decoded}");
    assert_eq!(decoded["sequence"].as_u64(), Some(7));
    assert_eq!(decoded["time"], "2025-01-01T00:00:01.000Z");

    // `+` is a space in a query, as in forms: shard bits come as %2B.
    let sharded = 5u64 << 16 | 3 << 4 | 9;
    let decoded = server
        .get(&format!("/v1/decode/{sharded}?layout=41/6/12%2B4@0"))
        .json();
    assert_eq!(
        (decoded["node"].as_u64(), decoded["shard"].as_u64()),
        (Some(5), Some(9)),
        "{decoded}"
    );

    for bad in [
        "41/10/12@2010-13-01T00:00:00Z",
        "41/10/13@0",
        "41/10/12@0,tick=0ms",
        "41/6/12+4@0",
        "snowflake",
    ] {
        let a = server.get(&format!("/v1/decode/{id}?layout={bad}"));
        assert_eq!(
            (a.status, a.kind().as_str()),
            (400, "BAD_LAYOUT"),
            "{bad}: {a:?}"
        );
    }
    let a = server.get(&format!(
        "/v1/decode/{id}?layout=41/10/12@2010-13-01T00:00:00Z"
    ));
    assert!(a.body.contains("at byte 14"), "{a:?}");
    server.stop();
}

#[test]
fn a_config_with_a_bad_spelling_is_refused_before_serving() {
    let place = Place::new();
    let mut config = place.config();
    config.layout = "41/10/12@yesterday".into();
    let refusal = config.check().unwrap_err();
    assert!(
        refusal.contains("41/10/12@yesterday") && refusal.contains("at byte 9"),
        "{refusal}"
    );
}
