//! Where the generator gets the time: the [`Clock`] trait and its implementations.

use crate::sync::{AtomicU64, Ordering};

/// A wall clock in milliseconds since the Unix epoch.
///
/// The generator calls [`now_ms`](Clock::now_ms) once per attempt, and
/// [`wait_until_ms`](Clock::wait_until_ms) only on its slow paths (sequence used up, clock
/// behind). The generator bounds the total wait itself, by the gaps it asks for.
pub trait Clock {
    /// Current time in ms since 1970-01-01T00:00:00Z. May jump in either direction.
    fn now_ms(&self) -> u64;

    /// Blocks until `now_ms() >= target_ms`, or until about `target_ms - now_ms()` ms of
    /// real time have passed if the clock does not get there (it may have been set back).
    fn wait_until_ms(&self, target_ms: u64);

    /// Whether this clock follows real time (true by default), so that comparing it with
    /// another wall clock means something: a leased generator checks it against its
    /// registry's clock. A [`ManualClock`] reads what it is told, and answers false.
    fn tracks_real_time(&self) -> bool {
        true
    }
}

/// Clocks behind references and smart pointers are clocks too.
macro_rules! forward_clock {
    ($($(#[$cfg:meta])* $ptr:ty),*) => {$(
        $(#[$cfg])*
        impl<C: Clock + ?Sized> Clock for $ptr {
            #[inline]
            fn now_ms(&self) -> u64 {
                (**self).now_ms()
            }
            fn wait_until_ms(&self, target_ms: u64) {
                (**self).wait_until_ms(target_ms);
            }
            fn tracks_real_time(&self) -> bool {
                (**self).tracks_real_time()
            }
        }
    )*};
}

forward_clock!(
    &C,
    #[cfg(feature = "std")]
    std::sync::Arc<C>,
    #[cfg(feature = "std")]
    std::boxed::Box<C>
);

/// The operating system's wall clock (`CLOCK_REALTIME` on Linux, through the vDSO).
#[cfg(feature = "std")]
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(feature = "std")]
impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        system_now_ms()
    }

    fn wait_until_ms(&self, target_ms: u64) {
        wait_real_time(self, target_ms);
    }
}

/// Wall-clock ms; a clock set before 1970 reads as 0, which every layout treats as
/// "behind". On Unix this calls `clock_gettime` directly: `SystemTime::duration_since`
/// cost about 13% of a `next_id` call.
#[cfg(all(feature = "std", unix, not(ferroflake_portable)))]
#[inline]
pub(crate) fn system_now_ms() -> u64 {
    read_clock(libc::CLOCK_REALTIME).map_or(0, |(secs, nanos)| secs * 1000 + nanos / 1_000_000)
}

// Elsewhere, and in the `ferroflake_portable` build that checks what other platforms compile.
#[cfg(all(feature = "std", any(not(unix), ferroflake_portable)))]
#[inline]
pub(crate) fn system_now_ms() -> u64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() * 1000 + u64::from(d.subsec_millis()),
        Err(_) => 0,
    }
}

/// `(seconds, nanoseconds)` of a POSIX clock, or `None` if it fails or reads before 1970.
#[cfg(all(feature = "std", unix, not(ferroflake_portable)))]
#[inline]
pub(crate) fn read_clock(id: libc::clockid_t) -> Option<(u64, u64)> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes to it.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    (rc == 0 && ts.tv_sec >= 0).then_some((ts.tv_sec as u64, ts.tv_nsec as u64))
}

/// Sleeps most of the gap, then yields until the clock arrives; gives up after the gap
/// (plus 1 ms) of monotonic time, so a clock that was set back cannot hold us forever.
#[cfg(feature = "std")]
pub(crate) fn wait_real_time(clock: &impl Clock, target_ms: u64) {
    let start = clock.now_ms();
    if start >= target_ms {
        return;
    }
    let gap = core::time::Duration::from_millis(target_ms - start);
    // A target so far away that the deadline does not fit an Instant never gives up early
    // (the generator itself asks for at most `Options::MAX_WAIT_MS`).
    let give_up = std::time::Instant::now().checked_add(gap + core::time::Duration::from_millis(1));
    if gap > core::time::Duration::from_millis(2) {
        std::thread::sleep(gap - core::time::Duration::from_millis(1));
    }
    // Spin, don't yield, for the last stretch (at most ~2 ms): a yield can give the CPU
    // away for a whole scheduler slice, and at the sequence cap that costs throughput
    // (96.2% vs 91.7% of the cap on a busy 2-core machine, benches/ A/B).
    while clock.now_ms() < target_ms && give_up.map_or(true, |t| std::time::Instant::now() < t) {
        core::hint::spin_loop();
    }
}

/// A clock that moves only when told to: for tests, simulations and replay.
///
/// Waiting on a manual clock advances it: [`wait_until_ms`](Clock::wait_until_ms) moves
/// the time forward to the target at once (as if the wait had passed), so tests of the
/// generator's waits run instantly and deterministically.
///
/// ```
/// use ferroflake::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance_ms(5);
/// assert_eq!(clock.now_ms(), 1_005);
/// clock.set_ms(10); // time can also go back
/// assert_eq!(clock.now_ms(), 10);
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now_ms: AtomicU64,
}

impl ManualClock {
    /// A clock that reads `now_ms` until moved.
    pub fn new(now_ms: u64) -> Self {
        ManualClock {
            now_ms: AtomicU64::new(now_ms),
        }
    }
    /// Sets the time, forwards or backwards.
    pub fn set_ms(&self, now_ms: u64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }
    /// Moves the time forward by `ms` (saturating at `u64::MAX`, never wrapping back).
    pub fn advance_ms(&self, ms: u64) {
        let _ = self
            .now_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(ms))
            });
    }
    /// Moves the time back by `ms` (saturating at 0), atomically: a concurrent
    /// [`advance_ms`](Self::advance_ms) is never lost.
    pub fn rewind_ms(&self, ms: u64) {
        let _ = self
            .now_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_sub(ms))
            });
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        self.now_ms.load(Ordering::SeqCst)
    }
    fn wait_until_ms(&self, target_ms: u64) {
        self.now_ms.fetch_max(target_ms, Ordering::SeqCst);
    }
    fn tracks_real_time(&self) -> bool {
        false
    }
}
