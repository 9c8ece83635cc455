//! Atlassian Statuspage v2 compatibility: `/s/{slug}/api/v2/*.json`, the
//! same page in Statuspage's shapes, so existing tools work unchanged.
//! Served from the page's snapshot like the rest of the public API (same
//! caching, ETags, compression and CORS); mapping in docs/atlassian.md.

use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::openapi::PublicErrors;
use crate::public_reads::host_slug;
use crate::public_reads::{fixed, public};
use crate::snapshot::Body;
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;
use upstate_core::atlassian::{self as a, AComponent, AIncident, Page, Status};
use upstate_core::{IncidentStatus, MaintenanceStatus};
use upstate_store::public::PageData;
use utoipa_axum::{router::OpenApiRouter, routes};

/// How many incidents `incidents.json` lists (newest first).
pub const INCIDENTS_LISTED: usize = 50;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(summary))
        .routes(routes!(status))
        .routes(routes!(components))
        .routes(routes!(incidents))
        .routes(routes!(unresolved))
        .routes(routes!(maintenances))
        .routes(routes!(upcoming))
        .routes(routes!(active))
        .routes(routes!(domain_summary))
        .routes(routes!(domain_status))
        .routes(routes!(domain_components))
        .routes(routes!(domain_incidents))
        .routes(routes!(domain_unresolved))
        .routes(routes!(domain_maintenances))
        .routes(routes!(domain_upcoming))
        .routes(routes!(domain_active))
}

/// The slug of the page asked for: `?page={slug}`, else the page this host
/// serves (custom domain, else default page). Atlassian's embeddable widget
/// replaces the path of the URL it is given with `/api/v2/summary.json` but
/// keeps its query, so `src="https://host/s/acme?page=acme"` reaches the
/// right page.
async fn host_page(
    state: &AppState,
    headers: &HeaderMap,
    q: &QueryParams,
) -> Result<String, Response> {
    if let Some(slug) = q.get("page") {
        return Ok(slug.to_string());
    }
    match host_slug(state, headers).await {
        Ok(Some(slug)) => Ok(slug),
        Ok(None) => Err(public(Err(ApiError::NotFound(
            "no status page is served at this host; use /s/{slug}/api/v2/...".into(),
        )))),
        Err(e) => Err(public(Err(e))),
    }
}

#[derive(Serialize)]
struct Envelope {
    page: Page,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    components: Option<Vec<AComponent>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    incidents: Option<Vec<AIncident>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduled_maintenances: Option<Vec<AIncident>>,
}

fn envelope(d: &PageData, server: &str) -> Envelope {
    Envelope {
        page: a::page(&d.page, d.updated_at, server),
        status: None,
        components: None,
        incidents: None,
        scheduled_maintenances: None,
    }
}

fn incidents_of(d: &PageData, server: &str, open_only: bool) -> Vec<AIncident> {
    let base = a::page_url(&d.page, server);
    d.incidents
        .iter()
        .filter(|i| !open_only || i.status != IncidentStatus::Resolved)
        .take(INCIDENTS_LISTED)
        .map(|i| a::incident(i, &d.components, &base))
        .collect()
}

fn maintenances_of(d: &PageData, server: &str, only: Option<MaintenanceStatus>) -> Vec<AIncident> {
    let base = a::page_url(&d.page, server);
    d.maintenance
        .iter()
        .filter(|m| only.is_none_or(|s| m.status == s))
        .map(|m| a::maintenance(m, &d.components, &base))
        .collect()
}

/// Statuspage's `scheduled-maintenances.json`: the 50 most recent windows,
/// completed ones included (upcoming and ongoing first, then the latest ended).
fn recent_maintenances(d: &PageData, server: &str) -> Vec<AIncident> {
    let base = a::page_url(&d.page, server);
    let ended = d
        .past_maintenance
        .iter()
        .filter(|m| m.status == MaintenanceStatus::Completed);
    d.maintenance
        .iter()
        .chain(ended)
        .take(INCIDENTS_LISTED)
        .map(|m| a::maintenance(m, &d.components, &base))
        .collect()
}

macro_rules! compat_route {
    ($name:ident, $domain_name:ident, $path:literal, $domain_path:literal, $op:literal, $summary:literal, $key:literal, |$d:ident, $s:ident| $make:expr) => {
        #[utoipa::path(
            get,
            path = $path,
            tag = "atlassian compatibility",
            operation_id = $op,
            summary = $summary,
            params(("slug" = String, Path, description = "The page's slug")),
            responses((status = 200, description = "Statuspage v2 JSON", content_type = "application/json"), PublicErrors)
        )]
        async fn $name(State(state): State<AppState>, Path(slug): Path<String>, headers: Visitor) -> Response {
            let $s = state.settings.public_url.as_str();
            fixed(&state, &slug, &headers, $key, |$d| Body::from_value(&$make)).await
        }

        #[utoipa::path(
            get,
            path = $domain_path,
            tag = "atlassian compatibility",
            operation_id = concat!($op, "OnDomain"),
            summary = concat!($summary, " (the page named by ?page=, else this host's: custom domain or default page)"),
            params(("page" = Option<String>, Query, description = "A page's slug (default: the page this host serves)")),
            responses((status = 200, description = "Statuspage v2 JSON", content_type = "application/json"), PublicErrors)
        )]
        async fn $domain_name(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
            match host_page(&state, &headers, &q).await {
                Ok(slug) => {
                    let $s = state.settings.public_url.as_str();
                    fixed(&state, &slug, &headers, $key, |$d| Body::from_value(&$make)).await
                }
                Err(res) => res,
            }
        }
    };
}

compat_route!(
    summary,
    domain_summary,
    "/s/{slug}/api/v2/summary.json",
    "/api/v2/summary.json",
    "atlassianSummary",
    "Page, status, components, unresolved incidents, upcoming and active maintenance",
    "atl:summary",
    |d, server| Envelope {
        status: Some(a::status(&d.components, &d.incidents)),
        components: Some(a::components(&d.components, &d.groups, d.updated_at)),
        incidents: Some(incidents_of(d, server, true)),
        scheduled_maintenances: Some(maintenances_of(d, server, None)),
        ..envelope(d, server)
    }
);
compat_route!(
    status,
    domain_status,
    "/s/{slug}/api/v2/status.json",
    "/api/v2/status.json",
    "atlassianStatus",
    "Page and status indicator",
    "atl:status",
    |d, server| Envelope {
        status: Some(a::status(&d.components, &d.incidents)),
        ..envelope(d, server)
    }
);
compat_route!(
    components,
    domain_components,
    "/s/{slug}/api/v2/components.json",
    "/api/v2/components.json",
    "atlassianComponents",
    "Components and group rows",
    "atl:components",
    |d, server| Envelope {
        components: Some(a::components(&d.components, &d.groups, d.updated_at)),
        ..envelope(d, server)
    }
);
compat_route!(
    incidents,
    domain_incidents,
    "/s/{slug}/api/v2/incidents.json",
    "/api/v2/incidents.json",
    "atlassianIncidents",
    "The latest 50 incidents",
    "atl:incidents",
    |d, server| Envelope {
        incidents: Some(incidents_of(d, server, false)),
        ..envelope(d, server)
    }
);
compat_route!(
    unresolved,
    domain_unresolved,
    "/s/{slug}/api/v2/incidents/unresolved.json",
    "/api/v2/incidents/unresolved.json",
    "atlassianUnresolved",
    "Unresolved incidents",
    "atl:unresolved",
    |d, server| Envelope {
        incidents: Some(incidents_of(d, server, true)),
        ..envelope(d, server)
    }
);
compat_route!(
    maintenances,
    domain_maintenances,
    "/s/{slug}/api/v2/scheduled-maintenances.json",
    "/api/v2/scheduled-maintenances.json",
    "atlassianMaintenances",
    "The 50 most recent maintenance windows: upcoming, active and completed",
    "atl:maintenances",
    |d, server| Envelope {
        scheduled_maintenances: Some(recent_maintenances(d, server)),
        ..envelope(d, server)
    }
);
compat_route!(
    upcoming,
    domain_upcoming,
    "/s/{slug}/api/v2/scheduled-maintenances/upcoming.json",
    "/api/v2/scheduled-maintenances/upcoming.json",
    "atlassianUpcoming",
    "Scheduled maintenance not yet started",
    "atl:upcoming",
    |d, server| Envelope {
        scheduled_maintenances: Some(maintenances_of(
            d,
            server,
            Some(MaintenanceStatus::Scheduled)
        )),
        ..envelope(d, server)
    }
);
compat_route!(
    active,
    domain_active,
    "/s/{slug}/api/v2/scheduled-maintenances/active.json",
    "/api/v2/scheduled-maintenances/active.json",
    "atlassianActive",
    "Maintenance in progress",
    "atl:active",
    |d, server| Envelope {
        scheduled_maintenances: Some(maintenances_of(
            d,
            server,
            Some(MaintenanceStatus::InProgress)
        )),
        ..envelope(d, server)
    }
);
