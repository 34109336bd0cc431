//! The server's segment store, over HTTP: the routes that a `ferroflake+http://` store
//! calls, so that a client takes whole ranges through the service and issues from them
//! in its own memory, as it would from the store itself. Each needs the `issue` scope of
//! its key when the server has tokens.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/store/segment/{key}/allocate?step=N` | `{"key","start","end","table_step","ticket"}`: the next `N` IDs of the key, `[start, end)`, taken from the table in one update (`start`, `end`, `ticket` as strings) |
//! | `POST /v1/store/segment/{key}/give-back?start=S&end=E&expected_max_id=M[&ticket=T]` | `{"key","given_back":true\|false}`: the caller's unissued top `[S, E)` of the last range this server handed out for the key, shown with that range's ticket, back to the table, only if nobody took a range since (the table still at `M = E`) |
//! | `GET /v1/store/segment/{key}` | `{"key","max_id","step"}`, or `{"key","max_id":null,"step":null}` for a key with no row |
//!
//! Each answer also carries `"table"`: the identity the server's store keeps in its data
//! (null for a store that keeps none, as a service relaying another), so that a client can
//! tell servers of two tables apart.
//!
//! Refusals are the store's, by kind, as [`SegmentError::name`](ferroflake_segment::SegmentError::name) gives it: 404
//! `UNKNOWN_KEY`, 400 `INVALID_KEY` or `INVALID_CONFIG`, 410 `EXHAUSTED`, 409 `REWOUND`,
//! 503 `UNAVAILABLE` with `Retry-After`; 400 `BAD_PARAMETER` for a parameter missing or
//! not a whole number; 404 `MODE_OFF` with segment mode off. Creating, recovering and
//! stepping a key are the admin routes' (see [`admin`](crate::admin)).
//!
//! A range is the caller's once it is answered. One whose answer is lost (the client gave
//! up, the connection broke) is never issued by anyone: the table has moved past it. A
//! give-back needs the range's ticket (kept per key, see `handed_out.rs`): without it,
//! any client of the key could hand another's range out again; one handed out by another
//! server, or before a restart, is not given back.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use ferroflake_segment::{Range, SegmentError};
use serde_json::json;

use crate::admin::{on_the_key, segment_answer};
use crate::app_state::AppState;

type Shared = Arc<AppState>;

/// `POST /v1/store/segment/{key}/allocate?step=N`.
pub(crate) async fn allocate(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = on_the_key(
        &state,
        path,
        query.as_deref(),
        &["step"],
        |q| q.required_number::<u64>("step"),
        |store, key, step| store.allocate(key, step),
    )
    .await
    .map(|(key, _, allocation)| {
        let ticket = state.handed_out.hand_out(&key, allocation.range);
        json!({
            "key": key,
            "start": allocation.range.start.to_string(),
            "end": allocation.range.end.to_string(),
            "table_step": allocation.table_step,
            "ticket": ticket.to_string(),
            "table": table(&state),
        })
    });
    segment_answer(&state, StatusCode::OK, result)
}

/// `POST /v1/store/segment/{key}/give-back?start=S&end=E&expected_max_id=M`.
pub(crate) async fn give_back(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let shared = Arc::clone(&state);
    let result = on_the_key(
        &state,
        path,
        query.as_deref(),
        &["start", "end", "expected_max_id", "ticket"],
        |q| {
            let rest = Range {
                start: q.required_number("start")?,
                end: q.required_number("end")?,
            };
            // A ticket is the range's credential: one nearly right is not said back.
            let ticket = q.number::<u128>("ticket").map_err(|mut refusal| {
                refusal.message = "ticket is not one this service hands out".to_owned();
                refusal
            })?;
            Ok((rest, q.required_number::<u64>("expected_max_id")?, ticket))
        },
        move |store, key, (rest, expected, ticket)| {
            // Only the holder of the last range handed out may move the table back; any
            // other caller is told what the store would tell it, and nothing changes.
            let shown = ticket.is_some_and(|t| shared.handed_out.take_back(key, rest, t));
            if !shown {
                ferroflake_segment::check_give_back(key, rest, expected)?;
                return match store.peek(key)? {
                    None => Err(SegmentError::UnknownKey { key: key.to_owned() }),
                    Some(_) => Ok(false),
                };
            }
            store.give_back(key, rest, expected)
        },
    )
    .await
    .map(|(key, _, given_back)| {
        json!({ "key": key, "given_back": given_back, "table": table(&state) })
    });
    segment_answer(&state, StatusCode::OK, result)
}

/// `GET /v1/store/segment/{key}`: the key's row, read without changing it.
pub(crate) async fn peek(
    State(state): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let result = on_the_key(
        &state,
        path,
        query.as_deref(),
        &[],
        |_| Ok(()),
        |store, key, ()| store.peek(key),
    )
    .await
    .map(|(key, (), row)| {
        json!({
            "key": key,
            "max_id": row.map(|r| r.max_id.to_string()),
            "step": row.map(|r| r.step),
            "table": table(&state),
        })
    });
    segment_answer(&state, StatusCode::OK, result)
}

/// The identity the server's store keeps in its data (`None` for a store that keeps
/// none, as a service relaying another): a client that finds two among one address' servers knows they serve
/// two tables, which would hand out the same IDs.
fn table(state: &AppState) -> Option<String> {
    state.segments.as_ref()?.store().identity()
}
