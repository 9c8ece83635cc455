//! One incident, one maintenance window, and the monthly history.

use super::page::{
    impact_key, incident_card, incident_status_key, maintenance_card, maintenance_status_key,
};
use super::{View, layout};
use maud::{Markup, html};
use upstate_core::{Incident, Maintenance};
use upstate_store::public::History;

pub fn incident(v: &View, i: &Incident) -> String {
    let postmortem = v.d.postmortems.iter().find(|p| p.incident == i.id);
    let body = html! {
        (incident_card(v, i))
        @if let Some(pm) = postmortem {
            section.card.postmortem aria-labelledby="pm-h" {
                h2 #pm-h { (v.t("label.postmortem")) }
                div.prose { (super::markdown(&pm.body)) }
            }
        }
    };
    detail(v, &i.title, body)
}

pub fn maintenance(v: &View, m: &Maintenance) -> String {
    detail(v, &m.title, maintenance_card(v, m))
}

/// One item's page: a way back to the page, and the item's card.
fn detail(v: &View, name: &str, card: Markup) -> String {
    let title = format!("{name} · {}", v.d.page.name);
    layout(
        v,
        &title,
        html! {
            p { a href=(v.base()) { "← " (v.t("nav.back")) } }
            (card)
        },
    )
}

/// One month of incidents and maintenance, with links to the months around it.
pub fn history(
    v: &View,
    (year, month): (i16, i8),
    h: &History,
    prev: Option<String>,
    next: Option<String>,
) -> String {
    let heading = format!(
        "{} · {}",
        v.t("section.history"),
        v.month_title(year, month)
    );
    let title = format!("{heading} · {}", v.d.page.name);
    layout(
        v,
        &title,
        html! {
            p { a href=(v.base()) { "← " (v.t("nav.back")) } }
            h2 { (heading) }
            @if h.incidents.is_empty() && h.maintenance.is_empty() {
                p.empty { (v.t("history.none")) }
            }
            @if !h.incidents.is_empty() {
                section aria-labelledby="hi-h" {
                    h3 #hi-h { (v.t("section.past_incidents")) }
                    ul.history {
                        @for i in &h.incidents {
                            li data-incident=(i.id) {
                                a href=(v.href(&format!("/incidents/{}", i.id))) { (i.title) }
                                " — " (v.t(incident_status_key(i.status))) ", " (v.t(impact_key(i.impact))) " · "
                                time datetime=(i.created_at.to_rfc3339()) { (v.absolute(i.created_at)) }
                            }
                        }
                    }
                }
            }
            @if !h.maintenance.is_empty() {
                section aria-labelledby="hm-h" {
                    h3 #hm-h { (v.t("section.past_maintenance")) }
                    ul.history {
                        @for m in &h.maintenance {
                            li data-maintenance=(m.id) {
                                a href=(v.href(&format!("/maintenance/{}", m.id))) { (m.title) }
                                " — " (v.t(maintenance_status_key(m.status))) " · "
                                time datetime=(m.scheduled_start_time.to_rfc3339()) { (v.absolute(m.scheduled_start_time)) }
                            }
                        }
                    }
                }
            }
            nav.pager aria-label=(v.t("section.history")) {
                @if let Some(p) = prev { a rel="prev" href=(v.href(&format!("/history?month={p}"))) { "← " (v.t("history.previous")) } }
                @if let Some(n) = next { a rel="next" href=(v.href(&format!("/history?month={n}"))) { (v.t("history.next")) " →" } }
            }
        },
    )
}
