//! The server's lease registry, over HTTP: the routes that a `ferroflake+http://`
//! registry calls, so that a client claims, renews and releases a node id through the
//! service and issues snowflake IDs under it in its own memory, as it would with the
//! registry itself. The registry is the one `--lease` names (the service's own, which its
//! snowflake mode also leases from); a server started without `--lease` serves none, since
//! the default registry is this host's alone.
//!
//! | route | body | answer |
//! |---|---|---|
//! | `POST /v1/store/lease/claim` | `{"node_count","ttl_ms","quarantine_ms","max_ttl_ms","holder","prefer_node"}` | `{"grant":{"node_id","token","epoch","previous_high_water_ms","floor_wait_ms"}}` |
//! | `POST /v1/store/lease/renew` | `{"grant":{..},"ttl_ms","high_water_ms","clock_skew_ms"}` | `{"renewed":true}` |
//! | `POST /v1/store/lease/release` | `{"grant":{..},"high_water_ms"}` | `{"released":true}` |
//! | `POST /v1/store/lease/restored` | `{"window_ms"}` | `{"floor_ms"}` |
//! | `POST /v1/store/lease/reserve` | `{"node_id","holder"}` | `{"reservation"}`: `reserved`, `already reserved` or `held` ([`Reservation::as_str`]) |
//! | `POST /v1/store/lease/unreserve` | `{"node_id","high_water_ms"}` | `{"unreserved":true}` |
//! | `GET /v1/store/lease/list` | | the registry's node ids, as `GET /v1/admin/leases` shows them |
//! | `GET /v1/store/lease/clock` | | `{"wall_clock_ms"}` (null where the registry keeps no clock, as etcd) |
//!
//! Each answer also carries `"registry"`: the registry's locator (its kind and where its
//! records are, never a secret) and the id it keeps in its records, where it keeps one, so
//! that a client can tell servers of two registries apart.
//! `prefer_node` and `clock_skew_ms` may be null. Durations are whole milliseconds; the
//! service rounds a floor up.
//!
//! The owner token of a grant is a secret: it travels in a `POST` body only, never in a
//! URL, and no log line, metric or refusal holds it (a registry's message that quoted it
//! would have it replaced by `***`).
//!
//! Every route needs the scope `issue:*` (or `admin`) when the server has tokens: a node
//! id issues snowflake IDs for every key, and there are few of them, so a token scoped to
//! some keys may neither hold one nor use them up. `restored` needs `admin`: it holds every
//! claim off for a floor, which only an operator who lost the records may ask for; so do
//! `reserve` and `unreserve`, which hold an id off every claim for another generator and
//! give it back. A grant with a reservation's token ([`RESERVED_TOKEN`]) is refused by
//! `renew` and `release`: only `unreserve` lifts a reservation.
//!
//! Refusals keep the registry's kinds ([`LeaseError::name`]): 409 `LOST` with `"why"`
//! ([`Loss::name`]: `MISSING`, `TAKEN`, `EXPIRED`, `RELEASED`), 409 `NO_FREE_NODE`, 400
//! `INVALID_CONFIG`, 503 `UNAVAILABLE` with `Retry-After`, 500 `STORE` (and any other
//! kind); 400 `BAD_PARAMETER` for a body that is not a JSON object or a field missing or
//! of the wrong type, 400 `UNKNOWN_PARAMETER` for a field or query parameter the route does
//! not read; 404 `MODE_OFF` on a server without `--lease`. The registry is called on the
//! blocking pool: registries block.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use ferroflake::{Clock, SystemClock};
use ferroflake_lease::protocol::RESERVED_TOKEN;
use ferroflake_lease::{
    check_unreserve_mark, Grant, LeaseError, LeaseRequest, Loss, Registry, Renewal, Reservation,
};
use ferroflake_lease_stores::RegistryAddress;
use serde_json::{json, Map, Value};

use crate::app_state::AppState;
use crate::issue::{refused, Mode};
use crate::query::Params;
use crate::refusal::Refusal;
use crate::routes::json_response;

type Shared = Arc<AppState>;

/// The registry the lease routes serve: `--lease`'s, opened at its first call (on the
/// blocking pool), and again after an open that failed; closed at the stop.
pub struct ServedRegistry {
    address: RegistryAddress,
    opened: Mutex<Opened>,
}

enum Opened {
    Not,
    Open(Arc<dyn Registry>),
    Closed,
}

impl ServedRegistry {
    /// The registry at `address`, not opened yet.
    pub fn new(address: RegistryAddress) -> Self {
        ServedRegistry {
            address,
            opened: Mutex::new(Opened::Not),
        }
    }

    /// The registry, opened if it is not yet. Blocks: call it off the async workers.
    fn get(&self) -> Result<Arc<dyn Registry>, LeaseError> {
        let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
        match &*opened {
            Opened::Open(registry) => return Ok(Arc::clone(registry)),
            Opened::Closed => {
                return Err(LeaseError::Unavailable {
                    registry: self.address.describe(),
                    detail: "the service is stopping".to_owned(),
                })
            }
            Opened::Not => {}
        }
        let registry = self.address.open()?;
        *opened = Opened::Open(Arc::clone(&registry));
        Ok(registry)
    }

    /// Lets the registry go, here rather than wherever the server's state is dropped: a
    /// store client may hold a runtime of its own, which must not be dropped on an async
    /// worker. Blocks: call it off the async workers. Calls after it are refused.
    pub fn close(&self) {
        let registry = {
            let mut opened = self.opened.lock().unwrap_or_else(|p| p.into_inner());
            std::mem::replace(&mut *opened, Opened::Closed)
        };
        drop(registry);
    }
}

/// A refusal of a lease route, and the loss it reports.
struct LeaseRefusal(Refusal, Option<Loss>);

impl From<Refusal> for LeaseRefusal {
    fn from(refusal: Refusal) -> Self {
        LeaseRefusal(refusal, None)
    }
}

/// A registry's refusal, its message without `token`.
fn lease_refusal(e: &LeaseError, token: Option<&str>) -> LeaseRefusal {
    let (status, retry, why) = match e {
        LeaseError::Lost { why, .. } => (StatusCode::CONFLICT, false, Some(*why)),
        LeaseError::NoFreeNode { .. } => (StatusCode::CONFLICT, false, None),
        _ if e.is_invalid_input() => (StatusCode::BAD_REQUEST, false, None),
        LeaseError::Unavailable { .. } => (StatusCode::SERVICE_UNAVAILABLE, true, None),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, false, None),
    };
    let mut message = e.to_string();
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        message = message.replace(token, "***");
    }
    LeaseRefusal(
        Refusal {
            status,
            kind: e.name(),
            message,
            retry,
        },
        why,
    )
}

/// A route's answer: `body` with the registry's locator, or the refusal, counted.
fn answer(state: &AppState, result: Result<Value, LeaseRefusal>) -> Response {
    match result {
        Ok(body) => json_response(StatusCode::OK, body.to_string()),
        Err(LeaseRefusal(refusal, why)) => {
            refused(state, Mode::Snowflake, refusal).json_with(why.map(Loss::name))
        }
    }
}

/// How the answers name the registry: its locator, and the id it keeps in its records
/// where it keeps one (one directory path on two hosts is two registries).
fn served_as(registry: &dyn Registry) -> String {
    match registry.identity() {
        Some(id) => format!("{} #{id}", registry.locator()),
        None => registry.locator(),
    }
}

/// What every lease route does: no query parameters; the body's fields (only `known`
/// ones), read by `read`; then `call` with the registry on the blocking pool. The answer
/// is `call`'s object with `"registry"` added.
async fn on_the_registry<P: Send + 'static>(
    state: &AppState,
    query: Option<&str>,
    body: Option<Result<Bytes, BytesRejection>>,
    known: &[&str],
    read: impl FnOnce(&Map<String, Value>) -> Result<P, Refusal>,
    call: impl FnOnce(&dyn Registry, P) -> Result<Value, LeaseError> + Send + 'static,
    token: impl FnOnce(&P) -> Option<String>,
) -> Result<Value, LeaseRefusal> {
    Params::parse_only(query, &[])?;
    let fields = match body {
        None => Map::new(),
        Some(bytes) => object(bytes, known)?,
    };
    let params = read(&fields)?;
    let token = token(&params);
    let served = state
        .registry
        .clone()
        .ok_or_else(|| LeaseRefusal::from(registry_off()))?;
    let done = tokio::task::spawn_blocking(move || {
        let registry = served.get()?;
        let mut answer = call(&*registry, params)?;
        answer["registry"] = served_as(&*registry).into();
        Ok(answer)
    })
    .await
    .unwrap_or_else(|e| {
        Err(LeaseError::Unavailable {
            registry: "serve".to_owned(),
            detail: format!("the registry call failed: {e}"),
        })
    });
    done.map_err(|e| lease_refusal(&e, token.as_deref()))
}

/// 404 `MODE_OFF`: the server was started without `--lease`.
fn registry_off() -> Refusal {
    Refusal {
        status: StatusCode::NOT_FOUND,
        kind: "MODE_OFF",
        message: "this server serves no lease registry: start it with --lease ADDRESS (the \
                  default registry is this host's alone)"
            .to_owned(),
        retry: false,
    }
}

/// The body as a JSON object with only `known` fields. No message quotes the body: a
/// grant's token is in it.
fn object(
    body: Result<Bytes, BytesRejection>,
    known: &[&str],
) -> Result<Map<String, Value>, Refusal> {
    let bytes = body
        .map_err(|_| Refusal::bad_input("BAD_PARAMETER", "the request body could not be read"))?;
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(Refusal::bad_input(
            "BAD_PARAMETER",
            format!(
                "the body must be a JSON object with the fields {}",
                known.join(", ")
            ),
        ));
    };
    if fields.keys().any(|name| !known.contains(&name.as_str())) {
        return Err(Refusal::bad_input(
            "UNKNOWN_PARAMETER",
            format!(
                "the body has a field this route does not read; it reads {}",
                known.join(", ")
            ),
        ));
    }
    Ok(fields)
}

fn wrong(field: &str, what: &str) -> Refusal {
    Refusal::bad_input("BAD_PARAMETER", format!("the field {field} must be {what}"))
}

fn number(fields: &Map<String, Value>, field: &str) -> Result<u64, Refusal> {
    fields
        .get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| wrong(field, "a whole number"))
}

fn millis(fields: &Map<String, Value>, field: &str) -> Result<Duration, Refusal> {
    number(fields, field).map(Duration::from_millis)
}

fn grant(fields: &Map<String, Value>) -> Result<Grant, Refusal> {
    let Some(Value::Object(grant)) = fields.get("grant") else {
        return Err(wrong("grant", "an object, as the claim answered it"));
    };
    let token = grant
        .get("token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty() && *t != RESERVED_TOKEN)
        .ok_or_else(|| wrong("grant.token", "the claim's token"))?;
    Ok(Grant {
        node_id: number(grant, "node_id")?,
        token: token.to_owned(),
        epoch: number(grant, "epoch")?,
        previous_high_water_ms: number(grant, "previous_high_water_ms")?,
        floor_wait: millis(grant, "floor_wait_ms")?,
    })
}

/// `d` in whole milliseconds, rounded up: a client waits no less than the registry said.
fn ms_up(d: Duration) -> u64 {
    u64::try_from(d.as_micros().div_ceil(1000)).unwrap_or(u64::MAX)
}

/// `POST /v1/store/lease/claim`.
pub(crate) async fn claim(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &[
            "node_count",
            "ttl_ms",
            "quarantine_ms",
            "max_ttl_ms",
            "holder",
            "prefer_node",
        ],
        |f| {
            let prefer_node = match f.get("prefer_node") {
                None | Some(Value::Null) => None,
                Some(_) => Some(number(f, "prefer_node")?),
            };
            Ok(LeaseRequest {
                node_count: number(f, "node_count")?,
                ttl: millis(f, "ttl_ms")?,
                quarantine: millis(f, "quarantine_ms")?,
                max_ttl: millis(f, "max_ttl_ms")?,
                holder: f
                    .get("holder")
                    .and_then(Value::as_str)
                    .ok_or_else(|| wrong("holder", "a string"))?
                    .to_owned(),
                prefer_node,
            })
        },
        |registry, request| {
            let grant = registry.acquire(&request)?;
            Ok(json!({
                "grant": {
                    "node_id": grant.node_id,
                    "token": grant.token,
                    "epoch": grant.epoch,
                    "previous_high_water_ms": grant.previous_high_water_ms,
                    "floor_wait_ms": ms_up(grant.floor_wait),
                }
            }))
        },
        |_| None,
    )
    .await;
    answer(&state, result)
}

/// `POST /v1/store/lease/renew`.
pub(crate) async fn renew(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &["grant", "ttl_ms", "high_water_ms", "clock_skew_ms"],
        |f| {
            let clock_skew_ms = match f.get("clock_skew_ms") {
                None | Some(Value::Null) => None,
                Some(skew) => Some(
                    skew.as_i64()
                        .ok_or_else(|| wrong("clock_skew_ms", "a whole number or null"))?,
                ),
            };
            let renewal = Renewal {
                ttl: millis(f, "ttl_ms")?,
                high_water_ms: number(f, "high_water_ms")?,
                clock_skew_ms,
            };
            Ok((grant(f)?, renewal))
        },
        |registry, (grant, renewal)| {
            registry.renew(&grant, &renewal)?;
            Ok(json!({ "renewed": true }))
        },
        |(grant, _)| Some(grant.token.clone()),
    )
    .await;
    answer(&state, result)
}

/// `POST /v1/store/lease/release`.
pub(crate) async fn release(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &["grant", "high_water_ms"],
        |f| Ok((grant(f)?, number(f, "high_water_ms")?)),
        |registry, (grant, high_water_ms)| {
            registry.release(&grant, high_water_ms)?;
            Ok(json!({ "released": true }))
        },
        |(grant, _)| Some(grant.token.clone()),
    )
    .await;
    answer(&state, result)
}

/// `POST /v1/store/lease/restored`.
pub(crate) async fn restored(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &["window_ms"],
        |f| millis(f, "window_ms"),
        |registry, window| {
            let floor = registry.restored(window)?;
            tracing::warn!(
                event = "lease_restored",
                window_ms = ms_up(window),
                floor_ms = ms_up(floor),
                "a client said the registry was restored: every claim waits out the floor"
            );
            Ok(json!({ "floor_ms": ms_up(floor) }))
        },
        |_| None,
    )
    .await;
    answer(&state, result)
}

/// `POST /v1/store/lease/reserve`.
pub(crate) async fn reserve(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &["node_id", "holder"],
        |f| {
            let holder = f
                .get("holder")
                .and_then(Value::as_str)
                .ok_or_else(|| wrong("holder", "a string"))?;
            Ok((number(f, "node_id")?, holder.to_owned()))
        },
        |registry, (node_id, holder)| {
            let reservation: Reservation = registry.reserve(node_id, &holder)?;
            if reservation == Reservation::Made {
                tracing::warn!(
                    event = "lease_reserved",
                    node_id,
                    "a client reserved a node id: no claim takes it until it is unreserved"
                );
            }
            Ok(json!({ "reservation": reservation.as_str() }))
        },
        |_| None,
    )
    .await;
    answer(&state, result)
}

/// `POST /v1/store/lease/unreserve`.
pub(crate) async fn unreserve(
    State(state): State<Shared>,
    RawQuery(query): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        Some(body),
        &["node_id", "high_water_ms"],
        |f| Ok((number(f, "node_id")?, number(f, "high_water_ms")?)),
        |registry, (node_id, high_water_ms)| {
            check_unreserve_mark(high_water_ms, SystemClock.now_ms())?;
            registry.unreserve(node_id, high_water_ms)?;
            Ok(json!({ "unreserved": true }))
        },
        |_| None,
    )
    .await;
    answer(&state, result)
}

/// `GET /v1/store/lease/list`.
pub(crate) async fn list(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        None,
        &[],
        |_| Ok(()),
        |registry, ()| {
            Ok(registry
                .list()?
                .to_json(&registry.locator(), registry.name()))
        },
        |_| None,
    )
    .await;
    answer(&state, result)
}

/// `GET /v1/store/lease/clock`.
pub(crate) async fn clock(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let result = on_the_registry(
        &state,
        query.as_deref(),
        None,
        &[],
        |_| Ok(()),
        |registry, ()| Ok(json!({ "wall_clock_ms": registry.wall_clock_ms()? })),
        |_| None,
    )
    .await;
    answer(&state, result)
}
