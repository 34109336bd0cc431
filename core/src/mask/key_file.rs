//! Key text from a file or the environment, read and explained one way for every face: a
//! key file is read only if it is a small regular file, other users' access to it is
//! reported, and a refusal names the line at fault, never what the text holds.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;
use std::string::{String, ToString};

use super::key::MaskKey;
use super::keyring::MaskKeyring;
use crate::Error;

/// The largest key file read: 32 keys with comments fit many times over. A bigger file
/// (or `/dev/zero`) is refused rather than read until memory runs out.
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// Key text [`MaskKeyring::parse`] refused, explained without quoting it: the text is a
/// secret, so a character that is not part of a key is named by its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTextError {
    error: Error,
    message: String,
}

impl KeyTextError {
    /// The core's error behind it, whose [`kind`](Error::kind) says what went wrong.
    pub fn error(&self) -> Error {
        self.error
    }
}

impl fmt::Display for KeyTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KeyTextError {}

/// The text of a key file, and the permission bits that let other users read it (`None`
/// when nobody else can).
#[derive(Clone, PartialEq, Eq)]
pub struct KeyFileText {
    /// The file's text.
    pub text: String,
    /// The file's mode when users other than its owner may read it.
    pub readable_by_others: Option<u32>,
}

impl fmt::Debug for KeyFileText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyFileText")
            .field("bytes", &self.text.len())
            .field("readable_by_others", &self.readable_by_others)
            .finish()
    }
}

impl KeyFileText {
    /// What to tell the user about the file at `path`: `None`, or that other users can
    /// read it and how to stop that. Every face says it as its language warns.
    pub fn warning(&self, path: &Path) -> Option<String> {
        self.readable_by_others.map(|mode| {
            std::format!(
                "the key file {} can be read by other users (mode {mode:o}); `chmod 600` it",
                path.display()
            )
        })
    }
}

impl KeyFileText {
    /// Key text that a caller read itself (with checks of its own first, as a service does
    /// for every file it trusts), judged by [`read_key_file`]'s rule from the file's
    /// metadata.
    pub fn judged(text: String, metadata: &std::fs::Metadata) -> Self {
        KeyFileText {
            text,
            readable_by_others: readable_by_others(metadata),
        }
    }
}

impl MaskKeyring {
    /// [`parse`](Self::parse), refused in words that say where the text came from
    /// (`source`: "the key file /etc/app/mask.key", "FERROFLAKE_MASK_KEY") and which line
    /// is wrong, never what the text holds.
    ///
    /// ```
    /// use ferroflake::{ErrorKind, MaskKeyring};
    ///
    /// let text = "# keys\n1:zz0102030405060708090a0b0c0d0e0f\n";
    /// let refused = MaskKeyring::parse_from(text, "the key file k").unwrap_err();
    /// assert_eq!(refused.error().kind(), ErrorKind::ParseInvalidCharacter);
    /// assert!(refused.to_string().starts_with("cannot read a mask key from the key file k: line 2"));
    /// assert!(!refused.to_string().contains("zz01"));
    /// ```
    ///
    /// # Errors
    /// [`KeyTextError`], with [`parse`](Self::parse)'s error.
    pub fn parse_from(text: &str, source: &str) -> Result<MaskKeyring, KeyTextError> {
        MaskKeyring::parse(text).map_err(|error| {
            // Lines are counted as `parse` counts them, after a byte-order mark.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let line = failing_line(text).unwrap_or(1);
            let detail = match error {
                Error::ParseEmpty => "no key in it (a key is VERSION:SECRET)".to_string(),
                Error::ParseInvalidCharacter { .. } => std::format!(
                    "line {line}: not a key (VERSION:SECRET, the secret as 32 hex digits \
                     or base64 of 16 bytes)"
                ),
                other => std::format!("line {line}: {other}"),
            };
            KeyTextError {
                error,
                message: std::format!("cannot read a mask key from {source}: {detail}"),
            }
        })
    }
}

/// The line (from 1) of `text` where [`MaskKeyring::parse`] stops: the first key line
/// that does not parse, or that gives a version a second secret.
fn failing_line(text: &str) -> Option<usize> {
    let mut secrets = std::collections::BTreeMap::new();
    for (index, line) in text.split('\n').enumerate() {
        let key_text = line.trim();
        if key_text.is_empty() || key_text.starts_with('#') {
            continue;
        }
        let Ok(key) = MaskKey::parse(key_text) else {
            return Some(index + 1);
        };
        if secrets.entry(key.version()).or_insert(*key.secret()) != key.secret() {
            return Some(index + 1);
        }
    }
    None
}

/// Reads the key file at `path` (links followed): a regular file of at most
/// [`MAX_KEY_FILE_BYTES`], in UTF-8. A FIFO or a device is refused at once, never waited
/// on or read without end.
///
/// # Errors
/// The file cannot be opened or read; it is not a regular file
/// ([`io::ErrorKind::InvalidInput`]), too large or not UTF-8
/// ([`io::ErrorKind::InvalidData`]).
pub fn read_key_file(path: &Path) -> io::Result<KeyFileText> {
    let file = open_without_waiting(path)?;
    let metadata = file.metadata()?;
    if !metadata.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = std::vec::Vec::new();
    file.take(MAX_KEY_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            std::format!("larger than {MAX_KEY_FILE_BYTES} bytes: not a key file"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))?;
    Ok(KeyFileText {
        text,
        readable_by_others: readable_by_others(&metadata),
    })
}

#[cfg(unix)]
fn open_without_waiting(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Opening a FIFO for reading would otherwise wait for a writer.
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_waiting(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

#[cfg(unix)]
fn readable_by_others(metadata: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = metadata.permissions().mode() & 0o777;
    (mode & 0o044 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn readable_by_others(_metadata: &std::fs::Metadata) -> Option<u32> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::ErrorKind;

    const KEY: &str = "1:000102030405060708090a0b0c0d0e0f\n";

    fn write(dir: &Path, name: &str, text: &str, mode: u32) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_private_key_file_is_read_without_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "k", KEY, 0o600);
        let read = read_key_file(&path).unwrap();
        assert_eq!(read.text, KEY);
        assert_eq!(read.warning(&path), None);
        assert!(MaskKeyring::parse_from(&read.text, "k").is_ok());
    }

    #[test]
    fn a_key_file_others_can_read_is_read_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o640, 0o604, 0o644] {
            let path = write(dir.path(), "k", KEY, mode);
            let warning = read_key_file(&path).unwrap().warning(&path).unwrap();
            assert!(
                warning.contains(&std::format!("(mode {mode:o}); `chmod 600` it")),
                "{warning}"
            );
        }
    }

    #[test]
    fn a_fifo_a_device_and_a_huge_file_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Without O_NONBLOCK the open would wait for a writer for ever.
        let refused = read_key_file(&fifo).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::InvalidInput, "{refused}");
        let device = read_key_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(device.kind(), io::ErrorKind::InvalidInput, "{device}");
        let huge = write(dir.path(), "huge", &"#".repeat(70_000), 0o600);
        let refused = read_key_file(&huge).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::InvalidData, "{refused}");
        assert!(
            refused.to_string().contains("larger than 65536 bytes"),
            "{refused}"
        );
    }

    #[test]
    fn refusals_name_the_source_and_line_never_the_text() {
        let secret = "1:ffeeddccbbaa99887766554433221100\n2:ffeeddccbbaa9988776655443322110g\n";
        let refused = MaskKeyring::parse_from(secret, "FERROFLAKE_MASK_KEY").unwrap_err();
        let message = refused.to_string();
        assert!(
            message
                .starts_with("cannot read a mask key from FERROFLAKE_MASK_KEY: line 2: not a key"),
            "{message}"
        );
        assert!(!message.contains("ffeedd"), "{message}");
        let empty = MaskKeyring::parse_from("# nothing\n", "k").unwrap_err();
        assert_eq!(empty.error(), Error::ParseEmpty);
        assert!(empty
            .to_string()
            .ends_with("k: no key in it (a key is VERSION:SECRET)"));
    }

    #[test]
    fn every_refusal_of_a_line_names_it() {
        let key = "00112233445566778899aabbccddeeff";
        let other = "ffeeddccbbaa99887766554433221100";
        for (text, line, kind) in [
            (
                std::format!("# keys\n\n999:{key}\n"),
                3,
                ErrorKind::MaskKeyVersionOutOfRange,
            ),
            (
                std::format!("1:{key}\n2:{other}\n  1:{other}\n"),
                3,
                ErrorKind::DuplicateMaskKeyVersion,
            ),
            // The same key twice is no conflict; the bad line after it is.
            (
                std::format!("1:{key}\n1:{key}\nx\n"),
                3,
                ErrorKind::ParseInvalidCharacter,
            ),
        ] {
            let refused = MaskKeyring::parse_from(&text, "k").unwrap_err();
            assert_eq!(refused.error().kind(), kind, "{refused}");
            let message = refused.to_string();
            assert!(
                message.starts_with(&std::format!(
                    "cannot read a mask key from k: line {line}: "
                )),
                "{message}"
            );
            assert!(
                !message.contains("0011") && !message.contains("ffee"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_before_the_first_key_is_not_part_of_it() {
        let text = "\u{feff}1:00112233445566778899aabbccddeeff\r\n";
        let ring = MaskKeyring::parse_from(text, "k").unwrap();
        assert_eq!(ring.current_version(), 1);
        // Only at the start: anywhere else it is a character no key has.
        let inside = "1:00112233445566778899aabbccddeeff\n\u{feff}2:x";
        assert!(MaskKeyring::parse_from(inside, "k").is_err());
    }
}
