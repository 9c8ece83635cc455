//! `/api/v2`: the alternate listing of the seed. Its write routes and the
//! component list are the v1 handlers under a second prefix (same keys,
//! scopes, bodies and errors); `status` and `metrics` are v2's own reads.
//! How v1 and v2 relate, and the deprecation policy: docs/api.md.

use crate::error::ApiResult;
use crate::extract::QueryParams;
use crate::key_auth;
use crate::openapi::{BadQuery, KeyErrors, NotFound};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use serde::Serialize;
use upstate_core::public::{overall_status, status_label};
use upstate_core::uptime;
use upstate_core::*;
use upstate_store::{components as store_components, incidents as store_incidents, pages, public};
use utoipa_axum::{router::OpenApiRouter, routes};

pub const DEFAULT_METRIC_DAYS: i64 = 30;

/// v2's own reads, and `aliases`: the v1 handlers it serves as well.
pub fn router(state: &AppState, aliases: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .merge(aliases)
        .routes(routes!(metrics))
        .route_layer(from_fn_with_state(state.clone(), key_auth::require_key))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PageStatus {
    status_page_id: Id,
    status: ComponentStatus,
    status_label: &'static str,
    components: Vec<Component>,
}

async fn selected_pages(state: &AppState, q: &QueryParams) -> ApiResult<Vec<StatusPage>> {
    let mut errors = FieldErrors::new();
    let page_id = q.id("statusPageId", &mut errors);
    errors.into_result()?;
    Ok(match page_id {
        Some(id) => vec![pages::get(&state.db, id).await?],
        None => pages::list(&state.db).await?,
    })
}

/// The current status of every component, per page, with the page's overall status.
#[utoipa::path(
    get,
    path = "/status",
    tag = "v2",
    operation_id = "status",
    summary = "Current status of all components, per page",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page")),
    responses((status = 200, body = Data<Vec<PageStatus>>), KeyErrors, NotFound, BadQuery),
    security(("api_key" = []))
)]
async fn status(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut out = vec![];
    for page in selected_pages(&state, &q).await? {
        let comps = store_components::list(&state.db, Some(page.id), None).await?;
        let filter = store_incidents::IncidentFilter {
            page_id: Some(page.id),
            status: Some("unresolved".into()),
            limit: i64::from(i32::MAX),
            ..Default::default()
        };
        let open = store_incidents::list(&state.db, &filter).await?;
        let s = overall_status(&comps, &open);
        out.push(PageStatus {
            status_page_id: page.id,
            status: s,
            status_label: status_label(s),
            components: comps,
        });
    }
    Ok(data(out))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ComponentMetrics {
    component_id: Id,
    status_page_id: Id,
    name: String,
    status: ComponentStatus,
    /// Percentage up over the period, from status history; null without data.
    uptime: Option<f64>,
    days: u32,
    /// Minutes in partial or major outage over the period.
    outage_minutes: i64,
    /// The average response time of its monitor's checks over the period
    /// (null without a monitor or checks).
    latency_ms: Option<f64>,
    /// Its monitor's figures over the period: checks, failures, average,
    /// least, most and percentiles (null without a monitor).
    response_time: Option<upstate_core::measurements::Figures>,
    /// Its monitor's verdict now (null without a monitor).
    monitor_state: Option<MonitorState>,
}

/// Uptime per component over the last `days` days (default 30, 1 to 365).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "v2",
    operation_id = "metrics",
    summary = "Uptime (from status history) and latency per component",
    params(
        ("statusPageId" = Option<i64>, Query, description = "Only this page"),
        ("days" = Option<i64>, Query, description = "Period in days, 1 to 365, default 30"),
    ),
    responses((status = 200, body = Data<Vec<ComponentMetrics>>), KeyErrors, NotFound, BadQuery),
    security(("api_key" = []))
)]
async fn metrics(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let mut errors = FieldErrors::new();
    let days = q.limit(
        "days",
        DEFAULT_METRIC_DAYS,
        validate::UPTIME_DAYS_MAX,
        &mut errors,
    ) as u32;
    errors.into_result()?;
    let now = state.db.clock.now();
    let since = now.plus_millis(-(i64::from(days) + 1) * 86_400_000);
    let mut out = vec![];
    let monitors = upstate_store::monitors::list(&state.db).await?;
    for page in selected_pages(&state, &q).await? {
        let comps = store_components::list(&state.db, Some(page.id), None).await?;
        let history = public::status_history(&state.db, page.id, since).await?;
        let report = uptime::report(&page.time_zone, &comps, &history, days, now);
        for (c, u) in comps.iter().zip(report.components) {
            let monitor = monitors.iter().find(|m| m.component_id == c.id);
            let response_time = match monitor {
                Some(m) => Some(
                    upstate_store::monitor_stats::series(
                        &state.db,
                        m.id,
                        upstate_core::measurements::Resolution::Day,
                        since,
                        now,
                    )
                    .await?
                    .summary,
                ),
                None => None,
            };
            out.push(ComponentMetrics {
                component_id: c.id,
                status_page_id: page.id,
                name: c.name.clone(),
                status: c.status,
                uptime: u.uptime,
                days,
                outage_minutes: u.days.iter().map(|d| d.outage_minutes).sum(),
                latency_ms: response_time
                    .as_ref()
                    .and_then(|f| f.avg_ms)
                    .map(|ms| ms as f64),
                response_time,
                monitor_state: monitor.map(|m| m.state),
            });
        }
    }
    Ok(data(out))
}
