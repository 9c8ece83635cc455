//! Notification channels and their delivery log.

use super::{Page, Screen, all_components, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use upstate_core::roles::Permission;
use upstate_store::pages;

pub(super) async fn notifications_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "notifications") {
        return Ok(refused);
    }
    let list = upstate_store::notifications::list(&state.db)
        .await
        .map_err(fail)?;
    let last = upstate_store::deliveries::last_of_channels(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    Ok(s.show(view::channels(
        &s.frame("notifications"),
        s.flash(),
        state.sender.has_mailer(),
        &list,
        &last,
        &all,
        &comps,
    )))
}

pub(super) async fn channel_screen(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "notifications") {
        return Ok(refused);
    }
    let channel = upstate_store::notifications::get(&state.db, id)
        .await
        .map_err(fail)?;
    let log = upstate_store::deliveries::log(&state.db, Some(id), None, None, 50)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = all_components(&state, &all).await?;
    Ok(s.show(view::channel(
        &s.frame("notifications"),
        s.flash(),
        &view::ChannelScreen {
            channel: &channel,
            log: &log,
            pages: &all,
            components: &comps,
        },
    )))
}
