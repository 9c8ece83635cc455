//! Route families, one module each, and the fallbacks that keep unknown routes
//! and wrong methods inside the problem+json contract.

pub mod api_v1;
mod api_v2;
mod health;
pub mod public;

use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// Every route, and the OpenAPI document of exactly those routes.
pub fn router(state: &AppState) -> (Router<AppState>, OpenApi) {
    let (router, doc) = OpenApiRouter::new()
        .merge(public::router(state))
        .nest("/api/v1", api_v1::router(state))
        .nest("/api/v2", api_v2::router(state))
        .merge(health::routes())
        .split_for_parts();
    (router.fallback(not_found).method_not_allowed_fallback(method_not_allowed), doc)
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no route matches this path".into())
}

async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}
