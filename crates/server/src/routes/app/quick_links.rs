//! `/api/quicklinks`: the links a public page shows under its components,
//! managed by signed-in users (reading needs PAGES_READ, changing
//! PAGES_WRITE). `PUT` changes the fields it names.

use crate::error::ApiResult;
use crate::extract::{Body, PathId, QueryParams};
use crate::openapi::SessionErrors;
use crate::openapi::{BadQuery, BodyErrors, NotFound};
use crate::respond::{Data, Message, created, data, deleted};
use crate::session::SignedIn;
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::FieldErrors;
use upstate_core::links::{QuickLink, QuickLinkInput};
use upstate_core::roles::Permission;
use upstate_store::quick_links;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
}

#[utoipa::path(get, path = "/api/quicklinks", tag = "quick links", operation_id = "listQuickLinks",
    summary = "Quick links, in display order (needs PAGES_READ)",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's links")),
    responses((status = 200, body = Data<Vec<QuickLink>>), SessionErrors, BadQuery))]
async fn list(State(state): State<AppState>, me: SignedIn, q: QueryParams) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    let mut e = FieldErrors::new();
    let page = q.id("statusPageId", &mut e);
    e.into_result()?;
    Ok(data(quick_links::list(&state.db, page).await?))
}

#[utoipa::path(post, path = "/api/quicklinks", tag = "quick links", operation_id = "createQuickLink",
    summary = "Add a link to a page (needs PAGES_WRITE); it goes last unless `order` says otherwise",
    request_body = QuickLinkInput, responses((status = 201, body = Data<QuickLink>), SessionErrors, BodyErrors))]
async fn create(
    State(state): State<AppState>,
    me: SignedIn,
    Body(input): Body<QuickLinkInput>,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    let link = quick_links::create(&state.db, &me.audit, input.validate_new()?).await?;
    Ok(created(format!("/api/quicklinks/{}", link.id), link))
}

#[utoipa::path(get, path = "/api/quicklinks/{id}", tag = "quick links", operation_id = "getQuickLink",
    summary = "A quick link (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<QuickLink>), SessionErrors, NotFound))]
async fn show(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    Ok(data(quick_links::get(&state.db, id).await?))
}

#[utoipa::path(put, path = "/api/quicklinks/{id}", tag = "quick links", operation_id = "updateQuickLink",
    summary = "Change a quick link's label, url or order (needs PAGES_WRITE)", params(("id" = i64, Path)),
    request_body = upstate_core::links::QuickLinkChange, responses((status = 200, body = Data<QuickLink>), SessionErrors, BodyErrors, NotFound))]
async fn update(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
    Body(input): Body<QuickLinkInput>,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    Ok(data(
        quick_links::update(&state.db, &me.audit, id, input.validate_change()?).await?,
    ))
}

#[utoipa::path(delete, path = "/api/quicklinks/{id}", tag = "quick links", operation_id = "deleteQuickLink",
    summary = "Remove a quick link (needs PAGES_WRITE)", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound))]
async fn remove(
    State(state): State<AppState>,
    me: SignedIn,
    PathId(id): PathId,
) -> ApiResult<Response> {
    me.require(Permission::PagesWrite)?;
    quick_links::delete(&state.db, &me.audit, id).await?;
    Ok(deleted("Quick link"))
}
