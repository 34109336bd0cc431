//! A table file named by the caller: nobody else may own it, point a link at it, or replace
//! it through its directory.

use std::os::unix::fs::PermissionsExt;

use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};

/// Another user's uid for files made by root (`nobody`); `None` when not root.
fn other_uid() -> Option<u32> {
    rustix::process::getuid().is_root().then_some(65534)
}

fn refused(path: &std::path::Path, says: &str) {
    match SqliteStore::open(path) {
        Err(SegmentError::Unavailable { detail, .. }) => {
            assert!(detail.contains(says), "{detail}")
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("{} opened", path.display()),
    }
}

#[test]
fn a_directory_others_may_write_is_refused_unless_sticky() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused(&shared.join("ids.db"), "another user could move");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let store = SqliteStore::open(shared.join("ids.db")).expect("a sticky directory, as /tmp");
    store.create("k", 1, 10).unwrap();
}

#[test]
fn another_users_file_or_link_is_refused() {
    let Some(other) = other_uid() else {
        eprintln!("skipped: needs root to make files of another user");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs.db");
    SqliteStore::open(&theirs)
        .unwrap()
        .create("k", 1, 10)
        .unwrap();
    std::os::unix::fs::chown(&theirs, Some(other), None).unwrap();
    refused(&theirs, "belongs to uid 65534");

    // A link planted by another user, pointing at a table of ours: they can swap it.
    let mine = dir.path().join("mine.db");
    SqliteStore::open(&mine).unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&mine, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(other), None).unwrap();
    refused(&link, "symbolic link of uid 65534");
    std::os::unix::fs::lchown(&link, Some(0), None).unwrap();
    SqliteStore::open(&link).expect("a link of our own");
}
