//! The team: users and the audit log.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use serde::Deserialize;
use upstate_core::Timestamp;
use upstate_core::roles::Permission;
use upstate_store::audit::AuditFilter;
use upstate_store::{audit, users};

pub(super) async fn users_list(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::UsersManage, "users") {
        return Ok(refused);
    }
    let all = users::list(&state.db).await.map_err(fail)?;
    Ok(s.show(view::users(&s.frame("users"), s.flash(), &all)))
}

#[derive(Deserialize)]
pub(super) struct AuditQuery {
    action: Option<String>,
    #[serde(rename = "actorKind")]
    actor_kind: Option<String>,
    #[serde(rename = "targetType")]
    target_type: Option<String>,
    /// `YYYY-MM-DD` (a date input), from the start of that day in UTC.
    since: Option<String>,
}

pub(super) async fn audit_log(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<AuditQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::AuditView, "audit") {
        return Ok(refused);
    }
    let given = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let shown = view::AuditFilters {
        action: given(q.action),
        actor_kind: given(q.actor_kind),
        target_type: given(q.target_type),
        since: given(q.since).filter(|d| d.parse::<jiff::civil::Date>().is_ok()),
    };
    let filter = AuditFilter {
        action: shown.action.clone(),
        actor_kind: shown.actor_kind.clone(),
        target_type: shown.target_type.clone(),
        since: shown
            .since
            .as_deref()
            .and_then(|d| Timestamp::parse(&format!("{d}T00:00:00Z")).ok()),
        limit: 100,
        ..Default::default()
    };
    let events = audit::list(&state.db, &filter).await.map_err(fail)?;
    Ok(s.show(view::audit(&s.frame("audit"), s.flash(), &events, &shown)))
}
