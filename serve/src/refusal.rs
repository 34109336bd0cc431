//! Why a request gets no ID, and the status that says so.
//!
//! | cause | status |
//! |---|---|
//! | bad input: a count of 0 or over the limit, a bad key, an ID that does not parse | 400 |
//! | with a tokens file: no bearer token, or one the file does not hold ([`auth`](crate::auth)) | 401 + `WWW-Authenticate: Bearer` |
//! | with a tokens file: a token without a scope the route needs | 403 |
//! | a segment key the table does not have | 404 |
//! | a segment key at its limit | 410 |
//! | the store or the lease cannot serve now (down, not ready, fenced, stopping) | 503 + `Retry-After` |
//! | the store's counter went back (`REWOUND`): an operator must act | 503, no `Retry-After` |
//!
//! Leaf answers every failure with 500; the Leaf-compatible routes here use the statuses
//! above, with the message as plain text, so that a client can tell "retry elsewhere" from
//! "fix the request".

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use ferroflake_segment::SegmentError;

/// Marks an answer made as a refusal (JSON or text), which the router's own answers are
/// not (the layer that shapes those passes these unchanged).
#[derive(Debug, Clone, Copy)]
pub struct Shaped;

/// Seconds a client should wait before retrying a 503.
const RETRY_AFTER_SECS: u64 = 1;

/// A refusal: status, stable kind name, message, and whether to send `Retry-After`.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable kind name (`UNKNOWN_KEY`, `LEASE_EXPIRED`, `BAD_COUNT`, ...).
    pub kind: &'static str,
    /// What happened and what to do.
    pub message: String,
    /// Send `Retry-After` (503s a retry can cure).
    pub retry: bool,
}

impl Refusal {
    /// 400 with `kind`.
    pub fn bad_input(kind: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::BAD_REQUEST,
            kind,
            message: message.into(),
            retry: false,
        }
    }

    /// 503 with `Retry-After`.
    pub fn unavailable(kind: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            status: StatusCode::SERVICE_UNAVAILABLE,
            kind,
            message: message.into(),
            retry: true,
        }
    }

    /// A segment error's status.
    pub fn segment(e: &SegmentError) -> Self {
        let (status, retry) = match e {
            _ if e.is_invalid_input() => (StatusCode::BAD_REQUEST, false),
            SegmentError::UnknownKey { .. } => (StatusCode::NOT_FOUND, false),
            SegmentError::Exhausted { .. } => (StatusCode::GONE, false),
            SegmentError::Rewound { .. } => (StatusCode::SERVICE_UNAVAILABLE, false),
            // The server does not fork; an allocator that did cannot recover by retrying.
            SegmentError::Forked { .. } => (StatusCode::INTERNAL_SERVER_ERROR, false),
            _ => (StatusCode::SERVICE_UNAVAILABLE, true),
        };
        Refusal {
            status,
            kind: e.name(),
            message: e.to_string(),
            retry,
        }
    }

    /// A snowflake generator's error, with `message` (the lease's explanation).
    pub fn snowflake(e: &ferroflake::Error, message: String) -> Self {
        use ferroflake::Error as E;
        let (status, retry) = match e {
            E::LeaseExpired { .. } | E::ClockMovedBackwards { .. } | E::ClockStalled { .. } => {
                (StatusCode::SERVICE_UNAVAILABLE, true)
            }
            E::LayoutExhausted { .. } => (StatusCode::GONE, false),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, false),
        };
        Refusal {
            status,
            kind: e.kind().name(),
            message,
            retry,
        }
    }

    /// The answer on a Leaf-compatible route: the message as plain text.
    pub fn text(self) -> Response {
        let mut response = (self.status, format!("{}\n", self.message)).into_response();
        self.add_retry(&mut response);
        response.extensions_mut().insert(Shaped);
        response
    }

    /// The answer on a native route: `{"error":{"kind":..,"message":..}}`.
    pub fn json(self) -> Response {
        self.json_with(None)
    }

    /// [`json`](Self::json), with `"why"` beside the kind when the kind has causes a
    /// client tells apart (a lost lease's).
    pub fn json_with(self, why: Option<&'static str>) -> Response {
        let mut error = serde_json::json!({ "kind": self.kind, "message": self.message });
        if let Some(why) = why {
            error["why"] = why.into();
        }
        let body = serde_json::json!({ "error": error });
        let mut response = (
            self.status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body.to_string(),
        )
            .into_response();
        self.add_retry(&mut response);
        response.extensions_mut().insert(Shaped);
        response
    }

    fn add_retry(&self, response: &mut Response) {
        if self.retry {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        }
    }
}
