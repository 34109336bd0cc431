//! `Generator`: the core's lock-free generator, shared freely between Python threads.

use ferroflake::{ClaimedGenerator, Layout, Options};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::batch;
use crate::clock::{ClockChoice, GeneratorClock};
use crate::counters::Counters;
use crate::errors::to_pyerr;
use crate::ints::{optional_uint, uint};
use crate::layout::PyLayout;
use crate::parts::Parts;

/// At most this many IDs between two checks for Ctrl-C in a batch.
pub(crate) const SIGNAL_CHECK_MAX: u64 = 4096;

/// Issues unique, increasing IDs for one node id under one layout. Share it between threads
/// freely: while it lives, no other generator of its node id is made in this process
/// (`NodeInUseError`). Make a new one in each forked child, with a node id of its own.
//
// Invariant relied on by `GeneratorClock`: every method calls the core generator while
// attached to the interpreter (none detaches around it); the clock detaches only for waits.
#[pyclass(frozen, name = "Generator", module = "ferroflake")]
pub struct PyGenerator {
    /// Held behind the claim's `Arc`: the core generator keeps its state on cache lines of
    /// its own (128-byte alignment), and Python allocates objects with 16-byte alignment, so
    /// held inline it would sit misaligned (undefined behaviour, caught by debug builds'
    /// checks).
    inner: ClaimedGenerator<GeneratorClock>,
}

// Every class's object is allocated by Python, 16-byte aligned: a field needing more must be
// behind a pointer, as `inner` above is.
const _: () = assert!(std::mem::align_of::<PyGenerator>() <= 16);

impl PyGenerator {
    /// IDs per chunk of a batch: one tick's worth at most, so a long batch on a slow layout
    /// (js53: 4096 IDs per second) still answers Ctrl-C within about a tick.
    fn chunk_len(&self) -> usize {
        let per_tick = self.inner.layout().max_sequence().saturating_add(1);
        per_tick.min(SIGNAL_CHECK_MAX) as usize
    }
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(
        signature = (node_id, layout=None, *, max_drift_ticks=None, max_backward_wait_ms=None, clock=ClockChoice::System, resume_after_ms=None),
        text_signature = "(node_id, layout=None, *, max_drift_ticks=None, max_backward_wait_ms=None, clock='system', resume_after_ms=None)"
    )]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] node_id: u64,
        layout: Option<&Bound<'_, PyLayout>>,
        #[pyo3(from_py_with = optional_uint)] max_drift_ticks: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] max_backward_wait_ms: Option<u64>,
        clock: ClockChoice,
        #[pyo3(from_py_with = optional_uint)] resume_after_ms: Option<u64>,
    ) -> PyResult<Self> {
        let layout = layout.map_or_else(Layout::twitter, |l| l.get().inner);
        let clock = clock.for_tick_ms(layout.tick_ms());
        let options = Options::given(max_drift_ticks, max_backward_wait_ms, resume_after_ms);
        let inner =
            ClaimedGenerator::new(layout, node_id, clock, options).map_err(|e| to_pyerr(py, e))?;
        Ok(PyGenerator { inner })
    }

    /// The next ID. Holds the GIL: the call costs less than detaching would.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.inner.next_id().map_err(|e| to_pyerr(py, e))
    }

    /// `n` consecutive IDs as a `list[int]`, reserved a run of sequence numbers at a time.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        batch::list(py, n, self.chunk_len(), |chunk| {
            self.inner.next_ids(chunk).map_err(|e| to_pyerr(py, e))
        })
    }

    /// `n` consecutive IDs as an `array.array('q')`: no Python int per ID, a few ns each.
    fn next_ids_array<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        batch::array(py, n, self.chunk_len(), |chunk| {
            self.inner.next_ids(chunk).map_err(|e| to_pyerr(py, e))
        })
    }

    /// The next ID, carrying `shard` in its lowest bits (layouts with shard bits).
    fn next_id_for_shard(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] shard: u64,
    ) -> PyResult<u64> {
        self.inner
            .next_id_for_shard(shard)
            .map_err(|e| to_pyerr(py, e))
    }

    /// The fields of an ID made under this generator's layout.
    fn decode(&self, py: Python<'_>, #[pyo3(from_py_with = uint)] id: u64) -> PyResult<Parts> {
        self.inner
            .layout()
            .decode(id)
            .map(Parts::from)
            .map_err(|e| to_pyerr(py, e))
    }

    /// Forbids issuing IDs whose tick starts at or after `fence_ms` (Unix ms); calls then
    /// raise `LeaseExpiredError`. A lease holder moves it forward on each renewal.
    fn set_fence_ms(&self, #[pyo3(from_py_with = uint)] fence_ms: u64) {
        self.inner.set_fence_ms(fence_ms);
    }

    /// Removes the fence.
    fn clear_fence(&self) {
        self.inner.clear_fence();
    }

    /// The fence as Unix ms, or `None`.
    #[getter]
    fn fence_ms(&self) -> Option<u64> {
        self.inner.fence_ms()
    }

    /// Start (Unix ms) of the tick of the last issued ID, or of the resume point: the
    /// high-water mark to hand to the next holder of this node id as `resume_after_ms`.
    #[getter]
    fn last_issued_ms(&self) -> u64 {
        self.inner.last_issued_ms()
    }

    /// Slow-path counts so far.
    #[getter]
    fn counters(&self) -> Counters {
        self.inner.counters().into()
    }

    #[getter]
    fn node_id(&self) -> u64 {
        self.inner.node()
    }

    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout {
            inner: *self.inner.layout(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferroflake.Generator node_id={} layout={}>",
            self.inner.node(),
            self.layout().__repr__()
        )
    }
}
