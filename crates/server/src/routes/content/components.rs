//! `/api/v1/components` and `/api/v1/component-groups`.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, KeyErrors, NotFound};
use crate::respond::{Data, Message};
use crate::respond::{MountedAt, created, data, deleted};
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::*;
use upstate_store::{components, groups};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
        .routes(routes!(set_status))
        .routes(routes!(list_groups, create_group))
        .routes(routes!(show_group, update_group, remove_group))
}

#[utoipa::path(
    get,
    path = "/components",
    tag = "components",
    operation_id = "listComponents",
    summary = "List components",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's"), ("groupId" = Option<i64>, Query, description = "Only this group's")),
    responses((status = 200, body = Data<Vec<Component>>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut errors = FieldErrors::new();
    let page = q.id("statusPageId", &mut errors);
    let group = q.id("groupId", &mut errors);
    errors.into_result()?;
    Ok(data(components::list(&state.db, page, group).await?))
}

#[utoipa::path(
    get,
    path = "/components/{id}",
    tag = "components",
    operation_id = "getComponent",
    summary = "Get a component",
    params(("id" = i64, Path, description = "Component id")),
    responses((status = 200, body = Data<Component>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(components::get(&state.db, id).await?))
}

#[utoipa::path(
    post,
    path = "/components",
    tag = "components",
    operation_id = "createComponent",
    summary = "Create a component",
    request_body = NewComponentInput,
    responses((status = 201, body = Data<Component>), KeyErrors, BodyErrors),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Extension(MountedAt(prefix)): Extension<MountedAt>,
    Body(input): Body<NewComponentInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let c = components::create(&state.db, &caller.audit, input.validate()?).await?;
    Ok(created(format!("{prefix}/components/{}", c.id), c))
}

#[utoipa::path(
    patch,
    path = "/components/{id}",
    tag = "components",
    operation_id = "updateComponent",
    summary = "Change a component",
    params(("id" = i64, Path, description = "Component id")),
    request_body = ComponentPatchInput,
    responses((status = 200, body = Data<Component>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ComponentPatchInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    Ok(data(
        components::update(&state.db, &caller.audit, id, input.validate()?).await?,
    ))
}

#[utoipa::path(
    patch,
    path = "/components/{id}/status",
    tag = "components",
    operation_id = "setComponentStatus",
    summary = "Set a component's status",
    params(("id" = i64, Path, description = "Component id")),
    request_body = ComponentStatusInput,
    responses((status = 200, body = Data<Component>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn set_status(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ComponentStatusInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let status = input.validate()?;
    let patch = ComponentPatch {
        status: Some(status),
        ..ComponentPatch::default()
    };
    Ok(data(
        components::update(&state.db, &caller.audit, id, patch).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/components/{id}",
    tag = "components",
    operation_id = "deleteComponent",
    summary = "Delete a component",
    params(("id" = i64, Path, description = "Component id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    components::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Component"))
}

#[utoipa::path(
    get,
    path = "/component-groups",
    tag = "component groups",
    operation_id = "listComponentGroups",
    summary = "List component groups",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's")),
    responses((status = 200, body = Data<Vec<ComponentGroup>>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
async fn list_groups(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut errors = FieldErrors::new();
    let page = q.id("statusPageId", &mut errors);
    errors.into_result().map_err(ApiError::from)?;
    Ok(data(groups::list(&state.db, page).await?))
}

#[utoipa::path(
    get,
    path = "/component-groups/{id}",
    tag = "component groups",
    operation_id = "getComponentGroup",
    summary = "Get a component group",
    params(("id" = i64, Path, description = "Group id")),
    responses((status = 200, body = Data<ComponentGroup>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn show_group(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(groups::get(&state.db, id).await?))
}

#[utoipa::path(
    post,
    path = "/component-groups",
    tag = "component groups",
    operation_id = "createComponentGroup",
    summary = "Create a component group",
    request_body = NewGroupInput,
    responses((status = 201, body = Data<ComponentGroup>), KeyErrors, BodyErrors),
    security(("api_key" = []), ("session" = []))
)]
async fn create_group(
    State(state): State<AppState>,
    caller: Caller,
    Extension(MountedAt(prefix)): Extension<MountedAt>,
    Body(input): Body<NewGroupInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let g = groups::create(&state.db, &caller.audit, input.validate()?).await?;
    Ok(created(format!("{prefix}/component-groups/{}", g.id), g))
}

#[utoipa::path(
    patch,
    path = "/component-groups/{id}",
    tag = "component groups",
    operation_id = "updateComponentGroup",
    summary = "Change a component group",
    params(("id" = i64, Path, description = "Group id")),
    request_body = GroupPatchInput,
    responses((status = 200, body = Data<ComponentGroup>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn update_group(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<GroupPatchInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    Ok(data(
        groups::update(&state.db, &caller.audit, id, input.validate()?).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/component-groups/{id}",
    tag = "component groups",
    operation_id = "deleteComponentGroup",
    summary = "Delete a group (its components stay, ungrouped)",
    params(("id" = i64, Path, description = "Group id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove_group(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    groups::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Component group"))
}
