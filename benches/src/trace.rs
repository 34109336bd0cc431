//! Per-call traces of long runs: the IDs issued and a timestamp after every call, for the
//! sustained rate, the worst window of consecutive calls, and duplicate counts.

use std::sync::Barrier;
use std::time::{Duration, Instant};

/// A cheap monotonic stamp: the TSC on x86-64 (the kernel's own clocksource here), else
/// nanoseconds from `Instant`. Converted to ns with the run's own wall time.
#[inline]
fn stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// One thread calling a generator back to back for a fixed time.
pub struct Trace<T> {
    /// The IDs, in call order.
    pub ids: Vec<T>,
    /// `stamps[0]` before the first call, `stamps[k]` after call k.
    stamps: Vec<u64>,
    ns_per_stamp: f64,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl<T: Copy + Default> Trace<T> {
    /// Calls `next` for `run_for`, or `max_calls` times if that comes first. Both buffers
    /// are allocated and written before the clock starts, so no page fault or reallocation
    /// lands inside the measured run.
    pub fn record(run_for: Duration, max_calls: usize, mut next: impl FnMut() -> T) -> Self {
        let mut ids = vec![T::default(); max_calls];
        // A zeroed allocation maps its pages lazily: touch one slot per page now, through
        // black_box so the write is not optimised away, or page faults land in the run.
        let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
        for page in ids.chunks_mut(per_page) {
            page[0] = std::hint::black_box(T::default());
        }
        let mut stamps = vec![1u64; max_calls + 1];
        // The time is checked once per this many calls.
        const CHECK_EVERY: usize = 1024;
        let mut calls = 0;
        let start = Instant::now();
        let first = stamp();
        stamps[0] = first;
        while calls + CHECK_EVERY <= max_calls && start.elapsed() < run_for {
            for k in calls..calls + CHECK_EVERY {
                ids[k] = next();
                stamps[k + 1] = stamp();
            }
            calls += CHECK_EVERY;
        }
        let elapsed = start.elapsed();
        let last = stamps[calls];
        ids.truncate(calls);
        stamps.truncate(calls + 1);
        Trace {
            ids,
            stamps,
            ns_per_stamp: elapsed.as_nanos() as f64 / last.saturating_sub(first).max(1) as f64,
            elapsed,
        }
    }
}

impl<T> Trace<T> {
    /// Calls made.
    pub fn calls(&self) -> usize {
        self.ids.len()
    }

    /// Calls per second over the whole run.
    pub fn per_second(&self) -> f64 {
        self.calls() as f64 / self.elapsed.as_secs_f64()
    }

    /// Durations (ns) of every window of `calls` consecutive calls, sliding by one call.
    fn windows_ns(&self, calls: usize) -> impl Iterator<Item = f64> + '_ {
        self.stamps
            .iter()
            .zip(self.stamps.iter().skip(calls))
            .map(move |(a, b)| b.saturating_sub(*a) as f64 * self.ns_per_stamp)
    }

    /// The duration of each call (ns), in call order: the per-call latencies.
    pub fn call_ns(&self) -> Vec<f64> {
        self.windows_ns(1).collect()
    }

    /// The longest time any `calls` consecutive calls took, in ns.
    pub fn worst_window_ns(&self, calls: usize) -> f64 {
        self.windows_ns(calls).fold(0.0, f64::max)
    }

    /// How many separate stretches of the run had windows of `calls` consecutive calls
    /// longer than `limit_ns` (one stall makes many overlapping windows; it counts once).
    pub fn stalls_over(&self, calls: usize, limit_ns: f64) -> usize {
        let mut stalls = 0;
        let mut in_stall = false;
        for ns in self.windows_ns(calls) {
            let over = ns > limit_ns;
            if over && !in_stall {
                stalls += 1;
            }
            in_stall = over;
        }
        stalls
    }
}

/// Two threads released together, each calling `next` `per_thread` times into its own
/// preallocated buffer; returns both buffers in call order and the time from the first
/// thread's start to the last one's finish.
pub fn collect_on_two_threads<T: Copy + Default + Send>(
    per_thread: usize,
    next: impl Fn() -> T + Sync,
) -> ([Vec<T>; 2], Duration) {
    let release = Barrier::new(2);
    let run = || {
        // Write every slot before the start, so page faults are not timed: only the first
        // large buffer in a process faults (glibc then serves such sizes from its heap),
        // which once cost whichever generator ran first about 1% of the cap.
        let mut ids = vec![T::default(); per_thread];
        ids.iter_mut()
            .for_each(|slot| *slot = std::hint::black_box(T::default()));
        release.wait();
        let start = Instant::now();
        for slot in ids.iter_mut() {
            *slot = next();
        }
        (ids, start, Instant::now())
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(run);
        let (mine, my_start, my_end) = run();
        let (theirs, their_start, their_end) = other.join().expect("collecting thread panicked");
        // From the first thread's start to the last thread's finish.
        let elapsed = my_end.max(their_end) - my_start.min(their_start);
        ([mine, theirs], elapsed)
    })
}

/// How many IDs equal an earlier one (0 for a unique set).
pub fn count_duplicates<T: Ord + Copy>(ids: impl IntoIterator<Item = T>) -> usize {
    let mut all: Vec<T> = ids.into_iter().collect();
    all.sort_unstable();
    all.windows(2).filter(|w| w[0] == w[1]).count()
}

/// How many IDs are not greater than the one before them in call order.
pub fn count_order_breaks<T: Ord>(ids: &[T]) -> usize {
    ids.windows(2).filter(|w| w[1] <= w[0]).count()
}
