//! `/api/api-keys`: signed-in users manage their own API keys (KEYS_MANAGE).
//!
//! A key never gets more than its creator's role allows (owner and admin:
//! `admin`; editor: `write`; viewer: `read`), and a key with the `admin` scope
//! is created (or raised to it) only with a fresh step-up. Secrets are shown
//! once, at creation.

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId};
use crate::openapi::SessionErrors;
use crate::openapi::{BodyErrors, NotFound};
use crate::respond::{Data, data};
use crate::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::roles::{Permission, Role};
use upstate_core::scope::{Scope, key_expiry, parse_scopes};
use upstate_core::{FieldErrors, Id, Timestamp, validate};
use upstate_store::api_keys::{self, ApiKey};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create, revoke_all))
        .routes(routes!(update, revoke))
}

fn ceiling(role: Role) -> Scope {
    match role {
        Role::Owner | Role::Admin => Scope::Admin,
        Role::Editor => Scope::Write,
        Role::Viewer => Scope::Read,
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct KeyView {
    id: Id,
    name: String,
    /// The first characters of the secret, to tell keys apart.
    prefix: String,
    scopes: Vec<String>,
    #[schema(value_type = String)]
    created_at: Timestamp,
    #[schema(value_type = Option<String>)]
    expires_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    revoked_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    last_used_at: Option<Timestamp>,
    /// Only in the answer to the creation, never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

impl From<ApiKey> for KeyView {
    fn from(k: ApiKey) -> Self {
        KeyView {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            scopes: k.scopes.iter().map(|s| s.as_str().to_string()).collect(),
            created_at: k.created_at,
            expires_at: k.expires_at,
            revoked_at: k.revoked_at,
            last_used_at: k.last_used_at,
            secret: None,
        }
    }
}

/// Scopes as `["read", "write"]` or `"read,write"`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
enum ScopesInput {
    List(Vec<String>),
    Text(String),
}

fn scopes(input: ScopesInput, me: &SignedIn, e: &mut FieldErrors) -> Option<Vec<Scope>> {
    let list = match input {
        ScopesInput::List(v) => v,
        ScopesInput::Text(t) => t.split(',').map(|s| s.trim().to_string()).collect(),
    };
    // Each scope once, as the document says (`uniqueItems`): a list that
    // repeats one was likely meant to say something else.
    if let Some(twice) = list
        .iter()
        .enumerate()
        .find(|(i, s)| !s.is_empty() && list[..*i].contains(s))
    {
        e.push("scopes", format!("names {:?} twice", twice.1));
        return None;
    }
    let text = list.join(",");
    let parsed = e.check("scopes", parse_scopes(&text).map_err(|x| x.to_string()))?;
    let limit = ceiling(me.session.user.role);
    if parsed.iter().any(|s| *s > limit) {
        e.push(
            "scopes",
            format!("your role allows at most the {} scope", limit.as_str()),
        );
        return None;
    }
    Some(parsed)
}

#[utoipa::path(get, path = "/api/api-keys", tag = "api keys", operation_id = "listMyKeys",
    summary = "Your API keys (never their secrets)", responses((status = 200, body = Data<Vec<KeyView>>), SessionErrors))]
async fn list(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    me.require(Permission::KeysManage)?;
    let keys = api_keys::list_of(&state.db, me.session.user.id).await?;
    Ok(data(
        keys.into_iter().map(KeyView::from).collect::<Vec<_>>(),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NewKeyInput {
    #[schema(schema_with = upstate_core::schema::name, required)]
    name: Option<String>,
    /// A list (or a comma-separated text) of read, write and admin.
    #[schema(schema_with = scopes_schema, required)]
    scopes: Option<ScopesInput>,
    #[schema(minimum = 1, maximum = 3650, nullable = false)]
    expires_in_days: Option<i64>,
}

/// `scopes` as the document shows it: one to three of the scopes.
fn scopes_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let scope = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["read", "write", "admin"]));
    ArrayBuilder::new()
        .items(scope)
        .min_items(Some(1))
        .max_items(Some(3))
        .unique_items(true)
        .build()
}

#[utoipa::path(post, path = "/api/api-keys", tag = "api keys", operation_id = "createMyKey",
    summary = "Create an API key; the secret is in this answer only (admin scope needs a step-up)",
    request_body = NewKeyInput, responses((status = 201, body = Data<KeyView>), SessionErrors, BodyErrors))]
async fn create(
    State(state): State<AppState>,
    me: SignedIn,
    headers: HeaderMap,
    Body(input): Body<NewKeyInput>,
) -> ApiResult<Response> {
    me.require(Permission::KeysManage)?;
    let mut e = FieldErrors::new();
    let name = e.check("name", validate::name(input.name.as_deref().unwrap_or("")));
    let scopes = match input.scopes {
        Some(s) => scopes(s, &me, &mut e),
        None => {
            e.push("scopes", "is required");
            None
        }
    };
    let expires_at = input
        .expires_in_days
        .and_then(|d| e.check("expiresInDays", key_expiry(state.db.clock.now(), d)));
    e.into_result()?;
    let (Some(name), Some(scopes)) = (name, scopes) else {
        return Err(ApiError::BadRequest("fields".into()));
    };
    if scopes.contains(&Scope::Admin) {
        me.require_step_up(&state, &headers).await?;
    }
    let (key, secret) = api_keys::create(&state.db, &me.audit, &name, &scopes, expires_at).await?;
    let mut view = KeyView::from(key);
    view.secret = Some(secret);
    Ok((StatusCode::CREATED, data(view)).into_response())
}

#[derive(Serialize, utoipa::ToSchema)]
struct Revoked {
    revoked: u64,
}

#[utoipa::path(delete, path = "/api/api-keys", tag = "api keys", operation_id = "revokeMyKeys",
    summary = "Revoke all your API keys", responses((status = 200, body = Data<Revoked>), SessionErrors))]
async fn revoke_all(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    me.require(Permission::KeysManage)?;
    Ok(data(Revoked {
        revoked: api_keys::revoke_all_of(&state.db, &me.audit, me.session.user.id).await?,
    }))
}

/// One of the caller's keys; someone else's is as good as missing.
async fn own(state: &AppState, me: &SignedIn, id: Id) -> ApiResult<ApiKey> {
    me.require(Permission::KeysManage)?;
    let key = api_keys::get(&state.db, id).await?;
    if key.user_id != Some(me.session.user.id) {
        return Err(ApiError::NotFound("API key not found".into()));
    }
    Ok(key)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(min_properties = 1)]
struct KeyPatchInput {
    #[schema(schema_with = upstate_core::schema::name)]
    name: Option<String>,
    #[schema(schema_with = scopes_schema)]
    scopes: Option<ScopesInput>,
}

#[utoipa::path(patch, path = "/api/api-keys/{id}", tag = "api keys", operation_id = "updateMyKey",
    summary = "Rename a key or change its scopes within your role", params(("id" = i64, Path)),
    request_body = KeyPatchInput, responses((status = 200, body = Data<KeyView>), SessionErrors, BodyErrors, NotFound))]
async fn update(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
    Body(input): Body<KeyPatchInput>,
) -> ApiResult<Response> {
    let key = own(&state, &me, id).await?;
    let mut e = FieldErrors::new();
    let name = input.name.and_then(|n| e.check("name", validate::name(&n)));
    let scopes = input.scopes.and_then(|s| scopes(s, &me, &mut e));
    if name.is_none() && scopes.is_none() && e.is_empty() {
        e.push("body", "names no field to change");
    }
    e.into_result()?;
    if scopes
        .as_ref()
        .is_some_and(|s| s.contains(&Scope::Admin) && !key.scopes.contains(&Scope::Admin))
    {
        me.require_step_up(&state, &headers).await?;
    }
    let key =
        api_keys::update(&state.db, &me.audit, id, name.as_deref(), scopes.as_deref()).await?;
    Ok(data(KeyView::from(key)))
}

#[utoipa::path(delete, path = "/api/api-keys/{id}", tag = "api keys", operation_id = "revokeMyKey",
    summary = "Revoke one of your keys", params(("id" = i64, Path)),
    responses((status = 200, body = Data<KeyView>), SessionErrors, NotFound))]
async fn revoke(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
) -> ApiResult<Response> {
    own(&state, &me, id).await?;
    Ok(data(KeyView::from(
        api_keys::revoke(&state.db, &me.audit, id).await?,
    )))
}
