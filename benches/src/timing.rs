//! Timing loops for criterion's `iter_custom`.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One system clock read, as a snowflake generator needs it: `SystemTime::now()` in Unix ms.
/// This is the yardstick the generator's cost is compared with.
#[inline]
pub fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Spins until `read_tick()` changes, so that what follows starts at a tick edge with the
/// whole tick's sequence free.
pub fn wait_for_tick_change(mut read_tick: impl FnMut() -> u64) {
    let start = read_tick();
    while read_tick() == start {
        std::hint::spin_loop();
    }
}

/// Runs `op` `iters` times in bursts of at most `burst` calls, each burst starting right
/// after `at_edge()` returns, and returns the time spent inside the bursts only.
///
/// With `burst` below a tick's sequence size and `at_edge` waiting for a fresh tick, no call
/// in a burst waits for the sequence cap: the total is the uncapped cost of the code.
pub fn timed_bursts<T>(
    iters: u64,
    burst: u64,
    mut at_edge: impl FnMut(),
    mut op: impl FnMut() -> T,
) -> Duration {
    let mut inside = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(burst);
        at_edge();
        let start = Instant::now();
        for _ in 0..n {
            black_box(op());
        }
        inside += start.elapsed();
        left -= n;
    }
    inside
}

/// Runs `op` `iters` times in total, split over two threads released together, and returns
/// the wall time from their release until both finish.
pub fn on_two_threads<T>(iters: u64, op: impl Fn() -> T + Sync) -> Duration {
    let release = Barrier::new(3);
    let shares = [iters / 2, iters - iters / 2];
    let mut start = Instant::now();
    std::thread::scope(|scope| {
        for share in shares {
            let (release, op) = (&release, &op);
            scope.spawn(move || {
                release.wait();
                for _ in 0..share {
                    black_box(op());
                }
            });
        }
        release.wait();
        start = Instant::now();
    });
    start.elapsed()
}
