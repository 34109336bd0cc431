//! Measuring helpers shared by the benchmarks in `benches/`: the layouts they use, timed
//! bursts that start at a tick edge, a two-thread runner, and per-call traces for the
//! worst-chunk and sustained-rate figures.
//!
//! Nothing here asserts a time: these are measurements, reported in BENCHMARKS.md.

mod layouts;
mod timing;
mod trace;

pub use layouts::{coarse_layout, uncapped_layout};
pub use timing::{on_two_threads, system_ms, timed_bursts, wait_for_tick_change};
pub use trace::{collect_on_two_threads, count_duplicates, count_order_breaks, Trace};
