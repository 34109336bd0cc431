//! Signals for the commands that hold something to give back: `next` (a leased node id),
//! `segment next` (the unissued rest of a segment) and `serve` (both, and its connections).
//!
//! Every one of them follows one rule: the first stop signal asks the command to stop and
//! give back what it holds; a second one, while it does, ends the process at once with
//! status 128 + the signal (a lease then lapses after its TTL, a segment's rest is
//! skipped), so a stop that waits can still be cut short.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crossbeam_channel::{Receiver, Sender};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::failure::Failure;

/// A caught signal, as [`Signals::watch`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    /// The first stop signal: stop and give back.
    Stop(i32),
    /// A stop signal after the first: the process ends with 128 + it once this returns.
    Forced(i32),
    /// A signal that asks for files to be read again.
    Reload(i32),
}

/// The stop signals caught, and which came first.
pub struct Signals {
    which: Arc<AtomicUsize>,
}

impl Signals {
    /// No signal is caught (runs with `--node`, which hold nothing to release).
    pub fn none() -> Self {
        Signals {
            which: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// SIGINT, SIGTERM and SIGHUP stop: SIGHUP too, since a closed terminal would otherwise
    /// kill the process with its claim held. The command looks at [`Signals::caught`].
    pub fn install() -> Result<Self, Failure> {
        Self::watch(&[SIGINT, SIGTERM, SIGHUP], &[], |_| {})
    }

    /// Catches `stops` and `reloads` on a thread of its own, and tells `on` of each: the
    /// first stop also sets [`Signals::caught`]; after a later one, `on` returns and the
    /// process ends at once.
    pub fn watch(
        stops: &[i32],
        reloads: &[i32],
        mut on: impl FnMut(Caught) + Send + 'static,
    ) -> Result<Self, Failure> {
        let cannot = |e: std::io::Error| Failure::Run(format!("cannot catch signals: {e}"));
        let mut caught =
            signal_hook::iterator::Signals::new(stops.iter().chain(reloads)).map_err(cannot)?;
        let stopped = STOPPED.get_or_init(|| {
            let (sender, receiver) = crossbeam_channel::bounded(0);
            StopChannel {
                sender: Mutex::new(Some(sender)),
                receiver,
            }
        });
        let which = Arc::new(AtomicUsize::new(0));
        let first = Arc::clone(&which);
        let stops = stops.to_vec();
        std::thread::Builder::new()
            .name("ferroflake-signals".into())
            .spawn(move || {
                for signal in caught.forever() {
                    if !stops.contains(&signal) {
                        on(Caught::Reload(signal));
                        continue;
                    }
                    let number = usize::try_from(signal).unwrap_or(usize::MAX);
                    if first
                        .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        FIRST_STOP.store(signal, Ordering::SeqCst);
                        // After the flag, so a waiter woken by it finds the flag set.
                        let sender = stopped.sender.lock();
                        drop(sender.unwrap_or_else(PoisonError::into_inner).take());
                        on(Caught::Stop(signal));
                    } else {
                        on(Caught::Forced(signal));
                        // At once: no destructor or exit handler runs, as if killed.
                        signal_hook::low_level::exit(128 + signal);
                    }
                }
            })
            .map_err(cannot)?;
        Ok(Signals { which })
    }

    /// The first stop signal that arrived, if one did.
    pub fn caught(&self) -> Option<i32> {
        match self.which.load(Ordering::SeqCst) {
            0 => None,
            signal => i32::try_from(signal).ok(),
        }
    }
}

/// A channel that nothing is ever sent on, closed at the first stop signal (its only
/// sender dropped): what a wait for standard output selects on beside the output
/// (`crate::stop_aware_stdout`).
static STOPPED: OnceLock<StopChannel> = OnceLock::new();

struct StopChannel {
    /// Taken and dropped by the signal thread.
    sender: Mutex<Option<Sender<()>>>,
    receiver: Receiver<()>,
}

/// The first stop signal caught in this process (0: none yet).
static FIRST_STOP: AtomicI32 = AtomicI32::new(0);

/// The first stop signal caught in this process, by any [`Signals`].
pub fn first_stop() -> Option<i32> {
    match FIRST_STOP.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// A receiver that is ready (disconnected) once the first stop signal was caught, if
/// signals are caught at all (a command that holds nothing to give back leaves them at
/// their defaults).
pub fn stopped() -> Option<Receiver<()>> {
    STOPPED.get().map(|channel| channel.receiver.clone())
}

/// "SIGINT", "SIGTERM", or "signal N".
pub fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".to_owned(),
        SIGTERM => "SIGTERM".to_owned(),
        SIGHUP => "SIGHUP".to_owned(),
        other => format!("signal {other}"),
    }
}
