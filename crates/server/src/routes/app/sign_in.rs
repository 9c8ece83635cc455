//! Application routes for people: sign-in, sign-out, who am I, permissions,
//! password change, CSRF token, roles, and the first owner's setup.
//!
//! Sign-in answers the same for an unknown email as for a wrong password, in
//! about the same time (a dummy hash is verified). Every password check here
//! goes through the guard (`crate::guard`), which throttles failures.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::guard::{Guard, Purpose};
use crate::openapi::{BodyErrors, Conflict, SessionErrors, Throttled};
use crate::password;
use crate::respond::{Data, data, nosniff};
use crate::session::{self, SignedIn, SignedInBody, audit_ctx};
use crate::state::AppState;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use upstate_core::audit::Actor;
use upstate_core::roles::{self, Permission, Role};
use upstate_core::values::Email;
use upstate_core::{FieldErrors, validate};
use upstate_store::users;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(permissions))
        .routes(routes!(change_password))
        .routes(routes!(csrf))
        .routes(routes!(roles_list))
        .routes(routes!(setup))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct LoginInput {
    #[schema(schema_with = upstate_core::schema::email, required)]
    email: Option<String>,
    #[schema(schema_with = upstate_core::schema::secret, required)]
    password: Option<String>,
}

/// The answer to a correct password when two-factor is on.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SecondFactorNeeded {
    /// Always true: finish with POST /api/auth/verify-2fa within 5 minutes.
    two_factor_required: bool,
}

#[utoipa::path(
    post,
    path = "/api/auth/login",
    tag = "auth",
    operation_id = "login",
    summary = "Sign in with email and password; sets the session cookie",
    request_body = LoginInput,
    responses(
        (status = 200, body = Data<SignedInBody>, description = "Signed in (or, with two-factor on, `{twoFactorRequired: true}` and a pending session)"),
        (status = 401, description = "Wrong email or password (the same answer for both)", content_type = "application/problem+json"),
        (status = 403, description = "Single sign-on only: passwords open only an owner's account", content_type = "application/problem+json"),
        Throttled,
        BodyErrors
    )
)]
async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    guard: Guard,
    Body(input): Body<LoginInput>,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let email = match input.email {
        Some(v) => e.check("email", Email::parse(&v)),
        None => {
            e.push("email", "is required");
            None
        }
    };
    let pw = input.password.filter(|p| !p.is_empty());
    if pw.is_none() {
        e.push("password", "is required");
    }
    e.into_result()?;
    let (Some(email), Some(pw)) = (email, pw) else {
        return Err(ApiError::BadRequest("email and password".into()));
    };
    let Some(user) = guard.sign_in(&email, pw).await? else {
        return Err(ApiError::Unauthorized(
            "the email or the password is wrong".into(),
        ));
    };
    // With single sign-on only, a right password still opens nothing but
    // an owner's account (the way back in when the provider is down).
    if !crate::sso::settings(&state)
        .await?
        .password_allowed(user.role)
    {
        return Err(ApiError::Forbidden(
            "this install signs in through single sign-on only: use the single sign-on button"
                .into(),
        ));
    }
    let actor = Actor::user(user.id, &user.email);
    let ctx = audit_ctx(&headers, Some(peer), &state, actor);
    let (session, token) =
        users::start_session(&state.db, &ctx, &user, session::ABSOLUTE_MS).await?;
    let mut res = if user.totp_enabled {
        upstate_store::two_factor::mark_pending(&state.db, &session).await?;
        data(SecondFactorNeeded {
            two_factor_required: true,
        })
    } else {
        data(SignedInBody {
            user,
            csrf_token: session.csrf_token,
        })
    };
    res.headers_mut().insert(
        header::SET_COOKIE,
        session::set_cookie(&token, state.settings.secure_cookies),
    );
    Ok(res)
}

#[utoipa::path(
    post,
    path = "/api/auth/logout",
    tag = "auth",
    operation_id = "logout",
    summary = "Sign out: ends this session and clears the cookie",
    responses((status = 204, description = "Signed out"), SessionErrors)
)]
async fn logout(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    users::logout(&state.db, &me.audit, &me.session).await?;
    let mut res = StatusCode::NO_CONTENT.into_response();
    res.headers_mut().insert(
        header::SET_COOKIE,
        session::clear_cookie(state.settings.secure_cookies),
    );
    res.headers_mut().append(
        header::SET_COOKIE,
        session::clear_step_up(state.settings.secure_cookies),
    );
    Ok(res)
}

#[utoipa::path(
    get,
    path = "/api/auth/me",
    tag = "auth",
    operation_id = "me",
    summary = "The signed-in user",
    responses((status = 200, body = Data<Object>), SessionErrors)
)]
async fn me(me: SignedIn) -> Response {
    data(me.session.user)
}

#[derive(Serialize, utoipa::ToSchema)]
struct PermissionsBody {
    role: Role,
    permissions: Vec<Permission>,
}

#[utoipa::path(
    get,
    path = "/api/auth/permissions",
    tag = "auth",
    operation_id = "permissions",
    summary = "The signed-in user's role and permissions",
    responses((status = 200, body = Data<PermissionsBody>), SessionErrors)
)]
async fn permissions(me: SignedIn) -> Response {
    let role = me.session.user.role;
    data(PermissionsBody {
        role,
        permissions: role.permissions().to_vec(),
    })
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ChangePasswordInput {
    #[schema(schema_with = upstate_core::schema::secret, required)]
    current_password: Option<String>,
    #[schema(schema_with = upstate_core::schema::new_password, required)]
    new_password: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/auth/change-password",
    tag = "auth",
    operation_id = "changePassword",
    summary = "Change your password (needs the current one); ends your other sessions",
    request_body = ChangePasswordInput,
    responses((status = 204, description = "Changed"), SessionErrors, BodyErrors, Throttled)
)]
async fn change_password(
    State(state): State<AppState>,
    me: SignedIn,
    guard: Guard,
    Body(input): Body<ChangePasswordInput>,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let current = input.current_password.unwrap_or_default();
    if current.is_empty() {
        e.push("currentPassword", "is required");
    }
    let new = input.new_password.unwrap_or_default();
    e.check("newPassword", roles::password(&new));
    e.into_result()?;
    if !guard
        .password(&me.session.user, current, Purpose::Proof)
        .await?
    {
        return Err(ApiError::validation("currentPassword", "is wrong"));
    }
    let hash = password::hash(new).await?;
    users::change_password(
        &state.db,
        &me.audit,
        me.session.user.id,
        &hash,
        Some(&me.session.id),
        false,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CsrfBody {
    csrf_token: String,
}

#[utoipa::path(
    get,
    path = "/api/csrf",
    tag = "auth",
    operation_id = "csrf",
    summary = "The CSRF token of the current session",
    responses((status = 200, body = Data<CsrfBody>), SessionErrors)
)]
async fn csrf(me: SignedIn) -> Response {
    data(CsrfBody {
        csrf_token: me.session.csrf_token,
    })
}

#[derive(Serialize, utoipa::ToSchema)]
struct RoleBody {
    role: Role,
    permissions: Vec<Permission>,
}

#[utoipa::path(
    get,
    path = "/api/admin/roles",
    tag = "auth",
    operation_id = "roles",
    summary = "Every role and its permissions (needs ROLES_VIEW: an owner or admin, or an admin key)",
    responses((status = 200, body = Data<Vec<RoleBody>>), SessionErrors),
    security(("session" = []), ("api_key" = []))
)]
async fn roles_list(caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::RolesView)?;
    Ok(data(
        Role::ALL
            .iter()
            .map(|r| RoleBody {
                role: *r,
                permissions: r.permissions().to_vec(),
            })
            .collect::<Vec<_>>(),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct SetupInput {
    #[schema(schema_with = upstate_core::schema::secret, required)]
    token: Option<String>,
    #[schema(schema_with = upstate_core::schema::email, required)]
    email: Option<String>,
    #[schema(schema_with = upstate_core::schema::name, required)]
    name: Option<String>,
    #[schema(schema_with = upstate_core::schema::new_password, required)]
    password: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/auth/setup",
    tag = "auth",
    operation_id = "setupOwner",
    summary = "Create the first owner with the one-time link logged at start-up",
    request_body = SetupInput,
    responses((status = 201, body = Data<Object>), BodyErrors, Conflict, Throttled)
)]
async fn setup(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    guard: Guard,
    Body(input): Body<SetupInput>,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let token = input.token.filter(|t| !t.is_empty());
    if token.is_none() {
        e.push("token", "is required");
    }
    let email = e.check("email", Email::parse(input.email.as_deref().unwrap_or("")));
    let name = e.check("name", validate::name(input.name.as_deref().unwrap_or("")));
    let pw = input.password.unwrap_or_default();
    e.check("password", roles::password(&pw));
    e.into_result()?;
    let (Some(token), Some(email), Some(name)) = (token, email, name) else {
        return Err(ApiError::BadRequest(
            "token, email, name and password".into(),
        ));
    };
    let ctx = audit_ctx(&headers, Some(peer), &state, Actor::system("setup link"));
    let user = guard.setup_owner(&ctx, &token, &email, &name, pw).await?;
    Ok(nosniff(
        (StatusCode::CREATED, axum::Json(Data { data: user })).into_response(),
    ))
}
