//! `GET /api/health`: liveness plus a database round trip, for load balancers
//! and for start-up scripts that wait until the server answers.

use crate::extract::QueryParams;
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
    summary = "Liveness and a database round trip; `?ready`: readiness (migrations current too)",
    params(("ready" = Option<String>, Query, description = "Present: answer readiness (database reachable and migrations current) instead")),
    responses(
        (status = 200, description = "Serving; the database answers", body = serde_json::Value),
        (status = 503, description = "The database does not answer", body = serde_json::Value),
    )
)]
async fn health(State(state): State<AppState>, q: QueryParams) -> Response {
    if q.has("ready") {
        return ready(&state).await;
    }
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

/// Readiness: the database answers and carries every migration this build
/// needs (an instance of a newer build waits for its migrations to run).
async fn ready(state: &AppState) -> Response {
    match upstate_store::health::migrations(&state.db).await {
        Ok(m) if m.current() => Json(json!({
            "status": "ready", "database": "ok", "migrations": "current", "migration": m.applied
        }))
        .into_response(),
        Ok(m) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({
                "status": "not_ready", "database": "ok", "migrations": "behind",
                "migration": m.applied, "needed": m.expected
            })),
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "readiness: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "not_ready", "database": "unreachable" })),
            )
                .into_response()
        }
    }
}
