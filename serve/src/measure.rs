//! Every matched request's clock: it is timed and counted by route and status, and it
//! ends with a 503 `TIMEOUT` at the server's request deadline.
//!
//! One layer, written for the path every ID takes: it boxes nothing, takes no lock once a
//! route's handles exist, and arms the deadline's timer only when the request first has
//! to wait, so an ID answered at once never touches the timer wheel.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::http::StatusCode;
use axum::response::Response;
use tokio::time::Sleep;
use tower::{Layer, Service};

use crate::app_state::AppState;
use crate::auth::is_leaf;
use crate::metrics::{Metrics, REQUESTS, REQUEST_SECONDS, REQUEST_TIMEOUTS};
use crate::refusal::Refusal;
use crate::routes::ROUTES;

/// The route label of requests no route matched.
const UNMATCHED: &str = "unmatched";

/// Per-route latency histograms and per-route, per-status counters, each registered on
/// its first use (so `/metrics` lists only what happened).
pub struct RouteMetrics {
    routes: HashMap<&'static str, Arc<RouteHandles>>,
    unmatched: Arc<RouteHandles>,
}

struct RouteHandles {
    route: &'static str,
    latency: OnceLock<metrics::Histogram>,
    ok: OnceLock<metrics::Counter>,
    timeouts: OnceLock<metrics::Counter>,
    others: RwLock<Vec<(StatusCode, metrics::Counter)>>,
}

impl RouteHandles {
    fn new(route: &'static str) -> Arc<Self> {
        Arc::new(RouteHandles {
            route,
            latency: OnceLock::new(),
            ok: OnceLock::new(),
            timeouts: OnceLock::new(),
            others: RwLock::new(Vec::new()),
        })
    }

    fn record(&self, metrics: &Metrics, status: StatusCode, took: Duration) {
        self.latency
            .get_or_init(|| metrics.histogram(REQUEST_SECONDS, &[("route", self.route)]))
            .record(took.as_secs_f64());
        if status == StatusCode::OK {
            self.ok
                .get_or_init(|| self.counter(metrics, status))
                .increment(1);
            return;
        }
        {
            let others = self.others.read().unwrap_or_else(|p| p.into_inner());
            if let Some((_, counter)) = others.iter().find(|(s, _)| *s == status) {
                counter.increment(1);
                return;
            }
        }
        let mut others = self.others.write().unwrap_or_else(|p| p.into_inner());
        if !others.iter().any(|(s, _)| *s == status) {
            others.push((status, self.counter(metrics, status)));
        }
        if let Some((_, counter)) = others.iter().find(|(s, _)| *s == status) {
            counter.increment(1);
        }
    }

    fn counter(&self, metrics: &Metrics, status: StatusCode) -> metrics::Counter {
        metrics.counter(
            REQUESTS,
            &[("route", self.route), ("status", status.as_str())],
        )
    }
}

impl Default for RouteMetrics {
    fn default() -> Self {
        RouteMetrics {
            routes: ROUTES.iter().map(|r| (*r, RouteHandles::new(r))).collect(),
            unmatched: RouteHandles::new(UNMATCHED),
        }
    }
}

impl RouteMetrics {
    fn handles(&self, route: Option<&MatchedPath>) -> &Arc<RouteHandles> {
        route
            .and_then(|r| self.routes.get(r.as_str()))
            .unwrap_or(&self.unmatched)
    }

    /// Times and counts an answer of the route `template` given without the router.
    pub(crate) fn record(
        &self,
        metrics: &Metrics,
        template: &str,
        status: StatusCode,
        took: Duration,
    ) {
        self.routes
            .get(template)
            .unwrap_or(&self.unmatched)
            .record(metrics, status, took);
    }
}

/// The layer over `state`'s routes.
#[derive(Clone)]
pub struct MeasureLayer {
    state: Arc<AppState>,
}

impl MeasureLayer {
    pub fn new(state: Arc<AppState>) -> Self {
        MeasureLayer { state }
    }
}

impl<S> Layer<S> for MeasureLayer {
    type Service = Measure<S>;

    fn layer(&self, inner: S) -> Measure<S> {
        Measure {
            inner,
            state: Arc::clone(&self.state),
        }
    }
}

/// A route's service, timed, counted and bounded by the request deadline.
#[derive(Clone)]
pub struct Measure<S> {
    inner: S,
    state: Arc<AppState>,
}

impl<S> Service<Request> for Measure<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Measured<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let began = Instant::now();
        let handles = Arc::clone(
            self.state
                .routes
                .handles(request.extensions().get::<MatchedPath>()),
        );
        Measured {
            inner: self.inner.call(request),
            deadline: None,
            began,
            handles,
            state: Arc::clone(&self.state),
        }
    }
}

pin_project_lite::pin_project! {
    /// The route's answer, or a 503 `TIMEOUT` once the deadline passes.
    pub struct Measured<F> {
        #[pin]
        inner: F,
        // Boxed and armed on the first wait: a request answered at once pays for neither.
        deadline: Option<Pin<Box<Sleep>>>,
        began: Instant,
        handles: Arc<RouteHandles>,
        state: Arc<AppState>,
    }
}

impl<F, E> Future for Measured<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.poll(cx) {
            Poll::Ready(Ok(response)) => response,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {
                let config = &this.state.config;
                let deadline = this.deadline.get_or_insert_with(|| {
                    let at = *this.began + config.request_timeout();
                    Box::pin(tokio::time::sleep_until(at.into()))
                });
                if deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let route = this.handles.route;
                this.handles
                    .timeouts
                    .get_or_init(|| {
                        this.state
                            .metrics
                            .counter(REQUEST_TIMEOUTS, &[("route", route)])
                    })
                    .increment(1);
                timed_out(config.request_timeout_ms, route)
            }
        };
        this.handles
            .record(&this.state.metrics, response.status(), this.began.elapsed());
        Poll::Ready(Ok(response))
    }
}

fn timed_out(limit_ms: u64, route: &str) -> Response {
    let refusal = Refusal::unavailable(
        "TIMEOUT",
        format!("the request took longer than this server's limit of {limit_ms} ms"),
    );
    if is_leaf(route) {
        refusal.text()
    } else {
        refusal.json()
    }
}
