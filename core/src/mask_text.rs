//! The text form of masked IDs.

use core::fmt;
use core::ops::Deref;

use crate::mask_key::MaskKey;
use crate::{Error, Format};

/// A masked ID as text, held inline (no allocation). Derefs to `&str`.
///
/// The text form of masked IDs: a version marker, then the masked number in fixed width.
///
/// In base62 and base32 the marker is one character, the key version as a digit of the
/// format (versions 0 to 31 fit both); in decimal it is two digits, `00` to `31`. The number
/// that follows has as many digits as the largest value of the width needs, zero-padded, so
/// every masked ID of one width and format has the same length.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MaskedString {
    buf: [u8; 24],
    len: u8,
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
const fn marker_len(format: Format) -> usize {
    match format {
        Format::Decimal => 2,
        Format::Base62 | Format::Base32 => 1,
    }
}

/// Digits of the number: the fewest that hold `2^bits - 1`.
fn digits(bits: u32, format: Format) -> usize {
    let (radix, limit) = (u128::from(format.radix()), 1u128 << bits);
    let (mut n, mut reach) = (1, radix);
    while reach < limit {
        reach *= radix;
        n += 1;
    }
    n
}

/// The length of every masked text of `bits`-bit IDs in `format`.
pub(crate) fn len(bits: u32, format: Format) -> usize {
    marker_len(format) + digits(bits, format)
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
    let marker = marker_len(format);
    let total = len(bits, format);
    let mut out = MaskedString {
        buf: [b'0'; 24],
        len: total as u8,
    };
    put(format, u64::from(version), &mut out.buf[..marker]);
    put(format, masked, &mut out.buf[marker..total]);
    out
}

/// The key version and masked number of a text of `bits`-bit IDs.
pub(crate) fn read(text: &str, bits: u32, format: Format) -> Result<(u8, u64), Error> {
    let bytes = text.as_bytes();
    let expected = len(bits, format);
    if bytes.is_empty() {
        return Err(Error::ParseEmpty);
    }
    if bytes.len() != expected {
        return Err(Error::ParseWrongLength {
            expected,
            found: bytes.len(),
        });
    }
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
