//! One component's screen.

use super::{Page, Screen};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use axum::response::IntoResponse;

pub(super) async fn component_screen(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
) -> Page {
    let details = crate::component_details::load(&state, id)
        .await
        .map_err(IntoResponse::into_response)?;
    Ok(s.show(view::component(&s.frame("pages"), s.flash(), &details)))
}
