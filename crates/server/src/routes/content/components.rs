//! Components and their groups, for keys (`/api/v1/components`,
//! `/api/v1/component-groups`) and people (the same under `/api`, plus the
//! seed's application names: `/api/groups…`, `PUT` beside `PATCH`, and
//! `PUT /api/groups/reorder`, a page's whole layout in one transaction).
//! Reading needs PAGES_READ, changing PAGES_WRITE.

use crate::caller::Caller;
use crate::component_details::{self, ComponentDetails};
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

/// The application family's own names for the same handlers.
pub fn app_only() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(replace))
        .routes(routes!(app_list_groups, app_create_group))
        .routes(routes!(
            app_show_group,
            app_update_group,
            app_replace_group,
            app_remove_group
        ))
        .routes(routes!(reorder))
        .routes(routes!(details))
}

#[utoipa::path(put, path = "/components/{id}", tag = "components", operation_id = "replaceComponent",
    summary = "Change a component (the same change as the PATCH)",
    params(("id" = i64, Path, description = "Component id")), request_body = ComponentPatchInput,
    responses((status = 200, body = Data<Component>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn replace(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<ComponentPatchInput>,
) -> ApiResult<Response> {
    update(state, caller, id, body).await
}

#[utoipa::path(get, path = "/groups", tag = "component groups", operation_id = "appListGroups",
    summary = "List component groups", params(("statusPageId" = Option<i64>, Query, description = "Only this page's")),
    responses((status = 200, body = Data<Vec<ComponentGroup>>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = [])))]
async fn app_list_groups(
    state: State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    list_groups(state, caller, q).await
}

#[utoipa::path(post, path = "/groups", tag = "component groups", operation_id = "appCreateGroup",
    summary = "Create a component group", request_body = NewGroupInput,
    responses((status = 201, body = Data<ComponentGroup>), KeyErrors, BodyErrors),
    security(("api_key" = []), ("session" = [])))]
async fn app_create_group(
    state: State<AppState>,
    caller: Caller,
    prefix: Extension<MountedAt>,
    body: Body<NewGroupInput>,
) -> ApiResult<Response> {
    create_group(state, caller, prefix, body).await
}

#[utoipa::path(get, path = "/groups/{id}", tag = "component groups", operation_id = "appGetGroup",
    summary = "Get a component group", params(("id" = i64, Path, description = "Group id")),
    responses((status = 200, body = Data<ComponentGroup>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn app_show_group(state: State<AppState>, caller: Caller, id: PathId) -> ApiResult<Response> {
    show_group(state, caller, id).await
}

#[utoipa::path(patch, path = "/groups/{id}", tag = "component groups", operation_id = "appUpdateGroup",
    summary = "Change a component group", params(("id" = i64, Path, description = "Group id")),
    request_body = GroupPatchInput,
    responses((status = 200, body = Data<ComponentGroup>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn app_update_group(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<GroupPatchInput>,
) -> ApiResult<Response> {
    update_group(state, caller, id, body).await
}

#[utoipa::path(put, path = "/groups/{id}", tag = "component groups", operation_id = "appReplaceGroup",
    summary = "Change a component group (the same change as the PATCH)", params(("id" = i64, Path, description = "Group id")),
    request_body = GroupPatchInput,
    responses((status = 200, body = Data<ComponentGroup>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn app_replace_group(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<GroupPatchInput>,
) -> ApiResult<Response> {
    update_group(state, caller, id, body).await
}

#[utoipa::path(delete, path = "/groups/{id}", tag = "component groups", operation_id = "appDeleteGroup",
    summary = "Delete a group (its components stay, ungrouped)", params(("id" = i64, Path, description = "Group id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn app_remove_group(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
) -> ApiResult<Response> {
    remove_group(state, caller, id).await
}

#[utoipa::path(put, path = "/groups/reorder", tag = "component groups", operation_id = "reorderGroups",
    summary = "Put a page's groups and components in a new order, and components in new groups, in one transaction",
    description = "`groupIds` lists every group of the page in its new order; `components` lists every component of the page in its new order, each with its group (`null`: none). Either may be left out to keep that order. A list that misses or repeats one is refused (422) and nothing changes.",
    request_body = ReorderInput,
    responses((status = 200, body = Data<Vec<Component>>, description = "The page's components in their new order"), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn reorder(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<ReorderInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let layout = input.validate()?;
    groups::reorder(&state.db, &caller.audit, &layout).await?;
    Ok(data(
        components::list(&state.db, Some(layout.status_page_id), None).await?,
    ))
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

#[utoipa::path(get, path = "/components/{id}/details", tag = "components", operation_id = "componentDetails",
    summary = "One component with its page, uptime over 24 h / 7 d / 30 d / 90 d, latest status changes, open incidents and maintenance",
    params(("id" = i64, Path, description = "Component id")),
    responses((status = 200, body = Data<ComponentDetails>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn details(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(component_details::load(&state, id).await?))
}
