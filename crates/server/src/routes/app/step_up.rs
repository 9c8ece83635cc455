//! `/api/admin/step-up`: a signed-in person proves it is them again (password
//! or TOTP, through the guard) before a sensitive action. A verified step-up
//! opens those actions for 5 minutes (`SignedIn::require_step_up`).

use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::guard::{Code, Guard, Purpose};
use crate::openapi::SessionErrors;
use crate::openapi::{BodyErrors, Conflict, NotFound, Throttled};
use crate::respond::{Data, data};
use crate::session::{STEP_UP_MS, SignedIn};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::Timestamp;
use upstate_store::step_up::{self, StepUp};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(step_up_create, step_up_latest))
        .routes(routes!(step_up_password))
        .routes(routes!(step_up_totp))
        .routes(routes!(step_up_status))
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

fn status_of(s: Option<StepUp>, now: Timestamp) -> StepUpStatus {
    let now = now.millis();
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
        state.db.clock.now(),
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
    Ok(data(status_of(
        Some(step_up::get(&state.db, &me.session.id, &token).await?),
        state.db.clock.now(),
    )))
}

/// A step-up proven with the account's password.
#[derive(Deserialize, utoipa::ToSchema)]
struct PasswordProof {
    #[schema(schema_with = upstate_core::schema::secret, required)]
    token: Option<String>,
    #[schema(schema_with = upstate_core::schema::secret, required)]
    password: Option<String>,
}

/// A step-up proven with a current TOTP code.
#[derive(Deserialize, utoipa::ToSchema)]
struct CodeProof {
    #[schema(schema_with = upstate_core::schema::secret, required)]
    token: Option<String>,
    #[schema(required, nullable = false, pattern = "^[0-9]{6}$")]
    code: Option<String>,
}

/// The step-up a proof is for.
fn token_of(token: Option<String>) -> ApiResult<String> {
    token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::validation("token", "is required"))
}

/// Marks the step-up verified (the proof passed the guard) and answers its status.
async fn verified(
    state: &AppState,
    me: &SignedIn,
    token: &str,
    method: &str,
) -> ApiResult<Response> {
    step_up::verify(
        &state.db,
        &me.audit,
        &me.session.id,
        token,
        method,
        STEP_UP_MS,
    )
    .await?;
    Ok(data(status_of(
        Some(step_up::get(&state.db, &me.session.id, token).await?),
        state.db.clock.now(),
    )))
}

#[utoipa::path(post, path = "/api/admin/step-up/verify-password", tag = "step-up", operation_id = "stepUpVerifyPassword",
    summary = "Verify a step-up with your password (3 wrong proofs end the step-up)", request_body = PasswordProof,
    responses((status = 200, body = Data<StepUpStatus>), SessionErrors, BodyErrors, Conflict, Throttled))]
async fn step_up_password(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(p): Body<PasswordProof>,
) -> ApiResult<Response> {
    let token = token_of(p.token)?;
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
    verified(&state, &me, &token, "password").await
}

#[utoipa::path(post, path = "/api/admin/step-up/verify-totp", tag = "step-up", operation_id = "stepUpVerifyTotp",
    summary = "Verify a step-up with a current TOTP code (3 wrong proofs end the step-up)", request_body = CodeProof,
    responses((status = 200, body = Data<StepUpStatus>), SessionErrors, BodyErrors, Conflict, Throttled))]
async fn step_up_totp(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(p): Body<CodeProof>,
) -> ApiResult<Response> {
    let token = token_of(p.token)?;
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
    verified(&state, &me, &token, "totp").await
}
