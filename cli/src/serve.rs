//! `ferroflake serve`: the service of `ferroflake-serve`, with this process's signals and
//! exit status.
//!
//! The exit status is 0 after a clean stop; 1 if the server could not start, or the stop
//! timed out (the segments and the lease were still given back); 2 for settings that
//! cannot work; 128 + the signal for a second SIGTERM or SIGINT during the stop.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use ferroflake_serve::{init_logging, open_files, AppState, Config, ServeArgs, Server};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::signals::{Caught, Signals};

/// Runs the service until the first SIGTERM or SIGINT, then stops it; returns the exit
/// status. SIGHUP reads the tokens file and the TLS pair again, when there are any.
pub fn run(args: &ServeArgs) -> u8 {
    let config = match Config::from_args(args) {
        Ok(config) => config,
        Err(e) => {
            // Not `eprintln!`: a closed or broken stderr must not turn this into a panic.
            let _ = writeln!(std::io::stderr().lock(), "ferroflake serve: {e}");
            return 2;
        }
    };
    init_logging(config.log_format);
    // Before the listener and the stores open: every descriptor counts.
    match open_files::raise_to_hard() {
        Ok((before, after)) => tracing::info!(event = "open_files",
            soft_before = %open_files::shown(before), soft = %open_files::shown(after),
            "open-file limit raised to the hard limit"),
        Err(e) => tracing::warn!(event = "open_files_not_raised", error = %e,
            "cannot raise the open-file limit; connections are bounded by the current one"),
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    // Set once the server is bound; a SIGHUP before that has nothing to read again.
    let state = Arc::new(OnceLock::<Arc<AppState>>::new());
    let reloading = Arc::clone(&state);
    // Without a file to read again, SIGHUP is left alone and ends the process.
    let reloads: &[i32] = if config.reloads() { &[SIGHUP] } else { &[] };
    // Caught before anything opens: a stop during a slow start still gives back.
    let watched = Signals::watch(&[SIGTERM, SIGINT], reloads, move |caught| match caught {
        Caught::Stop(signal) => {
            tracing::info!(event = "signal", signal, "stop signal received");
            if let Some(stop) = stop.take() {
                let _ = stop.send(());
            }
        }
        Caught::Forced(signal) => tracing::warn!(
            event = "forced_exit",
            signal,
            "second signal: exiting now without giving segments back or releasing the lease"
        ),
        Caught::Reload(signal) => {
            tracing::info!(event = "signal", signal, "reload signal received");
            if let Some(state) = reloading.get() {
                state.reload();
            }
        }
    });
    if let Err(e) = watched {
        tracing::error!(event = "start_failed", error = %e, "cannot start");
        return 1;
    }
    let server = match Server::bind(config) {
        Ok(server) => server,
        Err(e) => {
            tracing::error!(event = "start_failed", error = %e, "cannot start");
            return 1;
        }
    };
    let _ = state.set(Arc::clone(server.state()));
    let report = server.run_until(async move {
        // A sender dropped without a send (the watch thread gone) stops too.
        let _ = stopped.await;
    });
    if report.drained {
        0
    } else {
        1
    }
}
