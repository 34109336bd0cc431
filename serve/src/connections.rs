//! Accepting and holding connections, within bounds, and closing them at a stop.
//!
//! - **A connection limit.** At most
//!   [`Config::max_connections`](crate::Config::max_connections) at once (fewer if the
//!   open-file limit leaves room for fewer: see [`open_files`](crate::open_files)). A
//!   connection over it is answered `503` with `Retry-After`, unread, and closed; it is
//!   counted (`ferroflake_http_connections_refused_total`) and logged at most once a
//!   second, with how many were refused since the last line.
//! - **Probes at the limit.** Beyond the limit, [`PROBE_RESERVE`] more connections are
//!   held for probes: each is answered one request, `/healthz` and `/readyz` as usual and
//!   anything else `503 TOO_MANY_CONNECTIONS` (counted as refused), and its head must
//!   come within [`PROBE_HEAD_TIMEOUT`]; one peer address holds at most
//!   [`PROBE_RESERVE_PER_PEER`] of them. So a server its clients keep at the limit is not
//!   taken for dead by its orchestrator's liveness probe, and a client that holds the
//!   limit from one address cannot hold the reserve too. Past the reserve, a connection is
//!   refused as above.
//! - **A header-read timeout.** Hyper's timer runs from the moment a connection waits for
//!   a request head, a new connection or a kept-alive one between requests, to the end of
//!   that head: a client that sends nothing, or its head a byte at a time, is closed
//!   after [`Config::header_read_timeout_ms`](crate::Config::header_read_timeout_ms). So
//!   it is the idle keep-alive timeout too.
//! - **Small heads.** A head larger than [`MAX_HEAD_BYTES`] is refused (431), so a
//!   connection's buffer stays small.
//! - **Accept errors never spin.** Each is counted (`ferroflake_http_accept_errors_total`)
//!   and logged at most once a second; one that is not about a single connection (out of
//!   file descriptors, of memory) pauses accepting, from 10 ms doubling to 1 s, so that
//!   the loop waits for a descriptor to be freed rather than retrying at full speed.
//! - **A drain that waits only for answers.** At the stop the listener closes; idle
//!   connections close at once, and so do those that never completed a request head (a
//!   half-sent request has no answer to wait for); a connection whose request is being
//!   answered gets its answer, then closes.
//! - **TLS within the same bounds** (with [`Tls`]). The handshake runs on the connection's
//!   task: it holds a connection slot, it and the first request head must end within one
//!   header-read timeout from the accept (counted as a header timeout), and a stop cuts it
//!   at once. A failed handshake is counted
//!   (`ferroflake_http_tls_handshake_failures_total`, by `reason`) and logged at most
//!   once a second. A connection over the limit is closed unanswered: a plain-text 503
//!   means nothing to a TLS client.
//!
//! The request timeout and the body bound are tower layers on the router: see
//! [`routes`](crate::routes).

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::Router;
use futures_util::future::Either;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics::{Counter, Gauge};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_io_timeout::TimeoutStream;
use tower::ServiceExt;

use crate::app_state::AppState;
use crate::fast_lane;
use crate::metrics::{
    ACCEPT_ERRORS, CONNECTIONS_LIMIT, CONNECTIONS_OPEN, CONNECTIONS_REFUSED, HEADER_TIMEOUTS,
    TLS_HANDSHAKE_FAILURES,
};
use crate::tls::Tls;

/// Connections held beyond the limit for `/healthz` and `/readyz` (see the module docs).
pub const PROBE_RESERVE: usize = 8;

/// The most connections of the probe reserve one peer address holds: a liveness and a
/// readiness probe at once. So a client that holds the limit from one address cannot hold
/// the reserve too.
pub const PROBE_RESERVE_PER_PEER: usize = 2;

/// The longest a connection of the probe reserve may take to send its request head.
pub const PROBE_HEAD_TIMEOUT: Duration = Duration::from_secs(1);

/// The largest request head (request line and headers) a connection buffers.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The pause after an accept error that is not about one connection: doubling, bounded.
const PAUSE_FIRST: Duration = Duration::from_millis(10);
const PAUSE_LAST: Duration = Duration::from_secs(1);

/// How often a repeated event (a refused connection, an accept error) is logged at most.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` (over TLS if `state` has it; the requests the
/// fast lane (`fast_lane.rs`) can answer at once without `app`), and `probes` to
/// connections over the limit, until `stop` turns true, then closes the listener and
/// returns once every connection has closed (see the module docs for which wait).
pub async fn serve(
    listener: TcpListener,
    state: &Arc<AppState>,
    app: Router,
    probes: Router,
    mut stop: watch::Receiver<bool>,
) {
    let config = &state.config;
    let metrics = &state.metrics;
    let tls = state.tls.clone();
    let limit = crate::open_files::connection_limit(
        config.max_connections,
        crate::open_files::soft_limit(),
    );
    if limit < config.max_connections {
        tracing::warn!(
            event = "connection_limit_lowered",
            limit,
            max_connections = config.max_connections,
            "the open-file limit leaves room for fewer connections than max_connections"
        );
    }
    metrics.gauge(CONNECTIONS_LIMIT, &[]).set(limit as f64);
    let permits = Arc::new(Semaphore::new(limit));
    let header_read_timeout = Duration::from_millis(config.header_read_timeout_ms);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_buf_size(MAX_HEAD_BYTES);
    let handshakes = tls.map(|tls| {
        Arc::new(Handshakes {
            tls,
            timeout: header_read_timeout,
            failed: HANDSHAKE_FAILURES
                .map(|reason| metrics.counter(TLS_HANDSHAKE_FAILURES, &[("reason", reason)])),
            log: Mutex::new(Throttled::default()),
        })
    });
    // Unread, a 503 in plain text is noise to a TLS client: it finds the connection closed.
    let busy = if handshakes.is_some() {
        Vec::new()
    } else {
        busy_answer(limit)
    };
    let probe_timeout = header_read_timeout.min(PROBE_HEAD_TIMEOUT);
    let mut probe_http = http.clone();
    probe_http
        .header_read_timeout(probe_timeout)
        .keep_alive(false);
    let probe_handshakes = handshakes.as_ref().map(|h| {
        Arc::new(Handshakes {
            tls: Arc::clone(&h.tls),
            timeout: probe_timeout,
            failed: h.failed.clone(),
            log: Mutex::new(Throttled::default()),
        })
    });
    let shared = Arc::new(Shared {
        http,
        app,
        lane: Some(Arc::clone(state)),
        handshakes,
        open: metrics.gauge(CONNECTIONS_OPEN, &[]),
        header_timeouts: metrics.counter(HEADER_TIMEOUTS, &[]),
        write_timeout: header_read_timeout,
    });
    let probing = Arc::new(Shared {
        http: probe_http,
        app: probes,
        lane: None,
        handshakes: probe_handshakes,
        open: metrics.gauge(CONNECTIONS_OPEN, &[]),
        header_timeouts: metrics.counter(HEADER_TIMEOUTS, &[]),
        write_timeout: probe_timeout,
    });
    let reserve = Arc::new(Reserve::default());
    let refused = metrics.counter(CONNECTIONS_REFUSED, &[("reason", "limit")]);
    let mut refusals = Throttled::default();
    let mut accept_errors = Throttled::default();
    let mut pause = PAUSE_FIRST;
    loop {
        let accepted = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                pause = PAUSE_FIRST;
                let slot = match Arc::clone(&permits).try_acquire_owned() {
                    Ok(permit) => Some((Slot::Main(permit), &shared)),
                    Err(_) => reserve.take(peer.ip()).map(|slot| (slot, &probing)),
                };
                match slot {
                    Some((permit, shared)) => {
                        let shared = Arc::clone(shared);
                        let stop = stop.clone();
                        tokio::spawn(async move {
                            shared.hold(stream, peer, stop).await;
                            drop(permit);
                        });
                    }
                    None => {
                        refused.increment(1);
                        // Unread: the answer fits the empty send buffer; a client that
                        // sent a body may see a reset instead.
                        if !busy.is_empty() {
                            let _ = stream.try_write(&busy);
                        }
                        drop(stream);
                        if let Some(since) = refusals.due() {
                            tracing::warn!(event = "connections_refused", limit,
                                refused = since,
                                "at the connection limit: new connections are answered 503 and closed");
                        }
                    }
                }
            }
            Err(e) => {
                let kind = error_kind(&e);
                metrics
                    .counter(ACCEPT_ERRORS, &[("kind", kind)])
                    .increment(1);
                let per_connection = is_per_connection(&e);
                if let Some(since) = accept_errors.due() {
                    tracing::error!(event = "accept_failed", kind, error = %e, failures = since,
                        pause_ms = if per_connection { 0 } else { pause.as_millis() as u64 },
                        "cannot accept a connection");
                }
                if !per_connection {
                    tokio::select! {
                        () = stopped(&mut stop) => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(PAUSE_LAST);
                }
            }
        }
    }
    drop(listener);
    // Every permit back: every connection closed.
    let all = u32::try_from(limit).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
    let _ = reserve.permits.acquire_many(PROBE_RESERVE as u32).await;
}

/// What holds a connection's place, given back when dropped: a slot under the limit, or
/// one of the reserve's.
#[allow(dead_code)] // held for what dropping it gives back
enum Slot {
    Main(tokio::sync::OwnedSemaphorePermit),
    Reserve(ReserveSlot),
}

/// The probe reserve's slots, and how many each peer address holds.
struct Reserve {
    permits: Arc<Semaphore>,
    per_peer: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Default for Reserve {
    fn default() -> Self {
        Reserve {
            permits: Arc::new(Semaphore::new(PROBE_RESERVE)),
            per_peer: Arc::default(),
        }
    }
}

impl Reserve {
    /// A slot for `peer`, if the reserve has one and `peer` holds fewer than
    /// [`PROBE_RESERVE_PER_PEER`].
    fn take(&self, peer: IpAddr) -> Option<Slot> {
        let mut per_peer = self.per_peer.lock().unwrap_or_else(PoisonError::into_inner);
        let held = per_peer.entry(peer).or_insert(0);
        if *held >= PROBE_RESERVE_PER_PEER {
            return None;
        }
        let permit = Arc::clone(&self.permits).try_acquire_owned().ok()?;
        *held += 1;
        Some(Slot::Reserve(ReserveSlot {
            _permit: permit,
            peer,
            per_peer: Arc::clone(&self.per_peer),
        }))
    }
}

/// A reserve slot; given back, with its peer's count, when dropped.
struct ReserveSlot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    peer: IpAddr,
    per_peer: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for ReserveSlot {
    fn drop(&mut self) {
        let mut per_peer = self.per_peer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = per_peer.get_mut(&self.peer) {
            *held -= 1;
            if *held == 0 {
                per_peer.remove(&self.peer);
            }
        }
    }
}

/// Resolves once `stop` is true (or its sender is gone, which is a stop too).
/// Resolves at `deadline` if no request head has completed by then; never otherwise.
async fn first_head_missed(deadline: Option<tokio::time::Instant>, answering: &AtomicBool) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
        if !answering.load(Ordering::Relaxed) {
            return;
        }
    }
    std::future::pending::<()>().await;
}

async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard it returns is dropped here: it must not be held across an await.
    let _ = stop.wait_for(|stop| *stop).await;
}

/// What every connection task shares.
struct Shared {
    http: hyper::server::conn::http1::Builder,
    app: Router,
    /// The state the fast lane answers from, ahead of `app`; `None`: `app` answers all.
    lane: Option<Arc<AppState>>,
    /// With TLS: the handshake before HTTP.
    handshakes: Option<Arc<Handshakes>>,
    open: Gauge,
    header_timeouts: Counter,
    /// How long a write may wait for the client to take what was sent: a client that
    /// pipelines requests and reads none of the answers is closed then, rather than hold
    /// its slot for good.
    write_timeout: Duration,
}

/// The `reason` labels of [`TLS_HANDSHAKE_FAILURES`], in [`Handshakes::failed`]'s order.
const HANDSHAKE_FAILURES: [&str; 3] = ["timeout", "closed", "protocol"];

/// TLS: the pair in force, the handshake's bound, its failures.
struct Handshakes {
    tls: Arc<Tls>,
    timeout: Duration,
    failed: [Counter; 3],
    log: Mutex<Throttled>,
}

impl Handshakes {
    /// Counts a failed handshake (`reason`: an index into [`HANDSHAKE_FAILURES`]) and
    /// logs it, at most once a second.
    fn failed(&self, reason: usize, peer: SocketAddr, error: &dyn std::fmt::Display) {
        self.failed[reason].increment(1);
        let due = self
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .due();
        if let Some(since) = due {
            tracing::warn!(event = "tls_handshake_failed", reason = HANDSHAKE_FAILURES[reason],
                %peer, error = %error, failures = since,
                "TLS handshake failed; connection closed");
        }
    }
}

impl Shared {
    /// Serves one connection until it closes, or until the stop closes it.
    async fn hold(&self, stream: TcpStream, peer: SocketAddr, mut stop: watch::Receiver<bool>) {
        self.open.increment(1.0);
        let _ = stream.set_nodelay(true);
        let mut stream = TimeoutStream::new(stream);
        stream.set_write_timeout(Some(self.write_timeout));
        let stream = Box::pin(stream);
        match &self.handshakes {
            None => self.answer(stream, &mut stop, None).await,
            Some(handshakes) => {
                // The handshake and the first request head share one header-read timeout,
                // so a client cannot take it twice by spending it on each in turn.
                let first_head_by = tokio::time::Instant::now() + handshakes.timeout;
                let handshake = tokio::time::timeout_at(
                    first_head_by,
                    handshakes.tls.acceptor().accept(stream),
                );
                let done = tokio::select! {
                    done = handshake => Some(done),
                    // Mid-handshake: no request to answer, closed now.
                    () = stopped(&mut stop) => None,
                };
                match done {
                    Some(Ok(Ok(stream))) => {
                        self.answer(stream, &mut stop, Some(first_head_by)).await;
                    }
                    Some(Ok(Err(e))) => {
                        let reason = match e.kind() {
                            io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::ConnectionReset
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::BrokenPipe => 1,
                            _ => 2,
                        };
                        handshakes.failed(reason, peer, &e);
                    }
                    Some(Err(_)) => {
                        self.header_timeouts.increment(1);
                        let within =
                            format!("no handshake within {} ms", handshakes.timeout.as_millis());
                        handshakes.failed(0, peer, &within);
                    }
                    None => {}
                }
            }
        }
        self.open.decrement(1.0);
    }

    /// Serves HTTP on an accepted (and with TLS, handshaken) connection. With
    /// `first_head_by`, a connection whose first request head is not complete by then is
    /// closed (hyper's own header-read timer starts only once HTTP does).
    async fn answer<S>(
        &self,
        stream: S,
        stop: &mut watch::Receiver<bool>,
        first_head_by: Option<tokio::time::Instant>,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        // Set once the connection has completed a request head: from then on the stop
        // waits for its answer.
        let answering = Arc::new(AtomicBool::new(false));
        let app = self.app.clone();
        let lane = self.lane.clone();
        let seen = Arc::clone(&answering);
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            seen.store(true, Ordering::Relaxed);
            match lane
                .as_deref()
                .and_then(|state| fast_lane::answer(state, &request))
            {
                Some(answer) => Either::Left(std::future::ready(Ok(answer))),
                None => Either::Right(app.clone().oneshot(request.map(axum::body::Body::new))),
            }
        });
        let connection = self.http.serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        let result = tokio::select! {
            result = connection.as_mut() => result,
            () = first_head_missed(first_head_by, &answering) => {
                self.header_timeouts.increment(1);
                Ok(())
            }
            () = stopped(stop) => {
                if answering.load(Ordering::Relaxed) {
                    // Idle: closes now; answering: closes after the answer.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                } else {
                    // No complete request head: nothing to answer.
                    Ok(())
                }
            }
        };
        if let Err(e) = result {
            if e.is_timeout() {
                self.header_timeouts.increment(1);
            }
            tracing::debug!(event = "connection_error", error = %e, "connection closed on an error");
        }
    }
}

/// Counts events and says when one should be logged: the first, then at most one per
/// [`LOG_EVERY`], each with how many happened since the last line.
#[derive(Default)]
struct Throttled {
    last: Option<Instant>,
    since: u64,
}

impl Throttled {
    fn due(&mut self) -> Option<u64> {
        self.since += 1;
        if self.last.is_some_and(|at| at.elapsed() < LOG_EVERY) {
            return None;
        }
        self.last = Some(Instant::now());
        Some(std::mem::take(&mut self.since))
    }
}

/// The answer to a connection over the limit, in the JSON shape of every refusal.
fn busy_answer(limit: usize) -> Vec<u8> {
    let body = serde_json::json!({ "error": {
        "kind": "TOO_MANY_CONNECTIONS",
        "message": format!("the server holds its limit of {limit} connections; retry shortly"),
    }})
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Errors about one connection (it was reset before it was accepted): accepting goes on.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// A metric label for an accept error: a small, fixed set.
fn error_kind(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(code) if code == rustix::io::Errno::MFILE.raw_os_error() => "too_many_open_files",
        Some(code) if code == rustix::io::Errno::NFILE.raw_os_error() => "system_open_files",
        Some(code) if code == rustix::io::Errno::NOBUFS.raw_os_error() => "no_buffers",
        Some(code) if code == rustix::io::Errno::NOMEM.raw_os_error() => "no_memory",
        _ if is_per_connection(e) => "connection",
        _ => "other",
    }
}
