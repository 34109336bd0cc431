//! One Prometheus registry per server, rendered at `/metrics`.
//!
//! The recorder is held by the server rather than installed process-wide, so that two
//! servers in one process (the tests run several) keep their own counts. Handles are taken
//! from it once where the hot path needs them (per key) and are then a single atomic add.

use metrics::{Counter, Gauge, Histogram, Key, Label, Metadata, Recorder, SharedString, Unit};
use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// IDs issued, by `mode` (`snowflake`, `segment`) and `key`.
pub const IDS_ISSUED: &str = "ferroflake_ids_issued_total";
/// Requests answered, by `route` (the route's template) and `status`.
pub const REQUESTS: &str = "ferroflake_http_requests_total";
/// Requests cut short at the request deadline (answered 503 `TIMEOUT`), by `route`.
pub const REQUEST_TIMEOUTS: &str = "ferroflake_http_request_timeouts_total";
/// Request latency in seconds, by `route`.
pub const REQUEST_SECONDS: &str = "ferroflake_http_request_duration_seconds";
/// Refusals, by `mode` and `kind` (the error's stable name).
pub const REFUSALS: &str = "ferroflake_refusals_total";
/// Segment fetches from the store, by `key` and `outcome` (`ok`, `error`).
pub const FETCHES: &str = "ferroflake_segment_fetches_total";
/// Segment fetch latency in seconds, by `key`.
pub const FETCH_SECONDS: &str = "ferroflake_segment_fetch_duration_seconds";
/// Store calls that failed, by `op` (`allocate`, `peek`, `give_back`) and `kind`.
pub const STORE_ERRORS: &str = "ferroflake_store_errors_total";
/// IDs in memory per segment key.
pub const RUNWAY_IDS: &str = "ferroflake_segment_runway_ids";
/// How long a key's runway lasts at its recent rate, in seconds (absent until known).
pub const RUNWAY_SECONDS: &str = "ferroflake_segment_runway_seconds";
/// A key's current step.
pub const STEP: &str = "ferroflake_segment_step";
/// 1 if a preloaded key has its first segment.
pub const KEY_LOADED: &str = "ferroflake_segment_key_loaded";
/// 1 for the lease's current state (`state`: `none`, `held`, `failing`, `lost`,
/// `released`), 0 for the others.
pub const LEASE_STATE: &str = "ferroflake_lease_state";
/// The leased node id (absent without a lease).
pub const LEASE_NODE: &str = "ferroflake_lease_node_id";
/// The generator's fence, Unix ms: no ID is issued at or past it.
pub const LEASE_FENCE_MS: &str = "ferroflake_lease_fence_ms";
/// The high-water mark the registry holds for the lease, Unix ms.
pub const LEASE_MARK_MS: &str = "ferroflake_lease_reserved_high_water_ms";
/// The lease's clock minus its registry's at the last renewal, in seconds (absent where
/// the registry reports no clock). Beyond the limit nothing is issued.
pub const LEASE_CLOCK_SKEW: &str = "ferroflake_lease_clock_skew_seconds";
/// 1 while the server reports ready.
pub const READY: &str = "ferroflake_ready";
/// HTTP connections open now.
pub const CONNECTIONS_OPEN: &str = "ferroflake_http_connections_open";
/// The most HTTP connections the server holds at once (`max_connections`, or fewer if
/// the open-file limit leaves room for fewer).
pub const CONNECTIONS_LIMIT: &str = "ferroflake_http_connections_limit";
/// Connections refused at the limit (answered 503 and closed, unread).
pub const CONNECTIONS_REFUSED: &str = "ferroflake_http_connections_refused_total";
/// Connections closed because a request head did not arrive in time.
pub const HEADER_TIMEOUTS: &str = "ferroflake_http_header_timeouts_total";
/// `accept` failures, by `kind` (the OS error's kind, e.g. `too_many_open_files`).
pub const ACCEPT_ERRORS: &str = "ferroflake_http_accept_errors_total";
/// TLS handshakes that did not complete, by `reason`: `timeout` (not done within the
/// header-read timeout; also counted in [`HEADER_TIMEOUTS`]), `closed` (the client
/// closed or reset the connection), `protocol` (not TLS, or TLS the server refuses).
pub const TLS_HANDSHAKE_FAILURES: &str = "ferroflake_http_tls_handshake_failures_total";

/// The lease states [`LEASE_STATE`] reports.
pub const LEASE_STATES: [&str; 5] = ["none", "held", "failing", "lost", "released"];

static META: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// Latency buckets, in seconds: 50 µs to 2.5 s.
const BUCKETS: [f64; 14] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 2.5,
];

/// A server's registry.
pub struct Metrics {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl Metrics {
    /// An empty registry, with every metric described.
    pub fn new() -> Self {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("seconds".to_owned()), &BUCKETS)
            .expect("the buckets are not empty")
            .build_recorder();
        let handle = recorder.handle();
        let metrics = Metrics { recorder, handle };
        metrics.describe();
        metrics
    }

    fn describe(&self) {
        let counters = [
            (IDS_ISSUED, "IDs issued, by mode and key"),
            (REQUESTS, "HTTP requests answered, by route and status"),
            (
                REQUEST_TIMEOUTS,
                "HTTP requests cut short at the request deadline, by route",
            ),
            (REFUSALS, "Requests refused, by mode and error kind"),
            (
                FETCHES,
                "Segment fetches from the store, by key and outcome",
            ),
            (
                STORE_ERRORS,
                "Failed store calls, by operation and error kind",
            ),
            (
                CONNECTIONS_REFUSED,
                "Connections refused at the connection limit",
            ),
            (
                HEADER_TIMEOUTS,
                "Connections closed: no complete request head in time",
            ),
            (ACCEPT_ERRORS, "Failed accepts, by error kind"),
            (
                TLS_HANDSHAKE_FAILURES,
                "TLS handshakes that did not complete, by reason",
            ),
        ];
        for (name, help) in counters {
            self.recorder
                .describe_counter(name.into(), None, SharedString::from(help));
        }
        let histograms = [
            (REQUEST_SECONDS, "HTTP request latency, by route"),
            (FETCH_SECONDS, "Segment fetch latency, by key"),
        ];
        for (name, help) in histograms {
            self.recorder.describe_histogram(
                name.into(),
                Some(Unit::Seconds),
                SharedString::from(help),
            );
        }
        let gauges = [
            (RUNWAY_IDS, "IDs in memory per segment key"),
            (
                RUNWAY_SECONDS,
                "Seconds the runway lasts at the recent rate",
            ),
            (STEP, "Current segment step per key"),
            (KEY_LOADED, "1 once a preloaded key has its first segment"),
            (LEASE_STATE, "1 for the lease's current state"),
            (LEASE_NODE, "The leased node id"),
            (
                LEASE_FENCE_MS,
                "No snowflake ID is issued at or past this time (Unix ms)",
            ),
            (
                LEASE_MARK_MS,
                "The high-water mark reserved at the registry (Unix ms)",
            ),
            (READY, "1 while /readyz answers 200"),
            (CONNECTIONS_OPEN, "HTTP connections open now"),
            (CONNECTIONS_LIMIT, "The most HTTP connections held at once"),
        ];
        for (name, help) in gauges {
            self.recorder
                .describe_gauge(name.into(), None, SharedString::from(help));
        }
    }

    /// The counter `name` with `labels`.
    pub fn counter(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Counter {
        self.recorder.register_counter(&key(name, labels), &META)
    }

    /// The gauge `name` with `labels`.
    pub fn gauge(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Gauge {
        self.recorder.register_gauge(&key(name, labels), &META)
    }

    /// The histogram `name` with `labels`.
    pub fn histogram(&self, name: &'static str, labels: &[(&'static str, &str)]) -> Histogram {
        self.recorder.register_histogram(&key(name, labels), &META)
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self) -> String {
        self.handle.render()
    }

    /// Drains histogram samples into their buckets; called now and then so that memory
    /// stays bounded between scrapes.
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

fn key(name: &'static str, labels: &[(&'static str, &str)]) -> Key {
    let labels: Vec<Label> = labels
        .iter()
        .map(|(k, v)| Label::new(*k, (*v).to_owned()))
        .collect();
    Key::from_parts(name, labels)
}
