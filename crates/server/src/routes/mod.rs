//! Route families, one module each, and the fallbacks that keep unknown routes
//! and wrong methods inside the problem+json contract.

pub(crate) mod admin;
mod api_keys;
pub mod api_v1;
mod api_v2;
mod app_pages;
mod atlassian;
mod audit;
pub(crate) mod auth;
mod embeds;
mod feeds;
mod health;
pub(crate) mod html_pages;
mod live;
mod page_password;
pub mod public;
mod quick_links;
mod translate;
mod two_factor;

use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// The routes in two families, and the OpenAPI document of exactly those routes.
pub struct Routes {
    /// Unauthenticated reads served from memory (public API, health): kept on
    /// a lean middleware stack because every layer costs on the hottest path.
    pub public: Router<AppState>,
    /// The keyed management API.
    pub managed: Router<AppState>,
    pub doc: OpenApi,
}

pub fn routes(state: &AppState) -> Routes {
    let (public, mut doc) = OpenApiRouter::new()
        .merge(public::router(state))
        .merge(atlassian::router())
        .merge(feeds::router(state))
        .merge(live::router(state))
        .merge(embeds::router(state))
        .merge(translate::router(state))
        .merge(page_password::router())
        .merge(health::routes())
        .split_for_parts();
    let public = public.merge(html_pages::router(state));
    let (managed, managed_doc) = OpenApiRouter::new()
        .nest("/api/v1", api_v1::router(state))
        .nest("/api/v2", api_v2::router(state))
        .merge(audit::router())
        .merge(auth::router())
        .merge(two_factor::router())
        .merge(admin::router())
        .merge(api_keys::router())
        .merge(app_pages::router())
        .merge(quick_links::router())
        .split_for_parts();
    doc.merge(managed_doc);
    Routes {
        public: public.method_not_allowed_fallback(method_not_allowed),
        managed: managed.method_not_allowed_fallback(method_not_allowed),
        doc,
    }
}

/// The answer to a path no route matches.
pub async fn not_found() -> ApiError {
    ApiError::NotFound("no route matches this path".into())
}

/// The answer to a known path with a method it does not take.
async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
