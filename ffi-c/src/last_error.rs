//! The text of the calling thread's last failed call: `ferroflake_last_error_message`.
//!
//! A result code says what kind of refusal it was; this says the rest, in the words of the
//! error that caused it (the core's `Error`, `LeaseError` or `SegmentError` `Display`, the
//! same text the Rust, Python and Node faces show), so the C text cannot drift from theirs.

use core::cell::RefCell;
use core::ffi::c_char;

use crate::failure::Failure;
use crate::ferroflake_result;

/// The longest text kept, in bytes, NUL included; longer texts are cut at a character
/// boundary and end in "...".
const CAPACITY: usize = 1024;

/// The last failure on one thread: its code and its NUL-terminated text. Held inline in
/// thread-local storage, so recording a failure allocates nothing and nothing is left to
/// free when a thread or the process ends.
struct Last {
    code: ferroflake_result,
    text: [u8; CAPACITY],
}

thread_local! {
    static LAST: RefCell<Last> = const {
        RefCell::new(Last {
            code: ferroflake_result::FERROFLAKE_RESULT_OK,
            text: [0; CAPACITY],
        })
    };
}

/// `text` as it is kept: NULs replaced, cut to fit with "..." at a character boundary.
fn store(text: &str, into: &mut [u8; CAPACITY]) {
    let text = text.replace('\0', "\u{FFFD}");
    let (kept, cut) = if text.len() < CAPACITY {
        (text.as_str(), false)
    } else {
        let mut end = CAPACITY - 4;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (&text[..end], true)
    };
    let mut len = kept.len();
    into[..len].copy_from_slice(kept.as_bytes());
    if cut {
        into[len..len + 3].copy_from_slice(b"...");
        len += 3;
    }
    into[len] = 0;
}

/// Keeps `failure` as this thread's last error and returns its code. Off the hot path.
#[cold]
#[inline(never)]
pub(crate) fn record(failure: Failure) -> ferroflake_result {
    let Failure { code, detail } = failure;
    let text = detail.as_deref().unwrap_or_else(|| code.text());
    // try_with: during the thread's exit the slot may be gone; the code still goes back.
    let _ = LAST.try_with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            last.code = code;
            store(text, &mut last.text);
        }
    });
    code
}

/// The text of the last call on the calling thread that did not return
/// `FERROFLAKE_RESULT_OK`: the underlying error's own words, with the details the code alone
/// cannot carry (which node id, how far behind, which registry said what). An empty string
/// if no call on this thread has failed yet. Never NULL. At most 1023 bytes (a longer text
/// is cut and ends in "...").
///
/// Successful calls leave it alone, so read it right after the failing call.
///
/// Ownership: the string belongs to the library. It stays valid, unchanged, until the next
/// failing call on the same thread or until the thread exits; copy it to keep it longer.
/// Thread safety: each thread has its own.
#[no_mangle]
pub extern "C" fn ferroflake_last_error_message() -> *const c_char {
    // The slot lives as long as the thread, at a fixed address.
    LAST.try_with(|last| last.as_ptr())
        .map_or(c"".as_ptr(), |last| {
            // SAFETY: a pointer to this thread's slot, which lives until the thread exits;
            // the array is always NUL-terminated.
            unsafe { core::ptr::addr_of!((*last).text) }.cast::<c_char>()
        })
}

/// The code of the last call on the calling thread that did not return
/// `FERROFLAKE_RESULT_OK` (the one `ferroflake_last_error_message` describes), or
/// `FERROFLAKE_RESULT_OK` if none has failed yet.
///
/// Thread safety: each thread has its own.
#[no_mangle]
pub extern "C" fn ferroflake_last_error_code() -> ferroflake_result {
    LAST.try_with(|last| {
        last.try_borrow()
            .map_or(ferroflake_result::FERROFLAKE_RESULT_OK, |l| l.code)
    })
    .unwrap_or(ferroflake_result::FERROFLAKE_RESULT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::guard;
    use core::ffi::CStr;

    fn last_text() -> String {
        // SAFETY: the function returns a NUL-terminated string that lives until the next
        // failure on this thread.
        unsafe { CStr::from_ptr(ferroflake_last_error_message()) }
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn a_core_error_leaves_the_core_text() {
        let error = ferroflake::Generator::new(ferroflake::Layout::twitter(), 1024).unwrap_err();
        let code = guard(|| Err(error.into()));
        assert_eq!(code, ferroflake_result::FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
        assert_eq!(last_text(), error.to_string());
        assert_eq!(last_text(), "node id 1024 is out of range 0..=1023");
        assert_eq!(ferroflake_last_error_code(), code);
    }

    #[test]
    fn a_code_without_an_error_leaves_the_code_text_and_success_leaves_it_alone() {
        let code = guard(|| Err(ferroflake_result::FERROFLAKE_RESULT_NULL_ARGUMENT.into()));
        assert_eq!(last_text(), code.text());
        assert_eq!(guard(|| Ok(())), ferroflake_result::FERROFLAKE_RESULT_OK);
        assert_eq!(last_text(), code.text());
    }

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary() {
        let long = "é".repeat(CAPACITY);
        guard(|| {
            Err(Failure::new(
                ferroflake_result::FERROFLAKE_RESULT_NULL_ARGUMENT,
                &long,
            ))
        });
        let text = last_text();
        assert!(
            text.len() < CAPACITY && text.ends_with("é..."),
            "{}",
            text.len()
        );
    }

    #[test]
    fn each_thread_has_its_own() {
        guard(|| Err(ferroflake_result::FERROFLAKE_RESULT_NULL_ARGUMENT.into()));
        std::thread::spawn(|| {
            assert_eq!(last_text(), "");
            assert_eq!(
                ferroflake_last_error_code(),
                ferroflake_result::FERROFLAKE_RESULT_OK
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_nul_inside_a_detail_does_not_cut_it() {
        guard(|| {
            Err(Failure::new(
                ferroflake_result::FERROFLAKE_RESULT_NULL_ARGUMENT,
                "a\0b",
            ))
        });
        assert_eq!(last_text(), "a\u{FFFD}b");
    }
}
