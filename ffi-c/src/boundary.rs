//! The panic boundary and the pointer checks every export goes through.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::failure::Failure;
use crate::ferroflake_result::{self, FERROFLAKE_RESULT_NULL_ARGUMENT, FERROFLAKE_RESULT_PANIC};
use crate::last_error;

/// Runs the body of an export. A panic (which would be undefined behaviour if it unwound
/// into C) becomes `FERROFLAKE_RESULT_PANIC`; errors become their code, and their text the
/// thread's last error message.
#[inline(always)] // one call level less on every export; the body is small
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> ferroflake_result {
    // AssertUnwindSafe: on a panic nothing of the body's state is observed again; the
    // out-parameters are written only as the body's last step.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ferroflake_result::FERROFLAKE_RESULT_OK,
        Ok(Err(failure)) => last_error::record(failure),
        Err(_) => last_error::record(FERROFLAKE_RESULT_PANIC.into()),
    }
}

/// A shared reference from a C pointer, or `NULL_ARGUMENT`.
///
/// # Safety
/// `ptr` is NULL or points to a live, properly aligned `T` that nothing mutates during the
/// call.
pub(crate) unsafe fn borrow<'a, T>(ptr: *const T) -> Result<&'a T, ferroflake_result> {
    // SAFETY: the caller promises a valid pointer when it is not NULL.
    unsafe { ptr.as_ref() }.ok_or(FERROFLAKE_RESULT_NULL_ARGUMENT)
}

/// An out-parameter: a checked, non-NULL pointer that is written once, with `set`, as the
/// last step of a successful call.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// Writes the value. The old contents (possibly uninitialised) are not read or dropped,
    /// and a misaligned pointer from C is written correctly instead of being undefined
    /// behaviour.
    pub(crate) fn set(self, value: T) {
        // SAFETY: `out` checked the pointer for NULL and its caller promised it is valid
        // for writes of a `T`; write_unaligned needs no alignment.
        unsafe { self.0.write_unaligned(value) }
    }
}

/// An out-parameter from a C pointer, or `NULL_ARGUMENT`.
///
/// # Safety
/// `ptr` is NULL or valid for writes of a `T` (any alignment) until the call returns.
pub(crate) unsafe fn out<T>(ptr: *mut T) -> Result<Out<T>, ferroflake_result> {
    if ptr.is_null() {
        Err(FERROFLAKE_RESULT_NULL_ARGUMENT)
    } else {
        Ok(Out(ptr))
    }
}

/// A C string argument as UTF-8: `NULL_ARGUMENT` or `INVALID_UTF8` if it is not one.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string that lives, unchanged, during the call.
pub(crate) unsafe fn borrow_str<'a>(ptr: *const core::ffi::c_char) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
    }
    // SAFETY: the caller's promise above.
    unsafe { core::ffi::CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| ferroflake_result::FERROFLAKE_RESULT_INVALID_UTF8.into())
}

/// The `len` bytes at `text` (no NUL needed) as UTF-8: `NULL_ARGUMENT`, `BUFFER_TOO_LARGE`
/// for a length no allocation can have, or `INVALID_UTF8`.
///
/// # Safety
/// `text` is NULL or valid for reading `len` bytes that stay unchanged during the call.
pub(crate) unsafe fn borrow_text<'a>(
    text: *const core::ffi::c_char,
    len: usize,
) -> Result<&'a str, Failure> {
    use ferroflake_result::{FERROFLAKE_RESULT_BUFFER_TOO_LARGE, FERROFLAKE_RESULT_INVALID_UTF8};
    if text.is_null() {
        return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
    }
    if len > isize::MAX as usize {
        return Err(FERROFLAKE_RESULT_BUFFER_TOO_LARGE.into());
    }
    // SAFETY: non-NULL and readable for `len` bytes by the caller's promise.
    let bytes = unsafe { core::slice::from_raw_parts(text.cast::<u8>(), len) };
    core::str::from_utf8(bytes).map_err(|_| FERROFLAKE_RESULT_INVALID_UTF8.into())
}

/// Writes `text` and a NUL into the caller's `buf`, and its length (without the NUL) into
/// `*out_len` when `out_len` is not NULL: `NULL_ARGUMENT` for a NULL `buf`, or
/// `BUFFER_TOO_SMALL` (nothing written) if `buf_size` cannot hold it.
///
/// # Safety
/// `buf` is NULL or valid for writing `buf_size` bytes; `out_len` is NULL or writable.
pub(crate) unsafe fn write_text(
    text: &str,
    buf: *mut core::ffi::c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> Result<(), Failure> {
    if buf.is_null() {
        return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
    }
    if buf_size < text.len() + 1 {
        return Err(ferroflake_result::FERROFLAKE_RESULT_BUFFER_TOO_SMALL.into());
    }
    // SAFETY: `buf` holds at least len + 1 bytes (checked above, caller's promise), and
    // cannot overlap `text`, which the library made.
    unsafe {
        core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        buf.add(text.len()).write(0);
    }
    if !out_len.is_null() {
        // SAFETY: non-NULL and writable by the caller's promise.
        unsafe { out(out_len)? }.set(text.len());
    }
    Ok(())
}

/// Fills the caller's `ids[0..len]` through a scratch buffer, so that the caller's memory
/// is written only when `fill` succeeds: `NULL_ARGUMENT` for a NULL `ids` (even with `len`
/// 0), `BUFFER_TOO_LARGE` for a length memory cannot hold.
///
/// # Safety
/// `ids` is NULL or valid for writing `len` `u64`s (any alignment).
pub(crate) unsafe fn fill_ids(
    ids: *mut u64,
    len: usize,
    fill: impl FnOnce(&mut [u64]) -> Result<(), Failure>,
) -> Result<(), Failure> {
    use ferroflake_result::FERROFLAKE_RESULT_BUFFER_TOO_LARGE;
    if ids.is_null() {
        return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
    }
    if len > isize::MAX as usize / core::mem::size_of::<u64>() {
        return Err(FERROFLAKE_RESULT_BUFFER_TOO_LARGE.into());
    }
    let mut scratch: Vec<u64> = Vec::new();
    scratch
        .try_reserve_exact(len)
        .map_err(|_| FERROFLAKE_RESULT_BUFFER_TOO_LARGE)?;
    scratch.resize(len, 0);
    fill(&mut scratch)?;
    // SAFETY: `ids` is valid for `len` writes (caller's promise) and cannot overlap our
    // fresh allocation. Copying bytes needs no alignment from the caller's pointer.
    unsafe {
        core::ptr::copy_nonoverlapping(
            scratch.as_ptr().cast::<u8>(),
            ids.cast::<u8>(),
            len * core::mem::size_of::<u64>(),
        )
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ferroflake_result::*;

    #[test]
    fn a_panic_becomes_a_result_code_instead_of_unwinding() {
        let result = guard(|| panic!("deliberate panic inside the boundary"));
        assert_eq!(result, FERROFLAKE_RESULT_PANIC);
    }

    #[test]
    fn errors_and_success_pass_through() {
        assert_eq!(guard(|| Ok(())), FERROFLAKE_RESULT_OK);
        assert_eq!(
            guard(|| Err(FERROFLAKE_RESULT_ZERO_TICK.into())),
            FERROFLAKE_RESULT_ZERO_TICK
        );
    }

    #[test]
    fn out_params_may_be_misaligned() {
        let mut bytes = [0u8; 16];
        // SAFETY: bytes 1..9 are writable; `set` needs no alignment.
        unsafe { out(bytes.as_mut_ptr().add(1).cast::<u64>()) }
            .unwrap()
            .set(u64::from_ne_bytes([1, 2, 3, 4, 5, 6, 7, 8]));
        assert_eq!(bytes[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
    }

    #[test]
    fn null_pointers_are_refused_before_use() {
        // SAFETY: NULL is always allowed.
        unsafe {
            assert_eq!(
                borrow::<u64>(core::ptr::null()).err(),
                Some(FERROFLAKE_RESULT_NULL_ARGUMENT)
            );
            assert!(matches!(
                out::<u64>(core::ptr::null_mut()),
                Err(FERROFLAKE_RESULT_NULL_ARGUMENT)
            ));
        }
    }
}
