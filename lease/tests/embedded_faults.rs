//! The embedded registry's files changed under running holders, as a cleaner, an operator
//! or a backup tool changes them: each loss must start a floor long enough for every
//! holder of the lost records to have stopped, so no new claim issues beside a live one.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use ferroflake_lease::{EmbeddedRegistry, Grant, LeaseRequest, Registry, Renewal};

const TTL: Duration = Duration::from_millis(300);
const QUARANTINE: Duration = Duration::from_millis(100);
/// The lost-records window of [`request`]: max_ttl + quarantine.
const WINDOW: Duration = Duration::from_millis(400);

fn request(holder: &str) -> LeaseRequest {
    LeaseRequest {
        node_count: 4,
        ttl: TTL,
        quarantine: QUARANTINE,
        holder: holder.into(),
        max_ttl: TTL,
        prefer_node: None,
    }
}

/// A registry where node 0 is held and the new registry's own floor has passed, so that
/// a claim made now would wait for nothing.
fn settled() -> (tempfile::TempDir, EmbeddedRegistry, Grant) {
    let root = tempfile::tempdir().unwrap();
    let registry = EmbeddedRegistry::open(root.path().join("leases")).unwrap();
    let asked = Instant::now();
    let holder = registry.acquire(&request("live holder")).unwrap();
    // Renewing as a holder does while it waits the floor out.
    while let Some(left) = (asked + holder.floor_wait).checked_duration_since(Instant::now()) {
        thread::sleep(left.min(TTL / 3));
        registry.renew(&holder, &Renewal::new(TTL, 0)).unwrap();
    }
    (root, registry, holder)
}

/// A claim after the loss: if it is given a live holder's id, it must not issue before
/// that holder has surely stopped; and any claim must wait out a whole window.
fn assert_floor_after_loss(registry: &EmbeddedRegistry, live: &Grant, what: &str) {
    let claim = registry.acquire(&request("newcomer")).unwrap();
    assert!(
        claim.floor_wait >= WINDOW - Duration::from_millis(50),
        "{what}: a claim after lost records must wait out the window ({WINDOW:?}), got {:?} \
         (node {}, live holder on node {})",
        claim.floor_wait,
        claim.node_id,
        live.node_id
    );
}

fn records(registry: &EmbeddedRegistry) -> std::path::PathBuf {
    registry.dir().join("leases.json")
}

#[test]
fn a_deleted_lock_file_means_lost_records() {
    let (_root, registry, live) = settled();
    let quiet = registry.acquire(&request("before the loss")).unwrap();
    assert!(
        quiet.floor_wait.is_zero(),
        "settled: {:?}",
        quiet.floor_wait
    );
    fs::remove_file(registry.dir().join("leases.lock")).unwrap();
    assert_floor_after_loss(&registry, &live, "lock file deleted");
}

#[test]
fn an_emptied_records_file_means_lost_records() {
    let (_root, registry, live) = settled();
    fs::write(
        records(&registry),
        r#"{"format":1,"next_epoch":0,"nodes":{}}"#,
    )
    .unwrap();
    assert_floor_after_loss(&registry, &live, "records replaced by an empty file");
}

/// The records file rewritten by hand as valid JSON, `edit` applied to it: the lock
/// file's count still matches, but the registry did not write what it now says.
fn edit_records(registry: &EmbeddedRegistry, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = records(registry);
    let mut value: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    edit(&mut value);
    fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
}

#[test]
fn a_record_deleted_by_hand_means_lost_records() {
    let (_root, registry, live) = settled();
    let other = registry.acquire(&request("another holder")).unwrap();
    registry.renew(&other, &Renewal::new(TTL, 0)).unwrap();
    edit_records(&registry, |value| {
        let nodes = value["nodes"].as_object_mut().unwrap();
        assert!(nodes.remove(&live.node_id.to_string()).is_some());
    });
    assert_floor_after_loss(&registry, &live, "one holder's record deleted by hand");
}

/// The digest taken out of the lock file as well, and the lock file's change time out of
/// the records (both as an earlier version wrote them): a lock file with no digest vouches
/// for nothing, so the edit still means lost records.
#[test]
fn a_record_deleted_with_the_lock_files_digest_means_lost_records() {
    let (_root, registry, live) = settled();
    edit_records(&registry, |value| {
        let nodes = value["nodes"].as_object_mut().unwrap();
        assert!(nodes.remove(&live.node_id.to_string()).is_some());
        value["lock_ctime_ns"] = serde_json::json!(0);
    });
    let lock = registry.dir().join("leases.lock");
    let mut witness: serde_json::Value = serde_json::from_slice(&fs::read(&lock).unwrap()).unwrap();
    assert!(witness.as_object_mut().unwrap().remove("digest").is_some());
    fs::write(&lock, serde_json::to_vec(&witness).unwrap()).unwrap();
    assert_floor_after_loss(&registry, &live, "a record and the lock's digest deleted");
}

#[test]
fn a_record_expired_by_hand_means_lost_records() {
    let (_root, registry, live) = settled();
    edit_records(&registry, |value| {
        value["nodes"][live.node_id.to_string()]["expires_ms"] = serde_json::json!(0);
    });
    assert_floor_after_loss(
        &registry,
        &live,
        "a live holder's expiry moved back by hand",
    );
}

#[test]
fn a_restored_records_file_means_lost_records() {
    let (root, registry, _live) = settled();
    let backup = root.path().join("backup.json");
    fs::copy(records(&registry), &backup).unwrap();
    let later = registry
        .acquire(&request("claimed after the backup"))
        .unwrap();
    registry.renew(&later, &Renewal::new(TTL, 0)).unwrap();
    fs::copy(&backup, records(&registry)).unwrap();
    assert_floor_after_loss(&registry, &later, "records restored from a backup");
}

#[test]
fn the_longest_window_asked_for_outlives_the_records() {
    let (_root, registry, live) = settled();
    let long = LeaseRequest {
        ttl: Duration::from_secs(3),
        max_ttl: Duration::from_secs(3),
        ..request("a holder with a longer ttl")
    };
    let long_holder = registry.acquire(&long).unwrap();
    fs::remove_file(records(&registry)).unwrap();
    let claim = registry.acquire(&request("short ttl newcomer")).unwrap();
    assert!(
        claim.floor_wait >= Duration::from_secs(3),
        "the floor after lost records must outlast the longest ttl any holder asked for \
         (3 s), got {:?} (holders on nodes {} and {})",
        claim.floor_wait,
        live.node_id,
        long_holder.node_id
    );
}

#[test]
fn a_floor_never_waits_past_one_window() {
    let (_root, registry, live) = settled();
    let path = records(&registry);
    let mut value: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    // A floor far ahead, as a process in another time namespace would write it.
    value["floor_until_ms"] = serde_json::json!(u64::MAX / 2);
    fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    let claim = registry.acquire(&request("newcomer")).unwrap();
    assert!(
        claim.floor_wait <= WINDOW,
        "a floor is never longer than the window ({WINDOW:?}), got {:?} (live holder on node \
         {})",
        claim.floor_wait,
        live.node_id
    );
}

#[test]
fn a_registry_restored_whole_means_lost_records() {
    let (root, registry, _live) = settled();
    let backup = root.path().join("backup");
    fs::create_dir(&backup).unwrap();
    for name in ["leases.json", "leases.lock"] {
        fs::copy(registry.dir().join(name), backup.join(name)).unwrap();
    }
    let later = registry
        .acquire(&request("claimed after the backup"))
        .unwrap();
    registry.renew(&later, &Renewal::new(TTL, 0)).unwrap();
    // Both files back, as a backup tool restores the directory: they agree with each other.
    for name in ["leases.json", "leases.lock"] {
        fs::copy(backup.join(name), registry.dir().join(name)).unwrap();
    }
    assert_floor_after_loss(&registry, &later, "both files restored from a backup");
}

#[test]
fn a_records_file_of_no_bytes_means_lost_records() {
    let (_root, registry, live) = settled();
    fs::write(records(&registry), "").unwrap();
    assert_floor_after_loss(&registry, &live, "records file truncated to nothing");
}

/// A FIFO planted as the records file would block the read, with the lock held, for
/// ever: it is refused at once.
#[test]
fn a_fifo_in_place_of_the_records_is_refused_not_waited_on() {
    let (_root, registry, _live) = settled();
    fs::remove_file(records(&registry)).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(records(&registry))
        .status()
        .unwrap();
    assert!(status.success());
    let (done, answer) = std::sync::mpsc::channel();
    let claimant = registry.clone();
    thread::spawn(move || {
        let _ = done.send(claimant.acquire(&request("newcomer")));
    });
    let outcome = answer
        .recv_timeout(Duration::from_secs(20))
        .expect("the claim must not wait on a FIFO");
    let error = outcome.expect_err("a FIFO holds no records");
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

/// A window written into the records by hand, far longer than any claim may ask for,
/// stalls claims no longer than the longest window a registry honours.
#[test]
fn a_hand_written_window_is_cut_to_the_longest() {
    let (_root, registry, _live) = settled();
    let path = records(&registry);
    let mut value: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    value["floor_window_ms"] = serde_json::json!(1_000_000_000u64);
    value["floor_until_ms"] = serde_json::json!(u64::MAX / 2);
    fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
    let claim = registry.acquire(&request("newcomer")).unwrap();
    assert!(
        claim.floor_wait <= ferroflake_lease::protocol::LONGEST_WINDOW,
        "{:?}",
        claim.floor_wait
    );
    let too_long = LeaseRequest {
        max_ttl: Duration::from_secs(3600),
        ..request("an hour's ttl")
    };
    assert_eq!(
        registry.acquire(&too_long).unwrap_err().name(),
        "INVALID_CONFIG"
    );
}
