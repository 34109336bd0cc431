//! Starting, running and stopping a server.
//!
//! [`Server::bind`] opens everything but HTTP; [`Server::run_until`] serves until a
//! shutdown future resolves (the `ferroflake` binary's is its first SIGTERM or SIGINT),
//! then stops; [`RunningServer`] does the same on a thread of its own. The stop:
//!
//! 1. `/readyz` turns 503 at once, and the listener stops accepting.
//! 2. Idle connections close at once, and so do those whose request head has not fully
//!    arrived (a half-sent request has nothing to answer). Requests in flight finish and
//!    are answered normally, up to `shutdown_timeout_ms` (see
//!    [`connections`](crate::connections)).
//! 3. The segment allocator shuts down: each key's unissued IDs go back to the table
//!    where nobody allocated since.
//! 4. The lease is released with the final high-water mark, so another server can take
//!    the node id at once.
//!
//! [`AppState::reload`] reads the tokens file and the TLS certificate and key again (the
//! binary does it on SIGHUP). A process that ends during the stop skips steps 3 and 4: the
//! segments' rest is then skipped (never issued) and the lease lapses after its TTL.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ferroflake_segment::ShutdownReport;
use tokio::sync::{oneshot, watch};

use crate::app_state::AppState;
use crate::config::{Config, LogFormat};
use crate::metrics::Metrics;
use crate::segments::Segments;
use crate::snowflake::Snowflake;
use crate::tls::Tls;
use crate::tokens::Tokens;

/// What a stop did.
#[derive(Debug, Default)]
pub struct StopReport {
    /// Every request in flight finished before the timeout.
    pub drained: bool,
    /// What giving the segments back did (`None` without segment mode).
    pub segments: Option<ShutdownReport>,
    /// The node id released, or why the release failed (`Ok(None)`: no lease was held).
    pub lease: Option<Result<Option<u64>, String>>,
}

/// Opens the store, starts the lease supervisor and the preload: everything but HTTP.
fn prepare(config: Config) -> Result<Arc<AppState>, String> {
    config.check()?;
    // Before anything opens: a bad key or tokens file stops the start with nothing to undo.
    let mask = crate::masked::load_keyring(&config)?;
    let tokens = config
        .tokens_file
        .as_deref()
        .map(Tokens::open)
        .transpose()?;
    match &tokens {
        Some(tokens) => tracing::info!(event = "tokens_loaded", file = %tokens.path().display(),
            tokens = tokens.current().len(), "every route but /healthz and /readyz needs a bearer token"),
        None if !config.listen_is_loopback() => tracing::warn!(event = "unauthenticated",
            listen = %config.listen,
            "listening beyond loopback without tokens (allow_unauthenticated): anyone who \
             reaches this address can take IDs"),
        None => {}
    }
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => {
            let tls = Tls::open(cert, key)?;
            tracing::info!(event = "tls_loaded", cert = %cert.display(), key = %key.display(),
                "serving HTTPS (TLS 1.2 and 1.3)");
            Some(Arc::new(tls))
        }
        _ => None,
    };
    if tokens.is_some() && tls.is_none() && !config.listen_is_loopback() {
        tracing::warn!(event = "tokens_in_clear", listen = %config.listen,
            "bearer tokens beyond loopback without TLS: they cross the network in clear \
             text; give --tls-cert and --tls-key, or terminate TLS in front");
    }
    let metrics = Arc::new(Metrics::new());
    let segments = if config.segment {
        Some(Arc::new(Segments::open(&config, Arc::clone(&metrics))?))
    } else {
        None
    };
    let snowflake = if config.snowflake {
        Some(Arc::new(Snowflake::new(&config, Arc::clone(&metrics))?))
    } else {
        None
    };
    let registry = match &config.lease {
        Some(_) => Some(Arc::new(crate::remote_registry::ServedRegistry::new(
            config.lease_address()?,
        ))),
        None => None,
    };
    let state = Arc::new(AppState {
        config,
        snowflake,
        segments,
        registry,
        mask,
        tokens,
        tls,
        metrics,
        routes: crate::measure::RouteMetrics::default(),
        stopping: AtomicBool::new(false),
        preload_stop: AtomicBool::new(false),
        handed_out: crate::handed_out::HandedOut::default(),
    });
    if let Some(s) = &state.snowflake {
        s.start()?;
    }
    if state.segments.is_some() {
        let for_thread = Arc::clone(&state);
        std::thread::Builder::new()
            .name("ferroflake-serve-preload".into())
            .spawn(move || {
                if let Some(s) = &for_thread.segments {
                    s.preload(&for_thread.preload_stop);
                }
            })
            .map_err(|e| format!("cannot start the preload: {e}"))?;
    }
    Ok(state)
}

/// Serves on `listener` until `stop` resolves, then drains and gives everything back.
async fn serve(
    state: Arc<AppState>,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> StopReport {
    let app = crate::routes::router(Arc::clone(&state));
    let probes = crate::routes::probes(Arc::clone(&state));
    let (stop_tx, stop_rx) = watch::channel(false);
    let upkeep_state = Arc::clone(&state);
    let upkeep = tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep_state.metrics.upkeep();
        }
    });
    let serving = Arc::clone(&state);
    let mut server = tokio::spawn(async move {
        crate::connections::serve(listener, &serving, app, probes, stop_rx).await;
    });
    tokio::select! {
        () = stop => {}
        // Never before the stop, but if it did, the stop below still gives everything back.
        _ = &mut server => tracing::error!(event = "serve_failed", "the HTTP server ended"),
    }
    state.stopping.store(true, Ordering::SeqCst);
    state.preload_stop.store(true, Ordering::SeqCst);
    tracing::info!(
        event = "stopping",
        "stop requested: no new connections; closing idle and half-sent ones; finishing \
         requests in flight"
    );
    let _ = stop_tx.send(true);
    let timeout = state.config.shutdown_timeout();
    let drained = if server.is_finished() {
        true
    } else {
        match tokio::time::timeout(timeout, &mut server).await {
            Ok(_) => true,
            Err(_) => {
                tracing::warn!(
                    event = "drain_timeout",
                    timeout_ms = timeout.as_millis() as u64,
                    "requests still in flight at the stop timeout; stopping anyway"
                );
                false
            }
        }
    };
    upkeep.abort();
    let closing = Arc::clone(&state);
    let report = tokio::task::spawn_blocking(move || give_back(&closing, drained))
        .await
        .unwrap_or_default();
    tracing::info!(event = "stopped", drained, "server stopped");
    report
}

/// Steps 3 and 4 of the stop.
fn give_back(state: &AppState, drained: bool) -> StopReport {
    if let Some(registry) = &state.registry {
        registry.close();
    }
    let segments = state.segments.as_ref().map(|s| s.shutdown());
    let lease = state.snowflake.as_ref().map(|s| {
        s.shutdown(Duration::from_secs(2)).map_err(|e| {
            tracing::warn!(event = "lease_release_failed", error = %e,
                "releasing the node id failed; it lapses after its TTL");
            e.to_string()
        })
    });
    StopReport {
        drained,
        segments,
        lease,
    }
}

fn runtime(config: &Config) -> Result<tokio::runtime::Runtime, String> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("ferroflake-serve");
    if config.workers > 0 {
        builder.worker_threads(config.workers);
    }
    builder
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, String> {
    let listener =
        std::net::TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    Ok(listener)
}

/// A server bound to its address, with its stores open and its lease being claimed, that
/// serves once [`Server::run_until`] is called.
pub struct Server {
    addr: SocketAddr,
    state: Arc<AppState>,
    runtime: tokio::runtime::Runtime,
    listener: std::net::TcpListener,
    summary: String,
}

impl Server {
    /// Checks `config`, listens on its address (port 0 for any free port), opens the
    /// store, and starts the lease and the preload.
    ///
    /// # Errors
    /// Settings that cannot work, a store that cannot be opened, an address in use.
    pub fn bind(config: Config) -> Result<Self, String> {
        // Before the bind: an address the settings refuse is never opened.
        config.check()?;
        let listener = bind(config.listen)?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the listening address: {e}"))?;
        let runtime = runtime(&config)?;
        let summary = format!(
            "snowflake={} segment={} layout={} preload={:?}",
            config.snowflake, config.segment, config.layout, config.preload
        );
        let state = prepare(config)?;
        Ok(Server {
            addr,
            state,
            runtime,
            listener,
            summary,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The shared state (readiness, metrics, the allocator, the reloads).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Serves until `shutdown` resolves, then stops as the module docs say and reports
    /// what the stop did. Blocks the calling thread, which drives the server's runtime.
    pub fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> StopReport {
        let Server {
            addr,
            state,
            runtime,
            listener,
            summary,
        } = self;
        runtime.block_on(async move {
            let listener = match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::error!(event = "serve_failed", error = %e, "cannot serve on the listener");
                    let closing = Arc::clone(&state);
                    return tokio::task::spawn_blocking(move || give_back(&closing, true))
                        .await
                        .unwrap_or_default();
                }
            };
            let registry = state.snowflake.as_ref().map(|s| s.registry());
            let store = state.segments.as_ref().map(|s| s.label().to_owned());
            tracing::info!(event = "started", %addr, registry = ?registry, store = ?store, "{summary}");
            serve(state, listener, shutdown).await
        })
    }
}

/// A server running on threads of its own, for embedding and tests.
pub struct RunningServer {
    addr: SocketAddr,
    state: Arc<AppState>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<StopReport>>,
}

impl RunningServer {
    /// Starts a server with `config` (listen on port 0 for any free port) and returns once
    /// it accepts connections. It may not be ready yet: see `/readyz`.
    ///
    /// # Errors
    /// Settings that cannot work, a store that cannot be opened, an address in use.
    pub fn start(config: Config) -> Result<Self, String> {
        let server = Server::bind(config)?;
        let (addr, state) = (server.addr(), Arc::clone(server.state()));
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ferroflake-serve-main".into())
            .spawn(move || {
                server.run_until(async move {
                    let _ = stop_rx.await;
                })
            })
            .map_err(|e| format!("cannot start the server thread: {e}"))?;
        Ok(RunningServer {
            addr,
            state,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr`, or `https://addr` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.state.tls() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The shared state (readiness, metrics, the allocator).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Stops as the module docs say and reports what the stop did.
    pub fn stop(mut self) -> StopReport {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> StopReport {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread.join().unwrap_or_default(),
            None => StopReport::default(),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

/// Sets up logging: `RUST_LOG` filters (default `info`), lines as text or JSON, to stderr.
/// A line that cannot be written (stderr closed, full, or a reader gone) is dropped: the
/// service goes on and stops as it would, rather than panic reporting the failure on the
/// same stderr.
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .log_internal_errors(false)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
