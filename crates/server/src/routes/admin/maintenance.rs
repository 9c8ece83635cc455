//! Maintenance: one-off and recurring windows.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use upstate_core::MaintenanceStatus;
use upstate_store::maintenance::MaintenanceFilter;
use upstate_store::{components, maintenance, pages, users};

pub(super) async fn maintenance_list(State(state): State<AppState>, s: Screen) -> Page {
    let mut windows = maintenance::list(&state.db, &MaintenanceFilter::default())
        .await
        .map_err(fail)?;
    // Under way first, then what comes next, then the past.
    windows.sort_by_key(|m| {
        let rank = match m.status {
            MaintenanceStatus::InProgress => 0,
            MaintenanceStatus::Scheduled => 1,
            _ => 2,
        };
        (
            rank,
            if rank == 2 {
                -m.scheduled_start_time.millis()
            } else {
                m.scheduled_start_time.millis()
            },
        )
    });
    let all = pages::list(&state.db).await.map_err(fail)?;
    let chosen = users::current_page(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?
        .filter(|id| all.iter().any(|p| p.id == *id));
    let mut recurring = Vec::new();
    for r in upstate_store::recurring::list(&state.db, None)
        .await
        .map_err(fail)?
    {
        let next = upstate_store::recurring::upcoming(&state.db, &r, state.db.clock.now())
            .await
            .unwrap_or_default();
        recurring.push((r, next));
    }
    let screen = view::MaintenanceScreen {
        windows,
        recurring,
        current: chosen.or_else(|| all.first().map(|p| p.id)),
        pages: all,
        now: state.db.clock.now(),
        components: components::list(&state.db, None, None)
            .await
            .map_err(fail)?,
    };
    Ok(s.show(view::maintenance_list(
        &s.frame("maintenance"),
        s.flash(),
        &screen,
    )))
}
