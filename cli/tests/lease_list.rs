//! `ferroflake lease list` on the embedded registry: the table, the JSON, and the
//! refusals. The server registries' listings are checked by the lease conformance suite.

use std::time::Duration;

use ferroflake_lease::{EmbeddedRegistry, LeaseRequest, Registry, Renewal};

mod common;
use common::{ferroflake, fresh_dir, stderr, stdout};

fn request(holder: &str) -> LeaseRequest {
    LeaseRequest {
        node_count: 8,
        ttl: Duration::from_secs(10),
        quarantine: Duration::from_secs(2),
        holder: holder.into(),
        max_ttl: Duration::from_secs(10),
        prefer_node: None,
    }
}

/// Two holders claim, one releases: the table shows both, aligned, with the holders'
/// names, states, expiry and marks; the JSON says the same as one object.
#[test]
fn lists_holders_states_and_marks() {
    let dir = fresh_dir("lease-list", "two");
    let registry = EmbeddedRegistry::open(&dir).unwrap();
    let gone = registry.acquire(&request("web-1:41")).unwrap();
    let kept = registry.acquire(&request("batch host:7")).unwrap();
    registry.release(&gone, 1_700_000_000_123).unwrap();
    let skewed = Renewal {
        clock_skew_ms: Some(-37),
        ..Renewal::new(Duration::from_secs(10), 0)
    };
    registry.renew(&kept, &skewed).unwrap();
    // A name no claim may use now, as a record written by hand or by an older version
    // holds it: a terminal escape and a right-to-left override.
    let records = dir.join("leases.json");
    let text = std::fs::read_to_string(&records).unwrap();
    let planted = text.replace("\"batch host:7\"", "\"batch host:7\\u001b[2J\\u202e\"");
    assert_ne!(planted, text, "the holder is in the records: {text}");
    std::fs::write(&records, planted).unwrap();
    let path = dir.to_str().unwrap();

    let text = stdout(&ferroflake(&["lease", "list", "--lease", path]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "a title, a header and two rows: {text}");
    assert!(
        lines[0].starts_with(&format!(
            "the embedded registry at {path}: 2 node ids; a lost-records floor runs for "
        )),
        "a new registry's floor runs for 12 s after its first claim: {text}"
    );
    let header = lines[1];
    assert!(header.starts_with("NODE  HOLDER"), "{text}");
    let at = |column: &str| header.find(column).unwrap();
    let released = lines[1 + gone.node_id as usize + 1];
    let held = lines[1 + kept.node_id as usize + 1];
    assert_eq!(&released[at("HOLDER")..][..8], "web-1:41", "{text}");
    assert_eq!(&released[at("STATE")..][..8], "released", "{text}");
    assert_eq!(&released[at("EXPIRES IN")..][..1], "-", "{text}");
    assert!(
        released[at("SINCE")..].starts_with("0s ago") || released[at("SINCE")..].contains("ms ago"),
        "claimed just now: {text}"
    );
    assert_eq!(
        &released[at("LAST RENEWAL")..][..2],
        "- ",
        "never renewed: {text}"
    );
    assert_eq!(&released[at("SKEW")..][..2], "- ", "{text}");
    assert_eq!(&held[at("SKEW")..][..6], "-37ms ", "{text}");
    assert!(
        held[at("LAST RENEWAL")..].contains("ms ago")
            || held[at("LAST RENEWAL")..].starts_with("0s ago"),
        "renewed just now: {text}"
    );
    assert_eq!(
        &released[at("HIGH-WATER MARK")..],
        "2023-11-14T22:13:20.123Z",
        "{text}"
    );
    assert_eq!(
        &held[at("HOLDER")..][..29],
        "batch host:7\\u{1b}[2J\\u{202e}",
        "a control character and an override are shown escaped: {text}"
    );
    assert_eq!(&held[at("STATE")..][..5], "held ", "{text}");
    assert!(
        held[at("EXPIRES IN")..].starts_with('9') || held[at("EXPIRES IN")..].starts_with("10s"),
        "a 10 s TTL just claimed: {text}"
    );

    let json = stdout(&ferroflake(&[
        "lease", "list", "--lease", path, "--format", "json",
    ]));
    let view: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(view["registry"], path);
    assert_eq!(view["backend"], "embedded");
    assert!(view["floor_wait_ms"].as_u64().unwrap() > 0, "{json}");
    let nodes = view["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{json}");
    let node = |id: u64| nodes.iter().find(|n| n["node_id"] == id).unwrap();
    let (released, held) = (node(gone.node_id), node(kept.node_id));
    assert_eq!(released["holder"], "web-1:41");
    assert_eq!(released["state"], "released");
    assert_eq!(released["epoch"], gone.epoch);
    assert_eq!(released["high_water_ms"], 1_700_000_000_123_u64);
    assert_eq!(released["high_water"], "2023-11-14T22:13:20.123Z");
    assert!(released["expires_ms"].is_null(), "{json}");
    assert_eq!(
        held["holder"], "batch host:7\x1b[2J\u{202e}",
        "JSON keeps the name as given"
    );
    assert_eq!(held["state"], "held");
    assert_eq!(held["epoch"], kept.epoch);
    let left = held["expires_in_ms"].as_u64().unwrap();
    assert!(left > 0 && left <= 10_000, "{json}");
    assert!(held["high_water"].is_null(), "no mark yet: {json}");
    let now = view["now_ms"].as_u64().unwrap();
    for node in [released, held] {
        let since = node["since_ms"].as_u64().expect("a claim records its time");
        assert!(since <= now, "{json}");
        assert_eq!(node["since_ago_ms"], now - since, "{json}");
    }
    assert!(
        released["last_renewal_ms"].is_null(),
        "never renewed: {json}"
    );
    assert!(released["clock_skew_ms"].is_null(), "{json}");
    assert!(held["last_renewal_ms"].as_u64().unwrap() <= now, "{json}");
    assert_eq!(held["clock_skew_ms"], -37, "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty registry lists nothing and starts no floor; a missing directory is not made;
/// a relative path is a usage error; a store address shows no password.
#[test]
fn lists_nothing_and_refuses_as_the_other_lease_commands() {
    let dir = fresh_dir("lease-list", "empty");
    EmbeddedRegistry::open(&dir).unwrap();
    let path = dir.to_str().unwrap();
    for _ in 0..2 {
        let text = stdout(&ferroflake(&["lease", "list", "--lease", path]));
        assert_eq!(
            text,
            format!("the embedded registry at {path}: 0 node ids; no floor runs\n")
        );
    }
    assert!(
        !dir.join("leases.json").exists(),
        "listing writes no records"
    );
    let json = stdout(&ferroflake(&[
        "lease", "list", "--lease", path, "--format", "json",
    ]));
    let view: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(view["nodes"], serde_json::json!([]));
    assert!(view["floor_until_ms"].is_null());

    let missing = dir.join("not-there");
    let output = ferroflake(&["lease", "list", "--lease", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty());
    assert!(stderr(&output).contains("does not exist"), "{output:?}");
    assert!(!missing.exists(), "listing makes no registry");

    let output = ferroflake(&["lease", "list", "--lease", "relative/dir"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    // Port 1 on loopback: nothing listens there.
    let output = ferroflake(&["lease", "list", "--lease", "redis://u:s3cr3t@127.0.0.1:1/"]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    // After the warning that the address holds a secret (the secret hidden there too).
    assert!(
        message
            .lines()
            .any(|line| line.starts_with("ferroflake: cannot list ")),
        "{message}"
    );
    assert!(!message.contains("s3cr3t"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lease show NODE`: one node id's record, as text (one field a line) and as JSON (the
/// fields `list` gives each node, with the registry); a node id with no record is exit 1,
/// one that is not a number exit 2; a store address shows no password.
#[test]
fn shows_one_node_ids_record() {
    let dir = fresh_dir("lease-list", "show");
    let registry = EmbeddedRegistry::open(&dir).unwrap();
    let grant = registry.acquire(&request("web-2:99")).unwrap();
    let renewal = Renewal {
        clock_skew_ms: Some(12),
        ..Renewal::new(Duration::from_secs(10), 1_700_000_000_123)
    };
    registry.renew(&grant, &renewal).unwrap();
    let path = dir.to_str().unwrap();
    let node = grant.node_id.to_string();

    let text = stdout(&ferroflake(&["lease", "show", &node, "--lease", path]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("the embedded registry at {path}: node id {node}"),
        "{text}"
    );
    let field = |name: &str| -> &str {
        let line = lines[1..]
            .iter()
            .find(|l| l.starts_with(&format!("{name}  ")))
            .unwrap_or_else(|| panic!("no {name} line: {text}"));
        line[name.len()..].trim_start()
    };
    assert_eq!(field("holder"), "web-2:99");
    assert_eq!(field("state"), "held");
    assert!(field("since").ends_with(" ago"), "{text}");
    assert!(field("last renewal").ends_with(" ago"), "{text}");
    assert!(
        field("expires in").starts_with('9') || field("expires in").starts_with("10s"),
        "{text}"
    );
    assert_eq!(field("high-water mark"), "2023-11-14T22:13:20.123Z");
    assert_eq!(
        field("clock skew"),
        "+12ms (the holder's clock ahead of the registry's at that renewal)"
    );
    assert_eq!(field("epoch"), grant.epoch.to_string());

    let json = stdout(&ferroflake(&[
        "lease", "show", &node, "--lease", path, "--format", "json",
    ]));
    let shown: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(shown["registry"], path);
    assert_eq!(shown["backend"], "embedded");
    assert_eq!(shown["node_id"], grant.node_id);
    assert_eq!(shown["holder"], "web-2:99");
    assert_eq!(shown["state"], "held");
    assert_eq!(shown["epoch"], grant.epoch);
    assert_eq!(shown["high_water_ms"], 1_700_000_000_123_u64);
    assert_eq!(shown["clock_skew_ms"], 12);
    let now = shown["now_ms"].as_u64().unwrap();
    assert!(shown["since_ms"].as_u64().unwrap() <= now, "{json}");
    assert!(shown["last_renewal_ms"].as_u64().unwrap() <= now, "{json}");
    assert!(shown["expires_in_ms"].as_u64().unwrap() <= 10_000, "{json}");

    let output = ferroflake(&["lease", "show", "7", "--lease", path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).contains("has no record of node id 7"),
        "{output:?}"
    );

    for not_a_number in ["x", "-1", "1.5"] {
        let output = ferroflake(&["lease", "show", not_a_number, "--lease", path]);
        assert_eq!(output.status.code(), Some(2), "{not_a_number}: {output:?}");
        assert!(output.stdout.is_empty());
    }

    let missing = dir.join("not-there");
    let output = ferroflake(&["lease", "show", "0", "--lease", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stderr(&output).contains("does not exist"), "{output:?}");
    assert!(!missing.exists(), "showing makes no registry");

    let output = ferroflake(&[
        "lease",
        "show",
        "0",
        "--lease",
        "redis://u:s3cr3t@127.0.0.1:1/",
    ]);
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    // After the warning that the address holds a secret (the secret hidden there too).
    assert!(
        message
            .lines()
            .any(|line| line.starts_with("ferroflake: cannot show ")),
        "{message}"
    );
    assert!(!message.contains("s3cr3t"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}
