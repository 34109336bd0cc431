//! `ferroflake_format`: the string forms of ids, encoded into caller buffers and parsed.

use core::ffi::{c_char, CStr};

use ferroflake::Format;

use crate::boundary::{borrow_text, guard, out, write_text};
use crate::ferroflake_result::{self, *};

/// A string form of an id. One of the `FERROFLAKE_FORMAT_*` values; any other number gives
/// `FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE`.
pub type ferroflake_format = u32;
/// Base 10, no padding, 1 to 20 characters.
pub const FERROFLAKE_FORMAT_DECIMAL: ferroflake_format = 0;
/// Base 62 (`0-9A-Za-z`), always 11 characters; sorts like the numbers.
pub const FERROFLAKE_FORMAT_BASE62: ferroflake_format = 1;
/// Crockford base 32, always 13 characters; sorts like the numbers. Parsing accepts lower
/// case and reads I and L as 1, O as 0.
pub const FERROFLAKE_FORMAT_BASE32: ferroflake_format = 2;
/// bwmarrin/snowflake's Base58 (Flickr's alphabet, lower case before upper), 1 to 11
/// characters. Parsing refuses a value above 2^63 - 1, which Go would wrap.
pub const FERROFLAKE_FORMAT_BASE58_FLICKR: ferroflake_format = 3;
/// bwmarrin/snowflake's Base32: base-32 digits in the z-base-32 alphabet, 1 to 13
/// characters (not z-base-32 itself, nor Crockford's `FERROFLAKE_FORMAT_BASE32`).
pub const FERROFLAKE_FORMAT_BASE32_BWMARRIN: ferroflake_format = 4;
/// Base 36, lower case (as Go's strconv), 1 to 13 characters; parsing takes either case.
pub const FERROFLAKE_FORMAT_BASE36: ferroflake_format = 5;
/// Base 2, 1 to 63 characters.
pub const FERROFLAKE_FORMAT_BASE2: ferroflake_format = 6;
/// bwmarrin/snowflake's Base64: standard padded base64 of the decimal text, up to 28
/// characters.
pub const FERROFLAKE_FORMAT_BASE64_DECIMAL: ferroflake_format = 7;
/// bwmarrin/snowflake's JSON form: the decimal in double quotes; parsing refuses an
/// unquoted number.
pub const FERROFLAKE_FORMAT_JSON: ferroflake_format = 8;

/// A buffer of this many bytes holds any id in any format, with its NUL terminator (the
/// longest: 63 binary digits).
pub const FERROFLAKE_ENCODED_MAX_SIZE: usize = 64;

/// Every format, in the order of its `FERROFLAKE_FORMAT_*` number.
const FORMATS: [(ferroflake_format, Format); 9] = [
    (FERROFLAKE_FORMAT_DECIMAL, Format::Decimal),
    (FERROFLAKE_FORMAT_BASE62, Format::Base62),
    (FERROFLAKE_FORMAT_BASE32, Format::Base32),
    (FERROFLAKE_FORMAT_BASE58_FLICKR, Format::Base58Flickr),
    (FERROFLAKE_FORMAT_BASE32_BWMARRIN, Format::Base32Bwmarrin),
    (FERROFLAKE_FORMAT_BASE36, Format::Base36),
    (FERROFLAKE_FORMAT_BASE2, Format::Base2),
    (FERROFLAKE_FORMAT_BASE64_DECIMAL, Format::Base64Decimal),
    (FERROFLAKE_FORMAT_JSON, Format::Json),
];

pub(crate) fn format(value: ferroflake_format) -> Result<Format, ferroflake_result> {
    FORMATS
        .iter()
        .find(|(v, _)| *v == value)
        .map(|&(_, format)| format)
        .ok_or(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)
}

/// The format with this name (the names the other languages and the CLI use): "dec",
/// "base62", "base32", "base58-flickr", "base32-bwmarrin", "base36", "base2",
/// "base64-decimal" or "json", for formats read from configuration.
///
/// Returns `UNKNOWN_ENUM_VALUE` for any other name, `INVALID_UTF8`, or `NULL_ARGUMENT`.
///
/// Ownership: `name` is only read during the call; `*out_format` is the caller's.
/// Thread safety: any thread.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `out_format` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_format_from_name(
    name: *const c_char,
    out_format: *mut ferroflake_format,
) -> ferroflake_result {
    guard(|| {
        if name.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's promise.
        let name = unsafe { CStr::from_ptr(name) };
        // SAFETY: the caller's promise above.
        let out_format = unsafe { out(out_format)? };
        let name = name.to_str().map_err(|_| FERROFLAKE_RESULT_INVALID_UTF8)?;
        let format = Format::from_name(name).ok_or(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)?;
        let value = FORMATS
            .iter()
            .find(|(_, f)| *f == format)
            .map(|&(v, _)| v)
            .ok_or(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)?;
        out_format.set(value);
        Ok(())
    })
}

/// The buffer size (in bytes, with the NUL terminator) that `ferroflake_format_encode`
/// needs for `id` in `format`: at most `FERROFLAKE_ENCODED_MAX_SIZE`.
///
/// Returns `PARSE_OVERFLOW` for an `id` above 2^63 - 1 (no id is), `UNKNOWN_ENUM_VALUE`
/// or `NULL_ARGUMENT`.
///
/// Ownership: `*out_size` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `out_size` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_format_encoded_size(
    format_value: ferroflake_format,
    id: u64,
    out_size: *mut usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let out_size = unsafe { out(out_size)? };
        out_size.set(format(format_value)?.encode(id)?.len() + 1);
        Ok(())
    })
}

/// Writes `id` in `format` into `buf` as a NUL-terminated string, and its length (without
/// the NUL) into `*out_len` when `out_len` is not NULL. Takes what
/// `ferroflake_format_parse` gives: every id, 0 to 2^63 - 1, has a string in every format.
///
/// Returns `PARSE_OVERFLOW` (nothing written) for an `id` above 2^63 - 1, as
/// `ferroflake_format_parse` does for its strings; `BUFFER_TOO_SMALL` (nothing written) if
/// `buf_size` is below what `ferroflake_format_encoded_size` reports;
/// `UNKNOWN_ENUM_VALUE`; or `NULL_ARGUMENT` if `buf` is NULL.
///
/// Ownership: `buf` and `*out_len` are the caller's, written only on success.
/// Thread safety: any thread.
///
/// # Safety
/// `buf` is NULL or valid for writing `buf_size` bytes; `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_format_encode(
    format_value: ferroflake_format,
    id: u64,
    buf: *mut c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> ferroflake_result {
    guard(|| {
        if buf.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        let text = format(format_value)?.encode(id)?;
        // SAFETY: the caller's promises above.
        unsafe { write_text(&text, buf, buf_size, out_len) }
    })
}

/// Parses the `len` bytes at `text` (no NUL needed; pass `strlen(s)` for a C string) as an
/// id in `format`.
///
/// Returns `PARSE_EMPTY`, `PARSE_NEGATIVE`, `PARSE_INVALID_CHARACTER`,
/// `PARSE_WRONG_LENGTH`, `PARSE_TOO_LONG`, `PARSE_OVERFLOW` (above 2^63 - 1),
/// `INVALID_UTF8`, `UNKNOWN_ENUM_VALUE`, or `NULL_ARGUMENT`.
///
/// Ownership: `text` is only read during the call; `*out_id` is the caller's.
/// Thread safety: any thread.
///
/// # Safety
/// `text` is NULL or valid for reading `len` bytes; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_format_parse(
    format_value: ferroflake_format,
    text: *const c_char,
    len: usize,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        if text.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        // SAFETY: the caller's promise above.
        let out_id = unsafe { out(out_id)? };
        let format = format(format_value)?;
        // SAFETY: the caller's promise above.
        let text = unsafe { borrow_text(text, len)? };
        out_id.set(format.parse(text)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_core_format_has_one_number() {
        assert_eq!(FORMATS.map(|(_, f)| f), Format::ALL);
        for (i, (value, _)) in FORMATS.iter().enumerate() {
            assert_eq!(*value as usize, i);
        }
    }

    #[test]
    fn format_names_are_the_core_names() {
        for (value, _) in FORMATS {
            let name = std::ffi::CString::new(format(value).unwrap().name()).unwrap();
            let mut found = 99;
            // SAFETY: a NUL-terminated name and a valid out-pointer.
            let result = unsafe { ferroflake_format_from_name(name.as_ptr(), &mut found) };
            assert_eq!((result, found), (FERROFLAKE_RESULT_OK, value));
        }
    }

    #[test]
    fn the_largest_encoding_fits_the_max_size() {
        let mut widest = 0;
        for (value, _) in FORMATS {
            let mut size = 0;
            // SAFETY: a valid out-pointer.
            let result =
                unsafe { ferroflake_format_encoded_size(value, i64::MAX as u64, &mut size) };
            assert_eq!(result, FERROFLAKE_RESULT_OK);
            widest = widest.max(size);
        }
        assert_eq!(widest, FERROFLAKE_ENCODED_MAX_SIZE);
    }

    #[test]
    fn values_above_the_largest_id_are_refused_as_parse_refuses_them() {
        for (value, _) in FORMATS {
            for id in [1u64 << 63, u64::MAX] {
                let (mut size, mut len) = (7, 9);
                let mut buf = [b'x' as c_char; FERROFLAKE_ENCODED_MAX_SIZE];
                // SAFETY: valid out-pointers and a buffer of the size passed.
                let (sized, encoded) = unsafe {
                    (
                        ferroflake_format_encoded_size(value, id, &mut size),
                        ferroflake_format_encode(value, id, buf.as_mut_ptr(), buf.len(), &mut len),
                    )
                };
                assert_eq!(
                    (sized, encoded),
                    (
                        FERROFLAKE_RESULT_PARSE_OVERFLOW,
                        FERROFLAKE_RESULT_PARSE_OVERFLOW
                    )
                );
                assert_eq!((size, len), (7, 9), "out-parameters untouched");
                assert!(buf.iter().all(|&c| c == b'x' as c_char));
            }
        }
    }

    #[test]
    fn short_buffers_are_refused_and_left_alone() {
        let mut buf = [b'x' as c_char; 8];
        let mut len = 99;
        // SAFETY: `buf` is 8 bytes, as passed.
        let result = unsafe {
            ferroflake_format_encode(
                FERROFLAKE_FORMAT_BASE62,
                1,
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
            )
        };
        assert_eq!(result, FERROFLAKE_RESULT_BUFFER_TOO_SMALL);
        assert!(buf.iter().all(|&c| c == b'x' as c_char));
        assert_eq!(len, 99);
    }

    #[test]
    fn invalid_utf8_is_its_own_code() {
        let bytes = [0xffu8, 0xfe];
        let mut id = 5;
        // SAFETY: two readable bytes.
        let result = unsafe {
            ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, bytes.as_ptr().cast(), 2, &mut id)
        };
        assert_eq!(result, FERROFLAKE_RESULT_INVALID_UTF8);
        assert_eq!(id, 5);
    }
}
