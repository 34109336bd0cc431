//! `ferroflake_layout`: a validated bit layout (presets and custom), its limits, and the
//! mapping between ids and their parts.

use core::ffi::{c_char, CStr};

use ferroflake::{FieldOrder, Layout};

use crate::boundary::{borrow, guard, out};
use crate::ferroflake_result::{self, *};
use crate::parts::ferroflake_parts;

/// A preset layout, for `ferroflake_layout_new_preset`. One of the `FERROFLAKE_PRESET_*`
/// values; any other number gives `FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE`.
pub type ferroflake_preset = u32;
/// Twitter's snowflake: 41 time / 10 node / 12 sequence, 1 ms, epoch 1288834974657.
pub const FERROFLAKE_PRESET_TWITTER: ferroflake_preset = 0;
/// Discord's snowflake: 41 time / 10 node / 12 sequence, 1 ms, epoch 2015-01-01.
pub const FERROFLAKE_PRESET_DISCORD: ferroflake_preset = 1;
/// sonyflake: 39 time in 10 ms ticks / 8 sequence / 16 machine (machine lowest).
pub const FERROFLAKE_PRESET_SONYFLAKE: ferroflake_preset = 2;
/// JavaScript-safe, 1 s ticks: 32 time / 8 node / 12 sequence, epoch 2020-01-01.
pub const FERROFLAKE_PRESET_JS53: ferroflake_preset = 3;
/// JavaScript-safe, 1 ms ticks: 41 time / 4 node / 8 sequence, epoch 2020-01-01.
pub const FERROFLAKE_PRESET_JS53MS: ferroflake_preset = 4;
/// Shard suffix: 41 time / 6 node / 12 sequence / 4 shard, 1 ms, epoch 2020-01-01.
pub const FERROFLAKE_PRESET_SHARDED: ferroflake_preset = 5;

/// Which of node and sequence sits right below the time field. One of the
/// `FERROFLAKE_FIELD_ORDER_*` values.
pub type ferroflake_field_order = u32;
/// time | node | sequence | shard, as in Twitter's snowflake.
pub const FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE: ferroflake_field_order = 0;
/// time | sequence | node | shard (node lowest before the shard), as in sonyflake.
pub const FERROFLAKE_FIELD_ORDER_SEQUENCE_THEN_NODE: ferroflake_field_order = 1;

/// The definition of a layout: what `ferroflake_layout_new` validates and what
/// `ferroflake_layout_get_spec` reports. A plain value; copy it freely.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ferroflake_layout_spec {
    /// Width of the time field (at least 1).
    pub time_bits: u32,
    /// Width of the node field.
    pub node_bits: u32,
    /// Width of the sequence field (at least 1).
    pub sequence_bits: u32,
    /// Width of the shard field, always the lowest bits (0 for none).
    pub shard_bits: u32,
    /// The time unit in milliseconds (at least 1).
    pub tick_ms: u64,
    /// The epoch in milliseconds since 1970-01-01T00:00:00Z (not negative).
    pub epoch_ms: i64,
    /// A `FERROFLAKE_FIELD_ORDER_*` value.
    pub order: ferroflake_field_order,
}

/// What a layout can hold, derived from its spec by the core.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ferroflake_layout_limits {
    /// Sum of all widths, at most 63.
    pub total_bits: u32,
    /// The largest node id.
    pub max_node: u64,
    /// The largest sequence number within one tick.
    pub max_sequence: u64,
    /// The largest shard (0 without shard bits).
    pub max_shard: u64,
    /// The largest id the layout can produce.
    pub max_id: u64,
    /// Ids per second one node can issue at most.
    pub capacity_per_second: u64,
    /// The first instant (Unix ms) the time field cannot hold; UINT64_MAX if never.
    pub exhausts_at_ms: u64,
}

/// A validated bit layout. Opaque: make one with `ferroflake_layout_new`,
/// `ferroflake_layout_new_preset` or `ferroflake_layout_new_named`, release it with
/// `ferroflake_layout_free`. It never changes after creation, so any number of threads may
/// use one layout at the same time.
pub struct ferroflake_layout {
    pub(crate) inner: Layout,
}

fn preset(preset: ferroflake_preset) -> Result<Layout, ferroflake_result> {
    match preset {
        FERROFLAKE_PRESET_TWITTER => Ok(Layout::twitter()),
        FERROFLAKE_PRESET_DISCORD => Ok(Layout::discord()),
        FERROFLAKE_PRESET_SONYFLAKE => Ok(Layout::sonyflake()),
        FERROFLAKE_PRESET_JS53 => Ok(Layout::js53()),
        FERROFLAKE_PRESET_JS53MS => Ok(Layout::js53ms()),
        FERROFLAKE_PRESET_SHARDED => Ok(Layout::sharded()),
        _ => Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE),
    }
}

fn field_order(order: ferroflake_field_order) -> Result<FieldOrder, ferroflake_result> {
    match order {
        FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE => Ok(FieldOrder::NodeThenSequence),
        FERROFLAKE_FIELD_ORDER_SEQUENCE_THEN_NODE => Ok(FieldOrder::SequenceThenNode),
        _ => Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE),
    }
}

fn boxed(layout: Layout) -> *mut ferroflake_layout {
    Box::into_raw(Box::new(ferroflake_layout { inner: layout }))
}

/// Validates a custom layout and makes a handle for it.
///
/// Returns the core's refusal (`TOO_MANY_BITS`, `NO_TIME_BITS`, `ZERO_SEQUENCE_BITS`,
/// `ZERO_TICK`, `EPOCH_BEFORE_UNIX`), `UNKNOWN_ENUM_VALUE` for a bad `order`, or
/// `NULL_ARGUMENT`.
///
/// Ownership: `spec` is only read during the call. On success `*out_layout` receives a new
/// handle that the caller owns and must release with `ferroflake_layout_free`.
/// Thread safety: may be called from any thread.
///
/// # Safety
/// `spec` is NULL or points to a valid `ferroflake_layout_spec`; `out_layout` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_new(
    spec: *const ferroflake_layout_spec,
    out_layout: *mut *mut ferroflake_layout,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (spec, out_layout) = unsafe { (borrow(spec)?, out(out_layout)?) };
        let layout = Layout::builder(spec.time_bits, spec.node_bits, spec.sequence_bits)
            .shard_bits(spec.shard_bits)
            .tick_ms(spec.tick_ms)
            .epoch_ms(spec.epoch_ms)
            .order(field_order(spec.order)?)
            .build()?;
        out_layout.set(boxed(layout));
        Ok(())
    })
}

/// Makes a handle for a preset layout (`FERROFLAKE_PRESET_*`).
///
/// Returns `UNKNOWN_ENUM_VALUE` for any other number, or `NULL_ARGUMENT`.
///
/// Ownership: on success the caller owns `*out_layout` and releases it with
/// `ferroflake_layout_free`.
/// Thread safety: may be called from any thread.
///
/// # Safety
/// `out_layout` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_new_preset(
    preset_value: ferroflake_preset,
    out_layout: *mut *mut ferroflake_layout,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let out_layout = unsafe { out(out_layout)? };
        out_layout.set(boxed(preset(preset_value)?));
        Ok(())
    })
}

/// Makes a handle for a layout by name or spelling: a preset, "twitter", "discord",
/// "sonyflake", "js53", "js53ms" or "sharded" (ASCII case-insensitive), or a custom
/// layout spelled `TIME/NODE/SEQUENCE[+SHARD]@EPOCH[,tick=Nms][,order=ORDER]`, the epoch as
/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` or unix ms, e.g. "41/8/14@2010-11-04T01:42:54.657Z".
///
/// Returns `UNKNOWN_LAYOUT` for text that is neither (a spelling that breaks the form
/// included), what `ferroflake_layout_new` returns for widths, tick or epoch that make no
/// layout, `INVALID_UTF8`, or `NULL_ARGUMENT`.
///
/// Ownership: `name` is only read during the call. On success the caller owns
/// `*out_layout` and releases it with `ferroflake_layout_free`.
/// Thread safety: may be called from any thread.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `out_layout` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_new_named(
    name: *const c_char,
    out_layout: *mut *mut ferroflake_layout,
) -> ferroflake_result {
    guard(|| {
        if name.is_null() {
            return Err(FERROFLAKE_RESULT_NULL_ARGUMENT.into());
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's promise.
        let name = unsafe { CStr::from_ptr(name) };
        // SAFETY: the caller's promise above.
        let out_layout = unsafe { out(out_layout)? };
        let name = name.to_str().map_err(|_| FERROFLAKE_RESULT_INVALID_UTF8)?;
        out_layout.set(boxed(Layout::parse(name)?));
        Ok(())
    })
}

/// Releases a layout handle. NULL is accepted and ignored.
///
/// Generators made from the layout keep their own copy and stay valid.
///
/// Ownership: takes back a handle from a `ferroflake_layout_new*` function; it must not be
/// used, or freed, again.
/// Thread safety: no other thread may be using this handle.
///
/// # Safety
/// `layout` is NULL or a live handle from this library.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_free(layout: *mut ferroflake_layout) {
    if !layout.is_null() {
        // Dropping a Box<Layout> cannot panic, so no boundary is needed.
        // SAFETY: the caller hands back a pointer from Box::into_raw, exactly once.
        drop(unsafe { Box::from_raw(layout) });
    }
}

/// The layout's widths, tick, epoch and field order: the spec that rebuilds it.
///
/// Ownership: `layout` is borrowed; `*out_spec` is the caller's.
/// Thread safety: may be called from any thread, also while others use the layout.
///
/// # Safety
/// `layout` is NULL or a live handle; `out_spec` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_get_spec(
    layout: *const ferroflake_layout,
    out_spec: *mut ferroflake_layout_spec,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_spec) = unsafe { (&borrow(layout)?.inner, out(out_spec)?) };
        out_spec.set(ferroflake_layout_spec {
            time_bits: layout.time_bits(),
            node_bits: layout.node_bits(),
            sequence_bits: layout.sequence_bits(),
            shard_bits: layout.shard_bits(),
            tick_ms: layout.tick_ms(),
            // The core keeps epochs ≥ 0 and below the exhaustion point, which fits i64
            // for every valid layout; saturate rather than wrap just in case.
            epoch_ms: i64::try_from(layout.epoch_ms()).unwrap_or(i64::MAX),
            order: match layout.order() {
                FieldOrder::NodeThenSequence => FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE,
                FieldOrder::SequenceThenNode => FERROFLAKE_FIELD_ORDER_SEQUENCE_THEN_NODE,
            },
        });
        Ok(())
    })
}

/// The layout's limits: total width, largest node, sequence, shard and id, capacity per
/// second, and the instant its time field runs out.
///
/// Ownership: `layout` is borrowed; `*out_limits` is the caller's.
/// Thread safety: may be called from any thread, also while others use the layout.
///
/// # Safety
/// `layout` is NULL or a live handle; `out_limits` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_get_limits(
    layout: *const ferroflake_layout,
    out_limits: *mut ferroflake_layout_limits,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_limits) = unsafe { (&borrow(layout)?.inner, out(out_limits)?) };
        out_limits.set(ferroflake_layout_limits {
            total_bits: layout.total_bits(),
            max_node: layout.max_node(),
            max_sequence: layout.max_sequence(),
            max_shard: layout.max_shard(),
            max_id: layout.max_id(),
            capacity_per_second: layout.capacity_per_second(),
            exhausts_at_ms: layout.exhausts_at(),
        });
        Ok(())
    })
}

/// Ids per second one node can issue at most under this layout.
///
/// Ownership: `layout` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `layout` is NULL or a live handle; `out_per_second` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_capacity_per_second(
    layout: *const ferroflake_layout,
    out_per_second: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_per_second) = unsafe { (&borrow(layout)?.inner, out(out_per_second)?) };
        out_per_second.set(layout.capacity_per_second());
        Ok(())
    })
}

/// The first instant (Unix ms) the layout's time field cannot hold; ids exist only for
/// earlier times. UINT64_MAX for layouts that never run out.
///
/// Ownership: `layout` is borrowed. Thread safety: any thread.
///
/// # Safety
/// `layout` is NULL or a live handle; `out_unix_ms` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_exhausts_at_ms(
    layout: *const ferroflake_layout,
    out_unix_ms: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_unix_ms) = unsafe { (&borrow(layout)?.inner, out(out_unix_ms)?) };
        out_unix_ms.set(layout.exhausts_at());
        Ok(())
    })
}

/// Builds the id for `parts` (the timestamp is rounded down to its tick).
///
/// Returns `TIMESTAMP_OUT_OF_RANGE`, `NODE_OUT_OF_RANGE`, `SEQUENCE_OUT_OF_RANGE`,
/// `SHARD_OUT_OF_RANGE`, or `NULL_ARGUMENT`.
///
/// Ownership: `layout` and `parts` are borrowed for the call; `*out_id` is the caller's.
/// Thread safety: any thread, also while others use the layout.
///
/// # Safety
/// `layout` is NULL or a live handle; `parts` is NULL or valid; `out_id` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_compose(
    layout: *const ferroflake_layout,
    parts: *const ferroflake_parts,
    out_id: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, parts, out_id) =
            unsafe { (&borrow(layout)?.inner, borrow(parts)?, out(out_id)?) };
        out_id.set(layout.compose(&parts.to_core())?);
        Ok(())
    })
}

/// The resume point (`ferroflake_options.resume_after_ms`) that puts every id of `layout`
/// above `old_id`, the highest id an old generator issued with `old_layout` (NULL: `layout`
/// itself): new ids are larger numbers and come after its tick in time.
///
/// Returns `ID_OUT_OF_RANGE` if `old_id` is wider than `old_layout`, or than `layout` (no
/// id of it can be above), or `NULL_ARGUMENT`.
///
/// Ownership: both layouts are borrowed for the call; `*out_resume_after_ms` is the
/// caller's. Thread safety: any thread, also while others use the layouts.
///
/// # Safety
/// `layout` is NULL or a live handle; `old_layout` is NULL or a live handle;
/// `out_resume_after_ms` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_resume_after_id(
    layout: *const ferroflake_layout,
    old_id: u64,
    old_layout: *const ferroflake_layout,
    out_resume_after_ms: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_ms) = unsafe { (&borrow(layout)?.inner, out(out_resume_after_ms)?) };
        let old_layout = if old_layout.is_null() {
            layout
        } else {
            // SAFETY: the caller's promise: a live handle when not NULL.
            unsafe { &borrow(old_layout)?.inner }
        };
        out_ms.set(layout.resume_after_id(old_id, old_layout)?);
        Ok(())
    })
}

/// Splits an id made with this layout into its parts.
///
/// Returns `ID_OUT_OF_RANGE` for an id with bits above the layout's width, or
/// `NULL_ARGUMENT`.
///
/// Ownership: `layout` is borrowed; `*out_parts` is the caller's.
/// Thread safety: any thread, also while others use the layout.
///
/// # Safety
/// `layout` is NULL or a live handle; `out_parts` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_decode(
    layout: *const ferroflake_layout,
    id: u64,
    out_parts: *mut ferroflake_parts,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promises above.
        let (layout, out_parts) = unsafe { (&borrow(layout)?.inner, out(out_parts)?) };
        out_parts.set(ferroflake_parts::from_core(layout.decode(id)?));
        Ok(())
    })
}

/// A Twitter node id from its datacenter (0-31) and worker (0-31) halves.
///
/// Returns `NODE_OUT_OF_RANGE` if either half exceeds 31, or `NULL_ARGUMENT`.
///
/// Ownership: `*out_node` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `out_node` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_layout_twitter_node(
    datacenter: u64,
    worker: u64,
    out_node: *mut u64,
) -> ferroflake_result {
    guard(|| {
        // SAFETY: the caller's promise above.
        let out_node = unsafe { out(out_node)? };
        out_node.set(Layout::twitter_node(datacenter, worker)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::{null, null_mut};

    #[test]
    fn preset_values_follow_the_core_names_in_order() {
        for (value, name) in Layout::PRESET_NAMES.iter().enumerate() {
            assert_eq!(
                preset(value as u32),
                Ok(Layout::from_name(name).unwrap()),
                "{name}"
            );
        }
        assert_eq!(
            preset(Layout::PRESET_NAMES.len() as u32),
            Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)
        );
    }

    #[test]
    fn field_order_values_follow_the_core_names_in_order() {
        for (value, name) in FieldOrder::NAMES.iter().enumerate() {
            assert_eq!(
                field_order(value as u32),
                Ok(FieldOrder::from_name(name).unwrap()),
                "{name}"
            );
        }
        assert_eq!(
            field_order(FieldOrder::NAMES.len() as u32),
            Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)
        );
    }

    #[test]
    fn out_params_stay_untouched_on_failure() {
        let sentinel = 0x5a5a as *mut ferroflake_layout;
        let mut handle = sentinel;
        let bad = ferroflake_layout_spec {
            time_bits: 41,
            node_bits: 10,
            sequence_bits: 12,
            shard_bits: 0,
            tick_ms: 0,
            epoch_ms: 0,
            order: FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE,
        };
        // SAFETY: valid pointers or NULL throughout.
        unsafe {
            assert_eq!(
                ferroflake_layout_new(&bad, &mut handle),
                FERROFLAKE_RESULT_ZERO_TICK
            );
            assert_eq!(
                ferroflake_layout_new(
                    &ferroflake_layout_spec {
                        order: 7,
                        tick_ms: 1,
                        ..bad
                    },
                    &mut handle
                ),
                FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE
            );
            assert_eq!(
                ferroflake_layout_new(null(), &mut handle),
                FERROFLAKE_RESULT_NULL_ARGUMENT
            );
            assert_eq!(
                ferroflake_layout_new(&bad, null_mut()),
                FERROFLAKE_RESULT_NULL_ARGUMENT
            );
        }
        assert_eq!(handle, sentinel);
    }

    #[test]
    fn spec_round_trips_through_a_handle() {
        let mut handle = null_mut();
        let mut spec = ferroflake_layout_spec {
            time_bits: 0,
            node_bits: 0,
            sequence_bits: 0,
            shard_bits: 0,
            tick_ms: 0,
            epoch_ms: 0,
            order: 0,
        };
        // SAFETY: valid pointers; the handle is freed once.
        unsafe {
            assert_eq!(
                ferroflake_layout_new_preset(FERROFLAKE_PRESET_SONYFLAKE, &mut handle),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!(
                ferroflake_layout_get_spec(handle, &mut spec),
                FERROFLAKE_RESULT_OK
            );
            let mut rebuilt = null_mut();
            assert_eq!(
                ferroflake_layout_new(&spec, &mut rebuilt),
                FERROFLAKE_RESULT_OK
            );
            assert_eq!((*rebuilt).inner, Layout::sonyflake());
            ferroflake_layout_free(rebuilt);
            ferroflake_layout_free(handle);
            ferroflake_layout_free(null_mut());
        }
        assert_eq!(spec.order, FERROFLAKE_FIELD_ORDER_SEQUENCE_THEN_NODE);
    }
}
