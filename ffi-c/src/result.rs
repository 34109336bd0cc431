//! The one result code every fallible export returns, and its messages.

use core::ffi::c_char;

use ferroflake::{Error, ErrorKind};

/// What a call did. `FERROFLAKE_RESULT_OK` (0) is success; every other value names why the
/// call was refused, and its out-parameters were left untouched.
///
/// Codes 1 to 99 are the core's `ErrorKind::code()` numbers, one for one. Codes from 100 up
/// belong to the C interface itself. Codes are never renumbered or reused; new ones are only
/// appended. Turn any code into text with `ferroflake_result_message`.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ferroflake_result {
    /// Success.
    FERROFLAKE_RESULT_OK = 0,
    /// The layout's widths add up to more than 63 bits.
    FERROFLAKE_RESULT_TOO_MANY_BITS = 1,
    /// The layout has no time bits.
    FERROFLAKE_RESULT_NO_TIME_BITS = 2,
    /// The layout has no sequence bits.
    FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS = 3,
    /// The layout's tick is 0 ms.
    FERROFLAKE_RESULT_ZERO_TICK = 4,
    /// The layout's epoch is before 1970-01-01T00:00:00Z.
    FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX = 5,
    /// The layout's epoch is later than the clock's current time.
    FERROFLAKE_RESULT_EPOCH_IN_FUTURE = 6,
    /// The layout's time field has run out.
    FERROFLAKE_RESULT_LAYOUT_EXHAUSTED = 7,
    /// A node id does not fit the layout's node bits.
    FERROFLAKE_RESULT_NODE_OUT_OF_RANGE = 8,
    /// A shard does not fit the layout's shard bits.
    FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE = 9,
    /// A sequence number does not fit the layout's sequence bits.
    FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE = 10,
    /// A timestamp is before the layout's epoch or past its exhaustion.
    FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE = 11,
    /// An id has bits set above the layout's width.
    FERROFLAKE_RESULT_ID_OUT_OF_RANGE = 12,
    /// The clock went back further than the drift and the bounded wait allow.
    FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS = 13,
    /// The tick's sequence is used up and the clock did not reach the next tick within one
    /// tick plus the backward wait (at most a day).
    FERROFLAKE_RESULT_CLOCK_STALLED = 14,
    /// The generator's fence (lease deadline) has passed.
    FERROFLAKE_RESULT_LEASE_EXPIRED = 15,
    /// A layout name that is not a preset.
    FERROFLAKE_RESULT_UNKNOWN_LAYOUT = 16,
    /// The string to parse is empty.
    FERROFLAKE_RESULT_PARSE_EMPTY = 17,
    /// The string to parse starts with '-'.
    FERROFLAKE_RESULT_PARSE_NEGATIVE = 18,
    /// The string to parse has a character outside its alphabet.
    FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER = 19,
    /// The fixed-width string to parse has the wrong length.
    FERROFLAKE_RESULT_PARSE_WRONG_LENGTH = 20,
    /// The decimal string to parse has more digits than any id can.
    FERROFLAKE_RESULT_PARSE_TOO_LONG = 21,
    /// A value above 2^63 - 1, which no id can be: in a string to parse, or given to encode.
    FERROFLAKE_RESULT_PARSE_OVERFLOW = 22,
    /// The resume point is ahead of the clock by more than the drift and the backward wait
    /// bridge.
    FERROFLAKE_RESULT_RESUME_IN_FUTURE = 23,
    /// The generator was made in another process and inherited through `fork()`: make a
    /// new one in the child, with a node id of its own.
    FERROFLAKE_RESULT_GENERATOR_FORKED = 24,
    /// A pointer argument was NULL.
    FERROFLAKE_RESULT_NULL_ARGUMENT = 100,
    /// The caller's buffer is too small; nothing was written.
    FERROFLAKE_RESULT_BUFFER_TOO_SMALL = 101,
    /// An enum argument (preset, format, clock, field order) has no such value.
    FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE = 102,
    /// The library panicked; the call had no effect on its out-parameters. Please report it.
    FERROFLAKE_RESULT_PANIC = 103,
    /// A string argument is not valid UTF-8.
    FERROFLAKE_RESULT_INVALID_UTF8 = 104,
    /// The call moves a manual clock, but the generator runs on another clock.
    FERROFLAKE_RESULT_NOT_MANUAL_CLOCK = 105,
    /// The core reported an error this library version has no code for (never expected:
    /// the test suite proves the mapping total).
    FERROFLAKE_RESULT_UNMAPPED_ERROR = 106,
    /// A buffer length is larger than memory can hold, or scratch memory ran out.
    FERROFLAKE_RESULT_BUFFER_TOO_LARGE = 107,
}

use ferroflake_result::*;

/// Every code, in numeric order (private, so cbindgen leaves it out of the header).
const ALL_RESULTS: [ferroflake_result; 33] = [
    FERROFLAKE_RESULT_OK,
    FERROFLAKE_RESULT_TOO_MANY_BITS,
    FERROFLAKE_RESULT_NO_TIME_BITS,
    FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS,
    FERROFLAKE_RESULT_ZERO_TICK,
    FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX,
    FERROFLAKE_RESULT_EPOCH_IN_FUTURE,
    FERROFLAKE_RESULT_LAYOUT_EXHAUSTED,
    FERROFLAKE_RESULT_NODE_OUT_OF_RANGE,
    FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE,
    FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE,
    FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE,
    FERROFLAKE_RESULT_ID_OUT_OF_RANGE,
    FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS,
    FERROFLAKE_RESULT_CLOCK_STALLED,
    FERROFLAKE_RESULT_LEASE_EXPIRED,
    FERROFLAKE_RESULT_UNKNOWN_LAYOUT,
    FERROFLAKE_RESULT_PARSE_EMPTY,
    FERROFLAKE_RESULT_PARSE_NEGATIVE,
    FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER,
    FERROFLAKE_RESULT_PARSE_WRONG_LENGTH,
    FERROFLAKE_RESULT_PARSE_TOO_LONG,
    FERROFLAKE_RESULT_PARSE_OVERFLOW,
    FERROFLAKE_RESULT_RESUME_IN_FUTURE,
    FERROFLAKE_RESULT_GENERATOR_FORKED,
    FERROFLAKE_RESULT_NULL_ARGUMENT,
    FERROFLAKE_RESULT_BUFFER_TOO_SMALL,
    FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE,
    FERROFLAKE_RESULT_PANIC,
    FERROFLAKE_RESULT_INVALID_UTF8,
    FERROFLAKE_RESULT_NOT_MANUAL_CLOCK,
    FERROFLAKE_RESULT_UNMAPPED_ERROR,
    FERROFLAKE_RESULT_BUFFER_TOO_LARGE,
];

impl ferroflake_result {
    /// The code whose number is `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL_RESULTS.into_iter().find(|r| *r as u32 == code)
    }

    /// A NUL-terminated, static description of this code.
    const fn message(self) -> &'static str {
        match self {
            FERROFLAKE_RESULT_OK => "ok\0",
            FERROFLAKE_RESULT_TOO_MANY_BITS => {
                "layout uses more than 63 bits; the sign bit must stay 0\0"
            }
            FERROFLAKE_RESULT_NO_TIME_BITS => "layout needs at least 1 time bit\0",
            FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS => "layout needs at least 1 sequence bit\0",
            FERROFLAKE_RESULT_ZERO_TICK => "tick must be at least 1 ms\0",
            FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX => "epoch is before 1970-01-01T00:00:00Z\0",
            FERROFLAKE_RESULT_EPOCH_IN_FUTURE => "epoch is later than the clock's current time\0",
            FERROFLAKE_RESULT_LAYOUT_EXHAUSTED => "layout's time field has run out\0",
            FERROFLAKE_RESULT_NODE_OUT_OF_RANGE => "node id does not fit the layout's node bits\0",
            FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE => "shard does not fit the layout's shard bits\0",
            FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE => {
                "sequence does not fit the layout's sequence bits\0"
            }
            FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE => {
                "timestamp is before the layout's epoch or past its exhaustion\0"
            }
            FERROFLAKE_RESULT_ID_OUT_OF_RANGE => "id has bits set above the layout's width\0",
            FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS => {
                "clock moved backwards beyond the allowed drift and wait\0"
            }
            FERROFLAKE_RESULT_CLOCK_STALLED => {
                "sequence exhausted and the clock did not reach the next tick within one tick plus the backward wait\0"
            }
            FERROFLAKE_RESULT_LEASE_EXPIRED => {
                "node id lease expired: the generator's fence has passed; renew the lease\0"
            }
            FERROFLAKE_RESULT_UNKNOWN_LAYOUT => {
                "unknown layout name (expected twitter, discord, sonyflake, js53, js53ms or sharded)\0"
            }
            FERROFLAKE_RESULT_PARSE_EMPTY => "cannot parse an id from an empty string\0",
            FERROFLAKE_RESULT_PARSE_NEGATIVE => "ids are never negative\0",
            FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER => {
                "string has a character outside the format's alphabet\0"
            }
            FERROFLAKE_RESULT_PARSE_WRONG_LENGTH => "string has the wrong length for its format\0",
            FERROFLAKE_RESULT_PARSE_TOO_LONG => "decimal string has more digits than any id\0",
            FERROFLAKE_RESULT_PARSE_OVERFLOW => "value above 2^63 - 1, the largest id\0",
            FERROFLAKE_RESULT_RESUME_IN_FUTURE => {
                "resume point is further ahead of the clock than the drift and backward wait bridge\0"
            }
            FERROFLAKE_RESULT_GENERATOR_FORKED => {
                "the generator was inherited through fork(); make a new one in the child\0"
            }
            FERROFLAKE_RESULT_NULL_ARGUMENT => "a pointer argument was NULL\0",
            FERROFLAKE_RESULT_BUFFER_TOO_SMALL => "the buffer is too small; nothing was written\0",
            FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE => "an enum argument has no such value\0",
            FERROFLAKE_RESULT_PANIC => "internal panic in ferroflake (please report it)\0",
            FERROFLAKE_RESULT_INVALID_UTF8 => "a string argument is not valid UTF-8\0",
            FERROFLAKE_RESULT_NOT_MANUAL_CLOCK => {
                "the generator does not run on a manual clock\0"
            }
            FERROFLAKE_RESULT_UNMAPPED_ERROR => {
                "the core reported an error this library version has no code for\0"
            }
            FERROFLAKE_RESULT_BUFFER_TOO_LARGE => {
                "the buffer length is larger than memory can hold\0"
            }
        }
    }
}

/// The code for a core error kind: the same number, since codes 1-99 mirror
/// `ErrorKind::code()`.
pub(crate) fn from_kind(kind: ErrorKind) -> ferroflake_result {
    match ferroflake_result::from_code(kind.code()) {
        Some(code) if kind.code() < 100 => code,
        _ => FERROFLAKE_RESULT_UNMAPPED_ERROR,
    }
}

impl From<Error> for ferroflake_result {
    fn from(error: Error) -> Self {
        from_kind(error.kind())
    }
}

const UNKNOWN_CODE_MESSAGE: &str = "unknown ferroflake result code\0";

/// A static, NUL-terminated English description of a result code.
///
/// Takes any number, not only the named codes, and never returns NULL: unknown numbers give
/// "unknown ferroflake result code".
///
/// Ownership: the string is static; do not free or modify it.
/// Thread safety: may be called from any thread at any time.
#[no_mangle]
pub extern "C" fn ferroflake_result_message(code: u32) -> *const c_char {
    let text = match ferroflake_result::from_code(code) {
        Some(result) => result.message(),
        None => UNKNOWN_CODE_MESSAGE,
    };
    text.as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    #[test]
    fn every_core_error_kind_maps_to_the_result_with_the_same_number() {
        for kind in ErrorKind::ALL {
            let result = from_kind(kind);
            assert_ne!(
                result, FERROFLAKE_RESULT_UNMAPPED_ERROR,
                "{kind:?} has no code"
            );
            assert_eq!(result as u32, kind.code(), "{kind:?}");
            // The C name is the core's name with a prefix.
            let c_name = format!("{result:?}");
            assert_eq!(c_name, format!("FERROFLAKE_RESULT_{}", kind.name()));
        }
    }

    #[test]
    fn codes_below_100_are_exactly_the_core_kinds() {
        let core_codes: Vec<u32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        for result in ALL_RESULTS {
            let code = result as u32;
            if (1..100).contains(&code) {
                assert!(core_codes.contains(&code), "{result:?} is not a core kind");
            }
        }
    }

    #[test]
    fn codes_are_unique_and_listed_in_order() {
        let codes: Vec<u32> = ALL_RESULTS.iter().map(|r| *r as u32).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(codes, sorted);
    }

    #[test]
    fn every_code_has_its_own_nul_terminated_message() {
        let mut seen = Vec::new();
        for result in ALL_RESULTS {
            let ptr = ferroflake_result_message(result as u32);
            assert!(!ptr.is_null());
            // SAFETY: the function returns pointers to static NUL-terminated strings.
            let text = unsafe { CStr::from_ptr(ptr) }.to_str().unwrap();
            assert!(!text.is_empty() && !text.contains('\0'));
            assert!(!seen.contains(&text), "{result:?} repeats {text:?}");
            seen.push(text);
        }
    }

    #[test]
    fn unknown_codes_get_a_message_not_null() {
        for code in [25, 99, 108, 999, u32::MAX] {
            let ptr = ferroflake_result_message(code);
            // SAFETY: as above.
            let text = unsafe { CStr::from_ptr(ptr) }.to_str().unwrap();
            assert_eq!(text, "unknown ferroflake result code");
        }
    }
}
