//! The application routes under `/api` that the admin interface stands on:
//! sign-in, two-factor, step-up, users, API keys, the audit log, quick
//! links, settings and feature switches, notification channels, subscribers,
//! integrations (alerts in),
//! visitors' comments (content routes shared with `/api/v1` are in `content`). Signed-in people (session + CSRF), some also API keys.

mod api_keys;
mod audit;
mod comments;
mod export;
mod integrations;
mod managed;
mod markdown;
mod measurements;
mod monitor_check;
mod monitors;
mod notice_preview;
mod notifications;
mod push;
mod quick_links;
mod recurring;
mod selftest;
mod settings;
mod sign_in;
mod sso;
mod step_up;
mod subscribers;
mod system;
mod templates;
mod third_party;
mod two_factor;
mod users;

use crate::state::AppState;
use utoipa_axum::router::OpenApiRouter;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(audit::router())
        .merge(sign_in::router())
        .merge(two_factor::router())
        .merge(step_up::router())
        .merge(sso::router())
        .merge(users::router())
        .merge(api_keys::router())
        .merge(quick_links::router())
        .merge(system::router())
        .merge(export::router())
        .merge(templates::router())
        .merge(settings::router())
        .merge(markdown::router())
        .merge(notice_preview::router())
        .merge(notifications::router())
        .merge(subscribers::router(state))
        .merge(monitor_check::router())
        .merge(monitors::router(state))
        .merge(integrations::router(state))
        .merge(third_party::router())
        .merge(managed::router())
        .merge(measurements::router())
        .merge(comments::router())
        .merge(recurring::router())
        .merge(selftest::router())
        .merge(push::router())
}
