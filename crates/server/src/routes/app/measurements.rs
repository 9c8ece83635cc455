//! A component's measurements: its monitor's response times as a series
//! (`/api/components/{id}/response-times`) and the reset that starts its
//! figures over (`/api/components/{id}/reset-stats`). See docs/monitors.md,
//! "Measurements".

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{PathId, QueryParams};
use crate::openapi::{BadQuery, NotFound, SessionErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use upstate_core::measurements::{Figures, Point, Resolution};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id, Timestamp};
use upstate_store::{monitor_stats, monitors};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(response_times))
        .routes(routes!(reset_stats))
}

/// A component's response times over a window.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ResponseTimes {
    component_id: Id,
    /// Null when the component has no monitor (and so no points).
    monitor_id: Option<Id>,
    resolution: Resolution,
    #[schema(value_type = String)]
    from: Timestamp,
    #[schema(value_type = String)]
    to: Timestamp,
    /// The oldest instant this resolution still holds.
    #[schema(value_type = String)]
    kept_since: Timestamp,
    /// The whole window at once.
    summary: Figures,
    /// Oldest first: each check (raw) or each minute, hour or day with checks.
    points: Vec<Point>,
}

#[utoipa::path(get, path = "/api/components/{id}/response-times", tag = "components",
    operation_id = "componentResponseTimes",
    summary = "A component's response times as a series with percentiles (needs PAGES_READ)",
    description = "`resolution`: raw (every check, kept 1 day), minute (kept 2 days), hour (kept 90 days), \
        day (kept 2 years); default hour. `from`/`to` (RFC 3339) default to the last hour, day, 7 days or \
        90 days by resolution. Percentiles of summed spans are estimated from a latency histogram.",
    params(("id" = i64, Path), ("resolution" = Option<String>, Query), ("from" = Option<String>, Query),
        ("to" = Option<String>, Query)),
    responses((status = 200, body = Data<ResponseTimes>), SessionErrors, BadQuery, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn response_times(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut e = FieldErrors::new();
    let names = ["hour", "raw", "minute", "day"];
    let resolution =
        Resolution::parse(q.one_of("resolution", &names, &mut e)).unwrap_or(Resolution::Hour);
    let at = |name: &str, e: &mut FieldErrors| {
        q.get(name).and_then(|v| e.check(name, Timestamp::parse(v)))
    };
    let now = state.db.clock.now();
    let to = at("to", &mut e).unwrap_or(now);
    let from = at("from", &mut e).unwrap_or(to.plus_millis(-resolution.default_window_ms()));
    if from >= to {
        e.push("from", "must be before to");
    }
    e.into_result()?;
    // 404 for an unknown component before anything else.
    upstate_store::components::get(&state.db, id).await?;
    let monitor = monitors::of_component(&state.db, id).await?;
    let (monitor_id, series) = match &monitor {
        Some(m) => (
            Some(m.id),
            Some(monitor_stats::series(&state.db, m.id, resolution, from, to).await?),
        ),
        None => (None, None),
    };
    let (summary, points) = match series {
        Some(s) => (s.summary, s.points),
        None => (
            upstate_core::measurements::Tally::default().figures(),
            Vec::new(),
        ),
    };
    Ok(data(ResponseTimes {
        component_id: id,
        monitor_id,
        resolution,
        from,
        to,
        kept_since: now.plus_millis(-resolution.kept_ms()),
        summary,
        points,
    }))
}

/// What a reset deleted.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ResetDone {
    component_id: Id,
    /// Raw checks deleted.
    checks: u64,
    /// Minute, hour and day sums deleted.
    stats: u64,
    /// Status history entries replaced by one: the current status, from now.
    history: u64,
}

#[utoipa::path(post, path = "/api/components/{id}/reset-stats", tag = "components",
    operation_id = "resetComponentStats",
    summary = "Start a component's figures over (needs PAGES_WRITE)",
    description = "Deletes its monitor's checks and response-time sums and its status history; uptime counts \
        from now, in the current status. The monitor keeps running. Audited (`component.reset_stats`).",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<ResetDone>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn reset_stats(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesWrite)?;
    let r = monitor_stats::reset(&state.db, &caller.audit, id, state.db.clock.now()).await?;
    Ok(data(ResetDone {
        component_id: id,
        checks: r.checks,
        stats: r.stats,
        history: r.history,
    }))
}
