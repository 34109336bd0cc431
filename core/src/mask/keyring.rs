//! Keyrings: the keys of every version in use, and their text form (one key per line).

use core::fmt;

use super::key::{parse_at, MaskKey};
use super::permutation::Mask;
use super::text;
use crate::{Error, Format};

/// The keys of every version in use: the current one masks, all of them unmask. A masked
/// ID's text names its key's version, so IDs masked before a rotation still unmask.
///
/// Holds up to 32 keys inline (one slot per version), with no allocation. `Debug` lists the
/// versions, never the secrets.
///
/// ```
/// use ferroflake::{Format, MaskKeyring};
///
/// let old = MaskKeyring::parse("1:000102030405060708090a0b0c0d0e0f")?;
/// let issued = old.current_mask(63)?.encode(42, Format::Base32)?;
///
/// // Rotation: version 2 masks from now on, version 1 still unmasks.
/// let ring = MaskKeyring::parse(
///     "2:f0e1d2c3b4a5968778695a4b3c2d1e0f\n1:000102030405060708090a0b0c0d0e0f\n",
/// )?;
/// assert_eq!(ring.decode(&issued, Format::Base32, 63), Ok(42));
/// let fresh = ring.current_mask(63)?.encode(42, Format::Base32)?;
/// assert!(fresh.starts_with('2') && issued.starts_with('1'));
/// assert_eq!(ring.decode(&fresh, Format::Base32, 63), Ok(42));
/// # Ok::<(), ferroflake::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct MaskKeyring {
    secrets: [Option<[u8; 16]>; 32],
    current: u8,
}

impl MaskKeyring {
    /// A keyring whose current key, the one that masks, is `current`.
    pub const fn new(current: MaskKey) -> MaskKeyring {
        let mut secrets = [None; 32];
        secrets[current.version as usize] = Some(current.secret);
        MaskKeyring {
            secrets,
            current: current.version,
        }
    }

    /// Adds a key that unmasks (the current key stays as it is). Adding a key that is
    /// already there does nothing.
    ///
    /// # Errors
    /// [`Error::DuplicateMaskKeyVersion`] if the keyring holds another secret for the
    /// version.
    pub fn insert(&mut self, key: MaskKey) -> Result<(), Error> {
        let slot = &mut self.secrets[key.version as usize];
        match slot {
            Some(secret) if *secret != key.secret => Err(Error::DuplicateMaskKeyVersion {
                version: u32::from(key.version),
            }),
            _ => {
                *slot = Some(key.secret);
                Ok(())
            }
        }
    }

    /// A keyring from its text: one key per line (see [`MaskKey`]), the first
    /// one current. Lines may have surrounding whitespace; `\r\n` line ends are fine, and
    /// so is a byte-order mark before the first line, as some editors save UTF-8.
    ///
    /// # Errors
    /// [`Error::ParseEmpty`] for a text without a key; as [`MaskKey::parse`] for a bad line,
    /// with [`Error::ParseInvalidCharacter`]'s index counted in the whole text;
    /// [`Error::DuplicateMaskKeyVersion`] for one version with two secrets.
    pub fn parse(text: &str) -> Result<MaskKeyring, Error> {
        let mut ring: Option<MaskKeyring> = None;
        let mut line_start = 0;
        let text = match text.strip_prefix('\u{feff}') {
            Some(rest) => {
                line_start = '\u{feff}'.len_utf8();
                rest
            }
            None => text,
        };
        for line in text.split('\n') {
            let offset = line_start;
            line_start += line.len() + 1;
            let leading = line.len() - line.trim_start().len();
            let key_text = line.trim();
            if key_text.is_empty() || key_text.starts_with('#') {
                continue;
            }
            let key = parse_at(key_text.as_bytes(), offset + leading)?;
            match &mut ring {
                None => ring = Some(MaskKeyring::new(key)),
                Some(ring) => ring.insert(key)?,
            }
        }
        ring.ok_or(Error::ParseEmpty)
    }

    /// The version of the key that masks.
    pub const fn current_version(&self) -> u8 {
        self.current
    }

    /// Whether the keyring holds a key of `version`.
    pub fn contains(&self, version: u8) -> bool {
        self.secrets
            .get(usize::from(version))
            .is_some_and(Option::is_some)
    }

    /// The versions held, in increasing order.
    pub fn versions(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=MaskKey::MAX_VERSION).filter(|&v| self.contains(v))
    }

    /// The mask of `bits`-bit IDs under the current key: the one that masks new IDs.
    ///
    /// # Errors
    /// [`Error::MaskWidthOutOfRange`] for a width outside 8..=64.
    pub fn current_mask(&self, bits: u32) -> Result<Mask, Error> {
        self.mask_of(self.current, bits)
    }

    /// The mask of `bits`-bit IDs under the key of `version`.
    ///
    /// # Errors
    /// [`Error::UnknownMaskKeyVersion`] if the keyring has no such key;
    /// [`Error::MaskWidthOutOfRange`].
    pub fn mask_of(&self, version: u8, bits: u32) -> Result<Mask, Error> {
        let secret = self
            .secrets
            .get(usize::from(version))
            .copied()
            .flatten()
            .ok_or(Error::UnknownMaskKeyVersion {
                version: u32::from(version),
            })?;
        Mask::new(&MaskKey { version, secret }, bits)
    }

    /// The ID of a masked text of `bits`-bit IDs, unmasked with the key its first character
    /// names.
    ///
    /// # Errors
    /// As [`Mask::decode`]; [`Error::UnknownMaskKeyVersion`] if no key of the keyring has
    /// the version the text names; [`Error::MaskWidthOutOfRange`].
    pub fn decode(&self, text: &str, format: Format, bits: u32) -> Result<u64, Error> {
        if !(Mask::MIN_BITS..=Mask::MAX_BITS).contains(&bits) {
            return Err(Error::MaskWidthOutOfRange { bits });
        }
        let (version, masked) = text::read(text, bits, format)?;
        self.mask_of(version, bits)?.unmask(masked)
    }
}

impl fmt::Debug for MaskKeyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Versions<'a>(&'a MaskKeyring);
        impl fmt::Debug for Versions<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list().entries(self.0.versions()).finish()
            }
        }
        f.debug_struct("MaskKeyring")
            .field("current", &self.current)
            .field("versions", &Versions(self))
            .finish_non_exhaustive()
    }
}
