//! One SQLite table reached by two names: a hard link, and the file bind-mounted under
//! another directory (`unshare -Urm` makes the mount in a namespace of the test's own).
//! SQLite keeps the write-ahead log beside each name, so two names open at once would issue
//! the same ranges: the second name is refused while the first is open, in this process and
//! in another. A symbolic link is the same name, and shares. A log left beside a name the
//! file has since left is refused, and so is a write after the `-shm` was deleted.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};

fn refused_as_aliased(result: Result<SqliteStore, SegmentError>) -> String {
    match result {
        Err(SegmentError::Unavailable { store, detail }) => {
            assert_eq!(store, "sqlite");
            assert!(detail.contains("under another name"), "{detail}");
            detail
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(store) => panic!(
            "{} opened while another name is open",
            store.path().display()
        ),
    }
}

/// A new table at `path` with the key "orders" (from 1, step 10).
fn new_table(path: &Path) {
    SqliteStore::open(path)
        .unwrap()
        .create("orders", 1, 10)
        .unwrap();
}

fn ranges(store: &SqliteStore, key: &str, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| store.allocate(key, 10).unwrap().range.start)
        .collect()
}

#[test]
fn a_hard_link_is_refused_while_the_first_name_is_open_in_this_process() {
    let dir = tempfile::tempdir().unwrap();
    let (first, link) = (dir.path().join("ids.db"), dir.path().join("alias.db"));
    let store = SqliteStore::open(&first).unwrap();
    store.create("orders", 1, 10).unwrap();
    std::fs::hard_link(&first, &link).unwrap();
    let detail = refused_as_aliased(SqliteStore::open(&link));
    assert!(
        detail.contains("alias.db") && detail.contains("this process"),
        "{detail}"
    );

    // A second store by the first name shares; the link opens once both are closed.
    let again = SqliteStore::open(&first).unwrap();
    let mut taken = ranges(&store, "orders", 3);
    taken.extend(ranges(&again, "orders", 3));
    drop((store, again));
    let by_link = SqliteStore::open(&link).unwrap();
    taken.extend(ranges(&by_link, "orders", 3));
    assert_eq!(taken.iter().collect::<HashSet<_>>().len(), 9, "{taken:?}");
}

#[test]
fn a_symbolic_link_is_the_same_name() {
    let dir = tempfile::tempdir().unwrap();
    let (first, link) = (dir.path().join("ids.db"), dir.path().join("link.db"));
    let store = SqliteStore::open(&first).unwrap();
    store.create("orders", 1, 10).unwrap();
    std::os::unix::fs::symlink(&first, &link).unwrap();
    let by_link = SqliteStore::open(&link).unwrap();
    let mut taken = ranges(&store, "orders", 3);
    taken.extend(ranges(&by_link, "orders", 3));
    assert_eq!(taken.iter().collect::<HashSet<_>>().len(), 6, "{taken:?}");
}

/// This test binary in a child process, holding a store open at `path` until its stdin
/// closes (see [`hold_store`]); `wrap` runs it through another command (`unshare`).
fn holder(wrap: &[&str], path: &Path) -> (Child, String) {
    let exe = std::env::current_exe().unwrap();
    let mut command = Command::new(wrap.first().copied().unwrap_or(exe.to_str().unwrap()));
    command.args(wrap.iter().skip(1));
    if !wrap.is_empty() {
        command.arg(&exe);
    }
    let mut child = command
        .args(["--exact", "hold_store", "--nocapture", "--include-ignored"])
        .env("FERROFLAKE_TEST_HOLD", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let said = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|line| line.starts_with("holder: "))
        .unwrap_or_default();
    // The rest (the test harness's report) is read to the end, so the child never writes
    // to a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, said)
}

fn release(mut holder: Child) {
    holder.stdin.take().unwrap().write_all(b"done\n").ok();
    assert!(holder.wait().unwrap().success());
}

#[test]
fn a_hard_link_is_refused_while_another_process_has_the_first_name_open() {
    let dir = tempfile::tempdir().unwrap();
    let (first, link) = (dir.path().join("ids.db"), dir.path().join("alias.db"));
    new_table(&first);
    std::fs::hard_link(&first, &link).unwrap();

    let (child, said) = holder(&[], &first);
    assert!(said.starts_with("holder: open"), "{said}");
    let detail = refused_as_aliased(SqliteStore::open(&link));
    assert!(detail.contains("another process"), "{detail}");
    // The same name is still welcome beside the holder.
    SqliteStore::open(&first)
        .unwrap()
        .allocate("orders", 10)
        .unwrap();
    release(child);
    SqliteStore::open(&link)
        .unwrap()
        .allocate("orders", 10)
        .unwrap();

    // The other way round: the holder is refused by the link while this process has it.
    let store = SqliteStore::open(&first).unwrap();
    let (child, said) = holder(&[], &link);
    assert!(
        said.starts_with("holder: refused") && said.contains("under another name"),
        "{said}"
    );
    release(child);
    drop(store);
}

#[test]
fn a_file_bind_mounted_under_another_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("ids.db");
    new_table(&first);
    let elsewhere = dir.path().join("container");
    std::fs::create_dir(&elsewhere).unwrap();
    let mounted = elsewhere.join("ids.db");
    std::fs::write(&mounted, b"").unwrap();

    // The child mounts the file over `mounted` in a mount namespace of its own and opens
    // it there, as a container given `-v ids.db:/data/ids.db` would.
    let script = format!(
        "mount --bind '{}' '{}' && exec \"$0\" \"$@\"",
        first.display(),
        mounted.display()
    );
    let wrap = ["unshare", "-Urm", "sh", "-c", &script];
    let store = SqliteStore::open(&first).unwrap();
    let (child, said) = holder(&wrap, &mounted);
    assert!(
        said.starts_with("holder: refused") && said.contains("under another name"),
        "{said}"
    );
    release(child);

    // With the directory mounted instead, the log sits beside the same name: it shares.
    let script = format!(
        "mount --bind '{}' '{}' && exec \"$0\" \"$@\"",
        dir.path().display(),
        elsewhere.display()
    );
    let wrap = ["unshare", "-Urm", "sh", "-c", &script];
    let (child, said) = holder(&wrap, &mounted);
    assert!(said.starts_with("holder: open"), "{said}");
    store.allocate("orders", 10).unwrap();
    release(child);
}

#[test]
fn a_process_killed_holding_a_range_leaves_it_recorded_for_another_name() {
    // Its log held the allocation; a new name reads the table file alone.
    let dir = tempfile::tempdir().unwrap();
    let (first, link) = (dir.path().join("ids.db"), dir.path().join("renamed.db"));
    new_table(&first);
    std::fs::hard_link(&first, &link).unwrap();
    let (mut child, said) = holder(&[], &first);
    let took = said.strip_prefix("holder: open, took ").expect(&said);
    let child_end: u64 = took.split("..").nth(1).unwrap().parse().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(&first).unwrap(); // as `mv ids.db renamed.db` would leave it
    let after = SqliteStore::open(&link)
        .unwrap()
        .allocate("orders", 10)
        .unwrap()
        .range;
    assert!(
        after.start >= child_end,
        "{after:?} repeats the killed holder's {took}"
    );
}

/// SQLite's locks are in the `-shm` beside the name: deleted under an open store, a process
/// opened since locks a new one. The open store refuses to write from then on (it would
/// read the table as it last saw it), and a store opened again goes on above everything.
#[test]
fn a_store_whose_shm_was_deleted_refuses_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ids.db");
    let store = SqliteStore::open(&path).unwrap();
    store.create("orders", 1, 10).unwrap();
    let mine = store.allocate("orders", 10).unwrap().range;
    std::fs::remove_file(dir.path().join("ids.db-shm")).unwrap();

    let (child, said) = holder(&[], &path);
    let took = said.strip_prefix("holder: open, took ").expect(&said);
    let child_end: u64 = took.split("..").nth(1).unwrap().parse().unwrap();
    let refused = store.allocate("orders", 10);
    assert!(
        matches!(&refused, Err(SegmentError::Store { detail, .. }) if detail.contains("ids.db-shm")),
        "{refused:?} beside the holder's {took}"
    );
    release(child);
    drop(store);
    let next = SqliteStore::open(&path)
        .unwrap()
        .allocate("orders", 10)
        .unwrap()
        .range;
    assert!(
        next.start >= child_end && next.start >= mine.end,
        "{next:?}"
    );
}

/// The table file deleted (as an age-based cleaner of /var/tmp would) or replaced under a
/// running store: a new process makes a new table that starts keys again at their start,
/// so the running store stops taking ranges instead of going on alone beside it.
#[test]
fn a_table_file_deleted_or_replaced_under_the_store_stops_it() {
    for replace in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.db");
        let store = SqliteStore::open(&path).unwrap();
        store.create("orders", 1, 10).unwrap();
        store.allocate("orders", 10).unwrap();
        std::fs::remove_file(&path).unwrap();
        if replace {
            std::fs::write(&path, b"").unwrap();
        }
        let refused = store.allocate("orders", 10);
        assert!(
            matches!(&refused, Err(SegmentError::Store { detail, .. })
                if detail.contains("deleted or replaced") && detail.contains("ids.db")),
            "replaced: {replace}: {refused:?}"
        );
        assert!(
            store.create("other", 1, 10).is_err(),
            "no write of any kind after the file went"
        );
    }
}

/// Runs [`commits_then_die`] on `path`: `commits` allocations of 10 on every key, left in
/// the log as a process killed before its checkpoints leaves them.
fn leave_a_log(path: &Path, commits: u32) -> PathBuf {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "commits_then_die", "--include-ignored"])
        .env("FERROFLAKE_TEST_HOLD", path)
        .env("FERROFLAKE_TEST_COMMITS", commits.to_string())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child dies after its commits");
    let log = PathBuf::from(format!("{}-wal", path.display()));
    assert!(std::fs::metadata(&log).unwrap().len() > 0, "a log is left");
    log
}

/// The log a process leaves when killed between a commit and its checkpoint, left beside
/// the first name while the file moves on under another, must not be replayed when the
/// first name comes back: its rows are older than the file's. However many commits either
/// side made (a log holds several when checkpoints failed while a reader held the log).
fn stale_log_is_refused(commits_in_log: u32, ranges_elsewhere: usize, edit: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (first, other) = (dir.path().join("ids.db"), dir.path().join("moved.db"));
    let store = SqliteStore::open(&first).unwrap();
    store.create("orders", 1, 10).unwrap();
    store.create("invoices", 1, 10).unwrap();
    drop(store);
    let log = leave_a_log(&first, commits_in_log);

    // `mv ids.db moved.db`: the other name reads the file alone and goes on.
    std::fs::rename(&first, &other).unwrap();
    let moved = SqliteStore::open(&other).unwrap();
    let issued = [
        ranges(&moved, "orders", ranges_elsewhere),
        ranges(&moved, "invoices", ranges_elsewhere),
    ];
    drop(moved);
    // An edit by hand while nothing runs, which may take the file's record of its history.
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch(edit)
        .unwrap();
    std::fs::rename(&other, &first).unwrap();

    let refused = SqliteStore::open(&first).unwrap_err();
    assert!(
        matches!(&refused, SegmentError::Store { detail, .. } if detail.contains("ids.db-wal")),
        "{refused}"
    );
    assert!(
        std::fs::metadata(&log).unwrap().len() > 0,
        "the refusal copies nothing in"
    );
    // The operator's step, as the message gives it; the file goes on above what it issued.
    std::fs::remove_file(&log).unwrap();
    let _ = std::fs::remove_file(dir.path().join("ids.db-shm"));
    let store = SqliteStore::open(&first).unwrap();
    for (key, issued) in ["orders", "invoices"].into_iter().zip(issued) {
        let next = store.allocate(key, 10).unwrap().range.start;
        assert!(
            next > *issued.iter().max().unwrap(),
            "{key}: {next} after {issued:?}"
        );
    }
}

#[test]
fn a_log_left_beside_a_name_the_file_has_since_left_is_refused() {
    stale_log_is_refused(1, 5, "");
}

#[test]
fn a_stale_log_beside_a_file_that_lost_its_record_is_refused() {
    stale_log_is_refused(1, 5, "DELETE FROM ferroflake_commits");
    stale_log_is_refused(1, 5, "DROP TABLE ferroflake_file");
}

#[test]
fn a_stale_log_further_ahead_than_the_file_is_refused_too() {
    // The log ends 3 commits on from where the two sides parted, the file 2 (one range of
    // each of two keys).
    stale_log_is_refused(3, 1, "");
}

/// The same log under its own name is replayed as usual, so the crashed commits stand.
#[test]
fn a_log_left_beside_the_same_name_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("ids.db");
    new_table(&first);
    leave_a_log(&first, 3);
    let store = SqliteStore::open(&first).unwrap();
    assert_eq!(store.allocate("orders", 10).unwrap().range.start, 31);
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn commits_then_die() {
    // What a store's process leaves when killed after its commits, before their checkpoints.
    let path = PathBuf::from(std::env::var_os("FERROFLAKE_TEST_HOLD").unwrap());
    let commits: u32 = std::env::var("FERROFLAKE_TEST_COMMITS")
        .unwrap()
        .parse()
        .unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    for _ in 0..commits {
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             UPDATE leaf_alloc SET max_id = max_id + 10;
             INSERT INTO ferroflake_commits (generation, nonce)
                 SELECT max(generation) + 1, random() FROM ferroflake_commits;
             COMMIT;",
        )
        .unwrap();
    }
    std::process::abort();
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn hold_store() {
    let path = PathBuf::from(std::env::var_os("FERROFLAKE_TEST_HOLD").unwrap());
    match SqliteStore::open(&path) {
        Ok(store) => {
            let taken = store.allocate("orders", 10).unwrap().range;
            println!("holder: open, took {}..{}", taken.start, taken.end);
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).unwrap();
        }
        Err(e) => println!("holder: refused: {e}"),
    }
}

/// Many commits by another store between two of a store's fetches: nothing the first one
/// remembers goes stale.
#[test]
fn hundreds_of_commits_by_another_store_between_two_fetches_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ids.db");
    new_table(&path);
    let first = SqliteStore::open(&path).unwrap();
    let mut taken = ranges(&first, "orders", 1);
    let busy = SqliteStore::open(&path).unwrap();
    taken.extend(ranges(&busy, "orders", 300));
    taken.extend(ranges(&first, "orders", 1));
    drop((first, busy));
    // And a new store, once the others have gone.
    taken.extend(ranges(&SqliteStore::open(&path).unwrap(), "orders", 1));
    let distinct: HashSet<u64> = taken.iter().copied().collect();
    assert_eq!(distinct.len(), taken.len());
    assert_eq!(*taken.last().unwrap(), 1 + 302 * 10);
}

/// A reader kept on an old snapshot (a backup, a `sqlite3` shell left in a transaction)
/// stops the log from being copied into the table file. Changes made then must not run the
/// log further ahead of the file than the file's history reaches: a store opened after the
/// reader has gone (and before the next change copies the log in) would take the healthy
/// log for a stale one.
#[test]
fn a_log_kept_from_the_file_by_a_long_reader_is_still_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ids.db");
    new_table(&path);
    let store = SqliteStore::open_with_timeout(&path, std::time::Duration::from_millis(1)).unwrap();
    let mut taken = ranges(&store, "orders", 1);
    let reader = rusqlite::Connection::open(&path).unwrap();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM leaf_alloc;")
        .unwrap();
    let mut unavailable = 0;
    for _ in 0..300 {
        match store.allocate("orders", 10) {
            Ok(allocation) => taken.push(allocation.range.start),
            Err(SegmentError::Unavailable { .. }) => unavailable += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert!(
        unavailable > 0,
        "the reader never kept the log from the file"
    );
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    // The first store still open, its log not yet copied in: a second process starts.
    let again = SqliteStore::open(&path).expect("the log continues the file's history");
    taken.extend(ranges(&again, "orders", 2));
    taken.extend(ranges(&store, "orders", 1));
    let distinct: HashSet<u64> = taken.iter().copied().collect();
    assert_eq!(distinct.len(), taken.len(), "{taken:?}");
    assert!(taken.windows(2).all(|w| w[0] < w[1]), "{taken:?}");
}
