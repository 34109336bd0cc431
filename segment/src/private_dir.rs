//! The rules for the files that decide which IDs are issued (a SQLite table, this host's
//! record of its ranges) and their directories: the caller's own, and nobody else's to
//! write or replace, since whoever can rewrite one can make two processes share a range.

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
    match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => nobody_else_can_move(parent, store),
        _ => Ok(()),
    }
}

/// Checks `dir` and every directory above it: each belongs to the caller or root, and is
/// writable by others only with the sticky bit (as `/tmp`). Otherwise another user could
/// rename what is below it away and put their own in its place.
fn nobody_else_can_move(dir: &Path, store: &str) -> Result<(), SegmentError> {
    let me = rustix::process::getuid().as_raw();
    let real = fs::canonicalize(dir).map_err(|e| SegmentError::Unavailable {
        store: store.into(),
        detail: format!("cannot read {}: {e}", dir.display()),
    })?;
    for above in real.ancestors() {
        let Ok(meta) = fs::metadata(above) else {
            continue;
        };
        let mode = meta.permissions().mode();
        let owner_ok = meta.uid() == me || meta.uid() == 0;
        if !owner_ok || (mode & 0o022 != 0 && mode & 0o1000 == 0) {
            return Err(SegmentError::Unavailable {
                store: store.into(),
                detail: format!(
                    "{} belongs to uid {} with mode {:o}: another user could move what is \
                     below it and put their own table or record in its place; use a \
                     directory whose every parent belongs to you or root and is writable by \
                     nobody else (or is sticky, as /tmp)",
                    above.display(),
                    meta.uid(),
                    mode & 0o7777
                ),
            });
        }
    }
    Ok(())
}

/// Checks a table file named by the caller, before it is opened: a symbolic link at `path`
/// must be the caller's or root's, the file (if there) the caller's, and its directory must
/// not let others replace it (writable by others only with the sticky bit, as `/tmp`).
/// Refusals are `store`'s [`SegmentError::Unavailable`].
// Only the SQLite store opens a table file; a build without it (ferroflake-remote's, which
// takes the segment traits alone) leaves this unused.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) fn trusted_file(path: &Path, store: &str) -> Result<(), SegmentError> {
    let refuse = |detail: String| SegmentError::Unavailable {
        store: store.into(),
        detail,
    };
    let me = rustix::process::getuid().as_raw();
    if let Ok(link) = fs::symlink_metadata(path) {
        if link.file_type().is_symlink() && link.uid() != me && link.uid() != 0 {
            return Err(refuse(format!(
                "{} is a symbolic link of uid {}: refusing a table someone else can point \
                 elsewhere",
                path.display(),
                link.uid()
            )));
        }
    }
    let real = fs::canonicalize(path).ok();
    if let Some(meta) = real.as_deref().and_then(|r| fs::metadata(r).ok()) {
        if meta.uid() != me {
            return Err(refuse(format!(
                "{} belongs to uid {}, not {me}: refusing a table someone else controls",
                path.display(),
                meta.uid()
            )));
        }
    }
    let file = real.unwrap_or_else(|| path.to_owned());
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if dir.exists() => nobody_else_can_move(dir, store)?,
        _ => {}
    }
    Ok(())
}
