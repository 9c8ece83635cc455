//! `/api/admin`: step-up and user administration.
//!
//! Rules: user routes need USERS_MANAGE; nobody acts on a user ranked above
//! them or grants a role above their own; the last owner cannot be demoted or
//! removed. Changing a role, deleting a user, and resetting someone's
//! password or two-factor need a step-up verified within the last 5 minutes,
//! sent as `X-Step-Up-Token`.

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId};
use crate::guard::{Code, Guard, Purpose};
use crate::openapi::{BodyErrors, Conflict, NotFound, Throttled};
use crate::password;
use crate::respond::{Data, data};
use crate::routes::auth::SessionErrors;
use crate::session::SignedIn;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::roles::{self, Permission, Role};
use upstate_core::{FieldErrors, Id, Timestamp, validate};
use upstate_store::step_up::{self, StepUp};
use upstate_store::two_factor;
use upstate_store::users::{self, User};
use utoipa_axum::{router::OpenApiRouter, routes};

/// How long a verified step-up opens sensitive actions, and how long an
/// unverified one may wait for verification.
pub const STEP_UP_MS: i64 = 5 * 60_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(step_up_create, step_up_latest))
        .routes(routes!(step_up_password))
        .routes(routes!(step_up_totp))
        .routes(routes!(step_up_status))
        .routes(routes!(users_list, users_create))
        .routes(routes!(users_get, users_update, users_delete))
        .routes(routes!(users_actions))
        .routes(routes!(reset_password))
        .routes(routes!(reset_2fa))
        .routes(routes!(revoke_sessions))
}

/// Refuses unless the request carries a step-up of this session verified
/// within the last 5 minutes.
pub(crate) async fn require_step_up(
    state: &AppState,
    me: &SignedIn,
    headers: &HeaderMap,
) -> ApiResult<()> {
    let refuse = || {
        ApiError::Forbidden(
            "this action needs a fresh step-up: POST /api/admin/step-up, verify it, send X-Step-Up-Token".into(),
        )
    };
    let token = headers
        .get("x-step-up-token")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(refuse)?;
    let s = match step_up::get(&state.db, &me.session.id, token).await {
        Ok(s) => s,
        Err(upstate_store::StoreError::NotFound(_)) => return Err(refuse()),
        Err(e) => return Err(e.into()),
    };
    match s.verified_at {
        Some(at) if Timestamp::now().millis() - at.millis() <= STEP_UP_MS => Ok(()),
        _ => Err(refuse()),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StepUpCreated {
    /// Verify it, then send it as `X-Step-Up-Token`.
    token: String,
    expires_in_seconds: i64,
}

#[utoipa::path(post, path = "/api/admin/step-up", tag = "step-up", operation_id = "stepUpCreate",
    summary = "Start a step-up for this session", responses((status = 201, body = Data<StepUpCreated>), SessionErrors))]
async fn step_up_create(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    let token = step_up::create(&state.db, &me.session.id, me.session.user.id).await?;
    Ok((
        StatusCode::CREATED,
        data(StepUpCreated {
            token,
            expires_in_seconds: STEP_UP_MS / 1000,
        }),
    )
        .into_response())
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StepUpStatus {
    verified: bool,
    /// Whether it opens sensitive actions right now.
    active: bool,
    #[schema(value_type = Option<String>)]
    created_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    verified_at: Option<Timestamp>,
    method: Option<String>,
}

fn status_of(s: Option<StepUp>) -> StepUpStatus {
    let now = Timestamp::now().millis();
    match s {
        None => StepUpStatus {
            verified: false,
            active: false,
            created_at: None,
            verified_at: None,
            method: None,
        },
        Some(s) => StepUpStatus {
            verified: s.verified_at.is_some(),
            active: s
                .verified_at
                .is_some_and(|v| now - v.millis() <= STEP_UP_MS),
            created_at: Some(s.created_at),
            verified_at: s.verified_at,
            method: s.method,
        },
    }
}

#[utoipa::path(get, path = "/api/admin/step-up", tag = "step-up", operation_id = "stepUpLatest",
    summary = "This session's latest step-up", responses((status = 200, body = Data<StepUpStatus>), SessionErrors))]
async fn step_up_latest(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    Ok(data(status_of(
        step_up::latest(&state.db, &me.session.id).await?,
    )))
}

#[utoipa::path(get, path = "/api/admin/step-up/{token}", tag = "step-up", operation_id = "stepUpStatus",
    summary = "A step-up's status", params(("token" = String, Path)),
    responses((status = 200, body = Data<StepUpStatus>), SessionErrors, NotFound))]
async fn step_up_status(
    State(state): State<AppState>,
    me: SignedIn,
    Path(token): Path<String>,
) -> ApiResult<Response> {
    Ok(data(status_of(Some(
        step_up::get(&state.db, &me.session.id, &token).await?,
    ))))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct StepUpProof {
    token: Option<String>,
    password: Option<String>,
    code: Option<String>,
}

fn token_of(p: &StepUpProof) -> ApiResult<String> {
    p.token
        .clone()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::validation("token", "is required"))
}

#[utoipa::path(post, path = "/api/admin/step-up/verify-password", tag = "step-up", operation_id = "stepUpVerifyPassword",
    summary = "Verify a step-up with your password (3 wrong proofs end the step-up)", request_body = StepUpProof,
    responses((status = 200, body = Data<StepUpStatus>), SessionErrors, BodyErrors, Conflict, Throttled))]
async fn step_up_password(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(p): Body<StepUpProof>,
) -> ApiResult<Response> {
    let token = token_of(&p)?;
    let pw = p
        .password
        .filter(|x| !x.is_empty())
        .ok_or_else(|| ApiError::validation("password", "is required"))?;
    if !guard
        .password(&me.session.user, pw, Purpose::StepUp { token: &token })
        .await?
    {
        return Err(ApiError::validation("password", "is wrong"));
    }
    step_up::verify(
        &state.db,
        &me.audit,
        &me.session.id,
        &token,
        "password",
        STEP_UP_MS,
    )
    .await?;
    Ok(data(status_of(Some(
        step_up::get(&state.db, &me.session.id, &token).await?,
    ))))
}

#[utoipa::path(post, path = "/api/admin/step-up/verify-totp", tag = "step-up", operation_id = "stepUpVerifyTotp",
    summary = "Verify a step-up with a current TOTP code (3 wrong proofs end the step-up)", request_body = StepUpProof,
    responses((status = 200, body = Data<StepUpStatus>), SessionErrors, BodyErrors, Conflict, Throttled))]
async fn step_up_totp(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(p): Body<StepUpProof>,
) -> ApiResult<Response> {
    let token = token_of(&p)?;
    let code = p
        .code
        .filter(|x| !x.is_empty())
        .ok_or_else(|| ApiError::validation("code", "is required"))?;
    if !me.session.user.totp_enabled {
        return Err(ApiError::Conflict(
            "two-factor authentication is off; verify with your password".into(),
        ));
    }
    if !guard
        .second_factor(
            &me.session.user,
            Code::Totp(code),
            Purpose::StepUp { token: &token },
        )
        .await?
    {
        return Err(ApiError::validation("code", "is wrong or already used"));
    }
    step_up::verify(
        &state.db,
        &me.audit,
        &me.session.id,
        &token,
        "totp",
        STEP_UP_MS,
    )
    .await?;
    Ok(data(status_of(Some(
        step_up::get(&state.db, &me.session.id, &token).await?,
    ))))
}

// ------------------------------------------------------------------ users

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
    email: Option<String>,
    name: Option<String>,
    role: Option<String>,
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
    let email = e.check("email", roles::email(input.email.as_deref().unwrap_or("")));
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
    let user = users::create(&state.db, &me.audit, &email, &name, role, &hash).await?;
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
struct UserPatchInput {
    name: Option<String>,
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
        require_step_up(&state, &me, &headers).await?;
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
    require_step_up(&state, &me, &headers).await?;
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
            require_step_up(state, me, headers).await?;
            let temporary = users::token()[..20].to_string();
            let hash = password::hash(temporary.clone()).await?;
            users::change_password(&state.db, &me.audit, id, &hash, None).await?;
            ActionResult {
                action: action.into(),
                temporary_password: Some(temporary),
                sessions_ended: None,
            }
        }
        "reset-2fa" => {
            require_step_up(state, me, headers).await?;
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
