//! `/api/incident-templates`: saved starting points for incidents (name,
//! title, status, impact, first message). Reading needs PAGES_READ,
//! changing INCIDENTS_WRITE; a signed-in person or a key.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::openapi::{BodyErrors, Conflict, KeyErrors, NotFound};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::templates::{IncidentTemplate, TemplateInput};
use upstate_store::templates;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, replace, remove))
}

#[utoipa::path(get, path = "/api/incident-templates", tag = "incident templates", operation_id = "listIncidentTemplates",
    summary = "Incident templates, by name",
    responses((status = 200, body = Data<Vec<IncidentTemplate>>), KeyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(templates::list(&state.db).await?))
}

#[utoipa::path(get, path = "/api/incident-templates/{id}", tag = "incident templates", operation_id = "getIncidentTemplate",
    summary = "An incident template", params(("id" = i64, Path, description = "Template id")),
    responses((status = 200, body = Data<IncidentTemplate>), KeyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(templates::get(&state.db, id).await?))
}

#[utoipa::path(post, path = "/api/incident-templates", tag = "incident templates", operation_id = "createIncidentTemplate",
    summary = "Save an incident template (`name` and `title` required; status defaults to investigating, impact to minor)",
    request_body = TemplateInput,
    responses((status = 201, body = Data<IncidentTemplate>), KeyErrors, BodyErrors, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<TemplateInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let t = templates::create(&state.db, &caller.audit, &input.validate()?).await?;
    Ok(created(format!("/api/incident-templates/{}", t.id), t))
}

#[utoipa::path(put, path = "/api/incident-templates/{id}", tag = "incident templates", operation_id = "replaceIncidentTemplate",
    summary = "Replace an incident template (every field, as on create)", params(("id" = i64, Path, description = "Template id")),
    request_body = TemplateInput,
    responses((status = 200, body = Data<IncidentTemplate>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<TemplateInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    Ok(data(
        templates::replace(&state.db, &caller.audit, id, &input.validate()?).await?,
    ))
}

#[utoipa::path(delete, path = "/api/incident-templates/{id}", tag = "incident templates", operation_id = "deleteIncidentTemplate",
    summary = "Delete an incident template", params(("id" = i64, Path, description = "Template id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    templates::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Incident template"))
}
