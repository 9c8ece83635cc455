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
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::Markup;
use serde::Deserialize;
use std::sync::Arc;
use upstate_core::public::overall_status;
use upstate_core::roles::Permission;
use upstate_core::settings::Settings;
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
        .route("/admin/components/{id}", get(component_screen))
        .route("/admin/maintenance", get(maintenance_list))
        .route("/admin/account", get(account))
        .route("/admin/keys", get(keys))
        .route("/admin/users", get(users_list))
        .route("/admin/audit", get(audit_log))
        .route("/admin/system", get(system))
        .route("/admin/settings", get(settings_screen))
        .route("/admin/notifications", get(notifications_screen))
        .route("/admin/notifications/{id}", get(channel_screen))
        .route("/admin/subscribers", get(subscribers_screen))
        .route("/admin/comments", get(comments_screen))
        .route("/admin/monitors", get(monitors_screen))
        .route("/admin/monitors/{id}", get(monitor_screen))
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

/// What every signed-in screen starts from: the person, the flash of the
/// last form, and the install's settings (its name heads every screen).
/// Rejects with the way in: sign-in, or setup on a new install.
struct Screen {
    who: SignedIn,
    flash: Option<Flash>,
    site: Arc<Settings>,
}

impl FromRequestParts<AppState> for Screen {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let who = match SignedIn::from_request_parts(parts, state).await {
            Ok(who) => who,
            Err(ApiError::Unauthorized(_)) => {
                let fresh = users::count(&state.db).await.unwrap_or(1) == 0;
                return Err(Redirect::to(if fresh {
                    "/admin/setup"
                } else {
                    "/admin/login"
                })
                .into_response());
            }
            Err(e) => return Err(e.into_response()),
        };
        let site = state.snapshots.settings().await.map_err(fail)?;
        Ok(Screen {
            who,
            flash: Flash::read(&parts.headers),
            site,
        })
    }
}

impl Screen {
    fn frame(&self, here: &'static str) -> view::Frame<'_> {
        let user = &self.who.session.user;
        view::Frame {
            email: &user.email,
            name: &user.name,
            role: user.role,
            csrf: &self.who.session.csrf_token,
            site: &self.site.site_name,
            here,
        }
    }

    fn flash(&self) -> Option<&Flash> {
        self.flash.as_ref()
    }

    fn show(&self, body: Markup) -> Response {
        shown(body, &self.flash)
    }

    /// The "not for your role" screen, unless the role has `p`.
    fn refuse(&self, p: Permission, here: &'static str) -> Option<Response> {
        if self.who.require(p).is_ok() {
            return None;
        }
        let body = maud::html! {
            header.top { h1 { "Not for your role" } }
            div.card { p { "Your role (" (self.who.session.user.role.as_str()) ") does not open this screen. An owner or admin can change roles." } }
        };
        Some(html(
            StatusCode::FORBIDDEN,
            view::page(&self.frame(here), "Not for your role", None, body),
            false,
        ))
    }
}

async fn dashboard(State(state): State<AppState>, s: Screen) -> Result<Response, Response> {
    let now = state.db.clock.now();
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
    Ok(s.show(view::dashboard(&s.frame("dashboard"), s.flash(), &data)))
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
    s: Screen,
    Query(q): Query<NewIncidentQuery>,
) -> Page {
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
    Ok(s.show(view::incident_new(&s.frame("incidents"), s.flash(), &form)))
}

async fn templates_screen(State(state): State<AppState>, s: Screen) -> Page {
    let list = upstate_store::templates::list(&state.db)
        .await
        .map_err(fail)?;
    Ok(s.show(view::templates(&s.frame("incidents"), s.flash(), &list)))
}

async fn pages_list(State(state): State<AppState>, s: Screen) -> Page {
    let all = pages_with_status(&state).await?;
    let chosen = users::current_page(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?
        .filter(|id| all.iter().any(|(p, _)| p.id == *id));
    let current = chosen.or_else(|| all.first().map(|(p, _)| p.id));
    Ok(s.show(view::pages_list(
        &s.frame("pages"),
        s.flash(),
        &all,
        current,
    )))
}

async fn page_screen(State(state): State<AppState>, s: Screen, PathId(id): PathId) -> Page {
    let screen = view::PageScreen {
        page: pages::get(&state.db, id).await.map_err(fail)?,
        groups: groups::list(&state.db, Some(id)).await.map_err(fail)?,
        components: components::list(&state.db, Some(id), None)
            .await
            .map_err(fail)?,
        links: upstate_store::quick_links::list(&state.db, Some(id))
            .await
            .map_err(fail)?,
        password_set: pages::password_hash(&state.db, id)
            .await
            .map_err(fail)?
            .is_some(),
        public_url: state.settings.public_url.trim_end_matches('/').to_string(),
    };
    Ok(s.show(view::page_screen(&s.frame("pages"), s.flash(), &screen)))
}

async fn incidents_list(State(state): State<AppState>, s: Screen) -> Page {
    let recent = IncidentFilter {
        limit: 50,
        ..Default::default()
    };
    let list = incidents::list(&state.db, &recent).await.map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    Ok(s.show(view::incidents_list(
        &s.frame("incidents"),
        s.flash(),
        &list,
        &all,
    )))
}

async fn incident_detail(State(state): State<AppState>, s: Screen, PathId(id): PathId) -> Page {
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
    let followers = upstate_store::subscribers::followers(&state.db, id)
        .await
        .map_err(fail)?;
    Ok(s.show(view::incident_detail(
        &s.frame("incidents"),
        s.flash(),
        &incident,
        &all,
        &comps,
        pm.as_ref(),
        followers,
    )))
}

async fn maintenance_list(State(state): State<AppState>, s: Screen) -> Page {
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
    let all = pages::list(&state.db).await.map_err(fail)?;
    let chosen = users::current_page(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?
        .filter(|id| all.iter().any(|p| p.id == *id));
    let mut recurring = Vec::new();
    for r in upstate_store::recurring::list(&state.db, None)
        .await
        .map_err(fail)?
    {
        let next = upstate_store::recurring::upcoming(&state.db, &r, state.db.clock.now())
            .await
            .unwrap_or_default();
        recurring.push((r, next));
    }
    let screen = view::MaintenanceScreen {
        windows,
        recurring,
        current: chosen.or_else(|| all.first().map(|p| p.id)),
        pages: all,
        components: components::list(&state.db, None, None)
            .await
            .map_err(fail)?,
    };
    Ok(s.show(view::maintenance_list(
        &s.frame("maintenance"),
        s.flash(),
        &screen,
    )))
}

async fn account(State(state): State<AppState>, s: Screen) -> Page {
    let user = &s.who.session.user;
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
    let mut res = s.show(view::account(&s.frame("account"), s.flash(), &tf));
    // The recovery codes it may show must not stay in any cache.
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

async fn keys(State(state): State<AppState>, s: Screen) -> Page {
    let mine = upstate_store::api_keys::list_of(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?;
    let mut res = s.show(view::keys(&s.frame("keys"), s.flash(), &mine));
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(res)
}

async fn users_list(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::UsersManage, "users") {
        return Ok(refused);
    }
    let all = users::list(&state.db).await.map_err(fail)?;
    Ok(s.show(view::users(&s.frame("users"), s.flash(), &all)))
}

#[derive(Deserialize)]
struct AuditQuery {
    action: Option<String>,
    #[serde(rename = "actorKind")]
    actor_kind: Option<String>,
    #[serde(rename = "targetType")]
    target_type: Option<String>,
    /// `YYYY-MM-DD` (a date input), from the start of that day in UTC.
    since: Option<String>,
}

async fn audit_log(State(state): State<AppState>, s: Screen, Query(q): Query<AuditQuery>) -> Page {
    if let Some(refused) = s.refuse(Permission::AuditView, "audit") {
        return Ok(refused);
    }
    let given = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let shown = view::AuditFilters {
        action: given(q.action),
        actor_kind: given(q.actor_kind),
        target_type: given(q.target_type),
        since: given(q.since).filter(|d| d.parse::<jiff::civil::Date>().is_ok()),
    };
    let filter = AuditFilter {
        action: shown.action.clone(),
        actor_kind: shown.actor_kind.clone(),
        target_type: shown.target_type.clone(),
        since: shown
            .since
            .as_deref()
            .and_then(|d| Timestamp::parse(&format!("{d}T00:00:00Z")).ok()),
        limit: 100,
        ..Default::default()
    };
    let events = audit::list(&state.db, &filter).await.map_err(fail)?;
    Ok(s.show(view::audit(&s.frame("audit"), s.flash(), &events, &shown)))
}

async fn system(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "system") {
        return Ok(refused);
    }
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
        dev: state.settings.dev,
        selftest: crate::selftest::run(&state).await,
    };
    Ok(s.show(view::system(&s.frame("system"), s.flash(), &info)))
}

async fn settings_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "settings") {
        return Ok(refused);
    }
    let features = upstate_store::settings::features(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let languages: Vec<(&str, &str)> = crate::i18n::LANGS
        .iter()
        .map(|l| (l.code(), l.name()))
        .collect();
    Ok(s.show(view::settings(
        &s.frame("settings"),
        s.flash(),
        &s.site,
        &features,
        &all,
        &languages,
    )))
}

/// Every page's components, for the channel filters.
async fn all_components(
    state: &AppState,
    pages: &[upstate_core::StatusPage],
) -> Result<Vec<upstate_core::Component>, Response> {
    let mut out = Vec::new();
    for p in pages {
        out.extend(
            components::list(&state.db, Some(p.id), None)
                .await
                .map_err(fail)?,
        );
    }
    Ok(out)
}

async fn notifications_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "notifications") {
        return Ok(refused);
    }
    let list = upstate_store::notifications::list(&state.db)
        .await
        .map_err(fail)?;
    let last = upstate_store::deliveries::last_of_channels(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    Ok(s.show(view::channels(
        &s.frame("notifications"),
        s.flash(),
        state.sender.has_mailer(),
        &list,
        &last,
        &all,
        &comps,
    )))
}

async fn channel_screen(State(state): State<AppState>, s: Screen, PathId(id): PathId) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "notifications") {
        return Ok(refused);
    }
    let channel = upstate_store::notifications::get(&state.db, id)
        .await
        .map_err(fail)?;
    let log = upstate_store::deliveries::log(&state.db, Some(id), None, None, 50)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    Ok(s.show(view::channel(
        &s.frame("notifications"),
        s.flash(),
        &view::ChannelScreen {
            channel: &channel,
            log: &log,
            pages: &all,
            components: &comps,
        },
    )))
}

#[derive(Deserialize)]
struct SubscribersQuery {
    q: Option<String>,
    open: Option<i64>,
}

async fn subscribers_screen(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<SubscribersQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "subscribers") {
        return Ok(refused);
    }
    let text = q.q.as_deref().map(str::trim).unwrap_or("");
    let list = upstate_store::subscribers::list(
        &state.db,
        None,
        Some(text).filter(|t| !t.is_empty()),
        500,
    )
    .await
    .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let open = match q.open {
        Some(id) => {
            let sub = upstate_store::subscribers::get(&state.db, id)
                .await
                .map_err(fail)?;
            let log = upstate_store::deliveries::of_subscriber(&state.db, id, 50)
                .await
                .map_err(fail)?;
            Some((sub, log))
        }
        None => None,
    };
    Ok(s.show(view::subscribers(
        &s.frame("subscribers"),
        s.flash(),
        &view::SubscribersScreen {
            list: &list,
            pages: &all,
            q: text,
            open: open.as_ref().map(|(sub, log)| (sub, log.as_slice())),
            mail: state.sender.has_mailer(),
        },
    )))
}

#[derive(Deserialize)]
struct CommentsQuery {
    status: Option<String>,
}

async fn comments_screen(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<CommentsQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::IncidentsWrite, "comments") {
        return Ok(refused);
    }
    let status = match q.status.as_deref() {
        Some("all") => None,
        Some(t) => Some(t.parse().unwrap_or(upstate_core::CommentStatus::Pending)),
        None => Some(upstate_core::CommentStatus::Pending),
    };
    let list = upstate_store::comments::list(&state.db, status, None, 200)
        .await
        .map_err(fail)?;
    let pending = upstate_store::comments::pending_count(&state.db)
        .await
        .map_err(fail)?;
    let features = upstate_store::settings::features(&state.db)
        .await
        .map_err(fail)?;
    let slugs: Vec<(i64, String)> = pages::list(&state.db)
        .await
        .map_err(fail)?
        .into_iter()
        .map(|p| (p.id, p.slug))
        .collect();
    Ok(s.show(view::comments(
        &s.frame("comments"),
        s.flash(),
        &view::CommentsScreen {
            list: &list,
            status,
            pending,
            offered: features.comments,
            moderated: s.site.moderate_comments,
            slugs: &slugs,
        },
    )))
}

async fn component_screen(State(state): State<AppState>, s: Screen, PathId(id): PathId) -> Page {
    let details = crate::component_details::load(&state, id)
        .await
        .map_err(IntoResponse::into_response)?;
    Ok(s.show(view::component(&s.frame("pages"), s.flash(), &details)))
}

async fn monitors_screen(State(state): State<AppState>, s: Screen) -> Page {
    let list = upstate_store::monitors::list(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    let rows: Vec<view::MonitorRow> = list
        .iter()
        .filter_map(|m| {
            let c = comps.iter().find(|c| c.id == m.component_id)?;
            let p = all.iter().find(|p| p.id == c.status_page_id)?;
            Some(view::MonitorRow {
                monitor: m,
                component: &c.name,
                page: &p.name,
            })
        })
        .collect();
    let free: Vec<upstate_core::Component> = comps
        .iter()
        .filter(|c| !list.iter().any(|m| m.component_id == c.id))
        .cloned()
        .collect();
    Ok(s.show(view::monitors(
        &s.frame("monitors"),
        s.flash(),
        &rows,
        &all,
        &free,
        s.who.require(Permission::PagesWrite).is_ok(),
    )))
}

async fn monitor_screen(State(state): State<AppState>, s: Screen, PathId(id): PathId) -> Page {
    let mut m = upstate_store::monitors::get(&state.db, id)
        .await
        .map_err(fail)?
        .under(&state.settings.public_url);
    m.config = m.config.redacted();
    let component = components::get(&state.db, m.component_id)
        .await
        .map_err(fail)?;
    let checks = upstate_store::monitors::checks(&state.db, id, 50)
        .await
        .map_err(fail)?;
    let now = state.db.clock.now();
    let day = upstate_store::monitor_stats::series(
        &state.db,
        id,
        upstate_core::measurements::Resolution::Hour,
        now.plus_millis(-crate::views::CHART_MS),
        now,
    )
    .await
    .map_err(fail)?;
    Ok(s.show(view::monitor(
        &s.frame("monitors"),
        s.flash(),
        &view::MonitorScreen {
            monitor: &m,
            component: &component,
            checks: &checks,
            day: &day,
            now,
            can_write: s.who.require(Permission::PagesWrite).is_ok(),
        },
    )))
}
