//! The build other platforms get. `scripts/test-rust.sh` runs this file (and checks the C,
//! Python and Node faces) with `FERROFLAKE_CFG=ferroflake_portable` (core/build.rs), which compiles out
//! everything Linux-only: the coarse clock, the TSC and the libc clock reads.
#![cfg(ferroflake_portable)]

use std::time::{SystemTime, UNIX_EPOCH};

use ferroflake::{AnyClock, Clock, FastClock, FastClockSource, Generator, Layout, Options};

fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn the_fast_clock_falls_back_to_the_system_clock() {
    for tick_ms in [1, 10, 1000] {
        let clock = FastClock::for_tick_ms(tick_ms);
        assert_eq!(clock.source(), FastClockSource::System, "tick {tick_ms} ms");
        let (before, now, after) = (system_ms(), clock.now_ms(), system_ms());
        assert!(
            before <= now && now <= after,
            "{before} <= {now} <= {after}"
        );
    }
}

#[test]
fn generators_issue_on_the_portable_clocks() {
    for clock in [AnyClock::system(), AnyClock::fast(1)] {
        let generator =
            Generator::with_clock(Layout::twitter(), 7, clock, Options::default()).unwrap();
        let (a, b) = (generator.next_id().unwrap(), generator.next_id().unwrap());
        assert!(b > a);
        let parts = Layout::twitter().decode(b).unwrap();
        assert_eq!(parts.node, 7);
        assert!(parts.timestamp_ms.abs_diff(system_ms()) < 1_000);
    }
}
