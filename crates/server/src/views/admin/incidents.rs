//! Reporting an incident: the page, title, status, impact, affected
//! components and the first message, posted to `POST /api/incidents`.

use super::{COMPONENT_STATUSES, Frame, Input, action, bridge, component_status_name, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::postmortem::Postmortem;
use upstate_core::roles::Permission;
use upstate_core::templates::IncidentTemplate;
use upstate_core::{
    Component, ComponentGroup, ComponentStatus, Incident, IncidentStatus, StatusPage,
};

pub struct IncidentForm {
    pub pages: Vec<StatusPage>,
    pub components: Vec<Component>,
    pub groups: Vec<ComponentGroup>,
    pub templates: Vec<IncidentTemplate>,
    /// The template the form starts from, if one was picked.
    pub chosen: Option<IncidentTemplate>,
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

/// The components of `pages` in the order visitors see them: each page's
/// groups in order with their components, then its ungrouped ones; each
/// section titled (with the page's name when there are several).
fn sections<'c>(
    components: &[&'c Component],
    pages: &[StatusPage],
    groups: &[ComponentGroup],
) -> Vec<(String, Vec<&'c Component>)> {
    let with_components: Vec<&StatusPage> = pages
        .iter()
        .filter(|p| components.iter().any(|c| c.status_page_id == p.id))
        .collect();
    let several = with_components.len() > 1;
    let mut out = Vec::new();
    for p in with_components {
        let on_page: Vec<&Component> = components
            .iter()
            .copied()
            .filter(|c| c.status_page_id == p.id)
            .collect();
        let page_groups: Vec<&ComponentGroup> =
            groups.iter().filter(|g| g.status_page_id == p.id).collect();
        let title = |name: &str| {
            if several {
                format!("{} · {name}", p.name)
            } else {
                name.to_string()
            }
        };
        for g in &page_groups {
            let inside: Vec<&Component> = on_page
                .iter()
                .copied()
                .filter(|c| c.group_id == Some(g.id))
                .collect();
            if !inside.is_empty() {
                out.push((title(&g.name), inside));
            }
        }
        let rest: Vec<&Component> = on_page
            .iter()
            .copied()
            .filter(|c| {
                !c.group_id
                    .is_some_and(|id| page_groups.iter().any(|g| g.id == id))
            })
            .collect();
        if !rest.is_empty() {
            let name = match (page_groups.is_empty(), several) {
                (true, true) => p.name.clone(),
                (true, false) => String::new(),
                (false, _) => title("Not in a group"),
            };
            out.push((name, rest));
        }
    }
    out
}

/// The affected-components table of an incident form: per component a box
/// "affected" (when `tick` is given: the ticked ids) and the status it goes
/// to now, `pick` preselecting one (none: "unchanged"); grouped and ordered
/// as on the page.
fn component_moves(
    components: &[&Component],
    pages: &[StatusPage],
    groups: &[ComponentGroup],
    tick: Option<&[i64]>,
    pick: impl Fn(&Component) -> Option<ComponentStatus>,
    id_prefix: &str,
) -> Markup {
    let columns = if tick.is_some() { 3 } else { 2 };
    html! {
        table.moves {
            thead { tr {
                th scope="col" { "Component" }
                @if tick.is_some() { th scope="col" { "Affected" } }
                th scope="col" { "Status it goes to" }
            } }
            @for (title, list) in sections(components, pages, groups) {
                tbody {
                    @if !title.is_empty() {
                        tr.section { th scope="colgroup" colspan=(columns) { (title) } }
                    }
                    @for c in list {
                        @let sel = format!("{id_prefix}-st-{}", c.id);
                        @let chosen = pick(c);
                        tr {
                            th scope="row" { (c.name) " " span class=(format!("pill s-{}", c.status.as_str())) { (component_status_name(c.status)) } }
                            @if let Some(ticked) = tick {
                                td.affected {
                                    input type="checkbox" id=(format!("{id_prefix}-aff-{}", c.id)) name="componentIds[]:int" value=(c.id) checked[ticked.contains(&c.id)];
                                    label for=(format!("{id_prefix}-aff-{}", c.id)) { span.visually-hidden { (c.name) " is " } span.narrow-only { "affected" } }
                                }
                            }
                            td {
                                input type="hidden" name="componentStatuses[][componentId]:int" value=(c.id);
                                label.visually-hidden for=(sel) { "Status of " (c.name) }
                                select id=(sel) name="componentStatuses[][status]:req" {
                                    option value="" selected[chosen.is_none()] { "Unchanged" }
                                    @for s in COMPONENT_STATUSES {
                                        option value=(s.as_str()) selected[chosen == Some(s)] { (component_status_name(s)) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

pub fn incident_new(frame: &Frame, flash: Option<&Flash>, f: &IncidentForm) -> Markup {
    let last = |field: &str| flash.and_then(|fl| fl.value_of(field));
    let error = |field: &str| flash.and_then(|fl| fl.error_of(field)).map(str::to_string);
    let chosen = f.chosen.as_ref();
    let status = last("status")
        .or_else(|| chosen.map(|t| t.status.as_str().to_string()))
        .unwrap_or_else(|| "investigating".into());
    let impact = last("impact")
        .or_else(|| chosen.map(|t| t.impact.as_str().to_string()))
        .unwrap_or_else(|| "minor".into());
    let page_id = last("statusPageId");
    let body = html! {
        header.top {
            h1 { "Report an incident" }
            a.button.secondary href="/admin/templates" { "Templates" }
        }
        @if !f.templates.is_empty() {
            form.inline.card method="get" action="/admin/incidents/new" {
                label for="f-template" { "Start from a template" }
                select #f-template name="template" {
                    @for t in &f.templates {
                        option value=(t.id) selected[chosen.is_some_and(|c| c.id == t.id)] { (t.name) }
                    }
                }
                button.secondary type="submit" { "Use template" }
            }
        }
        @if f.pages.is_empty() {
            div.card { p.empty { "Create a status page first: incidents belong to one." } }
        } @else {
            form.stack.card method="post" action="/api/incidents" {
                (bridge("/admin/incidents/new", "/admin/incidents/{id}", Some("Incident reported."), Some(frame.csrf)))
                div.field.invalid[error("statusPageId").is_some()] {
                    label for="f-page" { "Status page" }
                    select #f-page name="statusPageId:int" required {
                        @for p in &f.pages {
                            option value=(p.id) selected[page_id.as_deref() == Some(p.id.to_string().as_str())] { (p.name) }
                        }
                    }
                    @if let Some(e) = error("statusPageId") { span.error { (e) } }
                }
                (Input { value: chosen.map(|t| t.title.clone()), hint: Some("What users notice, in a few words."), autofocus: true, ..Input::new("title", "Title", "text") }.render(flash))
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
                fieldset.field.invalid[error("componentIds").is_some() || error("componentStatuses").is_some()] {
                    legend { "Affected components" }
                    @if f.components.is_empty() {
                        p.empty { "This page has no components." }
                    } @else {
                        span.hint { "A component given a status is affected too; its status changes when you report." }
                        (component_moves(&f.components.iter().collect::<Vec<_>>(), &f.pages, &f.groups, Some(&[]), |_| None, "new"))
                    }
                    @if let Some(e) = error("componentIds").or(error("componentStatuses")) { span.error { (e) } }
                }
                (Input { value: chosen.map(|t| t.message.clone()), hint: Some("Markdown. Shown as the first update on the public page."), preview: Some("message"), ..Input::new("message", "Message", "textarea") }.render(flash))
                details.past open[error("createdAt").is_some() || error("resolvedAt").is_some()] {
                    summary { "It happened earlier (a record of the past)" }
                    p.hint { "Times in UTC. A record of the past keeps its own times, shows in the uptime as it was, and is told to no subscriber." }
                    input type="hidden" name="_tz" value="UTC";
                    (Input { form_name: Some("createdAt:datetime"), hint: Some("When it began. Empty: now."), required: false, ..Input::new("createdAt", "Began", "datetime-local") }.render(flash))
                    (Input { form_name: Some("resolvedAt:datetime"), hint: Some("When it was resolved, if it is over: it is recorded resolved, with a closing update then; the components' statuses above apply between the two times, and their present status stays."), required: false, ..Input::new("resolvedAt", "Resolved", "datetime-local") }.render(flash))
                }
                (tell(flash, "new", None))
                div { button type="submit" { "Report incident" } }
            }
        }
    };
    page(frame, "Report an incident", flash, body)
}

/// "Notify subscribers" (on unless the refused attempt had it off) and the
/// preview of what people will be told, filled by our script from
/// `POST /api/incidents/notice-preview` as the form changes.
fn tell(flash: Option<&Flash>, form: &str, incident: Option<i64>) -> Markup {
    let id = format!("notify-{form}");
    let on = flash
        .and_then(|f| f.value_of("notify"))
        .is_none_or(|v| v == "on");
    html! {
        div.field.tell {
            input type="hidden" name="notify:bool" value="";
            label for=(id) { input #(id) type="checkbox" name="notify:bool" checked[on]; " Notify subscribers" }
            span.hint { "Off: subscribers are not told of this; the team's channels and the page's visitors still see it." }
            div.notice-preview data-notice-preview=(form) data-incident=[incident] aria-live="polite" hidden {}
        }
    }
}

fn page_name(pages: &[StatusPage], id: i64) -> &str {
    pages
        .iter()
        .find(|p| p.id == id)
        .map_or("", |p| p.name.as_str())
}

/// What the incident list was asked for.
#[derive(Default)]
pub struct IncidentSearch {
    pub text: Option<String>,
    pub page: Option<i64>,
    /// A status, or `unresolved`.
    pub status: Option<String>,
    pub impact: Option<String>,
    /// The page of results, from 1.
    pub number: i64,
}

impl IncidentSearch {
    /// The list's address for results page `n` of this search.
    fn href(&self, n: i64) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut add = |k: &str, v: &str| {
            parts.push(format!(
                "{k}={}",
                form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            ));
        };
        if let Some(t) = &self.text {
            add("q", t);
        }
        if let Some(p) = self.page {
            add("page", &p.to_string());
        }
        if let Some(s) = &self.status {
            add("status", s);
        }
        if let Some(i) = &self.impact {
            add("impact", i);
        }
        if n > 1 {
            add("p", &n.to_string());
        }
        if parts.is_empty() {
            "/admin/incidents".into()
        } else {
            format!("/admin/incidents?{}", parts.join("&"))
        }
    }

    fn narrowed(&self) -> bool {
        self.text.is_some() || self.page.is_some() || self.status.is_some() || self.impact.is_some()
    }
}

pub struct IncidentsScreen<'a> {
    pub incidents: &'a [Incident],
    pub pages: &'a [StatusPage],
    pub search: &'a IncidentSearch,
    /// Whether a next page of results exists.
    pub more: bool,
    /// Drafted incidents waiting for approval (`integrations::drafts`).
    pub drafts: Markup,
}

pub fn incidents_list(frame: &Frame, flash: Option<&Flash>, s: &IncidentsScreen) -> Markup {
    let f = s.search;
    let body = html! {
        header.top {
            h1 { "Incidents" }
            @if frame.may(Permission::IncidentsWrite) {
                a.button href="/admin/incidents/new" { "Report an incident" }
            }
        }
        (s.drafts)
        section.card aria-labelledby="h-found" {
            h2 #h-found { (if f.narrowed() { "Found" } else { "All incidents" }) }
            form.inline.filter.search method="get" action="/admin/incidents" role="search" {
                label for="f-q" { "Title" }
                input #f-q type="search" name="q" value=[f.text.as_deref()] placeholder="Words of the title" data-shortcut="/";
                label for="f-page" { "Page" }
                select #f-page name="page" {
                    option value="" { "Any page" }
                    @for p in s.pages { option value=(p.id) selected[f.page == Some(p.id)] { (p.name) } }
                }
                label for="f-status" { "Status" }
                select #f-status name="status" {
                    @for (value, label) in [("", "Any status"), ("unresolved", "Open (not resolved)"), ("investigating", "Investigating"), ("identified", "Identified"), ("monitoring", "Monitoring"), ("resolved", "Resolved")] {
                        option value=(value) selected[f.status.as_deref().unwrap_or("") == value] { (label) }
                    }
                }
                label for="f-impact" { "Impact" }
                select #f-impact name="impact" {
                    @for (value, label) in [("", "Any impact"), ("none", "None"), ("minor", "Minor"), ("major", "Major"), ("critical", "Critical")] {
                        option value=(value) selected[f.impact.as_deref().unwrap_or("") == value] { (label) }
                    }
                }
                button.secondary type="submit" { "Search" }
                @if f.narrowed() { a href="/admin/incidents" { "Clear" } }
            }
            @if s.incidents.is_empty() {
                p.empty { (if f.narrowed() { "No incident matches." } else { "No incidents yet." }) }
            } @else {
                ul.rows {
                    @for i in s.incidents {
                        li {
                            span {
                                a href=(format!("/admin/incidents/{}", i.id)) { strong { (i.title) } }
                                br; span.muted { (page_name(s.pages, i.status_page_id)) " · " (i.status.as_str()) " · " (when(i.created_at)) }
                            }
                            span class=(format!("pill s-{}", i.impact.as_str())) { (i.impact.as_str()) }
                        }
                    }
                }
            }
            @if f.number > 1 || s.more {
                nav.paging aria-label="Pages of incidents" {
                    @if f.number > 1 { a href=(f.href(f.number - 1)) rel="prev" { "← Newer" } }
                    span.muted { "Page " (f.number) }
                    @if s.more { a href=(f.href(f.number + 1)) rel="next" { "Older →" } }
                }
            }
        }
    };
    page(frame, "Incidents", flash, body)
}

/// What one incident's screen shows.
pub struct IncidentScreen<'a> {
    pub incident: &'a Incident,
    pub pages: &'a [StatusPage],
    /// The components of the incident's page, and its groups.
    pub components: &'a [Component],
    pub groups: &'a [ComponentGroup],
    pub postmortem: Option<&'a Postmortem>,
    /// Visitors who follow this incident.
    pub followers: i64,
    /// The resolution's words offered before the operator writes their own
    /// (in the install's language).
    pub resolved_text: &'a str,
}

pub fn incident_detail(frame: &Frame, flash: Option<&Flash>, screen: &IncidentScreen) -> Markup {
    let IncidentScreen {
        incident: i,
        pages,
        components,
        groups,
        postmortem,
        followers,
        resolved_text,
    } = *screen;
    let back = format!("/admin/incidents/{}", i.id);
    let resolved = i.status == IncidentStatus::Resolved;
    let affected: Vec<&str> = components
        .iter()
        .filter(|c| i.affected_components.contains(&c.id))
        .map(|c| c.name.as_str())
        .collect();
    // A viewer reads the record; every control below is for those who may change it.
    let w = frame.may(Permission::IncidentsWrite);
    let body = html! {
        header.top {
            h1 { (i.title) }
            @if w {
            span.actions {
                @if !resolved {
                    // One way to resolve: with words visitors will read,
                    // prefilled and editable (a disclosure: no script needed).
                    details.resolve {
                        summary.button { "Resolve" }
                        form.stack.card method="post" action=(format!("/api/incidents/{}/resolve", i.id)) {
                            (bridge(&back, &back, Some("Incident resolved; its components are operational again."), Some(frame.csrf)))
                            // Resolving returns what it affected to operational
                            // (as Statuspage does).
                            @for c in components.iter().filter(|c| i.affected_components.contains(&c.id) && c.status != ComponentStatus::Operational) {
                                input type="hidden" name="componentStatuses[][componentId]:int" value=(c.id);
                                input type="hidden" name="componentStatuses[][status]:req" value="operational";
                            }
                            (Input { id: Some("f-resolve-message"), value: Some(resolved_text.to_string()), hint: Some("Markdown. Visitors and subscribers read it."), preview: Some("message"), ..Input::new("message", "Resolution message", "textarea") }.render(flash))
                            (tell(flash, "resolve", Some(i.id)))
                            div { button type="submit" { "Resolve incident" } }
                        }
                    }
                }
                (action(frame, &back, &format!("/api/incidents/{}", i.id), "DELETE", "Delete", Some("Delete this incident and its timeline? Visitors will no longer see it."), Some("Incident deleted.")))
            }
            }
        }
        p.muted {
            (page_name(pages, i.status_page_id)) " · " span class=(format!("pill s-{}", i.impact.as_str())) { (i.impact.as_str()) }
            " · " (i.status.as_str())
            @if !affected.is_empty() { " · affects " (affected.join(", ")) }
            @if followers > 0 {
                " · " span.followers title="Visitors who asked, on this incident's page, to hear of its updates" {
                    @if followers == 1 { "1 visitor follows it" } @else { (followers) " visitors follow it" }
                }
            }
        }
        @if w {
        details.edit.card {
            summary { "Edit title and impact" }
            form.stack method="post" action=(format!("/api/incidents/{}", i.id)) {
                (bridge(&back, &back, Some("Incident changed."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PATCH";
                (Input { value: Some(i.title.clone()), id: Some("f-edit-title"), ..Input::new("title", "Incident title", "text") }.render(flash))
                div.field {
                    label for="f-edit-impact" { "Incident impact" }
                    select #f-edit-impact name="impact" {
                        @for (value, label) in IMPACTS {
                            option value=(value) selected[i.impact.as_str() == value] { (label) }
                        }
                    }
                }
                div { button.secondary type="submit" { "Save title and impact" } }
            }
        }
        }
        div.grid {
            @if w {
            section.card aria-labelledby="h-post" {
                h2 #h-post { "Post an update" }
                form.stack method="post" action=(format!("/api/incidents/{}/updates", i.id)) {
                    (bridge(&back, &back, Some("Update posted."), Some(frame.csrf)))
                    fieldset.field {
                        legend { "Status" }
                        div.choices {
                            // Resolving has its own form above (it returns
                            // the components and words the resolution).
                            @for (value, label) in &STATUSES[..3] {
                                label { input type="radio" name="status" value=(value) checked[i.status.as_str() == *value]; (label) }
                            }
                        }
                    }
                    (Input { hint: Some("Markdown."), preview: Some("message"), ..Input::new("message", "Message", "textarea") }.render(flash))
                    @let on_page: Vec<&Component> = components.iter().filter(|c| c.status_page_id == i.status_page_id).collect();
                    @if !on_page.is_empty() {
                        fieldset.field.invalid[flash.and_then(|f| f.error_of("componentStatuses")).is_some()] {
                            legend { "Components" }
                            (component_moves(&on_page, pages, groups, None, |_| None, "upd"))
                            @if let Some(e) = flash.and_then(|f| f.error_of("componentStatuses")) { span.error { (e) } }
                        }
                    }
                    details.past open[flash.and_then(|f| f.error_of("createdAt")).is_some()] {
                        summary { "Said earlier (a record of the past)" }
                        @let tz = pages.iter().find(|p| p.id == i.status_page_id).map_or("UTC", |p| p.time_zone.as_str());
                        input type="hidden" name="_tz" value=(tz);
                        (Input { form_name: Some("createdAt:datetime"), id: Some("f-update-at"), hint: Some(tz), required: false, ..Input::new("createdAt", "When", "datetime-local") }.render(flash))
                    }
                    (tell(flash, "update", Some(i.id)))
                    div { button type="submit" { "Post update" } }
                }
            }
            }
            section.card aria-labelledby="h-timeline" {
                h2 #h-timeline { "Timeline" }
                ol.timeline {
                    @for u in &i.updates {
                        @let at = when(u.created_at);
                        li {
                            div.meta {
                                strong { (u.status.as_str()) } " · " (at)
                            }
                            // As visitors see it; the source is behind Edit.
                            div.msg.rendered { (crate::views::message_markdown(&u.message)) }
                            @if w {
                            div.update-tools {
                                details.edit {
                                    summary { "Edit" span.visually-hidden { " the update of " (at) } }
                                    form.stack method="post" action=(format!("/api/incident-updates/{}", u.id)) {
                                        (bridge(&back, &back, Some("Update corrected."), Some(frame.csrf)))
                                        input type="hidden" name="_method" value="PATCH";
                                        label for=(format!("edit-{}", u.id)) { "Corrected message" span.visually-hidden { " of " (at) } }
                                        textarea id=(format!("edit-{}", u.id)) name="message" required { (u.message) }
                                        div { button.secondary type="submit" { "Save correction" } }
                                    }
                                }
                                @if i.updates.len() > 1 {
                                    form.inline method="post" action=(format!("/api/incident-updates/{}", u.id)) data-confirm="Delete this update from the timeline?" {
                                        (bridge(&back, &back, Some("Update deleted."), Some(frame.csrf)))
                                        input type="hidden" name="_method" value="DELETE";
                                        button.link.danger type="submit" { "Delete" span.visually-hidden { " the update of " (at) } }
                                    }
                                }
                            }
                            }
                        }
                    }
                }
            }
        }
    };
    let pm_body = flash
        .and_then(|f| f.value_of("body"))
        .or_else(|| postmortem.map(|p| p.body.clone()));
    let published = postmortem.is_some_and(|p| p.published);
    let body = html! {
        (body)
        section.card aria-labelledby="h-pm" {
            h2 #h-pm { "Postmortem" }
            p.muted {
                @match postmortem {
                    None => "None yet. Generate a draft from this incident's record, or write one.",
                    Some(p) if p.published => "Published: visitors see it on the incident's page.",
                    Some(_) => "A draft: only the team sees it.",
                }
            }
            @if !w {
                @if let Some(p) = postmortem { div.msg { (p.body) } }
            }
            @if w && !published {
                form.inline method="post" action=(format!("/api/incidents/{}/rca/generate", i.id)) {
                    (bridge(&back, &back, Some("Draft written from the incident's record."), Some(frame.csrf)))
                    button.secondary type="submit" { (if postmortem.is_some() { "Write a new draft" } else { "Generate a draft" }) }
                }
            }
            @if w {
            form.stack method="post" action=(format!("/api/incidents/{}/rca", i.id)) {
                (bridge(&back, &back, Some("Postmortem saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                (Input { value: pm_body, id: Some("f-pm-body"), hint: Some("Markdown."), preview: Some("document"), ..Input::new("body", "Postmortem text", "textarea") }.render(flash))
                div.field {
                    input type="hidden" name="published:bool" value="";
                    label { input type="checkbox" name="published:bool" checked[published]; " Published on the public page" }
                }
                div { button type="submit" { "Save postmortem" } }
            }
            }
        }
    };
    page(frame, &i.title, flash, body)
}

pub fn templates(frame: &Frame, flash: Option<&Flash>, list: &[IncidentTemplate]) -> Markup {
    let back = "/admin/templates";
    let body = html! {
        header.top { h1 { "Incident templates" } }
        section.card aria-labelledby="h-templates" {
            h2 #h-templates { "Saved templates" }
            @if list.is_empty() { p.empty { "None yet. Write the words for a known kind of trouble once, calmly, ahead of time." } }
            ul.rows {
                @for t in list {
                    li {
                        span { strong { (t.name) } br; span.muted { (t.title) " · " (t.status.as_str()) " · " (t.impact.as_str()) } }
                        span.actions {
                            a.button.secondary href=(format!("/admin/incidents/new?template={}", t.id)) { "Report with it" span.visually-hidden { ": " (t.name) } }
                            (action(frame, back, &format!("/api/incident-templates/{}", t.id), "DELETE", &format!("Delete {}", t.name), Some("Delete this template?"), Some("Template deleted.")))
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="h-newtemplate" {
            h2 #h-newtemplate { "New template" }
            form.stack method="post" action="/api/incident-templates" {
                (bridge(back, back, Some("Template saved."), Some(frame.csrf)))
                (Input { hint: Some("What you pick it by, such as \"Database degraded\"."), ..Input::new("name", "Template name", "text") }.render(flash))
                (Input::new("title", "Incident title", "text").render(flash))
                fieldset.field {
                    legend { "Status" }
                    div.choices {
                        @for (value, label) in STATUSES {
                            label { input type="radio" name="status" value=(value) checked[value == "investigating"]; (label) }
                        }
                    }
                }
                div.field {
                    label for="f-timpact" { "Impact" }
                    select #f-timpact name="impact" {
                        @for (value, label) in IMPACTS { option value=(value) selected[value == "minor"] { (label) } }
                    }
                }
                (Input { required: false, hint: Some("Markdown."), preview: Some("message"), ..Input::new("message", "First message", "textarea") }.render(flash))
                div { button type="submit" { "Save template" } }
            }
        }
    };
    page(frame, "Incident templates", flash, body)
}
