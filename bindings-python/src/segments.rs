//! `SegmentAllocator` and `SegmentKey`: `ferroflake_segment` for Python. Every rule (ranges,
//! prefetch, steps, give-back, limits) is the segment crate's; this file converts
//! arguments and keeps the GIL off store calls and waits. In a forked child the crate
//! refuses (`SegmentError::Forked`, raised as `ForkedGeneratorError`), gives nothing back
//! and leaves the parent's fetch worker alone.

use std::sync::Arc;
use std::time::Duration;

use ferroflake_segment::{
    KeyHandle, KeyStatus, Range, SegmentAllocator, SegmentConfig, SegmentError, LIMIT_JS, MAX_BATCH,
};
use ferroflake_segment_stores::StoreAddress;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::batch;
use crate::clock::ManualClock;
use crate::closing;
use crate::errors::segment_to_pyerr;
use crate::ints::{optional_int, optional_uint, uint};
use crate::leased::address_text;
use crate::orders::PyOrderNumbers;
use crate::shared_allocator::{refuse_if_forked, Allocator};

/// IDs per chunk of a batch (one store-side `next_ids` call each); Ctrl-C is looked at
/// between chunks.
const CHUNK: usize = 1 << 16;

/// Segment mode: dense IDs per key from a table of counters (Leaf's `leaf_alloc`), taken a
/// range at a time and handed out from memory. `store` is `None` (the embedded SQLite
/// file shared by the processes of one host), an absolute path or `sqlite:///file`,
/// `postgres://`, `mysql://` or `redis://`.
#[pyclass(frozen, weakref, name = "SegmentAllocator", module = "ferroflake")]
pub struct PySegmentAllocator {
    inner: Arc<Allocator>,
}

#[pymethods]
impl PySegmentAllocator {
    #[new]
    #[pyo3(
        signature = (store=None, *, max_wait_ms=None, prefetch_share=None, max_step=None),
        text_signature = "(store=None, *, max_wait_ms=None, prefetch_share=None, max_step=None)"
    )]
    fn new(
        py: Python<'_>,
        store: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = optional_uint)] max_wait_ms: Option<u64>,
        prefetch_share: Option<f64>,
        #[pyo3(from_py_with = optional_uint)] max_step: Option<u64>,
    ) -> PyResult<Self> {
        let address = match store.filter(|s| !s.is_none()) {
            Some(store) => Some(address_text(py, store, "store")?),
            None => None,
        };
        // A setting left out is the segment crate's default, as in every face.
        let mut config = SegmentConfig::default();
        if let Some(ms) = max_wait_ms {
            config.max_wait = Duration::from_millis(ms);
        }
        if let Some(share) = prefetch_share {
            config.prefetch_share = share;
        }
        if let Some(step) = max_step {
            config.max_step = step;
        }
        let label = StoreAddress::label(address.as_deref());
        let opened = py.detach(move || {
            let store = ferroflake_segment_stores::open(address.as_deref())?;
            let allocator = SegmentAllocator::new(Arc::clone(&store), config)?;
            Ok::<_, SegmentError>((store, allocator))
        });
        let (store, allocator) = opened.map_err(|e| segment_to_pyerr(py, e))?;
        let inner = Arc::new(Allocator {
            allocator: Arc::new(allocator),
            store,
            label,
        });
        closing::track(&inner);
        Ok(PySegmentAllocator { inner })
    }

    /// The handle of key `name`, loading its first range (blocks without the GIL). Keep
    /// it: calls on a handle need no lookup. `js=True` caps its IDs at 2**53 - 1.
    #[pyo3(signature = (name, *, js=false))]
    fn key(&self, py: Python<'_>, name: String, js: bool) -> PyResult<PySegmentKey> {
        let inner = Arc::clone(&self.inner);
        let handle = py
            .detach(move || {
                if js {
                    inner.allocator.key_with_limit(&name, LIMIT_JS)
                } else {
                    inner.allocator.key(&name)
                }
            })
            .map_err(|e| segment_to_pyerr(py, e))?;
        Ok(PySegmentKey {
            handle,
            allocator: Arc::clone(&self.inner),
        })
    }

    /// Adds key `name` to the table: its first ID is `start` (`None`: 1), and ranges are
    /// taken `step` at a time (`None`: 1,000; at least: the allocator grows the step under
    /// load). Keys are created once, explicitly; an existing key raises `KeyExistsError`
    /// unless `exist_ok`.
    #[pyo3(signature = (name, start=None, step=None, *, exist_ok=false))]
    fn create_key(
        &self,
        py: Python<'_>,
        name: String,
        #[pyo3(from_py_with = optional_int)] start: Option<i64>,
        #[pyo3(from_py_with = optional_uint)] step: Option<u64>,
        exist_ok: bool,
    ) -> PyResult<()> {
        let start = start.unwrap_or(ferroflake_segment::DEFAULT_START);
        let step = step.unwrap_or(ferroflake_segment::DEFAULT_STEP);
        // Refused in a forked child (the store's connections are the parent's) and after
        // close, by the segment crate.
        let allocator = Arc::clone(&self.inner.allocator);
        match py.detach(move || allocator.create(&name, start, step)) {
            Ok(()) => Ok(()),
            Err(SegmentError::KeyExists { .. }) if exist_ok => Ok(()),
            Err(e) => Err(segment_to_pyerr(py, e)),
        }
    }

    /// The status of every open key, sorted by key.
    fn status(&self, py: Python<'_>) -> PyResult<Vec<SegmentStatus>> {
        // In a forked child the keys' locks may have been held by the parent's threads.
        refuse_if_forked(py, &self.inner)?;
        Ok(self
            .inner
            .allocator
            .status()
            .into_iter()
            .map(SegmentStatus::from)
            .collect())
    }

    /// Date-prefixed order numbers (`20261122000042`: `yyyyMMdd` and a `width`-digit
    /// counter from 1 each day) from this allocator's table, one key per day,
    /// `{prefix}:{yyyyMMdd}`, created on the day's first number with `step`. The day is
    /// the date in the IANA time zone `zone`, read from the system clock or `clock` (a
    /// `ManualClock`, for tests). `SegmentConfigError` for an unknown zone, a width outside
    /// 1 to 10 or a step outside 1 to 2**31 - 1.
    #[pyo3(signature = (prefix="orders", *, zone="UTC", width=6, step=100, clock=None))]
    fn order_numbers(
        &self,
        py: Python<'_>,
        prefix: &str,
        zone: &str,
        #[pyo3(from_py_with = uint)] width: u64,
        #[pyo3(from_py_with = uint)] step: u64,
        clock: Option<&Bound<'_, ManualClock>>,
    ) -> PyResult<PyOrderNumbers> {
        let clock = clock.map(|clock| clock.get().inner.clone());
        PyOrderNumbers::new(
            py,
            &self.inner,
            prefix.into(),
            zone.into(),
            width,
            step,
            clock,
        )
    }

    /// Which store: `"the SQLite file /srv/ids.db"`, `"the embedded SQLite file ..."`, or
    /// the address as given with any password hidden.
    #[getter]
    fn store(&self) -> String {
        self.inner.label.clone()
    }

    /// Stops issuing from every key and gives each key's unissued IDs back to the table
    /// (unless someone allocated after us; then they are skipped, never issued).
    /// Idempotent; later calls on the keys raise `SegmentClosedError`. Blocks without the
    /// GIL. In a forked child it gives nothing back: the ranges are the parent's.
    fn close(&self, py: Python<'_>) {
        let inner = Arc::clone(&self.inner);
        py.detach(move || inner.close());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferroflake.SegmentAllocator store={:?}>",
            self.inner.store.name()
        )
    }
}

/// One key's IDs: dense, increasing, from ranges the allocator holds in memory. Share it
/// between threads freely.
#[pyclass(frozen, name = "SegmentKey", module = "ferroflake")]
pub struct PySegmentKey {
    handle: KeyHandle,
    allocator: Arc<Allocator>,
}

impl PySegmentKey {
    /// Refuses a batch above the crate's limit per call (2**32) as the crate does, before
    /// memory for it is taken.
    fn check_batch(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        refuse_if_forked(py, &self.allocator)?;
        if n > MAX_BATCH {
            // Refused by the crate without issuing anything.
            self.handle
                .next_ids(n)
                .map_err(|e| segment_to_pyerr(py, e))?;
        }
        Ok(())
    }

    /// Fills `ids` from the key's ranges, without the GIL (a batch may wait for a fetch).
    fn fill(&self, py: Python<'_>, ids: &mut [u64]) -> PyResult<()> {
        let handle = &self.handle;
        let ranges = py
            .detach(|| handle.next_ids(ids.len() as u64))
            .map_err(|e| segment_to_pyerr(py, e))?;
        let every = ranges.iter().flat_map(|r: &Range| r.start..r.end);
        for (slot, id) in ids.iter_mut().zip(every) {
            *slot = id;
        }
        Ok(())
    }
}

#[pymethods]
impl PySegmentKey {
    /// The next ID. From memory with the GIL held; if the key must wait for its next range
    /// (bounded by `max_wait_ms`), it waits without the GIL.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        match self.handle.try_next_id() {
            Ok(Some(id)) => Ok(id),
            Ok(None) => {
                let handle = &self.handle;
                py.detach(|| handle.next_id())
                    .map_err(|e| segment_to_pyerr(py, e))
            }
            Err(e) => Err(segment_to_pyerr(py, e)),
        }
    }

    /// The next ID if one is in memory, else `None` (the next range has been asked for);
    /// never waits.
    fn try_next_id(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.handle
            .try_next_id()
            .map_err(|e| segment_to_pyerr(py, e))
    }

    /// `n` IDs as a `list[int]`, increasing.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_batch(py, n)?;
        batch::list(py, n, CHUNK, |chunk| self.fill(py, chunk))
    }

    /// `n` IDs as an `array.array('q')`, increasing.
    fn next_ids_array<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.check_batch(py, n)?;
        batch::array(py, n, CHUNK, |chunk| self.fill(py, chunk))
    }

    /// The key's runway, step, fetch state and counters.
    fn status(&self, py: Python<'_>) -> PyResult<SegmentStatus> {
        // In a forked child the key's lock may have been held by the parent's fetch worker.
        refuse_if_forked(py, &self.allocator)?;
        Ok(self.handle.status().into())
    }

    /// The key's name.
    #[getter]
    fn name(&self) -> &str {
        self.handle.key()
    }

    fn __repr__(&self) -> String {
        format!("<ferroflake.SegmentKey {:?}>", self.handle.key())
    }
}

/// A key's state: what is left in memory, the next range, the step and the counters.
#[pyclass(frozen, get_all, module = "ferroflake")]
pub struct SegmentStatus {
    /// The key.
    key: String,
    /// The largest ID the key may issue.
    limit: u64,
    /// The current range, `(start, end)` (end excluded).
    current: (u64, u64),
    /// The next range if it has been fetched.
    next: Option<(u64, u64)>,
    /// IDs in memory: the rest of the current range plus the next one.
    runway_ids: u64,
    /// How long the runway lasts at the recent rate, if known.
    runway_secs: Option<f64>,
    /// The step of the next fetch.
    step: u64,
    /// Whether a fetch is in flight.
    fetching: bool,
    /// The last store error, while fetches are failing.
    last_error: Option<String>,
    /// Ranges fetched.
    fetches: u64,
    /// Fetches that failed.
    fetch_failures: u64,
    /// Callers that waited for a range.
    waits: u64,
    /// Callers that got `SegmentNotReadyError`.
    not_ready: u64,
    /// Store errors seen.
    store_errors: u64,
    /// Switches to the next range.
    switches: u64,
}

impl From<KeyStatus> for SegmentStatus {
    fn from(status: KeyStatus) -> Self {
        let counters = status.counters;
        SegmentStatus {
            key: status.key,
            limit: status.limit,
            current: (status.current.start, status.current.end),
            next: status.next.map(|r| (r.start, r.end)),
            runway_ids: status.runway_ids,
            runway_secs: status.runway_secs,
            step: status.step,
            fetching: status.fetching,
            last_error: status.last_error.map(|e| e.to_string()),
            fetches: counters.fetches,
            fetch_failures: counters.fetch_failures,
            waits: counters.waits,
            not_ready: counters.not_ready,
            store_errors: counters.store_errors,
            switches: counters.switches,
        }
    }
}

#[pymethods]
impl SegmentStatus {
    fn __repr__(&self) -> String {
        format!(
            "SegmentStatus(key={:?}, current={:?}, next={:?}, runway_ids={}, step={})",
            self.key, self.current, self.next, self.runway_ids, self.step
        )
    }
}
