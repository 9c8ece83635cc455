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
        .route("/maintenance/{id}/start", transition(MaintenanceAction::Start))
        .route("/maintenance/{id}/complete", transition(MaintenanceAction::Complete))
        .route("/maintenance/{id}/cancel", transition(MaintenanceAction::Cancel))
}

pub(crate) async fn list(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
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

pub(crate) async fn create(
    State(state): State<AppState>,
    Body(input): Body<NewMaintenanceInput>,
) -> ApiResult<Response> {
    let m = maintenance::create(&state.db, input.validate()?).await?;
    Ok(created(format!("/api/v1/maintenance/{}", m.id), m))
}

pub(crate) async fn update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<MaintenancePatchInput>,
) -> ApiResult<Response> {
    Ok(data(maintenance::update(&state.db, id, input.validate()?).await?))
}

/// One handler per move, all the same shape: an optional closing message.
fn transition(action: MaintenanceAction) -> MethodRouter<AppState> {
    post(
        move |State(state): State<AppState>,
              PathId(id): PathId,
              OptionalBody(input): OptionalBody<ClosingMessageInput>| async move {
            let message = input.validate()?;
            ApiResult::Ok(data(maintenance::transition(&state.db, id, action, &message).await?))
        },
    )
}

async fn remove(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    maintenance::delete(&state.db, id).await?;
    Ok(deleted("Maintenance"))
}
