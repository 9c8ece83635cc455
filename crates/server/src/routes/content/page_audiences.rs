//! `/statuspages/{id}/audiences`: a page's audience groups, the components
//! only some of its viewers see (docs/public-pages.md, "Audiences").
//! Reading needs PAGES_READ, changing PAGES_WRITE, like the viewers beside it.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId, PathIds};
use crate::openapi::{BodyErrors, KeyErrors, NotFound};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::audience::{Audience, AudienceInput, NewAudienceInput};
use upstate_core::roles::Permission;
use upstate_store::audiences;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, remove))
}

#[utoipa::path(get, path = "/statuspages/{id}/audiences", tag = "status pages",
    operation_id = "listStatusPageAudiences",
    summary = "A page's audience groups: components only the viewers they name see",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<Vec<Audience>>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(audiences::list(&state.db, id).await?))
}

#[utoipa::path(post, path = "/statuspages/{id}/audiences", tag = "status pages",
    operation_id = "createStatusPageAudience",
    summary = "Make an audience group: its components are shown only to the viewers it names",
    description = "Components in no group are shown to everyone who opens the page. A component in a group is shown \
        only to viewers whose email is in `emails`, or whose domain is in `emailDomains`, of one of its groups: in the HTML, \
        the JSON, feeds, calendar, widget, live events and the messages sent to their subscriptions. Incidents and \
        maintenance about hidden components only are left out; the others name only the components the reader sees. \
        Visitors who are not viewers (a password holder, anyone on a public page) see the shared components only.",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = NewAudienceInput,
    responses((status = 201, body = Data<Audience>), KeyErrors, BodyErrors, NotFound,
        (status = 409, description = "A group of this name exists, or the page has 50", body = crate::openapi::Problem, content_type = "application/problem+json")),
    security(("api_key" = []), ("session" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<NewAudienceInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let a = audiences::create(&state.db, &caller.audit, id, input).await?;
    Ok(created(
        format!("/api/v1/statuspages/{id}/audiences/{}", a.id),
        a,
    ))
}

#[utoipa::path(put, path = "/statuspages/{id}/audiences/{audienceId}", tag = "status pages",
    operation_id = "updateStatusPageAudience",
    summary = "Change an audience group; fields left out stay as they are, lists given replace the old ones",
    params(("id" = i64, Path, description = "Status page id"), ("audienceId" = i64, Path, description = "Audience group id")),
    request_body = AudienceInput,
    responses((status = 200, body = Data<Audience>), KeyErrors, BodyErrors, NotFound,
        (status = 409, description = "Another group has this name", body = crate::openapi::Problem, content_type = "application/problem+json")),
    security(("api_key" = []), ("session" = [])))]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    PathIds(page, audience): PathIds,
    Body(input): Body<AudienceInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    Ok(data(
        audiences::update(&state.db, &caller.audit, page, audience, input).await?,
    ))
}

#[utoipa::path(delete, path = "/statuspages/{id}/audiences/{audienceId}", tag = "status pages",
    operation_id = "deleteStatusPageAudience",
    summary = "Remove an audience group: its components are shown to everyone again, unless another group holds them",
    params(("id" = i64, Path, description = "Status page id"), ("audienceId" = i64, Path, description = "Audience group id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathIds(page, audience): PathIds,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    audiences::delete(&state.db, &caller.audit, page, audience).await?;
    Ok(deleted("Audience group"))
}
