//! API-key authentication, scope checks and per-key rate limits for the
//! management API (`/api/v1`, `/api/v2`).
//!
//! Order: rate limit first (by key when the key is valid, else by client
//! address, so guessing keys is throttled too), then 401 for a missing,
//! unknown, revoked or expired key, then 403 when the key's scope does not
//! cover the method: GET/HEAD need `read`, POST/PUT/PATCH `write`, DELETE
//! `admin`. Every response carries the `X-RateLimit-*` headers.

use crate::error::ApiError;
use crate::rate_limit::{Decision, Subject};
use crate::state::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use upstate_core::Timestamp;
use upstate_core::scope::{Scope, highest};
use upstate_store::api_keys::{self, ApiKey};

/// How often a key's `last_used_at` is written at most.
const TOUCH_EVERY_MS: i64 = 60_000;

/// The key the middleware authenticated, for the extractors after it.
#[derive(Clone, Debug)]
pub struct Keyed(pub ApiKey);

fn required_scope(method: &Method) -> Scope {
    match *method {
        Method::GET | Method::HEAD | Method::OPTIONS => Scope::Read,
        Method::DELETE => Scope::Admin,
        _ => Scope::Write,
    }
}

/// Whether the request names an API key at all (valid or not).
pub fn has_bearer(headers: &HeaderMap) -> bool {
    bearer(headers).is_some()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

pub fn rate_headers(res: &mut Response, d: &Decision) {
    let h = res.headers_mut();
    h.insert("x-ratelimit-limit", HeaderValue::from(d.limit));
    h.insert("x-ratelimit-remaining", HeaderValue::from(d.remaining));
    h.insert("x-ratelimit-reset", HeaderValue::from(d.reset_secs));
}

pub async fn require_key(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    let now = state.db.clock.now();
    let key = match bearer(req.headers()) {
        Some(secret) => match api_keys::find_by_secret(&state.db, secret).await {
            Ok(k) => k,
            Err(e) => return ApiError::from(e).into_response(),
        },
        None => None,
    };
    let subject = match &key {
        Some(k) if k.is_active(now) => Subject::Key(k.id),
        _ => Subject::Addr(peer.ip()),
    };
    let decision = state.limits.take(subject).await;
    let outcome = authorize(
        req.headers(),
        key,
        req.method(),
        now,
        decision.and_then(|d| d.retry_after_secs),
    );
    let mut res = match outcome {
        Ok(key) => {
            if key
                .last_used_at
                .is_none_or(|t| now.millis() - t.millis() > TOUCH_EVERY_MS)
            {
                let db = state.db.clone();
                let id = key.id;
                tokio::spawn(async move {
                    if let Err(e) = api_keys::touch(&db, id, now).await {
                        tracing::warn!(error = %e, "could not record API key use");
                    }
                });
            }
            req.extensions_mut().insert(Keyed(key));
            next.run(req).await
        }
        Err(e) => e.into_response(),
    };
    if let Some(d) = decision {
        rate_headers(&mut res, &d);
    }
    res
}

/// The active key a request's bearer token names, counted against its rate
/// limit: for application routes that also accept sessions.
pub async fn key_from_headers(state: &AppState, headers: &HeaderMap) -> Result<ApiKey, ApiError> {
    let invalid = || ApiError::Unauthorized("the API key is not valid".into());
    let secret = bearer(headers).ok_or_else(invalid)?;
    let key = api_keys::find_by_secret(&state.db, secret)
        .await?
        .ok_or_else(invalid)?;
    let now = state.db.clock.now();
    if key.revoked_at.is_some() {
        return Err(ApiError::Unauthorized(
            "the API key has been revoked".into(),
        ));
    }
    if !key.is_active(now) {
        return Err(ApiError::Unauthorized("the API key has expired".into()));
    }
    if let Some(retry_after_secs) = state
        .limits
        .take(Subject::Key(key.id))
        .await
        .and_then(|d| d.retry_after_secs)
    {
        return Err(ApiError::RateLimited { retry_after_secs });
    }
    Ok(key)
}

fn authorize(
    headers: &HeaderMap,
    key: Option<ApiKey>,
    method: &Method,
    now: Timestamp,
    retry_after: Option<u64>,
) -> Result<ApiKey, ApiError> {
    if let Some(retry_after_secs) = retry_after {
        return Err(ApiError::RateLimited { retry_after_secs });
    }
    let key = match (bearer(headers), key) {
        (None, _) => {
            return Err(ApiError::Unauthorized(
                "send an API key as Authorization: Bearer <key>".into(),
            ));
        }
        (Some(_), None) => return Err(ApiError::Unauthorized("the API key is not valid".into())),
        (Some(_), Some(k)) => k,
    };
    if key.revoked_at.is_some() {
        return Err(ApiError::Unauthorized(
            "the API key has been revoked".into(),
        ));
    }
    if !key.is_active(now) {
        return Err(ApiError::Unauthorized("the API key has expired".into()));
    }
    let needed = required_scope(method);
    if !highest(&key.scopes).is_some_and(|s| s.grants(needed)) {
        return Err(ApiError::Forbidden(format!(
            "this API key lacks the {} scope",
            needed.as_str()
        )));
    }
    Ok(key)
}
