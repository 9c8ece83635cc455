//! Incidents, for keys (`/api/v1/incidents`) and people (`/api/incidents`)
//! alike: reading needs PAGES_READ, opening, changing, resolving and
//! deleting INCIDENTS_WRITE. Lists are newest first; `limit` defaults to 20,
//! at most 100.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, OptionalBody, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, Conflict, KeyErrors, NotFound};
use crate::respond::{Data, Message};
use crate::respond::{MountedAt, created, data, deleted};
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use upstate_core::postmortem::{Postmortem, PostmortemInput};
use upstate_core::roles::Permission;
use upstate_core::*;
use upstate_store::incidents::{self, IncidentFilter};
use upstate_store::postmortems;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const DEFAULT_LIMIT: i64 = 20;
pub const MAX_LIMIT: i64 = 100;

/// `PUT /incidents/{id}`, as the seed names it for the application routes: the
/// same change as the PATCH.
pub fn app_only() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(replace))
        .routes(routes!(post_by_incident))
        .routes(routes!(delete_update, edit_update))
        .routes(routes!(rca, put_rca))
        .routes(routes!(generate_rca))
}

#[utoipa::path(get, path = "/incidents/{id}/rca", tag = "postmortems", operation_id = "getPostmortem",
    summary = "The incident's postmortem (Markdown; draft or published)",
    params(("id" = i64, Path, description = "Incident id")),
    responses((status = 200, body = Data<Postmortem>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn rca(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    incidents::get(&state.db, id).await?;
    let pm = postmortems::get(&state.db, id).await?.ok_or_else(|| {
        crate::error::ApiError::NotFound("this incident has no postmortem yet".into())
    })?;
    Ok(data(pm))
}

#[utoipa::path(put, path = "/incidents/{id}/rca", tag = "postmortems", operation_id = "putPostmortem",
    summary = "Write the postmortem; `published: true` shows it on the incident's public page",
    params(("id" = i64, Path, description = "Incident id")), request_body = PostmortemInput,
    responses((status = 200, body = Data<Postmortem>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn put_rca(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<PostmortemInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let change = input.validate()?;
    Ok(data(
        postmortems::put(&state.db, &caller.audit, id, &change, false).await?,
    ))
}

#[utoipa::path(post, path = "/incidents/{id}/rca/generate", tag = "postmortems", operation_id = "generatePostmortem",
    summary = "Draft the postmortem from the incident's own record and save it as a draft",
    description = "The draft holds a summary, the impact, the duration, the affected components and the timeline, and leaves root cause, resolution and follow-up actions for people. Deterministic; no outside service. Refused (409) when a published postmortem exists.",
    params(("id" = i64, Path, description = "Incident id")),
    responses((status = 200, body = Data<Postmortem>), KeyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = [])))]
async fn generate_rca(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let incident = incidents::get(&state.db, id).await?;
    let names: Vec<String> =
        upstate_store::components::list(&state.db, Some(incident.status_page_id), None)
            .await?
            .into_iter()
            .filter(|c| incident.affected_components.contains(&c.id))
            .map(|c| c.name)
            .collect();
    let change = upstate_core::postmortem::PostmortemChange {
        body: upstate_core::postmortem::draft(&incident, &names, state.db.clock.now()),
        published: false,
    };
    Ok(data(
        postmortems::put(&state.db, &caller.audit, id, &change, true).await?,
    ))
}

#[utoipa::path(post, path = "/incident-updates", tag = "incidents", operation_id = "postIncidentUpdateByIncident",
    summary = "Post a timeline update to the incident `incidentId` names",
    request_body = IncidentUpdatePost,
    responses((status = 201, body = Data<IncidentUpdate>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = [])))]
async fn post_by_incident(
    state: State<AppState>,
    caller: Caller,
    Body(input): Body<IncidentUpdatePost>,
) -> ApiResult<Response> {
    let Some(id) = input.incident_id else {
        return Err(FieldErrors::single("incidentId", "is required").into());
    };
    add_update(state, caller, PathId(id), Body(input.update)).await
}

#[utoipa::path(delete, path = "/incident-updates/{id}", tag = "incidents", operation_id = "deleteIncidentUpdate",
    summary = "Delete one update of a timeline (the incident keeps at least one)",
    params(("id" = i64, Path, description = "Update id")),
    responses((status = 200, body = Data<Incident>, description = "The incident without the update"), KeyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = [])))]
async fn delete_update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    Ok(data(
        incidents::delete_update(&state.db, &caller.audit, id).await?,
    ))
}

/// `PATCH /incident-updates/{id}`: the corrected text of one update.
#[derive(serde::Deserialize, utoipa::ToSchema)]
struct UpdateText {
    #[schema(schema_with = upstate_core::schema::message, required)]
    message: Option<String>,
}

#[utoipa::path(patch, path = "/incident-updates/{id}", tag = "incidents", operation_id = "editIncidentUpdate",
    summary = "Correct the message of one update (its status and time stay; the audit log keeps the old text)",
    params(("id" = i64, Path, description = "Update id")),
    request_body = UpdateText,
    responses((status = 200, body = Data<Incident>, description = "The incident with the corrected update"), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn edit_update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<UpdateText>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let mut e = FieldErrors::new();
    let message = match input.message {
        Some(m) => e.check("message", upstate_core::validate::message(&m)),
        None => {
            e.push("message", "is required");
            None
        }
    };
    e.into_result()?;
    let message = message.unwrap_or_default();
    Ok(data(
        incidents::edit_update(&state.db, &caller.audit, id, &message).await?,
    ))
}

#[utoipa::path(put, path = "/incidents/{id}", tag = "incidents", operation_id = "replaceIncident",
    summary = "Change an incident (the same change as the PATCH)",
    params(("id" = i64, Path, description = "Incident id")), request_body = IncidentPatchInput,
    responses((status = 200, body = Data<Incident>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn replace(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<IncidentPatchInput>,
) -> ApiResult<Response> {
    update(state, caller, id, body).await
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
        .routes(routes!(add_update))
        .routes(routes!(resolve))
}

#[utoipa::path(
    get,
    path = "/incidents",
    tag = "incidents",
    operation_id = "listIncidents",
    summary = "List incidents, newest first",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's"), ("status" = Option<String>, Query, description = "investigating, identified, monitoring, resolved, or unresolved"), ("limit" = Option<i64>, Query, description = "1 to 100, default 20")),
    responses((status = 200, body = Data<Vec<Incident>>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut errors = FieldErrors::new();
    let page_id = q.id("statusPageId", &mut errors);
    let status = q.incident_status(&mut errors).map(str::to_string);
    let limit = q.limit("limit", DEFAULT_LIMIT, MAX_LIMIT, &mut errors);
    errors.into_result()?;
    Ok(data(
        incidents::list(
            &state.db,
            &IncidentFilter {
                page_id,
                status,
                limit,
                ..Default::default()
            },
        )
        .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/incidents/{id}",
    tag = "incidents",
    operation_id = "getIncident",
    summary = "Get an incident with its timeline",
    params(("id" = i64, Path, description = "Incident id")),
    responses((status = 200, body = Data<Incident>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(incidents::get(&state.db, id).await?))
}

#[utoipa::path(
    post,
    path = "/incidents",
    tag = "incidents",
    operation_id = "createIncident",
    summary = "Open an incident",
    request_body = NewIncidentInput,
    responses((status = 201, body = Data<Incident>), KeyErrors, BodyErrors),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Extension(MountedAt(prefix)): Extension<MountedAt>,
    Body(input): Body<NewIncidentInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let audit = caller.audit.quiet_if(input.notify == Some(false));
    let incident = incidents::create(&state.db, &audit, input.validate()?).await?;
    Ok(created(
        format!("{prefix}/incidents/{}", incident.id),
        incident,
    ))
}

#[utoipa::path(
    patch,
    path = "/incidents/{id}",
    tag = "incidents",
    operation_id = "updateIncident",
    summary = "Change an incident (a status change adds a timeline entry)",
    params(("id" = i64, Path, description = "Incident id")),
    request_body = IncidentPatchInput,
    responses((status = 200, body = Data<Incident>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
pub(crate) async fn update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<IncidentPatchInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    Ok(data(
        incidents::update(&state.db, &caller.audit, id, input.validate()?).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/incidents/{id}/updates",
    tag = "incidents",
    operation_id = "postIncidentUpdate",
    summary = "Post a timeline update",
    params(("id" = i64, Path, description = "Incident id")),
    request_body = NewIncidentUpdateInput,
    responses((status = 201, body = Data<IncidentUpdate>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn add_update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<NewIncidentUpdateInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let audit = caller.audit.quiet_if(input.notify == Some(false));
    let update = incidents::post_update(&state.db, &audit, id, input.validate()?).await?;
    Ok((StatusCode::CREATED, data(update)).into_response())
}

#[utoipa::path(
    post,
    path = "/incidents/{id}/resolve",
    tag = "incidents",
    operation_id = "resolveIncident",
    summary = "Resolve an incident",
    description = "Without a message, the resolution says \"This incident has been resolved.\" in the install's default language.",
    params(("id" = i64, Path, description = "Incident id")),
    request_body = Option<ResolveInput>,
    responses((status = 200, body = Data<Incident>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn resolve(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    OptionalBody(input): OptionalBody<ResolveInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let audit = caller.audit.quiet_if(input.notify == Some(false));
    let (mut message, changes) = input.validate()?;
    if message.trim().is_empty() {
        // Visitors read the resolution: never an empty "Resolved –".
        let site = state.snapshots.settings().await?;
        message = site.language().t("incident.resolved_message").to_string();
    }
    Ok(data(
        incidents::resolve(&state.db, &audit, id, (message, changes)).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/incidents/{id}",
    tag = "incidents",
    operation_id = "deleteIncident",
    summary = "Delete an incident",
    params(("id" = i64, Path, description = "Incident id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    incidents::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Incident"))
}
