//! This host's record of the ranges it took, around stores that lose everything, marks
//! included: a new store under the same address is refused below what the host took.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

mod support;

use ferroflake_segment::host_record::HostRecorded;
use ferroflake_segment::{MemoryStore, Range, SegmentError, SegmentStore};

const ADDRESS: &str = "redis://127.0.0.1:6379/0 (prefix ferroflake:segment:)";

/// A store that has lost everything, under this host's record kept in `dir`.
fn fresh_store(dir: &Path) -> HostRecorded {
    HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, dir).unwrap()
}

fn rewound(result: Result<impl std::fmt::Debug, SegmentError>, what: &str) -> String {
    match result {
        Err(SegmentError::Rewound { detail, .. }) => detail,
        other => panic!("{what}: expected Rewound, got {other:?}"),
    }
}

#[test]
fn a_store_that_lost_everything_is_refused_below_what_this_host_took() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(dir.path());
    store.create("orders", 1, 10).unwrap();
    store.allocate("orders", 10).unwrap();
    let last = store.allocate("orders", 10).unwrap().range; // 11..21
    assert!(
        matches!(
            store.create("orders", 1, 10),
            Err(SegmentError::KeyExists { .. })
        ),
        "a create at start while the row is there is the usual KeyExists"
    );
    drop(store);

    // Marks and rows gone: a create at the old start, as every start-up script does.
    let lost = fresh_store(dir.path());
    let detail = rewound(lost.create("orders", 1, 10), "create at the old start");
    assert!(detail.contains("this host's record"), "{detail}");
    // Created behind the record's back (another host, or by hand), it still cannot issue.
    let raw = Arc::new(MemoryStore::new());
    raw.create("orders", 1, 10).unwrap();
    let wrapped = HostRecorded::in_dir(raw, ADDRESS, dir.path()).unwrap();
    rewound(
        wrapped.allocate("orders", 10),
        "a range below the host's record",
    );

    // Created above everything the host took, it goes on.
    let above = fresh_store(dir.path());
    above.create("orders", last.end as i64, 10).unwrap();
    assert_eq!(above.allocate("orders", 10).unwrap().range.start, last.end);
}

#[test]
fn recovery_starts_above_this_hosts_record_and_give_back_lowers_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(dir.path());
    store.create("k", 1, 10).unwrap();
    let first = store.allocate("k", 10).unwrap().range; // 1..11
    let rest = Range {
        start: 4,
        end: first.end,
    };
    assert_eq!(store.give_back("k", rest, first.end), Ok(true));
    assert_eq!(
        store.allocate("k", 10).unwrap().range,
        Range { start: 4, end: 14 },
        "the rest given back is issued again: the host's record came down with it"
    );
    drop(store);

    let lost = fresh_store(dir.path());
    let row = lost.recover("k", 2, 10).unwrap();
    assert_eq!(row.max_id, 14, "this host's record is a floor too");
    assert_eq!(lost.allocate("k", 10).unwrap().range.start, 14);
}

#[test]
fn other_stores_have_records_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let one = fresh_store(dir.path());
    one.create("k", 1, 10).unwrap();
    one.allocate("k", 10).unwrap();
    let other = HostRecorded::in_dir(
        Arc::new(MemoryStore::new()),
        "sqlite:///srv/other.db",
        dir.path(),
    )
    .unwrap();
    other.create("k", 1, 10).expect("another store's key");
    assert_ne!(one.file(), other.file());
}

#[test]
fn a_garbled_planted_or_open_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(dir.path());
    store.create("k", 1, 10).unwrap();
    store.allocate("k", 10).unwrap();
    let file = store.file().to_owned();
    drop(store);

    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, b"another store\n").unwrap();
    let garbled = HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, dir.path());
    assert!(
        matches!(&garbled, Err(SegmentError::Store { detail, .. }) if detail.contains("garbled")),
        "{garbled:?}"
    );
    std::fs::write(&file, [&good[..], b"12\tzz\n"].concat()).unwrap();
    assert!(matches!(
        HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, dir.path()),
        Err(SegmentError::Store { .. })
    ));

    // A symbolic link planted in the record's place is never followed.
    std::fs::remove_file(&file).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::write(&elsewhere, &good).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert!(matches!(
        HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, dir.path()),
        Err(SegmentError::Unavailable { .. })
    ));
    std::fs::remove_file(&file).unwrap();

    // A directory others may write.
    let records = file.parent().unwrap();
    std::fs::set_permissions(records, std::fs::Permissions::from_mode(0o777)).unwrap();
    let open = HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, dir.path());
    assert!(
        matches!(&open, Err(SegmentError::Unavailable { detail, .. }) if detail.contains("writable by other users")),
        "{open:?}"
    );
}

/// Another user who owns a directory above the record could move the record away: refused.
#[test]
fn a_record_below_another_users_directory_is_refused() {
    if !rustix::process::getuid().is_root() {
        eprintln!("skipped: needs root to make a directory of another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
    let refused = HostRecorded::in_dir(Arc::new(MemoryStore::new()), ADDRESS, &theirs);
    assert!(
        matches!(&refused, Err(SegmentError::Unavailable { detail, .. }) if detail.contains("belongs to uid 65534")),
        "{refused:?}"
    );
}

/// A relative FERROFLAKE_STATE_DIR would be another directory in each working directory.
#[test]
fn a_relative_state_dir_is_refused() {
    std::env::set_var(ferroflake_segment::host_record::STATE_DIR_ENV, "state");
    assert!(matches!(
        ferroflake_segment::host_record::default_dir(),
        Err(SegmentError::InvalidConfig { .. })
    ));
    std::env::set_var(ferroflake_segment::host_record::STATE_DIR_ENV, "/srv/state");
    assert_eq!(
        ferroflake_segment::host_record::default_dir().unwrap(),
        Path::new("/srv/state")
    );
}

/// The record grows by a line per range and is written whole now and then: whichever, the
/// latest range of each key is what holds, and a line cut short by a crash is not read.
#[test]
fn the_latest_range_of_each_key_holds_however_the_record_was_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = fresh_store(dir.path());
    store.create("a", 1, 10).unwrap();
    store.create("b", 1, 10).unwrap();
    let mut last = store.allocate("b", 10).unwrap().range;
    for _ in 0..300 {
        store.allocate("a", 10).unwrap();
        last = store.allocate("b", 10).unwrap().range;
    }
    let file = store.file().to_owned();
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    assert!(lines < 200, "written whole as it grows: {lines} lines");
    drop(store);

    // A crash in the middle of adding a line: a lower end, cut short before its newline.
    let mut torn = std::fs::read(&file).unwrap();
    torn.extend_from_slice(format!("1\t{}", "62").as_bytes());
    std::fs::write(&file, torn).unwrap();

    for start in [1, last.start] {
        let raw = Arc::new(MemoryStore::new());
        raw.create("b", start as i64, 10).unwrap();
        let lost = HostRecorded::in_dir(raw, ADDRESS, dir.path()).unwrap();
        rewound(lost.allocate("b", 10), "a range below the latest one");
    }
    let raw = Arc::new(MemoryStore::new());
    raw.create("b", last.end as i64, 10).unwrap();
    let above = HostRecorded::in_dir(raw, ADDRESS, dir.path()).unwrap();
    assert_eq!(above.allocate("b", 10).unwrap().range.start, last.end);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'), "the cut line is gone: {text:?}");
}

/// A give-back the store applied whose answer never came back, as when the process ends
/// between the two (a second SIGTERM during a stop): this host's record came down first,
/// so the rest given back is issued again, not refused as the store going back.
#[test]
fn a_give_back_the_store_took_but_never_answered_does_not_read_as_going_back() {
    let dir = tempfile::tempdir().unwrap();
    let raw: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let switch = support::Switchable::new(Arc::clone(&raw));
    let store = HostRecorded::in_dir(switch.clone(), ADDRESS, dir.path()).unwrap();
    store.create("k", 1, 10).unwrap();
    let first = store.allocate("k", 10).unwrap().range; // 1..11
    let rest = Range {
        start: 4,
        end: first.end,
    };
    switch.set_give_back_answer_lost(true);
    assert!(matches!(
        store.give_back("k", rest, first.end),
        Err(SegmentError::Unavailable { .. })
    ));
    assert_eq!(
        raw.peek("k").unwrap().unwrap().max_id,
        4,
        "the store took it"
    );
    switch.set_give_back_answer_lost(false);
    drop(store);

    let restarted = HostRecorded::in_dir(switch, ADDRESS, dir.path()).unwrap();
    assert_eq!(
        restarted.allocate("k", 10).unwrap().range,
        Range { start: 4, end: 14 }
    );
}

/// A give-back the store refuses (someone allocated after): the record stays where it was,
/// so a store that later goes back below it is still caught.
#[test]
fn a_refused_give_back_leaves_this_hosts_record_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let raw: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let store = HostRecorded::in_dir(Arc::clone(&raw), ADDRESS, dir.path()).unwrap();
    store.create("k", 1, 10).unwrap();
    let first = store.allocate("k", 10).unwrap().range; // 1..11
    raw.allocate("k", 10).unwrap(); // another host: 11..21
    let rest = Range {
        start: 4,
        end: first.end,
    };
    assert_eq!(store.give_back("k", rest, first.end), Ok(false));
    drop(store);
    // Everything lost; made again at the start of the rest: below what this host took.
    let lost = fresh_store(dir.path());
    rewound(
        lost.create("k", 4, 10),
        "created again within the range taken",
    );
}

/// Two processes of one host closing at once, one giving back the rest of its range and
/// the other the whole range it preloaded above: whichever goes first, this host's record
/// ends at or below the row, so the next range taken is not refused as the store going
/// back.
#[test]
fn give_backs_racing_on_one_host_never_leave_the_record_above_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let raw: Arc<dyn SegmentStore> = Arc::new(MemoryStore::new());
    let open = || HostRecorded::in_dir(Arc::clone(&raw), ADDRESS, dir.path()).unwrap();
    let (a, b) = (open(), open());
    a.create("k", 1, 10).unwrap();
    let start = std::sync::Barrier::new(2);
    for round in 0..200 {
        let below = a.allocate("k", 10).unwrap().range;
        let above = b.allocate("k", 10).unwrap().range;
        let rest = Range {
            start: below.start + 5,
            end: below.end,
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                start.wait();
                a.give_back("k", rest, below.end).unwrap();
            });
            start.wait();
            assert_eq!(b.give_back("k", above, above.end), Ok(true));
        });
        let next = a.allocate("k", 10);
        assert!(next.is_ok(), "round {round}: {next:?}");
        a.give_back(
            "k",
            next.unwrap().range,
            raw.peek("k").unwrap().unwrap().max_id,
        )
        .unwrap();
    }
}
