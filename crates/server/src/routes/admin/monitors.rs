//! Monitors: the list and one monitor's checks.

use super::{Page, Screen, all_components, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use upstate_core::roles::Permission;
use upstate_store::{components, pages};

pub(super) async fn monitors_screen(State(state): State<AppState>, s: Screen) -> Page {
    let list = upstate_store::monitors::list(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    let rows: Vec<view::MonitorRow> = list
        .iter()
        .filter_map(|m| {
            let c = comps.iter().find(|c| c.id == m.component_id)?;
            let p = all.iter().find(|p| p.id == c.status_page_id)?;
            Some(view::MonitorRow {
                monitor: m,
                component: &c.name,
                page: &p.name,
            })
        })
        .collect();
    let free: Vec<upstate_core::Component> = comps
        .iter()
        .filter(|c| !list.iter().any(|m| m.component_id == c.id))
        .cloned()
        .collect();
    Ok(s.show(view::monitors(
        &s.frame("monitors"),
        s.flash(),
        &rows,
        &all,
        &free,
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
