//! `ferroflake_mask_keyring`: the core's keyed ID mask (`MaskKeyring`, `Mask`) behind an
//! opaque handle, for public IDs that hide counts, times and nodes.

use core::ffi::c_char;

use ferroflake::{Mask, MaskKeyring};

use crate::boundary::{borrow, borrow_text, guard, out, write_text};
use crate::failure::Failure;
use crate::ferroflake_result::{self, *};
use crate::format::{ferroflake_format, format};

/// A buffer of this many bytes holds any masked text of any width in any format, with its
/// NUL terminator (the widest: 64 bits in base 2 after a 5-digit version, 69 characters).
pub const FERROFLAKE_MASK_TEXT_MAX_SIZE: usize = 70;

/// Mask keys: the current one masks, every one unmasks the texts that name its version.
///
/// A keyed, reversible permutation of the IDs of one bit width (63 for any ferroflake
/// layout, 53 for IDs that must stay exact in a JavaScript number, any of 8 to 64): masked
/// IDs look random to anyone without the key and unmask only with it. It hides what an ID
/// tells (time, node, a count); it does not authenticate: every number unmasks to some ID,
/// so look the ID up and check the caller may see it. Equal IDs give equal masked IDs.
///
/// Opaque: make one with `ferroflake_mask_keyring_new` from key text, release it with
/// `ferroflake_mask_keyring_free`. It is immutable, so any number of threads may use one
/// keyring at once (every function but `_free`), and it may be freed on a thread other than
/// the one that made it. The secrets are not readable back through the API.
pub struct ferroflake_mask_keyring {
    inner: MaskKeyring,
}

// The docs above promise that a keyring may be shared by threads: hold the type to it.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<ferroflake_mask_keyring>();
};

impl ferroflake_mask_keyring {
    fn current_mask(&self, bits: u32) -> Result<Mask, ferroflake::Error> {
        self.inner.current_mask(bits)
    }
}

/// Makes a keyring from the `len` bytes of key text at `text` (no NUL needed, so a key
/// file's content can be passed as read): one key per line, `VERSION:SECRET`, the version
/// 0 to 31 and the secret 16 bytes as 32 hex digits or base64; blank lines and lines
/// starting with `#` are skipped; the first key masks. Read keys from a file or the
/// environment (`FERROFLAKE_MASK_KEY`, as the CLI does), never from a command line.
///
/// Returns `PARSE_EMPTY` (no key), `PARSE_INVALID_CHARACTER`, `PARSE_WRONG_LENGTH` (a
/// secret of the wrong size), `MASK_KEY_VERSION_OUT_OF_RANGE`,
/// `DUPLICATE_MASK_KEY_VERSION` (one version, two secrets), `INVALID_UTF8`, or
/// `NULL_ARGUMENT`; `ferroflake_last_error_message` says where.
///
/// Ownership: `text` is only read during the call (the caller may wipe it afterwards). On
/// success the caller owns `*out_keyring` and releases it with
/// `ferroflake_mask_keyring_free`. Thread safety: any thread.
///
/// # Safety
/// `text` is NULL or valid for reading `len` bytes; `out_keyring` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_new(
    text: *const c_char,
    len: usize,
    out_keyring: *mut *mut ferroflake_mask_keyring,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (text, out_keyring) = unsafe { (borrow_text(text, len)?, out(out_keyring)?) };
        let inner = MaskKeyring::parse_from(text, "the key text")
            .map_err(|e| Failure::new(crate::result::from_kind(e.error().kind()), e))?;
        out_keyring.set(Box::into_raw(Box::new(ferroflake_mask_keyring { inner })));
        Ok(())
    })
}

/// Releases a keyring. NULL is accepted and ignored.
///
/// Ownership: takes the handle back; it must not be used again.
/// Thread safety: no other thread may be using the keyring any more.
///
/// # Safety
/// `keyring` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_free(keyring: *mut ferroflake_mask_keyring) {
    if !keyring.is_null() {
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        drop(unsafe { Box::from_raw(keyring) });
    }
}

/// The version of the key that masks (the first key of the text), 0 to 31.
///
/// Returns `NULL_ARGUMENT`. Ownership: `keyring` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `keyring` is NULL or a live handle; `out_version` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_current_version(
    keyring: *const ferroflake_mask_keyring,
    out_version: *mut u32,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (keyring, out_version) = unsafe { (borrow(keyring)?, out(out_version)?) };
        out_version.set(u32::from(keyring.inner.current_version()));
        Ok(())
    })
}

/// The masked form of `id` under the current key: a number of the same `bits` width (8 to
/// 64; 63 keeps every masked ID below 2^63, 53 below 2^53).
///
/// Returns `MASK_WIDTH_OUT_OF_RANGE`, `ID_OUT_OF_RANGE` (`id` has bits above the width),
/// or `NULL_ARGUMENT`.
///
/// Ownership: `keyring` is borrowed. Thread safety: any number of threads at once.
///
/// # Safety
/// `keyring` is NULL or a live handle; `out_masked` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_mask(
    keyring: *const ferroflake_mask_keyring,
    bits: u32,
    id: u64,
    out_masked: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (keyring, out_masked) = unsafe { (borrow(keyring)?, out(out_masked)?) };
        out_masked.set(keyring.current_mask(bits)?.mask(id)?);
        Ok(())
    })
}

/// The ID that `ferroflake_mask_keyring_mask` turned into `masked`, under the current key
/// (a bare number does not say which key masked it; masked text does, see
/// `ferroflake_mask_keyring_decode`). Every number of the width unmasks to some ID: check
/// that the ID exists and may be shown before trusting it.
///
/// Returns `MASK_WIDTH_OUT_OF_RANGE`, `ID_OUT_OF_RANGE`, or `NULL_ARGUMENT`.
///
/// Ownership: `keyring` is borrowed. Thread safety: any number of threads at once.
///
/// # Safety
/// `keyring` is NULL or a live handle; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_unmask(
    keyring: *const ferroflake_mask_keyring,
    bits: u32,
    masked: u64,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (keyring, out_id) = unsafe { (borrow(keyring)?, out(out_id)?) };
        out_id.set(keyring.current_mask(bits)?.unmask(masked)?);
        Ok(())
    })
}

/// The buffer size (in bytes, with the NUL terminator) that every masked text of
/// `bits`-bit IDs in `format` needs: the texts of one width and format all have one length
/// (for 63 bits: 13 in base62, 15 in base32, 22 in decimal), at most
/// `FERROFLAKE_MASK_TEXT_MAX_SIZE`.
///
/// Returns `MASK_WIDTH_OUT_OF_RANGE`, `UNKNOWN_ENUM_VALUE`, or `NULL_ARGUMENT`.
///
/// Ownership: `*out_size` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `out_size` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_text_size(
    bits: u32,
    format_value: ferroflake_format,
    out_size: *mut usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let out_size = unsafe { out(out_size)? };
        let format = format(format_value)?;
        if !(Mask::MIN_BITS..=Mask::MAX_BITS).contains(&bits) {
            return Err(ferroflake::Error::MaskWidthOutOfRange { bits }.into());
        }
        out_size.set(Mask::text_len_of(bits, format) + 1);
        Ok(())
    })
}

/// Masks `id` under the current key and writes it into `buf` as a NUL-terminated text in
/// `format`: the key's version first (one character; two digits in decimal), then the
/// masked number in fixed width, so the length says nothing about the ID. Its length
/// (without the NUL) goes into `*out_len` when `out_len` is not NULL.
///
/// Returns `BUFFER_TOO_SMALL` (nothing written) if `buf_size` is below what
/// `ferroflake_mask_text_size` reports; `MASK_WIDTH_OUT_OF_RANGE`, `ID_OUT_OF_RANGE`,
/// `UNKNOWN_ENUM_VALUE`, or `NULL_ARGUMENT`.
///
/// Ownership: `keyring` is borrowed; `buf` and `*out_len` are the caller's, written only on
/// success. Thread safety: any number of threads at once.
///
/// # Safety
/// `keyring` is NULL or a live handle; `buf` is NULL or valid for writing `buf_size` bytes;
/// `out_len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_encode(
    keyring: *const ferroflake_mask_keyring,
    bits: u32,
    format_value: ferroflake_format,
    id: u64,
    buf: *mut c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let keyring = unsafe { borrow(keyring)? };
        if buf.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        let text = keyring
            .current_mask(bits)?
            .encode(id, format(format_value)?)?;
        // SAFETY: the caller's promises above.
        unsafe { write_text(&text, buf, buf_size, out_len) }
    })
}

/// The ID of the `len` bytes of masked text at `text` (no NUL needed) of `bits`-bit IDs in
/// `format`, unmasked with the key whose version the text names: texts masked before a key
/// rotation still decode while the keyring holds their key.
///
/// Returns `UNKNOWN_MASK_KEY_VERSION` (the keyring has no key of the text's version),
/// `PARSE_EMPTY`, `PARSE_WRONG_LENGTH`, `PARSE_INVALID_CHARACTER`, `ID_OUT_OF_RANGE` (a
/// number above the width), `MASK_WIDTH_OUT_OF_RANGE`, `UNKNOWN_ENUM_VALUE`,
/// `INVALID_UTF8`, or `NULL_ARGUMENT`.
///
/// Ownership: `keyring` is borrowed, `text` only read during the call; `*out_id` is the
/// caller's. Thread safety: any number of threads at once.
///
/// # Safety
/// `keyring` is NULL or a live handle; `text` is NULL or valid for reading `len` bytes;
/// `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_mask_keyring_decode(
    keyring: *const ferroflake_mask_keyring,
    bits: u32,
    format_value: ferroflake_format,
    text: *const c_char,
    len: usize,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (keyring, text, out_id) =
            unsafe { (borrow(keyring)?, borrow_text(text, len)?, out(out_id)?) };
        let format = format(format_value)?;
        out_id.set(keyring.inner.decode(text, format, bits)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflake::Format;

    #[test]
    fn the_max_size_is_the_widest_text() {
        let widest = (Mask::MIN_BITS..=Mask::MAX_BITS)
            .flat_map(|bits| Format::ALL.map(|format| Mask::text_len_of(bits, format)))
            .max();
        assert_eq!(widest, Some(FERROFLAKE_MASK_TEXT_MAX_SIZE - 1));
    }

    #[test]
    fn a_failed_parse_leaves_the_out_parameter_alone() {
        let text = "1:00";
        let mut keyring = core::ptr::dangling_mut::<ferroflake_mask_keyring>();
        // SAFETY: `text` is readable for its length; the out-pointer is valid.
        let result =
            unsafe { ferroflake_mask_keyring_new(text.as_ptr().cast(), text.len(), &mut keyring) };
        assert_eq!(
            result,
            ferroflake_result::FERROFLAKE_RESULT_PARSE_WRONG_LENGTH
        );
        assert_eq!(keyring, core::ptr::dangling_mut());
    }

    fn keyring_new(text: &str) -> (ferroflake_result, String) {
        let mut keyring = core::ptr::null_mut();
        // SAFETY: `text` is readable for its length; the out-pointer is valid.
        let result =
            unsafe { ferroflake_mask_keyring_new(text.as_ptr().cast(), text.len(), &mut keyring) };
        // SAFETY: a handle from the call above, released once (NULL is ignored).
        unsafe { ferroflake_mask_keyring_free(keyring) };
        // SAFETY: the thread's message stays valid until its next failing call.
        let message = unsafe { core::ffi::CStr::from_ptr(crate::ferroflake_last_error_message()) };
        (result, message.to_string_lossy().into_owned())
    }

    #[test]
    fn key_text_is_read_as_the_other_faces_read_it() {
        let key = "1:00112233445566778899aabbccddeeff";
        // A byte-order mark before the first line, as a key file's text passed as read.
        let (result, _) = keyring_new(&format!("\u{feff}{key}\n"));
        assert_eq!(result, ferroflake_result::FERROFLAKE_RESULT_OK);
        // A refusal names the line, never the text.
        let (result, message) = keyring_new(&format!("{key}\n2:hiddenhiddenhiddenhiddenhiddenhi"));
        assert_eq!(
            result,
            ferroflake_result::FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER
        );
        assert!(message.contains("the key text: line 2"), "{message}");
        assert!(!message.contains("hidden"), "{message}");
    }
}
