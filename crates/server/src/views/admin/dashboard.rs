//! The dashboard: every page's overall status, open incidents, maintenance
//! under way and coming, the latest audit events, and "report an incident".

use super::{Frame, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::audit::AuditEvent;
use upstate_core::monitors::{CheckResult, Monitor};
use upstate_core::public::status_label;
use upstate_core::roles::Permission;
use upstate_core::{
    ComponentStatus, Incident, Maintenance, MaintenanceStatus, StatusPage, Timestamp,
};

pub struct DashboardData {
    /// Each page with its overall status.
    pub pages: Vec<(StatusPage, ComponentStatus)>,
    pub open_incidents: Vec<Incident>,
    pub maintenance: Vec<Maintenance>,
    /// The latest audit events; None for a role that may not read them.
    pub audit: Option<Vec<AuditEvent>>,
    pub now: Timestamp,
    pub monitors: MonitorGlance,
    /// Incidents integrations drafted that wait for a person.
    pub drafts: usize,
}

/// The monitors in a few numbers, and the failing ones with their checks.
pub struct MonitorGlance {
    pub total: usize,
    pub up: usize,
    pub paused: usize,
    /// Down or slow, and not paused.
    pub failing_count: usize,
    /// The first of those (the monitor, its component's name and its
    /// latest checks), the worst first; the monitors screen lists them all.
    pub failing: Vec<(Monitor, String, Vec<CheckResult>)>,
}

pub fn dashboard(frame: &Frame, flash: Option<&Flash>, d: &DashboardData) -> Markup {
    let page_name = |id: i64| {
        d.pages
            .iter()
            .find(|(p, _)| p.id == id)
            .map_or(String::new(), |(p, _)| p.name.clone())
    };
    let overdue = d
        .maintenance
        .iter()
        .filter(|m| window_state(m, d.now).1)
        .count();
    let body = html! {
        header.top {
            h1 { "Dashboard" }
            @if frame.may(Permission::IncidentsWrite) {
                a.button href="/admin/incidents/new" { "Report an incident" }
            }
        }
        @if d.drafts > 0 {
            div.alert.warn #drafts-waiting {
                strong { (d.drafts) (if d.drafts == 1 { " incident drafted by your alerting waits" } else { " incidents drafted by your alerting wait" }) }
                " for approval; nothing is public until someone publishes. "
                a href="/admin/incidents#h-drafts" { "Review them" }
            }
        }
        @if overdue > 0 {
            div.alert.warn #overdue {
                strong { (overdue) (if overdue == 1 { " maintenance window has passed its planned end" } else { " maintenance windows have passed their planned end" }) }
                " without being started or completed; visitors see what the record says. "
                a href="/admin/maintenance" { "Complete, cancel or move them" }
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
                                span { a href=(format!("/admin/incidents/{}", i.id)) { strong { (i.title) } } br; span.muted { (page_name(i.status_page_id)) " · " (i.status.as_str()) } }
                                span class=(format!("pill s-{}", i.impact.as_str())) { (i.impact.as_str()) }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="h-monitors" {
                @let g = &d.monitors;
                h2 #h-monitors { "Monitors" }
                @if g.total == 0 {
                    p.empty { "No monitors yet." }
                    p { a href="/admin/monitors" { "Watch a component" } " and its status follows its checks." }
                } @else {
                    p.counts {
                        span.pill.s-operational { (g.up) " up" }
                        " " span class=(if g.failing_count == 0 { "pill s-none" } else { "pill s-major_outage" }) { (g.failing_count) " failing" }
                        " " span.pill.s-degraded { (g.paused) " paused" }
                        " " a href="/admin/monitors" { "All " (g.total) }
                    }
                    @if g.failing.is_empty() {
                        p.muted { "Every monitor that runs is up." }
                    } @else {
                        ul.rows {
                            @for (m, name, recent) in &g.failing {
                                li {
                                    span {
                                        a href=(format!("/admin/monitors/{}", m.id)) { strong { (name) } }
                                        " " span class=(if m.state == upstate_core::MonitorState::Down { "pill s-major_outage" } else { "pill s-degraded" }) { (if m.state == upstate_core::MonitorState::Down { "Down" } else { "Slow" }) }
                                        @if let Some(e) = &m.last_error { br; span.muted { (e) } }
                                        br; (super::monitors::strip(m, recent))
                                    }
                                }
                            }
                        }
                        @if g.failing_count > g.failing.len() {
                            p { a href="/admin/monitors?state=failing" { "All " (g.failing_count) " failing monitors" } }
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
                                (window_pill(m, d.now))
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

/// What a window is now, as the operator needs to hear it, and whether it
/// asks for a hand: its end passed and nobody started or completed it.
pub fn window_state(m: &Maintenance, now: Timestamp) -> (&'static str, bool) {
    let ended = m.scheduled_end_time <= now;
    match m.status {
        MaintenanceStatus::Scheduled if ended => ("ended, never started", true),
        MaintenanceStatus::Scheduled if m.scheduled_start_time <= now => {
            ("due, not started", false)
        }
        MaintenanceStatus::Scheduled => ("scheduled", false),
        MaintenanceStatus::InProgress if ended => ("in progress past its end", true),
        MaintenanceStatus::InProgress => ("in progress", false),
        MaintenanceStatus::Completed => ("completed", false),
        MaintenanceStatus::Cancelled => ("cancelled", false),
    }
}

/// A window's state as a pill, marked when it needs the operator.
pub fn window_pill(m: &Maintenance, now: Timestamp) -> Markup {
    let (words, overdue) = window_state(m, now);
    html! {
        span class=(if overdue { "pill s-major_outage" } else { "pill s-maintenance" }) { (words) }
    }
}
