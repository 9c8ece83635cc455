//! `/api/v1/maintenance`, ordered by scheduled start. Transitions go through
//! start/complete/cancel only; refused moves are 409.

use crate::error::ApiResult;
use crate::extract::{Body, OptionalBody, PathId, QueryParams};
use crate::respond::{created, data, deleted};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use upstate_core::*;
use upstate_store::maintenance::{self, MaintenanceFilter};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/maintenance", get(list).post(create))
        .route("/maintenance/{id}", MethodRouter::new().get(show).patch(update).delete(remove))
        .route("/maintenance/{id}/start", post(start))
        .route("/maintenance/{id}/complete", post(complete))
        .route("/maintenance/{id}/cancel", post(cancel))
}

async fn list(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut errors = FieldErrors::new();
    let page_id = q.id("statusPageId", &mut errors);
    let status =
        q.parsed::<MaintenanceStatus>("status", &format!("one of: {}", MaintenanceStatus::expected()), &mut errors);
    let upcoming = q.bool("upcoming", &mut errors).unwrap_or(false);
    errors.into_result()?;
    let filter = MaintenanceFilter { page_id, status, upcoming_after: upcoming.then(Timestamp::now) };
    Ok(data(maintenance::list(&state.db, &filter).await?))
}

async fn show(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    Ok(data(maintenance::get(&state.db, id).await?))
}

async fn create(State(state): State<AppState>, Body(input): Body<NewMaintenanceInput>) -> ApiResult<Response> {
    let m = maintenance::create(&state.db, input.validate()?).await?;
    Ok(created(format!("/api/v1/maintenance/{}", m.id), m))
}

async fn update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<MaintenancePatchInput>,
) -> ApiResult<Response> {
    Ok(data(maintenance::update(&state.db, id, input.validate()?).await?))
}

async fn transition(
    state: &AppState,
    id: Id,
    action: MaintenanceAction,
    input: ClosingMessageInput,
) -> ApiResult<Response> {
    let message = input.validate()?;
    Ok(data(maintenance::transition(&state.db, id, action, &message).await?))
}

async fn start(
    State(state): State<AppState>,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    transition(&state, id, MaintenanceAction::Start, input).await
}

async fn complete(
    State(state): State<AppState>,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    transition(&state, id, MaintenanceAction::Complete, input).await
}

async fn cancel(
    State(state): State<AppState>,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    transition(&state, id, MaintenanceAction::Cancel, input).await
}

async fn remove(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    maintenance::delete(&state.db, id).await?;
    Ok(deleted("Maintenance"))
}
