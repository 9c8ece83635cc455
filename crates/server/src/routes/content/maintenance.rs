//! `/api/v1/maintenance`, ordered by scheduled start. Transitions go through
//! start/complete/cancel only; refused moves are 409.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, OptionalBody, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, Conflict, KeyErrors, NotFound};
use crate::respond::{Data, Message, MountedAt, created, data, deleted};
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::*;
use upstate_store::maintenance::{self, MaintenanceFilter};
use utoipa_axum::{router::OpenApiRouter, routes};

/// `PUT /maintenance/{id}`, as the seed names it for the application routes: the
/// same change as the PATCH.
pub fn app_only() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(replace))
}

#[utoipa::path(put, path = "/maintenance/{id}", tag = "maintenance", operation_id = "replaceMaintenance",
    summary = "Change a maintenance window (the same change as the PATCH)",
    params(("id" = i64, Path, description = "Maintenance id")), request_body = MaintenancePatchInput,
    responses((status = 200, body = Data<Maintenance>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn replace(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<MaintenancePatchInput>,
) -> ApiResult<Response> {
    update(state, caller, id, body).await
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
        .routes(routes!(start))
        .routes(routes!(complete))
        .routes(routes!(cancel))
}

#[utoipa::path(
    get,
    path = "/maintenance",
    tag = "maintenance",
    operation_id = "listMaintenance",
    summary = "List maintenance windows by scheduled start",
    params(
        ("statusPageId" = Option<i64>, Query, description = "Only this page's"),
        ("status" = Option<MaintenanceStatus>, Query, description = "Only windows in this state"),
        ("upcoming" = Option<bool>, Query, description = "true: only scheduled windows that start in the future"),
    ),
    responses((status = 200, body = Data<Vec<Maintenance>>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut errors = FieldErrors::new();
    let page_id = q.id("statusPageId", &mut errors);
    let status = q.parsed::<MaintenanceStatus>(
        "status",
        &format!("one of: {}", MaintenanceStatus::expected()),
        &mut errors,
    );
    let upcoming = q.bool("upcoming", &mut errors).unwrap_or(false);
    errors.into_result()?;
    let filter = MaintenanceFilter {
        page_id,
        status,
        upcoming_after: upcoming.then(Timestamp::now),
        ..Default::default()
    };
    Ok(data(maintenance::list(&state.db, &filter).await?))
}

#[utoipa::path(
    get,
    path = "/maintenance/{id}",
    tag = "maintenance",
    operation_id = "getMaintenance",
    summary = "Get a maintenance window",
    params(("id" = i64, Path, description = "Maintenance id")),
    responses((status = 200, body = Data<Maintenance>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(maintenance::get(&state.db, id).await?))
}

#[utoipa::path(
    post,
    path = "/maintenance",
    tag = "maintenance",
    operation_id = "createMaintenance",
    summary = "Schedule a maintenance window",
    request_body = NewMaintenanceInput,
    responses((status = 201, body = Data<Maintenance>), KeyErrors, BodyErrors),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Extension(MountedAt(prefix)): Extension<MountedAt>,
    Body(input): Body<NewMaintenanceInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let m = maintenance::create(&state.db, &caller.audit, input.validate()?).await?;
    Ok(created(format!("{prefix}/maintenance/{}", m.id), m))
}

#[utoipa::path(
    patch,
    path = "/maintenance/{id}",
    tag = "maintenance",
    operation_id = "updateMaintenance",
    summary = "Change a maintenance window",
    params(("id" = i64, Path, description = "Maintenance id")),
    request_body = MaintenancePatchInput,
    responses((status = 200, body = Data<Maintenance>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<MaintenancePatchInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    Ok(data(
        maintenance::update(&state.db, &caller.audit, id, input.validate()?).await?,
    ))
}

async fn transition(
    state: &AppState,
    ctx: &upstate_store::AuditCtx,
    id: Id,
    action: MaintenanceAction,
    input: ClosingMessageInput,
) -> ApiResult<Response> {
    let message = input.validate()?;
    Ok(data(
        maintenance::transition(&state.db, ctx, id, action, &message).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/maintenance/{id}/start",
    tag = "maintenance",
    operation_id = "startMaintenance",
    summary = "Start a scheduled window",
    params(("id" = i64, Path, description = "Maintenance id")),
    request_body = Option<ClosingMessageInput>,
    responses((status = 200, body = Data<Maintenance>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn start(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    transition(&state, &caller.audit, id, MaintenanceAction::Start, input).await
}

#[utoipa::path(
    post,
    path = "/maintenance/{id}/complete",
    tag = "maintenance",
    operation_id = "completeMaintenance",
    summary = "Complete an in-progress window",
    params(("id" = i64, Path, description = "Maintenance id")),
    request_body = Option<ClosingMessageInput>,
    responses((status = 200, body = Data<Maintenance>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn complete(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    transition(
        &state,
        &caller.audit,
        id,
        MaintenanceAction::Complete,
        input,
    )
    .await
}

#[utoipa::path(
    post,
    path = "/maintenance/{id}/cancel",
    tag = "maintenance",
    operation_id = "cancelMaintenance",
    summary = "Cancel a scheduled or in-progress window",
    params(("id" = i64, Path, description = "Maintenance id")),
    request_body = Option<ClosingMessageInput>,
    responses((status = 200, body = Data<Maintenance>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ClosingMessageInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    transition(&state, &caller.audit, id, MaintenanceAction::Cancel, input).await
}

#[utoipa::path(
    delete,
    path = "/maintenance/{id}",
    tag = "maintenance",
    operation_id = "deleteMaintenance",
    summary = "Delete a maintenance window",
    params(("id" = i64, Path, description = "Maintenance id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    maintenance::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Maintenance"))
}
