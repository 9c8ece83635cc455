//! Monitors: the list and one monitor's checks.

use super::{Page, Screen, all_components, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use serde::Deserialize;
use upstate_core::roles::Permission;
use upstate_store::{components, pages};

/// The list's search, read leniently.
#[derive(Deserialize, Default)]
pub(super) struct MonitorsQuery {
    q: Option<String>,
    state: Option<String>,
}

/// How many of a monitor's latest checks its strip shows.
pub(super) const STRIP: i64 = 30;

pub(super) async fn monitors_screen(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<MonitorsQuery>,
) -> Page {
    let list = upstate_store::monitors::list(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    let search = view::MonitorSearch {
        text: q.q.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
        state: q
            .state
            .filter(|st| ["failing", "up", "paused"].contains(&st.as_str())),
    };
    let mut checks = Vec::with_capacity(list.len());
    for m in &list {
        checks.push(
            upstate_store::monitors::checks(&state.db, m.id, STRIP)
                .await
                .map_err(fail)?,
        );
    }
    let mut rows: Vec<view::MonitorRow> = list
        .iter()
        .zip(&checks)
        .filter_map(|(m, recent)| {
            let c = comps.iter().find(|c| c.id == m.component_id)?;
            let p = all.iter().find(|p| p.id == c.status_page_id)?;
            Some(view::MonitorRow {
                monitor: m,
                component: &c.name,
                page: &p.name,
                recent,
            })
        })
        .filter(|r| search.keeps(r))
        .collect();
    // The failing first, then the unknown, the slow and the up; paused last.
    rows.sort_by_key(|r| view::monitor_rank(r.monitor));
    let follows = upstate_store::third_party::list(&state.db)
        .await
        .map_err(fail)?;
    // A component that follows a vendor takes no monitor.
    let free: Vec<upstate_core::Component> = comps
        .iter()
        .filter(|c| !list.iter().any(|m| m.component_id == c.id))
        .filter(|c| !follows.iter().any(|f| f.component_id == c.id))
        .cloned()
        .collect();
    let vendors: Vec<view::VendorRow> = follows
        .iter()
        .filter_map(|f| {
            let c = comps.iter().find(|c| c.id == f.component_id)?;
            let p = all.iter().find(|p| p.id == c.status_page_id)?;
            Some(view::VendorRow {
                follow: f,
                component: &c.name,
                page: &p.name,
            })
        })
        .collect();
    Ok(s.show(view::monitors(
        &s.frame("monitors"),
        s.flash(),
        &search,
        &rows,
        &all,
        &free,
        &vendors,
        s.who.require(Permission::PagesWrite).is_ok(),
    )))
}

pub(super) async fn monitor_screen(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
) -> Page {
    let mut m = upstate_store::monitors::get(&state.db, id)
        .await
        .map_err(fail)?
        .under(&state.settings.public_url);
    m.config = m.config.redacted();
    let component = components::get(&state.db, m.component_id)
        .await
        .map_err(fail)?;
    let checks = upstate_store::monitors::checks(&state.db, id, 50)
        .await
        .map_err(fail)?;
    let now = state.db.clock.now();
    let day = upstate_store::monitor_stats::series(
        &state.db,
        id,
        upstate_core::measurements::Resolution::Hour,
        now.plus_millis(-crate::views::CHART_MS),
        now,
    )
    .await
    .map_err(fail)?;
    Ok(s.show(view::monitor(
        &s.frame("monitors"),
        s.flash(),
        &view::MonitorScreen {
            monitor: &m,
            component: &component,
            checks: &checks,
            day: &day,
            now,
            can_write: s.who.require(Permission::PagesWrite).is_ok(),
        },
    )))
}
