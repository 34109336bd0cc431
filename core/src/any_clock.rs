//! A clock chosen at run time, for bindings and configuration files.

use std::sync::Arc;

use crate::{Clock, ClockKind, FastClock, ManualClock, SystemClock};

/// One of the crate's clocks, picked at run time (the C, Python and Node faces take a clock
/// name). Dispatch is a predictable `match`, no virtual call.
#[derive(Debug, Clone)]
pub enum AnyClock {
    /// [`SystemClock`].
    System(SystemClock),
    /// [`FastClock`].
    Fast(FastClock),
    /// A shared [`ManualClock`]; the caller keeps another `Arc` to move it.
    Manual(Arc<ManualClock>),
}

impl AnyClock {
    /// The system clock.
    pub fn system() -> Self {
        AnyClock::System(SystemClock)
    }
    /// The fast clock for a layout's tick.
    pub fn fast(tick_ms: u64) -> Self {
        AnyClock::Fast(FastClock::for_tick_ms(tick_ms))
    }
    /// A manual clock (returned twice: one handle for the generator, one to move it).
    pub fn manual(now_ms: u64) -> (Self, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(now_ms));
        (AnyClock::Manual(clock.clone()), clock)
    }
    /// Which clock this is.
    pub const fn kind(&self) -> ClockKind {
        match self {
            AnyClock::System(_) => ClockKind::System,
            AnyClock::Fast(_) => ClockKind::Fast,
            AnyClock::Manual(_) => ClockKind::Manual,
        }
    }
}

impl Clock for AnyClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        match self {
            AnyClock::System(c) => c.now_ms(),
            AnyClock::Fast(c) => c.now_ms(),
            AnyClock::Manual(c) => c.now_ms(),
        }
    }
    fn wait_until_ms(&self, target_ms: u64) {
        match self {
            AnyClock::System(c) => c.wait_until_ms(target_ms),
            AnyClock::Fast(c) => c.wait_until_ms(target_ms),
            AnyClock::Manual(c) => c.wait_until_ms(target_ms),
        }
    }
    fn tracks_real_time(&self) -> bool {
        !matches!(self, AnyClock::Manual(_))
    }
}
