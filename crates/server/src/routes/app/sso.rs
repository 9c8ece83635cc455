//! Single sign-on for the team: its settings (`/api/sso-settings`), the way
//! out to the identity provider (`/api/auth/sso`, and `/api/auth/sso/step-up`
//! for a signed-in person to prove it is them again) and the way back
//! (`/api/auth/sso/callback`), which signs the person in or verifies the
//! step-up. See docs/sso.md.
//!
//! The way out and back are browser navigations, so they answer with
//! redirects: a failure goes back to the sign-in screen (or the screen the
//! step-up came from) with the reason shown there. The state sent to the
//! provider is also kept in a short HttpOnly cookie, so an answer is taken
//! only in the browser that asked (no sign-in forced on someone else).

use crate::caller::Caller;
use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::form_bridge::Flash;
use crate::openapi::{BodyErrors, SessionErrors};
use crate::rate_limit::Subject;
use crate::respond::{Data, data};
use crate::session::{self, STEP_UP_MS, SignedIn, audit_ctx};
use crate::state::AppState;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use upstate_core::FieldErrors;
use upstate_core::audit::Actor;
use upstate_core::roles::Permission;
use upstate_core::sso::{SsoInput, SsoView};
use upstate_core::values::Email;
use upstate_store::sso::{self as store, Identity, Pending};
use upstate_store::{settings, step_up, users};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show, change))
        .routes(routes!(check))
        .routes(routes!(start))
        .routes(routes!(start_step_up))
        .routes(routes!(start_viewer))
        .routes(routes!(callback))
}

const STATE_COOKIE: &str = "upstate_sso";

/// Where to go after: a path of the admin interface, nothing else.
fn next_path(raw: Option<&str>) -> String {
    raw.filter(|n| {
        (*n == "/admin" || n.starts_with("/admin/") || n.starts_with("/admin?"))
            && !n.contains(['\\', '\r', '\n'])
            && n.len() < 500
    })
    .unwrap_or("/admin")
    .to_string()
}

fn see_other(to: &str, cookies: Vec<HeaderValue>) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    res.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/admin")),
    );
    for c in cookies {
        res.headers_mut().append(header::SET_COOKIE, c);
    }
    res
}

/// Back to `to` with the reason shown there.
fn refused(state: &AppState, to: &str, reason: &str) -> Response {
    let flash = Flash {
        error: Some(format!("Single sign-on failed: {reason}.")),
        ..Flash::default()
    };
    see_other(to, vec![flash.cookie(), state_cookie(state, "", true)])
}

fn state_cookie(state: &AppState, value: &str, clear: bool) -> HeaderValue {
    let age = if clear {
        cookie::time::Duration::ZERO
    } else {
        cookie::time::Duration::milliseconds(store::PENDING_MS)
    };
    session::cookie_header(
        STATE_COOKIE.into(),
        value.into(),
        state.settings.secure_cookies,
        age,
    )
}

#[utoipa::path(get, path = "/api/sso-settings", tag = "settings", operation_id = "getSsoSettings",
    summary = "Single sign-on for the team: the identity provider, who may come in and with which role (needs SETTINGS_WRITE)",
    description = "The client secret is never shown; `clientSecretSet` says whether one is saved. `redirectUri` is the address to register at the provider.",
    responses((status = 200, body = Data<SsoView>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn show(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let saved = crate::sso::settings(&state).await?;
    Ok(data(crate::sso::view(&state, &saved)))
}

#[utoipa::path(put, path = "/api/sso-settings", tag = "settings", operation_id = "putSsoSettings",
    summary = "Set up single sign-on for the team (needs SETTINGS_WRITE)",
    description = "The whole setting. Leave `clientSecret` out to keep the saved one of the same client id. When the server's configuration names the provider (`sso_issuer`, `sso_client_id`, `sso_client_secret`; `fromConfiguration` is true), leave out `issuer`, `clientId` and `clientSecret`. A person's role comes from the groups in `groupsClaim`: the highest of `adminGroups`, `editorGroups`, `viewerGroups`, else `defaultRole` (left out: refused). `ssoOnly` stops passwords opening sessions, except an owner's.",
    request_body = SsoInput,
    responses((status = 200, body = Data<SsoView>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    Body(mut input): Body<SsoInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    // A provider given in configuration stays there: its fields are not
    // this route's, and its secret never enters the database.
    let configured = state.settings.sso_connection.clone();
    if let Some(c) = &configured {
        let mut e = FieldErrors::new();
        for (field, given) in [
            ("issuer", &input.issuer),
            ("clientId", &input.client_id),
            ("clientSecret", &input.client_secret),
        ] {
            if given.as_deref().is_some_and(|v| !v.trim().is_empty()) {
                e.push(
                    field,
                    "is set in the server's configuration (sso_issuer, sso_client_id, sso_client_secret)",
                );
            }
        }
        e.into_result()?;
        input.issuer = Some(c.issuer.clone());
        input.client_id = Some(c.client_id.clone());
        input.client_secret = Some(c.client_secret.clone());
    }
    let kept = settings::change_sso_settings(&state.db, &caller.audit, |cur| {
        let mut next = input.apply(&cur)?;
        if configured.is_some() {
            next.issuer.clear();
            next.client_id.clear();
            next.client_secret.clear();
        }
        Ok(next)
    })
    .await?;
    let next = kept.with(configured.as_ref());
    Ok(data(crate::sso::view(&state, &next)))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Checked {
    /// Where people are sent to sign in, as the provider's discovery says.
    authorization_endpoint: String,
}

#[utoipa::path(post, path = "/api/sso-settings/check", tag = "settings", operation_id = "checkSsoSettings",
    summary = "Read the saved provider's discovery document, to check the issuer answers (needs SETTINGS_WRITE)",
    responses((status = 200, body = Data<Checked>), (status = 409, description = "No issuer saved", content_type = "application/problem+json"),
        (status = 422, description = "The provider does not answer discovery (the reason is the `issuer` field's)", content_type = "application/problem+json"), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn check(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let saved = crate::sso::settings(&state).await?;
    if saved.issuer.is_empty() {
        return Err(ApiError::Conflict("no issuer is saved".into()));
    }
    match state.sso.check(&saved).await {
        Ok(authorization_endpoint) => Ok(data(Checked {
            authorization_endpoint,
        })),
        Err(e) => Err(ApiError::validation("issuer", e)),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct StartQuery {
    /// Where to go after signing in: a path under `/admin` (default `/admin`).
    next: Option<String>,
}

/// Sends the person to the provider, remembering the sign-in under way.
async fn send_out(
    state: &AppState,
    next: String,
    step_up: Option<(String, String)>,
    viewer_page: Option<i64>,
    fail_to: &str,
) -> Response {
    let sso = match crate::sso::provider_for(state, viewer_page).await {
        Ok((s, _)) if s.offered() => s,
        Ok(_) => return refused(state, fail_to, "it is not set up on this install"),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let started = match state
        .sso
        .start(&sso, &crate::sso::redirect_uri(state), step_up.is_some())
        .await
    {
        Ok(s) => s,
        Err(e) => return refused(state, fail_to, &e),
    };
    let (session_id, token) = step_up.unzip();
    let pending = Pending {
        nonce: started.nonce,
        verifier: started.verifier,
        next_path: next,
        session_id,
        step_up: token,
        viewer_page,
    };
    if let Err(e) = store::begin(&state.db, &started.state, &pending).await {
        return ApiError::from(e).into_response();
    }
    see_other(
        &started.url,
        vec![state_cookie(state, &started.state, false)],
    )
}

#[utoipa::path(get, path = "/api/auth/sso", tag = "auth", operation_id = "ssoStart",
    summary = "Sign in through the team's identity provider: redirects there (a browser navigation)",
    params(StartQuery), security(()),
    responses((status = 303, description = "To the identity provider, or back to the sign-in screen with the reason it cannot")))]
async fn start(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Query(q): Query<StartQuery>,
) -> Response {
    let ip = client_ip(peer.ip(), &headers, &state.settings.trusted_proxies);
    if let Some(d) = state.sso_limits.take(Subject::Addr(ip)).await
        && d.retry_after_secs.is_some()
    {
        return refused(
            &state,
            "/admin/login",
            "too many sign-ins from your address just now; try again in a minute",
        );
    }
    send_out(
        &state,
        next_path(q.next.as_deref()),
        None,
        None,
        "/admin/login",
    )
    .await
}

#[utoipa::path(get, path = "/api/auth/sso/viewer", tag = "auth", operation_id = "ssoViewerStart",
    summary = "A viewer signs in to a private page through its identity provider (the page's own, else the team's): redirects there (a browser navigation)",
    description = "Offered when the page's access has `viewers` and `viewerSso` and the page has a provider of its own or single sign-on is set up. Back from the provider, \
        the person's verified email must be invited to the page or of one of its `viewerDomains`, as a mailed link's would, unless the page's own provider has `admitAll`.",
    params(("page" = String, Query, description = "The private page's slug")), security(()),
    responses((status = 303, description = "To the identity provider, or back to the page's gate with the reason it cannot"),
        (status = 403, description = "The client's address is outside the page's networks", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such page, or its viewers do not sign in this way", body = crate::openapi::Problem, content_type = "application/problem+json"),
        crate::openapi::BadQuery))]
async fn start_viewer(
    State(state): State<AppState>,
    visitor: crate::visitor::Visitor,
    q: crate::extract::QueryParams,
) -> Response {
    let mut e = FieldErrors::new();
    let slug = q.page_slug(&mut e);
    if let Err(e) = e.into_result() {
        return ApiError::from(e).into_response();
    }
    let Ok(Some(snap)) = state.snapshots.get(&slug).await else {
        return ApiError::NotFound(format!("no status page {slug:?}")).into_response();
    };
    let d = &snap.data;
    let gate = format!("/s/{slug}");
    if !(d.access.viewers && d.access.viewer_sso && !d.page.is_public) {
        return ApiError::NotFound(format!("viewers of {slug:?} do not sign in this way"))
            .into_response();
    }
    let gated = crate::page_gate::check(d, &visitor);
    if let Some(refused) = crate::page_gate::refusal(gated, d, &visitor)
        .filter(|_| gated == crate::page_gate::Gate::Network)
    {
        return refused.into_response();
    }
    if let Some(ip) = visitor.ip
        && let Some(d) = state.sso_limits.take(Subject::Addr(ip)).await
        && d.retry_after_secs.is_some()
    {
        return see_other(&format!("{gate}?error=throttled"), vec![]);
    }
    send_out(&state, gate.clone(), None, Some(snap.page_id), &gate).await
}

#[utoipa::path(get, path = "/api/auth/sso/step-up", tag = "step-up", operation_id = "ssoStepUp",
    summary = "Prove it is you again at the identity provider (prompt=login, max_age=0); back here, this session gets a verified step-up",
    params(StartQuery), security(("session" = [])),
    responses((status = 303, description = "To the identity provider, or back with the reason it cannot"), SessionErrors))]
async fn start_step_up(
    State(state): State<AppState>,
    me: SignedIn,
    Query(q): Query<StartQuery>,
) -> ApiResult<Response> {
    let next = next_path(q.next.as_deref());
    if !me.session.user.sso {
        return Ok(refused(
            &state,
            &next,
            "your account did not come in through it; confirm with your password",
        ));
    }
    let token = step_up::create(&state.db, &me.session.id, me.session.user.id).await?;
    let back = next.clone();
    Ok(send_out(
        &state,
        next,
        Some((me.session.id.clone(), token)),
        None,
        &back,
    )
    .await)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    /// The provider's refusal (RFC 6749 §4.1.2.1).
    error: Option<String>,
    error_description: Option<String>,
}

#[utoipa::path(get, path = "/api/auth/sso/callback", tag = "auth", operation_id = "ssoCallback",
    summary = "Where the identity provider sends the person back: signs in (or verifies the step-up) and redirects",
    params(CallbackQuery), security(()),
    responses((status = 303, description = "Signed in (session cookie set) and on to the screen asked for; or back to the sign-in screen with the reason")))]
async fn callback(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let login = "/admin/login";
    let sent = q.state.as_deref().unwrap_or("");
    let ours = session::cookies(&headers)
        .find(|c| c.name() == STATE_COOKIE)
        .map(|c| c.value().to_string());
    if sent.is_empty() || ours.as_deref() != Some(sent) {
        return refused(
            &state,
            login,
            "this answer belongs to a sign-in started in another browser, or too long ago; start again",
        );
    }
    let pending = match store::take(&state.db, sent).await {
        Ok(Some(p)) => p,
        Ok(None) => {
            return refused(
                &state,
                login,
                "this sign-in ran out or was used already; start again",
            );
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    let fail_to = if pending.viewer_page.is_some() {
        format!("{}?error=sso", pending.next_path)
    } else if pending.step_up.is_some() {
        pending.next_path.clone()
    } else {
        login.to_string()
    };
    if let Some(error) = q.error {
        let said = q.error_description.unwrap_or(error);
        let said: String = said.chars().filter(|c| !c.is_control()).take(200).collect();
        return refused(
            &state,
            &fail_to,
            &format!("the identity provider said: {said}"),
        );
    }
    let Some(code) = q.code.filter(|c| !c.is_empty()) else {
        return refused(&state, &fail_to, "the identity provider sent no code");
    };
    let (sso, admit_all) = match crate::sso::provider_for(&state, pending.viewer_page).await {
        Ok((s, admit_all)) if s.offered() => (s, admit_all),
        Ok(_) => return refused(&state, &fail_to, "it is not set up on this install"),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let vouched = match state
        .sso
        .finish(
            &sso,
            &crate::sso::redirect_uri(&state),
            &code,
            &pending.nonce,
            &pending.verifier,
        )
        .await
    {
        Ok(v) => v,
        Err(e) => return refused(&state, &fail_to, &e),
    };
    if let Some(page) = pending.viewer_page {
        let to = (pending.next_path.as_str(), fail_to.as_str());
        return viewer_signed_in(&state, page, to, admit_all, vouched).await;
    }
    match (&pending.session_id, &pending.step_up) {
        (Some(session_id), Some(token)) => {
            step_up_verified(
                &state,
                &headers,
                peer,
                session_id,
                token,
                &pending.next_path,
                vouched,
            )
            .await
        }
        _ => sign_in(&state, &headers, peer, &sso, vouched, &pending.next_path).await,
    }
}

/// A viewer the provider vouched for: in, when their verified email may
/// read the page (invited, or of an allowed domain, as a mailed link's), or
/// when the page's own provider lets in everyone it vouches for. The email
/// must be verified either way: audience groups go by it.
async fn viewer_signed_in(
    state: &AppState,
    page: i64,
    (next, fail_to): (&str, &str),
    admit_all: bool,
    vouched: crate::sso::Vouched,
) -> Response {
    let result = async {
        let Some(email) = vouched
            .email
            .as_deref()
            .filter(|_| vouched.email_verified)
            .and_then(|e| Email::parse(e).ok())
        else {
            return Ok(None);
        };
        let access = upstate_store::access::get(&state.db, page).await?;
        // Whether they were invited matters only when the provider's word
        // does not suffice.
        let listed =
            !admit_all && upstate_store::viewers::listed(&state.db, page, email.as_str()).await?;
        let admitted = access.lets_in(email.as_str(), listed) || (admit_all && access.viewers);
        if !(access.viewer_sso && admitted) {
            return Ok(None);
        }
        let fresh = crate::page_gate::new_secret();
        let (viewer, secret) =
            upstate_store::viewers::admit(&state.db, page, email.as_str(), &fresh).await?;
        Ok::<_, ApiError>(Some(crate::page_gate::set_viewer_cookie(
            page,
            viewer,
            &secret,
            state.settings.secure_cookies,
        )))
    }
    .await;
    match result {
        Ok(Some(cookie)) => see_other(next, vec![cookie, state_cookie(state, "", true)]),
        Ok(None) => see_other(fail_to, vec![state_cookie(state, "", true)]),
        Err(e) => e.into_response(),
    }
}

async fn sign_in(
    state: &AppState,
    headers: &HeaderMap,
    peer: SocketAddr,
    sso: &upstate_core::sso::SsoSettings,
    vouched: crate::sso::Vouched,
    next: &str,
) -> Response {
    let login = "/admin/login";
    let Some(email) = vouched.email.as_deref().and_then(|e| Email::parse(e).ok()) else {
        return refused(
            state,
            login,
            "the identity provider gave no usable email (ask for the email scope)",
        );
    };
    if let Some(reason) = sso.refuses_email(email.as_str()) {
        return refused(state, login, &reason);
    }
    let role = sso.role_for(&vouched.groups);
    let who = Identity {
        subject: vouched.subject,
        email,
        email_verified: vouched.email_verified,
        name: vouched.name,
    };
    let ctx = audit_ctx(headers, Some(peer), state, Actor::system("single sign-on"));
    let user = match store::admit(&state.db, &ctx, &who, role).await {
        Ok(Ok(u)) => u,
        Ok(Err(reason)) => return refused(state, login, &reason),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let ctx = audit_ctx(
        headers,
        Some(peer),
        state,
        Actor::user(user.id, &user.email),
    );
    // The provider checked the person (and its own second factor): the
    // session is whole, with no local code asked.
    match users::start_session(&state.db, &ctx, &user, session::ABSOLUTE_MS).await {
        Ok((_, token)) => see_other(
            next,
            vec![
                session::set_cookie(&token, state.settings.secure_cookies),
                session::clear_step_up(state.settings.secure_cookies),
                state_cookie(state, "", true),
            ],
        ),
        Err(e) => ApiError::from(e).into_response(),
    }
}

async fn step_up_verified(
    state: &AppState,
    headers: &HeaderMap,
    peer: SocketAddr,
    session_id: &str,
    token: &str,
    next: &str,
    vouched: crate::sso::Vouched,
) -> Response {
    let current = match session::cookie_token(headers) {
        Some(t) => users::session(&state.db, &t, session::IDLE_MS).await,
        None => Ok(None),
    };
    let me = match current {
        Ok(Some(s)) if s.id == session_id => s,
        Ok(_) => return refused(state, "/admin/login", "your session ended; sign in again"),
        Err(e) => return ApiError::from(e).into_response(),
    };
    match store::subject_of(&state.db, me.user.id).await {
        Ok(Some(s)) if s == vouched.subject => {}
        Ok(_) => {
            return refused(
                state,
                next,
                "someone else signed in at the identity provider",
            );
        }
        Err(e) => return ApiError::from(e).into_response(),
    }
    let now_s = state.db.clock.now().millis() / 1000;
    if vouched
        .auth_time
        .is_none_or(|t| now_s - t > crate::sso::STEP_UP_AUTH_MAX_AGE_S)
    {
        return refused(
            state,
            next,
            "the identity provider did not say you signed in just now",
        );
    }
    let ctx = audit_ctx(
        headers,
        Some(peer),
        state,
        Actor::user(me.user.id, &me.user.email),
    );
    match step_up::verify(&state.db, &ctx, session_id, token, "sso", STEP_UP_MS).await {
        Ok(()) => {
            let flash = Flash {
                notice: Some(
                    "Confirmed: for the next 5 minutes, sensitive actions need no further proof."
                        .into(),
                ),
                ..Flash::default()
            };
            let kept = session::cookie_header(
                session::STEP_UP_COOKIE.into(),
                token.into(),
                state.settings.secure_cookies,
                cookie::time::Duration::milliseconds(STEP_UP_MS),
            );
            see_other(
                next,
                vec![flash.cookie(), kept, state_cookie(state, "", true)],
            )
        }
        Err(upstate_store::StoreError::NotFound(_)) => {
            refused(state, next, "the step-up ran out; start again")
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}
