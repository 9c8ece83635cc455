//! Maintenance: windows under way, planned and past, with their moves
//! (start, complete, cancel, edit, delete), and the form that schedules one
//! on the page being worked on. Times are entered and shown in each page's
//! time zone (the form bridge reads them in the zone its `_tz` names).

use super::{Frame, Input, action, bridge, local_input, page, when_in};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::recurring::{Recurring, WEEKDAYS, in_words};
use upstate_core::roles::Permission;
use upstate_core::{Component, Maintenance, MaintenanceStatus, StatusPage};

pub struct MaintenanceScreen {
    pub windows: Vec<Maintenance>,
    /// Recurring templates and the starts of their next occurrences.
    pub recurring: Vec<(Recurring, Vec<upstate_core::Timestamp>)>,
    pub pages: Vec<StatusPage>,
    pub components: Vec<Component>,
    /// The page new windows go on (the one being worked on).
    pub current: Option<i64>,
    pub now: upstate_core::Timestamp,
}

/// The boxes a refused form had ticked (`name[]`), or `fallback`.
fn ticked_in(flash: Option<&Flash>, name: &str, fallback: &[i64]) -> Vec<i64> {
    match flash.and_then(|f| f.values_of(name)) {
        Some(values) => values.iter().filter_map(|v| v.parse().ok()).collect(),
        None => fallback.to_vec(),
    }
}

/// The affected-components boxes of one page's window.
fn affected(s: &MaintenanceScreen, page: i64, ticked: &[i64], prefix: &str) -> Markup {
    html! {
        fieldset.field {
            legend { "Affected components" }
            // Sends `[]` when every box is cleared: "none", not "unchanged".
            input type="hidden" name="componentIds[]:int" value="";
            div.choices {
                @for c in s.components.iter().filter(|c| c.status_page_id == page) {
                    @let id = format!("{prefix}-c-{}", c.id);
                    label for=(id) { input #(id) type="checkbox" name="componentIds[]:int" value=(c.id) checked[ticked.contains(&c.id)]; (c.name) }
                }
            }
        }
    }
}

/// Edit one window that has not ended: its words, times and components.
fn edit(frame: &Frame, s: &MaintenanceScreen, m: &Maintenance, p: &StatusPage) -> Markup {
    let back = "/admin/maintenance";
    let prefix = format!("m{}", m.id);
    let tz = p.time_zone.as_str();
    html! {
        details.edit {
            summary { "Edit" span.visually-hidden { " " (m.title) } }
            form.stack method="post" action=(format!("/api/maintenance/{}", m.id)) {
                (bridge(back, back, Some("Maintenance changed."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PATCH";
                input type="hidden" name="_tz" value=(tz);
                div.field {
                    label for=(format!("{prefix}-title")) { "Title" span.visually-hidden { " of " (m.title) } }
                    input #(format!("{prefix}-title")) type="text" name="title" value=(m.title) required;
                }
                div.field {
                    label for=(format!("{prefix}-desc")) { "Description" span.visually-hidden { " of " (m.title) } }
                    textarea #(format!("{prefix}-desc")) name="description" data-preview="message" aria-describedby=(format!("{prefix}-desc-hint")) { (m.description) }
                    span.hint id=(format!("{prefix}-desc-hint")) { "Markdown." }
                }
                div.field {
                    label for=(format!("{prefix}-start")) { "Starts" span.visually-hidden { " (" (m.title) ")" } }
                    input #(format!("{prefix}-start")) type="datetime-local" name="scheduledStartTime:datetime" value=(local_input(m.scheduled_start_time, tz)) required;
                    span.hint { (tz) }
                }
                div.field {
                    label for=(format!("{prefix}-end")) { "Ends" span.visually-hidden { " (" (m.title) ")" } }
                    input #(format!("{prefix}-end")) type="datetime-local" name="scheduledEndTime:datetime" value=(local_input(m.scheduled_end_time, tz)) required;
                    span.hint { (tz) }
                }
                (affected(s, m.status_page_id, &m.affected_components, &prefix))
                div.field {
                    input type="hidden" name="autoStart:bool" value="";
                    label { input type="checkbox" name="autoStart:bool" checked[m.auto_start]; " Start and complete automatically" }
                }
                div { button.secondary type="submit" { "Save changes" span.visually-hidden { " to " (m.title) } } }
            }
        }
    }
}

pub fn maintenance_list(frame: &Frame, flash: Option<&Flash>, s: &MaintenanceScreen) -> Markup {
    let back = "/admin/maintenance";
    let page_of = |id: i64| s.pages.iter().find(|p| p.id == id);
    let current = s.current.and_then(page_of);
    // A viewer sees the windows; the controls are for those who may plan them.
    let w = frame.may(Permission::IncidentsWrite);
    let body = html! {
        header.top { h1 { "Maintenance" } }
        section.card aria-labelledby="h-windows" {
            h2 #h-windows { "Windows" }
            @if s.windows.is_empty() { p.empty { "No maintenance scheduled." } }
            @else { ul.rows {
                @for m in &s.windows {
                    @let p = page_of(m.status_page_id);
                    @let tz = p.map_or("UTC", |p| p.time_zone.as_str());
                    li {
                        span {
                            strong { (m.title) }
                            br; span.muted { (p.map_or("", |p| p.name.as_str())) " · " (when_in(m.scheduled_start_time, tz)) " – " (when_in(m.scheduled_end_time, tz)) (if m.auto_start { " · automatic" } else { "" }) }
                        }
                        span.actions {
                            (super::dashboard::window_pill(m, s.now))
                            @if w {
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
                        @if let (Some(p), true, true) = (p, w, matches!(m.status, MaintenanceStatus::Scheduled | MaintenanceStatus::InProgress)) {
                            (edit(frame, s, m, p))
                        }
                    }
                }
            } }
        }
        @if w {
        section.card aria-labelledby="h-schedule" {
            h2 #h-schedule { "Schedule maintenance" }
            @match current {
                None => p.empty { "Create a status page first." },
                Some(p) => {
                    p.muted {
                        "On " strong { (p.name) } ", times in " strong { (p.time_zone) } ". "
                        a href="/admin/pages" { "Work on another page" }
                    }
                    @let once = flash.and_then(|f| f.of_form("once"));
                    form.stack method="post" action="/api/maintenance" {
                        (bridge(back, back, Some("Maintenance scheduled."), Some(frame.csrf)))
                        input type="hidden" name="_form" value="once";
                        input type="hidden" name="statusPageId:int" value=(p.id);
                        input type="hidden" name="_tz" value=(p.time_zone);
                        (Input::new("title", "Title", "text").render(once))
                        (Input { required: false, hint: Some("Markdown."), preview: Some("message"), ..Input::new("description", "Description", "textarea") }.render(once))
                        (Input { form_name: Some("scheduledStartTime:datetime"), hint: Some(&p.time_zone), ..Input::new("scheduledStartTime", "Starts", "datetime-local") }.render(once))
                        (Input { form_name: Some("scheduledEndTime:datetime"), hint: Some(&p.time_zone), ..Input::new("scheduledEndTime", "Ends", "datetime-local") }.render(once))
                        (affected(s, p.id, &ticked_in(once, "componentIds", &[]), "new"))
                        div.field { label { input type="checkbox" name="autoStart:bool"; " Start and complete automatically at these times" } }
                        div { button type="submit" { "Schedule" } }
                    }
                }
            }
        }
        }
        (recurring_section(frame, flash, s, current))
    };
    page(frame, "Maintenance", flash, body)
}

/// Templates of maintenance that repeats, and the form to add one.
fn recurring_section(
    frame: &Frame,
    flash: Option<&Flash>,
    s: &MaintenanceScreen,
    current: Option<&StatusPage>,
) -> Markup {
    let back = "/admin/maintenance";
    let page_of = |id: i64| s.pages.iter().find(|p| p.id == id);
    html! {
        section.card aria-labelledby="h-recurring" {
            h2 #h-recurring { "Recurring maintenance" }
            p.muted { "Windows that repeat (backups, patch nights) are made from a rule, a few days ahead, and announced like any other window. Delete a window to skip one occurrence." }
            @if s.recurring.is_empty() { p.empty { "No recurring maintenance." } }
            @else { ul.rows.wraps {
                @for (r, next) in &s.recurring {
                    @let tz = r.zone(page_of(r.status_page_id).map_or("UTC", |p| p.time_zone.as_str()));
                    li {
                        span {
                            strong { (r.title) }
                            br; span.muted {
                                @match in_words(&r.rrule) {
                                    Some(words) => { (words) },
                                    None => { code { (r.rrule) } },
                                }
                                " at " (r.first_start.get(11..).unwrap_or_default()) " from " (r.first_start.get(..10).unwrap_or_default()) " (" (tz) "), "
                                (r.duration_minutes) " minutes"
                                @if r.auto_start { ", starts and completes automatically" }
                            }
                            br; span.muted {
                                @match next.first() {
                                    Some(t) => { "Next: " (when_in(*t, tz)) },
                                    None => { "No occurrence in the next " (r.horizon_days) " days" },
                                }
                            }
                        }
                        @if frame.may(Permission::IncidentsWrite) {
                        span.actions {
                            (action(frame, back, &format!("/api/maintenance/recurring/{}", r.id), "DELETE", "Delete", Some("Delete this rule? Windows it made stay."), Some("Recurring maintenance deleted.")))
                        }
                        }
                    }
                }
            } }
            @if let (Some(p), true) = (current, frame.may(Permission::IncidentsWrite)) {
                h3 { "Repeat maintenance on " (p.name) }
                (recurring_form(frame, flash.and_then(|f| f.of_form("recurring")), s, p))
            }
        }
    }
}

/// How a person picks a rule, and the choice's label.
const REPEATS: [(&str, &str); 4] = [
    ("daily", "Every day"),
    ("weekly", "Every week, on the days below"),
    ("monthly", "Every month, on the day below"),
    ("rule", "By an RFC 5545 rule (advanced)"),
];

/// The form that adds a recurring template: the rule picked as a person
/// thinks of it, the next occurrences previewed as one types (our script),
/// and a refusal that keeps everything typed in this form only.
fn recurring_form(
    frame: &Frame,
    rf: Option<&Flash>,
    s: &MaintenanceScreen,
    p: &StatusPage,
) -> Markup {
    let back = "/admin/maintenance";
    let chosen = rf
        .and_then(|f| f.value_of("repeat"))
        .unwrap_or_else(|| "weekly".into());
    let days = rf
        .and_then(|f| f.values_of("weekdays"))
        .unwrap_or_else(|| vec!["SU".into()]);
    let error = |field: &str| rf.and_then(|f| f.error_of(field));
    let zone_hint = format!(
        "Empty: the page's, {}. Another IANA name such as America/Chicago keeps the windows at that place's wall-clock time.",
        p.time_zone
    );
    html! {
        form.stack #rec-form method="post" action="/api/maintenance/recurring" data-recurring=(p.time_zone) {
            (bridge(back, back, Some("Recurring maintenance added."), Some(frame.csrf)))
            input type="hidden" name="_form" value="recurring";
            input type="hidden" name="statusPageId:int" value=(p.id);
            (Input { id: Some("rec-title"), ..Input::new("title", "Title", "text") }.render(rf))
            fieldset.field.invalid[error("repeat").is_some()] #rec-repeat {
                legend { "Repeats" }
                div.choices {
                    @for (value, label) in REPEATS {
                        label { input type="radio" name="repeat" value=(value) checked[chosen == value]; (label) }
                    }
                }
                @if let Some(e) = error("repeat") { span.error { (e) } }
            }
            fieldset.field.invalid[error("weekdays").is_some()] #rec-weekdays data-repeat="weekly" {
                legend { "Days of the week" }
                div.choices {
                    @for (code, name) in WEEKDAYS {
                        label { input type="checkbox" name="weekdays[]" value=(code) checked[days.iter().any(|d| d == code)]; (name) }
                    }
                }
                @if let Some(e) = error("weekdays") { span.error { (e) } }
            }
            div data-repeat="monthly" {
                (Input { id: Some("rec-monthday"), form_name: Some("monthDay:int"), required: false, hint: Some("1 to 31; months without that day are skipped."), ..Input::new("monthDay", "Day of the month", "number") }.render(rf))
            }
            div data-repeat="rule" {
                (Input { id: Some("rec-rrule"), required: false, hint: Some("FREQ=MONTHLY;BYDAY=1SA is the first Saturday of each month; FREQ=WEEKLY;INTERVAL=2;BYDAY=SU every other Sunday. Daily or less often."), ..Input::new("rrule", "Rule", "text") }.render(rf))
            }
            (Input { id: Some("rec-first"), hint: Some("In the time zone below."), ..Input::new("firstStart", "First window starts", "datetime-local") }.render(rf))
            (Input { id: Some("rec-zone"), form_name: Some("timeZone:opt"), required: false, hint: Some(&zone_hint), ..Input::new("timeZone", "Time zone", "text") }.render(rf))
            (Input { id: Some("rec-duration"), form_name: Some("durationMinutes:int"), value: Some("60".into()), ..Input::new("durationMinutes", "Duration in minutes", "number") }.render(rf))
            (Input { id: Some("rec-horizon"), form_name: Some("horizonDays:int"), value: Some("14".into()), hint: Some("Windows are made and announced this many days ahead."), ..Input::new("horizonDays", "Days ahead", "number") }.render(rf))
            (affected(s, p.id, &ticked_in(rf, "componentIds", &[]), "rec"))
            div.field {
                input type="hidden" name="autoStart:bool" value="";
                label { input type="checkbox" name="autoStart:bool" checked[rf.and_then(|f| f.value_of("autoStart")).is_none_or(|v| v == "on")]; " Start and complete each window automatically" }
            }
            div.occurrences #rec-preview aria-live="polite" hidden {
                h4 { "Next windows" }
                p.muted.words {}
                ol {}
            }
            div { button type="submit" { "Add recurring maintenance" } }
        }
    }
}
