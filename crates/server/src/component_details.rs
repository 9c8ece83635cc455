//! One component as operators ask about it (`/api/components/{id}/details`
//! and its admin screen): its page, uptime by period, latest status changes,
//! and the incidents and maintenance affecting it now.

use crate::error::ApiResult;
use crate::state::AppState;
use upstate_core::*;
use upstate_store::components;

/// Uptime of one component over the periods operators look at.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct UptimeFigures {
    /// Percentages by the uptime rule of docs/api.md; null without data.
    pub last24h: Option<f64>,
    pub last7d: Option<f64>,
    pub last30d: Option<f64>,
    pub last90d: Option<f64>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusMoment {
    pub status: ComponentStatus,
    #[schema(value_type = String)]
    pub at: Timestamp,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncidentBrief {
    pub id: Id,
    pub title: String,
    pub status: IncidentStatus,
    pub impact: Impact,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceBrief {
    pub id: Id,
    pub title: String,
    pub status: MaintenanceStatus,
    #[schema(value_type = String)]
    pub scheduled_start_time: Timestamp,
    #[schema(value_type = String)]
    pub scheduled_end_time: Timestamp,
}

/// Everything an operator asks about one component at once.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentDetails {
    pub component: Component,
    pub status_page: PageBrief,
    pub uptime: UptimeFigures,
    /// The latest status changes, newest first (at most 20).
    pub recent_changes: Vec<StatusMoment>,
    /// Unresolved incidents that affect it.
    pub open_incidents: Vec<IncidentBrief>,
    /// Scheduled and running maintenance that affects it.
    pub maintenance: Vec<MaintenanceBrief>,
    /// Its monitor, when it has one.
    pub monitor: Option<upstate_core::monitors::Monitor>,
    /// The monitor's latest checks, newest first (at most 20).
    pub last_checks: Vec<upstate_core::monitors::CheckResult>,
    /// The vendor it mirrors, when it is a third-party component.
    pub third_party: Option<upstate_core::third_party::Follow>,
    /// Declared in a setup file (`upstate apply`): the next apply undoes
    /// a change made by hand to what the file says.
    pub managed: bool,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PageBrief {
    pub id: Id,
    pub name: String,
    pub slug: String,
}

const DAY_MS: i64 = 86_400_000;

/// The details of component `id` (404 when there is none).
pub async fn load(state: &AppState, id: Id) -> ApiResult<ComponentDetails> {
    let component = components::get(&state.db, id).await?;
    let page_id = component.status_page_id;
    let page = upstate_store::pages::get(&state.db, page_id).await?;
    let now = state.db.clock.now();
    let since = now.plus_millis(-90 * DAY_MS);
    let changes: Vec<_> = upstate_store::public::status_history(&state.db, page_id, since)
        .await?
        .into_iter()
        .filter(|c| c.component_id == id)
        .collect();
    let over = |days: i64| {
        upstate_core::uptime::uptime_between(&changes, now.plus_millis(-days * DAY_MS), now)
    };
    let uptime = UptimeFigures {
        last24h: over(1),
        last7d: over(7),
        last30d: over(30),
        last90d: over(90),
    };
    let recent_changes = changes
        .iter()
        .rev()
        .take(20)
        .map(|c| StatusMoment {
            status: c.status,
            at: c.at,
        })
        .collect();
    let open = upstate_store::incidents::list(
        &state.db,
        &upstate_store::incidents::IncidentFilter {
            page_id: Some(page_id),
            status: Some("unresolved".into()),
            limit: i64::from(i32::MAX),
            ..Default::default()
        },
    )
    .await?;
    let monitor = upstate_store::monitors::of_component(&state.db, id)
        .await?
        .map(|mut m| {
            m.config = m.config.redacted();
            m.under(&state.settings.public_url)
        });
    let last_checks = match &monitor {
        Some(m) => upstate_store::monitors::checks(&state.db, m.id, 20).await?,
        None => Vec::new(),
    };
    let windows = upstate_store::maintenance::list(
        &state.db,
        &upstate_store::maintenance::MaintenanceFilter {
            page_id: Some(page_id),
            finished: Some(false),
            ..Default::default()
        },
    )
    .await?;
    Ok(ComponentDetails {
        status_page: PageBrief {
            id: page.id,
            name: page.name,
            slug: page.slug,
        },
        uptime,
        recent_changes,
        open_incidents: open
            .into_iter()
            .filter(|i| i.affected_components.contains(&id))
            .map(|i| IncidentBrief {
                id: i.id,
                title: i.title,
                status: i.status,
                impact: i.impact,
            })
            .collect(),
        maintenance: windows
            .into_iter()
            .filter(|m| m.affected_components.contains(&id))
            .map(|m| MaintenanceBrief {
                id: m.id,
                title: m.title,
                status: m.status,
                scheduled_start_time: m.scheduled_start_time,
                scheduled_end_time: m.scheduled_end_time,
            })
            .collect(),
        monitor,
        last_checks,
        third_party: upstate_store::third_party::of_component(&state.db, id).await?,
        managed: upstate_store::managed::is_managed(
            &state.db,
            upstate_core::setup::ManagedKind::Component,
            id,
        )
        .await?,
        component,
    })
}
