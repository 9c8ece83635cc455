//! Maintenance: windows under way, planned and past, with their moves
//! (start, complete, cancel, delete), and the form that schedules one.
//! Times are entered and shown in UTC.

use super::{Frame, Input, action, bridge, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::{Component, Maintenance, MaintenanceStatus, StatusPage};

pub struct MaintenanceScreen {
    pub windows: Vec<Maintenance>,
    pub pages: Vec<StatusPage>,
    pub components: Vec<Component>,
}

pub fn maintenance_list(frame: &Frame, flash: Option<&Flash>, s: &MaintenanceScreen) -> Markup {
    let back = "/admin/maintenance";
    let page_name = |id: i64| {
        s.pages
            .iter()
            .find(|p| p.id == id)
            .map_or("", |p| p.name.as_str())
    };
    let body = html! {
        header.top { h1 { "Maintenance" } }
        section.card aria-labelledby="h-windows" {
            h2 #h-windows { "Windows" }
            @if s.windows.is_empty() { p.empty { "No maintenance scheduled." } }
            ul.rows {
                @for m in &s.windows {
                    li {
                        span {
                            strong { (m.title) }
                            br; span.muted { (page_name(m.status_page_id)) " · " (when(m.scheduled_start_time)) " – " (when(m.scheduled_end_time)) (if m.auto_start { " · automatic" } else { "" }) }
                        }
                        span.actions {
                            span.pill.s-maintenance { (m.status.as_str().replace('_', " ")) }
                            @match m.status {
                                MaintenanceStatus::Scheduled => {
                                    (action(frame, back, &format!("/api/maintenance/{}/start", m.id), "POST", "Start", None, Some("Maintenance started.")))
                                    (action(frame, back, &format!("/api/maintenance/{}/cancel", m.id), "POST", "Cancel", Some("Cancel this window?"), Some("Maintenance cancelled.")))
                                }
                                MaintenanceStatus::InProgress => {
                                    (action(frame, back, &format!("/api/maintenance/{}/complete", m.id), "POST", "Complete", None, Some("Maintenance completed.")))
                                }
                                _ => {}
                            }
                            (action(frame, back, &format!("/api/maintenance/{}", m.id), "DELETE", "Delete", Some("Delete this window?"), Some("Maintenance deleted.")))
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="h-schedule" {
            h2 #h-schedule { "Schedule maintenance" }
            @if s.pages.is_empty() {
                p.empty { "Create a status page first." }
            } @else {
                form.stack method="post" action="/api/maintenance" {
                    (bridge(back, back, Some("Maintenance scheduled."), Some(frame.csrf)))
                    div.field {
                        label for="f-mpage" { "Status page" }
                        select #f-mpage name="statusPageId:int" required {
                            @for p in &s.pages { option value=(p.id) { (p.name) } }
                        }
                    }
                    (Input::new("title", "Title", "text").render(flash))
                    (Input { required: false, ..Input::new("description", "Description", "textarea") }.render(flash))
                    (Input { form_name: Some("scheduledStartTime:datetime"), hint: Some("UTC."), ..Input::new("scheduledStartTime", "Starts", "datetime-local") }.render(flash))
                    (Input { form_name: Some("scheduledEndTime:datetime"), hint: Some("UTC."), ..Input::new("scheduledEndTime", "Ends", "datetime-local") }.render(flash))
                    fieldset.field {
                        legend { "Affected components" }
                        div.choices {
                            @for c in &s.components {
                                label { input type="checkbox" name="componentIds[]:int" value=(c.id); (c.name) span.muted { " (" (page_name(c.status_page_id)) ")" } }
                            }
                        }
                    }
                    div.field { label { input type="checkbox" name="autoStart:bool"; " Start and complete automatically at these times" } }
                    div { button type="submit" { "Schedule" } }
                }
            }
        }
    };
    page(frame, "Maintenance", flash, body)
}
