//! What visitors and integrations read without signing in: the public JSON
//! API, Atlassian's Statuspage API, feeds and calendar, embeds (badge,
//! widget, manifest), live events, translation, the page-password check and
//! health. Served from page snapshots on the lean middleware stack.

mod atlassian;
mod embeds;
mod feeds;
mod health;
mod live;
mod metrics;
mod page_password;
mod status;
mod translate;
mod viewer_links;
mod viewer_sign_in;

use crate::state::AppState;
use utoipa_axum::router::OpenApiRouter;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(status::router(state))
        .merge(atlassian::router())
        .merge(feeds::router(state))
        .merge(live::router(state))
        .merge(embeds::router(state))
        .merge(translate::router(state))
        .merge(page_password::router())
        .merge(viewer_sign_in::router(state))
        .merge(viewer_links::router(state))
        .merge(health::routes())
        .merge(metrics::routes())
}
