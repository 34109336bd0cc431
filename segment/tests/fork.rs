//! An allocator inherited through `fork()` refuses to issue, open keys or give back in the
//! child, and its drop there neither hangs nor gives back; the parent goes on issuing from
//! the same ranges, and no ID is issued twice.
#![cfg(all(unix, feature = "sqlite"))]

use std::collections::HashSet;
use std::sync::Arc;

use ferroflake_segment::{
    KeyHandle, Range, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore, ShutdownReport,
    SqliteStore, LIMIT_I64,
};

/// Forks; runs `child` in the child and exits with its code (0: the child's checks held,
/// 99: it panicked). A child that hangs is killed by an alarm after 20 s and fails the test.
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child only runs `child`, then `_exit`s without unwinding or running the
    // parent's destructors.
    match unsafe { libc::fork() } {
        -1 => panic!("fork failed"),
        0 => {
            // SAFETY: arms SIGALRM for this process only.
            unsafe { libc::alarm(20) };
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(99);
            unsafe { libc::_exit(code) }
        }
        pid => {
            let mut status = 0;
            // SAFETY: waits for the child just made.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
            assert!(
                libc::WIFEXITED(status),
                "child did not exit normally (status {status})"
            );
            libc::WEXITSTATUS(status)
        }
    }
}

/// Whether `result` is the refusal of an allocator made in `parent`, seen in this child.
fn forked<T>(result: Result<T, SegmentError>, parent: u32) -> bool {
    match result {
        Err(e @ SegmentError::Forked { made_in_pid, pid }) => {
            made_in_pid == parent
                && pid == std::process::id()
                && pid != parent
                && e.name() == "FORKED"
                && e.to_string().contains("make a new allocator in the child")
        }
        _ => false,
    }
}

fn ids(ranges: Vec<Range>) -> Vec<u64> {
    ranges.into_iter().flat_map(|r| r.start..r.end).collect()
}

fn opened(file: &std::path::Path) -> (SegmentAllocator, KeyHandle) {
    let store = Arc::new(SqliteStore::open(file).unwrap());
    let allocator = SegmentAllocator::new(store, SegmentConfig::default()).unwrap();
    let key = allocator.key("f").unwrap();
    (allocator, key)
}

#[test]
fn an_inherited_allocator_refuses_in_the_child_gives_nothing_back_and_the_parent_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fork.db");
    SqliteStore::open(&file)
        .unwrap()
        .create("f", 1, 1000)
        .unwrap();
    let (allocator, key) = opened(&file);
    let mut ours: Vec<u64> = (0..10).map(|_| key.next_id().unwrap()).collect();
    let parent = std::process::id();

    let code = in_child(|| {
        let checks = [
            forked(key.next_id(), parent),
            forked(key.try_next_id(), parent),
            forked(key.next_ids(3), parent),
            forked(key.check_fork(), parent),
            forked(allocator.key("f"), parent),
            forked(allocator.key_or_create("g", LIMIT_I64, 1, 10), parent),
            forked(allocator.check_fork(), parent),
        ];
        if let Some(failed) = checks.iter().position(|held| !held) {
            return 1 + failed as i32;
        }
        // Gives nothing back: the rest in memory is the parent's.
        if allocator.shutdown() != ShutdownReport::default() {
            return 20;
        }
        // Still the fork's refusal, not "closed".
        if !forked(key.next_id(), parent) {
            return 21;
        }
        0
    });
    assert_eq!(
        code, 0,
        "the child's check number {code} failed (99: it panicked)"
    );

    // The parent issues on from where it was.
    let next = key.next_id().unwrap();
    assert_eq!(next, ours.last().unwrap() + 1);
    ours.push(next);
    ours.extend(ids(key.next_ids(5).unwrap()));
    ours.push(key.try_next_id().unwrap().unwrap());

    // Had the child given the rest back, the parent's own give-back would be refused (the
    // row no longer ends where the parent's range does) and a new allocator would start
    // inside the parent's range.
    let report = allocator.shutdown();
    assert!(
        report.given_back > 0 && report.refused.is_empty() && report.failed.is_empty(),
        "{report:?}"
    );
    let (fresh, fresh_key) = opened(&file);
    let theirs = ids(fresh_key.next_ids(100).unwrap());
    assert_eq!(
        theirs[0],
        ours.last().unwrap() + 1,
        "the row after the parent's give-back"
    );
    fresh.shutdown();

    let every: Vec<u64> = ours.iter().chain(&theirs).copied().collect();
    let unique: HashSet<u64> = every.iter().copied().collect();
    assert_eq!(unique.len(), every.len(), "an ID was issued twice");
}

#[test]
fn dropping_an_inherited_allocator_in_the_child_neither_hangs_nor_gives_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fork.db");
    SqliteStore::open(&file)
        .unwrap()
        .create("f", 1, 1000)
        .unwrap();
    let (allocator, key) = opened(&file);
    let before = key.next_id().unwrap();
    let mut slot = Some((allocator, key));

    // The drop would join the fetch worker, a thread the child does not have.
    let code = in_child(|| {
        drop(slot.take());
        0
    });
    assert_eq!(code, 0, "the child's drop failed (99: it panicked)");

    let (allocator, key) = slot.take().unwrap();
    assert_eq!(key.next_id().unwrap(), before + 1);
    let report = allocator.shutdown();
    assert!(
        report.given_back > 0 && report.refused.is_empty(),
        "{report:?}"
    );
}
