//! Content routes the seed lists for both API keys and signed-in people:
//! one handler each behind `crate::caller::Caller`, served at `/api/v1/...`
//! (behind the key middleware, with its scope-by-method rule and rate-limit
//! headers) and at `/api/...` (a session or a key).

mod components;
mod incidents;
mod maintenance;
mod page_access;
mod page_audiences;
mod statuspages;
mod viewer_provider;

use crate::respond::MountedAt;
use crate::state::AppState;
use axum::Extension;
use utoipa_axum::router::OpenApiRouter;

/// The routes both families serve, for the family mounted at `prefix`.
pub fn router(prefix: &'static str) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(statuspages::routes())
        .merge(page_access::routes())
        .merge(page_audiences::routes())
        .merge(viewer_provider::routes())
        .merge(incidents::routes())
        .merge(components::routes())
        .merge(maintenance::routes())
        .layer(Extension(MountedAt(prefix)))
}

/// Routes only the application family has: the seed's PUT beside v1's
/// PATCH, its names for groups, and the layout route.
pub fn app_only() -> OpenApiRouter<AppState> {
    statuspages::app_only()
        .merge(components::app_only())
        .merge(incidents::app_only())
        .merge(maintenance::app_only())
        .layer(Extension(MountedAt("/api")))
}

/// The shared handlers `/api/v2` serves too; the `Location` of what they
/// create is its v1 address, where it can be read.
pub fn v2_aliases() -> OpenApiRouter<AppState> {
    use utoipa_axum::routes;
    OpenApiRouter::new()
        .routes(routes!(incidents::create))
        .routes(routes!(incidents::update))
        .routes(routes!(components::list))
        .routes(routes!(maintenance::create))
        .layer(Extension(MountedAt("/api/v1")))
}
