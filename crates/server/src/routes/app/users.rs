//! `/api/admin/users`: user administration.
//!
//! Rules: user routes need USERS_MANAGE; nobody acts on a user ranked above
//! them or grants a role above their own; the last owner cannot be demoted or
//! removed. Changing a role, deleting a user, and resetting someone's
//! password or two-factor need a step-up verified within the last 5 minutes,
//! sent as `X-Step-Up-Token`.

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId};
use crate::openapi::SessionErrors;
use crate::openapi::{BodyErrors, Conflict, NotFound};
use crate::password;
use crate::respond::{Data, data};
use crate::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::roles::{self, Permission, Role};
use upstate_core::values::Email;
use upstate_core::{FieldErrors, Id, validate};
use upstate_store::two_factor;
use upstate_store::users::{self, User};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(users_list, users_create))
        .routes(routes!(users_get, users_update, users_delete))
        .routes(routes!(users_actions))
        .routes(routes!(reset_password))
        .routes(routes!(reset_2fa))
        .routes(routes!(revoke_sessions))
}

/// The target, if the caller may act on them (same rank or below).
async fn target(state: &AppState, me: &SignedIn, id: Id) -> ApiResult<User> {
    me.require(Permission::UsersManage)?;
    let user = users::get(&state.db, id).await?;
    if user.role > me.session.user.role {
        return Err(ApiError::Forbidden(
            "you cannot manage a user ranked above you".into(),
        ));
    }
    Ok(user)
}

fn grantable(me: &SignedIn, role: Role) -> ApiResult<()> {
    if role > me.session.user.role {
        Err(ApiError::Forbidden(
            "you cannot grant a role above your own".into(),
        ))
    } else {
        Ok(())
    }
}

#[utoipa::path(get, path = "/api/admin/users", tag = "users", operation_id = "listUsers", summary = "All users (needs USERS_MANAGE)",
    responses((status = 200, body = Data<Vec<Object>>), SessionErrors))]
async fn users_list(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    me.require(Permission::UsersManage)?;
    Ok(data(users::list(&state.db).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct NewUserInput {
    #[schema(schema_with = upstate_core::schema::email, required)]
    email: Option<String>,
    #[schema(schema_with = upstate_core::schema::name, required)]
    name: Option<String>,
    #[schema(required, nullable = false, pattern = "^(owner|admin|editor|viewer)$")]
    role: Option<String>,
    #[schema(schema_with = upstate_core::schema::new_password, required)]
    password: Option<String>,
}

#[utoipa::path(post, path = "/api/admin/users", tag = "users", operation_id = "createUser",
    summary = "Create a user with a role up to your own", request_body = NewUserInput,
    responses((status = 201, body = Data<Object>), SessionErrors, BodyErrors, Conflict))]
async fn users_create(
    State(state): State<AppState>,
    me: SignedIn,
    Body(input): Body<NewUserInput>,
) -> ApiResult<Response> {
    me.require(Permission::UsersManage)?;
    let mut e = FieldErrors::new();
    let email = e.check("email", Email::parse(input.email.as_deref().unwrap_or("")));
    let name = e.check("name", validate::name(input.name.as_deref().unwrap_or("")));
    let role = e.check(
        "role",
        input
            .role
            .as_deref()
            .unwrap_or("")
            .parse::<Role>()
            .map_err(|x| x.to_string()),
    );
    let pw = input.password.unwrap_or_default();
    e.check("password", roles::password(&pw));
    e.into_result()?;
    let (Some(email), Some(name), Some(role)) = (email, name, role) else {
        return Err(ApiError::BadRequest("fields".into()));
    };
    grantable(&me, role)?;
    let hash = password::hash(pw).await?;
    let user = users::create(&state.db, &me.audit, &email, &name, role, &hash, true).await?;
    Ok((StatusCode::CREATED, data(user)).into_response())
}

#[utoipa::path(get, path = "/api/admin/users/{id}", tag = "users", operation_id = "getUser", summary = "A user",
    params(("id" = i64, Path)), responses((status = 200, body = Data<Object>), SessionErrors, NotFound))]
async fn users_get(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
) -> ApiResult<Response> {
    Ok(data(target(&state, &me, id).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(min_properties = 1)]
struct UserPatchInput {
    #[schema(schema_with = upstate_core::schema::name)]
    name: Option<String>,
    #[schema(nullable = false, pattern = "^(owner|admin|editor|viewer)$")]
    role: Option<String>,
}

#[utoipa::path(patch, path = "/api/admin/users/{id}", tag = "users", operation_id = "updateUser",
    summary = "Rename a user or change their role (a role change needs a step-up)", params(("id" = i64, Path)),
    request_body = UserPatchInput, responses((status = 200, body = Data<Object>), SessionErrors, BodyErrors, NotFound, Conflict))]
async fn users_update(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
    Body(input): Body<UserPatchInput>,
) -> ApiResult<Response> {
    let current = target(&state, &me, id).await?;
    let mut e = FieldErrors::new();
    let name = input.name.and_then(|n| e.check("name", validate::name(&n)));
    let role = input
        .role
        .and_then(|r| e.check("role", r.parse::<Role>().map_err(|x| x.to_string())));
    if name.is_none() && role.is_none() && e.is_empty() {
        e.push("body", "names no field to change");
    }
    e.into_result()?;
    if let Some(r) = role.filter(|r| *r != current.role) {
        grantable(&me, r)?;
        me.require_step_up(&state, &headers).await?;
    }
    Ok(data(
        users::update(&state.db, &me.audit, id, name.as_deref(), role).await?,
    ))
}

#[utoipa::path(delete, path = "/api/admin/users/{id}", tag = "users", operation_id = "deleteUser",
    summary = "Delete a user (needs a step-up; never the last owner)", params(("id" = i64, Path)),
    responses((status = 204, description = "Deleted"), SessionErrors, NotFound, Conflict))]
async fn users_delete(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    target(&state, &me, id).await?;
    me.require_step_up(&state, &headers).await?;
    users::delete(&state.db, &me.audit, id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ActionResult {
    action: String,
    /// For reset-password: the new password, shown once.
    temporary_password: Option<String>,
    sessions_ended: Option<u64>,
}

async fn act(
    state: &AppState,
    me: &SignedIn,
    id: Id,
    action: &str,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    target(state, me, id).await?;
    let result = match action {
        "revoke-sessions" => {
            let n = users::revoke_sessions(&state.db, &me.audit, id).await?;
            ActionResult {
                action: action.into(),
                temporary_password: None,
                sessions_ended: Some(n),
            }
        }
        "reset-password" => {
            me.require_step_up(state, headers).await?;
            let temporary = users::token()[..20].to_string();
            let hash = password::hash(temporary.clone()).await?;
            users::change_password(&state.db, &me.audit, id, &hash, None, true).await?;
            ActionResult {
                action: action.into(),
                temporary_password: Some(temporary),
                sessions_ended: None,
            }
        }
        "reset-2fa" => {
            me.require_step_up(state, headers).await?;
            two_factor::disable(&state.db, &me.audit, id).await?;
            ActionResult {
                action: action.into(),
                temporary_password: None,
                sessions_ended: None,
            }
        }
        _ => {
            return Err(ApiError::validation(
                "action",
                "must be reset-password, reset-2fa or revoke-sessions",
            ));
        }
    };
    Ok(data(result))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct ActionInput {
    #[schema(
        required,
        nullable = false,
        pattern = "^(reset-password|reset-2fa|revoke-sessions)$"
    )]
    action: Option<String>,
}

#[utoipa::path(post, path = "/api/admin/users/{id}/actions", tag = "users", operation_id = "userAction",
    summary = "reset-password, reset-2fa (both need a step-up) or revoke-sessions", params(("id" = i64, Path)),
    request_body = ActionInput, responses((status = 200, body = Data<ActionResult>), SessionErrors, BodyErrors, NotFound))]
async fn users_actions(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
    Body(input): Body<ActionInput>,
) -> ApiResult<Response> {
    act(
        &state,
        &me,
        id,
        input.action.as_deref().unwrap_or(""),
        &headers,
    )
    .await
}

#[utoipa::path(post, path = "/api/admin/users/{id}/reset-password", tag = "users", operation_id = "resetPassword",
    summary = "Set a temporary password (shown once) and end the user's sessions; needs a step-up", params(("id" = i64, Path)),
    responses((status = 200, body = Data<ActionResult>), SessionErrors, NotFound))]
async fn reset_password(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    act(&state, &me, id, "reset-password", &headers).await
}

#[utoipa::path(post, path = "/api/admin/users/{id}/reset-2fa", tag = "users", operation_id = "resetTwoFactor",
    summary = "Turn a user's two-factor off; needs a step-up", params(("id" = i64, Path)),
    responses((status = 200, body = Data<ActionResult>), SessionErrors, NotFound))]
async fn reset_2fa(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    act(&state, &me, id, "reset-2fa", &headers).await
}

#[utoipa::path(post, path = "/api/admin/users/{id}/revoke-sessions", tag = "users", operation_id = "revokeSessions",
    summary = "End all of a user's sessions", params(("id" = i64, Path)),
    responses((status = 200, body = Data<ActionResult>), SessionErrors, NotFound))]
async fn revoke_sessions(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    act(&state, &me, id, "revoke-sessions", &headers).await
}
