//! Layouts used only for measuring: wide sequence fields, so the per-tick cap never limits
//! a measurement of the code itself.

use ferroflake::{Layout, FERROFLAKE_EPOCH_MS, TWITTER_EPOCH_MS};

/// 41 time / 2 node / 20 sequence bits, 1 ms tick, Twitter's epoch: 2^20 IDs per ms per
/// node, about 250 times more than one core can ask for, so no call ever waits.
pub fn uncapped_layout() -> Layout {
    Layout::builder(41, 2, 20)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .expect("41/2/20 is a valid layout")
}

/// 32 time bits in 1 s ticks (as js53) / 2 node / 29 sequence bits: a tick coarse enough
/// that `FastClock` reads `CLOCK_REALTIME_COARSE` (it wants a tick of at least 4x the coarse
/// clock's resolution, often 4 ms), and a sequence wide enough never to wait.
pub fn coarse_layout() -> Layout {
    Layout::builder(32, 2, 29)
        .tick_ms(1000)
        .epoch_ms(FERROFLAKE_EPOCH_MS as i64)
        .build()
        .expect("32/2/29 in 1 s ticks is a valid layout")
}
