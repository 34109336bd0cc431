//! The fast clock's promise: never more than one tick behind the system clock, never ahead.

use ferroflake::{Clock, FastClock, FastClockSource, SystemClock};

#[test]
fn fast_clock_stays_within_one_tick_of_the_system_clock() {
    for tick_ms in [1, 4, 10, 1000] {
        let fast = FastClock::for_tick_ms(tick_ms);
        for i in 0..200_000u32 {
            let before = SystemClock.now_ms();
            let read = fast.now_ms();
            let after = SystemClock.now_ms();
            assert!(
                read + tick_ms >= before && read <= after + 1,
                "tick {tick_ms} ms, source {:?}, read {i}: {before} <= {read} (+{tick_ms}) <= {after}",
                fast.source()
            );
        }
    }
}

#[test]
fn a_tick_no_finer_than_the_kernel_tick_uses_the_coarse_clock() {
    // The coarse clock's resolution is the kernel tick (1–10 ms on Linux); a 1 s tick is
    // always coarser than that.
    assert_eq!(
        FastClock::for_tick_ms(1000).source(),
        FastClockSource::Coarse
    );
}
