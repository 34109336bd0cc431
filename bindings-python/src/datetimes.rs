//! Aware `datetime` <-> Unix milliseconds, by Python's own exact datetime arithmetic
//! (no float timestamps, so no rounding at millisecond boundaries).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::ints::int;

static DATETIME: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNIX_EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ONE_MS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn unix_epoch(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    UNIX_EPOCH
        .get_or_try_init(py, || {
            let datetime = py.import("datetime")?;
            let utc = datetime.getattr("timezone")?.getattr("utc")?;
            let epoch = datetime
                .getattr("datetime")?
                .call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
            Ok::<_, PyErr>(epoch.unbind())
        })
        .map(|epoch| epoch.bind(py))
}

fn one_ms(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    ONE_MS
        .get_or_try_init(py, || {
            let timedelta = py.import("datetime")?.getattr("timedelta")?;
            Ok::<_, PyErr>(timedelta.call1((0, 0, 0, 1))?.unbind())
        })
        .map(|ms| ms.bind(py))
}

/// The UTC `datetime` of a Unix ms. Python raises `OverflowError` past year 9999.
pub fn datetime_from_unix_ms(py: Python<'_>, unix_ms: u64) -> PyResult<Bound<'_, PyAny>> {
    unix_epoch(py)?.add(one_ms(py)?.mul(unix_ms)?)
}

/// Unix ms of an aware `datetime` (rounded down to the millisecond).
///
/// # Errors
/// `ValueError` for a naive datetime: which zone it meant cannot be guessed.
pub fn unix_ms_from_datetime(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    let py = value.py();
    if value.call_method0("utcoffset")?.is_none() {
        return Err(PyValueError::new_err(
            "naive datetime: give it a tzinfo (e.g. datetime.timezone.utc) so its instant is known",
        ));
    }
    value
        .sub(unix_epoch(py)?)?
        .floor_div(one_ms(py)?)?
        .extract()
}

/// An argument that is Unix ms as an `int`, or an aware `datetime`.
pub fn unix_ms_from_int_or_datetime(value: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    let datetime = DATETIME.import(value.py(), "datetime", "datetime")?;
    if value.is_instance(datetime)? {
        return unix_ms_from_datetime(value);
    }
    match int(value) {
        Ok(ms) => Ok(ms),
        Err(err) if err.is_instance_of::<PyTypeError>(value.py()) => {
            Err(PyTypeError::new_err(format!(
                "{what} must be an int (Unix ms) or an aware datetime, not {}",
                type_name(value)
            )))
        }
        Err(err) => Err(err),
    }
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}
