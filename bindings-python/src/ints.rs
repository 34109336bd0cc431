//! Integer arguments as Python users expect them: `True` is not an id.
//!
//! `bool` subclasses `int`, so without this `Generator(True)` would silently mean node 1; a
//! `TypeError` is what a caller who passed a flag by mistake needs. Negative or too-large
//! ints raise `OverflowError` (PyO3's unsigned conversion); range checks against a layout
//! are the core's. Used as `#[pyo3(from_py_with = uint)]`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBool;

fn refuse_bool(obj: &Bound<'_, PyAny>) -> PyResult<()> {
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("expected an int, got bool"));
    }
    Ok(())
}

/// A Python `int` (or `__index__` object) in `0..2**64`, refusing `bool`.
#[inline]
pub fn uint(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    refuse_bool(obj)?;
    obj.extract()
}

/// A Python `int` in the `i64` range, refusing `bool`.
pub fn int(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    refuse_bool(obj)?;
    obj.extract()
}

/// An optional [`int`]: `None` stays `None`.
pub fn optional_int(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if obj.is_none() {
        return Ok(None);
    }
    int(obj).map(Some)
}

/// An optional [`uint`]: `None` stays `None`.
pub fn optional_uint(obj: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if obj.is_none() {
        return Ok(None);
    }
    uint(obj).map(Some)
}
