//! Integrations: the list with a new one, and one integration's screen.

use super::{Page, Screen, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use upstate_core::roles::Permission;
use upstate_store::{components, integrations, pages};

pub(super) async fn integrations_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "integrations") {
        return Ok(refused);
    }
    let list = integrations::list(&state.db).await.map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    Ok(s.show(view::integrations(
        &s.frame("integrations"),
        s.flash(),
        &view::IntegrationsScreen {
            integrations: &list,
            pages: &all,
        },
    )))
}

pub(super) async fn integration_screen(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "integrations") {
        return Ok(refused);
    }
    let i = integrations::get(&state.db, id).await.map_err(fail)?;
    let page = pages::get(&state.db, i.status_page_id)
        .await
        .map_err(fail)?;
    let comps = components::list(&state.db, Some(page.id), None)
        .await
        .map_err(fail)?;
    let events = integrations::events(&state.db, id, 50)
        .await
        .map_err(fail)?;
    Ok(s.show(view::integration(
        &s.frame("integrations"),
        s.flash(),
        &view::IntegrationScreen {
            integration: &i,
            page: &page,
            components: &comps,
            events: &events,
        },
    )))
}
