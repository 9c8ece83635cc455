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
        (status = 200, description = "Serving (`status` ok); or, without its database, serving pages from memory (`status` degraded, `database` unreachable)", body = serde_json::Value),
        (status = 503, description = "`?ready`: not ready (the database does not answer, or migrations are behind)", body = serde_json::Value),
    )
)]
async fn health(State(state): State<AppState>, q: QueryParams) -> Response {
    if q.has("ready") {
        return ready(&state).await;
    }
    let answered = state.db.reachable() && upstate_store::pages::count(&state.db).await.is_ok();
    if answered {
        return Json(json!({ "status": "ok", "database": "ok" })).into_response();
    }
    // Alive without its database: it serves every page from memory (stale
    // beats down), so a load balancer keeps sending visitors here; readiness
    // (`?ready`) says it takes no changes.
    Json(json!({ "status": "degraded", "database": "unreachable", "pages": "served from memory" }))
        .into_response()
}

/// Readiness: the database answers and carries every migration this build
/// needs (an instance of a newer build waits for its migrations to run).
async fn ready(state: &AppState) -> Response {
    let answer = if state.db.reachable() {
        upstate_store::health::migrations(&state.db).await
    } else {
        Err(upstate_store::StoreError::Config(
            "the database does not answer".into(),
        ))
    };
    match answer {
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
            tracing::warn!(error = %e, "readiness: database unreachable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "not_ready", "database": "unreachable" })),
            )
                .into_response()
        }
    }
}
