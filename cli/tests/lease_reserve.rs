//! `ferroflake lease reserve` and `unreserve`: a fleet that migrates while its old
//! generator still runs. The old generator issues under node ids it was given by hand
//! (`--node`); the new processes lease theirs from a registry in which those ids are
//! reserved. The registries' own handling of reservations is the lease conformance suite's
//! (`reservations_are_never_claimed`, on every store).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};

use ferroflake::Layout;

mod common;
use common::{ferroflake, fresh_dir, stderr, stdout, BIN};

/// Two node bits: four ids, two of them the old fleet's.
const LAYOUT: &str = "41/2/12@2020-01-01T00:00:00Z";

fn next(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(["next", "--layout", LAYOUT, "--format", "dec"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A generator's output, read line by line.
struct Issuing {
    child: Child,
    lines: BufReader<ChildStdout>,
}

impl Issuing {
    fn start(args: &[&str]) -> Issuing {
        let mut child = next(args);
        let lines = BufReader::new(child.stdout.take().unwrap());
        Issuing { child, lines }
    }

    /// The next ID, once the generator issues it.
    fn first(&mut self) -> u64 {
        let mut line = String::new();
        self.lines.read_line(&mut line).unwrap();
        line.trim()
            .parse()
            .unwrap_or_else(|_| panic!("no ID: {line:?}"))
    }

    /// Every ID still to come; the generator must succeed.
    fn rest(self) -> Vec<u64> {
        let ids = self
            .lines
            .lines()
            .map(|l| l.unwrap().parse::<u64>().unwrap())
            .collect();
        let out = self.child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a generator failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ids
    }
}

/// The old fleet holds node ids 0 and 1 without the registry; the ids are reserved, so the
/// new processes lease 2 and 3, a third finds no free id, and no ID is issued twice. Once
/// the old fleet has stopped, unreserving gives each id a high-water mark above every ID
/// the old fleet issued under it.
#[test]
fn a_mixed_fleet_never_shares_a_node_id() {
    let dir = fresh_dir("lease-reserve", "mixed");
    let registry = dir.to_str().unwrap();
    let reserved = stdout(&ferroflake(&[
        "lease",
        "reserve",
        "0-1",
        "--lease",
        registry,
        "--holder",
        "old fleet",
    ]));
    assert_eq!(
        reserved,
        "node 0: reserved for old fleet\nnode 1: reserved for old fleet\n"
    );
    let again = stdout(&ferroflake(&["lease", "reserve", "1", "--lease", registry]));
    assert_eq!(again, "node 1: already reserved\n");

    // The new fleet first: each prints its first ID once it holds its id and the new
    // registry's floor has passed.
    let mut new_fleet: Vec<(Issuing, u64)> = (0..2)
        .map(|_| {
            let mut issuing = Issuing::start(&["--lease", registry, "-n", "400000"]);
            let first = issuing.first();
            (issuing, first)
        })
        .collect();
    // Both hold their ids now: a third has none left, the reserved ones included.
    let third = next(&["--lease", registry, "-n", "1"])
        .wait_with_output()
        .unwrap();
    assert!(
        !third.status.success(),
        "a third process must find no free id"
    );
    let refusal = String::from_utf8_lossy(&third.stderr);
    assert!(refusal.contains("node id"), "{refusal}");
    // The old fleet issues beside them, under the reserved ids.
    let old_fleet: Vec<Issuing> = ["0", "1"]
        .iter()
        .map(|node| Issuing::start(&["--node", node, "-n", "200000"]))
        .collect();
    let old_ids: Vec<Vec<u64>> = old_fleet.into_iter().map(Issuing::rest).collect();
    let new_ids: Vec<Vec<u64>> = new_fleet
        .drain(..)
        .map(|(issuing, first)| [vec![first], issuing.rest()].concat())
        .collect();

    let layout = Layout::parse(LAYOUT).unwrap();
    let node_of = |id: u64| layout.decode(id).unwrap().node;
    for ids in &new_ids {
        let node = node_of(ids[0]);
        assert!(
            node >= 2,
            "a new process leased node id {node}, which the old fleet holds"
        );
        assert!(ids.iter().all(|&id| node_of(id) == node));
    }
    let mut seen = HashSet::new();
    let total: usize = old_ids.iter().chain(&new_ids).map(Vec::len).sum();
    for &id in old_ids.iter().chain(&new_ids).flatten() {
        assert!(seen.insert(id), "ID {id} was issued twice");
    }
    assert_eq!(seen.len(), total);
    assert_eq!(total, 2 * 200_000 + 2 * 400_000);

    // The old fleet has stopped: give its ids back. The next holder of each waits past
    // the last ID the old fleet issued under it.
    let lifted = stdout(&ferroflake(&[
        "lease",
        "unreserve",
        "0-2",
        "--lease",
        registry,
    ]));
    let lines: Vec<&str> = lifted.lines().collect();
    assert!(lines[0].starts_with("node 0: unreserved; its next holder issues after "));
    assert!(lines[1].starts_with("node 1: unreserved; "));
    assert_eq!(lines[2], "node 2: not reserved, left as it is");
    for (node, ids) in old_ids.iter().enumerate() {
        let shown = stdout(&ferroflake(&[
            "lease",
            "show",
            &node.to_string(),
            "--lease",
            registry,
            "--format",
            "json",
        ]));
        let record: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(record["state"], "released", "{shown}");
        let last = ids
            .iter()
            .map(|&id| layout.decode(id).unwrap().timestamp_ms)
            .max();
        let mark = record["high_water_ms"].as_u64().unwrap();
        assert!(
            Some(mark) > last,
            "node {node}'s mark {mark} must be past the old fleet's last ID ({last:?})"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Node lists and holders that cannot be reserved are refused before the registry is
/// opened (exit 2); `--from-leaf` needs a ZooKeeper address.
#[test]
fn refusals_name_what_is_wrong() {
    let dir = fresh_dir("lease-reserve", "refusals");
    let registry = dir.to_str().unwrap();
    for (nodes, why) in [
        ("3-1", "runs backwards"),
        ("65536", "is not a node id"),
        ("1,,2", "is not a node id"),
    ] {
        let out = ferroflake(&["lease", "reserve", nodes, "--lease", registry]);
        assert_eq!(out.status.code(), Some(2), "{nodes}");
        assert!(stderr(&out).contains(why), "{nodes}: {}", stderr(&out));
    }
    assert!(!dir.exists(), "a refused list must not make the registry");
    // Empty, blank, or reading as another name in `lease list` (a right-to-left override).
    for holder in ["", "  ", "old-\u{202e}1-dlo"] {
        let out = ferroflake(&[
            "lease", "reserve", "1", "--lease", registry, "--holder", holder,
        ]);
        assert_eq!(out.status.code(), Some(2), "{holder:?}");
        assert!(stderr(&out).contains("holder"), "{}", stderr(&out));
        assert!(!stderr(&out).contains('\u{202e}'), "{}", stderr(&out));
        assert!(!dir.exists(), "a refused holder must not make the registry");
    }
    let out = ferroflake(&[
        "lease",
        "reserve",
        "--from-leaf",
        "redis://127.0.0.1:1/",
        "--lease",
        registry,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Nothing to unreserve at a mistyped path: refused, and no registry made there.
    let out = ferroflake(&["lease", "unreserve", "1", "--lease", registry]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    assert!(!dir.exists());
    // A mark years ahead would keep every later holder of the id from starting.
    stdout(&ferroflake(&["lease", "reserve", "1", "--lease", registry]));
    let out = ferroflake(&[
        "lease",
        "unreserve",
        "1",
        "--lease",
        registry,
        "--high-water",
        "2100-01-01T00:00:00Z",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ahead of this clock"),
        "{}",
        stderr(&out)
    );
    let shown = stdout(&ferroflake(&["lease", "show", "1", "--lease", registry]));
    assert!(
        shown.contains("reserved"),
        "a refused unreserve changes nothing: {shown}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
