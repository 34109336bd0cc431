//! String forms of IDs: decimal, and fixed-width base62 and Crockford base32 whose
//! alphabets are in ASCII order, so the strings sort exactly like the numbers.

use core::fmt;
use core::ops::Deref;

use crate::Error;

/// The largest value any ID can take: the sign bit is always 0.
const MAX_ID: u64 = i64::MAX as u64;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A string form of an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Base 10, no padding: `6593687681236992000`.
    Decimal,
    /// Base 62 (`0-9A-Za-z`), always 11 characters: `7rtDFDvhW2y`-style, sortable.
    Base62,
    /// Crockford base 32 (`0-9`, `A-Z` without `I L O U`), always 13 characters, sortable.
    /// Parsing accepts lower case and reads `I`/`L` as 1 and `O` as 0, as Crockford says.
    Base32,
}

/// An encoded ID, held inline (no allocation). Derefs to `&str`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdString {
    buf: [u8; 20],
    len: u8,
}

impl Deref for IdString {
    type Target = str;
    fn deref(&self) -> &str {
        // Only ASCII from the alphabets above is ever written into `buf`.
        core::str::from_utf8(&self.buf[..self.len as usize]).unwrap_or_default()
    }
}

impl fmt::Display for IdString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for IdString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Format {
    /// All formats, for tests and bindings that enumerate them.
    pub const ALL: [Format; 3] = [Format::Decimal, Format::Base62, Format::Base32];

    /// The format's name: `dec`, `base62` or `base32`.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Decimal => "dec",
            Format::Base62 => "base62",
            Format::Base32 => "base32",
        }
    }

    /// The format with this [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Fixed width of the encoding, or `None` for decimal.
    pub const fn width(self) -> Option<usize> {
        match self {
            Format::Decimal => None,
            Format::Base62 => Some(11),
            Format::Base32 => Some(13),
        }
    }

    /// Encodes `id`, on the same domain [`parse`](Self::parse) accepts: 0 to 2^63 − 1 (the
    /// sign bit of an ID is always 0). Every ID has a string in every format.
    ///
    /// ```
    /// use ferroflake::{Error, Format};
    /// let id = 6_593_687_681_236_992_000;
    /// for format in Format::ALL {
    ///     assert_eq!(format.parse(&format.encode(id)?), Ok(id));
    /// }
    /// assert!(*Format::Base62.encode(9)? < *Format::Base62.encode(10)?);
    /// assert_eq!(Format::Decimal.encode(1 << 63), Err(Error::ParseOverflow));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseOverflow`] for a value above 2^63 − 1, which `parse` refuses too.
    pub fn encode(self, id: u64) -> Result<IdString, Error> {
        if id > MAX_ID {
            return Err(Error::ParseOverflow);
        }
        Ok(self.encode_unchecked(id))
    }

    /// Encodes any `u64`; callers check the domain first.
    fn encode_unchecked(self, id: u64) -> IdString {
        let mut out = IdString {
            buf: [b'0'; 20],
            len: 0,
        };
        let (radix, alphabet, width): (u64, &[u8], usize) = match self {
            Format::Decimal => (10, b"0123456789", 20),
            Format::Base62 => (62, BASE62, 11),
            Format::Base32 => (32, BASE32, 13),
        };
        let mut digits = [0u8; 20];
        let mut n = id;
        let mut i = 20;
        loop {
            i -= 1;
            digits[i] = alphabet[(n % radix) as usize];
            n /= radix;
            if n == 0 {
                break;
            }
        }
        let used = 20 - i;
        let len = if self == Format::Decimal { used } else { width };
        out.buf[len - used..len].copy_from_slice(&digits[i..]);
        out.len = len as u8;
        out
    }

    /// Parses a string in this format.
    ///
    /// ```
    /// use ferroflake::{Error, Format};
    /// assert_eq!(Format::Decimal.parse("42"), Ok(42));
    /// assert_eq!(Format::Decimal.parse("-1"), Err(Error::ParseNegative));
    /// assert_eq!(Format::Decimal.parse("9223372036854775808"), Err(Error::ParseOverflow));
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseEmpty`], [`Error::ParseNegative`], [`Error::ParseInvalidCharacter`],
    /// [`Error::ParseWrongLength`], [`Error::ParseTooLong`] or [`Error::ParseOverflow`]
    /// (anything above 2^63 − 1).
    pub fn parse(self, s: &str) -> Result<u64, Error> {
        let bytes = s.as_bytes();
        if bytes.is_empty() {
            return Err(Error::ParseEmpty);
        }
        if bytes[0] == b'-' {
            return Err(Error::ParseNegative);
        }
        match self.width() {
            Some(expected) if bytes.len() != expected => {
                return Err(Error::ParseWrongLength {
                    expected,
                    found: bytes.len(),
                })
            }
            None if bytes.len() > 19 => return Err(Error::ParseTooLong { found: bytes.len() }),
            _ => {}
        }
        let radix: u64 = match self {
            Format::Decimal => 10,
            Format::Base62 => 62,
            Format::Base32 => 32,
        };
        let mut value: u64 = 0;
        for (index, &b) in bytes.iter().enumerate() {
            let digit = self
                .digit(b)
                .ok_or(Error::ParseInvalidCharacter { index })?;
            value = value
                .checked_mul(radix)
                .and_then(|v| v.checked_add(digit))
                .ok_or(Error::ParseOverflow)?;
        }
        if value > MAX_ID {
            return Err(Error::ParseOverflow);
        }
        Ok(value)
    }

    /// The number of distinct digits: 10, 62 or 32.
    pub(crate) const fn radix(self) -> u64 {
        match self {
            Format::Decimal => 10,
            Format::Base62 => 62,
            Format::Base32 => 32,
        }
    }

    /// The ASCII character of `digit` (below [`radix`](Self::radix)).
    pub(crate) fn digit_char(self, digit: u64) -> u8 {
        match self {
            Format::Decimal => b"0123456789"[digit as usize],
            Format::Base62 => BASE62[digit as usize],
            Format::Base32 => BASE32[digit as usize],
        }
    }

    pub(crate) fn digit(self, b: u8) -> Option<u64> {
        let d = match (self, b) {
            (_, b'0'..=b'9') => b - b'0',
            (Format::Decimal, _) => return None,
            (Format::Base62, b'A'..=b'Z') => b - b'A' + 10,
            (Format::Base62, b'a'..=b'z') => b - b'a' + 36,
            (Format::Base62, _) => return None,
            (Format::Base32, _) => match b.to_ascii_uppercase() {
                b'O' => 0,
                b'I' | b'L' => 1,
                c => BASE32.iter().position(|&a| a == c)? as u8,
            },
        };
        Some(u64::from(d))
    }
}
