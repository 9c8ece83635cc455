//! One component's screen: its status, uptime by period, latest changes,
//! and what affects it now (the same data as `/api/components/{id}/details`).

use super::{Frame, component_status_name, page, when};
use crate::component_details::ComponentDetails;
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::MaintenanceStatus;

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "no data".into(), |v| format!("{v:.2} %"))
}

pub fn component(frame: &Frame, flash: Option<&Flash>, d: &ComponentDetails) -> Markup {
    let c = &d.component;
    let body = html! {
        header.top {
            h1 { (c.name) }
            a.button.secondary href=(format!("/admin/pages/{}", d.status_page.id)) { "Back to " (d.status_page.name) }
        }
        p.muted {
            span class=(format!("pill s-{}", c.status.as_str())) { (component_status_name(c.status)) }
        }
        @if !c.description.is_empty() { div.muted.msg.rendered { (crate::views::message_markdown(&c.description)) } }
        div.grid {
            section.card aria-labelledby="h-uptime" {
                h2 #h-uptime { "Uptime" }
                dl.facts {
                    dt { "Last 24 hours" } dd { (percent(d.uptime.last24h)) }
                    dt { "Last 7 days" } dd { (percent(d.uptime.last7d)) }
                    dt { "Last 30 days" } dd { (percent(d.uptime.last30d)) }
                    dt { "Last 90 days" } dd { (percent(d.uptime.last90d)) }
                }
                p.muted { "Major outage counts as down, partial outage as 30 % down." }
            }
            section.card aria-labelledby="h-changes" {
                h2 #h-changes { "Latest status changes" }
                @if d.recent_changes.is_empty() { p.empty { "None in the last 90 days." } }
                @else { ul.rows {
                    @for m in &d.recent_changes {
                        li { span { (component_status_name(m.status)) } span.muted { (when(m.at)) } }
                    }
                } }
            }
        }
        section.card aria-labelledby="h-monitor" {
            h2 #h-monitor { "Monitor" }
            @if let Some(m) = &d.monitor {
                p {
                    a href=(format!("/admin/monitors/{}", m.id)) { "Its monitor" }
                    " is " strong { (m.state.as_str()) }
                    @if m.manual { " · held by hand (the monitor does not move it)" }
                    @if let Some(at) = m.last_check_at { span.muted { " · last check " (when(at)) @if let Some(ms) = m.last_latency_ms { ", " (ms) " ms" } } }
                }
                @if let Some(e) = &m.last_error { p.muted { (e) } }
            } @else {
                p.empty { "Nobody checks it automatically. " a href="/admin/monitors#h-new" { "Add a monitor" } }
            }
        }
        @let (now, planned): (Vec<_>, Vec<_>) = d.maintenance.iter().partition(|m| m.status == MaintenanceStatus::InProgress);
        section.card aria-labelledby="h-now" {
            h2 #h-now { "Affecting it now" }
            @if d.open_incidents.is_empty() && now.is_empty() { p.empty { "Nothing." } }
            @else { ul.rows {
                @for i in &d.open_incidents {
                    li { a href=(format!("/admin/incidents/{}", i.id)) { (i.title) } span.muted { "incident · " (i.status.as_str()) } }
                }
                @for m in &now {
                    li { a href="/admin/maintenance" { (m.title) } span.muted { "maintenance under way · until " (when(m.scheduled_end_time)) } }
                }
            } }
        }
        @if !planned.is_empty() {
            section.card aria-labelledby="h-planned" {
                h2 #h-planned { "Planned maintenance" }
                ul.rows {
                    @for m in &planned {
                        li { a href="/admin/maintenance" { (m.title) } span.muted { (when(m.scheduled_start_time)) " – " (when(m.scheduled_end_time)) } }
                    }
                }
            }
        }
    };
    page(frame, &c.name, flash, body)
}
