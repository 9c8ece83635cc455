//! The one error type of the HTTP layer and its policy.
//!
//! Every error leaves as RFC 9457 `application/problem+json` with `type`,
//! `title`, `status` and `detail`; validation failures add `errors`, a list of
//! `{field, message}` naming every bad field. Status codes: malformed JSON 400,
//! missing/invalid key 401, missing scope 403, unknown resource or route 404,
//! wrong method 405, duplicate or refused state change 409, body too large 413,
//! not JSON 415, invalid content 422, rate limited 429. Internal failures are
//! logged with their cause and shown as a bare 500, never with internals.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use upstate_core::{FieldError, FieldErrors};
use upstate_store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    Unauthorized(String),
    Forbidden(String),
    NotFound(String),
    MethodNotAllowed,
    Conflict(String),
    PayloadTooLarge,
    /// Request line and headers over `request_gate::HEAD_MAX_BYTES`.
    HeadersTooLarge,
    UnsupportedMediaType,
    Validation(FieldErrors),
    RateLimited {
        retry_after_secs: u64,
    },
    /// The request body did not arrive in time.
    RequestTimeout,
    /// The database gave up on the change for a moment's reason (a
    /// deadlock, a busy lock, no connection free); nothing was applied and
    /// the same request may succeed when sent again (`retry` does so a few
    /// times before answering this).
    Busy,
    /// The database cannot be reached (restarting, or the network to it
    /// down): public pages are served from memory meanwhile, changes are
    /// refused until it is back.
    Unavailable,
    Internal(String),
}

/// Marks a response whose request may be run again unchanged (see
/// `ApiError::Busy`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retryable;

#[derive(Serialize)]
struct Problem<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    title: &'a str,
    status: u16,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
}

impl ApiError {
    pub fn validation(field: &str, message: impl Into<String>) -> Self {
        ApiError::Validation(FieldErrors::single(field, message))
    }

    /// (status, problem type, title) of each kind; types are documented in docs/api.md.
    fn parts(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            ApiError::BadRequest(_) => (
                StatusCode::BAD_REQUEST,
                "urn:upstate:problem:bad-request",
                "Bad request",
            ),
            ApiError::Unauthorized(_) => (
                StatusCode::UNAUTHORIZED,
                "urn:upstate:problem:unauthorized",
                "Unauthorized",
            ),
            ApiError::Forbidden(_) => (
                StatusCode::FORBIDDEN,
                "urn:upstate:problem:forbidden",
                "Forbidden",
            ),
            ApiError::NotFound(_) => (
                StatusCode::NOT_FOUND,
                "urn:upstate:problem:not-found",
                "Not found",
            ),
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "urn:upstate:problem:method-not-allowed",
                "Method not allowed",
            ),
            ApiError::Conflict(_) => (
                StatusCode::CONFLICT,
                "urn:upstate:problem:conflict",
                "Conflict",
            ),
            ApiError::PayloadTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "urn:upstate:problem:payload-too-large",
                "Payload too large",
            ),
            ApiError::HeadersTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "urn:upstate:problem:request-header-fields-too-large",
                "Request header fields too large",
            ),
            ApiError::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "urn:upstate:problem:unsupported-media-type",
                "Unsupported media type",
            ),
            ApiError::Validation(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "urn:upstate:problem:validation",
                "Validation failed",
            ),
            ApiError::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "urn:upstate:problem:rate-limited",
                "Too many requests",
            ),
            ApiError::RequestTimeout => (
                StatusCode::REQUEST_TIMEOUT,
                "urn:upstate:problem:request-timeout",
                "Request timeout",
            ),
            ApiError::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "urn:upstate:problem:busy",
                "Busy",
            ),
            ApiError::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "urn:upstate:problem:database-unavailable",
                "Database unavailable",
            ),
            ApiError::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "urn:upstate:problem:internal",
                "Internal server error",
            ),
        }
    }

    /// The status and a sentence for people, for the HTML pages' error view.
    pub(crate) fn for_people(&self) -> (StatusCode, String) {
        let detail = match self {
            ApiError::Validation(e) => {
                e.0.iter()
                    .map(|f| format!("{}: {}", f.field, f.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            }
            other => other.detail(),
        };
        (self.parts().0, detail)
    }

    fn detail(&self) -> String {
        match self {
            ApiError::BadRequest(d)
            | ApiError::Unauthorized(d)
            | ApiError::Forbidden(d)
            | ApiError::NotFound(d)
            | ApiError::Conflict(d) => d.clone(),
            ApiError::MethodNotAllowed => "this route does not accept this method".into(),
            ApiError::PayloadTooLarge => "the request body exceeds the size limit".into(),
            ApiError::HeadersTooLarge => {
                "the request's headers are larger or more numerous than this server accepts".into()
            }
            ApiError::UnsupportedMediaType => {
                "send the body as JSON with Content-Type: application/json".into()
            }
            ApiError::Validation(e) => {
                let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
                format!("invalid field(s): {}", fields.join(", "))
            }
            ApiError::RateLimited { retry_after_secs } => {
                format!("rate limit exceeded; retry in {retry_after_secs} s")
            }
            ApiError::RequestTimeout => "the request body did not arrive in time".into(),
            ApiError::Busy => {
                "the database is busy; nothing was applied, send the request again".into()
            }
            ApiError::Unavailable => "the database cannot be reached right now, so nothing can \
                 be changed; status pages are still served as they were. Send the request \
                 again shortly (a change sent as the database went away may have been applied: \
                 look before repeating it)"
                .into(),
            ApiError::Internal(_) => {
                "something went wrong on our side; the request was not applied".into()
            }
        }
    }
}

/// A problem document without field errors, for answers made outside a
/// handler (see `connection`).
pub(crate) fn problem_body(status: u16, kind: &str, title: &str, detail: &str) -> Vec<u8> {
    let kind = format!("urn:upstate:problem:{kind}");
    let body = Problem {
        kind: &kind,
        title,
        status,
        detail: detail.into(),
        errors: None,
    };
    serde_json::to_vec(&body).unwrap_or_default()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(cause) = &self {
            tracing::error!(%cause, "internal error");
        }
        let (status, kind, title) = self.parts();
        let errors = match &self {
            ApiError::Validation(e) => Some(e.0.as_slice()),
            _ => None,
        };
        let body = Problem {
            kind,
            title,
            status: status.as_u16(),
            detail: self.detail(),
            errors,
        };
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        let mut res = (status, bytes).into_response();
        let h = res.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        match self {
            ApiError::Unauthorized(_) => {
                h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::RateLimited { retry_after_secs } => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            }
            ApiError::Busy => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(1));
                res.extensions_mut().insert(Retryable);
            }
            ApiError::Unavailable => {
                h.insert(header::RETRY_AFTER, HeaderValue::from(5));
            }
            _ => {}
        }
        res
    }
}

impl From<FieldErrors> for ApiError {
    fn from(e: FieldErrors) -> Self {
        ApiError::Validation(e)
    }
}

/// An error with every source under it, and where it was turned into a
/// 500: what the log needs to find the cause (the client sees none of it).
#[track_caller]
pub(crate) fn internal(e: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut cause = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        cause.push_str(": ");
        cause.push_str(&s.to_string());
        source = s.source();
    }
    let at = std::panic::Location::caller();
    ApiError::Internal(format!("{cause} (at {}:{})", at.file(), at.line()))
}

impl From<StoreError> for ApiError {
    /// `track_caller`: the location logged for a 500 is the `?` that met it.
    #[track_caller]
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what) => ApiError::NotFound(format!("{what} not found")),
            StoreError::Conflict(msg) => ApiError::Conflict(msg),
            StoreError::Transition(t) => ApiError::Conflict(t.to_string()),
            StoreError::InvalidReference { field, message } => ApiError::validation(field, message),
            StoreError::Invalid(fields) => fields.into(),
            other if other.is_unavailable() => {
                tracing::warn!(cause = %other, "the database cannot be reached; a change was refused");
                ApiError::Unavailable
            }
            other if other.is_retryable() => {
                tracing::warn!(cause = %other, "database busy; the request may be retried");
                ApiError::Busy
            }
            other => internal(&other),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    #[derive(Debug)]
    struct Outer(std::io::Error);

    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("query failed")
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn internal_errors_keep_their_sources_and_where_they_were_met() {
        let e = super::internal(&Outer(std::io::Error::other("connection reset")));
        let super::ApiError::Internal(cause) = e else {
            panic!("not internal")
        };
        assert!(
            cause.starts_with("query failed: connection reset (at "),
            "{cause}"
        );
        assert!(cause.contains("error.rs:"), "the location: {cause}");
        let e: super::ApiError = upstate_store::StoreError::Config("no pool".into()).into();
        let super::ApiError::Internal(cause) = e else {
            panic!("not internal")
        };
        assert!(
            cause.contains("no pool (at ") && cause.contains("error.rs:"),
            "{cause}"
        );
    }
}
