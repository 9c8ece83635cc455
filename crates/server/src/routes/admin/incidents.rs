//! Incidents: the list, one incident's screen, the new-incident form and templates.

use super::{Page, Screen, fail};
use crate::extract::PathId;
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use serde::Deserialize;
use upstate_core::roles::Permission;
use upstate_store::incidents::IncidentFilter;
use upstate_store::{components, incidents, pages};

#[derive(Deserialize)]
pub(super) struct NewIncidentQuery {
    template: Option<i64>,
}

pub(super) async fn incident_new(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<NewIncidentQuery>,
) -> Page {
    if let Some(refused) = s.refuse(Permission::IncidentsWrite, "incidents") {
        return Ok(refused);
    }
    let templates = upstate_store::templates::list(&state.db)
        .await
        .map_err(fail)?;
    let chosen = q
        .template
        .and_then(|id| templates.iter().find(|t| t.id == id).cloned());
    let form = view::IncidentForm {
        pages: pages::list(&state.db).await.map_err(fail)?,
        components: components::list(&state.db, None, None)
            .await
            .map_err(fail)?,
        groups: upstate_store::groups::list(&state.db, None)
            .await
            .map_err(fail)?,
        templates,
        chosen,
    };
    Ok(s.show(view::incident_new(&s.frame("incidents"), s.flash(), &form)))
}

pub(super) async fn templates_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::IncidentsWrite, "incidents") {
        return Ok(refused);
    }
    let list = upstate_store::templates::list(&state.db)
        .await
        .map_err(fail)?;
    Ok(s.show(view::templates(&s.frame("incidents"), s.flash(), &list)))
}

pub(super) async fn incidents_list(State(state): State<AppState>, s: Screen) -> Page {
    let recent = IncidentFilter {
        limit: 50,
        ..Default::default()
    };
    let list = incidents::list(&state.db, &recent).await.map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    Ok(s.show(view::incidents_list(
        &s.frame("incidents"),
        s.flash(),
        &list,
        &all,
    )))
}

pub(super) async fn incident_detail(
    State(state): State<AppState>,
    s: Screen,
    PathId(id): PathId,
) -> Page {
    let incident = match incidents::get(&state.db, id).await {
        Ok(i) => i,
        // Deleted (perhaps just now, from this screen): back to the list.
        Err(upstate_store::StoreError::NotFound(_)) => {
            return Ok(Redirect::to("/admin/incidents").into_response());
        }
        Err(e) => return Err(fail(e)),
    };
    let all = pages::list(&state.db).await.map_err(fail)?;
    let comps = components::list(&state.db, Some(incident.status_page_id), None)
        .await
        .map_err(fail)?;
    let groups = upstate_store::groups::list(&state.db, Some(incident.status_page_id))
        .await
        .map_err(fail)?;
    let pm = upstate_store::postmortems::get(&state.db, id)
        .await
        .map_err(fail)?;
    let followers = upstate_store::subscribers::followers(&state.db, id)
        .await
        .map_err(fail)?;
    let screen = view::IncidentScreen {
        incident: &incident,
        pages: &all,
        components: &comps,
        groups: &groups,
        postmortem: pm.as_ref(),
        followers,
        resolved_text: s.site.language().t("incident.resolved_message"),
    };
    Ok(s.show(view::incident_detail(
        &s.frame("incidents"),
        s.flash(),
        &screen,
    )))
}
