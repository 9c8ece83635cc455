//! Two-factor routes: set up (secret, otpauth URI, SVG QR), verify the setup,
//! status, disable, regenerate recovery codes, and the second sign-in step.

use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::guard::{Code, Guard, Purpose};
use crate::openapi::SessionErrors;
use crate::openapi::{BodyErrors, Throttled};
use crate::respond::{Data, data};
use crate::session::{self, SignedIn, audit_ctx};
use crate::state::AppState;
use crate::totp;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use upstate_core::audit::Actor;
use upstate_store::{two_factor, users};
use utoipa_axum::{router::OpenApiRouter, routes};

/// How long a password-checked sign-in may wait for its second factor.
pub const PENDING_MS: i64 = 5 * 60_000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(setup))
        .routes(routes!(verify_setup))
        .routes(routes!(status))
        .routes(routes!(disable))
        .routes(routes!(regenerate_codes))
        .routes(routes!(verify_2fa))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SetupBody {
    /// Base32, for typing into an authenticator by hand.
    secret: String,
    otpauth_url: String,
    /// The otpauth URL as an SVG QR code.
    qr_svg: String,
}

#[utoipa::path(
    post,
    path = "/api/auth/2fa/setup",
    tag = "two-factor",
    operation_id = "twoFactorSetup",
    summary = "Start two-factor setup: a new TOTP secret, its otpauth URI and QR code",
    responses((status = 200, body = Data<SetupBody>), SessionErrors,
        (status = 409, description = "Two-factor is on already", content_type = "application/problem+json"))
)]
async fn setup(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    if me.session.user.totp_enabled {
        return Err(ApiError::Conflict(
            "two-factor authentication is on already; disable it first".into(),
        ));
    }
    let secret = totp::new_secret();
    let url = totp::uri(&secret, &me.session.user.email)
        .ok_or_else(|| ApiError::Internal("totp uri".into()))?;
    let qr_svg = totp::qr_svg(&url).ok_or_else(|| ApiError::Internal("qr code".into()))?;
    two_factor::set_pending(&state.db, &me.audit, me.session.user.id, &secret).await?;
    Ok(data(SetupBody {
        secret,
        otpauth_url: url,
        qr_svg,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct CodeInput {
    #[schema(required, nullable = false, pattern = "^[0-9]{6}$")]
    code: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CodesBody {
    /// Shown once; each signs in once instead of a TOTP code.
    recovery_codes: Vec<String>,
}

fn required_code(c: Option<String>) -> ApiResult<String> {
    c.filter(|c| !c.trim().is_empty())
        .ok_or_else(|| ApiError::validation("code", "is required"))
}

#[utoipa::path(
    post,
    path = "/api/auth/2fa/verify-setup",
    tag = "two-factor",
    operation_id = "twoFactorVerifySetup",
    summary = "Turn two-factor on with a code from the new secret; returns 10 recovery codes",
    request_body = CodeInput,
    responses((status = 200, body = Data<CodesBody>), SessionErrors, BodyErrors, Throttled,
        (status = 409, description = "No setup was started", content_type = "application/problem+json"))
)]
async fn verify_setup(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(input): Body<CodeInput>,
) -> ApiResult<Response> {
    let code = required_code(input.code)?;
    let user = me.session.user.id;
    let pending = two_factor::state(&state.db, user)
        .await?
        .pending
        .ok_or_else(|| ApiError::Conflict("start with POST /api/auth/2fa/setup".into()))?;
    let step = guard
        .new_second_factor(&me.session.user, &pending, &code)
        .await?
        .ok_or_else(|| ApiError::validation("code", "is not the current code of the new secret"))?;
    let codes = totp::recovery_codes();
    two_factor::enable(&state.db, &me.audit, user, &pending, step, &codes).await?;
    Ok(data(CodesBody {
        recovery_codes: codes,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct StatusBody {
    enabled: bool,
    recovery_codes_left: i64,
}

#[utoipa::path(
    get,
    path = "/api/auth/2fa/status",
    tag = "two-factor",
    operation_id = "twoFactorStatus",
    summary = "Whether two-factor is on, and how many recovery codes are left",
    responses((status = 200, body = Data<StatusBody>), SessionErrors)
)]
async fn status(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    let left = two_factor::codes_left(&state.db, me.session.user.id).await?;
    Ok(data(StatusBody {
        enabled: me.session.user.totp_enabled,
        recovery_codes_left: left,
    }))
}

/// Your password, or a current code: one of them (`oneOf`).
#[derive(Deserialize)]
struct ProofInput {
    password: Option<String>,
    code: Option<String>,
}

impl utoipa::PartialSchema for ProofInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::openapi::one_field_of(&[
            ("password", upstate_core::schema::secret()),
            ("code", upstate_core::schema::secret()),
        ])
    }
}

impl utoipa::ToSchema for ProofInput {}

/// Both alternatives given: which one counts would be a guess. Named by
/// the second field, in words a person reads beside it.
fn one_of(both: bool, field: &str, words: &str) -> ApiResult<()> {
    if both {
        return Err(ApiError::validation(field, words));
    }
    Ok(())
}

/// The user proves it is them again: the password, or a current TOTP code.
async fn prove(guard: &Guard, user: &users::User, input: ProofInput) -> ApiResult<()> {
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    one_of(
        given(&input.password) && given(&input.code),
        "code",
        "give your password or a current code, not both",
    )?;
    if let Some(code) = input.code.filter(|c| !c.trim().is_empty()) {
        return match guard
            .second_factor(user, Code::Totp(code), Purpose::Proof)
            .await?
        {
            true => Ok(()),
            false => Err(ApiError::validation("code", "is wrong or already used")),
        };
    }
    let Some(pw) = input.password.filter(|p| !p.is_empty()) else {
        return Err(ApiError::validation(
            "password",
            "give your password or a current code",
        ));
    };
    match guard.password(user, pw, Purpose::Proof).await? {
        true => Ok(()),
        false => Err(ApiError::validation("password", "is wrong")),
    }
}

#[utoipa::path(
    post,
    path = "/api/auth/2fa/disable",
    tag = "two-factor",
    operation_id = "twoFactorDisable",
    summary = "Turn two-factor off (needs the password or a current code)",
    request_body = ProofInput,
    responses((status = 204, description = "Off"), SessionErrors, BodyErrors, Throttled)
)]
async fn disable(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(input): Body<ProofInput>,
) -> ApiResult<Response> {
    prove(&guard, &me.session.user, input).await?;
    two_factor::disable(&state.db, &me.audit, me.session.user.id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    post,
    path = "/api/auth/2fa/regenerate-codes",
    tag = "two-factor",
    operation_id = "twoFactorRegenerateCodes",
    summary = "Replace the recovery codes with 10 new ones (needs the password or a current code)",
    request_body = ProofInput,
    responses((status = 200, body = Data<CodesBody>), SessionErrors, BodyErrors, Throttled,
        (status = 409, description = "Two-factor is off", content_type = "application/problem+json"))
)]
async fn regenerate_codes(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(input): Body<ProofInput>,
) -> ApiResult<Response> {
    if !me.session.user.totp_enabled {
        return Err(ApiError::Conflict(
            "two-factor authentication is off".into(),
        ));
    }
    prove(&guard, &me.session.user, input).await?;
    let codes = totp::recovery_codes();
    two_factor::regenerate_codes(&state.db, &me.audit, me.session.user.id, &codes).await?;
    Ok(data(CodesBody {
        recovery_codes: codes,
    }))
}

/// A current code, or one of the recovery codes (`oneOf`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecondFactorInput {
    code: Option<String>,
    recovery_code: Option<String>,
}

impl utoipa::PartialSchema for SecondFactorInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::openapi::one_field_of(&[
            ("code", upstate_core::schema::secret()),
            ("recoveryCode", upstate_core::schema::secret()),
        ])
    }
}

impl utoipa::ToSchema for SecondFactorInput {}

#[utoipa::path(
    post,
    path = "/api/auth/verify-2fa",
    tag = "two-factor",
    operation_id = "verifyTwoFactor",
    summary = "Finish a sign-in with a TOTP or recovery code; replaces the pending session with a full one",
    request_body = SecondFactorInput,
    responses((status = 200, body = Data<crate::session::SignedInBody>), BodyErrors, Throttled,
        (status = 401, description = "No sign-in is waiting for a second factor (or it ended after too many wrong codes)", content_type = "application/problem+json"))
)]
async fn verify_2fa(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    guard: Guard,
    Body(input): Body<SecondFactorInput>,
) -> ApiResult<Response> {
    let token = session::cookie_token(&headers)
        .ok_or_else(|| ApiError::Unauthorized("sign in with your password first".into()))?;
    let (pending_id, user_id) = two_factor::pending_user(&state.db, &token, PENDING_MS)
        .await?
        .ok_or_else(|| ApiError::Unauthorized("sign in with your password first".into()))?;
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    one_of(
        given(&input.code) && given(&input.recovery_code),
        "recoveryCode",
        "give the code or a recovery code, not both",
    )?;
    let code = match input.recovery_code.filter(|c| !c.trim().is_empty()) {
        Some(recovery) => Code::Recovery(recovery),
        None => Code::Totp(required_code(input.code)?),
    };
    let user = users::get(&state.db, user_id).await?;
    if !guard
        .second_factor(
            &user,
            code,
            Purpose::SignIn {
                pending: &pending_id,
            },
        )
        .await?
    {
        return Err(ApiError::validation("code", "is wrong or already used"));
    }
    users::end_session(&state.db, &pending_id).await?;
    let actor = Actor::user(user.id, &user.email);
    let ctx = audit_ctx(&headers, Some(peer), &state, actor);
    let (session, token) =
        users::start_session(&state.db, &ctx, &user, session::ABSOLUTE_MS).await?;
    let mut res = data(crate::session::SignedInBody {
        user,
        csrf_token: session.csrf_token,
    });
    res.headers_mut().insert(
        header::SET_COOKIE,
        session::set_cookie(&token, state.settings.secure_cookies),
    );
    Ok(res)
}
