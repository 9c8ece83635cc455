//! Pages people open in a browser: the status page with its incidents,
//! maintenance windows and history (templates in `crate::views`). Not API
//! operations, so not in the OpenAPI document.

mod status_page;

use crate::state::AppState;
use axum::Router;

pub fn router(state: &AppState) -> Router<AppState> {
    status_page::router(state)
}
