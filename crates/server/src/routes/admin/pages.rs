//! Status pages: the list and one page's screen (groups, components, links).

use super::{Page, Screen, fail, pages_with_status};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use crate::visitor::Visitor;
use axum::extract::State;
use upstate_store::{components, groups, pages, users};

pub(super) async fn pages_list(State(state): State<AppState>, s: Screen) -> Page {
    let all = pages_with_status(&state).await?;
    let chosen = users::current_page(&state.db, s.who.session.user.id)
        .await
        .map_err(fail)?
        .filter(|id| all.iter().any(|(p, _)| p.id == *id));
    let current = chosen.or_else(|| all.first().map(|(p, _)| p.id));
    Ok(s.show(view::pages_list(
        &s.frame("pages"),
        s.flash(),
        &all,
        current,
    )))
}

pub(super) async fn page_screen(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
    visitor: Visitor,
) -> Page {
    let screen = view::PageScreen {
        page: pages::get(&state.db, id).await.map_err(fail)?,
        groups: groups::list(&state.db, Some(id)).await.map_err(fail)?,
        components: components::list(&state.db, Some(id), None)
            .await
            .map_err(fail)?,
        links: upstate_store::quick_links::list(&state.db, Some(id))
            .await
            .map_err(fail)?,
        features: upstate_store::settings::features(&state.db)
            .await
            .map_err(fail)?,
        managed: upstate_store::managed::is_managed(
            &state.db,
            upstate_core::setup::ManagedKind::Page,
            id,
        )
        .await
        .map_err(fail)?,
        password_set: pages::password_hash(&state.db, id)
            .await
            .map_err(fail)?
            .is_some(),
        access: upstate_store::access::get(&state.db, id)
            .await
            .map_err(fail)?,
        your_address: visitor.ip,
        viewers: upstate_store::viewers::list(&state.db, id)
            .await
            .map_err(fail)?,
        can_mail: state.sender.has_mailer(),
        audiences: upstate_store::audiences::of(&state.db, id)
            .await
            .map_err(fail)?,
        sso_label: crate::sso::settings(&state)
            .await
            .map_err(fail)?
            .offered_label(),
        viewer_provider: upstate_store::viewer_providers::of(&state.db, id)
            .await
            .map_err(fail)?
            .map(|p| p.view(crate::sso::redirect_uri(&state))),
        public_url: state.settings.public_url.trim_end_matches('/').to_string(),
    };
    Ok(s.show(view::page_screen(&s.frame("pages"), s.flash(), &screen)))
}
