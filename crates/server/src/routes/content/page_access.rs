//! `/statuspages/{id}/access`: the networks a page is held to (its IP
//! allowlist; docs/private-pages.md). Reading needs PAGES_READ, changing
//! PAGES_WRITE, like the page's password beside it.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::openapi::{BodyErrors, KeyErrors, NotFound};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::access::{PageAccess, PageAccessInput};
use upstate_core::roles::Permission;
use upstate_store::access;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show, change))
}

#[utoipa::path(get, path = "/statuspages/{id}/access", tag = "status pages",
    operation_id = "getStatusPageAccess",
    summary = "The networks a page is held to (empty: every network)",
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
    summary = "Hold a page to some networks: only clients whose address is in one may open it, in every format",
    description = "Addresses are the socket peer's, or what a configured trusted proxy (`trusted_proxies`) forwarded in X-Forwarded-For. \
        A page held to some networks stays out of the static copy and of /api/metrics, and its bodies out of shared caches. \
        `allowedNetworks: []` opens it to every network again.",
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
    let wanted = input.validate()?;
    Ok(data(
        access::set(&state.db, &caller.audit, id, &wanted).await?,
    ))
}
