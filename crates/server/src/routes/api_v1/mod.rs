//! The keyed management API, `/api/v1`.

mod components;
mod maintenance;

use crate::key_auth;
use crate::state::AppState;
use axum::middleware::from_fn_with_state;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The v1 routes, with `content`: the shared routes mounted here too, all
/// behind the key middleware.
pub fn router(state: &AppState, content: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(content)
        .merge(components::routes())
        .merge(maintenance::routes())
        .route_layer(from_fn_with_state(state.clone(), key_auth::require_key))
}

/// The v1 handlers `/api/v2` also serves under its own prefix (same keys,
/// scopes, bodies and errors), so the v2 family needs nothing of ours.
pub fn v2_aliases() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(components::list))
        .routes(routes!(maintenance::create))
}
