//! `ferroflake_order_numbers`: date-prefixed order numbers (`yyyyMMdd` and a counter that
//! starts again at 1 each day) on a segment allocator, ferroflake-segment's `OrderNumbers`.
//! Unix only, like the allocator.

use core::ffi::c_char;
use core::ptr;
use std::sync::Arc;

use ferroflake_segment::{OrderNumberConfig, OrderNumbers, MAX_ORDER_WIDTH};

use crate::boundary::{borrow, borrow_str, guard, out, write_text};
use crate::failure::Failure;
use crate::ferroflake_result::{self, *};
use crate::segment::{ferroflake_segment_allocator, segment_failure};
use crate::versioned::{self, field_spans, Versioned};

/// A buffer of this many bytes holds any order number as text, with its NUL terminator:
/// 8 digits of the day and at most 10 of the counter.
pub const FERROFLAKE_ORDER_NUMBER_MAX_SIZE: usize = 19;

/// Settings for `ferroflake_order_numbers_new`. Start from
/// `FERROFLAKE_ORDER_NUMBER_OPTIONS_INIT(&options)` and change what you need. It can grow
/// like `ferroflake_generator_options`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ferroflake_order_number_options {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// Digits of the day's counter, 1 to 10 (the whole number, 18 digits at most, fits an
    /// int64_t). Default 6: up to 999,999 numbers a day. Keep the allocator's `max_step`
    /// well below 10^width, or a busy day's growing segments use up a narrow counter.
    pub width: u32,
    /// The segment keys' prefix: each day's key is `{prefix}:{yyyyMMdd}`, created in the
    /// table the first time that day is asked for. NULL (the default) for `orders`.
    pub prefix: *const c_char,
    /// The IANA time zone whose midnight starts a new day (daylight saving time included),
    /// such as `Asia/Shanghai`. NULL (the default) for `UTC`.
    pub zone: *const c_char,
    /// The step of the day keys created (the least one fetch takes), 1 to 2^31 - 1.
    /// Default 100.
    pub step: u64,
}

impl ferroflake_order_number_options {
    fn defaults() -> Self {
        ferroflake_order_number_options {
            struct_size: core::mem::size_of::<Self>() as u32,
            width: OrderNumberConfig::default().width,
            prefix: ptr::null(),
            zone: ptr::null(),
            step: OrderNumberConfig::default().step,
        }
    }

    /// The segment crate's config: NULL strings take its defaults.
    ///
    /// # Safety
    /// `prefix` and `zone` are NULL or NUL-terminated strings.
    unsafe fn to_config(self) -> Result<OrderNumberConfig, Failure> {
        let mut config = OrderNumberConfig {
            width: self.width,
            step: self.step,
            ..OrderNumberConfig::default()
        };
        if !self.prefix.is_null() {
            // SAFETY: the caller's promise above.
            config.prefix = unsafe { borrow_str(self.prefix)? }.to_owned();
        }
        if !self.zone.is_null() {
            // SAFETY: the caller's promise above.
            config.zone = unsafe { borrow_str(self.zone)? }.to_owned();
        }
        Ok(config)
    }
}

// SAFETY: repr(C), struct_size first, integers and pointers (any bits are a value; the
// pointers are only read as the struct's documented C strings), every field listed in order.
unsafe impl Versioned for ferroflake_order_number_options {
    fn defaults() -> Self {
        Self::defaults()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_order_number_options; struct_size, width, prefix, zone, step)
    }
}

/// Fills `*options`, a struct of `struct_size` bytes, with the defaults and sets its
/// `struct_size`. Use `FERROFLAKE_ORDER_NUMBER_OPTIONS_INIT(&options)`.
///
/// Ownership: `*options` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `options` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_order_number_options_init(
    struct_size: usize,
    options: *mut ferroflake_order_number_options,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, options) })
}

/// Issues date-prefixed order numbers, `yyyyMMdd` then the day's counter zero-padded to the
/// width (`20261123000042` at width 6), from one segment key per day.
///
/// Opaque: make one with `ferroflake_order_numbers_new`, release it with
/// `ferroflake_order_numbers_free`. Any number of threads may call
/// `ferroflake_order_numbers_next` on one handle at once. Numbers are unique across threads
/// and across processes on the same table; days only go forward (a clock stepping back
/// over midnight keeps the latest day); numbers some process took but did not issue are
/// skipped (gaps, never repeats). It may outlive its allocator: once the allocator is
/// closed or freed, `next` returns `FERROFLAKE_RESULT_CLOSED`.
pub struct ferroflake_order_numbers {
    inner: OrderNumbers,
    width: u32,
}

const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<ferroflake_order_numbers>();
};

/// Makes an order number generator on `allocator`'s table. `options` may be NULL for the
/// defaults (prefix `orders`, UTC days, width 6, step 100).
///
/// Returns `INVALID_CONFIG` for an unknown time zone, a width outside 1 to 10 or a step
/// outside 1 to 2^31 - 1; `INVALID_KEY` for a prefix that makes keys the table cannot hold;
/// `CLOSED` after `ferroflake_segment_allocator_close`; `STRUCT_SIZE`, `INVALID_UTF8`, or
/// `NULL_ARGUMENT`. `ferroflake_last_error_message` has
/// the details.
///
/// Ownership: `allocator` and `options` (with its strings) are only read during the call;
/// the generator shares the allocator, which may be freed first. On success the caller owns
/// `*out_orders` and releases it with `ferroflake_order_numbers_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `allocator` is NULL or a live handle; `options` is NULL or valid for its `struct_size`
/// bytes, with `prefix` and `zone` NULL or NUL-terminated strings; `out_orders` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_order_numbers_new(
    allocator: *const ferroflake_segment_allocator,
    options: *const ferroflake_order_number_options,
    out_orders: *mut *mut ferroflake_order_numbers,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (allocator, options, out_orders) = unsafe {
            (
                borrow(allocator)?,
                versioned::read(options)?,
                out(out_orders)?,
            )
        };
        // SAFETY: the caller's promise about the strings.
        let config = unsafe { options.to_config()? };
        let width = config.width;
        let inner =
            OrderNumbers::new(Arc::clone(&allocator.inner), config).map_err(segment_failure)?;
        out_orders.set(Box::into_raw(Box::new(ferroflake_order_numbers {
            inner,
            width,
        })));
        Ok(())
    })
}

/// The next order number: its value into `*out_value` (`yyyyMMdd * 10^width + counter`,
/// at most 18 digits, below 2^63), and, when `buf` is not NULL, the same number as text
/// (`yyyyMMdd` and the zero-padded counter, `width + 8` characters and a NUL) into `buf`.
///
/// Returns `KEY_EXHAUSTED` when today's counter has used its width (the next day starts
/// again at 1); `BUFFER_TOO_SMALL` if `buf` is not NULL and `buf_size` is below
/// `width + 9` (`FERROFLAKE_ORDER_NUMBER_MAX_SIZE` always suffices), checked before any
/// number is taken; the allocator's and store's errors (`NOT_READY`, `UNAVAILABLE`,
/// `STORE_ERROR`, `REWOUND`, `CLOSED`, `GENERATOR_FORKED`); `INVALID_CONFIG` for a clock
/// outside the years 1 to 9999; or `NULL_ARGUMENT`. Nothing is issued on an error. May
/// block while a new day's key is created or memory is empty.
///
/// Ownership: `orders` is borrowed; `*out_value` and `buf` are the caller's, written only
/// on success. Thread safety: any number of threads at once.
///
/// # Safety
/// `orders` is NULL or a live handle; `out_value` is NULL or writable; `buf` is NULL or
/// valid for writing `buf_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_order_numbers_next(
    orders: *const ferroflake_order_numbers,
    out_value: *mut u64,
    buf: *mut c_char,
    buf_size: usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (orders, out_value) = unsafe { (borrow(orders)?, out(out_value)?) };
        // Refused before a number is taken, so a short buffer costs no gap.
        let text_size = 8 + orders.width as usize + 1;
        debug_assert!(orders.width <= MAX_ORDER_WIDTH);
        if !buf.is_null() && buf_size < text_size {
            return Err(FERROFLAKE_RESULT_BUFFER_TOO_SMALL.into());
        }
        let number = orders.inner.next().map_err(segment_failure)?;
        if !buf.is_null() {
            // SAFETY: the caller's promise above; the size was checked for any day of the
            // years 1000 to 9999 (and an earlier day's text is shorter).
            unsafe { write_text(&number.to_string(), buf, buf_size, ptr::null_mut())? };
        }
        out_value.set(number.value());
        Ok(())
    })
}

/// Releases an order number generator (its allocator stays as it is). NULL is accepted and
/// ignored.
///
/// Ownership: takes the handle back; it must not be used again.
/// Thread safety: no other thread may be using this handle any more.
///
/// # Safety
/// `orders` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_order_numbers_free(orders: *mut ferroflake_order_numbers) {
    if !orders.is_null() {
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        drop(unsafe { Box::from_raw(orders) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_size_holds_the_widest_number() {
        let widest = format!("99991231{}", "9".repeat(MAX_ORDER_WIDTH as usize));
        assert_eq!(widest.len() + 1, FERROFLAKE_ORDER_NUMBER_MAX_SIZE);
        assert!(widest.parse::<u64>().unwrap() < 1 << 63);
    }

    #[test]
    fn defaults_are_the_segment_crates() {
        // SAFETY: NULL strings.
        let config = unsafe { ferroflake_order_number_options::defaults().to_config() };
        assert_eq!(config.unwrap(), OrderNumberConfig::default());
    }
}
