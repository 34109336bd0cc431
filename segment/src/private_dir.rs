//! The rule for a directory that holds what decides which IDs are issued (the embedded
//! store's table, this host's record of its ranges): the caller's own, and nobody else's to
//! write, since whoever can rewrite it can make two processes share a range.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use crate::SegmentError;

/// Creates `dir` mode 0700 if missing and checks that it belongs to the caller, is not a
/// symbolic link, and nobody else can write it; refusals are `store`'s
/// [`SegmentError::Unavailable`].
pub(crate) fn private_dir(dir: &Path, store: &str) -> Result<(), SegmentError> {
    let refuse = |detail: String| SegmentError::Unavailable {
        store: store.into(),
        detail,
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| refuse(format!("cannot create {}: {e}", dir.display())))?;
    let me = rustix::process::getuid().as_raw();
    let link = fs::symlink_metadata(dir)
        .map_err(|e| refuse(format!("cannot read {}: {e}", dir.display())))?;
    let meta =
        fs::metadata(dir).map_err(|e| refuse(format!("cannot read {}: {e}", dir.display())))?;
    if link.uid() != me || meta.uid() != me || !meta.is_dir() {
        return Err(refuse(format!(
            "{} is not a directory owned by uid {me}: refusing a table someone else controls",
            dir.display()
        )));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "{} is writable by other users (mode {:o}): make it private with chmod 700",
            dir.display(),
            meta.permissions().mode() & 0o7777
        )));
    }
    Ok(())
}
