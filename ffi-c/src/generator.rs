//! `ferroflake_generator`: the core's lock-free generator behind an opaque handle.

use ferroflake::{AnyClock, ClaimedGenerator, Clock, Counters, ManualClock};

use crate::boundary::{borrow, fill_ids, guard, out};
use crate::ferroflake_result::{self, *};
use crate::layout::ferroflake_layout;
use crate::options::ferroflake_generator_options;

/// What `ferroflake_generator_fence_ms` reports when no fence is set.
pub const FERROFLAKE_NO_FENCE: u64 = u64::MAX;

/// Slow-path event counts of a generator; see `ferroflake_generator_counters`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ferroflake_counters {
    /// Times a call waited for the next tick because the sequence was used up.
    pub waits: u64,
    /// Ticks issued ahead of the clock (borrowed within `max_drift_ticks`).
    pub borrowed_ticks: u64,
    /// Times a call found the clock behind the last issued tick by more than the drift.
    pub rollbacks: u64,
}

/// Issues unique, strictly increasing ids for one node under one layout.
///
/// Opaque: make one with `ferroflake_generator_new`, release it with
/// `ferroflake_generator_free`. Every other function may be called on one generator from
/// any number of threads at once (the core generator is lock-free: one atomic word, one
/// compare-and-swap loop); ids stay unique and increasing across all of them.
pub struct ferroflake_generator {
    inner: ClaimedGenerator<AnyClock>,
}

// The C docs promise that handles may be shared by threads: hold the types to it.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<ferroflake_generator>();
    shareable::<ferroflake_layout>();
};

impl ferroflake_generator {
    fn manual_clock(&self) -> Result<&ManualClock, ferroflake_result> {
        match self.inner.clock() {
            AnyClock::Manual(clock) => Ok(clock),
            _ => Err(FERROFLAKE_RESULT_NOT_MANUAL_CLOCK),
        }
    }
}

/// Makes a generator for node `node` under `layout`.
///
/// `options` may be NULL for the defaults (system clock, no drift, 5 ms backward wait).
///
/// A node id has one live generator per process: while this one lives, another for the same
/// node id (whatever its layout or clock) is refused with `NODE_IN_USE`; share the handle
/// between threads instead. Once it is freed, the next generator of the node id continues
/// after the last tick it issued in, and is refused with `NODE_IN_USE` if its clock is
/// further behind that than its drift and backward wait bridge. A forked child never gets a
/// node id its parent held at the fork.
///
/// Returns `NODE_IN_USE`, `STRUCT_SIZE` for options whose `struct_size` is no version's size; `NODE_OUT_OF_RANGE`, `EPOCH_IN_FUTURE` or `LAYOUT_EXHAUSTED` (judged by the
/// chosen clock now); for a resume point, `LAYOUT_EXHAUSTED` if no tick of the layout
/// follows it and `RESUME_IN_FUTURE` if the clock is behind it by more than the drift and
/// the backward wait bridge; `UNKNOWN_ENUM_VALUE` for a bad clock, or `NULL_ARGUMENT`.
///
/// Ownership: `layout` and `options` are only read during the call (the generator keeps a
/// copy of the layout, so the layout handle may be freed afterwards). On success the caller
/// owns `*out_generator` and releases it with `ferroflake_generator_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `layout` is NULL or a live handle; `options` is NULL or valid for reading its
/// `struct_size` bytes; `out_generator` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_new(
    layout: *const ferroflake_layout,
    node: u64,
    options: *const ferroflake_generator_options,
    out_generator: *mut *mut ferroflake_generator,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, options, out_generator) = unsafe {
            (
                borrow(layout)?.inner,
                ferroflake_generator_options::read(options)?,
                out(out_generator)?,
            )
        };
        let clock = options.make_clock(layout.tick_ms())?;
        let inner = ClaimedGenerator::new(layout, node, clock, options.to_core())?;
        out_generator.set(Box::into_raw(Box::new(ferroflake_generator { inner })));
        Ok(())
    })
}

/// Releases a generator. NULL is accepted and ignored.
///
/// Ownership: takes back a handle from `ferroflake_generator_new`; it must not be used, or
/// freed, again.
/// Thread safety: no other thread may be using the generator any more.
///
/// # Safety
/// `generator` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_free(generator: *mut ferroflake_generator) {
    if !generator.is_null() {
        // Dropping the generator (atomics and an optional Arc) cannot panic.
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        drop(unsafe { Box::from_raw(generator) });
    }
}

/// The next id.
///
/// Returns `CLOCK_MOVED_BACKWARDS`, `CLOCK_STALLED`, `LAYOUT_EXHAUSTED`, `LEASE_EXPIRED`,
/// or `NULL_ARGUMENT`. May block: for the next tick when the sequence is used up (at most
/// one tick plus the configured backward wait), or for a clock that went back (at most the
/// backward wait); never more than a day for the clock, whatever the options.
///
/// Ownership: `generator` is borrowed; `*out_id` is the caller's.
/// Thread safety: any number of threads may call this on one generator at once.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_next_id(
    generator: *const ferroflake_generator,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_id) = unsafe { (borrow(generator)?, out(out_id)?) };
        out_id.set(generator.inner.next_id()?);
        Ok(())
    })
}

/// The next id, carrying `shard` in its lowest bits.
///
/// Returns `SHARD_OUT_OF_RANGE`, any error of `ferroflake_generator_next_id`, or
/// `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed; `*out_id` is the caller's.
/// Thread safety: any number of threads may call this on one generator at once.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_next_id_for_shard(
    generator: *const ferroflake_generator,
    shard: u64,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_id) = unsafe { (borrow(generator)?, out(out_id)?) };
        out_id.set(generator.inner.next_id_for_shard(shard)?);
        Ok(())
    })
}

/// Fills `ids[0..len]` with consecutive new ids (one compare-and-swap per run of sequence
/// numbers, so cheaper per id than `next_id`).
///
/// Returns any error of `ferroflake_generator_next_id`, `BUFFER_TOO_LARGE` if `len` ids
/// cannot be held in memory, or `NULL_ARGUMENT` if `generator` or `ids` is NULL (even when
/// `len` is 0; a valid `ids` with `len` 0 succeeds and writes nothing). On error `ids` is
/// left untouched; ids reserved before the error are skipped, never issued later.
///
/// Ownership: `generator` is borrowed; `ids` is the caller's buffer, written only on success.
/// Thread safety: any number of threads may call this on one generator at once.
///
/// # Safety
/// `generator` is NULL or a live handle; `ids` is NULL or valid for writing `len`
/// `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_next_ids(
    generator: *const ferroflake_generator,
    ids: *mut u64,
    len: usize,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let generator = unsafe { borrow(generator)? };
        // SAFETY: the caller's promise above.
        unsafe { fill_ids(ids, len, |scratch| Ok(generator.inner.next_ids(scratch)?)) }
    })
}

/// The generator's slow-path counts so far: waits, borrowed ticks, rollbacks.
///
/// Ownership: `generator` is borrowed; `*out_counters` is the caller's.
/// Thread safety: any thread, while others issue ids (each count is read atomically).
///
/// # Safety
/// `generator` is NULL or a live handle; `out_counters` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_counters(
    generator: *const ferroflake_generator,
    out_counters: *mut ferroflake_counters,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_counters) = unsafe { (borrow(generator)?, out(out_counters)?) };
        let Counters {
            waits,
            borrowed_ticks,
            rollbacks,
        } = generator.inner.counters();
        out_counters.set(ferroflake_counters {
            waits,
            borrowed_ticks,
            rollbacks,
        });
        Ok(())
    })
}

/// This generator's node id.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_node` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_node(
    generator: *const ferroflake_generator,
    out_node: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_node) = unsafe { (borrow(generator)?, out(out_node)?) };
        out_node.set(generator.inner.node());
        Ok(())
    })
}

/// A new handle holding a copy of the generator's layout (for decoding its ids).
///
/// Ownership: `generator` is borrowed. On success the caller owns `*out_layout` and
/// releases it with `ferroflake_layout_free`.
/// Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_layout` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_get_layout(
    generator: *const ferroflake_generator,
    out_layout: *mut *mut ferroflake_layout,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_layout) = unsafe { (borrow(generator)?, out(out_layout)?) };
        let layout = ferroflake_layout {
            inner: *generator.inner.layout(),
        };
        out_layout.set(Box::into_raw(Box::new(layout)));
        Ok(())
    })
}

/// The start (Unix ms) of the tick of the last issued id, or of the resume point.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_unix_ms` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_last_issued_ms(
    generator: *const ferroflake_generator,
    out_unix_ms: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_unix_ms) = unsafe { (borrow(generator)?, out(out_unix_ms)?) };
        out_unix_ms.set(generator.inner.last_issued_ms());
        Ok(())
    })
}

/// Forbids issuing any id whose tick starts at or after `fence_ms` (Unix ms): such calls
/// return `LEASE_EXPIRED`. A lease holder moves the fence forward on each renewal.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_set_fence_ms(
    generator: *const ferroflake_generator,
    fence_ms: u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        unsafe { borrow(generator)? }.inner.set_fence_ms(fence_ms);
        Ok(())
    })
}

/// Removes the fence.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_clear_fence(
    generator: *const ferroflake_generator,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        unsafe { borrow(generator)? }.inner.clear_fence();
        Ok(())
    })
}

/// The fence as Unix ms (the first tick start that may not be issued), or
/// `FERROFLAKE_NO_FENCE` if none is set.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_fence_ms` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_fence_ms(
    generator: *const ferroflake_generator,
    out_fence_ms: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_fence_ms) = unsafe { (borrow(generator)?, out(out_fence_ms)?) };
        out_fence_ms.set(generator.inner.fence_ms().unwrap_or(FERROFLAKE_NO_FENCE));
        Ok(())
    })
}

/// What the generator's clock reads now (Unix ms), whichever clock it is.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `generator` is NULL or a live handle; `out_unix_ms` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_clock_now_ms(
    generator: *const ferroflake_generator,
    out_unix_ms: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (generator, out_unix_ms) = unsafe { (borrow(generator)?, out(out_unix_ms)?) };
        out_unix_ms.set(generator.inner.clock().now_ms());
        Ok(())
    })
}

/// Sets a manual clock to `unix_ms`, forwards or backwards.
///
/// Returns `NOT_MANUAL_CLOCK` unless the generator was made with `FERROFLAKE_CLOCK_MANUAL`,
/// or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_set_clock_ms(
    generator: *const ferroflake_generator,
    unix_ms: u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        unsafe { borrow(generator)? }
            .manual_clock()?
            .set_ms(unix_ms);
        Ok(())
    })
}

/// Moves a manual clock forward by `ms`.
///
/// Returns `NOT_MANUAL_CLOCK` unless the generator was made with `FERROFLAKE_CLOCK_MANUAL`,
/// or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_advance_clock_ms(
    generator: *const ferroflake_generator,
    ms: u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        unsafe { borrow(generator)? }.manual_clock()?.advance_ms(ms);
        Ok(())
    })
}

/// Moves a manual clock back by `ms` (stopping at 0): a deterministic clock rollback.
///
/// Returns `NOT_MANUAL_CLOCK` unless the generator was made with `FERROFLAKE_CLOCK_MANUAL`,
/// or `NULL_ARGUMENT`.
///
/// Ownership: `generator` is borrowed. Thread safety: any thread, while others issue ids.
///
/// # Safety
/// `generator` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_rewind_clock_ms(
    generator: *const ferroflake_generator,
    ms: u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        unsafe { borrow(generator)? }.manual_clock()?.rewind_ms(ms);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{
        ferroflake_layout_free, ferroflake_layout_new_preset, FERROFLAKE_PRESET_TWITTER,
    };
    use crate::options::FERROFLAKE_CLOCK_MANUAL;
    use core::ptr::null_mut;

    fn manual_twitter(start_ms: u64) -> *mut ferroflake_generator {
        let mut layout = null_mut();
        let mut generator = null_mut();
        let mut options = ferroflake_generator_options::defaults();
        options.clock = FERROFLAKE_CLOCK_MANUAL;
        options.manual_start_ms = start_ms;
        // SAFETY: valid pointers; the layout is freed once.
        unsafe {
            assert_eq!(
                ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &mut layout),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_generator_new(layout, 1, &options, &mut generator),
                FERROFLAKE_RESULT_OK
            );
            ferroflake_layout_free(layout);
        }
        generator
    }

    #[test]
    fn next_ids_leaves_the_buffer_untouched_on_error() {
        let generator = manual_twitter(1_700_000_000_000);
        let mut ids = [7u64; 4];
        // SAFETY: a live handle and a buffer of 4.
        unsafe {
            assert_eq!(
                ferroflake_generator_next_ids(generator, ids.as_mut_ptr(), 4),
                FERROFLAKE_RESULT_OK
            );
            assert!(ids.windows(2).all(|w| w[0] < w[1]));
            let before = ids;
            assert_eq!(
                ferroflake_generator_rewind_clock_ms(generator, 3_600_000),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_generator_next_ids(generator, ids.as_mut_ptr(), 4),
                FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS
            );
            assert_eq!(ids, before);
            assert_eq!(
                ferroflake_generator_next_ids(generator, ids.as_mut_ptr(), usize::MAX),
                FERROFLAKE_RESULT_BUFFER_TOO_LARGE
            );
            ferroflake_generator_free(generator);
        }
    }

    #[test]
    fn only_manual_clocks_can_be_moved() {
        let mut layout = null_mut();
        let mut generator = null_mut();
        // SAFETY: valid pointers, each handle freed once.
        unsafe {
            assert_eq!(
                ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &mut layout),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_generator_new(layout, 1, core::ptr::null(), &mut generator),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_generator_advance_clock_ms(generator, 1),
                FERROFLAKE_RESULT_NOT_MANUAL_CLOCK
            );
            ferroflake_generator_free(generator);
            ferroflake_layout_free(layout);
        }
    }
}
