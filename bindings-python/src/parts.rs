//! `Parts`: the fields of a decoded ID.

use pyo3::prelude::*;

use crate::datetimes::datetime_from_unix_ms;
use crate::ints::uint;

/// The fields of an ID: `timestamp_ms` (start of its tick, Unix ms), `node`, `sequence` and
/// `shard`, plus `datetime`, the timestamp as an aware UTC `datetime`.
#[pyclass(frozen, eq, hash, module = "ferroflake")]
#[derive(PartialEq, Eq, Hash)]
pub struct Parts {
    #[pyo3(get)]
    timestamp_ms: u64,
    #[pyo3(get)]
    node: u64,
    #[pyo3(get)]
    sequence: u64,
    #[pyo3(get)]
    shard: u64,
}

impl From<ferroflake::Parts> for Parts {
    fn from(p: ferroflake::Parts) -> Self {
        Parts {
            timestamp_ms: p.timestamp_ms,
            node: p.node,
            sequence: p.sequence,
            shard: p.shard,
        }
    }
}

#[pymethods]
impl Parts {
    #[new]
    #[pyo3(signature = (timestamp_ms, node=0, sequence=0, shard=0))]
    fn new(
        #[pyo3(from_py_with = uint)] timestamp_ms: u64,
        #[pyo3(from_py_with = uint)] node: u64,
        #[pyo3(from_py_with = uint)] sequence: u64,
        #[pyo3(from_py_with = uint)] shard: u64,
    ) -> Self {
        Parts {
            timestamp_ms,
            node,
            sequence,
            shard,
        }
    }

    /// The timestamp as an aware UTC `datetime` (`OverflowError` past year 9999, which
    /// only layouts with long ticks reach).
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        datetime_from_unix_ms(py, self.timestamp_ms)
    }

    fn __getnewargs__(&self) -> (u64, u64, u64, u64) {
        (self.timestamp_ms, self.node, self.sequence, self.shard)
    }

    fn __repr__(&self) -> String {
        format!(
            "Parts(timestamp_ms={}, node={}, sequence={}, shard={})",
            self.timestamp_ms, self.node, self.sequence, self.shard
        )
    }
}
