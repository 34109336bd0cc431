//! `Counters`: how often a generator took its slow paths.

use pyo3::prelude::*;

/// Slow-path event counts of a `Generator`: `waits` (the sequence ran out and the call
/// waited for the next tick), `borrowed_ticks` (ticks issued ahead of the clock, within
/// `max_drift_ticks`) and `rollbacks` (calls that found the clock behind the last ID).
#[pyclass(frozen, eq, module = "ferroflake")]
#[derive(PartialEq, Eq)]
pub struct Counters {
    #[pyo3(get)]
    waits: u64,
    #[pyo3(get)]
    borrowed_ticks: u64,
    #[pyo3(get)]
    rollbacks: u64,
}

impl From<ferroflake::Counters> for Counters {
    fn from(c: ferroflake::Counters) -> Self {
        Counters {
            waits: c.waits,
            borrowed_ticks: c.borrowed_ticks,
            rollbacks: c.rollbacks,
        }
    }
}

#[pymethods]
impl Counters {
    fn __repr__(&self) -> String {
        format!(
            "Counters(waits={}, borrowed_ticks={}, rollbacks={})",
            self.waits, self.borrowed_ticks, self.rollbacks
        )
    }
}
