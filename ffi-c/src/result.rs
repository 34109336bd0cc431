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
    /// The generator (leased generator, segment allocator) was made in another process and
    /// inherited through `fork()`: make a new one in the child (a generator with a node id
    /// of its own).
    FERROFLAKE_RESULT_GENERATOR_FORKED = 24,
    /// A mask width outside 8 to 64 bits.
    FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE = 25,
    /// A mask key version above the largest a key may have.
    FERROFLAKE_RESULT_MASK_KEY_VERSION_OUT_OF_RANGE = 26,
    /// A masked id names a key version the key or keyring at hand does not hold.
    FERROFLAKE_RESULT_UNKNOWN_MASK_KEY_VERSION = 27,
    /// A keyring was given two different secrets for one key version.
    FERROFLAKE_RESULT_DUPLICATE_MASK_KEY_VERSION = 28,
    /// Another live generator of this process has the node id (share that handle between
    /// threads instead, or free it first), or one freed earlier issued ids later than this
    /// generator's clock reads.
    FERROFLAKE_RESULT_NODE_IN_USE = 29,
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
    /// An options or status struct's `struct_size` is not the size of any version of that
    /// struct: set it with the struct's `_init` function (or its `FERROFLAKE_*_INIT` macro).
    /// A size larger than this library's struct means a header newer than the library.
    FERROFLAKE_RESULT_STRUCT_SIZE = 108,
    /// A registry or store address that cannot be read (unknown scheme, relative path,
    /// malformed URL).
    FERROFLAKE_RESULT_BAD_ADDRESS = 109,
    /// The address names a store this library was built without (cargo feature `stores`
    /// off): only the embedded registry and SQLite are in.
    FERROFLAKE_RESULT_NOT_BUILT = 110,
    /// The registry or store cannot be reached (or did not answer in time).
    FERROFLAKE_RESULT_UNAVAILABLE = 111,
    /// The registry or store answered with an error.
    FERROFLAKE_RESULT_STORE_ERROR = 112,
    /// Lease or segment settings that cannot work (the last error message says which).
    FERROFLAKE_RESULT_INVALID_CONFIG = 113,
    /// Every node id of the layout is leased, quarantined or reserved.
    FERROFLAKE_RESULT_NO_FREE_NODE = 114,
    /// The registry says the lease is no longer this holder's (expired, taken or removed):
    /// nothing more is issued under it.
    FERROFLAKE_RESULT_LEASE_LOST = 115,
    /// A previous holder of the node id reserved ids further ahead than this clock reaches
    /// within the start wait.
    FERROFLAKE_RESULT_BEHIND_HIGH_WATER = 116,
    /// The segment table has no such key: create it if it is new, recover it if the table lost it.
    FERROFLAKE_RESULT_UNKNOWN_KEY = 117,
    /// The segment key already exists.
    FERROFLAKE_RESULT_KEY_EXISTS = 118,
    /// A segment key that is empty, too long or not text the store can hold.
    FERROFLAKE_RESULT_INVALID_KEY = 119,
    /// The segment key has no range left below its limit.
    FERROFLAKE_RESULT_KEY_EXHAUSTED = 120,
    /// Both of the key's buffers stayed empty for the allocator's `max_wait_ms`.
    FERROFLAKE_RESULT_NOT_READY = 121,
    /// The segment allocator was closed.
    FERROFLAKE_RESULT_CLOSED = 122,
    /// The segment key went back in the store (a restored backup, a lost write): nothing is
    /// issued from it until it is set above every id it ever issued.
    FERROFLAKE_RESULT_REWOUND = 123,
    /// The lease registry's floor after lost records holds the first id back longer than
    /// `max_start_wait_ms` allows; the claim was given back.
    FERROFLAKE_RESULT_START_WAIT_TOO_LONG = 124,
    /// The generator's clock is further from the lease registry's than `max_clock_skew_ms`
    /// allows: a start is refused, and a running generator issues nothing until the clocks
    /// agree again.
    FERROFLAKE_RESULT_CLOCK_SKEW = 125,
    /// The lease's state file (`state_file`) cannot be used: not the caller's alone,
    /// held by another live process, or unreadable or unwritable.
    FERROFLAKE_RESULT_STATE_FILE = 126,
}

use ferroflake_result::*;

/// The table of codes: every code in numeric order with its static text (without the NUL,
/// which `messages!` adds). A new code is its enum variant above plus one row here; the
/// tests below fail until both exist. For codes 1-99 the text is the core's wording (its
/// `Display` where that has no variable part); `ferroflake_last_error_message` gives the
/// core's full text of each failure.
macro_rules! messages {
    ($($code:ident => $text:expr,)+) => {
        /// Every code, in numeric order (private, so cbindgen leaves it out of the header).
        const ALL_RESULTS: &[ferroflake_result] = &[$($code),+];

        impl ferroflake_result {
            /// A NUL-terminated, static description of this code.
            const fn message(self) -> &'static str {
                match self {
                    $($code => concat!($text, "\0"),)+
                }
            }
        }
    };
}

messages! {
    FERROFLAKE_RESULT_OK => "ok",
    FERROFLAKE_RESULT_TOO_MANY_BITS => "layout uses more than 63 bits; the sign bit must stay 0",
    FERROFLAKE_RESULT_NO_TIME_BITS => "layout needs at least 1 time bit",
    FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS => "layout needs at least 1 sequence bit",
    FERROFLAKE_RESULT_ZERO_TICK => "tick must be at least 1 ms",
    FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX => "epoch is before 1970-01-01T00:00:00Z",
    FERROFLAKE_RESULT_EPOCH_IN_FUTURE => "epoch is later than the clock's current time",
    FERROFLAKE_RESULT_LAYOUT_EXHAUSTED => "layout's time field has run out",
    FERROFLAKE_RESULT_NODE_OUT_OF_RANGE => "node id does not fit the layout's node bits",
    FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE => "shard does not fit the layout's shard bits",
    FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE => "sequence does not fit the layout's sequence bits",
    FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE =>
        "timestamp is before the layout's epoch or past its exhaustion",
    FERROFLAKE_RESULT_ID_OUT_OF_RANGE => "id has bits set above the layout's width",
    FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS =>
        "clock moved backwards beyond the allowed drift and wait",
    FERROFLAKE_RESULT_CLOCK_STALLED =>
        "sequence exhausted and the clock did not reach the next tick within one tick plus the backward wait",
    FERROFLAKE_RESULT_LEASE_EXPIRED =>
        "node id lease expired: the generator's fence has passed; renew the lease",
    FERROFLAKE_RESULT_UNKNOWN_LAYOUT =>
        "unknown layout name (expected twitter, discord, sonyflake, js53, js53ms or sharded)",
    FERROFLAKE_RESULT_PARSE_EMPTY => "cannot parse an ID from an empty string",
    FERROFLAKE_RESULT_PARSE_NEGATIVE => "IDs are never negative",
    FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER =>
        "string has a character outside the format's alphabet",
    FERROFLAKE_RESULT_PARSE_WRONG_LENGTH => "string has the wrong length for its format",
    FERROFLAKE_RESULT_PARSE_TOO_LONG => "decimal string has more digits than any id",
    FERROFLAKE_RESULT_PARSE_OVERFLOW => "value exceeds 2^63 - 1, the largest ID",
    FERROFLAKE_RESULT_RESUME_IN_FUTURE =>
        "resume point is further ahead of the clock than the drift and backward wait bridge",
    FERROFLAKE_RESULT_GENERATOR_FORKED =>
        "the generator or allocator was inherited through fork(); make a new one in the child",
    FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE => "mask width is outside 8..=64 bits",
    FERROFLAKE_RESULT_MASK_KEY_VERSION_OUT_OF_RANGE => "mask key version is out of range",
    FERROFLAKE_RESULT_UNKNOWN_MASK_KEY_VERSION =>
        "no mask key of the version the masked ID names",
    FERROFLAKE_RESULT_DUPLICATE_MASK_KEY_VERSION =>
        "two different mask keys have the same version",
    FERROFLAKE_RESULT_NODE_IN_USE =>
        "another generator of this process has the node id, or issued ids past this clock",
    FERROFLAKE_RESULT_NULL_ARGUMENT => "a pointer argument was NULL",
    FERROFLAKE_RESULT_BUFFER_TOO_SMALL => "the buffer is too small; nothing was written",
    FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE => "an enum argument has no such value",
    FERROFLAKE_RESULT_PANIC => "internal panic in ferroflake (please report it)",
    FERROFLAKE_RESULT_INVALID_UTF8 => "a string argument is not valid UTF-8",
    FERROFLAKE_RESULT_NOT_MANUAL_CLOCK => "the generator does not run on a manual clock",
    FERROFLAKE_RESULT_UNMAPPED_ERROR =>
        "the core reported an error this library version has no code for",
    FERROFLAKE_RESULT_BUFFER_TOO_LARGE => "the buffer length is larger than memory can hold",
    FERROFLAKE_RESULT_STRUCT_SIZE =>
        "struct_size is not the size of any version of this struct; set it with the struct's _init function",
    FERROFLAKE_RESULT_BAD_ADDRESS => "the registry or store address cannot be read",
    FERROFLAKE_RESULT_NOT_BUILT =>
        "this library was built without that store (cargo feature `stores`)",
    FERROFLAKE_RESULT_UNAVAILABLE => "the registry or store cannot be reached",
    FERROFLAKE_RESULT_STORE_ERROR => "the registry or store answered with an error",
    FERROFLAKE_RESULT_INVALID_CONFIG => "lease or segment settings that cannot work",
    FERROFLAKE_RESULT_NO_FREE_NODE => "every node id is leased, quarantined or reserved",
    FERROFLAKE_RESULT_LEASE_LOST => "the lease was lost; nothing more is issued under it",
    FERROFLAKE_RESULT_BEHIND_HIGH_WATER =>
        "a previous holder reserved ids further ahead than this clock reaches",
    FERROFLAKE_RESULT_UNKNOWN_KEY => "no such segment key: create it if it is new, recover it if the table lost it",
    FERROFLAKE_RESULT_KEY_EXISTS => "the segment key already exists",
    FERROFLAKE_RESULT_INVALID_KEY => "invalid segment key",
    FERROFLAKE_RESULT_KEY_EXHAUSTED => "the segment key has no range left below its limit",
    FERROFLAKE_RESULT_NOT_READY => "no segment arrived within the allocator's wait",
    FERROFLAKE_RESULT_CLOSED => "the segment allocator is closed",
    FERROFLAKE_RESULT_REWOUND => "the segment key went back in the store",
    FERROFLAKE_RESULT_START_WAIT_TOO_LONG =>
        "the registry's floor after lost records is longer than the start may wait",
    FERROFLAKE_RESULT_CLOCK_SKEW => "this clock is too far from the lease registry's",
    FERROFLAKE_RESULT_STATE_FILE => "the lease's state file cannot be used",
}

impl ferroflake_result {
    /// The code whose number is `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Self> {
        ALL_RESULTS.iter().copied().find(|r| *r as u32 == code)
    }

    /// The static description, without the NUL.
    pub(crate) fn text(self) -> &'static str {
        let message = self.message();
        &message[..message.len() - 1]
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
    fn texts_of_core_kinds_without_details_are_the_core_display() {
        for error in [
            Error::NoTimeBits,
            Error::ZeroSequenceBits,
            Error::ZeroTick,
            Error::UnknownLayout,
            Error::ParseEmpty,
            Error::ParseNegative,
            Error::ParseOverflow,
        ] {
            assert_eq!(from_kind(error.kind()).text(), error.to_string());
        }
    }

    #[test]
    fn codes_below_100_are_exactly_the_core_kinds() {
        let core_codes: Vec<u32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        for &result in ALL_RESULTS {
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
        for &result in ALL_RESULTS {
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
        for code in [99, 999, 4096, u32::MAX] {
            let ptr = ferroflake_result_message(code);
            // SAFETY: as above.
            let text = unsafe { CStr::from_ptr(ptr) }.to_str().unwrap();
            assert_eq!(text, "unknown ferroflake result code");
        }
    }
}
