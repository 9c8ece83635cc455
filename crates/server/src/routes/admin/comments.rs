//! Visitor comments awaiting moderation.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use serde::Deserialize;
use upstate_core::roles::Permission;
use upstate_store::pages;

#[derive(Deserialize)]
pub(super) struct CommentsQuery {
    status: Option<String>,
}

pub(super) async fn comments_screen(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<CommentsQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::IncidentsWrite, "comments") {
        return Ok(refused);
    }
    let status = match q.status.as_deref() {
        Some("all") => None,
        Some(t) => Some(t.parse().unwrap_or(upstate_core::CommentStatus::Pending)),
        None => Some(upstate_core::CommentStatus::Pending),
    };
    let list = upstate_store::comments::list(&state.db, status, None, 200)
        .await
        .map_err(fail)?;
    let pending = upstate_store::comments::pending_count(&state.db)
        .await
        .map_err(fail)?;
    let features = upstate_store::settings::features(&state.db)
        .await
        .map_err(fail)?;
    let slugs: Vec<(i64, String)> = pages::list(&state.db)
        .await
        .map_err(fail)?
        .into_iter()
        .map(|p| (p.id, p.slug))
        .collect();
    Ok(s.show(view::comments(
        &s.frame("comments"),
        s.flash(),
        &view::CommentsScreen {
            list: &list,
            status,
            pending,
            offered: features.comments,
            moderated: s.site.moderate_comments,
            slugs: &slugs,
        },
    )))
}
