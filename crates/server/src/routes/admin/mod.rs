//! `/admin`: the interface operators run Upstate from (templates in
//! `crate::views::admin`). Pages are read here; every change is a form that
//! posts to an application route through `crate::form_bridge`, so the
//! interface can do nothing a script could not. Not API operations, so not
//! in the OpenAPI document.

use crate::error::ApiError;
use crate::form_bridge::Flash;
use crate::security_headers;
use crate::session::SignedIn;
use crate::state::AppState;
use crate::views::admin as view;
use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::Markup;
use std::sync::Arc;
use upstate_core::public::overall_status;
use upstate_core::roles::Permission;
use upstate_core::settings::Settings;
use upstate_store::{components, users};

mod account;
mod comments;
mod component;
mod dashboard;
mod incidents;
mod integrations;
mod maintenance;
mod monitors;
mod notifications;
mod pages;
mod settings;
mod sign_in;
mod subscribers;
mod team;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(dashboard::dashboard))
        .route("/admin/", get(|| async { Redirect::to("/admin") }))
        .route("/admin/login", get(sign_in::login))
        .route("/admin/login/code", get(sign_in::second_factor))
        .route("/admin/setup", get(sign_in::setup))
        .route("/admin/incidents/new", get(incidents::incident_new))
        .route("/admin/incidents", get(incidents::incidents_list))
        .route("/admin/incidents/{id}", get(incidents::incident_detail))
        .route("/admin/pages", get(pages::pages_list))
        .route("/admin/pages/{id}", get(pages::page_screen))
        .route("/admin/components/{id}", get(component::component_screen))
        .route("/admin/maintenance", get(maintenance::maintenance_list))
        .route("/admin/account", get(account::account))
        .route("/admin/keys", get(account::keys))
        .route("/admin/users", get(team::users_list))
        .route("/admin/audit", get(team::audit_log))
        .route("/admin/system", get(settings::system))
        .route("/admin/settings", get(settings::settings_screen))
        .route(
            "/admin/notifications",
            get(notifications::notifications_screen),
        )
        .route(
            "/admin/notifications/{id}",
            get(notifications::channel_screen),
        )
        .route("/admin/subscribers", get(subscribers::subscribers_screen))
        .route("/admin/comments", get(comments::comments_screen))
        .route("/admin/monitors", get(monitors::monitors_screen))
        .route(
            "/admin/integrations",
            get(integrations::integrations_screen),
        )
        .route(
            "/admin/integrations/{id}",
            get(integrations::integration_screen),
        )
        .route(
            "/admin/approve/{id}/{token}",
            get(integrations::approve_link).post(integrations::approve_link_answer),
        )
        .route("/admin/monitors/{id}", get(monitors::monitor_screen))
        .route("/admin/templates", get(incidents::templates_screen))
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
    for p in upstate_store::pages::list(&state.db).await.map_err(fail)? {
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
    /// This screen's path and query: where a step-up at the identity
    /// provider comes back to.
    path: String,
    /// A step-up proven at the identity provider is at hand (its cookie).
    confirmed: bool,
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
        // A password someone else chose is replaced before any other work.
        if who.session.user.must_change_password && parts.uri.path() != "/admin/account" {
            return Err(Redirect::to("/admin/account#h-password").into_response());
        }
        let site = state.snapshots.settings().await.map_err(fail)?;
        let confirmed = crate::session::cookies(&parts.headers)
            .any(|c| c.name() == crate::session::STEP_UP_COOKIE && !c.value().is_empty());
        Ok(Screen {
            who,
            flash: Flash::read(&parts.headers),
            site,
            path: parts
                .uri
                .path_and_query()
                .map_or("/admin", |p| p.as_str())
                .to_string(),
            confirmed,
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
            sso: user.sso,
            path: &self.path,
            confirmed: self.confirmed,
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
            div.card { p { (p.refusal()) " Your role is " (self.who.session.user.role.as_str()) "; an owner or admin can change roles." } }
        };
        Some(html(
            StatusCode::FORBIDDEN,
            view::page(&self.frame(here), "Not for your role", None, body),
            false,
        ))
    }
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
