//! One component's screen: its status, uptime by period, latest changes,
//! and what affects it now (the same data as `/api/components/{id}/details`).

use super::{Frame, Input, bridge, component_status_name, page, when};
use crate::component_details::ComponentDetails;
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::third_party::Follow;
use upstate_core::{ComponentStatus, MaintenanceStatus, SourceKind};

fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "no data".into(), |v| format!("{v:.2} %"))
}

fn kind_name(k: SourceKind) -> &'static str {
    match k {
        SourceKind::Statuspage => "Status page (Statuspage, Upstate and compatible summary.json)",
        SourceKind::Feed => "RSS or Atom status feed",
    }
}

/// The follow form's fields shared by "follow" and "change": the vendor
/// component is a choice once the vendor's page has been read.
fn follow_fields(flash: Option<&Flash>, f: Option<&Follow>) -> Markup {
    let c = f.map(|f| f.config.clone()).unwrap_or_default();
    let kind_now = flash
        .and_then(|x| x.value_of("kind"))
        .unwrap_or_else(|| c.kind.as_str().to_string());
    let feed_now = flash
        .and_then(|x| x.value_of("feedStatus"))
        .unwrap_or_else(|| c.feed_status.as_str().to_string());
    let offered = f
        .map(|f| f.vendor_components.as_slice())
        .unwrap_or_default();
    html! {
        div.field {
            label for="f-kind" { "What the vendor publishes" }
            select #f-kind name="kind" {
                @for k in SourceKind::ALL {
                    option value=(k.as_str()) selected[kind_now == k.as_str()] { (kind_name(*k)) }
                }
            }
        }
        (Input { value: f.map(|_| c.url.clone()), autocomplete: Some("url"),
            hint: Some("The vendor's status page (like https://www.githubstatus.com) or its feed's address."),
            ..Input::new("url", "Address", "url") }.render(flash))
        @if c.kind == SourceKind::Statuspage && !offered.is_empty() {
            div.field {
                label for="f-vendorComponent" { "Vendor component" }
                select #f-vendorComponent name="vendorComponent" {
                    option value="" selected[c.vendor_component.is_empty()] { "The whole page (its overall status)" }
                    @for v in offered {
                        option value=(v.name) selected[c.vendor_component == v.name || c.vendor_component == v.id] { (v.name) }
                    }
                }
            }
        } @else {
            (Input { value: f.map(|_| c.vendor_component.clone()), required: false,
                hint: Some("Status pages only: one of the vendor's components, by name or id. Empty: the whole page. Once the page is read, its components are offered here."),
                ..Input::new("vendorComponent", "Vendor component", "text") }.render(flash))
        }
        div.field {
            label for="f-feedStatus" { "Feeds: status while the newest entry is an open incident" }
            select #f-feedStatus name="feedStatus" {
                @for s in [ComponentStatus::Degraded, ComponentStatus::PartialOutage, ComponentStatus::MajorOutage] {
                    option value=(s.as_str()) selected[feed_now == s.as_str()] { (component_status_name(s)) }
                }
            }
        }
        (Input { value: Some(c.interval_seconds.to_string()), form_name: Some("intervalSeconds:int"),
            hint: Some("From 60 to 86400."), ..Input::new("intervalSeconds", "Poll every (seconds)", "number") }.render(flash))
        (Input { value: f.map(|_| c.link.clone()), required: false,
            hint: Some("Where the page's third-party mark links. Empty: the vendor's page as its answer names it."),
            ..Input::new("link", "Link for visitors", "url") }.render(flash))
        div.field { div.choices {
            input type="hidden" name="notify:bool" value="";
            label { input type="checkbox" name="notify:bool" checked[c.notify]; "Tell subscribers when the vendor moves it (off: the page and the team's channels show it; subscribers hear nothing)" }
        } }
    }
}

/// "Third-party status": follow a vendor, or how the follow stands.
fn vendor(frame: &Frame, flash: Option<&Flash>, d: &ComponentDetails) -> Markup {
    let c = &d.component;
    let back = format!("/admin/components/{}", c.id);
    let can = frame.may(upstate_core::roles::Permission::PagesWrite);
    html! {
        section.card aria-labelledby="h-vendor" {
            h2 #h-vendor { "Third-party status" }
            @if let Some(f) = &d.third_party {
                @let route = format!("/api/third-party/{}", f.id);
                @let mark = f.mark();
                p {
                    "Mirrors " a href=(mark.url) rel="noopener nofollow" { (mark.vendor) }
                    @if !f.config.vendor_component.is_empty() { " · " strong { (f.config.vendor_component) } }
                    " · the vendor says "
                    @match f.vendor_status {
                        Some(s) => span class=(format!("pill s-{}", s.as_str())) { (component_status_name(s)) },
                        None => span.pill.s-none { "nothing yet" },
                    }
                }
                p.muted {
                    @if let Some(at) = f.last_polled_at { "Last poll " (when(at)) ". " }
                    "Next poll " (when(f.next_poll_at)) ". "
                    @if f.config.notify { "Subscribers hear of its moves." } @else { "Subscribers do not hear of its moves." }
                }
                @if let Some(e) = &f.last_error { p.alert.error role="status" { "The last poll read nothing: " (e) } }
                @if can { div.actions style="justify-content: flex-start" {
                    form.inline method="post" action=(format!("{route}/poll")) {
                        (bridge(&back, &back, Some("Vendor polled."), Some(frame.csrf)))
                        button.secondary type="submit" { "Poll now" }
                    }
                    form.inline method="post" action=(route) data-confirm="Stop following the vendor? The component keeps its status and is yours to set." {
                        (bridge(&back, &back, Some("No longer following the vendor."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="DELETE";
                        button.danger type="submit" { "Stop following" }
                    }
                } }
                @if can { details {
                    summary { "Change" }
                    form.stack method="post" action=(route) {
                        (bridge(&back, &back, Some("Saved."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="PATCH";
                        (follow_fields(flash, Some(f)))
                        div { button type="submit" { "Save" } }
                    }
                } }
            } @else if d.monitor.is_some() {
                p.empty { "Its monitor sets its status. Remove the monitor to mirror a vendor's status instead." }
            } @else if !can {
                p.empty { "Its status is set by the team." }
            } @else {
                p.muted { "A component can mirror a vendor you depend on (a cloud, a payment provider): Upstate polls the vendor's status page or feed and the page marks the component third-party, with a link to the vendor." }
                form.stack method="post" action="/api/third-party" {
                    (bridge(&back, &back, Some("Following the vendor: the first poll runs within seconds."), Some(frame.csrf)))
                    input type="hidden" name="componentId:int" value=(c.id);
                    (follow_fields(flash, None))
                    div { button type="submit" { "Follow vendor" } }
                }
            }
        }
    }
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
            @if d.managed {
                " " span.pill.s-none { "Managed as code" }
                " Declared in a setup file: the next " code { "upstate apply" } " puts back what the file says."
            }
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
        (vendor(frame, flash, d))
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
