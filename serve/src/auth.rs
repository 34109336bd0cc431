//! Bearer-token checks in front of the routes, when a tokens file is configured
//! ([`tokens`](crate::tokens)); what each scope grants is in [`scopes`].
//!
//! | request | answer |
//! |---|---|
//! | no `Authorization: Bearer` header | 401 `NO_TOKEN`, `WWW-Authenticate: Bearer realm="ferroflake"` |
//! | a token whose SHA-256 is not in the file | 401 `BAD_TOKEN`, `WWW-Authenticate: Bearer ..., error="invalid_token"` |
//! | a known token without a scope the route needs | 403 `OUT_OF_SCOPE`, `WWW-Authenticate: Bearer ..., error="insufficient_scope"` |
//!
//! The body is the route family's refusal: plain text on the Leaf routes (`/api/...`,
//! `/decodeSnowflakeId`), the
//! JSON error elsewhere (see [`refusal`](crate::refusal)). A token is read from the
//! `Authorization` header only, never from the URL, and is never logged or echoed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{MatchedPath, RawPathParams, Request};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::RequestExt;
use futures_util::FutureExt;
use tower::{Layer, Service};

use crate::app_state::AppState;
use crate::refusal::Refusal;
use crate::scopes::{self, Need};

const CHALLENGE: &str = "Bearer realm=\"ferroflake\"";
const CHALLENGE_INVALID: &str = "Bearer realm=\"ferroflake\", error=\"invalid_token\"";
const CHALLENGE_SCOPE: &str = "Bearer realm=\"ferroflake\", error=\"insufficient_scope\"";

/// What the route `template` (axum's matched path) asks of the caller, `key` being its
/// `{key}` once percent-decoded. A route missing here needs `admin`: a new route is closed
/// until someone decides who may call it.
pub fn need_of<'a>(template: &str, key: Option<&'a str>) -> Need<'a> {
    match template {
        "/healthz" | "/readyz" => Need::Open,
        "/api/segment/get/{key}"
        | "/api/snowflake/get/{key}"
        | "/v1/segment/{key}"
        | "/v1/snowflake/{key}"
        | "/v1/masked/segment/{key}"
        | "/v1/masked/snowflake/{key}"
        | "/v1/store/segment/{key}"
        | "/v1/store/segment/{key}/allocate"
        | "/v1/store/segment/{key}/give-back" => {
            // A key that does not decode is met only by `issue:*` or `admin`; the route
            // then answers 400 for it.
            Need::Issue(key.unwrap_or(""))
        }
        // A node id issues snowflake IDs under any key (a key only labels metrics), and
        // a registry has few: only a token for every key may hold one or use them up.
        // The listing and the clock are what a holder reads, with the same token.
        "/v1/store/lease/claim"
        | "/v1/store/lease/renew"
        | "/v1/store/lease/release"
        | "/v1/store/lease/list"
        | "/v1/store/lease/clock" => Need::EveryKey,
        // Lost records say every claim must wait out a floor: an operator's word.
        // Reservations hold ids off every claim until an operator lifts them.
        "/v1/store/lease/restored" | "/v1/store/lease/reserve" | "/v1/store/lease/unreserve" => {
            Need::Admin
        }
        "/v1/segment/{key}/status"
        | "/v1/status"
        | "/metrics"
        | "/v1/decode/{id}"
        | "/decodeSnowflakeId"
        | "/v1/constant" => Need::Read,
        // Unmasking undoes what masking hides from callers; the admin routes change the
        // table: only admins.
        "/v1/unmask/{text}"
        | "/v1/admin/keys"
        | "/v1/admin/leases"
        | "/v1/admin/segment/{key}"
        | "/v1/admin/segment/{key}/recover"
        | "/v1/admin/segment/{key}/step" => Need::Admin,
        _ => Need::Admin,
    }
}

/// Whether the route `template` is one of Leaf's, whose refusals are plain text.
pub fn is_leaf(template: &str) -> bool {
    template.starts_with("/api/") || template == "/decodeSnowflakeId"
}

/// The layer in front of the routes when the server has tokens: a request passes if its
/// token meets the route's need, and is otherwise answered 401 or 403. Decided before
/// the route is called, without boxing or waiting.
#[derive(Clone)]
pub(crate) struct AuthorizeLayer {
    state: Arc<AppState>,
}

impl AuthorizeLayer {
    pub(crate) fn new(state: Arc<AppState>) -> Self {
        AuthorizeLayer { state }
    }
}

impl<S> Layer<S> for AuthorizeLayer {
    type Service = Authorize<S>;

    fn layer(&self, inner: S) -> Authorize<S> {
        Authorize {
            inner,
            state: Arc::clone(&self.state),
        }
    }
}

/// A route behind the token check.
#[derive(Clone)]
pub(crate) struct Authorize<S> {
    inner: S,
    state: Arc<AppState>,
}

impl<S> Service<Request> for Authorize<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Authorized<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        match refusal(&self.state, &mut request) {
            Some(refused) => Authorized::Refused {
                refused: Some(refused),
            },
            None => Authorized::Passed {
                inner: self.inner.call(request),
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The route's answer, or the refusal.
    #[project = AuthorizedProjection]
    pub(crate) enum Authorized<F> {
        Refused { refused: Option<Response> },
        Passed { #[pin] inner: F },
    }
}

impl<F, E> Future for Authorized<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AuthorizedProjection::Refused { refused } => {
                Poll::Ready(Ok(refused.take().expect("polled after it answered")))
            }
            AuthorizedProjection::Passed { inner } => inner.poll(cx),
        }
    }
}

/// The 401 or 403 for `request`, or `None` if its token meets the route's need.
fn refusal(state: &AppState, request: &mut Request) -> Option<Response> {
    state.tokens.as_ref()?;
    // axum's path extractor reads what the router stored and is ready at once; were it
    // ever not, the key would count as one that does not decode, met only by the widest
    // scopes.
    let params = request
        .extract_parts::<RawPathParams>()
        .now_or_never()
        .and_then(Result::ok);
    let template = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("", MatchedPath::as_str);
    let key = params
        .as_ref()
        .and_then(|p| p.iter().find(|(name, _)| *name == "key").map(|(_, v)| v));
    refusal_of(state, template, key, request.headers())
}

/// The 401 or 403 for a request to the route `template` with `{key}` = `key` (once
/// percent-decoded) and `headers`, or `None` if the server has no tokens or the request's
/// token meets the route's need.
pub(crate) fn refusal_of(
    state: &AppState,
    template: &str,
    key: Option<&str>,
    headers: &HeaderMap,
) -> Option<Response> {
    let tokens = state.tokens.as_ref()?;
    let need = need_of(template, key);
    if need == Need::Open {
        return None;
    }
    let leaf = is_leaf(template);
    let Some(presented) = bearer(headers) else {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            "NO_TOKEN",
            "this route needs a bearer token: send the header Authorization: Bearer TOKEN",
            CHALLENGE,
            leaf,
        ));
    };
    let table = tokens.current();
    let Some(token) = table.identify(presented) else {
        return Some(refuse(
            StatusCode::UNAUTHORIZED,
            "BAD_TOKEN",
            "the bearer token is not one this server accepts (mistyped, revoked, or meant \
             for another server)",
            CHALLENGE_INVALID,
            leaf,
        ));
    };
    if !scopes::allows(&token.scopes, need) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "OUT_OF_SCOPE",
            &format!(
                "this token may not call this route: it needs the scope {}",
                need.wanted()
            ),
            CHALLENGE_SCOPE,
            leaf,
        ));
    }
    None
}

/// The token of an `Authorization: Bearer TOKEN` header (the scheme in any case), if the
/// request has exactly one such header: of two, a proxy that adds its own would be
/// overruled by the client's, whichever came first.
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let mut all = headers.get_all(header::AUTHORIZATION).iter();
    let value = all.next()?.as_bytes();
    if all.next().is_some() {
        return None;
    }
    let space = value.iter().position(|b| *b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

fn refuse(
    status: StatusCode,
    kind: &'static str,
    message: &str,
    challenge: &'static str,
    leaf: bool,
) -> Response {
    let refusal = Refusal {
        status,
        kind,
        message: message.to_owned(),
        retry: false,
    };
    let mut response = if leaf { refusal.text() } else { refusal.json() };
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_token_is_read_from_the_authorization_header_only() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            bearer(&headers).map(<[u8]>::to_vec)
        };
        assert_eq!(with("Bearer abc"), Some(b"abc".to_vec()));
        assert_eq!(with("bearer  abc "), Some(b"abc".to_vec()));
        assert_eq!(with("BEARER abc"), Some(b"abc".to_vec()));
        assert_eq!(with("Basic abc"), None);
        assert_eq!(with("Bearer"), None);
        assert_eq!(with("Bearer "), None);
        assert_eq!(with("Bearerabc"), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
        let mut two = HeaderMap::new();
        for token in ["Bearer admin", "Bearer reader"] {
            two.append(header::AUTHORIZATION, HeaderValue::from_static(token));
        }
        assert_eq!(bearer(&two), None, "two Authorization headers");
    }

    #[test]
    fn every_route_has_a_need_and_unknown_ones_need_admin() {
        assert_eq!(need_of("/healthz", None), Need::Open);
        assert_eq!(need_of("/readyz", None), Need::Open);
        for route in [
            "/api/segment/get/{key}",
            "/api/snowflake/get/{key}",
            "/v1/segment/{key}",
            "/v1/snowflake/{key}",
            "/v1/masked/segment/{key}",
            "/v1/masked/snowflake/{key}",
            "/v1/store/segment/{key}",
            "/v1/store/segment/{key}/allocate",
            "/v1/store/segment/{key}/give-back",
        ] {
            assert_eq!(need_of(route, Some("k")), Need::Issue("k"), "{route}");
            assert_eq!(need_of(route, None), Need::Issue(""), "{route}");
        }
        for route in [
            "/v1/segment/{key}/status",
            "/v1/status",
            "/metrics",
            "/v1/decode/{id}",
            "/decodeSnowflakeId",
            "/v1/constant",
        ] {
            assert_eq!(need_of(route, Some("k")), Need::Read, "{route}");
        }
        for route in [
            "/v1/store/lease/claim",
            "/v1/store/lease/renew",
            "/v1/store/lease/release",
            "/v1/store/lease/list",
            "/v1/store/lease/clock",
        ] {
            assert_eq!(need_of(route, None), Need::EveryKey, "{route}");
        }
        for route in [
            "/v1/store/lease/restored",
            "/v1/store/lease/reserve",
            "/v1/store/lease/unreserve",
        ] {
            assert_eq!(need_of(route, None), Need::Admin, "{route}");
        }
        assert_eq!(need_of("/v1/unmask/{text}", None), Need::Admin);
        for route in [
            "/v1/admin/keys",
            "/v1/admin/segment/{key}",
            "/v1/admin/segment/{key}/recover",
            "/v1/admin/segment/{key}/step",
        ] {
            assert_eq!(need_of(route, Some("k")), Need::Admin, "{route}");
        }
        assert_eq!(need_of("/v1/new-route", None), Need::Admin);
        assert_eq!(need_of("", None), Need::Admin);
    }
}
