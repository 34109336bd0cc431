//! A clock reading taken before other threads issued later ticks is not a rollback.
//!
//! A caller that reads the clock and is then preempted (or keeps losing CAS races) for
//! longer than `max_backward_wait_ms` finds the state ahead of its reading. Found by the C
//! suite's pthreads test under valgrind, whose scheduler makes such pauses common.

use std::collections::VecDeque;
use std::sync::Mutex;

use ferroflake::{Clock, Error, Generator, Layout, Options};

const NOW: u64 = 1_700_000_000_000;

/// Returns scripted readings in order, then repeats the last one.
struct ScriptedClock(Mutex<VecDeque<u64>>);

impl ScriptedClock {
    fn new(readings: &[u64]) -> Self {
        ScriptedClock(Mutex::new(readings.iter().copied().collect()))
    }
}

impl Clock for ScriptedClock {
    fn now_ms(&self) -> u64 {
        let mut readings = self.0.lock().unwrap();
        if readings.len() > 1 {
            readings.pop_front().unwrap()
        } else {
            readings[0]
        }
    }
    fn wait_until_ms(&self, _target_ms: u64) {}
}

#[test]
fn a_stale_reading_is_checked_again_before_it_counts_as_a_rollback() {
    // Creation and the first id read NOW + 10; the next call's first reading is 10 ms
    // stale (twice the default 5 ms backward wait); the clock itself never went back.
    let clock = ScriptedClock::new(&[NOW + 10, NOW + 10, NOW, NOW + 10]);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, Options::default()).unwrap();
    let first = g.next_id().unwrap();
    let second = g.next_id().unwrap();
    assert!(second > first);
    assert_eq!(g.counters().rollbacks, 0);
}

#[test]
fn a_clock_that_still_reads_behind_after_the_second_look_is_a_rollback() {
    let clock = ScriptedClock::new(&[NOW + 10, NOW + 10, NOW]);
    let g = Generator::with_clock(Layout::twitter(), 1, &clock, Options::default()).unwrap();
    g.next_id().unwrap();
    assert_eq!(
        g.next_id(),
        Err(Error::ClockMovedBackwards { behind_ms: 10 })
    );
}
