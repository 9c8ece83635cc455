//! Signed-in users of the application routes.
//!
//! The session cookie (`upstate_session`: HttpOnly, SameSite=Lax, Path=/,
//! Secure unless the server listens on plain http on loopback) carries a
//! random token; the database keeps its SHA-256, so sessions are shared by
//! every instance and a database leak yields no usable cookie. A new session
//! (new token) is issued at every sign-in. Sessions end after 30 minutes idle
//! or 12 hours in all (ASVS 3.3.2), on sign-out, or on a password change.
//!
//! Every state-changing request made with the cookie must carry the session's
//! CSRF token in `X-CSRF-Token` (from `GET /api/csrf` or the login answer).

use crate::client_ip::client_ip;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use serde::Serialize;
use std::net::SocketAddr;
use upstate_core::audit::Actor;
use upstate_core::roles::Permission;
use upstate_store::AuditCtx;
use upstate_store::step_up;
use upstate_store::users::{self, Session};

pub const COOKIE: &str = "upstate_session";
pub const IDLE_MS: i64 = 30 * 60_000;
pub const ABSOLUTE_MS: i64 = 12 * 3_600_000;
/// How long a verified step-up opens sensitive actions, and how long an
/// unverified one may wait for verification.
pub const STEP_UP_MS: i64 = 5 * 60_000;
const TOUCH_EVERY_MS: i64 = 60_000;
/// A step-up proven at the identity provider, for the admin screens' forms
/// to send (they cannot carry the token through the provider): HttpOnly,
/// as long-lived as the step-up, and only good with the session it was
/// made for (`require_step_up` checks).
pub const STEP_UP_COOKIE: &str = "upstate_step_up";

/// Every well-formed cookie the request carries.
pub fn cookies(headers: &HeaderMap) -> impl Iterator<Item = cookie::Cookie<'_>> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
}

pub fn cookie_token(headers: &HeaderMap) -> Option<String> {
    cookies(headers)
        .find(|c| c.name() == COOKIE)
        .map(|c| c.value().to_string())
}

/// A Set-Cookie value with the attributes every Upstate cookie has:
/// HttpOnly, SameSite=Lax, path `/`, Secure when configured.
pub fn cookie_header(
    name: String,
    value: String,
    secure: bool,
    max_age: cookie::time::Duration,
) -> HeaderValue {
    let c = cookie::Cookie::build((name, value))
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .path("/")
        .max_age(max_age)
        .build();
    HeaderValue::from_str(&c.to_string()).unwrap_or(HeaderValue::from_static(""))
}

pub fn set_cookie(token: &str, secure: bool) -> HeaderValue {
    cookie_header(
        COOKIE.into(),
        token.into(),
        secure,
        cookie::time::Duration::milliseconds(ABSOLUTE_MS),
    )
}

/// Removes the session cookie (empty, expired).
pub fn clear_cookie(secure: bool) -> HeaderValue {
    cookie_header(
        COOKIE.into(),
        String::new(),
        secure,
        cookie::time::Duration::ZERO,
    )
}

/// Removes the cookie of a step-up proven at the identity provider: a new
/// session, or none, has no use for the last one's.
pub fn clear_step_up(secure: bool) -> HeaderValue {
    cookie_header(
        STEP_UP_COOKIE.into(),
        String::new(),
        secure,
        cookie::time::Duration::ZERO,
    )
}

/// The audit context of any request: who (given), from where, with what.
pub fn audit_ctx(
    parts_headers: &HeaderMap,
    peer: Option<SocketAddr>,
    state: &AppState,
    actor: Actor,
) -> AuditCtx {
    let client =
        peer.map(|p| client_ip(p.ip(), parts_headers, &state.settings.trusted_proxies).to_string());
    let user_agent = parts_headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| ua.chars().take(512).collect());
    AuditCtx {
        actor,
        client_addr: client,
        user_agent,
        quiet: false,
    }
}

/// The answer to a whole sign-in: the user and the session's CSRF token.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedInBody {
    #[schema(value_type = Object)]
    pub user: users::User,
    /// Send it as `X-CSRF-Token` with every state-changing request.
    pub csrf_token: String,
}

/// A request made within a live session (CSRF-checked when it changes state).
pub struct SignedIn {
    pub session: Session,
    pub audit: AuditCtx,
}

impl SignedIn {
    /// Refuses unless the request carries a step-up of this session verified
    /// within the last 5 minutes.
    pub async fn require_step_up(
        &self,
        state: &AppState,
        headers: &HeaderMap,
    ) -> Result<(), ApiError> {
        let refuse = || {
            ApiError::Forbidden(
                "this action needs a fresh step-up: POST /api/admin/step-up, verify it, send X-Step-Up-Token".into(),
            )
        };
        let token = headers
            .get("x-step-up-token")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(refuse)?;
        let s = match step_up::get(&state.db, &self.session.id, token).await {
            Ok(s) => s,
            Err(upstate_store::StoreError::NotFound(_)) => return Err(refuse()),
            Err(e) => return Err(e.into()),
        };
        match s.verified_at {
            Some(at) if state.db.clock.now().millis() - at.millis() <= STEP_UP_MS => Ok(()),
            _ => Err(refuse()),
        }
    }

    pub fn require(&self, p: Permission) -> Result<(), ApiError> {
        if self.session.user.role.has(p) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(p.refusal()))
        }
    }
}

/// What a session whose password must be changed may still use: the
/// change itself, signing out, who it is, and the admin screens (which
/// send it to the account screen).
fn open_before_password_change(path: &str) -> bool {
    path.starts_with("/admin")
        || matches!(
            path,
            "/api/auth/change-password" | "/api/auth/logout" | "/api/auth/me" | "/api/csrf"
        )
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let unauthorized = || ApiError::Unauthorized("sign in first".into());
        let token = cookie_token(&parts.headers).ok_or_else(unauthorized)?;
        let session = users::session(&state.db, &token, IDLE_MS)
            .await?
            .ok_or_else(unauthorized)?;
        if !matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
            let sent = parts
                .headers
                .get("x-csrf-token")
                .and_then(|v| v.to_str().ok());
            if sent != Some(session.csrf_token.as_str()) {
                return Err(ApiError::Forbidden(
                    "missing or wrong X-CSRF-Token (GET /api/csrf gives it)".into(),
                ));
            }
        }
        // A password someone else chose opens nothing but what changing it
        // takes (the admin screens lead there themselves).
        if session.user.must_change_password && !open_before_password_change(parts.uri.path()) {
            return Err(ApiError::Forbidden(
                "choose your own password first (POST /api/auth/change-password): the one you signed in with was chosen by whoever made your account".into(),
            ));
        }
        if state.db.clock.now().millis() - session.last_seen_at.millis() > TOUCH_EVERY_MS {
            users::touch_session(&state.db, &session.id).await?;
        }
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        let actor = Actor::user(session.user.id, &session.user.email);
        let audit = audit_ctx(&parts.headers, peer, state, actor);
        Ok(SignedIn { session, audit })
    }
}
