//! One store-fault suite, run against every segment store as the conformance suite runs
//! their behaviour: each fault an operator or a machine inflicts on a store, with real
//! processes (the probe) that create their key at start when it is missing, as programs
//! that create keys at every start do. Processes issue, the fault is applied with the
//! store's own tools, processes start again the same way; every process either issues or
//! refuses (exit 3, with the error's kind), and no ID is issued twice across all of them.
//!
//! A process's host is its state directory (`FERROFLAKE_STATE_DIR`): "here" is the host
//! that ran the processes before the fault, "there" another machine, which only the store
//! itself can warn. The matrix is at the end; the lease registries' suite
//! (lease/stores/tests/faults.rs) names its faults the same way where they apply to both.
//!
//! The SQLite tests run everywhere. The server tests are ignored by default;
//! scripts/test-segment-stores.sh starts the servers and runs them, one test at a time per
//! server (they flush, stop and restore it: .config/nextest.toml).

mod common;

use std::time::Duration;

use common::operator::{Dump, Operator};
use common::probes::{probe, probe_key, Exit, Host, Issued, Running};

/// `processes` probes of two threads on `host`, each taking IDs until it is refused, with
/// a step that keeps them fetching.
fn issuing(host: &Host, store: &str, processes: usize) -> Running {
    Running::start((0..processes).map(|_| {
        host.on(probe(
            store,
            &[
                "--threads",
                "2",
                "--count",
                "1000000",
                "--step-max",
                "10",
                "--pace-us",
                "20",
            ],
        ))
    }))
}

/// A process started after the fault, the same way: it creates the key if it is missing,
/// then takes 20 IDs.
fn newcomer(host: &Host, store: &str, issued: &mut Issued) -> Exit {
    issued.run(&mut host.on(probe(store, &["--count", "20"])))
}

/// Processes that issue from a key until the fault, then all stop.
fn all_stop(running: Running, issued: &mut Issued, kind: &str, says: &str) {
    for exit in running.until_all_exit(Duration::from_secs(60), issued) {
        exit.assert_refused(kind, says, "a running process");
    }
}

/// Four processes issue from the key "shared" until `strike` hits the store under them:
/// they all stop with `kind` (their message naming `running_says`), and so do new
/// processes on another host and on this one (naming `newcomer_says`).
fn struck_under_running_processes(
    backend: &str,
    strike: impl FnOnce(&Operator),
    kind: &str,
    running_says: &str,
    newcomer_says: &str,
) {
    let scratch = tempfile::tempdir().unwrap();
    let store = Operator::fresh(backend, scratch.path());
    let (here, there) = (Host::new(), Host::new());
    let mut issued = Issued::default();
    let running = issuing(&here, &store.address, 4);
    running.wait_for(2_000, &mut issued);
    strike(&store);
    all_stop(running, &mut issued, kind, running_says);
    for (host, who) in [(&there, "another host"), (&here, "this host")] {
        newcomer(host, &store.address, &mut issued).assert_refused(
            kind,
            newcomer_says,
            &format!("a new process on {who}"),
        );
    }
}

/// The key's row deleted by hand under four running processes: they stop, and a process
/// started afterwards does not make the key again at its start, on this host or another
/// (the store's marks of how far each key went).
fn record_lost(backend: &str) {
    let strike = |store: &Operator| store.delete_record("shared");
    struck_under_running_processes(backend, strike, "REWOUND", "gone", "existed before");
}

/// Every record lost, the marks with the rows (a database emptied, Redis flushed): the
/// running processes stop, and a new process on this host is refused by the host's record
/// of the ranges it took. Another host cannot tell (README: the operator recovers the key
/// from the highest ID found in the data), so none is started here.
fn all_records_lost(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store = Operator::fresh(backend, scratch.path());
    let here = Host::new();
    let mut issued = Issued::default();
    let running = issuing(&here, &store.address, 4);
    running.wait_for(2_000, &mut issued);
    store.lose_all_records();
    all_stop(running, &mut issued, "REWOUND", "gone");
    newcomer(&here, &store.address, &mut issued).assert_refused(
        "REWOUND",
        "this host's record of the ranges it took",
        "a new process on this host",
    );
}

/// `max_id` set back by hand under four running processes: they stop, and new processes
/// on this host and another are refused (the row is below the key's mark).
fn table_moved_back(backend: &str) {
    let strike = |store: &Operator| store.set_max_id("shared", 1);
    struck_under_running_processes(backend, strike, "REWOUND", "went back", "below the");
}

/// A dump put back after more IDs were issued. On the servers the IDs after the dump are
/// another host's, and this host only saw the server move on through another key: so what
/// refuses the key here is what the store tells of its history (PostgreSQL's WAL position,
/// MariaDB's log position, Redis's run id), not a range of this host's. A SQLite file is
/// one host's: there the IDs after the dump are this host's, and its record refuses them.
fn dump_restored(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store = Operator::fresh(backend, scratch.path());
    let (here, there) = (Host::new(), Host::new());
    let after_the_dump = if backend == "sqlite" { &here } else { &there };
    let mut issued = Issued::default();
    let take = |host: &Host, key: &str, issued: &mut Issued| {
        let exit = issued.run(&mut host.on(probe_key(
            &store.address,
            key,
            &["--threads", "2", "--count", "300", "--step-max", "10"],
        )));
        assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    };
    take(&here, "shared", &mut issued);
    let dump = store.dump();
    take(after_the_dump, "shared", &mut issued);
    take(&here, "other", &mut Issued::default());
    if let Dump::File { copy, .. } = &dump {
        // The copy put back under another name, in another directory (or on a disk
        // mounted where the old one was): the file's own id still names the store.
        let elsewhere = scratch.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let restored = elsewhere.join("ids.db");
        std::fs::copy(copy, &restored).unwrap();
        newcomer(&here, restored.to_str().unwrap(), &mut issued).assert_refused(
            "REWOUND",
            "this host's record of the ranges it took",
            "a new process on the dump put back under another name",
        );
    }
    dump.restore();
    let told_by = match backend {
        "sqlite" => "this host's record of the ranges it took",
        "redis" => "restarted or failed over",
        _ => "this host's record of the store's history",
    };
    newcomer(&here, &store.address, &mut issued).assert_refused(
        "REWOUND",
        told_by,
        "a new process on this host",
    );
    if backend != "sqlite" {
        newcomer(&there, &store.address, &mut issued).assert_refused(
            "REWOUND",
            told_by,
            "a new process on the host that issued after the dump",
        );
    }
}

/// A SQL store's tables dumped, more IDs issued, then the dump loaded into another
/// database of the same server and the store opened there: the database's name is new to
/// this host, and the server's history only moved on, but the id the tables keep
/// (`<table>_store`) names the store this host took those IDs from.
fn dump_restored_elsewhere(backend: &str) {
    let scratch = tempfile::tempdir().unwrap();
    let store = Operator::fresh(backend, scratch.path());
    let here = Host::new();
    let mut issued = Issued::default();
    let take = |issued: &mut Issued| {
        let exit = issued.run(&mut here.on(probe_key(
            &store.address,
            "shared",
            &["--threads", "2", "--count", "300", "--step-max", "10"],
        )));
        assert_eq!(exit.code, Some(0), "{}", exit.stderr);
    };
    take(&mut issued);
    let dump = store.dump_tables();
    take(&mut issued);
    let elsewhere = dump.into_new_database();
    newcomer(&here, &elsewhere, &mut issued).assert_refused(
        "REWOUND",
        "this host's record of the ranges it took",
        "a new process on the dump loaded into another database",
    );
}

/// `max_id` garbled under four running processes: they stop with a store error that names
/// it rather than read a number into it, and so do new processes on this host and another.
fn value_garbled(backend: &str) {
    let strike = |store: &Operator| store.garble("shared");
    struck_under_running_processes(backend, strike, "STORE", "max_id", "max_id");
}

/// The SQLite table file reached by a second name while two processes use it (a hard link,
/// the file bind-mounted into a mount namespace as a container's `-v`): refused. Then the
/// file deleted under them (an age-based cleaner takes it with its `-wal` and `-shm`): they
/// stop, and a new process on this host, which makes a new file, is refused the key.
fn file_aliased_or_deleted(backend: &str) {
    assert_eq!(backend, "sqlite");
    let scratch = tempfile::tempdir().unwrap();
    let store = Operator::fresh(backend, scratch.path());
    let file = store.file().to_owned();
    let here = Host::new();
    let mut issued = Issued::default();
    let running = issuing(&here, &store.address, 2);
    running.wait_for(1_000, &mut issued);

    let alias = scratch.path().join("alias.db");
    std::fs::hard_link(&file, &alias).unwrap();
    newcomer(&here, alias.to_str().unwrap(), &mut issued).assert_refused(
        "UNAVAILABLE",
        "under another name",
        "a process by a hard link",
    );
    std::fs::remove_file(&alias).unwrap();

    let container = scratch.path().join("container");
    std::fs::create_dir(&container).unwrap();
    let mounted = container.join("ids.db");
    std::fs::write(&mounted, b"").unwrap();
    let script = format!(
        "mount --bind '{}' '{}' && exec \"$0\" \"$@\"",
        file.display(),
        mounted.display()
    );
    let mut in_container = std::process::Command::new("unshare");
    in_container
        .args(["-Urm", "sh", "-c", &script])
        .arg(common::probe_path())
        .args(["--store", mounted.to_str().unwrap(), "--key", "shared"])
        .args(["--count", "20"]);
    issued.run(&mut here.on(in_container)).assert_refused(
        "UNAVAILABLE",
        "under another name",
        "a process by a bind mount",
    );
    running.wait_for(100, &mut issued);

    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    all_stop(running, &mut issued, "STORE", "deleted or replaced");
    newcomer(&here, &store.address, &mut issued).assert_refused(
        "REWOUND",
        "this host's record of the ranges it took",
        "a new process on this host",
    );
}

/// `faults::<store>::<fault>` for the faults that apply to a store.
macro_rules! faults_on {
    ($store:ident: $($fault:ident),+ $(,)?) => {
        mod $store {
            $( #[test] fn $fault() { super::$fault(stringify!($store)); } )+
        }
    };
    ($store:ident, $needs:literal: $($fault:ident),+ $(,)?) => {
        mod $store {
            $( #[test] #[ignore = $needs] fn $fault() { super::$fault(stringify!($store)); } )+
        }
    };
}

// The matrix. file_aliased_or_deleted is SQLite's alone: a server's table is reached by its
// address, not by a file name a link or a mount could double, and its files are the
// server's (a server losing them is all_records_lost or dump_restored). A SQL server's
// tables can be restored beside the live ones, into another database
// (dump_restored_elsewhere); a SQLite file's copy under another name is in dump_restored.
faults_on!(
    sqlite: record_lost,
    all_records_lost,
    table_moved_back,
    dump_restored,
    value_garbled,
    file_aliased_or_deleted,
);
faults_on!(
    postgres,
    "needs FERROFLAKE_TEST_POSTGRES": record_lost,
    all_records_lost,
    table_moved_back,
    dump_restored,
    dump_restored_elsewhere,
    value_garbled,
);
faults_on!(
    mysql,
    "needs FERROFLAKE_TEST_MYSQL": record_lost,
    all_records_lost,
    table_moved_back,
    dump_restored,
    dump_restored_elsewhere,
    value_garbled,
);
faults_on!(
    redis,
    "needs FERROFLAKE_TEST_REDIS": record_lost,
    all_records_lost,
    table_moved_back,
    dump_restored,
    value_garbled,
);
