//! String forms of IDs: decimal, and fixed-width base62 and Crockford base32 whose
//! alphabets are in ASCII order, so the strings sort exactly like the numbers; and the
//! forms of bwmarrin/snowflake (Go), for IDs already stored in them.

use core::fmt;
use core::ops::Deref;

use crate::bwmarrin_text::{self, BASE2, BASE32_BWMARRIN, BASE36, BASE58_FLICKR};
use crate::Error;

/// The largest value any ID can take: the sign bit is always 0.
const MAX_ID: u64 = i64::MAX as u64;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE32: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A string form of an ID.
///
/// The first three are ferroflake's own. The others read and write the forms of
/// bwmarrin/snowflake (Go) exactly, for IDs already stored in them; where Go wraps a value
/// past 64 bits or reads a sign, these refuse (IDs are 0 to 2^63 − 1), and parsing an empty
/// text is [`Error::ParseEmpty`] in every form. Its 8-byte big-endian form is
/// [`u64::to_be_bytes`]; [`Format::from_be_bytes`] reads it back within the domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Base 10, no padding: `6593687681236992000`.
    Decimal,
    /// Base 62 (`0-9A-Za-z`), always 11 characters: `7rtDFDvhW2y`-style, sortable.
    Base62,
    /// Crockford base 32 (`0-9`, `A-Z` without `I L O U`), always 13 characters, sortable.
    /// Parsing accepts lower case and reads `I`/`L` as 1 and `O` as 0, as Crockford says.
    Base32,
    /// bwmarrin's `Base58`: Flickr's alphabet (`1-9`, `a-z`, `A-Z` without `0 O I l`;
    /// lower case first, unlike Bitcoin's), 1 to 11 characters, no padding. Not sortable.
    Base58Flickr,
    /// bwmarrin's `Base32`: base-32 digits in the z-base-32 alphabet
    /// (`ybndrfg8ejkmcpqxot1uwisza345h769`), most significant first, 1 to 13 characters. It
    /// is not z-base-32 (which packs bytes' bits), hence the name. Not sortable.
    Base32Bwmarrin,
    /// bwmarrin's `Base36`, Go's `strconv` base 36: `0-9a-z`, 1 to 13 characters. Parsing
    /// accepts upper case too, as Go does.
    Base36,
    /// bwmarrin's `Base2`: binary, 1 to 63 characters.
    Base2,
    /// bwmarrin's `Base64`: standard padded base64 of the decimal text's bytes (not of the
    /// number's 8 bytes): `MTIz` for 123. Parsing refuses line breaks and nonzero bits past
    /// the data, which Go's decoder lets through, so each ID has exactly one text.
    Base64Decimal,
    /// bwmarrin's JSON form: the decimal in double quotes, `"123"`. Parsing refuses an
    /// unquoted number, as bwmarrin does.
    Json,
}

/// An encoded ID, held inline (no allocation). Derefs to `&str`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdString {
    buf: [u8; IdString::CAPACITY],
    len: u8,
}

impl IdString {
    /// The longest text of any ID in any format: 63 binary digits.
    pub const CAPACITY: usize = 63;
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
    pub const ALL: [Format; 9] = [
        Format::Decimal,
        Format::Base62,
        Format::Base32,
        Format::Base58Flickr,
        Format::Base32Bwmarrin,
        Format::Base36,
        Format::Base2,
        Format::Base64Decimal,
        Format::Json,
    ];

    /// The format's name: `dec`, `base62`, `base32`, `base58-flickr`, `base32-bwmarrin`,
    /// `base36`, `base2`, `base64-decimal` or `json`. Names say the alphabet where more
    /// than one is in use under the same base.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Decimal => "dec",
            Format::Base62 => "base62",
            Format::Base32 => "base32",
            Format::Base58Flickr => "base58-flickr",
            Format::Base32Bwmarrin => "base32-bwmarrin",
            Format::Base36 => "base36",
            Format::Base2 => "base2",
            Format::Base64Decimal => "base64-decimal",
            Format::Json => "json",
        }
    }

    /// The format with this [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Fixed width of the encoding, or `None` for the variable-length forms.
    pub const fn width(self) -> Option<usize> {
        match self {
            Format::Base62 => Some(11),
            Format::Base32 => Some(13),
            _ => None,
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
    /// assert_eq!(&*Format::Base58Flickr.encode(57)?, "Z");
    /// assert_eq!(&*Format::Base32Bwmarrin.encode(32)?, "by");
    /// assert_eq!(&*Format::Base64Decimal.encode(13587)?, "MTM1ODc=");
    /// assert_eq!(&*Format::Json.encode(13587)?, "\"13587\"");
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseOverflow`] for a value above 2^63 − 1, which `parse` refuses too.
    pub fn encode(self, id: u64) -> Result<IdString, Error> {
        if id > MAX_ID {
            return Err(Error::ParseOverflow);
        }
        let mut out = IdString {
            buf: [b'0'; IdString::CAPACITY],
            len: 0,
        };
        let len = match self {
            Format::Decimal | Format::Base62 | Format::Base32 => self.write_fixed(id, &mut out.buf),
            Format::Base58Flickr | Format::Base32Bwmarrin | Format::Base36 | Format::Base2 => {
                bwmarrin_text::write_digits(id, self.alphabet(), &mut out.buf)
            }
            Format::Base64Decimal => {
                let mut decimal = [0u8; 20];
                let len = Format::Decimal.write_fixed(id, &mut decimal);
                bwmarrin_text::write_base64(&decimal[..len], &mut out.buf)
            }
            Format::Json => {
                let len = Format::Decimal.write_fixed(id, &mut out.buf[1..]);
                out.buf[0] = b'"';
                out.buf[len + 1] = b'"';
                len + 2
            }
        };
        out.len = len as u8;
        Ok(out)
    }

    /// Writes `id` in decimal (unpadded), base62 or base32 (padded to their width).
    fn write_fixed(self, id: u64, out: &mut [u8]) -> usize {
        let mut digits = [0u8; 20];
        let used = bwmarrin_text::write_digits(id, self.alphabet(), &mut digits);
        let len = self.width().unwrap_or(used);
        out[..len - used].fill(self.alphabet()[0]);
        out[len - used..len].copy_from_slice(&digits[..used]);
        len
    }

    /// Parses a string in this format.
    ///
    /// ```
    /// use ferroflake::{Error, Format};
    /// assert_eq!(Format::Decimal.parse("42"), Ok(42));
    /// assert_eq!(Format::Decimal.parse("-1"), Err(Error::ParseNegative));
    /// assert_eq!(Format::Decimal.parse("9223372036854775808"), Err(Error::ParseOverflow));
    /// assert_eq!(Format::Json.parse("\"42\""), Ok(42));
    /// assert_eq!(Format::Json.parse("42"), Err(Error::ParseInvalidCharacter { index: 0 }));
    /// // 2^64, which Go's ParseBase58 wraps to 0.
    /// assert_eq!(Format::Base58Flickr.parse("JPwcyDCgEuq"), Err(Error::ParseOverflow));
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseEmpty`], [`Error::ParseNegative`], [`Error::ParseInvalidCharacter`]
    /// (with the byte offset in the text as given), [`Error::ParseWrongLength`] (fixed
    /// widths; base64 not in whole groups of four), [`Error::ParseTooLong`] (a decimal of
    /// more than 19 digits, also inside base64 and JSON) or [`Error::ParseOverflow`]
    /// (anything above 2^63 − 1).
    pub fn parse(self, s: &str) -> Result<u64, Error> {
        self.parse_bytes(s.as_bytes())
    }

    fn parse_bytes(self, bytes: &[u8]) -> Result<u64, Error> {
        if bytes.is_empty() {
            return Err(Error::ParseEmpty);
        }
        let value = match self {
            Format::Base64Decimal => {
                let mut decimal = [0u8; 19];
                let decimal = bwmarrin_text::read_base64(bytes, &mut decimal)?;
                return Format::Decimal
                    .parse_bytes(decimal)
                    .map_err(|e| bwmarrin_text::shift_index(e, bwmarrin_text::base64_index));
            }
            Format::Json => {
                return Format::Decimal
                    .parse_bytes(bwmarrin_text::unquote(bytes)?)
                    .map_err(|e| bwmarrin_text::shift_index(e, |i| i + 1));
            }
            _ if bytes[0] == b'-' => return Err(Error::ParseNegative),
            Format::Decimal | Format::Base62 | Format::Base32 => self.read_fixed(bytes)?,
            Format::Base58Flickr | Format::Base32Bwmarrin | Format::Base36 | Format::Base2 => {
                bwmarrin_text::read_digits(bytes, self.radix(), |b| self.digit(b))?
            }
        };
        if value > MAX_ID {
            return Err(Error::ParseOverflow);
        }
        Ok(value)
    }

    /// Reads decimal (at most 19 digits), base62 or base32 (exactly their width).
    fn read_fixed(self, bytes: &[u8]) -> Result<u64, Error> {
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
        let radix = self.radix();
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
        Ok(value)
    }

    /// Reads bwmarrin's `IntBytes` form, the 8 bytes big-endian, refusing what no ID is
    /// (Go reads the top bit as a negative ID).
    ///
    /// ```
    /// use ferroflake::{Error, Format};
    /// let bytes = 13587u64.to_be_bytes();
    /// assert_eq!(bytes, [0, 0, 0, 0, 0, 0, 0x35, 0x13]);
    /// assert_eq!(Format::from_be_bytes(bytes), Ok(13587));
    /// assert_eq!(Format::from_be_bytes([0x80, 0, 0, 0, 0, 0, 0, 0]), Err(Error::ParseOverflow));
    /// ```
    ///
    /// # Errors
    /// [`Error::ParseOverflow`] when the top bit is set.
    pub fn from_be_bytes(bytes: [u8; 8]) -> Result<u64, Error> {
        let id = u64::from_be_bytes(bytes);
        if id > MAX_ID {
            return Err(Error::ParseOverflow);
        }
        Ok(id)
    }

    /// The digits of a positional format. Base64-decimal and JSON wrap the decimal text, so
    /// theirs are decimal's.
    fn alphabet(self) -> &'static [u8] {
        match self {
            Format::Decimal | Format::Base64Decimal | Format::Json => b"0123456789",
            Format::Base62 => BASE62,
            Format::Base32 => BASE32,
            Format::Base58Flickr => BASE58_FLICKR,
            Format::Base32Bwmarrin => BASE32_BWMARRIN,
            Format::Base36 => BASE36,
            Format::Base2 => BASE2,
        }
    }

    /// The number of distinct digits (10 for the forms that wrap the decimal text).
    pub(crate) fn radix(self) -> u64 {
        self.alphabet().len() as u64
    }

    /// The ASCII character of `digit` (below [`radix`](Self::radix)).
    pub(crate) fn digit_char(self, digit: u64) -> u8 {
        self.alphabet()[digit as usize]
    }

    pub(crate) fn digit(self, b: u8) -> Option<u64> {
        let d = match (self, b) {
            (Format::Base62, b'0'..=b'9') => b - b'0',
            (Format::Base62, b'A'..=b'Z') => b - b'A' + 10,
            (Format::Base62, b'a'..=b'z') => b - b'a' + 36,
            (Format::Base32, _) => match b.to_ascii_uppercase() {
                b'O' => 0,
                b'I' | b'L' => 1,
                c => BASE32.iter().position(|&a| a == c)? as u8,
            },
            // Go's strconv reads letters of either case.
            (Format::Base36, _) => BASE36.iter().position(|&a| a == b.to_ascii_lowercase())? as u8,
            _ => self.alphabet().iter().position(|&a| a == b)? as u8,
        };
        Some(u64::from(d))
    }
}
