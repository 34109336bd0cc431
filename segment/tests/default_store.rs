//! The embedded store's default file: one per user in ferroflake's state directory, which
//! the OS does not clean, in a private directory.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use ferroflake_segment::{SegmentStore, SqliteStore};

#[test]
fn default_file_is_per_user_and_private() {
    let uid = tempfile::tempfile().unwrap().metadata().unwrap().uid();
    let path = SqliteStore::default_path();
    let state = ferroflake_segment::state_dir().expect("a state directory: root, or a home");
    assert_eq!(path, state.join("segments.db"));
    if uid == 0 {
        assert_eq!(
            path,
            std::path::Path::new("/var/lib/ferroflake/segments.db")
        );
    } else {
        assert!(path.ends_with("ferroflake/segments.db") && !path.starts_with("/var/tmp"));
    }
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
