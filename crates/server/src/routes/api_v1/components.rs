//! `/api/v1/components` and `/api/v1/component-groups`.

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId, QueryParams};
use crate::respond::{created, data, deleted};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{MethodRouter, get, patch};
use upstate_core::*;
use upstate_store::{components, groups};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/components", get(list).post(create))
        .route("/components/{id}", MethodRouter::new().get(show).patch(update).delete(remove))
        .route("/components/{id}/status", patch(set_status))
        .route("/component-groups", get(list_groups).post(create_group))
        .route("/component-groups/{id}", MethodRouter::new().get(show_group).patch(update_group).delete(remove_group))
}

pub(crate) async fn list(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut errors = FieldErrors::new();
    let page = q.id("statusPageId", &mut errors);
    let group = q.id("groupId", &mut errors);
    errors.into_result()?;
    Ok(data(components::list(&state.db, page, group).await?))
}

async fn show(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    Ok(data(components::get(&state.db, id).await?))
}

pub(crate) async fn create(State(state): State<AppState>, Body(input): Body<NewComponentInput>) -> ApiResult<Response> {
    let c = components::create(&state.db, input.validate()?).await?;
    Ok(created(format!("/api/v1/components/{}", c.id), c))
}

pub(crate) async fn update(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<ComponentPatchInput>,
) -> ApiResult<Response> {
    Ok(data(components::update(&state.db, id, input.validate()?).await?))
}

async fn set_status(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<ComponentStatusInput>,
) -> ApiResult<Response> {
    let status = input.validate()?;
    let patch = ComponentPatch { status: Some(status), ..ComponentPatch::default() };
    Ok(data(components::update(&state.db, id, patch).await?))
}

async fn remove(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    components::delete(&state.db, id).await?;
    Ok(deleted("Component"))
}

async fn list_groups(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut errors = FieldErrors::new();
    let page = q.id("statusPageId", &mut errors);
    errors.into_result().map_err(ApiError::from)?;
    Ok(data(groups::list(&state.db, page).await?))
}

async fn show_group(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    Ok(data(groups::get(&state.db, id).await?))
}

async fn create_group(State(state): State<AppState>, Body(input): Body<NewGroupInput>) -> ApiResult<Response> {
    let g = groups::create(&state.db, input.validate()?).await?;
    Ok(created(format!("/api/v1/component-groups/{}", g.id), g))
}

async fn update_group(
    State(state): State<AppState>,
    PathId(id): PathId,
    Body(input): Body<GroupPatchInput>,
) -> ApiResult<Response> {
    Ok(data(groups::update(&state.db, id, input.validate()?).await?))
}

async fn remove_group(State(state): State<AppState>, PathId(id): PathId) -> ApiResult<Response> {
    groups::delete(&state.db, id).await?;
    Ok(deleted("Component group"))
}
