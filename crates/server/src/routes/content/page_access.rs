//! `/statuspages/{id}/access`: the networks a page is held to (its IP
//! allowlist) and whether viewers open it; `/statuspages/{id}/viewers`: who
//! they are (docs/public-pages.md). Reading needs PAGES_READ, changing
//! PAGES_WRITE, like the page's password beside it.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId, PathIds};
use crate::openapi::{BodyErrors, KeyErrors, NotFound};
use crate::respond::{Data, data};
use crate::respond::{Message, created, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use upstate_core::access::{PageAccess, PageAccessInput, Viewer, ViewerInput};
use upstate_core::roles::Permission;
use upstate_store::{access, viewers};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show, change))
        .routes(routes!(list_viewers, add_viewer))
        .routes(routes!(remove_viewer))
        .routes(routes!(reset_viewer))
}

#[utoipa::path(get, path = "/statuspages/{id}/access", tag = "status pages",
    operation_id = "getStatusPageAccess",
    summary = "Who may open a page beyond its visibility: its networks (empty: every network), and whether viewers open it",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<PageAccess>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(access::get(&state.db, id).await?))
}

#[utoipa::path(put, path = "/statuspages/{id}/access", tag = "status pages",
    operation_id = "setStatusPageAccess",
    summary = "Hold a page to some networks, or open a private page to viewers; fields left out stay as they are",
    description = "`allowedNetworks`: only clients whose address is in one may open the page, in every format. \
        Addresses are the socket peer's, or what a configured trusted proxy (`trusted_proxies`) forwarded in X-Forwarded-For. \
        A page held to some networks stays out of the static copy and of /api/metrics, and its bodies out of shared caches. \
        `allowedNetworks: []` opens it to every network again. \
        `viewers`: a private page opens to its viewers, who sign in with a link mailed to them (POST /api/viewer-sign-in); \
        `viewerDomains`: email domains whose people may sign in uninvited.",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = PageAccessInput,
    responses((status = 200, body = Data<PageAccess>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<PageAccessInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    Ok(data(
        access::set(&state.db, &caller.audit, id, |now| input.apply(now)).await?,
    ))
}

#[utoipa::path(get, path = "/statuspages/{id}/viewers", tag = "status pages",
    operation_id = "listStatusPageViewers",
    summary = "A page's viewers: invited, or come in by an allowed domain",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<Vec<Viewer>>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn list_viewers(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(viewers::list(&state.db, id).await?))
}

#[utoipa::path(post, path = "/statuspages/{id}/viewers", tag = "status pages",
    operation_id = "addStatusPageViewer",
    summary = "Invite a viewer by email: they may then sign in with a mailed link",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = ViewerInput,
    responses((status = 201, body = Data<Viewer>), KeyErrors, BodyErrors, NotFound,
        (status = 409, description = "Already a viewer of the page", body = crate::openapi::Problem, content_type = "application/problem+json")),
    security(("api_key" = []), ("session" = [])))]
async fn add_viewer(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ViewerInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let email = input.validate()?;
    let secret = crate::page_gate::new_secret();
    let v = viewers::invite(&state.db, &caller.audit, id, &email, &secret).await?;
    Ok(created(
        format!("/api/v1/statuspages/{id}/viewers/{}", v.id),
        v,
    ))
}

#[utoipa::path(delete, path = "/statuspages/{id}/viewers/{viewerId}", tag = "status pages",
    operation_id = "removeStatusPageViewer",
    summary = "Remove a viewer: their sign-ins end at once (an allowed domain lets them sign in again)",
    params(("id" = i64, Path, description = "Status page id"), ("viewerId" = i64, Path, description = "Viewer id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn remove_viewer(
    State(state): State<AppState>,
    caller: Caller,
    PathIds(page, viewer): PathIds,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    viewers::remove(&state.db, &caller.audit, page, viewer).await?;
    Ok(deleted("Viewer"))
}

#[utoipa::path(post, path = "/statuspages/{id}/viewers/{viewerId}/reset", tag = "status pages",
    operation_id = "resetStatusPageViewer",
    summary = "Revoke a viewer's sessions and feed links: they sign in again for new ones",
    params(("id" = i64, Path, description = "Status page id"), ("viewerId" = i64, Path, description = "Viewer id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn reset_viewer(
    State(state): State<AppState>,
    caller: Caller,
    PathIds(page, viewer): PathIds,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let secret = crate::page_gate::new_secret();
    viewers::reset(&state.db, &caller.audit, page, viewer, &secret).await?;
    Ok(axum::Json(Message {
        message: "The viewer's sessions and links were revoked".into(),
    })
    .into_response())
}
