//! `ferroflake._native`: the Python face of the `ferroflake` core, behind the pure-Python
//! package `ferroflake`. Every rule (bit math, validation, epochs, clocks) is the core's;
//! this crate converts arguments and maps errors (the fork guard is the core's). Leases
//! (`ferroflake-lease`) and segments (`ferroflake-segment`) are wrapped the same way, on
//! Unix, where those crates build.

mod batch;
mod clock;
#[cfg(unix)]
mod closing;
mod counters;
mod datetimes;
mod errors;
#[cfg(unix)]
mod generator;
mod ints;
mod layout;
#[cfg(unix)]
mod leased;
mod mask;
mod names;
#[cfg(unix)]
mod orders;
mod parts;
#[cfg(unix)]
mod segments;
#[cfg(unix)]
mod shared_allocator;
mod text;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The generator is one atomic word with a CAS loop and every class is frozen and `Sync`,
/// so the module runs without the GIL on free-threaded Python.
#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<generator::PyGenerator>()?;
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<parts::Parts>()?;
    m.add_class::<counters::Counters>()?;
    m.add_class::<clock::ManualClock>()?;
    m.add_class::<mask::PyMaskKeyring>()?;
    #[cfg(unix)]
    {
        m.add_class::<leased::PyLeasedGenerator>()?;
        m.add_class::<segments::PySegmentAllocator>()?;
        m.add_class::<segments::PySegmentKey>()?;
        m.add_class::<segments::SegmentStatus>()?;
        m.add_class::<orders::PyOrderNumbers>()?;
        m.add_class::<orders::PyOrderNumber>()?;
        m.add_function(wrap_pyfunction!(errors::lease_error_kinds, m)?)?;
        m.add_function(wrap_pyfunction!(errors::segment_error_kinds, m)?)?;
        closing::register_at_exit(m.py())?;
    }
    m.add_function(wrap_pyfunction!(text::encode, m)?)?;
    m.add_function(wrap_pyfunction!(text::parse, m)?)?;
    m.add_function(wrap_pyfunction!(errors::error_kinds, m)?)?;
    m.add(
        "PRESET_NAMES",
        PyTuple::new(m.py(), ferroflake::Layout::PRESET_NAMES)?,
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
