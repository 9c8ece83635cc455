//! What every request must be before any route, extractor or the database
//! sees it; hyper lets all of these through. One place, so the answer is the
//! same on every route and on both databases:
//!
//! - a path whose percent-decoding is not UTF-8 names nothing: `400`;
//! - a NUL byte (`%00`) in the path names nothing (`404`) and is no value
//!   of any query parameter (`400`): PostgreSQL cannot even compare text
//!   holding one, so it must not reach a query;
//! - an HTTP/1.1 request without `Host` is malformed (RFC 9112 §3.2): `400`;
//! - a request line and headers over 400 KiB: `431` (hyper's own limit is
//!   its read buffer, which a head arriving in one large read can pass);
//! - a declared body over the limit is answered `413` at once, before a byte
//!   of it is read; any body must arrive whole within the body timeout
//!   (`408`), so a client sending a byte now and then cannot hold a
//!   connection and a handler for ever. Bodies are read here, within the
//!   limit, and handed on in memory (which also lets `retry` run a request
//!   again). A body refused as too large is read on (and thrown away) for
//!   a moment before the answer, up to a bound: closing on unread bytes
//!   resets the connection, and the client would see a broken pipe instead
//!   of the `413`.
//!
//! On the way out it adds what depends on how the install is reached, not
//! on the route: `Strict-Transport-Security` when visitors come over https,
//! and `Secure` on the form bridge's flash cookie when cookies are secure.

use crate::error::ApiError;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Version, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use percent_encoding::percent_decode;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tower::Service;

/// The most request line and headers a request may have.
pub(crate) const HEAD_MAX_BYTES: usize = 400 * 1024;
/// How much of a refused body is read on before the answer, and for how long.
const DRAIN_MAX_BYTES: usize = 8 * 1024 * 1024;
const DRAIN_FOR: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
    /// The `Strict-Transport-Security` value, when the install is reached
    /// over https.
    pub hsts: Option<HeaderValue>,
    pub secure_cookies: bool,
}

/// `inner` behind the gate. A hand-written service rather than a `from_fn`
/// layer: a request without a body (every read) goes on with nothing boxed
/// or cloned for it; one with a body is read first, as below.
#[derive(Clone)]
pub(crate) struct Gated<S> {
    gate: Arc<Gate>,
    inner: S,
}

impl<S> Gated<S> {
    pub(crate) fn new(gate: Arc<Gate>, inner: S) -> Gated<S> {
        Gated { gate, inner }
    }
}

impl<S> Service<Request> for Gated<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + Unpin + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Finished<S::Future>, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let gate = self.gate.clone();
        if let Err(refusal) = check_head(&req) {
            let res = finish(&gate, refusal.into_response());
            return Either::Right(Box::pin(async move { Ok(res) }));
        }
        if !has_body(&req) {
            return Either::Left(Finished {
                answer: self.inner.call(req),
                gate,
            });
        }
        // The ready service answers; its clone stays for the next call.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Either::Right(Box::pin(async move {
            Ok(finish(&gate, read_body(&gate, req, inner).await))
        }))
    }
}

/// An answer of the service behind the gate, finished by `finish`.
pub(crate) struct Finished<F> {
    answer: F,
    gate: Arc<Gate>,
}

impl<F> Future for Finished<F>
where
    F: Future<Output = Result<Response, Infallible>> + Unpin,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let res = ready!(Pin::new(&mut this.answer).poll(cx))?;
        Poll::Ready(Ok(finish(&this.gate, res)))
    }
}

/// What every answer gets on its way out.
fn finish(gate: &Gate, mut res: Response) -> Response {
    if let Some(hsts) = &gate.hsts {
        res.headers_mut()
            .insert(header::STRICT_TRANSPORT_SECURITY, hsts.clone());
    }
    if gate.secure_cookies {
        crate::form_bridge::secure_flash(res.headers_mut());
    }
    res
}

/// Reads a request's body within the limits, then hands the request on
/// with the body in memory.
async fn read_body<S>(gate: &Gate, req: Request, inner: S) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = declared.filter(|n| *n > gate.max_body_bytes as u64) {
        if n <= DRAIN_MAX_BYTES as u64 {
            drain(req.into_body()).await;
        }
        return close(ApiError::PayloadTooLarge.into_response());
    }
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, gate.max_body_bytes);
    let bytes = match tokio::time::timeout(gate.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            let too_large = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            return close(if too_large {
                ApiError::PayloadTooLarge.into_response()
            } else {
                ApiError::BadRequest("the request body could not be read".into()).into_response()
            });
        }
        Err(_) => return close(ApiError::RequestTimeout.into_response()),
    };
    crate::app::answer(inner, Request::from_parts(parts, Body::from(bytes))).await
}

/// Reads and drops what a refused body still sends, up to `DRAIN_MAX_BYTES`
/// and `DRAIN_FOR`, so the refusal reaches the client.
async fn drain(body: Body) {
    let read = axum::body::to_bytes(body, DRAIN_MAX_BYTES);
    let _ = tokio::time::timeout(DRAIN_FOR, read).await;
}

/// Whether a request carries a body to read (hyper knows from its
/// `Content-Length` or `Transfer-Encoding`).
fn has_body(req: &Request) -> bool {
    !axum::body::HttpBody::is_end_stream(req.body())
}

/// A refusal after which the rest of the body is not read: the connection
/// closes with it.
fn close(mut res: Response) -> Response {
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}

fn check_head(req: &Request) -> Result<(), ApiError> {
    let uri = req.uri();
    let head: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum::<usize>()
        + uri.path().len()
        + uri.query().map_or(0, str::len);
    if head > HEAD_MAX_BYTES {
        return Err(ApiError::HeadersTooLarge);
    }
    if req.version() == Version::HTTP_11
        && uri.authority().is_none()
        && !req.headers().contains_key(header::HOST)
    {
        return Err(ApiError::BadRequest(
            "an HTTP/1.1 request must name its Host".into(),
        ));
    }
    // Borrowed, not copied, unless the path holds escapes.
    let Ok(path) = percent_decode(uri.path().as_bytes()).decode_utf8() else {
        return Err(ApiError::BadRequest(
            "the path is not valid UTF-8 once percent-decoded".into(),
        ));
    };
    if path.contains('\0') {
        return Err(ApiError::NotFound("no such resource".into()));
    }
    if let Some(q) = uri.query()
        && percent_decode(q.as_bytes()).any(|b| b == 0)
    {
        return Err(ApiError::BadRequest(
            "a query parameter must not contain a NUL character".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(uri: &str) -> Result<(), ApiError> {
        let req = Request::builder()
            .uri(uri)
            .header(header::HOST, "x")
            .body(Body::empty())
            .unwrap_or_default();
        check_head(&req)
    }

    #[test]
    fn nul_and_broken_utf8_never_reach_a_route() {
        assert!(matches!(head("/s/a%00b"), Err(ApiError::NotFound(_))));
        assert!(matches!(head("/s/%ff"), Err(ApiError::BadRequest(_))));
        assert!(matches!(
            head("/api/x?page=a%00"),
            Err(ApiError::BadRequest(_))
        ));
        assert!(head("/s/caf%C3%A9?q=%41").is_ok());
        assert!(head("/s/100%").is_ok(), "a lone percent sign is just text");
    }

    #[test]
    fn http11_needs_a_host() {
        let req = Request::builder()
            .uri("/api/health")
            .body(Body::empty())
            .unwrap_or_default();
        assert!(matches!(check_head(&req), Err(ApiError::BadRequest(_))));
    }
}
