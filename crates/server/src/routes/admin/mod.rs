//! `/admin`: the interface operators run Upstate from (templates in
//! `crate::views::admin`). Pages are read here; every change is a form that
//! posts to an application route through `crate::form_bridge`, so the
//! interface can do nothing a script could not. Not API operations, so not
//! in the OpenAPI document.

use crate::error::ApiError;
use crate::extract::PathId;
use crate::form_bridge::Flash;
use crate::security_headers;
use crate::session::SignedIn;
use crate::state::AppState;
use crate::views::admin as view;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::Markup;
use serde::Deserialize;
use upstate_core::public::overall_status;
use upstate_core::roles::Permission;
use upstate_core::{MaintenanceStatus, Timestamp};
use upstate_store::audit::AuditFilter;
use upstate_store::incidents::IncidentFilter;
use upstate_store::maintenance::MaintenanceFilter;
use upstate_store::{audit, components, groups, incidents, maintenance, pages, users};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(dashboard))
        .route("/admin/", get(|| async { Redirect::to("/admin") }))
        .route("/admin/login", get(login))
        .route("/admin/login/code", get(second_factor))
        .route("/admin/setup", get(setup))
        .route("/admin/incidents/new", get(incident_new))
        .route("/admin/incidents", get(incidents_list))
        .route("/admin/incidents/{id}", get(incident_detail))
        .route("/admin/pages", get(pages_list))
        .route("/admin/pages/{id}", get(page_screen))
        .route("/admin/maintenance", get(maintenance_list))
        .route("/admin/account", get(account))
        .route("/admin/keys", get(keys))
        .route("/admin/users", get(users_list))
        .route("/admin/audit", get(audit_log))
        .route("/admin/system", get(system))
        .route("/admin/templates", get(templates_screen))
}

type Page = Result<Response, Response>;

fn fail(e: upstate_store::StoreError) -> Response {
    ApiError::from(e).into_response()
}

/// Every page with its overall status, as the public snapshot shows it.
async fn pages_with_status(
    state: &AppState,
) -> Result<Vec<(upstate_core::StatusPage, upstate_core::ComponentStatus)>, Response> {
    let mut out = Vec::new();
    for p in pages::list(&state.db).await.map_err(fail)? {
        // Public pages come from the snapshot cache; private ones (which the
        // cache does not hold) straight from the database.
        let status = match state.snapshots.get(&p.slug).await.ok().flatten() {
            Some(s) => overall_status(&s.data.components, &s.data.incidents),
            None => upstate_store::public::load(&state.db, p.id)
                .await
                .map_err(fail)?
                .map_or(upstate_core::ComponentStatus::Operational, |d| {
                    overall_status(&d.components, &d.incidents)
                }),
        };
        out.push((p, status));
    }
    Ok(out)
}

/// An HTML answer: the security headers, the flash shown (and cleared).
fn html(status: StatusCode, body: Markup, flash_shown: bool) -> Response {
    let mut res = (status, axum::response::Html(body.into_string())).into_response();
    security_headers::html(res.headers_mut(), security_headers::ADMIN_CSP);
    if flash_shown {
        res.headers_mut().append(header::SET_COOKIE, Flash::clear());
    }
    res
}

fn shown(body: Markup, flash: &Option<Flash>) -> Response {
    html(StatusCode::OK, body, flash.is_some())
}

/// Who is signed in, or the way to sign in (or to set up a new install).
async fn signed_in(
    state: &AppState,
    who: Result<SignedIn, ApiError>,
) -> Result<SignedIn, Response> {
    match who {
        Ok(who) => Ok(who),
        Err(ApiError::Unauthorized(_)) => {
            let fresh = users::count(&state.db).await.unwrap_or(1) == 0;
            Err(Redirect::to(if fresh {
                "/admin/setup"
            } else {
                "/admin/login"
            })
            .into_response())
        }
        Err(e) => Err(e.into_response()),
    }
}

fn frame<'a>(who: &'a SignedIn, here: &'static str) -> view::Frame<'a> {
    let user = &who.session.user;
    view::Frame {
        email: &user.email,
        name: &user.name,
        role: user.role,
        csrf: &who.session.csrf_token,
        here,
    }
}

async fn dashboard(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Result<Response, Response> {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let now = Timestamp::now();
    let with_status = pages_with_status(&state).await?;
    let open = IncidentFilter {
        status: Some("unresolved".into()),
        limit: 20,
        ..Default::default()
    };
    let unfinished = MaintenanceFilter {
        finished: Some(false),
        ending_after: Some(now),
        ..Default::default()
    };
    let mut windows = maintenance::list(&state.db, &unfinished)
        .await
        .map_err(fail)?;
    windows.retain(|m| {
        matches!(
            m.status,
            MaintenanceStatus::Scheduled | MaintenanceStatus::InProgress
        )
    });
    windows.sort_by_key(|m| m.scheduled_start_time);
    let recent = AuditFilter {
        limit: 8,
        ..Default::default()
    };
    let data = view::DashboardData {
        pages: with_status,
        open_incidents: incidents::list(&state.db, &open).await.map_err(fail)?,
        maintenance: windows,
        audit: audit::list(&state.db, &recent).await.map_err(fail)?,
        now,
    };
    Ok(shown(
        view::dashboard(&frame(&who, "dashboard"), flash.as_ref(), &data),
        &flash,
    ))
}

async fn login(headers: HeaderMap) -> Response {
    let flash = Flash::read(&headers);
    shown(view::login(flash.as_ref()), &flash)
}

async fn second_factor(headers: HeaderMap) -> Response {
    let flash = Flash::read(&headers);
    shown(view::second_factor(flash.as_ref()), &flash)
}

#[derive(Deserialize)]
struct SetupQuery {
    token: Option<String>,
}

/// The first owner's page. It needs the token of the link printed at
/// start-up; once an owner exists it is gone (404) on every instance.
async fn setup(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<SetupQuery>,
) -> Response {
    if users::count(&state.db).await.unwrap_or(1) > 0 {
        return html(StatusCode::NOT_FOUND, view::setup_gone(), false);
    }
    let flash = Flash::read(&headers);
    match q.token.filter(|t| !t.is_empty() && t.len() < 200) {
        Some(token) => shown(view::setup(&token, flash.as_ref()), &flash),
        None => html(StatusCode::OK, view::setup_needs_link(), false),
    }
}

#[derive(Deserialize)]
struct NewIncidentQuery {
    template: Option<i64>,
}

async fn incident_new(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
    Query(q): Query<NewIncidentQuery>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let templates = upstate_store::templates::list(&state.db)
        .await
        .map_err(fail)?;
    let chosen = q
        .template
        .and_then(|id| templates.iter().find(|t| t.id == id).cloned());
    let form = view::IncidentForm {
        pages: pages::list(&state.db).await.map_err(fail)?,
        components: components::list(&state.db, None, None)
            .await
            .map_err(fail)?,
        templates,
        chosen,
    };
    Ok(shown(
        view::incident_new(&frame(&who, "incidents"), flash.as_ref(), &form),
        &flash,
    ))
}

async fn templates_screen(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let list = upstate_store::templates::list(&state.db)
        .await
        .map_err(fail)?;
    Ok(shown(
        view::templates(&frame(&who, "incidents"), flash.as_ref(), &list),
        &flash,
    ))
}

async fn pages_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let all = pages_with_status(&state).await?;
    let chosen = users::current_page(&state.db, who.session.user.id)
        .await
        .map_err(fail)?
        .filter(|id| all.iter().any(|(p, _)| p.id == *id));
    let current = chosen.or_else(|| all.first().map(|(p, _)| p.id));
    Ok(shown(
        view::pages_list(&frame(&who, "pages"), flash.as_ref(), &all, current),
        &flash,
    ))
}

async fn page_screen(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
    PathId(id): PathId,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let screen = view::PageScreen {
        page: pages::get(&state.db, id).await.map_err(fail)?,
        groups: groups::list(&state.db, Some(id)).await.map_err(fail)?,
        components: components::list(&state.db, Some(id), None)
            .await
            .map_err(fail)?,
        links: upstate_store::quick_links::list(&state.db, Some(id))
            .await
            .map_err(fail)?,
    };
    Ok(shown(
        view::page_screen(&frame(&who, "pages"), flash.as_ref(), &screen),
        &flash,
    ))
}

async fn incidents_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let recent = IncidentFilter {
        limit: 50,
        ..Default::default()
    };
    let list = incidents::list(&state.db, &recent).await.map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    Ok(shown(
        view::incidents_list(&frame(&who, "incidents"), flash.as_ref(), &list, &all),
        &flash,
    ))
}

async fn incident_detail(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
    PathId(id): PathId,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let incident = match incidents::get(&state.db, id).await {
        Ok(i) => i,
        // Deleted (perhaps just now, from this screen): back to the list.
        Err(upstate_store::StoreError::NotFound(_)) => {
            return Ok(Redirect::to("/admin/incidents").into_response());
        }
        Err(e) => return Err(fail(e)),
    };
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = components::list(&state.db, Some(incident.status_page_id), None)
        .await
        .map_err(fail)?;
    let pm = upstate_store::postmortems::get(&state.db, id)
        .await
        .map_err(fail)?;
    Ok(shown(
        view::incident_detail(
            &frame(&who, "incidents"),
            flash.as_ref(),
            &incident,
            &all,
            &comps,
            pm.as_ref(),
        ),
        &flash,
    ))
}

async fn maintenance_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let mut windows = maintenance::list(&state.db, &MaintenanceFilter::default())
        .await
        .map_err(fail)?;
    // Under way first, then what comes next, then the past.
    windows.sort_by_key(|m| {
        let rank = match m.status {
            MaintenanceStatus::InProgress => 0,
            MaintenanceStatus::Scheduled => 1,
            _ => 2,
        };
        (
            rank,
            if rank == 2 {
                -m.scheduled_start_time.millis()
            } else {
                m.scheduled_start_time.millis()
            },
        )
    });
    let screen = view::MaintenanceScreen {
        windows,
        pages: pages::list(&state.db).await.map_err(fail)?,
        components: components::list(&state.db, None, None)
            .await
            .map_err(fail)?,
    };
    Ok(shown(
        view::maintenance_list(&frame(&who, "maintenance"), flash.as_ref(), &screen),
        &flash,
    ))
}

async fn account(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let user = &who.session.user;
    let tf = if user.totp_enabled {
        view::TwoFactor::On
    } else {
        let st = upstate_store::two_factor::state(&state.db, user.id)
            .await
            .map_err(fail)?;
        match st.pending {
            Some(secret) => {
                let qr = crate::totp::uri(&secret, &user.email)
                    .and_then(|uri| crate::totp::qr_svg(&uri))
                    .unwrap_or_default();
                view::TwoFactor::Pending { secret, qr_svg: qr }
            }
            None => view::TwoFactor::Off,
        }
    };
    let mut res = shown(
        view::account(&frame(&who, "account"), flash.as_ref(), &tf),
        &flash,
    );
    // The recovery codes it may show must not stay in any cache.
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

/// A screen this person's role does not open.
fn forbidden(who: &SignedIn, here: &'static str) -> Response {
    let body = maud::html! {
        header.top { h1 { "Not for your role" } }
        div.card { p { "Your role (" (who.session.user.role.as_str()) ") does not open this screen. An owner or admin can change roles." } }
    };
    html(
        StatusCode::FORBIDDEN,
        view::page(&frame(who, here), "Not for your role", None, body),
        false,
    )
}

async fn keys(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    let flash = Flash::read(&headers);
    let mine = upstate_store::api_keys::list_of(&state.db, who.session.user.id)
        .await
        .map_err(fail)?;
    let mut res = shown(
        view::keys(&frame(&who, "keys"), flash.as_ref(), &mine),
        &flash,
    );
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

async fn users_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    if who.require(Permission::UsersManage).is_err() {
        return Ok(forbidden(&who, "users"));
    }
    let flash = Flash::read(&headers);
    let all = users::list(&state.db).await.map_err(fail)?;
    Ok(shown(
        view::users(&frame(&who, "users"), flash.as_ref(), &all),
        &flash,
    ))
}

#[derive(Deserialize)]
struct AuditQuery {
    action: Option<String>,
}

async fn audit_log(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
    Query(q): Query<AuditQuery>,
) -> Page {
    let who = signed_in(&state, who).await?;
    if who.require(Permission::AuditView).is_err() {
        return Ok(forbidden(&who, "audit"));
    }
    let flash = Flash::read(&headers);
    let action = q.action.filter(|a| !a.trim().is_empty());
    let filter = AuditFilter {
        action: action.clone(),
        limit: 100,
        ..Default::default()
    };
    let events = audit::list(&state.db, &filter).await.map_err(fail)?;
    Ok(shown(
        view::audit(
            &frame(&who, "audit"),
            flash.as_ref(),
            &events,
            action.as_deref(),
        ),
        &flash,
    ))
}

async fn system(
    State(state): State<AppState>,
    headers: HeaderMap,
    who: Result<SignedIn, ApiError>,
) -> Page {
    let who = signed_in(&state, who).await?;
    if who.require(Permission::SettingsWrite).is_err() {
        return Ok(forbidden(&who, "system"));
    }
    let flash = Flash::read(&headers);
    let info = view::SystemInfo {
        version: env!("CARGO_PKG_VERSION"),
        uptime_seconds: state.started.elapsed().as_secs(),
        backend: match state.db.backend() {
            upstate_store::Backend::Sqlite => "sqlite",
            upstate_store::Backend::Postgres => "postgres",
        },
        database_bytes: state.db.size_bytes().await.map_err(fail)?,
        instance_id: state.db.changes.instance_id(),
        cache: state.snapshots.figures(),
    };
    Ok(shown(
        view::system(&frame(&who, "system"), flash.as_ref(), &info),
        &flash,
    ))
}
