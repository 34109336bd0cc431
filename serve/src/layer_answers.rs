//! The answers the router and the body limit make themselves (a 405 for a method a route
//! does not take, a 413 for a body announced over [`MAX_BODY_BYTES`]), shaped as the
//! route family's refusals: plain text on the Leaf routes, JSON elsewhere. The routes'
//! own refusals pass unchanged.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::response::Response;
use tower::{Layer, Service};

use crate::auth::is_leaf;
use crate::refusal::{Refusal, Shaped};
use crate::routes::{MAX_BODY_BYTES, METHOD_NOT_ALLOWED};

/// The layer over the whole router.
#[derive(Clone, Copy, Default)]
pub struct LayerAnswersLayer;

impl<S> Layer<S> for LayerAnswersLayer {
    type Service = LayerAnswers<S>;

    fn layer(&self, inner: S) -> LayerAnswers<S> {
        LayerAnswers { inner }
    }
}

/// The router, its own answers shaped.
#[derive(Clone)]
pub struct LayerAnswers<S> {
    inner: S,
}

impl<S> Service<Request> for LayerAnswers<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Shaping<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        Shaping {
            leaf: is_leaf(request.uri().path()),
            inner: self.inner.call(request),
        }
    }
}

pin_project_lite::pin_project! {
    /// The router's answer, shaped if a layer made it.
    pub struct Shaping<F> {
        leaf: bool,
        #[pin]
        inner: F,
    }
}

impl<F, E> Future for Shaping<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.poll(cx) {
            Poll::Ready(Ok(response)) => response,
            other => return other,
        };
        Poll::Ready(Ok(shaped(response, *this.leaf)))
    }
}

fn shaped(response: Response, leaf: bool) -> Response {
    let refusal = match response.status() {
        _ if response.extensions().get::<Shaped>().is_some() => return response,
        StatusCode::METHOD_NOT_ALLOWED => Refusal {
            status: StatusCode::METHOD_NOT_ALLOWED,
            kind: "METHOD_NOT_ALLOWED",
            message: METHOD_NOT_ALLOWED.to_owned(),
            retry: false,
        },
        StatusCode::PAYLOAD_TOO_LARGE => Refusal {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            kind: "BODY_TOO_LARGE",
            message: format!("a request body is at most {MAX_BODY_BYTES} bytes (only the lease store routes read one)"),
            retry: false,
        },
        _ => return response,
    };
    let mut answer = if leaf { refusal.text() } else { refusal.json() };
    if let Some(allow) = response.headers().get(header::ALLOW) {
        answer.headers_mut().insert(header::ALLOW, allow.clone());
    }
    answer
}
