//! The two batch forms every issuer offers: `next_ids(n)`, a `list[int]`, and
//! `next_ids_array(n)`, an `array.array('q')` filled in place (8 bytes per ID, no Python
//! int per ID). Both fill a chunk at a time and look for Ctrl-C between chunks.

use pyo3::exceptions::{PyMemoryError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList};

/// `array.array`, looked up once.
static ARRAY_TYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn length(n: u64) -> PyResult<usize> {
    usize::try_from(n)
        .map_err(|_| PyOverflowError::new_err("n does not fit this platform's memory"))
}

/// Fills `ids` a chunk of at most `chunk_len` at a time, checking for signals in between.
fn fill_chunks(
    py: Python<'_>,
    ids: &mut [u64],
    chunk_len: usize,
    fill: &mut impl FnMut(&mut [u64]) -> PyResult<()>,
) -> PyResult<()> {
    for (i, chunk) in ids.chunks_mut(chunk_len.max(1)).enumerate() {
        if i > 0 {
            py.check_signals()?;
        }
        fill(chunk)?;
    }
    Ok(())
}

/// `n` IDs from `fill` as a `list[int]`.
pub fn list<'py>(
    py: Python<'py>,
    n: u64,
    chunk_len: usize,
    mut fill: impl FnMut(&mut [u64]) -> PyResult<()>,
) -> PyResult<Bound<'py, PyList>> {
    let n = length(n)?;
    let mut ids: Vec<u64> = Vec::new();
    ids.try_reserve_exact(n)
        .map_err(|_| PyMemoryError::new_err(format!("cannot hold {n} IDs")))?;
    ids.resize(n, 0);
    fill_chunks(py, &mut ids, chunk_len, &mut fill)?;
    PyList::new(py, ids)
}

/// `n` IDs from `fill` as an `array.array('q')` (signed 64-bit, native byte order: every
/// ID is below 2^63). The IDs are written straight into a bytes buffer, which the array
/// then copies once.
pub fn array<'py>(
    py: Python<'py>,
    n: u64,
    chunk_len: usize,
    mut fill: impl FnMut(&mut [u64]) -> PyResult<()>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = length(n)?;
    let size = n
        .checked_mul(8)
        .ok_or_else(|| PyOverflowError::new_err("n does not fit this platform's memory"))?;
    let bytes = PyBytes::new_with(py, size, |buffer| {
        // SAFETY: every bit pattern is a valid u64; align_to_mut hands out the aligned
        // middle of the buffer as u64s and leaves the rest as bytes.
        let (head, ids, tail) = unsafe { buffer.align_to_mut::<u64>() };
        if head.is_empty() && tail.is_empty() {
            return fill_chunks(py, ids, chunk_len, &mut fill);
        }
        // A buffer not aligned for u64 (no CPython allocates one): fill aside, then copy.
        let mut aside = vec![0u64; n];
        fill_chunks(py, &mut aside, chunk_len, &mut fill)?;
        for (bytes, id) in buffer.chunks_exact_mut(8).zip(&aside) {
            bytes.copy_from_slice(&id.to_ne_bytes());
        }
        Ok(())
    })?;
    let array_type = ARRAY_TYPE.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("array")?.getattr("array")?.unbind())
    })?;
    let array = array_type.bind(py).call1(("q",))?;
    array.call_method1("frombytes", (bytes,))?;
    Ok(array)
}
