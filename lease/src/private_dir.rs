//! The embedded registry's directory: one that only its owner can change, checked before
//! every use, and written without following links.
//!
//! The records decide who holds which node id, so whoever can write them can hand a live
//! id to a second process. The directory must therefore belong to the caller (root
//! included: root trusts no directory another user prepared) and be writable by nobody
//! else, and nothing in it is opened through a symbolic link: a link planted beside the
//! records could otherwise make the registry overwrite a file of the planter's choosing.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` (mode 0700, parents as needed) if it is missing, then checks it.
///
/// # Errors
/// Why the directory cannot be trusted or made, in words.
pub fn prepare(dir: &Path) -> Result<(), String> {
    if dir.parent().is_none() {
        return Err(format!(
            "{} is the filesystem root, not a directory of its own",
            dir.display()
        ));
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create lease directory {}: {e}", dir.display()))?;
    check(dir)
}

/// Checks that `dir` is a directory owned by the caller and writable by nobody else. A
/// symbolic link in its place is accepted only if the caller owns the link too (a link
/// planted in a shared directory like /var/tmp belongs to whoever planted it).
fn check(dir: &Path) -> Result<(), String> {
    let me = rustix::process::getuid().as_raw();
    let link =
        fs::symlink_metadata(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if link.file_type().is_symlink() && link.uid() != me {
        return Err(format!(
            "{} is a symbolic link owned by uid {}, not by us (uid {me}): refusing a \
             directory someone else may have redirected",
            dir.display(),
            link.uid()
        ));
    }
    let meta = fs::metadata(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if meta.uid() != me {
        return Err(format!(
            "lease directory {} belongs to uid {}, not to us (uid {me}): whoever owns it \
             can rewrite the records and hand a live node id to a second process",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "lease directory {} is writable by other users (mode {:o}): they could rewrite \
             the records; make it private with chmod 700",
            dir.display(),
            meta.permissions().mode() & 0o7777
        ));
    }
    Ok(())
}

/// Opens `path` for reading and writing, creating it (mode 0600) if missing, without
/// following a symbolic link.
pub fn open_nofollow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// Reads `path` as text without following a symbolic link; `None` if it does not exist.
/// Anything but a regular file is an error (a FIFO planted there would block the read, and
/// the caller with its lock, for ever).
pub fn read_nofollow(path: &Path) -> io::Result<Option<String>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path);
    match file {
        Ok(mut file) => {
            if !file.metadata()?.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a regular file; move it aside",
                ));
            }
            let mut text = String::new();
            io::Read::read_to_string(&mut file, &mut text)?;
            Ok(Some(text))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `contents` atomically: a new temporary file with a random name,
/// created exclusively (never an existing file or link), synced, then renamed over `path`.
/// A crash leaves the old or the new contents, never half of either.
pub fn replace(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".leases-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(contents)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_the_root_and_open_directories() {
        assert!(prepare(Path::new("/"))
            .unwrap_err()
            .contains("filesystem root"));
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        prepare(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(prepare(&open)
            .unwrap_err()
            .contains("writable by other users"));
        fs::set_permissions(&open, fs::Permissions::from_mode(0o700)).unwrap();
        prepare(&open).unwrap();
    }

    #[test]
    fn never_writes_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let records = dir.path().join("leases.json");
        std::os::unix::fs::symlink(&victim, &records).unwrap();
        assert!(
            read_nofollow(&records).is_err(),
            "reading must not follow the link"
        );
        assert!(
            open_nofollow(&records).is_err(),
            "opening must not follow the link"
        );
        replace(&records, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&records).unwrap(), "new");
    }
}
