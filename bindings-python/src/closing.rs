//! What holds something outside the process (a leased node id, ranges taken from a segment
//! table) is given back when the interpreter exits, even if the program never closed it:
//! an `atexit` hook closes every such object still open. Objects are tracked weakly, so
//! tracking keeps nothing alive; one that Python frees first gives back on its own.

use std::sync::{Arc, Mutex, Weak};

use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};

/// An object to close at exit. `close_at_exit` runs detached from the interpreter and
/// must be idempotent; in a forked child it must give back nothing (the parent's lease
/// and ranges are the parent's).
pub trait Close: Send + Sync {
    fn close_at_exit(&self);
}

static OPEN: Mutex<Vec<Weak<dyn Close>>> = Mutex::new(Vec::new());

/// Closes `object` at exit if it is still alive then.
pub fn track<T: Close + 'static>(object: &Arc<T>) {
    let object: Arc<dyn Close> = object.clone();
    let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    open.retain(|weak| weak.strong_count() > 0);
    open.push(Arc::downgrade(&object));
}

/// Registers the exit hook with `atexit`.
pub fn register_at_exit(py: Python<'_>) -> PyResult<()> {
    let hook = PyCFunction::new_closure(
        py,
        Some(c"_ferroflake_close_at_exit"),
        Some(c"Gives back the leases and segment ranges still open."),
        |args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>| {
            close_all(args.py());
        },
    )?;
    py.import("atexit")?.call_method1("register", (hook,))?;
    Ok(())
}

fn close_all(py: Python<'_>) {
    let open: Vec<Arc<dyn Close>> = {
        let mut open = OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        open.drain(..).filter_map(|weak| weak.upgrade()).collect()
    };
    // Detached: a thread still inside a call may need the interpreter to finish it.
    py.detach(move || {
        for object in open {
            object.close_at_exit();
        }
    });
}
