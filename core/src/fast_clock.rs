//! A cheaper wall clock for hot loops, never more than one tick behind real time.
//!
//! The system clock costs a vDSO `clock_gettime(CLOCK_REALTIME)` per read (~24 ns on the
//! reference machine). [`FastClock`] picks the cheapest source that still keeps IDs within
//! one tick of real time:
//!
//! 1. `CLOCK_REALTIME_COARSE` (~5 ns) when the layout's tick is at least 4× its resolution
//!    (the kernel tick, often 4 ms; readings lag by that plus any late timer interrupt):
//!    js53's 1 s, or sonyflake's 10 ms on a 1000 Hz kernel.
//! 2. Otherwise, on x86-64 Linux whose kernel itself trusts the TSC (clocksource `tsc`), the
//!    TSC scaled to ns and re-anchored to `CLOCK_REALTIME` every millisecond, so drift and
//!    NTP steps are corrected within 1 ms.
//! 3. Otherwise the system clock: always so on other platforms, where neither Linux source
//!    exists, and in the `ferroflake_portable` build (build.rs) that checks what they compile.

use crate::clock::{system_now_ms, wait_real_time};
use crate::Clock;

/// Which source a [`FastClock`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FastClockSource {
    /// `CLOCK_REALTIME_COARSE`.
    Coarse,
    /// The TSC, re-anchored to `CLOCK_REALTIME` every millisecond.
    Tsc,
    /// The system clock (no faster source qualified).
    System,
}

/// A wall clock that trades a little precision for speed; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct FastClock {
    source: FastClockSource,
}

impl FastClock {
    /// The fastest source whose readings stay within `tick_ms` of real time. The first call
    /// that selects the TSC calibrates it against `CLOCK_MONOTONIC_RAW` for 10 ms.
    pub fn for_tick_ms(tick_ms: u64) -> FastClock {
        FastClock {
            source: linux::pick(tick_ms),
        }
    }

    /// The source this clock reads.
    pub fn source(&self) -> FastClockSource {
        self.source
    }
}

impl Clock for FastClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        match self.source {
            FastClockSource::Coarse => linux::coarse_now_ms(),
            FastClockSource::Tsc => linux::tsc_now_ms(),
            FastClockSource::System => system_now_ms(),
        }
    }

    fn wait_until_ms(&self, target_ms: u64) {
        wait_real_time(self, target_ms);
    }
}

/// Where Linux's clocks are absent, neither fast source qualifies.
#[cfg(not(all(target_os = "linux", not(ferroflake_portable))))]
mod linux {
    use super::FastClockSource;
    use crate::clock::system_now_ms;

    pub(super) fn pick(_tick_ms: u64) -> FastClockSource {
        FastClockSource::System
    }
    pub(super) fn coarse_now_ms() -> u64 {
        system_now_ms()
    }
    pub(super) fn tsc_now_ms() -> u64 {
        system_now_ms()
    }
}

#[cfg(all(target_os = "linux", not(ferroflake_portable)))]
mod linux {
    use std::sync::OnceLock;

    use super::FastClockSource;
    use crate::clock::{read_clock, system_now_ms};
    use crate::sync::{AtomicU64, Ordering};

    pub(super) fn pick(tick_ms: u64) -> FastClockSource {
        // The coarse clock lags by up to its resolution plus a late timer interrupt (5 ms
        // seen at a 4 ms resolution on a loaded VM), so it needs a tick well above that.
        let coarse_fits = coarse_resolution_ns().is_some_and(|res| res * 4 <= tick_ms * 1_000_000);
        if coarse_fits {
            FastClockSource::Coarse
        } else if tsc().is_some() {
            FastClockSource::Tsc
        } else {
            FastClockSource::System
        }
    }

    #[inline]
    pub(super) fn coarse_now_ms() -> u64 {
        clock_ns(libc::CLOCK_REALTIME_COARSE) / 1_000_000
    }

    #[inline]
    pub(super) fn tsc_now_ms() -> u64 {
        match tsc() {
            Some(t) => t.now_ns() / 1_000_000,
            None => system_now_ms(),
        }
    }

    fn clock_ns(id: libc::clockid_t) -> u64 {
        read_clock(id).map_or(0, |(secs, nanos)| secs * 1_000_000_000 + nanos)
    }

    fn coarse_resolution_ns() -> Option<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; clock_getres only writes to it.
        let rc = unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        (rc == 0 && ts.tv_sec >= 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    /// The calibrated TSC, shared by every `FastClock` in the process.
    struct Tsc {
        /// ns per cycle, as a 32.32 fixed-point number.
        ns_per_cycle_q32: u64,
        cycles_per_ms: u64,
        /// `CLOCK_REALTIME` ns minus scaled cycles, at the last anchor (wrapping arithmetic).
        offset_ns: AtomicU64,
        /// The cycle count at which the next read re-anchors.
        reanchor_at: AtomicU64,
    }

    fn tsc() -> Option<&'static Tsc> {
        static TSC: OnceLock<Option<Tsc>> = OnceLock::new();
        TSC.get_or_init(Tsc::calibrate).as_ref()
    }

    impl Tsc {
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        fn calibrate() -> Option<Tsc> {
            let source = std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .ok()?;
            if source.trim() != "tsc" {
                return None;
            }
            let (c0, t0) = (read_tsc(), clock_ns(libc::CLOCK_MONOTONIC_RAW));
            let mut t1 = t0;
            while t1 < t0 + 10_000_000 {
                core::hint::spin_loop();
                t1 = clock_ns(libc::CLOCK_MONOTONIC_RAW);
            }
            let c1 = read_tsc();
            let cycles = c1.checked_sub(c0).filter(|&c| c > 0)?;
            let ns = t1 - t0;
            let tsc = Tsc {
                ns_per_cycle_q32: ((u128::from(ns) << 32) / u128::from(cycles)) as u64,
                cycles_per_ms: (u128::from(cycles) * 1_000_000 / u128::from(ns)) as u64,
                offset_ns: AtomicU64::new(0),
                reanchor_at: AtomicU64::new(0),
            };
            tsc.anchor();
            Some(tsc)
        }

        #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
        fn calibrate() -> Option<Tsc> {
            None
        }

        #[inline]
        fn scaled(&self, cycles: u64) -> u64 {
            ((u128::from(cycles) * u128::from(self.ns_per_cycle_q32)) >> 32) as u64
        }

        #[inline]
        fn now_ns(&self) -> u64 {
            let cycles = read_tsc();
            // Relaxed: offset and deadline are independent hints; a stale pair is at most one
            // anchor period (1 ms of drift, ~ns) off.
            if cycles >= self.reanchor_at.load(Ordering::Relaxed) {
                return self.anchor();
            }
            self.scaled(cycles)
                .wrapping_add(self.offset_ns.load(Ordering::Relaxed))
        }

        #[cold]
        fn anchor(&self) -> u64 {
            let wall = clock_ns(libc::CLOCK_REALTIME);
            let cycles = read_tsc();
            self.offset_ns
                .store(wall.wrapping_sub(self.scaled(cycles)), Ordering::Relaxed);
            self.reanchor_at
                .store(cycles + self.cycles_per_ms, Ordering::Relaxed);
            wall
        }
    }

    #[inline]
    fn read_tsc() -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: RDTSC has no preconditions on x86-64.
            unsafe { core::arch::x86_64::_rdtsc() }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            0
        }
    }
}
