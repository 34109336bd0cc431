//! The embedded store's default file: one per user under /var/tmp, in a private directory.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use ferroflake_segment::{SegmentStore, SqliteStore};

#[test]
fn default_file_is_per_user_and_private() {
    let uid = tempfile::tempfile().unwrap().metadata().unwrap().uid();
    let path = SqliteStore::default_path();
    assert_eq!(
        path,
        std::path::PathBuf::from(format!("/var/tmp/ferroflake-segments-{uid}/segments.db"))
    );
    let store = SqliteStore::open_default().unwrap();
    assert_eq!(store.path(), path);
    assert_eq!(
        store.peek("ferroflake-default-store-test").unwrap(),
        None,
        "keys are never created by use"
    );
    let dir = std::fs::metadata(path.parent().unwrap()).unwrap();
    assert_eq!(dir.uid(), uid);
    assert_eq!(
        dir.permissions().mode() & 0o022,
        0,
        "nobody else can write the directory"
    );
}
