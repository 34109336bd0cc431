//! Layouts used only for measuring: wide sequence fields, so the per-tick cap never limits
//! a measurement of the code itself.

use ferroflake::{Layout, SONYFLAKE_EPOCH_MS, TWITTER_EPOCH_MS};

/// 41 time / 2 node / 20 sequence bits, 1 ms tick, Twitter's epoch: 2^20 IDs per ms per
/// node, about 250 times more than one core can ask for, so no call ever waits.
pub fn uncapped_layout() -> Layout {
    Layout::builder(41, 2, 20)
        .epoch_ms(TWITTER_EPOCH_MS as i64)
        .build()
        .expect("41/2/20 is a valid layout")
}

/// 39 time / 2 node / 22 sequence bits in 10 ms ticks (sonyflake's tick and epoch): coarse
/// enough that `FastClock` may read `CLOCK_REALTIME_COARSE`, and wide enough never to wait.
pub fn coarse_layout() -> Layout {
    Layout::builder(39, 2, 22)
        .tick_ms(10)
        .epoch_ms(SONYFLAKE_EPOCH_MS as i64)
        .build()
        .expect("39/2/22 in 10 ms ticks is a valid layout")
}
