//! The routes: Leaf-compatible, native (`/v1`), and operations.
//!
//! | route | answer |
//! |---|---|
//! | any method but `HEAD` and `CONNECT` `/api/segment/get/{key}` | Leaf: the next segment ID as decimal text |
//! | any method but `HEAD` and `CONNECT` `/api/snowflake/get/{key}` | Leaf: the next snowflake ID as decimal text |
//! | `GET /v1/segment/{key}?count=N` | `{"mode","key","ids":["..",..]}` |
//! | `GET /v1/snowflake/{key}?count=N` | `{"mode","key","node","layout","ids":["..",..]}` |
//! | `GET /v1/segment/{key}/status` | an open key's range, next segment, step, runway, counters (404 `KEY_NOT_OPEN` for a key not open: a status never opens one) |
//! | `GET /v1/decode/{id}?layout=NAME[&as=PEER]` | time, node, sequence and shard of a snowflake ID; `NAME` a preset or a layout spelling (`+` as `%2B`); with `as`, the parts as another library shows them ([`PeerParts`], 400 `BAD_VIEW` for another name) |
//! | any method `/decodeSnowflakeId?snowflakeId=N` | Leaf: `{"timestamp":"MS(yyyy-MM-dd HH:mm:ss.SSS)","workerId":"..","sequenceId":".."}` in the server's layout, the time in UTC |
//! | `GET /v1/masked/{segment,snowflake}/{key}?count=N&format=F` | masked IDs (see [`masked`](crate::masked)) |
//! | `GET /v1/unmask/{text}?format=F` | the ID behind a masked ID, with the server's key |
//! | `GET /v1/status` | lease, every open segment key, and the keys opening now |
//! | `GET /v1/admin/keys` | admin: every open segment key's status (see [`admin`](crate::admin)) |
//! | `GET /v1/admin/leases` | admin: the lease registry's node ids, as `ferroflake lease list --format json` shows them |
//! | `POST /v1/admin/segment/{key}?start=N&step=S` | admin: creates a key in the store (201; 409 `KEY_EXISTS`, `REWOUND`) |
//! | `POST /v1/admin/segment/{key}/recover?above=N[&step=S]` | admin: raises a key above `N`, never lowers it |
//! | `POST /v1/admin/segment/{key}/step?step=S` | admin: sets a key's stored step |
//! | `POST /v1/store/segment/{key}/allocate?step=N`, `.../give-back?...`, `GET /v1/store/segment/{key}` | the segment store itself, for clients that issue from ranges (see [`remote_store`](crate::remote_store)) |
//! | `POST /v1/store/lease/{claim,renew,release,restored,reserve,unreserve}` (a JSON body), `GET /v1/store/lease/{list,clock}` | the lease registry itself (`--lease`'s), for clients that issue under a node id of their own (see [`remote_registry`](crate::remote_registry)) |
//! | `GET /v1/constant` | a constant: the HTTP stack alone, for benchmarks |
//! | `GET /metrics` | Prometheus text format |
//! | `GET /healthz` | 200 while the process serves HTTP |
//! | `GET /readyz` | 200 once the lease is held and preloaded keys are loaded, else 503 |
//!
//! `HEAD` and `CONNECT` on a route that issues IDs are 405: their answers have no body, so
//! the IDs would be used up unseen.
//!
//! Query strings are read one way by every route that reads one ([`query`](crate::query)):
//! a parameter given twice is 400 `REPEATED_PARAMETER`, and on `/v1` one the route does not
//! read is 400 `UNKNOWN_PARAMETER`.
//!
//! With a tokens file, every route but `/healthz` and `/readyz` needs a bearer token with
//! a scope that covers it: see [`scopes`](crate::scopes) and [`auth`].
//!
//! Every refusal is JSON (`{"error":{"kind","message"}}`) except on the Leaf routes
//! (`/api/...` and `/decodeSnowflakeId`),
//! whose refusals are plain text as Leaf's are: a method a `/v1` route does not take is
//! 405 `METHOD_NOT_ALLOWED` with `Allow`; a request that takes longer than `request_timeout_ms` is 503
//! `TIMEOUT`; a body over [`MAX_BODY_BYTES`] (only the lease store routes read one) is 413
//! `BODY_TOO_LARGE`; an unknown path is 404 `NO_ROUTE`, counted under the one route label
//! `unmatched`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::handler::Handler;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post, MethodRouter};
use axum::Router;
use ferroflake::{Format, Layout, PeerParts};
use ferroflake_segment::{KeyStatus, Range};
use serde_json::{json, Value};
use tower_http::limit::RequestBodyLimitLayer;

use crate::app_state::AppState;
use crate::auth;
use crate::issue::{self, check_key, refused, Mode};
use crate::layer_answers::LayerAnswersLayer;
use crate::measure::MeasureLayer;
use crate::metrics::{CONNECTIONS_REFUSED, READY};
use crate::query::Params;
use crate::refusal::Refusal;

type Shared = Arc<AppState>;

/// Every route's path, as the router matches it: the list `ferroflake serve --help`
/// shows. The router takes each path through a check that it is listed here, so a route
/// missing here fails every test that builds one.
pub const ROUTES: &[&str] = &[
    "/api/segment/get/{key}",
    "/api/snowflake/get/{key}",
    "/v1/segment/{key}",
    "/v1/segment/{key}/status",
    "/v1/snowflake/{key}",
    "/v1/decode/{id}",
    "/decodeSnowflakeId",
    "/v1/masked/segment/{key}",
    "/v1/masked/snowflake/{key}",
    "/v1/unmask/{text}",
    "/v1/status",
    "/v1/admin/keys",
    "/v1/admin/leases",
    "/v1/admin/segment/{key}",
    "/v1/admin/segment/{key}/recover",
    "/v1/admin/segment/{key}/step",
    "/v1/store/segment/{key}",
    "/v1/store/segment/{key}/allocate",
    "/v1/store/segment/{key}/give-back",
    "/v1/store/lease/claim",
    "/v1/store/lease/renew",
    "/v1/store/lease/release",
    "/v1/store/lease/restored",
    "/v1/store/lease/reserve",
    "/v1/store/lease/unreserve",
    "/v1/store/lease/list",
    "/v1/store/lease/clock",
    "/v1/constant",
    "/metrics",
    "/healthz",
    "/readyz",
];

/// `path`, once checked (in debug builds) to be in [`ROUTES`].
fn listed(path: &'static str) -> &'static str {
    debug_assert!(ROUTES.contains(&path), "{path} is not in routes::ROUTES");
    path
}

/// The largest request body accepted. Only the lease store routes read a body (a small JSON
/// object); Leaf clients may send a small form.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The router over `state`.
pub fn router(state: Shared) -> Router {
    let mut measured = Router::new()
        .route(listed("/api/segment/get/{key}"), leaf_issuing(leaf_segment))
        .route(
            listed("/api/snowflake/get/{key}"),
            leaf_issuing(leaf_snowflake),
        )
        .route(listed("/v1/segment/{key}"), get_issuing(v1_segment))
        .route(listed("/v1/segment/{key}/status"), get(v1_segment_status))
        .route(listed("/v1/snowflake/{key}"), get_issuing(v1_snowflake))
        .route(listed("/v1/decode/{id}"), get(v1_decode))
        .route(listed("/decodeSnowflakeId"), any(leaf_decode))
        .route(
            listed("/v1/masked/segment/{key}"),
            get_issuing(crate::masked::masked_segment),
        )
        .route(
            listed("/v1/masked/snowflake/{key}"),
            get_issuing(crate::masked::masked_snowflake),
        )
        .route(listed("/v1/unmask/{text}"), get(crate::masked::unmask))
        .route(listed("/v1/status"), get(v1_status))
        .route(listed("/v1/admin/keys"), get(crate::admin::keys))
        .route(listed("/v1/admin/leases"), get(crate::admin::leases))
        .route(
            listed("/v1/admin/segment/{key}"),
            post(crate::admin::create),
        )
        .route(
            listed("/v1/admin/segment/{key}/recover"),
            post(crate::admin::recover),
        )
        .route(
            listed("/v1/admin/segment/{key}/step"),
            post(crate::admin::set_step),
        )
        .route(
            listed("/v1/store/segment/{key}"),
            get(crate::remote_store::peek),
        )
        .route(
            listed("/v1/store/segment/{key}/allocate"),
            post(crate::remote_store::allocate),
        )
        .route(
            listed("/v1/store/segment/{key}/give-back"),
            post(crate::remote_store::give_back),
        )
        .route(
            listed("/v1/store/lease/claim"),
            post(crate::remote_registry::claim),
        )
        .route(
            listed("/v1/store/lease/renew"),
            post(crate::remote_registry::renew),
        )
        .route(
            listed("/v1/store/lease/release"),
            post(crate::remote_registry::release),
        )
        .route(
            listed("/v1/store/lease/restored"),
            post(crate::remote_registry::restored),
        )
        .route(
            listed("/v1/store/lease/reserve"),
            post(crate::remote_registry::reserve),
        )
        .route(
            listed("/v1/store/lease/unreserve"),
            post(crate::remote_registry::unreserve),
        )
        .route(
            listed("/v1/store/lease/list"),
            get(crate::remote_registry::list),
        )
        .route(
            listed("/v1/store/lease/clock"),
            get(crate::remote_registry::clock),
        )
        .route(listed("/metrics"), get(metrics))
        .route(listed("/healthz"), get(healthz))
        .route(listed("/readyz"), get(readyz));
    // Outside the measuring layer: the floor the benchmark compares against.
    let mut floor = Router::new().route(listed("/v1/constant"), get(constant));
    // Only with tokens: a server without them pays nothing per request. Inside the
    // measuring layer, so that 401s and 403s are counted per route.
    if state.tokens.is_some() {
        let authorize = || auth::AuthorizeLayer::new(Arc::clone(&state));
        measured = measured.route_layer(authorize());
        floor = floor.route_layer(authorize());
    }
    let measure = || MeasureLayer::new(Arc::clone(&state));
    measured
        .route_layer(measure())
        .fallback(not_found.layer(measure()))
        .merge(floor)
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(LayerAnswersLayer)
        .with_state(state)
}

/// What a connection of the probe reserve is answered (see
/// [`connections`](crate::connections)): `/healthz` and `/readyz` as on every connection,
/// and for anything else 503 `TOO_MANY_CONNECTIONS`, counted as a refused connection.
pub fn probes(state: Shared) -> Router {
    let refused = state
        .metrics
        .counter(CONNECTIONS_REFUSED, &[("reason", "limit")]);
    Router::new()
        .route(listed("/healthz"), get(healthz))
        .route(listed("/readyz"), get(readyz))
        .fallback(move || {
            refused.increment(1);
            std::future::ready(
                Refusal::unavailable(
                    "TOO_MANY_CONNECTIONS",
                    "the server holds its limit of connections, and answers only /healthz \
                     and /readyz beyond it; retry shortly",
                )
                .json(),
            )
        })
        .with_state(state)
}

/// A Leaf route that issues IDs: any method but `HEAD` and `CONNECT`.
fn leaf_issuing<H: Handler<T, Shared>, T: 'static>(handler: H) -> MethodRouter<Shared> {
    let refused = || async { no_body_no_id().text() };
    any(handler).head(refused).connect(refused)
}

/// A `/v1` route that issues IDs: `GET` alone, and every 405 it answers allows `GET`
/// alone (the router would list `HEAD` beside it).
fn get_issuing<H: Handler<T, Shared>, T: 'static>(handler: H) -> MethodRouter<Shared> {
    let refused = || async { no_body_no_id().json() };
    get(handler)
        .head(refused)
        .connect(refused)
        .fallback(get_only)
}

/// A method a route that issues does not take.
async fn get_only() -> Response {
    let mut answer = Refusal {
        status: StatusCode::METHOD_NOT_ALLOWED,
        kind: "METHOD_NOT_ALLOWED",
        message: METHOD_NOT_ALLOWED.to_owned(),
        retry: false,
    }
    .json();
    answer
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET"));
    answer
}

/// `HEAD` or `CONNECT` on a route that issues: 405. Their answers have no body, so an ID
/// issued for one would be used up unseen.
fn no_body_no_id() -> Refusal {
    Refusal {
        status: StatusCode::METHOD_NOT_ALLOWED,
        kind: "METHOD_NOT_ALLOWED",
        message: "HEAD and CONNECT answers have no body: they would use up IDs without \
                  sending them; use GET"
            .to_owned(),
        retry: false,
    }
}

/// Why a 405: the method is not one the route takes.
pub(crate) const METHOD_NOT_ALLOWED: &str = "this route does not take this method: the Allow \
                                             header lists those it takes (the Leaf routes \
                                             take any method)";

/// The key from the path, or a 400 saying why it cannot be one.
pub(crate) fn key_from(path: Result<Path<String>, PathRejection>) -> Result<String, Refusal> {
    let Path(key) = path.map_err(|e| {
        Refusal::bad_input(
            "INVALID_KEY",
            format!("the key is not valid UTF-8 once percent-decoded ({e})"),
        )
    })?;
    check_key(&key)?;
    Ok(key)
}

/// A Leaf route's answer: the ID as decimal text.
pub(crate) fn text_id(id: u64) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain;charset=UTF-8"),
        )],
        id.to_string(),
    )
        .into_response()
}

pub(crate) fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

async fn leaf_segment(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let result = match key_from(path) {
        Ok(key) => issue::segment_one(&state, &key).await,
        Err(refusal) => Err(refusal),
    };
    match result {
        Ok(id) => text_id(id),
        Err(refusal) => refused(&state, Mode::Segment, refusal).text(),
    }
}

async fn leaf_snowflake(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let result = match key_from(path) {
        Ok(key) => issue::snowflake_one(&state, &key).await,
        Err(refusal) => Err(refusal),
    };
    match result {
        Ok(id) => text_id(id),
        Err(refusal) => refused(&state, Mode::Snowflake, refusal).text(),
    }
}

/// `"ids":["1","2",...]`, written straight into a string: a batch can hold many IDs.
fn push_ids(out: &mut String, ids: impl Iterator<Item = u64>) {
    use std::fmt::Write;
    out.push_str("\"ids\":[");
    for (i, id) in ids.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{id}\"");
    }
    out.push(']');
}

fn json_string(s: &str) -> String {
    Value::from(s).to_string()
}

async fn v1_segment(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let key = key_from(path)?;
        let count = issue::count(
            &Params::parse_only(query.as_deref(), &["count"])?,
            state.config.max_batch,
        )?;
        let ranges = if count == 1 {
            let id = issue::segment_one(&state, &key).await?;
            vec![Range {
                start: id,
                end: id + 1,
            }]
        } else {
            issue::segment_many(&state, &key, count).await?
        };
        Ok::<_, Refusal>((key, ranges))
    }
    .await;
    match result {
        Ok((key, ranges)) => {
            let mut body = format!("{{\"mode\":\"segment\",\"key\":{},", json_string(&key));
            push_ids(&mut body, ranges.iter().flat_map(|r| r.start..r.end));
            body.push('}');
            json_response(StatusCode::OK, body)
        }
        Err(refusal) => refused(&state, Mode::Segment, refusal).json(),
    }
}

async fn v1_snowflake(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let key = key_from(path)?;
        let count = issue::count(
            &Params::parse_only(query.as_deref(), &["count"])?,
            state.config.max_batch,
        )?;
        let (node, ids) = if count == 1 {
            let id = issue::snowflake_one(&state, &key).await?;
            let node = state
                .snowflake
                .as_ref()
                .and_then(|s| s.layout().decode(id).ok())
                .map_or(0, |p| p.node);
            (node, vec![id])
        } else {
            issue::snowflake_many(&state, &key, count).await?
        };
        Ok::<_, Refusal>((key, node, ids))
    }
    .await;
    match result {
        Ok((key, node, ids)) => {
            let layout = state.config.layout.as_str();
            let mut body = format!(
                "{{\"mode\":\"snowflake\",\"key\":{},\"node\":{node},\"layout\":{},",
                json_string(&key),
                json_string(layout)
            );
            push_ids(&mut body, ids.into_iter());
            body.push('}');
            json_response(StatusCode::OK, body)
        }
        Err(refusal) => refused(&state, Mode::Snowflake, refusal).json(),
    }
}

fn range_json(r: &Range) -> Value {
    json!({ "start": r.start.to_string(), "end": r.end.to_string() })
}

/// A key's status with IDs as decimal strings. `current` is the unissued rest of the
/// segment in use, `[start, end)`; `next` the segment fetched ahead, if it is ready.
pub(crate) fn status_json(s: &KeyStatus) -> Value {
    json!({
        "key": s.key,
        "limit": s.limit.to_string(),
        "current": range_json(&s.current),
        "next": s.next.as_ref().map(range_json),
        "next_ready": s.next.is_some(),
        "step": s.step,
        "runway_ids": s.runway_ids.to_string(),
        "runway_secs": s.runway_secs,
        "fetching": s.fetching,
        "last_error": s.last_error.as_ref().map(|e| json!({"kind": e.name(), "message": e.to_string()})),
        "counters": {
            "fetches": s.counters.fetches,
            "fetch_failures": s.counters.fetch_failures,
            "waits": s.counters.waits,
            "not_ready": s.counters.not_ready,
            "store_errors": s.counters.store_errors,
            "switches": s.counters.switches,
        },
    })
}

async fn v1_segment_status(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = Params::parse_only(query.as_deref(), &[])
        .and_then(|_| key_from(path))
        .and_then(|key| issue::open_segment_key(&state, &key))
        .map(|open| open.handle.status());
    match result {
        Ok(status) => json_response(StatusCode::OK, status_json(&status).to_string()),
        Err(refusal) => refused(&state, Mode::Segment, refusal).json(),
    }
}

/// `text` read as a decimal ID of the layout `layout_name` (a preset name or a layout
/// spelling, read by core's [`Layout::parse`]), in the form `view` names: the one path
/// both decode routes take, with all bit math in core.
fn decode_id(text: &str, layout_name: &str, view: Option<&str>) -> Result<String, Refusal> {
    let layout = Layout::parse(layout_name).map_err(|e| {
        Refusal::bad_input(
            "BAD_LAYOUT",
            format!(
                "layout {layout_name:?} is neither a preset ({}) nor a layout spelling: {e}",
                Layout::PRESET_NAMES.join(", ")
            ),
        )
    })?;
    let peer = view
        .map(|name| {
            PeerParts::from_name(name).ok_or_else(|| {
                let shown: String = name.chars().take(40).collect();
                Refusal::bad_input(
                    "BAD_VIEW",
                    format!(
                        "as={shown:?} is not a decode form: one of {}",
                        PeerParts::NAMES.join(", ")
                    ),
                )
            })
        })
        .transpose()?;
    let shown: String = text.chars().take(40).collect();
    let id = Format::Decimal.parse(text).map_err(|e| {
        Refusal::bad_input(
            "BAD_ID",
            format!("{shown:?} is not a decimal 64-bit ID: {e}"),
        )
    })?;
    let not_of_layout = |e: ferroflake::Error| {
        Refusal::bad_input("BAD_ID", format!("{id} is not a {layout_name} ID: {e}"))
    };
    if let Some(peer) = peer {
        return Ok(peer.show(&layout, id).map_err(not_of_layout)?.to_string());
    }
    let parts = layout.decode(id).map_err(not_of_layout)?;
    Ok(json!({
        "id": id.to_string(),
        "layout": layout_name,
        "time": utc_millis(parts.timestamp_ms),
        "timestamp_ms": parts.timestamp_ms,
        "node": parts.node,
        "sequence": parts.sequence,
        "shard": parts.shard,
    })
    .to_string())
}

/// A time in Unix ms as RFC 3339 in UTC, to the millisecond.
fn utc_millis(timestamp_ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + std::time::Duration::from_millis(timestamp_ms))
        .to_string()
}

async fn v1_decode(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = (|| {
        let Path(text) = path.map_err(|e| {
            Refusal::bad_input("BAD_ID", format!("the ID is not valid UTF-8 ({e})"))
        })?;
        let params = Params::parse_only(query.as_deref(), &["layout", "as"])?;
        let layout_name = params.get("layout").unwrap_or(&state.config.layout);
        decode_id(&text, layout_name, params.get("as"))
    })();
    match result {
        Ok(body) => json_response(StatusCode::OK, body),
        Err(refusal) => refused(&state, Mode::Snowflake, refusal).json(),
    }
}

/// Leaf's `/decodeSnowflakeId?snowflakeId=N`, for any method as Leaf maps it: core's
/// [`PeerParts::Leaf`] form for this server's layout (the time in UTC, where Leaf uses its
/// server's zone). Where Leaf answers 200 with an `errorMsg`, a bad or missing ID is a
/// plain-text 400 saying why, as on the other Leaf routes.
async fn leaf_decode(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let result = (|| {
        let params = Params::parse(query.as_deref())?;
        let text = params.get("snowflakeId").ok_or_else(|| {
            Refusal::bad_input(
                "BAD_ID",
                "the query parameter snowflakeId is missing: /decodeSnowflakeId?snowflakeId=ID",
            )
        })?;
        decode_id(text, &state.config.layout, Some(PeerParts::Leaf.name()))
    })();
    match result {
        Ok(body) => json_response(StatusCode::OK, body),
        Err(refusal) => refused(&state, Mode::Snowflake, refusal).text(),
    }
}

fn snowflake_json(state: &AppState) -> Value {
    match &state.snowflake {
        None => Value::Null,
        Some(s) => {
            let generator = s.generator();
            let held = generator.as_ref();
            json!({
                "layout": s.layout_name(),
                "registry": s.registry(),
                "state": s.state(),
                "node": held.map(|g| g.node()),
                "fence_ms": held.and_then(|g| g.generator().fence_ms()),
                "reserved_high_water_ms": held.map(|g| g.reserved_high_water_ms()),
                "clock_skew_ms": held.and_then(|g| g.clock_skew()).map(|r| r.skew_ms),
                "problem": s.readiness().err(),
            })
        }
    }
}

async fn v1_status(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    if let Err(refusal) = Params::parse_only(query.as_deref(), &[]) {
        return refusal.json();
    }
    let segment = match &state.segments {
        None => Value::Null,
        Some(s) => json!({
            "store": s.label(),
            "keys": s.status().iter().map(status_json).collect::<Vec<_>>(),
            "opening": s.opening(),
        }),
    };
    let body = json!({ "snowflake": snowflake_json(&state), "segment": segment });
    json_response(StatusCode::OK, body.to_string())
}

async fn metrics(State(state): State<Shared>) -> Response {
    let state2 = Arc::clone(&state);
    // Reading the allocator's and the lease's state takes their locks: off the workers.
    let text = tokio::task::spawn_blocking(move || {
        state2.refresh_metrics();
        state2.metrics.render()
    })
    .await
    .unwrap_or_default();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        text,
    )
        .into_response()
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(state): State<Shared>) -> Response {
    let (ready, body) = state.readiness();
    state
        .metrics
        .gauge(READY, &[])
        .set(if ready { 1.0 } else { 0.0 });
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut response = json_response(status, body.to_string());
    if !ready && !state.stopping.load(Ordering::SeqCst) {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(1u64));
    }
    response
}

/// The body of `/v1/constant`.
pub(crate) const CONSTANT: &str = "1";

async fn constant() -> &'static str {
    CONSTANT
}

async fn not_found() -> Response {
    Refusal {
        status: StatusCode::NOT_FOUND,
        kind: "NO_ROUTE",
        message: "no such route: IDs are at /api/segment/get/{key}, /api/snowflake/get/{key} \
                  and /v1/..."
            .to_owned(),
        retry: false,
    }
    .json()
}
