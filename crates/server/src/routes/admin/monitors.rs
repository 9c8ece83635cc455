//! Monitors: the list and one monitor's checks.

use super::{Page, Screen, all_components, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use upstate_core::roles::Permission;
use upstate_store::{components, pages};

/// The list's search, read leniently.
#[derive(Deserialize, Default)]
pub(super) struct MonitorsQuery {
    q: Option<String>,
    state: Option<String>,
    /// Which page of results, from 1.
    p: Option<String>,
}

/// How many of a monitor's latest checks its strip shows.
pub(super) const STRIP: i64 = 30;

/// How many monitors one page of the list shows: with a thousand, the
/// screen drew a thousand strips from a thousand queries.
pub(super) const PER_PAGE: usize = 50;

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
        number: q
            .p
            .and_then(|n| n.trim().parse::<usize>().ok())
            .filter(|n| (1..=100_000).contains(n))
            .unwrap_or(1),
    };
    let page_names: HashMap<i64, &str> = all.iter().map(|p| (p.id, p.name.as_str())).collect();
    let named: HashMap<i64, (&str, &str)> = comps
        .iter()
        .filter_map(|c| Some((c.id, (c.name.as_str(), *page_names.get(&c.status_page_id)?))))
        .collect();
    let mut rows: Vec<view::MonitorRow> = list
        .iter()
        .filter_map(|m| {
            let (component, page) = named.get(&m.component_id)?;
            Some(view::MonitorRow {
                monitor: m,
                component,
                page,
                recent: Vec::new(),
            })
        })
        .filter(|r| search.keeps(r))
        .collect();
    // The failing first, then the unknown, the slow and the up; paused last.
    rows.sort_by_key(|r| view::monitor_rank(r.monitor));
    let more = rows.len() > search.number * PER_PAGE;
    let mut rows: Vec<view::MonitorRow> = rows
        .into_iter()
        .skip((search.number - 1) * PER_PAGE)
        .take(PER_PAGE)
        .collect();
    for r in &mut rows {
        r.recent = upstate_store::monitors::checks(&state.db, r.monitor.id, STRIP)
            .await
            .map_err(fail)?;
    }
    let follows = upstate_store::third_party::list(&state.db)
        .await
        .map_err(fail)?;
    // A component that follows a vendor takes no monitor.
    let taken: HashSet<i64> = list
        .iter()
        .map(|m| m.component_id)
        .chain(follows.iter().map(|f| f.component_id))
        .collect();
    let free: Vec<upstate_core::Component> = comps
        .iter()
        .filter(|c| !taken.contains(&c.id))
        .cloned()
        .collect();
    let vendors: Vec<view::VendorRow> = follows
        .iter()
        .filter_map(|f| {
            let (component, page) = named.get(&f.component_id)?;
            Some(view::VendorRow {
                follow: f,
                component,
                page,
            })
        })
        .collect();
    Ok(s.show(view::monitors(
        &s.frame("monitors"),
        s.flash(),
        &view::MonitorsScreen {
            search: &search,
            rows: &rows,
            more,
            pages: &all,
            free: &free,
            vendors: &vendors,
            can_write: s.who.require(Permission::PagesWrite).is_ok(),
        },
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
