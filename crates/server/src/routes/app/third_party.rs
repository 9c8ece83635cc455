//! `/api/third-party`: components that mirror a vendor's published status
//! (a Statuspage-compatible summary.json or an RSS/Atom feed), and "poll
//! now". See docs/third-party.md.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::openapi::{BodyErrors, Conflict, NotFound, SessionErrors};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::third_party::{Follow, FollowChange, FollowConfig, FollowInput, NewFollow};
use upstate_store::third_party;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(one, change, remove))
        .routes(routes!(poll_now))
}

#[utoipa::path(get, path = "/api/third-party", tag = "third-party", operation_id = "listThirdParty",
    summary = "Every third-party component's follow, with what its vendor last said (needs PAGES_READ)",
    responses((status = 200, body = Data<Vec<Follow>>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(third_party::list(&state.db).await?))
}

#[utoipa::path(post, path = "/api/third-party", tag = "third-party", operation_id = "createThirdParty",
    summary = "Make a component follow a vendor's status (needs PAGES_WRITE); the first poll runs within seconds",
    description = "One follow per component, and none on a component a monitor checks. The vendor is reached \
        through the outgoing rule of webhooks (`outgoing_allow`). Audited.",
    request_body = NewFollow,
    responses((status = 201, body = Data<Follow>), SessionErrors, BodyErrors, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<NewFollow>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let component = input.component_id;
    let config = FollowInput::from(input).apply(&FollowConfig::default())?;
    let f = third_party::create(&state.db, &caller.audit, component, &config).await?;
    Ok(created(format!("/api/third-party/{}", f.id), f))
}

#[utoipa::path(get, path = "/api/third-party/{id}", tag = "third-party", operation_id = "getThirdParty",
    summary = "One follow (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Follow>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn one(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(third_party::get(&state.db, id).await?))
}

#[utoipa::path(patch, path = "/api/third-party/{id}", tag = "third-party", operation_id = "updateThirdParty",
    summary = "Change a follow (any subset; needs PAGES_WRITE)",
    description = "A new address, kind or vendor component is read afresh at once. Audited.",
    params(("id" = i64, Path)), request_body = FollowChange,
    responses((status = 200, body = Data<Follow>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<FollowChange>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let current = third_party::get(&state.db, id).await?;
    let config = FollowInput::from(input).apply(&current.config)?;
    Ok(data(
        third_party::update(&state.db, &caller.audit, id, &config).await?,
    ))
}

#[utoipa::path(delete, path = "/api/third-party/{id}", tag = "third-party", operation_id = "deleteThirdParty",
    summary = "Stop following (needs PAGES_WRITE); the component keeps its status and is the team's to set. Audited.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    third_party::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Third-party component"))
}

#[utoipa::path(post, path = "/api/third-party/{id}/poll", tag = "third-party", operation_id = "pollThirdParty",
    summary = "Read the vendor now and record it like a scheduled poll (needs PAGES_WRITE)",
    description = "Answers with the follow as the poll left it: `lastError` says why nothing was read.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<Follow>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn poll_now(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    upstate_jobs::third_party::poll_now(&state.db, state.sender.outgoing(), id).await?;
    Ok(data(third_party::get(&state.db, id).await?))
}
