//! A SQL server whose data is put back to an earlier copy: this host has kept the furthest
//! history of the server it saw ([`SegmentStore::history`]), so a new process on it finds
//! the whole store gone back, and holds even keys it never used, until each is recovered.
//! A server that is only restarted, cleanly or after a crash, is not held; one that keeps
//! its control data from the store's user tells no history, and holds nothing.
//!
//! Needs the test servers of scripts/servers/ctl.sh (`FERROFLAKE_TEST_POSTGRES`,
//! `FERROFLAKE_TEST_MYSQL`, `FF_SERVERS_DIR`), hence `#[ignore]`; the suite runs this file
//! alone, as it stops, kills and restores the servers.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use ferroflake_segment::host_record::HostRecorded;
use ferroflake_segment::{SegmentError, SegmentStore};
use ferroflake_segment_stores::{MysqlStore, PostgresStore};

/// The store on `table` as a process of this host opens it: with this host's record (kept
/// in `host`) around it.
fn on_this_host(backend: &str, table: &str, host: &Path) -> Result<HostRecorded, SegmentError> {
    HostRecorded::in_dir(plain(backend, table), &format!("{backend}/{table}"), host)
}

/// The store on `table` as another host uses it: without this host's record.
fn plain(backend: &str, table: &str) -> Arc<dyn SegmentStore> {
    let url = common::base_url(backend);
    match backend {
        "postgres" => Arc::new(PostgresStore::connect(&url, table).unwrap()),
        _ => Arc::new(MysqlStore::connect(&url, table).unwrap()),
    }
}

fn run(command: &mut Command) {
    let status = command.status().unwrap();
    assert!(status.success(), "{command:?}: {status}");
}

fn take(store: &dyn SegmentStore, key: &str, n: usize) -> u64 {
    let mut end = 0;
    for _ in 0..n {
        end = store.allocate(key, 10).unwrap().range.end;
    }
    end
}

fn assert_rewound(result: Result<impl std::fmt::Debug, SegmentError>, key: &str) {
    match result {
        Err(SegmentError::Rewound { key: k, detail, .. }) => {
            assert_eq!(k, key);
            assert!(
                detail.contains("this host's record of the store's history"),
                "{detail}"
            );
        }
        other => panic!("{key}: {other:?}, not Rewound"),
    }
}

fn a_restored_copy_holds_every_key(backend: &str) {
    let table = common::unique("restore");
    let host = tempfile::tempdir().unwrap();
    let dir = common::operator::data_dir(backend);
    let copy = dir.with_extension("copy");
    let _ = std::fs::remove_dir_all(&copy);

    let mine = on_this_host(backend, &table, host.path()).unwrap();
    mine.create("mine", 1, 10).unwrap();
    take(&mine, "mine", 3);
    // Another host's key, which this host never fetches.
    let elsewhere = plain(backend, &table);
    elsewhere.create("theirs", 1, 10).unwrap();
    take(&*elsewhere, "theirs", 3);
    drop((mine, elsewhere));

    // A clean restart and a crash keep the server's history: nothing is held.
    for stop in ["stop", "kill"] {
        common::ctl(stop, backend);
        common::ctl("start", backend);
        let after = on_this_host(backend, &table, host.path())
            .unwrap_or_else(|e| panic!("after `ctl.sh {stop}`: {e}"));
        take(&after, "mine", 1);
        take(&after, "theirs", 1);
    }

    // A copy of the data, taken with the server stopped; then more is issued.
    common::ctl("stop", backend);
    run(Command::new("cp").arg("-a").arg(&dir).arg(&copy));
    common::ctl("start", backend);
    let before = on_this_host(backend, &table, host.path()).unwrap();
    take(&before, "mine", 5);
    let theirs_end = take(&*plain(backend, &table), "theirs", 5);
    drop(before);

    // The copy put back in place of the data.
    common::ctl("stop", backend);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::rename(&copy, &dir).unwrap();
    common::ctl("start", backend);

    // A new process of this host: every key is held, the one it never fetched too.
    let restored = on_this_host(backend, &table, host.path()).unwrap();
    assert_rewound(restored.allocate("theirs", 10), "theirs");
    assert_rewound(restored.allocate("mine", 10), "mine");
    assert_rewound(restored.create("new", 1, 10), "new");
    // Past the copy's position, the server is still held.
    take(&*plain(backend, &table), "theirs", 30);
    let again = on_this_host(backend, &table, host.path()).unwrap();
    assert_rewound(again.allocate("theirs", 10), "theirs");

    // Recovered above the highest ID issued for it, a key issues again; the others stay
    // held until they are recovered too.
    again.recover("theirs", theirs_end - 1, 10).unwrap();
    let next = again.allocate("theirs", 10).unwrap().range;
    assert!(next.start >= theirs_end, "{next:?} after {theirs_end}");
    assert_rewound(again.allocate("mine", 10), "mine");
    drop((restored, again));
    let later = on_this_host(backend, &table, host.path()).unwrap();
    later.allocate("theirs", 10).unwrap();
    assert_rewound(later.allocate("mine", 10), "mine");
}

#[test]
#[ignore = "needs a PostgreSQL server: FERROFLAKE_TEST_POSTGRES"]
fn postgres_restored_from_a_copy_holds_every_key() {
    a_restored_copy_holds_every_key("postgres");
}

#[test]
#[ignore = "needs a MySQL or MariaDB server: FERROFLAKE_TEST_MYSQL"]
fn mariadb_restored_from_a_copy_holds_every_key() {
    a_restored_copy_holds_every_key("mysql");
}

/// A server that keeps its control data from the store's user (as some hosted services do)
/// tells no history: the store works as before, held by nothing.
#[test]
#[ignore = "needs a PostgreSQL server: FERROFLAKE_TEST_POSTGRES"]
fn postgres_without_its_control_data_tells_no_history() {
    let url = common::base_url("postgres");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let role = common::unique("limited");
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; CREATE SCHEMA AUTHORIZATION {role};
             REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC;"
        ))
        .unwrap();
    let limited_url = url.replacen("postgres://postgres@", &format!("postgres://{role}@"), 1);
    let outcome = std::panic::catch_unwind(|| {
        let store = PostgresStore::connect(&limited_url, "leaf_alloc").unwrap();
        assert_eq!(store.history().unwrap(), None);
        let host = tempfile::tempdir().unwrap();
        let recorded = HostRecorded::in_dir(Arc::new(store), &role, host.path()).unwrap();
        recorded.create("k", 1, 10).unwrap();
        assert_eq!(recorded.allocate("k", 10).unwrap().range.start, 1);
    });
    admin
        .batch_execute("GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC")
        .unwrap();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    let store = PostgresStore::connect(&url, "leaf_alloc").unwrap();
    assert!(store.history().unwrap().is_some());
}
