//! The text forms of bwmarrin/snowflake (Go), so that IDs stored by it read back exactly:
//! variable-length digits in four alphabets, standard base64 of the decimal text, and the
//! quoted decimal of its JSON form.
//!
//! Where Go wraps a value past 64 bits, or reads a sign, these refuse: IDs are 0 to 2^63 − 1.

use crate::Error;

/// Flickr's base58: digits, then lower case, then upper case, without `0 O I l`.
pub(crate) const BASE58_FLICKR: &[u8; 58] =
    b"123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ";
/// The z-base-32 alphabet, used as plain base-32 digits (not the z-base-32 bit packing).
pub(crate) const BASE32_BWMARRIN: &[u8; 32] = b"ybndrfg8ejkmcpqxot1uwisza345h769";
/// Lower case, as Go's `strconv.FormatInt(id, 36)` writes it.
pub(crate) const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
pub(crate) const BASE2: &[u8; 2] = b"01";
/// RFC 4648 standard alphabet, padded with `=`.
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Writes `value` in `alphabet`, most significant first and without leading zeros (0 is the
/// alphabet's first character alone) at the start of `out`; returns the length.
pub(crate) fn write_digits(value: u64, alphabet: &[u8], out: &mut [u8]) -> usize {
    let radix = alphabet.len() as u64;
    let mut len = 0;
    let mut n = value;
    loop {
        out[len] = alphabet[(n % radix) as usize];
        n /= radix;
        len += 1;
        if n == 0 {
            break;
        }
    }
    out[..len].reverse();
    len
}

/// Reads digits of `radix`, most significant first; leading zeros are fine. The first
/// character outside the alphabet is reported even after the value has overflowed, so that
/// the error does not depend on how wide the reader's integer is.
pub(crate) fn read_digits(
    bytes: &[u8],
    radix: u64,
    digit: impl Fn(u8) -> Option<u64>,
) -> Result<u64, Error> {
    let mut value: Option<u64> = Some(0);
    for (index, &b) in bytes.iter().enumerate() {
        let d = digit(b).ok_or(Error::ParseInvalidCharacter { index })?;
        value = value
            .and_then(|v| v.checked_mul(radix))
            .and_then(|v| v.checked_add(d));
    }
    value.ok_or(Error::ParseOverflow)
}

/// The length of the padded base64 text of `len` bytes.
pub(crate) const fn base64_len(len: usize) -> usize {
    len.div_ceil(3) * 4
}

/// Writes `input` as padded standard base64 at the start of `out`; returns the length.
pub(crate) fn write_base64(input: &[u8], out: &mut [u8]) -> usize {
    let mut len = 0;
    for group in input.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, slot) in out[len..len + 4].iter_mut().enumerate() {
            *slot = if i <= group.len() {
                BASE64[((n >> (18 - 6 * i)) & 63) as usize]
            } else {
                b'='
            };
        }
        len += 4;
    }
    len
}

fn base64_value(b: u8) -> Option<u32> {
    BASE64.iter().position(|&a| a == b).map(|p| p as u32)
}

/// Reads padded standard base64 into `out`, refusing what Go's `StdEncoding` refuses and,
/// so that every text has one meaning, also the spellings Go reads leniently: line breaks
/// and nonzero bits after the last byte.
///
/// # Errors
/// [`Error::ParseInvalidCharacter`] at a character outside the alphabet, padding before the
/// end, or a last character with bits past the data; [`Error::ParseWrongLength`] when the
/// text is not whole groups of four; [`Error::ParseTooLong`] (with the decoded length) when
/// the bytes would not fit `out`.
pub(crate) fn read_base64<'a>(text: &[u8], out: &'a mut [u8]) -> Result<&'a [u8], Error> {
    let pad = text
        .iter()
        .rev()
        .take(2)
        .take_while(|&&b| b == b'=')
        .count();
    let body = &text[..text.len() - pad];
    if let Some(index) = body.iter().position(|&b| base64_value(b).is_none()) {
        return Err(Error::ParseInvalidCharacter { index });
    }
    if text.len() % 4 != 0 {
        return Err(Error::ParseWrongLength {
            expected: text.len().next_multiple_of(4),
            found: text.len(),
        });
    }
    // The last data character may only carry bits of real bytes.
    let spare_bits_mask = [0, 0b11, 0b1111][pad];
    if let Some(&last) = body.last() {
        if base64_value(last).unwrap_or(0) & spare_bits_mask != 0 {
            return Err(Error::ParseInvalidCharacter {
                index: body.len() - 1,
            });
        }
    }
    let decoded_len = text.len() / 4 * 3 - pad;
    if decoded_len > out.len() {
        return Err(Error::ParseTooLong { found: decoded_len });
    }
    let mut len = 0;
    for group in body.chunks(4) {
        let mut n = 0u32;
        for i in 0..4 {
            n = (n << 6) | group.get(i).and_then(|&b| base64_value(b)).unwrap_or(0);
        }
        for i in 0..group.len() - 1 {
            out[len] = (n >> (16 - 8 * i)) as u8;
            len += 1;
        }
    }
    Ok(&out[..len])
}

/// The index in the base64 text of the character where decoded byte `index` begins.
pub(crate) const fn base64_index(index: usize) -> usize {
    index / 3 * 4 + index % 3
}

/// Moves the index of an [`Error::ParseInvalidCharacter`] from inner text to outer text.
pub(crate) fn shift_index(error: Error, outer: impl Fn(usize) -> usize) -> Error {
    match error {
        Error::ParseInvalidCharacter { index } => Error::ParseInvalidCharacter {
            index: outer(index),
        },
        other => other,
    }
}

/// The text between JSON's quotes, or the position of the missing quote.
pub(crate) fn unquote(text: &[u8]) -> Result<&[u8], Error> {
    match text {
        [] => Err(Error::ParseEmpty),
        [first, ..] if *first != b'"' => Err(Error::ParseInvalidCharacter { index: 0 }),
        [b'"', inner @ .., b'"'] => Ok(inner),
        _ => Err(Error::ParseInvalidCharacter {
            index: text.len() - 1,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_tail_length() {
        for input in [&b""[..], b"1", b"12", b"123", b"1234"] {
            let mut text = [0u8; 8];
            let len = write_base64(input, &mut text);
            assert_eq!(len, base64_len(input.len()));
            let mut back = [0u8; 4];
            assert_eq!(read_base64(&text[..len], &mut back), Ok(input));
        }
    }
}
