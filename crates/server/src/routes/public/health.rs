//! `GET /api/health`: liveness plus a database round trip, for load balancers
//! and for start-up scripts that wait until the server answers.

use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(health))
}

#[utoipa::path(
    get,
    path = "/api/health",
    tag = "operations",
    operation_id = "health",
    summary = "Liveness and a database round trip",
    responses(
        (status = 200, description = "Serving; the database answers", body = serde_json::Value),
        (status = 503, description = "The database does not answer", body = serde_json::Value),
    )
)]
async fn health(State(state): State<AppState>) -> Response {
    match upstate_store::pages::count(&state.db).await {
        Ok(_) => Json(json!({ "status": "ok", "database": "ok" })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "degraded", "database": "unreachable" })),
            )
                .into_response()
        }
    }
}
