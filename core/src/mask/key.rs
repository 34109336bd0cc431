//! Mask keys and their text form.

use core::fmt;

use crate::Error;

/// A mask key: a version (0 to [`MAX_VERSION`](Self::MAX_VERSION)), which masked IDs carry
/// in their text form, and a 128-bit secret, the SipHash key of the mask's rounds.
///
/// `Debug` shows the version only. The secret is not readable back through the API, and
/// it is not wiped from memory when the key is dropped (keep the process's memory private).
///
/// Mask keys and keyrings: a version and a 128-bit secret, read from text so that a key can
/// live in a file or an environment variable (never on a command line, where other users
/// of the machine can read it).
///
/// A key's text is `VERSION:SECRET`: the version in decimal (0 to 31), a colon, and the 16
/// secret bytes as 32 hex digits or as base64 (standard or URL-safe alphabet, with or
/// without padding). A keyring's text is one key per line; blank lines and lines starting
/// with `#` are skipped, and the first key is the one that masks.
///
/// ```text
/// # the key that masks new IDs
/// 2:9c1f0e8d7a6b5c4d3e2f1a0b9c8d7e6f
/// # kept so that IDs masked before the rotation still unmask
/// 1:AAECAwQFBgcICQoLDA0ODw
/// ```
///
/// Make a secret with a random source, e.g. `head -c 16 /dev/urandom | od -An -tx1 | tr -d
/// ' \n'`, or `ferroflake mask --new-key VERSION`.
#[derive(Clone, PartialEq, Eq)]
pub struct MaskKey {
    pub(super) version: u8,
    pub(super) secret: [u8; 16],
}

impl MaskKey {
    /// The largest version: masked text names the version in one base-32 character.
    pub const MAX_VERSION: u8 = 31;

    /// A key from its version and secret bytes.
    ///
    /// # Errors
    /// [`Error::MaskKeyVersionOutOfRange`] for a version above 31.
    pub const fn new(version: u8, secret: [u8; 16]) -> Result<MaskKey, Error> {
        if version > Self::MAX_VERSION {
            return Err(Error::MaskKeyVersionOutOfRange {
                version: version as u32,
                max: Self::MAX_VERSION as u32,
            });
        }
        Ok(MaskKey { version, secret })
    }

    /// A key from its text, `VERSION:SECRET` (see [`MaskKey`]); no surrounding
    /// whitespace.
    ///
    /// ```
    /// use ferroflake::{Error, MaskKey};
    /// let hex = MaskKey::parse("7:000102030405060708090a0b0c0d0e0f")?;
    /// let b64 = MaskKey::parse("7:AAECAwQFBgcICQoLDA0ODw==")?;
    /// assert_eq!(hex, b64);
    /// assert_eq!(format!("{hex:?}"), "MaskKey { version: 7, .. }");
    /// assert_eq!(MaskKey::parse("7:00"), Err(Error::ParseWrongLength { expected: 32, found: 2 }));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseEmpty`]; [`Error::ParseInvalidCharacter`] (a version that is not
    /// decimal, no colon, a secret outside its alphabet, or base64 with stray low bits);
    /// [`Error::ParseWrongLength`] for a secret that is not 32 hex digits or 22 (24 padded)
    /// base64 characters; [`Error::MaskKeyVersionOutOfRange`].
    pub fn parse(text: &str) -> Result<MaskKey, Error> {
        parse_at(text.as_bytes(), 0)
    }

    /// The version.
    pub const fn version(&self) -> u8 {
        self.version
    }

    pub(crate) const fn secret(&self) -> &[u8; 16] {
        &self.secret
    }
}

impl fmt::Debug for MaskKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaskKey")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Parses one key from `text`, which starts `offset` bytes into a larger text (so that
/// errors name the byte in the whole text).
pub(super) fn parse_at(text: &[u8], offset: usize) -> Result<MaskKey, Error> {
    if text.is_empty() {
        return Err(Error::ParseEmpty);
    }
    let bad = |index: usize| Error::ParseInvalidCharacter {
        index: offset + index,
    };
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(bad(0));
    }
    if text.get(digits) != Some(&b':') {
        return Err(bad(digits));
    }
    let version = text[..digits].iter().fold(0u32, |v, &d| {
        v.saturating_mul(10).saturating_add(u32::from(d - b'0'))
    });
    if version > u32::from(MaskKey::MAX_VERSION) {
        return Err(Error::MaskKeyVersionOutOfRange {
            version,
            max: u32::from(MaskKey::MAX_VERSION),
        });
    }
    let start = digits + 1;
    let secret = decode_secret(&text[start..]).map_err(|e| match e {
        Error::ParseInvalidCharacter { index } => bad(start + index),
        other => other,
    })?;
    MaskKey::new(version as u8, secret)
}

/// 16 bytes from 32 hex digits or 22 (24 with `==`) base64 characters.
fn decode_secret(s: &[u8]) -> Result<[u8; 16], Error> {
    let mut out = [0u8; 16];
    match s.len() {
        32 => {
            for (i, byte) in out.iter_mut().enumerate() {
                let hi =
                    hex_digit(s[2 * i]).ok_or(Error::ParseInvalidCharacter { index: 2 * i })?;
                let lo = hex_digit(s[2 * i + 1])
                    .ok_or(Error::ParseInvalidCharacter { index: 2 * i + 1 })?;
                *byte = (hi << 4) | lo;
            }
        }
        22 | 24 => {
            if s.len() == 24 && &s[22..] != b"==" {
                let index = if s[22] == b'=' { 23 } else { 22 };
                return Err(Error::ParseInvalidCharacter { index });
            }
            // 22 characters carry 132 bits: 128 of secret, then 4 that must be zero.
            let mut acc: u128 = 0;
            for (index, &c) in s[..22].iter().enumerate() {
                let v = base64_digit(c).ok_or(Error::ParseInvalidCharacter { index })?;
                if index == 21 {
                    if v & 0b1111 != 0 {
                        return Err(Error::ParseInvalidCharacter { index });
                    }
                    acc = (acc << 2) | u128::from(v >> 4);
                } else {
                    acc = (acc << 6) | u128::from(v);
                }
            }
            out = acc.to_be_bytes();
        }
        found => {
            return Err(Error::ParseWrongLength {
                expected: 32,
                found,
            })
        }
    }
    Ok(out)
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn base64_digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}
