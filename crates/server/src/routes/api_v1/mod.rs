//! The keyed management API, `/api/v1`.

pub(crate) mod components;
pub(crate) mod incidents;
pub(crate) mod maintenance;
pub(crate) mod pages;

use crate::auth;
use crate::state::AppState;
use axum::middleware::from_fn_with_state;
use utoipa_axum::router::OpenApiRouter;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(pages::routes())
        .merge(components::routes())
        .merge(incidents::routes())
        .merge(maintenance::routes())
        .route_layer(from_fn_with_state(state.clone(), auth::require_key))
}
