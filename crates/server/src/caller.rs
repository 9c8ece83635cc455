//! Who calls a route that API keys and signed-in people share: one
//! extractor, one permission check, one audit actor, so such a route is one
//! handler however it is called.
//!
//! - A request with `Authorization: Bearer` is a key: valid, unrevoked,
//!   unexpired, within its rate limit (under `/api/v1` the key middleware has
//!   checked all of that, and the method's scope, already). A key has the
//!   permissions of the role that may create it: `read` a viewer's, `write`
//!   an editor's, `admin` an admin's.
//! - Otherwise the session cookie is a person (CSRF-checked on writes) with
//!   their role's permissions.
//!
//! Sensitive actions (deleting a page, say) need a fresh step-up from a
//! person; a key cannot step up, so it needs the `admin` scope instead.

use crate::error::{ApiError, ApiResult};
use crate::key_auth::{self, Keyed};
use crate::session::{SignedIn, audit_ctx};
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use std::net::SocketAddr;
use upstate_core::audit::Actor;
use upstate_core::roles::{Permission, Role};
use upstate_core::scope::{Scope, highest};
use upstate_store::AuditCtx;
use upstate_store::api_keys::ApiKey;

pub enum Who {
    Key(ApiKey),
    Person(SignedIn),
}

pub struct Caller {
    pub who: Who,
    /// The actor, address and user agent every write of this request records.
    pub audit: AuditCtx,
}

fn permission_name(p: Permission) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

impl Caller {
    /// The role whose permissions this caller has.
    pub fn role(&self) -> Option<Role> {
        match &self.who {
            Who::Key(k) => highest(&k.scopes).map(Role::of_scope),
            Who::Person(p) => Some(p.session.user.role),
        }
    }

    /// Refuses with 403 unless the caller's role (or key scope) has `p`.
    pub fn require(&self, p: Permission) -> ApiResult<()> {
        if self.role().is_some_and(|r| r.has(p)) {
            return Ok(());
        }
        Err(ApiError::Forbidden(match self.who {
            Who::Key(_) => format!(
                "this API key's scope does not include the {} permission",
                permission_name(p)
            ),
            Who::Person(_) => p.refusal(),
        }))
    }

    /// For actions that cannot be undone: a person's fresh step-up, or a
    /// key with the `admin` scope.
    pub async fn require_sensitive(&self, state: &AppState, headers: &HeaderMap) -> ApiResult<()> {
        match &self.who {
            Who::Person(p) => p.require_step_up(state, headers).await,
            Who::Key(k) if highest(&k.scopes).is_some_and(|s| s.grants(Scope::Admin)) => Ok(()),
            Who::Key(_) => Err(ApiError::Forbidden(
                "this action needs an API key with the admin scope".into(),
            )),
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let key = match parts.extensions.get::<Keyed>() {
            Some(Keyed(key)) => Some(key.clone()),
            None if key_auth::has_bearer(&parts.headers) => {
                Some(key_auth::key_from_headers(state, &parts.headers).await?)
            }
            None => None,
        };
        match key {
            Some(key) => {
                let peer = parts
                    .extensions
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|c| c.0);
                let audit = audit_ctx(&parts.headers, peer, state, Actor::key(key.id, &key.name));
                Ok(Caller {
                    who: Who::Key(key),
                    audit,
                })
            }
            None => {
                let person = SignedIn::from_request_parts(parts, state).await?;
                Ok(Caller {
                    audit: person.audit.clone(),
                    who: Who::Person(person),
                })
            }
        }
    }
}

/// An optional caller: none when the request carries neither a key nor a
/// session's CSRF token (a visitor), else the caller, or its refusal (a
/// wrong key is refused, not taken for a visitor).
impl axum::extract::OptionalFromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Self>, ApiError> {
        let claims = parts.extensions.get::<Keyed>().is_some()
            || parts
                .headers
                .contains_key(axum::http::header::AUTHORIZATION)
            || parts.headers.contains_key("x-csrf-token");
        if !claims {
            return Ok(None);
        }
        <Caller as FromRequestParts<AppState>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}
