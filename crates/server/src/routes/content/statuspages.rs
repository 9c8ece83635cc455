//! Status pages, for keys (`/api/v1/statuspages`) and people
//! (`/api/statuspages`) alike: reading needs PAGES_READ, changing
//! PAGES_WRITE; deleting a page (and everything on it) is sensitive: a
//! person's fresh step-up or an `admin` key. Bodies: `statuspage_body`.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId};
use crate::openapi::{BodyErrors, Conflict, KeyErrors, NotFound, SessionErrors};
use crate::respond::{Data, Message};
use crate::respond::{MountedAt, created, data, deleted};
use crate::session::SignedIn;
use crate::state::AppState;
use crate::statuspage_body::{Detail, ListItem, detail};
use axum::Extension;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use upstate_core::roles::Permission;
use upstate_core::*;
use upstate_store::pages;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, remove))
        .routes(routes!(set_password, remove_password))
}

/// `PUT /api/statuspages/{id}`, as the seed names it for the application
/// routes: the same change as the PATCH.
pub fn app_only() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(replace))
        .routes(routes!(current, choose_current))
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CurrentInput {
    #[schema(schema_with = upstate_core::schema::id, required)]
    status_page_id: Option<Id>,
}

/// The page a person chose, or else the first page.
async fn current_of(state: &AppState, me: &SignedIn) -> ApiResult<StatusPage> {
    let chosen = upstate_store::users::current_page(&state.db, me.session.user.id).await?;
    if let Some(id) = chosen
        && let Ok(page) = pages::get(&state.db, id).await
    {
        return Ok(page);
    }
    pages::list(&state.db)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| crate::error::ApiError::NotFound("there is no status page yet".into()))
}

#[utoipa::path(get, path = "/statuspages/current", tag = "status pages", operation_id = "currentStatusPage",
    summary = "The page you work on in the interface (your choice, or else the first page)",
    responses((status = 200, body = Data<Detail>), SessionErrors, NotFound),
    security(("session" = [])))]
async fn current(State(state): State<AppState>, me: SignedIn) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    let page = current_of(&state, &me).await?;
    Ok(data(detail(&state, page).await?))
}

#[utoipa::path(post, path = "/statuspages/current", tag = "status pages", operation_id = "chooseCurrentStatusPage",
    summary = "Choose the page you work on in the interface",
    request_body = CurrentInput,
    responses((status = 200, body = Data<Detail>), SessionErrors, BodyErrors),
    security(("session" = [])))]
async fn choose_current(
    State(state): State<AppState>,
    me: SignedIn,
    Body(input): Body<CurrentInput>,
) -> ApiResult<Response> {
    me.require(Permission::PagesRead)?;
    let Some(id) = input.status_page_id else {
        return Err(FieldErrors::single("statusPageId", "is required").into());
    };
    let page = match pages::get(&state.db, id).await {
        Ok(p) => p,
        Err(upstate_store::StoreError::NotFound(_)) => {
            return Err(FieldErrors::single("statusPageId", "names no status page").into());
        }
        Err(e) => return Err(e.into()),
    };
    upstate_store::users::set_current_page(&state.db, me.session.user.id, id).await?;
    Ok(data(detail(&state, page).await?))
}

#[utoipa::path(
    get,
    path = "/statuspages",
    tag = "status pages",
    operation_id = "listStatusPages",
    summary = "List status pages (list view)",
    responses((status = 200, body = Data<Vec<ListItem>>), KeyErrors),
    security(("api_key" = []), ("session" = []))
)]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let all = pages::list(&state.db).await?;
    Ok(data(all.iter().map(ListItem::from).collect::<Vec<_>>()))
}

#[utoipa::path(
    get,
    path = "/statuspages/{id}",
    tag = "status pages",
    operation_id = "getStatusPage",
    summary = "Get a status page (detail view)",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<Detail>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let page = pages::get(&state.db, id).await?;
    Ok(data(detail(&state, page).await?))
}

#[utoipa::path(
    post,
    path = "/statuspages",
    tag = "status pages",
    operation_id = "createStatusPage",
    summary = "Create a status page",
    request_body = NewPageInput,
    responses((status = 201, body = Data<Detail>), KeyErrors, BodyErrors, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Extension(MountedAt(prefix)): Extension<MountedAt>,
    Body(input): Body<NewPageInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let page = pages::create(&state.db, &caller.audit, input.validate()?).await?;
    let location = format!("{prefix}/statuspages/{}", page.id);
    Ok(created(location, detail(&state, page).await?))
}

#[utoipa::path(
    patch,
    path = "/statuspages/{id}",
    tag = "status pages",
    operation_id = "updateStatusPage",
    summary = "Change a status page",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = PagePatchInput,
    responses((status = 200, body = Data<Detail>), KeyErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn update(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<PagePatchInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let page = pages::update(&state.db, &caller.audit, id, input.validate()?).await?;
    Ok(data(detail(&state, page).await?))
}

#[utoipa::path(
    put,
    path = "/statuspages/{id}",
    tag = "status pages",
    operation_id = "replaceStatusPage",
    summary = "Change the named fields of a status page (as PATCH)",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = PagePatchInput,
    responses((status = 200, body = Data<Detail>), SessionErrors, BodyErrors, NotFound, Conflict),
    security(("api_key" = []), ("session" = []))
)]
async fn replace(
    state: State<AppState>,
    caller: Caller,
    id: PathId,
    body: Body<PagePatchInput>,
) -> ApiResult<Response> {
    update(state, caller, id, body).await
}

#[utoipa::path(
    delete,
    path = "/statuspages/{id}",
    tag = "status pages",
    operation_id = "deleteStatusPage",
    summary = "Delete a status page and all it owns",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Message), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    headers: HeaderMap,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    pages::get(&state.db, id).await?;
    caller.require_sensitive(&state, &headers).await?;
    pages::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Status page"))
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
pub(crate) struct PasswordInput {
    /// 8 to 128 characters.
    #[schema(
        required,
        nullable = false,
        min_length = 8,
        max_length = 128,
        pattern = r"^[^\u0000]*$"
    )]
    password: Option<String>,
}

pub(crate) const PAGE_PASSWORD_MIN: usize = 8;
pub(crate) const PAGE_PASSWORD_MAX: usize = 128;

/// Hashes a page password after checking its length.
pub(crate) async fn page_password_hash(input: PasswordInput) -> ApiResult<String> {
    let password = input.password.unwrap_or_default();
    let n = password.chars().count();
    if !(PAGE_PASSWORD_MIN..=PAGE_PASSWORD_MAX).contains(&n) {
        return Err(crate::error::ApiError::validation(
            "password",
            format!("must be {PAGE_PASSWORD_MIN} to {PAGE_PASSWORD_MAX} characters"),
        ));
    }
    crate::password::hash(password).await
}

#[utoipa::path(
    put,
    path = "/statuspages/{id}/password",
    tag = "status pages",
    operation_id = "setStatusPagePassword",
    summary = "Set the password that opens a private page to visitors",
    params(("id" = i64, Path, description = "Status page id")),
    request_body = PasswordInput,
    responses((status = 200, body = Data<Detail>), KeyErrors, BodyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn set_password(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<PasswordInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let hash = page_password_hash(input).await?;
    pages::set_password(&state.db, &caller.audit, id, Some(hash)).await?;
    Ok(data(
        detail(&state, pages::get(&state.db, id).await?).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/statuspages/{id}/password",
    tag = "status pages",
    operation_id = "removeStatusPagePassword",
    summary = "Remove a page's password (a private page is then closed to visitors)",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = Data<Detail>), KeyErrors, NotFound),
    security(("api_key" = []), ("session" = []))
)]
async fn remove_password(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    pages::set_password(&state.db, &caller.audit, id, None).await?;
    Ok(data(
        detail(&state, pages::get(&state.db, id).await?).await?,
    ))
}
