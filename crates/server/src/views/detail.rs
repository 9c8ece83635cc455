//! One incident, one maintenance window, and the monthly history.

use super::page::{
    incident_card, maintenance_card, past_incident, past_maintenance, subscribe_form,
};
use super::{View, layout, status_badge};
use maud::{Markup, html};
use upstate_core::comments::{AUTHOR_MAX, BODY_MAX, PublicComment};
use upstate_core::uptime::{StatusChange, worst_during};
use upstate_core::{Incident, IncidentStatus, Maintenance};
use upstate_store::public::History;

/// An incident's page; `comments` are its approved comments when the
/// install offers comments (None: no comments section at all). `history`
/// is the page's component status history; `mail` whether email can be
/// offered to followers.
pub fn incident(
    v: &View,
    i: &Incident,
    history: &[StatusChange],
    comments: Option<&[PublicComment]>,
    mail: bool,
) -> String {
    let postmortem = v.d.postmortems.iter().find(|p| p.incident == i.id);
    let open = i.status != IncidentStatus::Resolved;
    let body = html! {
        (incident_card(v, i))
        (affected(v, i, history))
        @if open && v.d.page.show_subscribe && v.copy.is_none() { (subscribe_form(v, mail, Some(i.id))) }
        @if let Some(pm) = postmortem {
            section.card.postmortem aria-labelledby="pm-h" {
                h2 #pm-h { (v.t("label.postmortem")) }
                div.prose { (super::markdown(&pm.body)) }
            }
        }
        @if let Some(list) = comments { (comment_section(v, i, list)) }
    };
    detail(v, &i.title, body)
}

/// The components the incident touched, each with the most severe status
/// it had from the incident's start to its end (or now), which is what a
/// reader asks afterwards ("was it down, or only slow?").
fn affected(v: &View, i: &Incident, history: &[StatusChange]) -> Markup {
    let end = i.resolved_at.unwrap_or(v.now);
    let rows: Vec<_> = i
        .affected_components
        .iter()
        .filter_map(|id| v.d.components.iter().find(|c| c.id == *id))
        .map(|c| (c, worst_during(history, c.id, i.created_at, end)))
        .collect();
    html! {
        @if !rows.is_empty() {
            section.card.affected aria-labelledby="af-h" {
                h2 #af-h { (v.t("label.affected_components")) }
                p.meta { (v.t("label.affected_note")) }
                ul.affected-list {
                    @for (c, worst) in &rows {
                        li data-component=(c.id) {
                            span.name { (c.name) }
                            @match worst {
                                Some(s) => (status_badge(v, *s)),
                                None => span.st.s-none { (v.t("label.no_data")) },
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Visitors' comments as plain text (maud escapes them; line breaks kept by
/// CSS), and the form to add one, which works without script.
fn comment_section(v: &View, i: &Incident, list: &[PublicComment]) -> Markup {
    html! {
        section.card.comments #comments aria-labelledby="cm-h" {
            h2 #cm-h { (v.t("comments.title")) }
            @if list.is_empty() {
                p.meta { (v.t("comments.none")) }
            } @else {
                ol.comment-list {
                    @for c in list {
                        li #{ "comment-" (c.id) } {
                            p.when {
                                strong { @if c.author.is_empty() { (v.t("comments.anonymous")) } @else { (c.author) } }
                                " — " (v.when(c.created_at))
                            }
                            p.comment-body { (c.body) }
                        }
                    }
                }
            }
            // A copy cannot take comments: the live page can.
            @if v.copy.is_none() { form method="post" action=(format!("/api/comments?lang={}", v.lang.code())) {
                h3 { (v.t("comments.add")) }
                input type="hidden" name="incidentId:int" value=(i.id);
                label for="cm-author" { (v.t("comments.name")) }
                input #cm-author type="text" name="author" maxlength=(AUTHOR_MAX) autocomplete="nickname";
                label for="cm-body" { (v.t("comments.body")) }
                textarea #cm-body name="body" required maxlength=(BODY_MAX) rows="4" aria-describedby="cm-note" {}
                @if v.d.settings.moderate_comments {
                    p.meta #cm-note { (v.t("comments.held")) }
                } @else {
                    p.meta #cm-note { (v.t("comments.public")) }
                }
                button type="submit" { (v.t("comments.submit")) }
            } }
        }
    }
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
            p { a href=(v.href("")) { span.arr aria-hidden="true" { "←" } " " (v.t("nav.back")) } }
            (card)
        },
    )
}

/// Where a part of a month's history sits among the others.
pub struct Parts {
    /// `YYYY-MM`.
    pub month: String,
    /// From 0.
    pub part: i64,
    /// Parts after this one.
    pub more: bool,
}

/// One month of incidents and maintenance (a bounded part of it, with
/// links to the parts beside it), with links to the months around it.
pub fn history(
    v: &View,
    (year, month): (i16, i8),
    h: &History,
    prev: Option<String>,
    next: Option<String>,
    parts: &Parts,
) -> String {
    let part_href = |part: i64| match part {
        0 => v.href(&format!("/history?month={}", parts.month)),
        n => v.href(&format!("/history?month={}&p={}", parts.month, n + 1)),
    };
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
            p { a href=(v.href("")) { span.arr aria-hidden="true" { "←" } " " (v.t("nav.back")) } }
            h2 { (heading) }
            @if h.incidents.is_empty() && h.maintenance.is_empty() {
                p.empty { (v.t("history.none")) }
            }
            @if !h.incidents.is_empty() {
                section.past.history aria-labelledby="hi-h" {
                    h3 #hi-h { (v.t("section.past_incidents")) }
                    @for i in &h.incidents { (past_incident(v, i)) }
                }
            }
            @if !h.maintenance.is_empty() {
                section.past.history aria-labelledby="hm-h" {
                    h3 #hm-h { (v.t("section.past_maintenance")) }
                    @for m in &h.maintenance { (past_maintenance(v, m)) }
                }
            }
            @if parts.part > 0 || parts.more {
                nav.pager.parts aria-label=(v.month_title(year, month)) {
                    @if parts.part > 0 { a rel="prev" href=(part_href(parts.part - 1)) { span.arr aria-hidden="true" { "←" } " " (v.t("history.later")) } }
                    @if parts.more { a rel="next" href=(part_href(parts.part + 1)) { (v.t("history.earlier")) " " span.arr aria-hidden="true" { "→" } } }
                }
            }
            nav.pager aria-label=(v.t("section.history")) {
                @if let Some(p) = prev { a rel="prev" href=(v.href(&format!("/history?month={p}"))) { span.arr aria-hidden="true" { "←" } " " (v.t("history.previous")) } }
                @if let Some(n) = next { a rel="next" href=(v.href(&format!("/history?month={n}"))) { (v.t("history.next")) " " span.arr aria-hidden="true" { "→" } } }
            }
        },
    )
}
