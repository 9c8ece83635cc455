//! The dashboard: pages with their status, open incidents, coming windows, recent audit.

use super::{Screen, fail, pages_with_status};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use axum::response::Response;
use upstate_core::MaintenanceStatus;
use upstate_store::audit::AuditFilter;
use upstate_store::incidents::IncidentFilter;
use upstate_store::maintenance::MaintenanceFilter;
use upstate_store::{audit, incidents, maintenance};

/// How many failing monitors the dashboard shows with their checks.
const FAILING_SHOWN: usize = 10;

pub(super) async fn dashboard(
    State(state): State<AppState>,
    s: Screen,
) -> Result<Response, Response> {
    let now = state.db.clock.now();
    let with_status = pages_with_status(&state).await?;
    let open = IncidentFilter {
        status: Some("unresolved".into()),
        limit: 20,
        ..Default::default()
    };
    // Windows past their end stay listed while unfinished: they ask for a
    // hand (completed, cancelled or moved), and the dashboard flags them.
    let unfinished = MaintenanceFilter {
        finished: Some(false),
        ..Default::default()
    };
    let mut windows = maintenance::list(&state.db, &unfinished)
        .await
        .map_err(fail)?;
    windows.retain(|m| {
        matches!(
            m.status,
            MaintenanceStatus::Scheduled | MaintenanceStatus::InProgress
        )
    });
    windows.sort_by_key(|m| m.scheduled_start_time);
    let recent = AuditFilter {
        limit: 8,
        ..Default::default()
    };
    // Monitors at a glance: every one counted, the failing shown with
    // their latest checks.
    let all_monitors = upstate_store::monitors::list(&state.db)
        .await
        .map_err(fail)?;
    let mut failing: Vec<&upstate_core::monitors::Monitor> = all_monitors
        .iter()
        .filter(|m| {
            m.config.enabled
                && matches!(
                    m.state,
                    upstate_core::MonitorState::Down | upstate_core::MonitorState::Degraded
                )
        })
        .collect();
    failing.sort_by_key(|m| view::monitor_rank(m));
    let failing_count = failing.len();
    // When everything is down at once the dashboard is opened most: it
    // shows the first few with their checks, and links to the rest.
    let mut shown = Vec::new();
    for m in failing.into_iter().take(FAILING_SHOWN) {
        let name = upstate_store::components::get(&state.db, m.component_id)
            .await
            .map(|c| c.name)
            .unwrap_or_default();
        let recent = upstate_store::monitors::checks(&state.db, m.id, super::monitors::STRIP)
            .await
            .map_err(fail)?;
        shown.push((m.clone(), name, recent));
    }
    let data = view::DashboardData {
        monitors: view::MonitorGlance {
            up: all_monitors
                .iter()
                .filter(|m| m.config.enabled && m.state == upstate_core::MonitorState::Up)
                .count(),
            paused: all_monitors.iter().filter(|m| !m.config.enabled).count(),
            total: all_monitors.len(),
            failing_count,
            failing: shown,
        },
        pages: with_status,
        open_incidents: incidents::list(&state.db, &open).await.map_err(fail)?,
        maintenance: windows,
        // Only for those who may read the audit log (its screen's rule).
        audit: match s.who.require(upstate_core::roles::Permission::AuditView) {
            Ok(()) => Some(audit::list(&state.db, &recent).await.map_err(fail)?),
            Err(_) => None,
        },
        now,
        drafts: upstate_store::integrations::drafts(&state.db)
            .await
            .map_err(fail)?
            .len(),
    };
    Ok(s.show(view::dashboard(&s.frame("dashboard"), s.flash(), &data)))
}
