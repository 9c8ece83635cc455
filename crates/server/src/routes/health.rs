//! `GET /api/health`: liveness plus a database round trip, for load balancers
//! and for start-up scripts that wait until the server answers.

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/health", get(health))
}

async fn health(State(state): State<AppState>) -> Response {
    match upstate_store::pages::count(&state.db).await {
        Ok(_) => Json(json!({ "status": "ok", "database": "ok" })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({ "status": "degraded", "database": "unreachable" })))
                .into_response()
        }
    }
}
