//! The ways in: sign-in, second factor, and the first owner's setup page.

use super::{html, shown};
use crate::form_bridge::Flash;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use upstate_store::users;

pub(super) async fn login(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let flash = Flash::read(&headers);
    // The database away: the password form still shows (and says so when sent).
    let sso = crate::sso::settings(&state)
        .await
        .ok()
        .filter(|s| s.offered());
    let offer = sso.as_ref().map(|s| view::SsoOffer {
        label: &s.button_label,
        only: s.sso_only,
    });
    shown(view::login(flash.as_ref(), offer), &flash)
}

pub(super) async fn second_factor(headers: HeaderMap) -> Response {
    let flash = Flash::read(&headers);
    shown(view::second_factor(flash.as_ref()), &flash)
}

#[derive(Deserialize)]
pub(super) struct SetupQuery {
    token: Option<String>,
}

/// The first owner's page. It needs the token of the link printed at
/// start-up; once an owner exists it is gone (404) on every instance.
pub(super) async fn setup(
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
