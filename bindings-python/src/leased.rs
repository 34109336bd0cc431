//! `LeasedGenerator`: `ferroflake_lease::LeasedGenerator` for Python. The node id is leased
//! from a registry and renewed on the lease crate's own thread, which never takes the GIL;
//! every rule (claims, marks, fences, fork) is the lease crate's.

use std::sync::{Arc, RwLock, TryLockError};

use ferroflake::{Error, Layout, Options};
use ferroflake_lease::{LeaseSettings, LeaseStatus};
use ferroflake_lease_stores::RegistryAddress;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::batch;
use crate::clock::{attached_call, CallerClock, ClockChoice};
use crate::closing::{self, Close};
use crate::counters::Counters;
use ferroflake::ForkGuard;

use crate::errors::{forked_error, lease_to_pyerr, named_error, to_pyerr, to_pyerr_saying};
use crate::generator::SIGNAL_CHECK_MAX;
use crate::ints::{optional_uint, uint};
use crate::layout::PyLayout;
use crate::parts::Parts;

type Leased = ferroflake_lease::LeasedGenerator<CallerClock>;

/// The lease, until `close()` takes it.
///
/// Calls take the read lock with `try_read`, never waiting: only `close()` writes, so a
/// read that would wait means the generator is closing, and the call is refused as closed.
/// (A call that waited while attached could deadlock with a reader that needs the
/// interpreter back to finish.)
struct LeaseCell {
    leased: RwLock<Option<Leased>>,
    fork: ForkGuard,
}

impl LeaseCell {
    /// Stops issuing and releases the node id; does nothing if already closed. In a process
    /// forked from the holder it does nothing at all: the lease, its renewal thread and its
    /// connections are the parent's, and the lock may have been held by one of the
    /// parent's threads at the fork (taking it would wait forever).
    fn close(&self) -> Result<(), ferroflake_lease::LeaseError> {
        if self.fork.is_forked() {
            return Ok(());
        }
        let taken = self
            .leased
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        match taken {
            None => Ok(()),
            Some(leased) => leased.shutdown(),
        }
    }
}

impl Close for LeaseCell {
    fn close_at_exit(&self) {
        let _ = self.close();
    }
}

impl Drop for LeaseCell {
    /// Releases the lease of a generator the program dropped without closing (as `close()`
    /// does, errors ignored). The renewal thread it joins never takes the GIL.
    fn drop(&mut self) {
        if self.fork.is_forked() {
            // Leaked, not dropped: dropping would close the parent's connections (a
            // store's client may say goodbye on a socket the parent still uses).
            let leased = self
                .leased
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            std::mem::forget(leased);
            return;
        }
        let _ = self.close();
    }
}

/// A generator whose node id is leased from a registry: the embedded one (a directory
/// shared by the processes of one host, no server) or a store (etcd, Redis, ZooKeeper,
/// PostgreSQL). It issues only while it can prove it holds its node id.
#[pyclass(frozen, weakref, name = "LeasedGenerator", module = "ferroflake")]
pub struct PyLeasedGenerator {
    cell: Arc<LeaseCell>,
    node_id: u64,
    layout: Layout,
    address: String,
    epoch: u64,
    ttl_ms: u64,
}

/// The `registry=` argument: `None`, a `str` or an `os.PathLike`.
fn registry_address(
    py: Python<'_>,
    registry: Option<&Bound<'_, PyAny>>,
) -> PyResult<RegistryAddress> {
    let Some(registry) = registry.filter(|r| !r.is_none()) else {
        return Ok(RegistryAddress::Default);
    };
    let text = address_text(py, registry, "registry")?;
    RegistryAddress::parse(&text).map_err(|e| lease_to_pyerr(py, e))
}

/// A `str` or `os.PathLike` argument as text; anything else is a `TypeError`.
pub fn address_text(py: Python<'_>, value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_cow()?.into_owned());
    }
    let fspath = py.import("os")?.getattr("fspath")?;
    match fspath.call1((value,)) {
        Ok(path) => match path.cast::<PyString>() {
            Ok(text) => Ok(text.to_cow()?.into_owned()),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{what} must be a str path or address, got a bytes path"
            ))),
        },
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be None, a str or an os.PathLike, got {}",
            value.get_type().name()?
        ))),
    }
}

impl PyLeasedGenerator {
    /// Runs `f` on the lease, or raises `LeaseClosedError` once `close()` has begun.
    #[inline]
    fn with_leased<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Leased) -> PyResult<R>,
    ) -> PyResult<R> {
        let guard = match self.cell.leased.try_read() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            // Closing, or a fork taken while the parent was closing: say which.
            Err(TryLockError::WouldBlock) if self.cell.fork.is_forked() => {
                return Err(self.forked_error(py))
            }
            Err(TryLockError::WouldBlock) => return Err(self.closed_error(py)),
        };
        match guard.as_ref() {
            Some(leased) => f(leased),
            None => Err(self.closed_error(py)),
        }
    }

    #[cold]
    fn forked_error(&self, py: Python<'_>) -> PyErr {
        forked_error(
            py,
            format!(
                "this leased generator was made in process {} and inherited through fork(); \
                 process {} must not use it, since its parent holds the same IDs in memory: \
                 make a LeasedGenerator in the child; it leases a node id of its own",
                self.cell.fork.made_in_pid(),
                std::process::id()
            ),
        )
    }

    #[cold]
    fn closed_error(&self, py: Python<'_>) -> PyErr {
        named_error(
            py,
            "LeaseClosedError",
            "CLOSED",
            format!(
                "the leased generator of node id {} is closed: its lease was released",
                self.node_id
            ),
        )
    }

    /// The core error of a refused call, a refused lease explained (lost, renewals
    /// failing, clock jumped ahead) with the registry's address.
    #[cold]
    fn refusal(&self, py: Python<'_>, leased: &Leased, error: Error) -> PyErr {
        if matches!(error, Error::LeaseExpired { .. }) {
            let message = format!("{} (registry: {})", leased.explain(&error), self.address);
            return to_pyerr_saying(py, error, message);
        }
        to_pyerr(py, error)
    }

    fn chunk_len(&self) -> usize {
        let per_tick = self.layout.max_sequence().saturating_add(1);
        per_tick.min(SIGNAL_CHECK_MAX) as usize
    }
}

/// A start's report (why and how long it waits) as a warning of the `ferroflake` logger:
/// with no logging set up, Python prints it on stderr.
fn log_wait(text: &str) {
    Python::attach(|py| {
        let logged = py
            .import("logging")
            .and_then(|logging| logging.call_method1("getLogger", ("ferroflake",)))
            .and_then(|logger| logger.call_method1("warning", ("%s", text)));
        if let Err(e) = logged {
            // A broken logging setup must not fail the start; the words still go out.
            e.write_unraisable(py, None);
        }
    });
}

#[pymethods]
impl PyLeasedGenerator {
    /// Leases a node id from `registry` (`None`: the embedded registry in its default
    /// directory; an absolute directory or `file:///dir`; `etcd://`, `redis://`, `zk://` or
    /// `postgres://` URLs) and starts issuing. Blocks, without holding the GIL, until the
    /// lease is held and any wait the registry asks for (a previous holder's mark, lost
    /// records) is over: `max_start_wait_ms` bounds that wait (`None`: 30 s, or the
    /// longest the timings ask for if longer), which is announced first as a warning of
    /// the `ferroflake` logger. `state_file` (a path) keeps the claim on this host, so that
    /// a process restarted while the registry cannot be reached resumes it until its
    /// deadline (`StateFileError` if it is not the caller's alone or another live process
    /// uses it). A setting left `None` takes the lease crate's default, as in every face
    /// (`ttl_ms` 10,000; the others derived from it).
    #[new]
    #[pyo3(
        signature = (layout=None, registry=None, *, ttl_ms=None, max_ttl_ms=None, quarantine_ms=None, max_start_wait_ms=None, max_clock_skew_ms=None, clock=ClockChoice::System, max_drift_ticks=None, max_backward_wait_ms=None, holder=None, state_file=None),
        text_signature = "(layout=None, registry=None, *, ttl_ms=None, max_ttl_ms=None, quarantine_ms=None, max_start_wait_ms=None, max_clock_skew_ms=None, clock='system', max_drift_ticks=None, max_backward_wait_ms=None, holder=None, state_file=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        layout: Option<&Bound<'_, PyLayout>>,
        registry: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = optional_uint)] ttl_ms: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] max_ttl_ms: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] quarantine_ms: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] max_start_wait_ms: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] max_clock_skew_ms: Option<u64>,
        clock: ClockChoice,
        #[pyo3(from_py_with = optional_uint)] max_drift_ticks: Option<u64>,
        #[pyo3(from_py_with = optional_uint)] max_backward_wait_ms: Option<u64>,
        holder: Option<String>,
        state_file: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let layout = layout.map_or_else(Layout::twitter, |l| l.get().inner);
        let address = registry_address(py, registry)?;
        let mut settings = LeaseSettings::default();
        settings.ttl_ms = ttl_ms;
        settings.max_ttl_ms = max_ttl_ms;
        settings.quarantine_ms = quarantine_ms;
        settings.max_start_wait_ms = max_start_wait_ms;
        settings.max_clock_skew_ms = max_clock_skew_ms;
        settings.holder = holder;
        settings.state_file = state_file;
        settings.options = Options::given(max_drift_ticks, max_backward_wait_ms, None);
        let config = settings.config();
        let ttl_ms = u64::try_from(config.ttl.as_millis()).unwrap_or(u64::MAX);
        let clock = CallerClock(clock.any_clock(layout.tick_ms()));
        let described = address.describe();
        let started = py.detach(move || {
            let registry = address.open_for(&config)?;
            Leased::start_reporting(layout, clock, registry, config, &mut log_wait)
        });
        let leased = started.map_err(|e| lease_to_pyerr(py, e))?;
        let generator = PyLeasedGenerator {
            node_id: leased.node(),
            layout,
            address: described,
            epoch: leased.grant().epoch,
            ttl_ms,
            cell: Arc::new(LeaseCell {
                leased: RwLock::new(None),
                fork: ForkGuard::here(),
            }),
        };
        *generator
            .cell
            .leased
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(leased);
        closing::track(&generator.cell);
        Ok(generator)
    }

    /// The next ID. Raises `LeaseExpiredError` once the lease cannot be proven (lost,
    /// renewals failing past the deadline), saying why; `ForkedGeneratorError` in a forked
    /// child; `LeaseClosedError` after `close()`.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_leased(py, |leased| {
            attached_call(py, || leased.next_id()).map_err(|e| self.refusal(py, leased, e))
        })
    }

    /// `n` consecutive IDs as a `list[int]`.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with_leased(py, |leased| {
            batch::list(py, n, self.chunk_len(), |chunk| {
                attached_call(py, || leased.next_ids(chunk))
                    .map_err(|e| self.refusal(py, leased, e))
            })
        })
    }

    /// `n` consecutive IDs as an `array.array('q')`.
    fn next_ids_array<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = uint)] n: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.with_leased(py, |leased| {
            batch::array(py, n, self.chunk_len(), |chunk| {
                attached_call(py, || leased.next_ids(chunk))
                    .map_err(|e| self.refusal(py, leased, e))
            })
        })
    }

    /// The next ID, carrying `shard` in its lowest bits (layouts with shard bits).
    fn next_id_for_shard(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = uint)] shard: u64,
    ) -> PyResult<u64> {
        self.with_leased(py, |leased| {
            attached_call(py, || leased.next_id_for_shard(shard))
                .map_err(|e| self.refusal(py, leased, e))
        })
    }

    /// The fields of an ID made under this generator's layout.
    fn decode(&self, py: Python<'_>, #[pyo3(from_py_with = uint)] id: u64) -> PyResult<Parts> {
        self.layout
            .decode(id)
            .map(Parts::from)
            .map_err(|e| to_pyerr(py, e))
    }

    /// Stops issuing and releases the node id, recording the end of the last issued tick
    /// so the next holder can start at once. Idempotent. Blocks without the GIL while the
    /// registry answers. In a process forked from the holder it releases nothing: the lease
    /// stays with the parent. Raises a `LeaseError` if the release fails (the claim then
    /// lapses after its TTL); the generator is closed all the same.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let cell = Arc::clone(&self.cell);
        py.detach(move || cell.close())
            .map_err(|e| lease_to_pyerr(py, e))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Whether `close()` has been called.
    #[getter]
    fn closed(&self) -> bool {
        match self.cell.leased.try_read() {
            Ok(guard) => guard.is_none(),
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner().is_none(),
            Err(TryLockError::WouldBlock) => true,
        }
    }

    /// Where the lease stands: `"held"`, `"failing"` (renewals failing; IDs are issued
    /// until the local deadline), `"lost"` (nothing is issued again), `"released"` (closed),
    /// or `"forked"` (inherited through fork(): the lease is the parent's).
    #[getter]
    fn status(&self, py: Python<'_>) -> &'static str {
        let status = self.with_leased(py, |leased| {
            if leased.generator().is_forked() {
                return Ok("forked");
            }
            Ok(match leased.status() {
                LeaseStatus::Held => "held",
                LeaseStatus::Failing { .. } => "failing",
                LeaseStatus::Lost => "lost",
                _ => "released",
            })
        });
        status.unwrap_or("released")
    }

    /// The leased node id.
    #[getter]
    fn node_id(&self) -> u64 {
        self.node_id
    }

    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout { inner: self.layout }
    }

    /// The registry's address, as messages name it.
    #[getter]
    fn registry(&self) -> &str {
        &self.address
    }

    /// The claim's epoch: it grows each time the node id is claimed anew.
    #[getter]
    fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The lease's time to live, ms.
    #[getter]
    fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// The generator's fence (Unix ms), which each renewal moves forward; `None` after
    /// `close()`.
    #[getter]
    fn fence_ms(&self, py: Python<'_>) -> Option<u64> {
        self.with_leased(py, |leased| Ok(leased.generator().fence_ms()))
            .ok()
            .flatten()
    }

    /// This clock minus the registry's at the last renewal, ms (positive: ahead); `None`
    /// if the registry reports no clock (etcd), the clock is a manual one, or after
    /// `close()`. Beyond `max_clock_skew_ms` nothing is issued (`ClockSkewError`).
    #[getter]
    fn clock_skew_ms(&self, py: Python<'_>) -> Option<i64> {
        self.with_leased(py, |leased| Ok(leased.clock_skew().map(|r| r.skew_ms)))
            .ok()
            .flatten()
    }

    /// Half the round trip of the last clock reading, ms: the true skew is within this of
    /// `clock_skew_ms`. `None` when `clock_skew_ms` is.
    #[getter]
    fn clock_skew_uncertainty_ms(&self, py: Python<'_>) -> Option<u64> {
        self.with_leased(py, |leased| {
            Ok(leased.clock_skew().map(|r| r.uncertainty_ms))
        })
        .ok()
        .flatten()
    }

    /// The high-water mark the registry holds for this lease (Unix ms).
    #[getter]
    fn reserved_high_water_ms(&self, py: Python<'_>) -> PyResult<u64> {
        if self.cell.fork.is_forked() {
            // The lease's state lock may have been held by the parent's renewal thread.
            return Err(self.forked_error(py));
        }
        self.with_leased(py, |leased| Ok(leased.reserved_high_water_ms()))
    }

    /// Start (Unix ms) of the tick of the last issued ID.
    #[getter]
    fn last_issued_ms(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_leased(py, |leased| Ok(leased.generator().last_issued_ms()))
    }

    /// Slow-path counts so far.
    #[getter]
    fn counters(&self, py: Python<'_>) -> PyResult<Counters> {
        self.with_leased(py, |leased| Ok(leased.generator().counters().into()))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<ferroflake.LeasedGenerator node_id={} status={} registry={:?}>",
            self.node_id,
            self.status(py),
            self.address
        )
    }
}
