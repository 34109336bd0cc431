//! The admin routes: the open keys, and a key created or recovered through the server's
//! own store. They need the `admin` scope when the server has tokens (no other scope
//! reaches them), and are open on loopback without tokens, as every route is.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/admin/keys` | `{"store","keys":[..],"opening":[..]}`: each open key's status as `GET /v1/segment/{key}/status` gives it |
//! | `GET /v1/admin/leases` | the lease registry's node ids (holder, state, expiry, high-water mark, the floor) as `ferroflake lease list --format json` prints them |
//! | `POST /v1/admin/segment/{key}[?start=N&step=S]` | 201 `{"key","start","step"}`: the key created with its first ID (default 1) and step (default 1,000) |
//! | `POST /v1/admin/segment/{key}/recover?above=N[&step=S]` | 200 `{"key","max_id","step","open_here"}`: the key raised above `N`; if this server stopped it as `REWOUND`, it issues again from the raised row |
//! | `POST /v1/admin/segment/{key}/step?step=S` | 200 `{"key","max_id","step","open_here"}`: the key's stored step set, `max_id` left alone |
//!
//! | refusal | status, kind |
//! |---|---|
//! | a parameter missing or not a whole number | 400 `BAD_PARAMETER` |
//! | a key or step the store cannot hold, a start below 1 | 400 `INVALID_KEY`, `INVALID_CONFIG` |
//! | create: the key has a row | 409 `KEY_EXISTS` |
//! | create: the key had a row that went above `start` | 409 `REWOUND`, with the store's message |
//! | step: the key has no row | 404 `UNKNOWN_KEY` (409 `REWOUND` if it had one that is gone) |
//! | segment mode off | 404 `MODE_OFF` |
//! | the store cannot serve | 503 `UNAVAILABLE`, `Retry-After` |
//!
//! A recovery never lowers a key: the row ends at the highest of `above + 1`, the row and
//! the key's mark. A key open on this server keeps issuing from the segments it holds,
//! which are below the raised row; a key that this server refuses as `REWOUND` stays
//! refused until the server restarts (`open_here` says whether the key is open here).
//! Every allocator of the key, this server's included, learns a step set at its next
//! fetch and sizes the fetches after it by it (never below the stored step).

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use ferroflake_segment::{KeyRecord, SegmentError, SegmentStore};
use serde_json::json;

use crate::app_state::AppState;
use crate::issue::{refused, segment_off, snowflake_off, Mode};
use crate::query::Params;
use crate::refusal::Refusal;
use crate::routes::{json_response, key_from, status_json};

type Shared = Arc<AppState>;

/// A segment admin or store route's answer: `body` with `status`, or the refusal,
/// counted.
pub(crate) fn segment_answer(
    state: &AppState,
    status: StatusCode,
    result: Result<serde_json::Value, Refusal>,
) -> Response {
    match result {
        Ok(body) => json_response(status, body.to_string()),
        Err(refusal) => refused(state, Mode::Segment, refusal).json(),
    }
}

/// `GET /v1/admin/leases`: the lease registry's node ids, read off the async workers.
pub(crate) async fn leases(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    if let Err(refusal) = Params::parse_only(query.as_deref(), &[]) {
        return refused(&state, Mode::Snowflake, refusal).json();
    }
    let Some(snowflake) = state.snowflake.clone() else {
        return refused(&state, Mode::Snowflake, snowflake_off()).json();
    };
    let listed = tokio::task::spawn_blocking(move || snowflake.list_registry()).await;
    match listed {
        Ok(Ok(body)) => json_response(StatusCode::OK, body.to_string()),
        Ok(Err(e)) => {
            let refusal = Refusal::unavailable(e.name(), format!("cannot list the registry: {e}"));
            refused(&state, Mode::Snowflake, refusal).json()
        }
        Err(e) => {
            let refusal =
                Refusal::unavailable("STORE", format!("listing the registry failed: {e}"));
            refused(&state, Mode::Snowflake, refusal).json()
        }
    }
}

/// `GET /v1/admin/keys`.
pub(crate) async fn keys(State(state): State<Shared>, RawQuery(query): RawQuery) -> Response {
    if let Err(refusal) = Params::parse_only(query.as_deref(), &[]) {
        return refused(&state, Mode::Segment, refusal).json();
    }
    match &state.segments {
        None => refused(&state, Mode::Segment, segment_off()).json(),
        Some(s) => {
            let body = json!({
                "store": s.label(),
                "keys": s.status().iter().map(status_json).collect::<Vec<_>>(),
                "opening": s.opening(),
            });
            json_response(StatusCode::OK, body.to_string())
        }
    }
}

/// `POST /v1/admin/segment/{key}?start=N&step=S`.
pub(crate) async fn create(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let (key, (start, step), ()) = on_the_key(
            &state,
            path,
            query.as_deref(),
            &["start", "step"],
            |q| {
                Ok((
                    q.number::<i64>("start")?
                        .unwrap_or(ferroflake_segment::DEFAULT_START),
                    q.number("step")?
                        .unwrap_or(ferroflake_segment::DEFAULT_STEP),
                ))
            },
            |store, key, (start, step)| store.create(key, start, step),
        )
        .await?;
        tracing::info!(
            event = "admin_key_created",
            key,
            start,
            step,
            "segment key created"
        );
        Ok::<_, Refusal>(json!({ "key": key, "start": start.to_string(), "step": step }))
    }
    .await;
    segment_answer(&state, StatusCode::CREATED, result)
}

/// `POST /v1/admin/segment/{key}/recover?above=N[&step=S]`.
pub(crate) async fn recover(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let (key, (above, _), row) = on_the_key(
            &state,
            path,
            query.as_deref(),
            &["above", "step"],
            |q| {
                // A row made again takes the default step, as `ferroflake segment recover`.
                let step = q
                    .number("step")?
                    .unwrap_or(ferroflake_segment::DEFAULT_STEP);
                Ok((q.required_number::<u64>("above")?, step))
            },
            |store, key, (above, step)| store.recover(key, above, step),
        )
        .await?;
        // A key this server stopped as REWOUND fetches again: its next range must still
        // start above every ID it issued, or it stops again.
        let resumed = state
            .segments
            .as_ref()
            .and_then(|s| s.cached(&key))
            .is_some_and(|open| open.handle.resume_after_rewind());
        tracing::warn!(
            event = "admin_key_recovered",
            key,
            above,
            max_id = row.max_id,
            resumed,
            "segment key recovered: its next range starts at max_id"
        );
        Ok::<_, Refusal>(row_json(&state, &key, row))
    }
    .await;
    segment_answer(&state, StatusCode::OK, result)
}

/// `POST /v1/admin/segment/{key}/step?step=S`.
pub(crate) async fn set_step(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = async {
        let (key, step, row) = on_the_key(
            &state,
            path,
            query.as_deref(),
            &["step"],
            |q| q.required_number::<u64>("step"),
            |store, key, step| store.set_step(key, step),
        )
        .await?;
        tracing::info!(
            event = "admin_step_set",
            key,
            step,
            "segment key's step set"
        );
        Ok::<_, Refusal>(row_json(&state, &key, row))
    }
    .await;
    segment_answer(&state, StatusCode::OK, result)
}

/// A key's row after a change, and whether the key is open on this server.
fn row_json(state: &AppState, key: &str, row: KeyRecord) -> serde_json::Value {
    let open_here = state
        .segments
        .as_ref()
        .is_some_and(|s| s.cached(key).is_some());
    json!({
        "key": key,
        "max_id": row.max_id.to_string(),
        "step": row.step,
        "open_here": open_here,
    })
}

pub(crate) fn store(state: &AppState) -> Result<Arc<dyn SegmentStore>, Refusal> {
    let segments = state.segments.as_ref().ok_or_else(segment_off)?;
    Ok(Arc::clone(segments.store()))
}

/// What every route on one key of the store does first: the key from the path, the
/// parameters `read` takes from the query (only `known` ones may be there), then `call`
/// with the store, the key and those parameters on the blocking pool. A bad key or
/// parameter is refused before the store is called; the store's refusals are
/// [`store_refusal`]s.
pub(crate) async fn on_the_key<P, T>(
    state: &AppState,
    path: Result<Path<String>, PathRejection>,
    query: Option<&str>,
    known: &[&str],
    read: impl FnOnce(&Params) -> Result<P, Refusal>,
    call: impl FnOnce(&dyn SegmentStore, &str, P) -> Result<T, SegmentError> + Send + 'static,
) -> Result<(String, P, T), Refusal>
where
    P: Copy + Send + 'static,
    T: Send + 'static,
{
    let key = key_from(path)?;
    let params = read(&Params::parse_only(query, known)?)?;
    let store = store(state)?;
    let owned = key.clone();
    let done = on_the_store(move || call(&*store, &owned, params))
        .await
        .map_err(|e| store_refusal(&e))?;
    Ok((key, params, done))
}

/// Runs a store call on the blocking pool: stores block.
pub(crate) async fn on_the_store<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, SegmentError> + Send + 'static,
) -> Result<T, SegmentError> {
    tokio::task::spawn_blocking(call).await.unwrap_or_else(|e| {
        Err(SegmentError::Unavailable {
            store: "serve".to_owned(),
            detail: format!("the store call failed: {e}"),
        })
    })
}

/// A store's refusal of an admin or store call: a conflict with the key's row is 409,
/// not the 503 an ID request gets for a rewound key.
pub(crate) fn store_refusal(e: &SegmentError) -> Refusal {
    match e {
        SegmentError::KeyExists { .. } | SegmentError::Rewound { .. } => Refusal {
            status: StatusCode::CONFLICT,
            kind: e.name(),
            message: e.to_string(),
            retry: false,
        },
        other => Refusal::segment(other),
    }
}
