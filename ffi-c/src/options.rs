//! `ferroflake_generator_options`: the clock choice and the core's generator options.

use ferroflake::{AnyClock, Options};

use crate::boundary::guard;
use crate::failure::Failure;
use crate::ferroflake_result::{self, *};
use crate::versioned::{self, field_spans, Versioned};

/// Which clock a generator reads. One of the `FERROFLAKE_CLOCK_*` values; any other number
/// gives `FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE`.
pub type ferroflake_clock = u32;
/// The operating system's wall clock (`CLOCK_REALTIME`).
pub const FERROFLAKE_CLOCK_SYSTEM: ferroflake_clock = 0;
/// A cheaper wall clock that stays within one tick of real time (coarse clock or TSC).
pub const FERROFLAKE_CLOCK_FAST: ferroflake_clock = 1;
/// A clock that moves only through `ferroflake_generator_set_clock_ms`,
/// `_advance_clock_ms` and `_rewind_clock_ms` (waits advance it at once): for tests,
/// simulations and replay. It starts at `manual_start_ms`.
pub const FERROFLAKE_CLOCK_MANUAL: ferroflake_clock = 2;

/// Settings for `ferroflake_generator_new` beyond layout and node. Start from
/// `FERROFLAKE_GENERATOR_OPTIONS_INIT(&options)` (or `ferroflake_generator_options_init`) and
/// change what you need. A plain value.
///
/// It can grow: fields are only appended, and `struct_size` tells the library which version
/// the caller was built with, so a program built against an older header keeps working
/// (fields it does not know take their defaults). A `struct_size` that is no version's size
/// gives `FERROFLAKE_RESULT_STRUCT_SIZE`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ferroflake_generator_options {
    /// The size of the caller's version of this struct, set by the `_init` function.
    pub struct_size: u32,
    /// A `FERROFLAKE_CLOCK_*` value. Default `FERROFLAKE_CLOCK_SYSTEM`.
    pub clock: ferroflake_clock,
    /// Where a `FERROFLAKE_CLOCK_MANUAL` clock starts, in Unix ms. Ignored by other clocks.
    pub manual_start_ms: u64,
    /// How many ticks the generator may run ahead of the clock (borrowing future ticks, or
    /// riding out a clock that went back). Default 0.
    pub max_drift_ticks: u64,
    /// How long (ms) to wait for a clock that went back beyond the drift before returning
    /// `FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS`. Default 5. Any value is accepted, but no
    /// call waits more than a day (86,400,000 ms) for the clock: `UINT64_MAX` means "as long as
    /// the clock takes to come back, up to a day".
    pub max_backward_wait_ms: u64,
    /// Nonzero: issue only ticks after the one containing `resume_after_ms`. Default 0. A
    /// resume point further ahead of the clock than the drift and the backward wait bridge
    /// is refused by `ferroflake_generator_new` (`RESUME_IN_FUTURE`).
    pub has_resume_after: u32,
    /// The high-water mark (Unix ms) of a previous holder of the node id, used when
    /// `has_resume_after` is nonzero.
    pub resume_after_ms: u64,
}

impl ferroflake_generator_options {
    /// The defaults: the system clock and the core's `Options::default()`.
    pub(crate) fn defaults() -> Self {
        let core = Options::default();
        ferroflake_generator_options {
            struct_size: core::mem::size_of::<Self>() as u32,
            clock: FERROFLAKE_CLOCK_SYSTEM,
            manual_start_ms: 0,
            max_drift_ticks: core.max_drift_ticks,
            max_backward_wait_ms: core.max_backward_wait_ms,
            has_resume_after: u32::from(core.resume_after_ms.is_some()),
            resume_after_ms: core.resume_after_ms.unwrap_or(0),
        }
    }

    /// The core's options.
    pub(crate) fn to_core(self) -> Options {
        Options::given(
            Some(self.max_drift_ticks),
            Some(self.max_backward_wait_ms),
            (self.has_resume_after != 0).then_some(self.resume_after_ms),
        )
    }

    /// The chosen clock, for a layout with this tick. A manual clock is moved later
    /// through the generator, which keeps it.
    pub(crate) fn make_clock(&self, tick_ms: u64) -> Result<AnyClock, ferroflake_result> {
        match self.clock {
            FERROFLAKE_CLOCK_SYSTEM => Ok(AnyClock::system()),
            FERROFLAKE_CLOCK_FAST => Ok(AnyClock::fast(tick_ms)),
            FERROFLAKE_CLOCK_MANUAL => Ok(AnyClock::manual(self.manual_start_ms).0),
            _ => Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE),
        }
    }
}

// SAFETY: repr(C), struct_size first, plain integers, every field listed in order.
unsafe impl Versioned for ferroflake_generator_options {
    fn defaults() -> Self {
        Self::defaults()
    }
    fn fields() -> &'static [(usize, usize)] {
        field_spans!(ferroflake_generator_options; struct_size, clock, manual_start_ms,
            max_drift_ticks, max_backward_wait_ms, has_resume_after, resume_after_ms)
    }
}

impl ferroflake_generator_options {
    /// The caller's options (its version of the struct), or the defaults for NULL.
    ///
    /// # Safety
    /// `options` is NULL or points to a struct of its `struct_size` readable bytes.
    pub(crate) unsafe fn read(options: *const Self) -> Result<Self, Failure> {
        // SAFETY: the caller's promise above.
        unsafe { versioned::read(options) }
    }
}

/// Fills `*options`, a struct of `struct_size` bytes, with the defaults (system clock, no
/// drift, 5 ms backward wait, no resume point) and sets its `struct_size`. Pass
/// `sizeof options`, or use `FERROFLAKE_GENERATOR_OPTIONS_INIT(&options)`, which does.
///
/// Returns `STRUCT_SIZE` for a size that is no version of the struct, or `NULL_ARGUMENT`;
/// nothing is written then.
///
/// Ownership: `*options` is the caller's. Thread safety: any thread.
///
/// # Safety
/// `options` is NULL or valid for writing `struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferroflake_generator_options_init(
    struct_size: usize,
    options: *mut ferroflake_generator_options,
) -> ferroflake_result {
    // SAFETY: the caller's promise above.
    guard(|| unsafe { versioned::init(struct_size, options) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferroflake::ClockKind;

    #[test]
    fn defaults_are_the_core_defaults() {
        assert_eq!(
            ferroflake_generator_options::defaults().to_core(),
            Options::default()
        );
    }

    #[test]
    fn resume_after_is_passed_only_when_flagged() {
        let mut options = ferroflake_generator_options::defaults();
        options.resume_after_ms = 42;
        assert_eq!(options.to_core().resume_after_ms, None);
        options.has_resume_after = 7;
        assert_eq!(options.to_core().resume_after_ms, Some(42));
    }

    #[test]
    fn clock_values_follow_the_core_names_in_order() {
        let mut options = ferroflake_generator_options::defaults();
        for (value, name) in ClockKind::NAMES.iter().enumerate() {
            options.clock = value as ferroflake_clock;
            assert_eq!(
                options.make_clock(1).map(|clock| clock.kind()).ok(),
                ClockKind::from_name(name),
                "{name}"
            );
        }
    }

    #[test]
    fn unknown_clock_values_are_refused() {
        let mut options = ferroflake_generator_options::defaults();
        options.clock = ClockKind::ALL.len() as ferroflake_clock;
        assert!(matches!(
            options.make_clock(1),
            Err(FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE)
        ));
    }
}
