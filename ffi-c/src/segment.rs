//! `ferroflake_segment_allocator` and `ferroflake_segment_key`: dense ids from a table
//! (ferroflake-segment's `SegmentAllocator` and `KeyHandle`), and the segment result codes.
//! Unix only.

use core::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use ferroflake_segment::{KeyHandle, SegmentAllocator, SegmentConfig, SegmentError, SegmentStore};
use ferroflake_segment_stores::StoreAddress;

use crate::boundary::{borrow, borrow_str, fill_ids, guard, out};
use crate::failure::Failure;
use crate::ferroflake_result::{self, *};
use crate::versioned::{self, field_spans, Versioned};

/// Settings for `ferroflake_segment_allocator_new`. Start from
/// `FERROFLAKE_SEGMENT_OPTIONS_INIT(&options)` (the segment crate's defaults, Leaf's rules)
/// and change what you need. It can grow like `ferroflake_generator_options`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ferroflake_segment_options {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// The share of a segment used before the next one is fetched, in (0, 1]. Default 0.1.
    pub prefetch_share: f64,
    /// How long a call waits for the fetch in flight when both buffers are empty, before
    /// `FERROFLAKE_RESULT_NOT_READY`. Default 500.
    pub max_wait_ms: u64,
    /// A segment used up faster than this doubles the next step. Default 15 minutes.
    pub fast_segment_ms: u64,
    /// A segment lasting longer than this halves the next step. Default 30 minutes.
    pub slow_segment_ms: u64,
    /// The largest step the allocator grows to. Default 1,000,000.
    pub max_step: u64,
    /// The first retry after a failed fetch (doubling up to `retry_max_ms`). Default 50.
    pub retry_min_ms: u64,
    /// The longest wait between retries. Default 5,000.
    pub retry_max_ms: u64,
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl ferroflake_segment_options {
    fn defaults() -> Self {
        let config = SegmentConfig::default();
        ferroflake_segment_options {
            struct_size: core::mem::size_of::<Self>() as u32,
            prefetch_share: config.prefetch_share,
            max_wait_ms: ms(config.max_wait),
            fast_segment_ms: ms(config.fast_segment),
            slow_segment_ms: ms(config.slow_segment),
            max_step: config.max_step,
            retry_min_ms: ms(config.retry_min),
            retry_max_ms: ms(config.retry_max),
        }
    }

    fn to_config(self) -> SegmentConfig {
        SegmentConfig {
            prefetch_share: self.prefetch_share,
            max_wait: Duration::from_millis(self.max_wait_ms),
            fast_segment: Duration::from_millis(self.fast_segment_ms),
            slow_segment: Duration::from_millis(self.slow_segment_ms),
            max_step: self.max_step,
            retry_min: Duration::from_millis(self.retry_min_ms),
            retry_max: Duration::from_millis(self.retry_max_ms),
        }
    }
}

// SAFETY: repr(C), struct_size first, integers and a double, every field listed in order.
unsafe impl Versioned for ferroflake_segment_options {
    fn defaults() -> Self {
        Self::defaults()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_segment_options; struct_size, prefetch_share, max_wait_ms,
            fast_segment_ms, slow_segment_ms, max_step, retry_min_ms, retry_max_ms)
    }
}

/// Fills `*options`, a struct of `struct_size` bytes, with the defaults and sets its
/// `struct_size`. Use `FERROFLAKE_SEGMENT_OPTIONS_INIT(&options)`.
///
/// Ownership: `*options` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `options` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_options_init(
    struct_size: usize,
    options: *mut ferroflake_segment_options,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, options) })
}

/// What `ferroflake_segment_key_status` reports about a key. Set `struct_size` first with
/// `FERROFLAKE_SEGMENT_STATUS_INIT(&status)`; the library writes only that many bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ferroflake_segment_status {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// Nonzero while a fetch is in flight (or waiting to retry).
    pub fetching: u32,
    /// The largest id the key may issue.
    pub limit: u64,
    /// The unissued rest of the current segment: ids `current_start` to `current_end - 1`.
    pub current_start: u64,
    /// The end (exclusive) of the current segment.
    pub current_end: u64,
    /// The next segment, if fetched (else both 0).
    pub next_start: u64,
    /// The end (exclusive) of the next segment.
    pub next_end: u64,
    /// Ids in memory: the rest of the current segment plus the next.
    pub runway_ids: u64,
    /// The step of the latest fetch (adaptive).
    pub step: u64,
    /// The result code of the latest fetch's error, until a fetch succeeds; else OK.
    pub last_error: ferroflake_result,
    /// Segments fetched from the store (the first included).
    pub fetches: u64,
    /// Fetches that failed.
    pub fetch_failures: u64,
    /// Calls that found both buffers empty and had to wait or fail.
    pub waits: u64,
    /// Calls that got `NOT_READY`.
    pub not_ready: u64,
    /// Calls that got the store's error because memory was empty.
    pub store_errors: u64,
    /// Segment switches.
    pub switches: u64,
}

impl ferroflake_segment_status {
    fn empty() -> Self {
        ferroflake_segment_status {
            struct_size: core::mem::size_of::<Self>() as u32,
            fetching: 0,
            limit: 0,
            current_start: 0,
            current_end: 0,
            next_start: 0,
            next_end: 0,
            runway_ids: 0,
            step: 0,
            last_error: FERROFLAKE_RESULT_OK,
            fetches: 0,
            fetch_failures: 0,
            waits: 0,
            not_ready: 0,
            store_errors: 0,
            switches: 0,
        }
    }
}

// SAFETY: repr(C), struct_size first, plain integers (the result code is only ever written
// by the library, from a valid code), every field listed in order.
unsafe impl Versioned for ferroflake_segment_status {
    fn defaults() -> Self {
        Self::empty()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_segment_status; struct_size, fetching, limit, current_start,
            current_end, next_start, next_end, runway_ids, step, last_error, fetches,
            fetch_failures, waits, not_ready, store_errors, switches)
    }
}

/// Prepares `*status`, a struct of `struct_size` bytes, for `ferroflake_segment_key_status`:
/// zeroes it and sets its `struct_size`. Use `FERROFLAKE_SEGMENT_STATUS_INIT(&status)`.
///
/// Ownership: `*status` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `status` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_status_init(
    struct_size: usize,
    status: *mut ferroflake_segment_status,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, status) })
}

/// The code for a segment error, with the segment crate's own text.
pub(crate) fn segment_failure(error: SegmentError) -> Failure {
    let code = match &error {
        SegmentError::Unavailable { .. } => FERROFLAKE_RESULT_UNAVAILABLE,
        SegmentError::UnknownKey { .. } => FERROFLAKE_RESULT_UNKNOWN_KEY,
        SegmentError::KeyExists { .. } => FERROFLAKE_RESULT_KEY_EXISTS,
        SegmentError::InvalidKey { .. } => FERROFLAKE_RESULT_INVALID_KEY,
        SegmentError::InvalidConfig { .. } => FERROFLAKE_RESULT_INVALID_CONFIG,
        SegmentError::NotBuilt { .. } => FERROFLAKE_RESULT_NOT_BUILT,
        SegmentError::Exhausted { .. } => FERROFLAKE_RESULT_KEY_EXHAUSTED,
        SegmentError::NotReady { .. } => FERROFLAKE_RESULT_NOT_READY,
        SegmentError::Closed { .. } => FERROFLAKE_RESULT_CLOSED,
        SegmentError::Rewound { .. } => FERROFLAKE_RESULT_REWOUND,
        SegmentError::Store { .. } => FERROFLAKE_RESULT_STORE_ERROR,
        SegmentError::Forked { .. } => FERROFLAKE_RESULT_GENERATOR_FORKED,
        _ => FERROFLAKE_RESULT_UNMAPPED_ERROR,
    };
    Failure::new(code, error)
}

/// Opens the store at `address` (None: the SQLite default file).
fn open_store(address: Option<&str>) -> Result<Arc<dyn SegmentStore>, Failure> {
    let Some(text) = address else {
        return ferroflake_segment_stores::open(None).map_err(segment_failure);
    };
    // A malformed address is the segment crate's InvalidConfig; here it has a code of its own.
    let address = StoreAddress::parse(text)
        .map_err(|error| Failure::new(FERROFLAKE_RESULT_BAD_ADDRESS, error))?;
    ferroflake_segment_stores::open_address(&address).map_err(segment_failure)
}

/// Hands out ids of keys in a segment table (Leaf's `leaf_alloc`): each key's ids come in
/// ranges ("segments") taken from the table in one atomic update, and are issued from
/// memory, the next range fetched in the background before the current one runs out.
///
/// Opaque: make one with `ferroflake_segment_allocator_new`, take key handles with
/// `ferroflake_segment_allocator_key`, end it with `ferroflake_segment_allocator_close`
/// (which gives unissued ids back to the table and reports how many) and
/// `ferroflake_segment_allocator_free`. Every function may be called from any number of
/// threads at once, except `_free`.
///
/// After `fork()`: the ids in memory and the fetching thread stay the parent's, which goes
/// on issuing them. In the child every function on an inherited allocator or key handle
/// returns `FERROFLAKE_RESULT_GENERATOR_FORKED`, and `_free` there gives nothing back and
/// waits for no thread. Make a new allocator in the child.
pub struct ferroflake_segment_allocator {
    // Shared with the order number generators made on it.
    pub(crate) inner: Arc<SegmentAllocator>,
}

/// One key's ids. Opaque: from `ferroflake_segment_allocator_key`, released with
/// `ferroflake_segment_key_free`. Any number of threads may use one handle at once; ids are
/// unique across them (and across every process on the same table). A handle may outlive
/// its allocator: after the allocator is closed or freed, its calls return
/// `FERROFLAKE_RESULT_CLOSED`.
pub struct ferroflake_segment_key {
    inner: KeyHandle,
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<ferroflake_segment_allocator>();
    shareable::<ferroflake_segment_key>();
};

/// Opens the store at `store_address` and makes an allocator over it.
///
/// `store_address`: NULL for the SQLite file shared by the user's processes
/// (`segments.db` in `/var/lib/ferroflake` or `~/.local/state/ferroflake`); an absolute path or `sqlite:///file`
/// for another SQLite file; `postgres://`, `mysql://` or `redis://` URLs (built with the
/// `stores` feature, else `NOT_BUILT`). `options` may be NULL for the defaults.
///
/// Returns `BAD_ADDRESS`, `NOT_BUILT`, `UNAVAILABLE`, `STORE_ERROR`, `INVALID_CONFIG`,
/// `STRUCT_SIZE`, `INVALID_UTF8` or `NULL_ARGUMENT`; `ferroflake_last_error_message` has the
/// details.
///
/// Ownership: `store_address` and `options` are only read during the call. On success the
/// caller owns `*out_allocator` and releases it with `ferroflake_segment_allocator_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `store_address` is NULL or a NUL-terminated string; `options` is NULL or valid for its
/// `struct_size` bytes; `out_allocator` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_allocator_new(
    store_address: *const c_char,
    options: *const ferroflake_segment_options,
    out_allocator: *mut *mut ferroflake_segment_allocator,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (options, out_allocator) = unsafe { (versioned::read(options)?, out(out_allocator)?) };
        let address = if store_address.is_null() {
            None
        } else {
            // SAFETY: the caller's promise above.
            Some(unsafe { borrow_str(store_address)? })
        };
        let config = options.to_config();
        config.validate().map_err(segment_failure)?;
        let store = open_store(address)?;
        let inner = SegmentAllocator::new(store, config).map_err(segment_failure)?;
        let inner = Arc::new(inner);
        out_allocator.set(Box::into_raw(Box::new(ferroflake_segment_allocator {
            inner,
        })));
        Ok(())
    })
}

/// Adds `key` to the store's table: its first range starts at `start`, and each fetch
/// takes at least `step` ids (1 to 2^31 - 1). Keys are created once, explicitly.
///
/// Returns `KEY_EXISTS`, `INVALID_KEY`, `INVALID_CONFIG` (a step out of range, a negative
/// start), `CLOSED` (after `ferroflake_segment_allocator_close`), the store's errors,
/// `GENERATOR_FORKED` (in a forked child), `INVALID_UTF8` or `NULL_ARGUMENT`.
///
/// Ownership: `allocator` and `key` are borrowed. Thread safety: any thread.
///
/// # Safety
/// `allocator` is NULL or a live handle; `key` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_allocator_create_key(
    allocator: *const ferroflake_segment_allocator,
    key: *const c_char,
    start: i64,
    step: u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (allocator, key) = unsafe { (borrow(allocator)?, borrow_str(key)?) };
        // Refused in a forked child (the store's connections are the parent's) and after
        // close, by the segment crate.
        allocator
            .inner
            .create(key, start, step)
            .map_err(segment_failure)
    })
}

/// The handle of `key`. The first call per key loads its first segment from the store
/// (synchronously); later calls give handles to the same ids.
///
/// Returns `UNKNOWN_KEY` (create it first), `INVALID_KEY`, `CLOSED` (after
/// `ferroflake_segment_allocator_close`, for any key), the store's errors,
/// `GENERATOR_FORKED` (in a forked child), `INVALID_UTF8` or `NULL_ARGUMENT`.
///
/// Ownership: `allocator` and `key` are borrowed. On success the caller owns `*out_key` and
/// releases it with `ferroflake_segment_key_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `allocator` is NULL or a live handle; `key` is NULL or a NUL-terminated string;
/// `out_key` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_allocator_key(
    allocator: *const ferroflake_segment_allocator,
    key: *const c_char,
    out_key: *mut *mut ferroflake_segment_key,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (allocator, key, out_key) =
            unsafe { (borrow(allocator)?, borrow_str(key)?, out(out_key)?) };
        let inner = allocator.inner.key(key).map_err(segment_failure)?;
        out_key.set(Box::into_raw(Box::new(ferroflake_segment_key { inner })));
        Ok(())
    })
}

/// Stops issuing and fetching, and gives each key's unissued ids back to the table where
/// nobody allocated after us. Later calls on its key handles, and opening or creating a
/// key, return `CLOSED`. A second call
/// does nothing. `*out_given_back` (may be NULL) receives how many ids went back.
///
/// Returns the error of the first key whose give-back failed (the allocator is closed all
/// the same), `GENERATOR_FORKED` in a forked child (which gives nothing back: the parent
/// still issues those ids), or `NULL_ARGUMENT` for a NULL allocator.
///
/// Ownership: `allocator` is borrowed; free it afterwards. Thread safety: any thread.
///
/// # Safety
/// `allocator` is NULL or a live handle; `out_given_back` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_allocator_close(
    allocator: *const ferroflake_segment_allocator,
    out_given_back: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let allocator = unsafe { borrow(allocator)? };
        allocator.inner.check_fork().map_err(segment_failure)?;
        let report = allocator.inner.shutdown();
        if let Some((_, error)) = report.failed.into_iter().next() {
            return Err(segment_failure(error));
        }
        if !out_given_back.is_null() {
            // SAFETY: the caller's promise above.
            unsafe { out(out_given_back)? }.set(report.given_back);
        }
        Ok(())
    })
}

/// Closes the allocator (as `ferroflake_segment_allocator_close`, ignoring the outcome) and
/// releases it. Key handles still alive return `CLOSED` from then on. NULL is accepted and
/// ignored. In a forked child it gives nothing back and only frees the child's copy.
///
/// Ownership: takes the handle back; it must not be used again.
/// Thread safety: no other thread may be using the allocator any more (its key handles may
/// still be in use).
///
/// # Safety
/// `allocator` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_allocator_free(
    allocator: *mut ferroflake_segment_allocator,
) {
    if !allocator.is_null() {
        let _ = guard(|| {
            // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
            let allocator = unsafe { Box::from_raw(allocator) };
            allocator.inner.shutdown();
            drop(allocator);
            Ok(())
        });
    }
}

/// Releases a key handle. NULL is accepted and ignored.
///
/// Ownership: takes the handle back; it must not be used again.
/// Thread safety: no other thread may be using this handle any more.
///
/// # Safety
/// `key` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_key_free(key: *mut ferroflake_segment_key) {
    if !key.is_null() {
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        drop(unsafe { Box::from_raw(key) });
    }
}

/// The key's next id: one atomic increment and a bounds check, from memory.
///
/// Returns `NOT_READY` if both buffers stayed empty for `max_wait_ms`, the store's error
/// (`UNAVAILABLE`, `STORE_ERROR`) if it is failing and memory is empty, `KEY_EXHAUSTED` at
/// the key's limit, `REWOUND`, `CLOSED`, `GENERATOR_FORKED` (an allocator inherited through
/// `fork()`), or `NULL_ARGUMENT`. Nothing is issued on an error; calling again is safe. May
/// block up to `max_wait_ms` when memory is empty.
///
/// Ownership: `key` is borrowed; `*out_id` is the caller's.
/// Thread safety: any number of threads may call this on one handle at once.
///
/// # Safety
/// `key` is NULL or a live handle; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_key_next_id(
    key: *const ferroflake_segment_key,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (key, out_id) = unsafe { (borrow(key)?, out(out_id)?) };
        out_id.set(key.inner.next_id().map_err(segment_failure)?);
        Ok(())
    })
}

/// Fills `ids[0..len]` with `len` new ids of the key, increasing (consecutive within a
/// segment). `len` 0 succeeds and writes nothing; at most 2^32 at once (`INVALID_CONFIG`
/// above). On error `ids` is left untouched, and the ids taken for the batch are dropped,
/// never issued again.
///
/// Returns the errors of `ferroflake_segment_key_next_id`, `BUFFER_TOO_LARGE`, or
/// `NULL_ARGUMENT` (also for a NULL `ids` with `len` 0).
///
/// Ownership: `key` is borrowed; `ids` is the caller's buffer, written only on success.
/// Thread safety: any number of threads may call this on one handle at once.
///
/// # Safety
/// `key` is NULL or a live handle; `ids` is NULL or valid for writing `len` `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_key_next_ids(
    key: *const ferroflake_segment_key,
    ids: *mut u64,
    len: usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let key = unsafe { borrow(key)? };
        if len as u64 > ferroflake_segment::MAX_BATCH && !ids.is_null() {
            // Refused before any scratch memory is taken for it.
            return Err(segment_failure(key.inner.next_ids(len as u64).unwrap_err()));
        }
        // SAFETY: the caller's promise above.
        unsafe {
            fill_ids(ids, len, |scratch| {
                if scratch.is_empty() {
                    return Ok(());
                }
                let ranges = key
                    .inner
                    .next_ids(scratch.len() as u64)
                    .map_err(segment_failure)?;
                let mut at = 0;
                for range in ranges {
                    for id in range.start..range.end {
                        scratch[at] = id;
                        at += 1;
                    }
                }
                Ok(())
            })
        }
    })
}

/// The key's state: the current and next segments, runway, step, fetch state, the latest
/// fetch error and counters. Set `out_status->struct_size` first
/// (`FERROFLAKE_SEGMENT_STATUS_INIT`); only that many bytes are written.
///
/// Returns `STRUCT_SIZE`, `GENERATOR_FORKED` (in a forked child) or `NULL_ARGUMENT`.
///
/// Ownership: `key` is borrowed; `*out_status` is the caller's.
/// Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `key` is NULL or a live handle; `out_status` is NULL or valid for its `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_segment_key_status(
    key: *const ferroflake_segment_key,
    out_status: *mut ferroflake_segment_status,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let key = unsafe { borrow(key)? };
        if out_status.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        // In a forked child the key's lock may have been held by the parent's fetch worker.
        key.inner.check_fork().map_err(segment_failure)?;
        let now = key.inner.status();
        let next = now
            .next
            .unwrap_or(ferroflake_segment::Range { start: 0, end: 0 });
        let status = ferroflake_segment_status {
            fetching: u32::from(now.fetching),
            limit: now.limit,
            current_start: now.current.start,
            current_end: now.current.end,
            next_start: next.start,
            next_end: next.end,
            runway_ids: now.runway_ids,
            step: now.step,
            last_error: now
                .last_error
                .map_or(FERROFLAKE_RESULT_OK, |e| segment_failure(e).code),
            fetches: now.counters.fetches,
            fetch_failures: now.counters.fetch_failures,
            waits: now.counters.waits,
            not_ready: now.counters.not_ready,
            store_errors: now.counters.store_errors,
            switches: now.counters.switches,
            ..ferroflake_segment_status::empty()
        };
        // SAFETY: the caller's promise above.
        unsafe { versioned::write(out_status, status) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;
    use core::ptr::{null, null_mut};
    use std::ffi::CString;

    fn last_text() -> String {
        // SAFETY: a NUL-terminated string that lives until the next failure on this thread.
        unsafe { CStr::from_ptr(crate::ferroflake_last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn every_segment_error_has_its_own_code_and_text() {
        let errors = SegmentError::one_of_each_kind();
        let mut codes: Vec<u32> = Vec::new();
        for error in errors {
            let text = error.to_string();
            let failure = segment_failure(error);
            assert_ne!(failure.code, FERROFLAKE_RESULT_UNMAPPED_ERROR, "{text}");
            assert_eq!(failure.detail.as_deref(), Some(text.as_str()));
            codes.push(failure.code as u32);
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), 12, "two segment errors share a code");
    }

    #[cfg(not(feature = "stores"))]
    #[test]
    fn server_stores_are_not_built_without_the_feature() {
        let address = CString::new("redis://127.0.0.1:1").unwrap();
        let mut allocator = null_mut();
        // SAFETY: valid pointers.
        let code =
            unsafe { ferroflake_segment_allocator_new(address.as_ptr(), null(), &mut allocator) };
        assert_eq!(code, FERROFLAKE_RESULT_NOT_BUILT);
        assert!(last_text().contains("left out of this build"));
    }

    #[test]
    fn ids_come_from_the_table_and_go_back_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let address = CString::new(dir.path().join("s.db").to_str().unwrap()).unwrap();
        let key = CString::new("orders").unwrap();
        let (mut allocator, mut handle) = (null_mut(), null_mut());
        let mut ids = [0u64; 5];
        let mut given_back = 0;
        // SAFETY: valid pointers, each handle freed once.
        unsafe {
            assert_eq!(
                ferroflake_segment_allocator_new(address.as_ptr(), null(), &mut allocator),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_segment_allocator_key(allocator, key.as_ptr(), &mut handle),
                FERROFLAKE_RESULT_UNKNOWN_KEY
            );
            assert_eq!(
                last_text(),
                SegmentError::UnknownKey {
                    key: "orders".into()
                }
                .to_string()
            );
            assert_eq!(
                ferroflake_segment_allocator_create_key(allocator, key.as_ptr(), 1, 100),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_segment_allocator_key(allocator, key.as_ptr(), &mut handle),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_segment_key_next_ids(handle, ids.as_mut_ptr(), 5),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(ids, [1, 2, 3, 4, 5]);
            assert_eq!(
                ferroflake_segment_allocator_close(allocator, &mut given_back),
                FERROFLAKE_RESULT_OK
            );
            assert!(given_back > 0);
            assert_eq!(
                ferroflake_segment_key_next_id(handle, &mut ids[0]),
                FERROFLAKE_RESULT_CLOSED
            );
            // Closed for a key open before, and for creating one.
            let mut again = null_mut();
            assert_eq!(
                ferroflake_segment_allocator_key(allocator, key.as_ptr(), &mut again),
                FERROFLAKE_RESULT_CLOSED
            );
            assert!(again.is_null());
            let late = c"late";
            assert_eq!(
                ferroflake_segment_allocator_create_key(allocator, late.as_ptr(), 1, 100),
                FERROFLAKE_RESULT_CLOSED
            );
            ferroflake_segment_key_free(handle);
            ferroflake_segment_allocator_free(allocator);
        }
    }
}
