//! The answers given before the router: a `GET` without a body to one of Leaf's two
//! issuing routes whose ID can be had at once (the key is open with an ID in memory, or
//! the lease is held with an ID left in the tick), and `GET /v1/constant`, the floor the
//! benchmarks compare them with.
//!
//! They are the service's hot path, and axum's generic machinery (the request moved
//! through each layer, its extensions and path parameters allocated, each route's
//! service cloned per request) cost more than issuing the ID. Everything else goes to
//! the router, and so does every request the lane cannot answer as the router would:
//! another method, a body, a percent-encoded or invalid key, a token that does not pass,
//! an ID that needs a wait or a store. The lane decides nothing of its own: the key
//! check, the token check, the ID, the answer's shape and its metrics are the router's
//! functions, called from here.

use std::time::Instant;

use axum::http::{header, Method, Request};
use axum::response::{IntoResponse, Response};

use crate::app_state::AppState;
use crate::issue;
use crate::routes;

const SEGMENT: &str = "/api/segment/get/";
const SNOWFLAKE: &str = "/api/snowflake/get/";
const SEGMENT_ROUTE: &str = "/api/segment/get/{key}";
const SNOWFLAKE_ROUTE: &str = "/api/snowflake/get/{key}";
const CONSTANT_ROUTE: &str = "/v1/constant";

/// The answer to `request` if the lane can give it now; `None` sends the request to the
/// router.
pub(crate) fn answer<B>(state: &AppState, request: &Request<B>) -> Option<Response> {
    if request.method() != Method::GET || has_body(request) {
        return None;
    }
    let path = request.uri().path();
    if path == CONSTANT_ROUTE {
        passes(state, CONSTANT_ROUTE, None, request)?;
        return Some(routes::CONSTANT.into_response());
    }
    let began = Instant::now();
    let (route, key) = if let Some(key) = path.strip_prefix(SEGMENT) {
        (SEGMENT_ROUTE, key)
    } else {
        (SNOWFLAKE_ROUTE, path.strip_prefix(SNOWFLAKE)?)
    };
    // A key as the router would decode it: no escapes to undo, no further segment.
    if key.contains(['%', '/']) || issue::check_key(key).is_err() {
        return None;
    }
    passes(state, route, Some(key), request)?;
    let id = if route == SEGMENT_ROUTE {
        issue::segment_now(state, key)?
    } else {
        issue::snowflake_now(state, key)?
    };
    let response = routes::text_id(id);
    state
        .routes
        .record(&state.metrics, route, response.status(), began.elapsed());
    Some(response)
}

/// Whether the request may have a body, which the router's body bound decides on.
fn has_body<B>(request: &Request<B>) -> bool {
    let headers = request.headers();
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() != b"0")
}

/// `Some` if the server's token check lets the request through to `route`.
fn passes<B>(state: &AppState, route: &str, key: Option<&str>, request: &Request<B>) -> Option<()> {
    match crate::auth::refusal_of(state, route, key, request.headers()) {
        None => Some(()),
        Some(_) => None,
    }
}
