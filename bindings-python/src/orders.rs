//! `OrderNumbers` and `OrderNumber`: `ferroflake_segment::OrderNumbers` for Python. Days,
//! keys, widths and time zones are the segment crate's; this file converts arguments and
//! results, and keeps the GIL off the store.

use std::sync::Arc;

use ferroflake_segment::{OrderNumber, OrderNumberConfig, OrderNumbers, WallClock};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::segment_to_pyerr;
use crate::shared_allocator::{refuse_if_forked, Allocator};

/// A `ManualClock` read as the wall clock of order numbers.
struct ManualWallClock(Arc<ferroflake::ManualClock>);

impl WallClock for ManualWallClock {
    fn now_ms(&self) -> i64 {
        use ferroflake::Clock;
        // Past i64::MAX ms the crate refuses the instant as out of range either way.
        i64::try_from(self.0.now_ms()).unwrap_or(i64::MAX)
    }
}

/// Date-prefixed order numbers from a `SegmentAllocator`'s table: made by
/// `SegmentAllocator.order_numbers()`. Share it between threads; numbers never repeat,
/// also across processes that share the table, and never wrap: a day whose counter has
/// used its width raises `SegmentExhaustedError` until the next day.
#[pyclass(frozen, name = "OrderNumbers", module = "ferroflake")]
pub struct PyOrderNumbers {
    orders: OrderNumbers,
    /// Keeps the allocator open while the order numbers are held, and answers fork checks.
    allocator: Arc<Allocator>,
}

impl PyOrderNumbers {
    pub(crate) fn new(
        py: Python<'_>,
        allocator: &Arc<Allocator>,
        prefix: String,
        zone: String,
        width: u64,
        step: u64,
        clock: Option<Arc<ferroflake::ManualClock>>,
    ) -> PyResult<Self> {
        let config = OrderNumberConfig {
            prefix,
            zone,
            // A width that does not fit u32 is refused by the crate as above its maximum.
            width: u32::try_from(width).unwrap_or(u32::MAX),
            step,
        };
        let shared = Arc::clone(&allocator.allocator);
        let made = match clock {
            Some(clock) => {
                OrderNumbers::with_clock(shared, config, Arc::new(ManualWallClock(clock)))
            }
            None => OrderNumbers::new(shared, config),
        };
        Ok(PyOrderNumbers {
            orders: made.map_err(|e| segment_to_pyerr(py, e))?,
            allocator: Arc::clone(allocator),
        })
    }
}

#[pymethods]
impl PyOrderNumbers {
    /// The next order number. The first number of a day creates that day's key in the
    /// table, and a number may wait for a range (up to the allocator's `max_wait_ms`):
    /// both without the GIL. Nothing is issued on an error.
    fn next(&self, py: Python<'_>) -> PyResult<PyOrderNumber> {
        refuse_if_forked(py, &self.allocator)?;
        let orders = &self.orders;
        py.detach(|| orders.next())
            .map(PyOrderNumber::from)
            .map_err(|e| segment_to_pyerr(py, e))
    }

    /// The largest counter of a day: `10**width - 1`.
    #[getter]
    fn max_counter(&self) -> u64 {
        self.orders.max_counter()
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferroflake.OrderNumbers max_counter={}>",
            self.max_counter()
        )
    }
}

/// One order number: `int(n)` (or `n.value`) is `yyyyMMdd * 10**width + counter`,
/// `str(n)` (or `n.text`) the same digits, the counter zero-padded to the width.
#[pyclass(frozen, eq, hash, name = "OrderNumber", module = "ferroflake")]
#[derive(PartialEq, Eq, Hash)]
pub struct PyOrderNumber {
    value: u64,
    text: String,
    /// The day as year, month, day: the `date` is made only when asked for.
    ymd: (i16, i8, i8),
    counter: u64,
    key: String,
}

impl From<OrderNumber> for PyOrderNumber {
    fn from(number: OrderNumber) -> Self {
        let day = number.day();
        PyOrderNumber {
            value: number.value(),
            text: number.to_string(),
            ymd: (day.year(), day.month(), day.day()),
            counter: number.counter(),
            key: number.key(),
        }
    }
}

#[pymethods]
impl PyOrderNumber {
    /// The number as an int, `yyyyMMdd * 10**width + counter` (at most 18 digits).
    #[getter]
    fn value(&self) -> u64 {
        self.value
    }

    /// The number as text: `yyyyMMdd` and the zero-padded counter, `"20261122000042"`.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// The day, a `datetime.date`, in the order numbers' time zone.
    #[getter]
    fn day<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // The `date` type through its module: the datetime C API is not in the stable ABI.
        let (year, month, day) = self.ymd;
        py.import("datetime")?
            .getattr("date")?
            .call1((year, month, day))
    }

    /// The counter within the day, from 1.
    #[getter]
    fn counter(&self) -> u64 {
        self.counter
    }

    /// The segment key the number came from, `{prefix}:{yyyyMMdd}`.
    #[getter]
    fn key(&self) -> &str {
        &self.key
    }

    fn __int__(&self) -> u64 {
        self.value
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // Python's quoting: a prefix may hold any character.
        let text = PyString::new(py, &self.text).repr()?;
        let key = PyString::new(py, &self.key).repr()?;
        Ok(format!("OrderNumber({text}, key={key})"))
    }
}
