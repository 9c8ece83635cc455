//! `/api/v1/incidents`: newest first; `limit` defaults to 20, at most 100.

use crate::error::ApiResult;
use crate::extract::{Body, OptionalBody, PathId, QueryParams};
use crate::respond::{created, data, deleted};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use upstate_core::*;
use upstate_store::incidents::{self, IncidentFilter};

pub const DEFAULT_LIMIT: i64 = 20;
pub const MAX_LIMIT: i64 = 100;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/incidents", get(list).post(create))
        .route("/incidents/{id}", MethodRouter::new().get(show).patch(update).delete(remove))
        .route("/incidents/{id}/updates", post(add_update))
        .route("/incidents/{id}/resolve", post(resolve))
}

pub(crate) async fn list(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut errors = FieldErrors::new();
    let page_id = q.id("statusPageId", &mut errors);
    let status = match q.get("status") {
        Some("unresolved") => Some("unresolved".to_string()),
        Some(_) => q
            .parsed::<IncidentStatus>(
                "status",
                &format!("one of: {}, unresolved", IncidentStatus::expected()),
                &mut errors,
            )
            .map(|s| s.as_str().to_string()),
        None => None,
    };
    let limit = q.limit("limit", DEFAULT_LIMIT, MAX_LIMIT, &mut errors);
    errors.into_result()?;
    Ok(data(incidents::list(&state.db, &IncidentFilter { page_id, status, limit }).await?))
}

async fn show(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    Ok(data(incidents::get(&state.db, id).await?))
}

pub(crate) async fn create(State(state): State<AppState>, Body(input): Body<NewIncidentInput>) -> ApiResult<Response> {
    let incident = incidents::create(&state.db, input.validate()?).await?;
    Ok(created(format!("/api/v1/incidents/{}", incident.id), incident))
}

pub(crate) async fn update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<IncidentPatchInput>,
) -> ApiResult<Response> {
    Ok(data(incidents::update(&state.db, id, input.validate()?).await?))
}

async fn add_update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<NewIncidentUpdateInput>,
) -> ApiResult<Response> {
    let update = incidents::post_update(&state.db, id, input.validate()?).await?;
    Ok((StatusCode::CREATED, data(update)).into_response())
}

async fn resolve(
    State(state): State<AppState>,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    Ok(data(incidents::resolve(&state.db, id, input.validate()?).await?))
}

async fn remove(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    incidents::delete(&state.db, id).await?;
    Ok(deleted("Incident"))
}
