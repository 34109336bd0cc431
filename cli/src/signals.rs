//! SIGINT, SIGTERM and SIGHUP for the commands that hold something to give back: `next` (a leased
//! node id) and `segment next` (the unissued rest of a segment).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::failure::Failure;

/// SIGINT, SIGTERM and SIGHUP, caught: the first sets a flag that the command looks at between
/// batches; a second one of either ends the process at once (a lease then lapses after its
/// TTL, a segment's rest is skipped), so a start that waits can still be cut short.
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

    pub fn install() -> Result<Self, Failure> {
        let any = Arc::new(AtomicBool::new(false));
        let which = Arc::new(AtomicUsize::new(0));
        let cannot = |e: std::io::Error| Failure::Run(format!("cannot catch signals: {e}"));
        // SIGHUP too: a closed terminal would otherwise kill the process with its claim held.
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // Registered first, so it sees the flag as the previous signal left it.
            signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                Arc::clone(&any),
            )
            .map_err(cannot)?;
            signal_hook::flag::register(signal, Arc::clone(&any)).map_err(cannot)?;
            signal_hook::flag::register_usize(signal, Arc::clone(&which), signal as usize)
                .map_err(cannot)?;
        }
        Ok(Signals { which })
    }

    /// The signal that arrived, if one did.
    pub fn caught(&self) -> Option<i32> {
        match self.which.load(Ordering::Relaxed) {
            0 => None,
            signal => i32::try_from(signal).ok(),
        }
    }
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
