//! The text form of masked IDs.

use core::fmt;
use core::ops::Deref;

use super::key::MaskKey;
use crate::{bwmarrin_text, Error, Format};

/// A masked ID as text, held inline (no allocation). Derefs to `&str`.
///
/// The text form of masked IDs: a version marker, then the masked number in fixed width.
///
/// The marker is the key version in as few digits of the format as hold 31, the largest
/// version: one character in base62, base32, base58, base36; two digits in decimal, five in
/// base2. The number that follows has as many digits as the largest value of the width
/// needs, padded with the format's zero, so every masked ID of one width and format has the
/// same length. Base64-decimal and JSON wrap the decimal masked text, as they wrap an ID's.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MaskedString {
    buf: [u8; MaskedString::CAPACITY],
    len: u8,
}

impl MaskedString {
    /// The longest masked text: 64 bits in base2, after a 5-digit version marker.
    pub const CAPACITY: usize = 69;
}

impl Deref for MaskedString {
    type Target = str;
    fn deref(&self) -> &str {
        // Only ASCII digits of the formats' alphabets are ever written into `buf`.
        core::str::from_utf8(&self.buf[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Display for MaskedString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for MaskedString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Characters of the version marker.
fn marker_len(format: Format) -> usize {
    digits_for(u128::from(MaskKey::MAX_VERSION) + 1, format)
}

/// The decimal text that base64-decimal and JSON wrap, or `None` for the positional forms.
fn wrapped(format: Format) -> Option<Format> {
    matches!(format, Format::Base64Decimal | Format::Json).then_some(Format::Decimal)
}

/// Digits of the number: the fewest that hold `2^bits - 1`.
fn digits(bits: u32, format: Format) -> usize {
    digits_for(1u128 << bits, format)
}

/// The fewest digits that hold every value below `limit`.
fn digits_for(limit: u128, format: Format) -> usize {
    let radix = u128::from(format.radix());
    let (mut n, mut reach) = (1, radix);
    while reach < limit {
        reach *= radix;
        n += 1;
    }
    n
}

/// The length of every masked text of `bits`-bit IDs in `format`.
pub(crate) fn len(bits: u32, format: Format) -> usize {
    let positional = marker_len(format) + digits(bits, format);
    match format {
        Format::Base64Decimal => bwmarrin_text::base64_len(positional),
        Format::Json => positional + 2,
        _ => positional,
    }
}

/// Writes `digits` digits of `value` into `out`, most significant first.
fn put(format: Format, mut value: u64, out: &mut [u8]) {
    for slot in out.iter_mut().rev() {
        *slot = format.digit_char(value % format.radix());
        value /= format.radix();
    }
}

/// The text of `masked` (at most `bits` bits) made with the key of `version`.
pub(crate) fn write(version: u8, masked: u64, bits: u32, format: Format) -> MaskedString {
    let Some(inner) = wrapped(format) else {
        return write_positional(version, masked, bits, format);
    };
    let decimal = write_positional(version, masked, bits, inner);
    let mut out = MaskedString {
        buf: [b'0'; MaskedString::CAPACITY],
        len: 0,
    };
    let len = if format == Format::Json {
        out.buf[0] = b'"';
        out.buf[1..=decimal.len()].copy_from_slice(decimal.as_bytes());
        out.buf[decimal.len() + 1] = b'"';
        decimal.len() + 2
    } else {
        bwmarrin_text::write_base64(decimal.as_bytes(), &mut out.buf)
    };
    out.len = len as u8;
    out
}

fn write_positional(version: u8, masked: u64, bits: u32, format: Format) -> MaskedString {
    let marker = marker_len(format);
    let total = len(bits, format);
    let mut out = MaskedString {
        buf: [b'0'; MaskedString::CAPACITY],
        len: total as u8,
    };
    put(format, u64::from(version), &mut out.buf[..marker]);
    put(format, masked, &mut out.buf[marker..total]);
    out
}

/// The key version and masked number of a text of `bits`-bit IDs.
pub(crate) fn read(text: &str, bits: u32, format: Format) -> Result<(u8, u64), Error> {
    let bytes = text.as_bytes();
    let Some(inner) = wrapped(format) else {
        return read_positional(bytes, bits, format);
    };
    of_length(bytes, len(bits, format))?;
    if format == Format::Json {
        let decimal = bwmarrin_text::unquote(bytes)?;
        return read_positional(decimal, bits, inner)
            .map_err(|e| bwmarrin_text::shift_index(e, |i| i + 1));
    }
    let mut buf = [0u8; MaskedString::CAPACITY];
    let decimal = bwmarrin_text::read_base64(bytes, &mut buf)?;
    read_positional(decimal, bits, inner)
        .map_err(|e| bwmarrin_text::shift_index(e, bwmarrin_text::base64_index))
}

/// Masked texts of one width and format all have one length: refuses any other.
fn of_length(bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.is_empty() {
        return Err(Error::ParseEmpty);
    }
    if bytes.len() != expected {
        return Err(Error::ParseWrongLength {
            expected,
            found: bytes.len(),
        });
    }
    Ok(())
}

fn read_positional(bytes: &[u8], bits: u32, format: Format) -> Result<(u8, u64), Error> {
    let expected = len(bits, format);
    of_length(bytes, expected)?;
    let number = |range: core::ops::Range<usize>| -> Result<u64, Error> {
        let mut value: u64 = 0;
        for index in range {
            let digit = format
                .digit(bytes[index])
                .ok_or(Error::ParseInvalidCharacter { index })?;
            value = value
                .checked_mul(format.radix())
                .and_then(|v| v.checked_add(digit))
                .ok_or(Error::ParseOverflow)?;
        }
        Ok(value)
    };
    let marker = marker_len(format);
    let version = number(0..marker)?;
    let masked = number(marker..expected)?;
    if version > u64::from(MaskKey::MAX_VERSION) {
        return Err(Error::UnknownMaskKeyVersion {
            version: version as u32,
        });
    }
    if bits < 64 && masked >> bits != 0 {
        return Err(Error::IdOutOfRange { id: masked, bits });
    }
    Ok((version as u8, masked))
}
