//! `/statuspages/{id}/viewer-provider`: a private page's own identity
//! provider for its viewers (a customer's tenant), in place of the team's
//! (docs/public-pages.md, "Viewers"). Reading needs PAGES_READ, changing
//! PAGES_WRITE, like the page's access beside it.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId};
use crate::openapi::{BodyErrors, KeyErrors, NotFound};
use crate::respond::{Data, Message, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::viewer_provider::{ViewerProviderInput, ViewerProviderView};
use upstate_store::viewer_providers;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show, change, remove))
}

#[utoipa::path(get, path = "/statuspages/{id}/viewer-provider", tag = "status pages",
    operation_id = "getStatusPageViewerProvider",
    summary = "A private page's own identity provider for its viewers (the secret never shown)",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<ViewerProviderView>), KeyErrors,
        (status = 404, description = "No such page, or it has no provider of its own (its viewers use the team's)", body = crate::openapi::Problem, content_type = "application/problem+json")),
    security(("api_key" = []), ("session" = [])))]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let own = viewer_providers::get(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound("the page has no identity provider of its own".into()))?;
    Ok(data(own.view(crate::sso::redirect_uri(&state))))
}

#[utoipa::path(put, path = "/statuspages/{id}/viewer-provider", tag = "status pages",
    operation_id = "setStatusPageViewerProvider",
    summary = "Give a private page's viewers an identity provider of its own (a customer's tenant) in place of the team's",
    description = "The whole setting. Leave `clientSecret` out to keep the saved one of the same client id. \
        Viewers sign in through it when the page's access has `viewers` and `viewerSso`. Register `redirectUri` at the provider. \
        With `admitAll`, everyone the provider signs in with a verified email reads the page; otherwise, only invited emails and `viewerDomains`.",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = ViewerProviderInput,
    responses((status = 200, body = Data<ViewerProviderView>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ViewerProviderInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let saved = viewer_providers::set(&state.db, &caller.audit, id, |now| input.apply(now)).await?;
    Ok(data(saved.view(crate::sso::redirect_uri(&state))))
}

#[utoipa::path(delete, path = "/statuspages/{id}/viewer-provider", tag = "status pages",
    operation_id = "removeStatusPageViewerProvider",
    summary = "Remove a page's own identity provider: its viewers sign in through the team's again",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    viewer_providers::remove(&state.db, &caller.audit, id).await?;
    Ok(deleted("Viewer provider"))
}
