//! Reading the small files an operator names: the tokens file, the TLS certificate and
//! key, the mask key, the config file. Each is read whole, at start and (most) again on
//! SIGHUP, so a name pointed at something that is not a small regular file (a FIFO, which
//! would block the reload for good; `/dev/zero` or a huge file, which would fill memory)
//! is refused at once with a clear error, and the files already loaded stay in force.
//!
//! These files decide who may call the service (tokens), who it is (TLS) and how it
//! behaves (config), so one owned by another user than the service's or root, or that
//! users other than its owner may write, is refused, as `sshd` refuses such an
//! `authorized_keys`: whoever could write it could grant themselves the admin scope. So
//! is one in a directory another user could put their own file in: every directory above
//! the name given, and above the file it leads to, must belong to the service's user or
//! root and be writable by nobody else, unless sticky (as `/tmp`).

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The largest file read: far above any tokens file, certificate chain or key.
pub const MAX_BYTES: u64 = 1 << 20;

/// The bytes of the regular file at `path` (links followed), at most [`MAX_BYTES`].
///
/// # Errors
/// The file cannot be opened or read, is not a regular file, or is larger than
/// [`MAX_BYTES`].
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let (owner, me) = (metadata.uid(), rustix::process::geteuid().as_raw());
    if owner != me && owner != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "owned by uid {owner}, neither this service's ({me}) nor root's: whoever owns \
                 it could change what the service trusts"
            ),
        ));
    }
    let mode = metadata.permissions().mode();
    if mode & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "writable by users other than its owner (mode {:04o}), who could change \
                 what the service trusts: chmod go-w it",
                mode & 0o7777
            ),
        ));
    }
    nobody_else_can_replace(path)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} bytes", MAX_BYTES),
        )
    };
    if metadata.len() > MAX_BYTES {
        return Err(too_large());
    }
    // A file that grows while it is read is still cut at the bound.
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Refuses `path` if a directory above it, as named or as its links resolve, would let
/// another user rename their own file into its place.
fn nobody_else_can_replace(path: &Path) -> io::Result<()> {
    let me = rustix::process::geteuid().as_raw();
    let named = std::path::absolute(path)?;
    let real = std::fs::canonicalize(path)?;
    let dirs = named.ancestors().skip(1).chain(real.ancestors().skip(1));
    for dir in dirs {
        let Ok(metadata) = std::fs::metadata(dir) else {
            continue;
        };
        let mode = metadata.permissions().mode();
        let owner = metadata.uid();
        let others_write = mode & 0o022 != 0 && mode & 0o1000 == 0;
        if (owner != me && owner != 0) || others_write {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "in {}, of uid {owner} with mode {:04o}: another user could put their \
                     own file in its place; keep it in a directory whose every parent \
                     belongs to this service's user or root and is writable by nobody else \
                     (or is sticky, as /tmp)",
                    dir.display(),
                    mode & 0o7777
                ),
            ));
        }
    }
    Ok(())
}

/// [`read`], as UTF-8 text.
///
/// # Errors
/// As [`read`], and a file that is not UTF-8.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_another_user_could_replace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        let tokens = open.join("tokens.toml");
        std::fs::write(&tokens, "text").unwrap();
        std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&tokens, &link).unwrap();
        for (mode, refused) in [
            (0o755, false),
            (0o1777, false),
            (0o777, true),
            (0o775, true),
        ] {
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(mode)).unwrap();
            for path in [&tokens, &link] {
                let read = read(path);
                assert_eq!(
                    read.is_err(),
                    refused,
                    "{path:?} in mode {mode:o}: {read:?}"
                );
                if refused {
                    assert!(read.unwrap_err().to_string().contains("their own file"));
                }
            }
        }
        // A link in such a directory, to a file elsewhere, is refused too.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let safe = dir.path().join("safe.toml");
        std::fs::write(&safe, "text").unwrap();
        let planted = open.join("planted.toml");
        std::os::unix::fs::symlink(&safe, &planted).unwrap();
        assert!(read(&safe).is_ok());
        assert!(read(&planted).is_err());
    }

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::write(&small, "text").unwrap();
        assert_eq!(read_to_string(&small).unwrap(), "text");

        let large = dir.path().join("large");
        std::fs::write(&large, vec![b'a'; MAX_BYTES as usize + 1]).unwrap();
        assert!(read(&large)
            .unwrap_err()
            .to_string()
            .contains("larger than"));

        // A FIFO with no writer: refused at once rather than waited on.
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        assert!(read(&fifo)
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));

        assert!(read(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
        assert!(read(dir.path()).is_err(), "a directory");

        for (mode, refused) in [(0o644, false), (0o600, false), (0o664, true), (0o646, true)] {
            std::fs::set_permissions(&small, std::fs::Permissions::from_mode(mode)).unwrap();
            let read = read(&small);
            assert_eq!(read.is_err(), refused, "mode {mode:o}: {read:?}");
            if refused {
                assert!(read.unwrap_err().to_string().contains("chmod go-w"));
            }
        }
        std::fs::set_permissions(&small, std::fs::Permissions::from_mode(0o600)).unwrap();
        // Another user's file, whatever its mode (needs root to make one).
        if rustix::process::geteuid().is_root() {
            let theirs = dir.path().join("theirs");
            std::fs::write(&theirs, "text").unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
            let refused = read(&theirs).unwrap_err().to_string();
            assert!(refused.contains("owned by uid 65534"), "{refused}");
        }

        std::fs::write(&small, [0xff, 0xfe]).unwrap();
        assert!(read_to_string(&small)
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
    }
}
