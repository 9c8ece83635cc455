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

/// The list's search: every field as typed, read leniently (a value that
/// means nothing filters nothing, and the form shows it as it was).
#[derive(Deserialize, Default)]
pub(super) struct IncidentsQuery {
    q: Option<String>,
    page: Option<String>,
    status: Option<String>,
    impact: Option<String>,
    /// Which page of results, from 1.
    p: Option<String>,
}

/// How many incidents one page of the list shows.
const PER_PAGE: i64 = 25;

pub(super) async fn incidents_list(
    State(state): State<AppState>,
    s: Screen,
    Query(q): Query<IncidentsQuery>,
) -> Page {
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(String::from)
    };
    let search = view::IncidentSearch {
        text: given(&q.q),
        page: given(&q.page).and_then(|p| p.parse().ok()),
        status: given(&q.status).filter(|st| {
            [
                "unresolved",
                "investigating",
                "identified",
                "monitoring",
                "resolved",
            ]
            .contains(&st.as_str())
        }),
        impact: given(&q.impact)
            .filter(|i| ["none", "minor", "major", "critical"].contains(&i.as_str())),
        number: given(&q.p)
            .and_then(|n| n.parse::<i64>().ok())
            .filter(|n| (1..=100_000).contains(n))
            .unwrap_or(1),
    };
    let filter = IncidentFilter {
        page_id: search.page,
        status: search.status.clone(),
        text: search.text.clone(),
        impact: search.impact.clone(),
        // One more than shown: whether there is a next page.
        limit: PER_PAGE + 1,
        offset: (search.number - 1) * PER_PAGE,
        ..Default::default()
    };
    let mut list = incidents::list(&state.db, &filter).await.map_err(fail)?;
    let more = list.len() as i64 > PER_PAGE;
    list.truncate(PER_PAGE as usize);
    let all = pages::list(&state.db).await.map_err(fail)?;
    let waiting = upstate_store::integrations::drafts(&state.db)
        .await
        .map_err(fail)?;
    let mut comps = Vec::new();
    for p in all
        .iter()
        .filter(|p| waiting.iter().any(|d| d.status_page_id == p.id))
    {
        comps.extend(
            components::list(&state.db, Some(p.id), None)
                .await
                .map_err(fail)?,
        );
    }
    let frame = s.frame("incidents");
    let drafts = view::drafts(&frame, s.flash(), &waiting, &comps);
    Ok(s.show(view::incidents_list(
        &frame,
        s.flash(),
        &view::IncidentsScreen {
            incidents: &list,
            pages: &all,
            search: &search,
            more,
            drafts,
        },
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
