//! The unauthenticated public read API: `/api/public/status/{slug}[/...]` and
//! `GET /api/v1/public/{slug}`. Bodies come from the page's in-memory snapshot
//! (see `snapshot`); every response is CORS-open, cacheable for 30 s, carries a
//! strong ETag (304 on `If-None-Match`), is gzip/brotli-compressed when asked,
//! and is rate limited per client address and route.

use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::openapi::{BadQuery, PublicErrors};
use crate::snapshot::Body;
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Serialize;
use upstate_core::public::*;
use upstate_core::uptime;
use upstate_core::*;
use upstate_store::public::PageData;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::public_reads::{fixed, limited, page, public, serve_page};

pub const DEFAULT_INCIDENT_LIMIT: i64 = 20;
pub const MAX_INCIDENT_LIMIT: i64 = 100;
pub const DEFAULT_UPTIME_DAYS: i64 = 90;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let l = &state.settings.public_limits;
    OpenApiRouter::new()
        .routes(limited(state, routes!(summary), l.summary))
        .routes(limited(state, routes!(components), l.components))
        .routes(limited(state, routes!(incidents), l.incidents))
        .routes(limited(state, routes!(maintenance), l.maintenance))
        .routes(limited(state, routes!(uptime), l.uptime))
        .routes(limited(state, routes!(whole_page), l.page))
}

fn summary_view(d: &PageData) -> StatusSummary {
    let status = overall_status(&d.components, &d.incidents);
    StatusSummary {
        status,
        status_label: status_label(status),
        components: d
            .components
            .iter()
            .map(|c| PublicComponentStatus {
                id: c.id.to_string(),
                name: c.name.clone(),
                status: c.status,
                third_party: upstate_core::public::mark_of(&d.third_party, c.id),
            })
            .collect(),
        active_incidents: d
            .incidents
            .iter()
            .filter(|i| i.status != IncidentStatus::Resolved)
            .map(PublicIncident::from)
            .collect(),
        last_updated: d.updated_at,
    }
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}",
    tag = "public",
    operation_id = "publicSummary",
    summary = "Overall status, components and active incidents",
    params(("slug" = String, Path, description = "The page's slug")),
    responses((status = 200, body = StatusSummary), PublicErrors)
)]
async fn summary(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    fixed(&state, &slug, &headers, "summary", |d| {
        Body::from_value(&summary_view(d))
    })
    .await
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}/components",
    tag = "public",
    operation_id = "publicComponents",
    summary = "Components with their group names, and the groups",
    params(("slug" = String, Path, description = "The page's slug")),
    responses((status = 200, body = ComponentList), PublicErrors)
)]
async fn components(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    fixed(&state, &slug, &headers, "components", |d| {
        Body::from_value(&component_list(&d.components, &d.groups, &d.third_party))
    })
    .await
}

#[derive(Serialize, utoipa::ToSchema)]
struct IncidentsBody {
    incidents: Vec<PublicIncident>,
}

/// The page's incidents, newest first, filtered by status (`unresolved` for
/// any open one) and cut at `limit`.
fn incident_view(d: &PageData, status: Option<&str>, limit: i64) -> Vec<PublicIncident> {
    d.incidents
        .iter()
        .filter(|i| match status {
            None => true,
            Some("unresolved") => i.status != IncidentStatus::Resolved,
            Some(s) => i.status.as_str() == s,
        })
        .take(limit as usize)
        .map(PublicIncident::from)
        .collect()
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}/incidents",
    tag = "public",
    operation_id = "publicIncidents",
    summary = "Incidents with updates and affected components, newest first",
    params(("slug" = String, Path, description = "The page's slug"), ("limit" = Option<i64>, Query, description = "1 to 100, default 20"), ("status" = Option<String>, Query, description = "investigating, identified, monitoring, resolved, or unresolved")),
    responses((status = 200, body = IncidentsBody), PublicErrors, BadQuery)
)]
async fn incidents(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    q: QueryParams,
    headers: Visitor,
) -> Response {
    public(
        async {
            let mut errors = FieldErrors::new();
            let status = q.incident_status(&mut errors);
            let limit = q.limit(
                "limit",
                DEFAULT_INCIDENT_LIMIT,
                MAX_INCIDENT_LIMIT,
                &mut errors,
            );
            errors.into_result()?;
            let snap = page(&state, &slug, &headers).await?;
            let key = format!("incidents?status={}&limit={limit}", status.unwrap_or(""));
            let body = snap.body(&key, |d| {
                Body::from_value(&IncidentsBody {
                    incidents: incident_view(d, status, limit),
                })
            })?;
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

#[derive(Serialize, utoipa::ToSchema)]
struct MaintenanceBody {
    maintenance: Vec<PublicMaintenance>,
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}/maintenance",
    tag = "public",
    operation_id = "publicMaintenance",
    summary = "Upcoming and ongoing maintenance",
    params(("slug" = String, Path, description = "The page's slug")),
    responses((status = 200, body = MaintenanceBody), PublicErrors)
)]
async fn maintenance(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    fixed(&state, &slug, &headers, "maintenance", |d| {
        Body::from_value(&MaintenanceBody {
            maintenance: d.maintenance.iter().map(PublicMaintenance::from).collect(),
        })
    })
    .await
}

#[utoipa::path(
    get,
    path = "/api/public/status/{slug}/uptime",
    tag = "public",
    operation_id = "publicUptime",
    summary = "Uptime per day, per component and for the page",
    params(("slug" = String, Path, description = "The page's slug"), ("days" = Option<i64>, Query, description = "1 to 365, default 90")),
    responses((status = 200, body = uptime::UptimeReport), PublicErrors, BadQuery)
)]
async fn uptime(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    q: QueryParams,
    headers: Visitor,
) -> Response {
    public(
        async {
            let mut errors = FieldErrors::new();
            let days = q.limit(
                "days",
                DEFAULT_UPTIME_DAYS,
                validate::UPTIME_DAYS_MAX,
                &mut errors,
            ) as u32;
            errors.into_result()?;
            let snap = page(&state, &slug, &headers).await?;
            let body = snap
                .uptime_body(&state.db, days, |d, h| {
                    Body::from_value(&uptime::report(
                        &d.page.time_zone,
                        &d.components,
                        h,
                        days,
                        state.db.clock.now(),
                    ))
                })
                .await?;
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct WholePage {
    page: PublicPageInfo,
    status: ComponentStatus,
    status_label: &'static str,
    last_updated: Timestamp,
    components: Vec<PublicComponent>,
    groups: Vec<PublicGroup>,
    active_incidents: Vec<PublicIncident>,
    /// The latest incidents of any state, newest first.
    incidents: Vec<PublicIncident>,
    maintenance: Vec<PublicMaintenance>,
}

#[utoipa::path(
    get,
    path = "/api/v1/public/{slug}",
    tag = "public",
    operation_id = "publicPage",
    summary = "The whole public page in one body",
    params(("slug" = String, Path, description = "The page's slug")),
    responses((status = 200, body = WholePage), PublicErrors)
)]
async fn whole_page(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    fixed(&state, &slug, &headers, "page", |d| {
        let s = summary_view(d);
        let list = component_list(&d.components, &d.groups, &d.third_party);
        Body::from_value(&WholePage {
            page: PublicPageInfo::from(&d.page),
            status: s.status,
            status_label: s.status_label,
            last_updated: s.last_updated,
            components: list.components,
            groups: list.groups,
            active_incidents: s.active_incidents,
            incidents: incident_view(d, None, DEFAULT_INCIDENT_LIMIT),
            maintenance: d.maintenance.iter().map(PublicMaintenance::from).collect(),
        })
    })
    .await
}
