//! The keyed management API, `/api/v1`: the content routes (one handler
//! each, shared with the application family in `content/`) behind the key
//! middleware (authentication, scope by method, per-key limits).

use crate::key_auth;
use crate::state::AppState;
use axum::middleware::from_fn_with_state;
use utoipa_axum::router::OpenApiRouter;

/// The v1 routes, with `content`: the shared routes mounted here too, all
/// behind the key middleware.
pub fn router(state: &AppState, content: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(content)
        .route_layer(from_fn_with_state(state.clone(), key_auth::require_key))
}
