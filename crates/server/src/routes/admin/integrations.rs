//! Integrations: the list with a new one, and one integration's screen.

use super::{Page, Screen, fail, html};
use crate::error::ApiError;
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use upstate_core::alerts::DraftApproval;
use upstate_core::audit::Actor;
use upstate_core::roles::Permission;
use upstate_store::AuditCtx;
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

/// `/admin/approve/{id}/{token}`: the link a drafted incident's message to
/// the team carries (docs/integrations.md, "Drafts").
pub(super) async fn approve_link(
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
) -> Response {
    let draft = match id.parse::<i64>() {
        Ok(id) => integrations::draft_by_link(&state.db, id, &token)
            .await
            .ok(),
        Err(_) => None,
    };
    let comps = match &draft {
        Some(d) => components::list(&state.db, Some(d.status_page_id), None)
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let status = if draft.is_some() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    html(
        status,
        view::approve_link(draft.as_ref(), &comps, None),
        false,
    )
}

pub(super) async fn approve_link_answer(
    State(state): State<AppState>,
    Path((id, token)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    // The form's one field, `answer=publish` or `answer=dismiss`.
    let answer = upstate_core::input::Query::parse(&String::from_utf8_lossy(&body))
        .get("answer")
        .unwrap_or_default()
        .to_string();
    let Ok(id) = id.parse::<i64>() else {
        return html(
            StatusCode::NOT_FOUND,
            view::approve_link(None, &[], None),
            false,
        );
    };
    if integrations::draft_by_link(&state.db, id, &token)
        .await
        .is_err()
    {
        return html(
            StatusCode::NOT_FOUND,
            view::approve_link(None, &[], None),
            false,
        );
    }
    let ctx = AuditCtx::of(Actor::system("approve link"));
    let said = match answer.as_str() {
        "publish" => integrations::approve(&state.db, &ctx, id, &DraftApproval::default())
            .await
            .map(|incident| {
                format!("Published: incident {incident} is on the page and subscribers are told.")
            }),
        "dismiss" => integrations::dismiss(&state.db, &ctx, id)
            .await
            .map(|()| "Dismissed: nothing was published.".to_string()),
        _ => {
            return html(
                StatusCode::UNPROCESSABLE_ENTITY,
                view::approve_link(None, &[], Some("Answer publish or dismiss.")),
                false,
            );
        }
    };
    match said {
        Ok(s) => html(
            StatusCode::OK,
            view::approve_link(None, &[], Some(&s)),
            false,
        ),
        Err(e) => ApiError::from(e).into_response(),
    }
}
