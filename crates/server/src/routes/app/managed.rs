//! `/api/managed`: what `upstate apply` manages (docs/setup-as-code.md).
//! The command reads the list to know what it may delete and writes it
//! whole when a run is done; screens read it to mark managed objects.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::Body;
use crate::openapi::{BodyErrors, SessionErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::setup::{ManagedList, ManagedObject};
use upstate_store::managed;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, replace))
}

#[utoipa::path(get, path = "/api/managed", tag = "setup", operation_id = "listManaged",
    summary = "The objects `upstate apply` manages (needs PAGES_READ)",
    responses((status = 200, body = Data<Vec<ManagedObject>>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(managed::list(&state.db).await?))
}

#[utoipa::path(put, path = "/api/managed", tag = "setup", operation_id = "replaceManaged",
    summary = "Replace the list of managed objects (needs SETTINGS_WRITE); `upstate apply` writes it after a run",
    description = "Objects are named by kind and id; the list says nothing about the objects themselves, and \
        ids that name nothing are kept as given (the next apply forgets them). Audited.",
    request_body = ManagedList,
    responses((status = 200, body = Data<Vec<ManagedObject>>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<ManagedList>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    input.check()?;
    managed::replace(&state.db, &caller.audit, &input.objects).await?;
    Ok(data(managed::list(&state.db).await?))
}
