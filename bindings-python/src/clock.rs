//! Clocks for Python: the `clock=` argument of `Generator`, the `ManualClock` class, and
//! the wrapper that lets other Python threads run while a generator waits.

use std::sync::Arc;

use ferroflake::{AnyClock, Clock, ClockKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::ints::uint;
use crate::names::{one_of, quoted};

/// A clock that only moves when told to, for deterministic tests: waiting on it (a used-up
/// sequence, a clock that went back) moves it forward at once instead of sleeping.
#[pyclass(frozen, module = "ferroflake")]
pub struct ManualClock {
    pub(crate) inner: Arc<ferroflake::ManualClock>,
}

#[pymethods]
impl ManualClock {
    #[new]
    fn new(#[pyo3(from_py_with = uint)] now_ms: u64) -> Self {
        ManualClock {
            inner: Arc::new(ferroflake::ManualClock::new(now_ms)),
        }
    }

    /// The current time, Unix ms.
    fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }

    /// Sets the time, forwards or backwards.
    fn set_ms(&self, #[pyo3(from_py_with = uint)] now_ms: u64) {
        self.inner.set_ms(now_ms);
    }

    /// Moves the time forward by `ms`.
    fn advance_ms(&self, #[pyo3(from_py_with = uint)] ms: u64) {
        self.inner.advance_ms(ms);
    }

    /// Moves the time back by `ms` (not below 0).
    fn rewind_ms(&self, #[pyo3(from_py_with = uint)] ms: u64) {
        self.inner.rewind_ms(ms);
    }

    fn __repr__(&self) -> String {
        format!("ManualClock({})", self.inner.now_ms())
    }
}

/// The `clock=` argument of `Generator`: `"system"`, `"fast"` or a [`ManualClock`].
pub enum ClockChoice {
    /// The operating system's wall clock.
    System,
    /// The core's `FastClock` for the layout's tick.
    Fast,
    /// A shared manual clock.
    Manual(Arc<ferroflake::ManualClock>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for ClockChoice {
    type Error = PyErr;

    fn extract(arg: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(manual) = arg.cast::<ManualClock>() {
            return Ok(ClockChoice::Manual(manual.get().inner.clone()));
        }
        if let Ok(name) = arg.cast::<PyString>() {
            let name = name.to_cow()?;
            return match ClockKind::from_name(&name) {
                Some(ClockKind::System) => Ok(ClockChoice::System),
                Some(ClockKind::Fast) => Ok(ClockChoice::Fast),
                // A manual clock is a `ManualClock` object: it needs a start and a handle.
                Some(ClockKind::Manual) | None => Err(PyValueError::new_err(format!(
                    "unknown clock {name:?}: expected {}",
                    clock_choices()
                ))),
            };
        }
        Err(PyTypeError::new_err(format!(
            "clock must be {}",
            clock_choices()
        )))
    }
}

/// What `clock=` accepts, in words: the core's names of the clocks that need no object,
/// or a `ManualClock`.
fn clock_choices() -> String {
    let named = ClockKind::ALL
        .into_iter()
        .filter(|kind| *kind != ClockKind::Manual)
        .map(ClockKind::name);
    let mut choices = quoted(named);
    choices.push("a ManualClock".to_owned());
    one_of(&choices)
}

impl ClockChoice {
    /// The clock for a generator whose layout ticks every `tick_ms`.
    pub fn for_tick_ms(self, tick_ms: u64) -> GeneratorClock {
        GeneratorClock(self.any_clock(tick_ms))
    }

    /// The core's clock for a layout that ticks every `tick_ms`.
    pub fn any_clock(self, tick_ms: u64) -> AnyClock {
        match self {
            ClockChoice::System => AnyClock::system(),
            ClockChoice::Fast => AnyClock::fast(tick_ms),
            ClockChoice::Manual(clock) => AnyClock::Manual(clock),
        }
    }
}

/// The core's run-time clock, detaching from the interpreter while it waits.
///
/// The generator waits only on slow paths (a used-up sequence: at most one tick plus
/// `max_backward_wait_ms`, and a tick is a whole second under js53; a clock that went back:
/// up to `max_backward_wait_ms`; never more than a day).
/// Detaching there lets other threads run, at no cost to the fast path.
pub struct GeneratorClock(AnyClock);

impl Clock for GeneratorClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }

    fn tracks_real_time(&self) -> bool {
        self.0.tracks_real_time()
    }

    fn wait_until_ms(&self, target_ms: u64) {
        match &self.0 {
            // Waiting on a manual clock only moves it: nothing to detach for.
            AnyClock::Manual(clock) => clock.wait_until_ms(target_ms),
            clock => {
                // SAFETY: a GeneratorClock belongs to a Python `Generator`, whose methods
                // call the core generator only while attached (none of them detach around
                // it), so this thread is attached here; the token does not escape.
                let py = unsafe { Python::assume_attached() };
                py.detach(|| clock.wait_until_ms(target_ms));
            }
        }
    }
}

#[cfg(unix)]
pub use caller::{attached_call, CallerClock};

/// The clock of a leased generator, which more than Python's callers use: the lease's
/// renewal thread reads it (and must never take the GIL), and the start waits on it while
/// detached. So it cannot assume, as [`GeneratorClock`] does, that every wait happens on an
/// attached thread; it detaches only in calls made through [`attached_call`].
#[cfg(unix)]
mod caller {
    use std::cell::Cell;

    use ferroflake::{AnyClock, Clock};
    use pyo3::prelude::*;

    thread_local! {
        /// Set while this thread runs an [`attached_call`].
        static ATTACHED: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` (a call into a leased generator made by a Python method, attached), so that
    /// a wait for the clock inside it lets other Python threads run.
    #[inline]
    pub fn attached_call<R>(_py: Python<'_>, f: impl FnOnce() -> R) -> R {
        struct Reset(bool);
        impl Drop for Reset {
            fn drop(&mut self) {
                ATTACHED.with(|a| a.set(self.0));
            }
        }
        let _reset = Reset(ATTACHED.with(|a| a.replace(true)));
        f()
    }

    /// The core's run-time clock; detaches while it waits inside an [`attached_call`].
    pub struct CallerClock(pub AnyClock);

    impl Clock for CallerClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            self.0.now_ms()
        }

        fn tracks_real_time(&self) -> bool {
            self.0.tracks_real_time()
        }

        fn wait_until_ms(&self, target_ms: u64) {
            let attached = ATTACHED.with(Cell::get);
            match &self.0 {
                AnyClock::Manual(clock) => clock.wait_until_ms(target_ms),
                clock if attached => {
                    // SAFETY: ATTACHED is set only by `attached_call`, which takes a
                    // `Python` token, so this thread is attached; inside `detach` the flag
                    // is cleared, so a nested wait does not detach twice.
                    let py = unsafe { Python::assume_attached() };
                    py.detach(|| {
                        ATTACHED.with(|a| a.set(false));
                        clock.wait_until_ms(target_ms);
                        ATTACHED.with(|a| a.set(true));
                    });
                }
                clock => clock.wait_until_ms(target_ms),
            }
        }
    }
}
