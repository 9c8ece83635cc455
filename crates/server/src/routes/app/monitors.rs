//! `/api/monitors`: a component's own check (HTTP, TCP, heartbeat), its
//! results, and "test now"; `/api/heartbeat/{token}`: the URL a watched
//! service calls. See docs/monitors.md.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, Conflict, NotFound, SessionErrors};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use upstate_core::FieldErrors;
use upstate_core::monitors::{CheckResult, Monitor, MonitorConfig, MonitorInput};
use upstate_core::roles::Permission;
use upstate_store::monitors;
use utoipa_axum::{router::OpenApiRouter, routes};

/// Heartbeats per minute and client address: one host may ping many
/// monitors, but nobody needs ten a second, and a guesser gets no more.
const BEATS_PER_MINUTE: u32 = 600;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(one, change, remove))
        .routes(routes!(checks))
        .routes(routes!(test_now))
        .routes(crate::public_reads::limited(
            state,
            routes!(beat_get, beat_post),
            BEATS_PER_MINUTE,
        ))
}

/// A monitor as it leaves: its heartbeat URL in full, header values hinted.
fn shown(state: &AppState, mut m: Monitor) -> Monitor {
    m.config = m.config.redacted();
    m.under(&state.settings.public_url)
}

/// One page of the monitors.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct MonitorPage {
    data: Vec<Monitor>,
    /// Pass as `cursor` for the next page; null on the last page.
    next_cursor: Option<String>,
}

/// Monitors per page unless `limit` says otherwise, and the most it may.
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 500;

#[utoipa::path(get, path = "/api/monitors", tag = "monitors", operation_id = "listMonitors",
    summary = "The monitors with their latest result, by id, a page at a time (needs PAGES_READ)",
    params(
        ("cursor" = Option<String>, Query, description = "nextCursor of the previous page"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 100"),
    ),
    responses((status = 200, body = MonitorPage), SessionErrors, BadQuery),
    security(("session" = []), ("api_key" = [])))]
async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut e = FieldErrors::new();
    // `?cursor=` with nothing after it is no cursor the server gave.
    if q.has("cursor") && q.get("cursor").is_none() {
        e.push("cursor", "must be a cursor returned by an earlier page");
    }
    let after = q.parsed::<i64>("cursor", "a cursor returned by an earlier page", &mut e);
    let limit = q.limit("limit", DEFAULT_LIMIT, MAX_LIMIT, &mut e);
    e.into_result()?;
    let page = monitors::page(&state.db, after, limit).await?;
    let next_cursor = (page.len() as i64 == limit)
        .then(|| page.last().map(|m| m.id.to_string()))
        .flatten();
    let page = MonitorPage {
        data: page.into_iter().map(|m| shown(&state, m)).collect(),
        next_cursor,
    };
    Ok(crate::respond::nosniff(axum::Json(page).into_response()))
}

#[utoipa::path(post, path = "/api/monitors", tag = "monitors", operation_id = "createMonitor",
    summary = "Give a component a monitor (needs PAGES_WRITE); the first check runs at once",
    description = "One monitor per component. Targets on private or loopback addresses are refused when checked \
        unless the install allows them (`monitor_allow`). Audited.",
    request_body = MonitorInput,
    responses((status = 201, body = Data<Monitor>), SessionErrors, BodyErrors, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<MonitorInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let mut e = FieldErrors::new();
    if input.component_id.is_none() {
        e.push(
            "componentId",
            "is required: the component this monitor watches",
        );
    }
    if input.manual.is_some() {
        e.push(
            "manual",
            "is for a monitor that exists: hand a component back with PUT",
        );
    }
    let config = match input.apply(&MonitorConfig::default()) {
        Ok(c) => Some(c),
        Err(more) => {
            e.0.extend(more.0);
            None
        }
    };
    e.into_result()?;
    let (Some(component), Some(config)) = (input.component_id, config) else {
        return Err(ApiError::validation("componentId", "is required"));
    };
    let m = monitors::create(&state.db, &caller.audit, component, &config).await?;
    state.checker.wake.notify_one();
    Ok(created(format!("/api/monitors/{}", m.id), shown(&state, m)))
}

#[utoipa::path(get, path = "/api/monitors/{id}", tag = "monitors", operation_id = "getMonitor",
    summary = "One monitor (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Monitor>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn one(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(shown(&state, monitors::get(&state.db, id).await?)))
}

#[utoipa::path(put, path = "/api/monitors/{id}", tag = "monitors", operation_id = "updateMonitor",
    summary = "Change a monitor (any subset; needs PAGES_WRITE); `manual: false` hands the component back to it",
    description = "A changed setting checks again at once with fresh counters. Audited.",
    params(("id" = i64, Path)), request_body = MonitorInput,
    responses((status = 200, body = Data<Monitor>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<MonitorInput>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let current = monitors::get(&state.db, id).await?;
    if input
        .component_id
        .is_some_and(|c| c != current.component_id)
    {
        return Err(ApiError::validation(
            "componentId",
            "a monitor stays with its component: delete it and create one on the other",
        ));
    }
    let config = input.apply(&current.config)?;
    let m = monitors::update(&state.db, &caller.audit, id, &config, input.manual).await?;
    state.checker.wake.notify_one();
    Ok(data(shown(&state, m)))
}

#[utoipa::path(delete, path = "/api/monitors/{id}", tag = "monitors", operation_id = "deleteMonitor",
    summary = "Remove a monitor (needs PAGES_WRITE); the component keeps its status and history. Audited.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    monitors::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Monitor"))
}

#[utoipa::path(get, path = "/api/monitors/{id}/checks", tag = "monitors", operation_id = "listMonitorChecks",
    summary = "A monitor's latest 100 checks, newest first (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Vec<CheckResult>>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn checks(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    monitors::get(&state.db, id).await?;
    Ok(data(monitors::checks(&state.db, id, 100).await?))
}

#[utoipa::path(post, path = "/api/monitors/{id}/test", tag = "monitors", operation_id = "testMonitor",
    summary = "Check now and say what came back (needs PAGES_WRITE); the result is not recorded and moves nothing",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<CheckResult>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn test_now(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let m = monitors::get(&state.db, id).await?;
    Ok(data(
        state.checker.check(&m.config, state.db.clock.now()).await,
    ))
}

/// What a heartbeat call is told.
#[derive(Serialize, utoipa::ToSchema)]
struct Beat {
    message: String,
    /// The monitor's verdict after this beat.
    state: upstate_core::MonitorState,
}

async fn beat(state: &AppState, token: &str) -> ApiResult<Response> {
    let site = state.snapshots.settings().await?;
    let words = upstate_core::monitors::IncidentWords::in_lang(site.language());
    let r = monitors::heartbeat(&state.db, token, state.db.clock.now(), &words).await?;
    Ok(data(Beat {
        message: "Heartbeat received.".into(),
        state: r.verdict.state,
    }))
}

#[utoipa::path(get, path = "/api/heartbeat/{token}", tag = "monitors", operation_id = "heartbeatGet",
    summary = "A watched service says it is alive (a heartbeat monitor's URL; no sign-in, the token is the secret)",
    params(("token" = String, Path)),
    responses((status = 200, body = Data<Beat>), NotFound),
    security(()))]
async fn beat_get(State(state): State<AppState>, Path(token): Path<String>) -> ApiResult<Response> {
    beat(&state, &token).await
}

#[utoipa::path(post, path = "/api/heartbeat/{token}", tag = "monitors", operation_id = "heartbeatPost",
    summary = "The same as GET, for services that can only POST (any body is ignored)",
    params(("token" = String, Path)),
    responses((status = 200, body = Data<Beat>), NotFound),
    security(()))]
async fn beat_post(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<Response> {
    beat(&state, &token).await
}
