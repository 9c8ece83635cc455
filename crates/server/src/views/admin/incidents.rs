//! Reporting an incident: the page, title, status, impact, affected
//! components and the first message, posted to `POST /api/incidents`.

use super::{Frame, Input, bridge, page};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::{Component, StatusPage};

pub struct IncidentForm {
    pub pages: Vec<StatusPage>,
    pub components: Vec<Component>,
}

const STATUSES: [(&str, &str); 4] = [
    ("investigating", "Investigating"),
    ("identified", "Identified"),
    ("monitoring", "Monitoring"),
    ("resolved", "Resolved"),
];
const IMPACTS: [(&str, &str); 4] = [
    ("none", "None"),
    ("minor", "Minor"),
    ("major", "Major"),
    ("critical", "Critical"),
];

pub fn incident_new(frame: &Frame, flash: Option<&Flash>, f: &IncidentForm) -> Markup {
    let last = |field: &str| flash.and_then(|fl| fl.value_of(field));
    let error = |field: &str| flash.and_then(|fl| fl.error_of(field)).map(str::to_string);
    let status = last("status").unwrap_or_else(|| "investigating".into());
    let impact = last("impact").unwrap_or_else(|| "minor".into());
    let page_id = last("statusPageId");
    let body = html! {
        header.top { h1 { "Report an incident" } }
        @if f.pages.is_empty() {
            div.card { p.empty { "Create a status page first: incidents belong to one." } }
        } @else {
            form.stack.card method="post" action="/api/incidents" {
                (bridge("/admin/incidents/new", "/admin", Some("Incident reported."), Some(frame.csrf)))
                div.field.invalid[error("statusPageId").is_some()] {
                    label for="f-page" { "Status page" }
                    select #f-page name="statusPageId:int" required {
                        @for p in &f.pages {
                            option value=(p.id) selected[page_id.as_deref() == Some(p.id.to_string().as_str())] { (p.name) }
                        }
                    }
                    @if let Some(e) = error("statusPageId") { span.error { (e) } }
                }
                (Input { hint: Some("What users notice, in a few words."), ..Input::new("title", "Title", "text") }.render(flash))
                fieldset.field.invalid[error("status").is_some()] {
                    legend { "Status" }
                    div.choices {
                        @for (value, label) in STATUSES {
                            label { input type="radio" name="status" value=(value) checked[status == value]; (label) }
                        }
                    }
                    @if let Some(e) = error("status") { span.error { (e) } }
                }
                div.field.invalid[error("impact").is_some()] {
                    label for="f-impact" { "Impact" }
                    select #f-impact name="impact" {
                        @for (value, label) in IMPACTS {
                            option value=(value) selected[impact == value] { (label) }
                        }
                    }
                    @if let Some(e) = error("impact") { span.error { (e) } }
                }
                fieldset.field.invalid[error("componentIds").is_some()] {
                    legend { "Affected components" }
                    @if f.components.is_empty() {
                        p.empty { "This page has no components." }
                    }
                    div.choices {
                        @for c in &f.components {
                            @let page = f.pages.iter().find(|p| p.id == c.status_page_id).map_or("", |p| p.name.as_str());
                            label { input type="checkbox" name="componentIds[]:int" value=(c.id); (c.name) span.muted { " (" (page) ")" } }
                        }
                    }
                    @if let Some(e) = error("componentIds") { span.error { (e) } }
                }
                (Input { hint: Some("Markdown. Shown as the first update on the public page."), ..Input::new("message", "Message", "textarea") }.render(flash))
                div { button type="submit" { "Report incident" } }
            }
        }
    };
    page(frame, "Report an incident", flash, body)
}
