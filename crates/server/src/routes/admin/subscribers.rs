//! Subscribers: search, one subscriber's deliveries.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use serde::Deserialize;
use upstate_core::roles::Permission;
use upstate_store::pages;

#[derive(Deserialize)]
pub(super) struct SubscribersQuery {
    q: Option<String>,
    open: Option<i64>,
}

pub(super) async fn subscribers_screen(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<SubscribersQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "subscribers") {
        return Ok(refused);
    }
    let text = q.q.as_deref().map(str::trim).unwrap_or("");
    let list = upstate_store::subscribers::list(
        &state.db,
        None,
        Some(text).filter(|t| !t.is_empty()),
        500,
    )
    .await
    .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let open = match q.open {
        Some(id) => {
            let sub = upstate_store::subscribers::get(&state.db, id)
                .await
                .map_err(fail)?;
            let log = upstate_store::deliveries::of_subscriber(&state.db, id, 50)
                .await
                .map_err(fail)?;
            Some((sub, log))
        }
        None => None,
    };
    let components = upstate_store::components::list(&state.db, None, None)
        .await
        .map_err(fail)?;
    Ok(s.show(view::subscribers(
        &s.frame("subscribers"),
        s.flash(),
        &view::SubscribersScreen {
            list: &list,
            pages: &all,
            components: &components,
            q: text,
            open: open.as_ref().map(|(sub, log)| (sub, log.as_slice())),
            mail: state.sender.has_mailer(),
        },
    )))
}
