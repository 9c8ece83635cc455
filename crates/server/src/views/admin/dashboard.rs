//! The dashboard: every page's overall status, open incidents, maintenance
//! under way and coming, the latest audit events, and "report an incident".

use super::{Frame, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::audit::AuditEvent;
use upstate_core::public::status_label;
use upstate_core::roles::Permission;
use upstate_core::{ComponentStatus, Incident, Maintenance, StatusPage, Timestamp};

pub struct DashboardData {
    /// Each page with its overall status.
    pub pages: Vec<(StatusPage, ComponentStatus)>,
    pub open_incidents: Vec<Incident>,
    pub maintenance: Vec<Maintenance>,
    /// The latest audit events; None for a role that may not read them.
    pub audit: Option<Vec<AuditEvent>>,
    pub now: Timestamp,
}

pub fn dashboard(frame: &Frame, flash: Option<&Flash>, d: &DashboardData) -> Markup {
    let page_name = |id: i64| {
        d.pages
            .iter()
            .find(|(p, _)| p.id == id)
            .map_or(String::new(), |(p, _)| p.name.clone())
    };
    let body = html! {
        header.top {
            h1 { "Dashboard" }
            @if frame.may(Permission::IncidentsWrite) {
                a.button href="/admin/incidents/new" { "Report an incident" }
            }
        }
        div.grid {
            section.card aria-labelledby="h-pages" {
                h2 #h-pages { "Status pages" }
                @if d.pages.is_empty() {
                    p.empty { "No status page yet." }
                    @if frame.may(Permission::PagesWrite) {
                        p { a href="/admin/pages" { "Create the first one" } " under Status pages." }
                    }
                } @else {
                    ul.rows {
                        @for (p, status) in &d.pages {
                            li {
                                span { a href=(format!("/s/{}", p.slug)) { (p.name) } " " span.muted { "/s/" (p.slug) } }
                                span class=(format!("pill s-{}", status.as_str())) { (status_label(*status)) }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="h-incidents" {
                h2 #h-incidents { "Open incidents" }
                @if d.open_incidents.is_empty() {
                    p.empty { "No open incidents." }
                } @else {
                    ul.rows {
                        @for i in &d.open_incidents {
                            li {
                                span { strong { (i.title) } br; span.muted { (page_name(i.status_page_id)) " · " (i.status.as_str()) } }
                                span class=(format!("pill s-{}", i.impact.as_str())) { (i.impact.as_str()) }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="h-maintenance" {
                h2 #h-maintenance { "Maintenance" }
                @if d.maintenance.is_empty() {
                    p.empty { "Nothing under way or planned." }
                } @else {
                    ul.rows {
                        @for m in &d.maintenance {
                            li {
                                span { strong { (m.title) } br; span.muted { (page_name(m.status_page_id)) " · " (when(m.scheduled_start_time)) " – " (when(m.scheduled_end_time)) } }
                                span.pill.s-maintenance { (if m.scheduled_start_time <= d.now { "in progress" } else { "scheduled" }) }
                            }
                        }
                    }
                }
            }
            @if let Some(audit) = &d.audit {
            section.card aria-labelledby="h-audit" {
                h2 #h-audit { "Recent activity" }
                @if audit.is_empty() {
                    p.empty { "Nothing yet." }
                } @else {
                    ul.rows {
                        @for e in audit {
                            li {
                                span { code { (e.action) } br; span.muted { (e.actor.label) } }
                                span.muted { (when(e.at)) }
                            }
                        }
                    }
                }
            }
            }
        }
    };
    page(frame, "Dashboard", flash, body)
}
