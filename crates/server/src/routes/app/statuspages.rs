//! `/api/statuspages`: status pages for signed-in users of the admin
//! interface, with the same bodies as `/api/v1/statuspages`. Reading needs
//! PAGES_READ, changing PAGES_WRITE; deleting a page (and everything on it)
//! also needs a fresh step-up. `PUT` changes only the fields it names, like
//! the v1 `PATCH`.

use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::openapi::SessionErrors;
use crate::openapi::{BodyErrors, Conflict, NotFound};
use crate::respond::{Data, Message, created, data, deleted};
use crate::session::SignedIn;
use crate::state::AppState;
use crate::statuspage_body::{Detail, ListItem, detail};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::{NewPageInput, PagePatchInput};
use upstate_store::pages;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
}

#[utoipa::path(get, path = "/api/statuspages", tag = "status pages (admin)", operation_id = "appListStatusPages",
    summary = "Status pages (needs PAGES_READ)", responses((status = 200, body = Data<Vec<ListItem>>), SessionErrors))]
async fn list(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    let all = pages::list(&state.db).await?;
    Ok(data(all.iter().map(ListItem::from).collect::<Vec<_>>()))
}

#[utoipa::path(post, path = "/api/statuspages", tag = "status pages (admin)", operation_id = "appCreateStatusPage",
    summary = "Create a status page (needs PAGES_WRITE)", request_body = NewPageInput,
    responses((status = 201, body = Data<Detail>), SessionErrors, BodyErrors, Conflict))]
async fn create(
    State(state): State<AppState>,
    me: SignedIn,
    Body(input): Body<NewPageInput>,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    let page = pages::create(&state.db, &me.audit, input.validate()?).await?;
    let location = format!("/api/statuspages/{}", page.id);
    Ok(created(location, detail(&state, page).await?))
}

#[utoipa::path(get, path = "/api/statuspages/{id}", tag = "status pages (admin)", operation_id = "appGetStatusPage",
    summary = "A status page (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Detail>), SessionErrors, NotFound))]
async fn show(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    Ok(data(
        detail(&state, pages::get(&state.db, id).await?).await?,
    ))
}

#[utoipa::path(put, path = "/api/statuspages/{id}", tag = "status pages (admin)", operation_id = "appUpdateStatusPage",
    summary = "Change the named fields of a status page (needs PAGES_WRITE)", params(("id" = i64, Path)),
    request_body = PagePatchInput, responses((status = 200, body = Data<Detail>), SessionErrors, BodyErrors, NotFound, Conflict))]
async fn update(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    Body(input): Body<PagePatchInput>,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    let page = pages::update(&state.db, &me.audit, id, input.validate()?).await?;
    Ok(data(detail(&state, page).await?))
}

#[utoipa::path(delete, path = "/api/statuspages/{id}", tag = "status pages (admin)", operation_id = "appDeleteStatusPage",
    summary = "Delete a status page and all it owns (needs PAGES_WRITE and a fresh step-up)", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound))]
async fn remove(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    pages::get(&state.db, id).await?;
    me.require_step_up(&state, &headers).await?;
    pages::delete(&state.db, &me.audit, id).await?;
    Ok(deleted("Status page"))
}
