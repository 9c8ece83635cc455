//! `/admin/integrations`: the senders of alerts (Alertmanager, Grafana,
//! PagerDuty, Opsgenie, Datadog, generic), each bound to a page, and one
//! integration's screen: how to point the sender at it, its rules in order,
//! its log, its settings. Drafted incidents waiting for a person are on the
//! incidents screen (`drafts`), where people look for incidents.

use super::{COMPONENT_STATUSES, Frame, Input, bridge, component_status_name, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::alerts::{AlertDraft, DATADOG_TEMPLATE, Integration, IntegrationEvent, Rule};
use upstate_core::roles::Permission;
use upstate_core::status::{AlertOutcome, IncidentMode, IntegrationKind};
use upstate_core::{Component, ComponentStatus, Impact, StatusPage};

pub fn kind_name(k: IntegrationKind) -> &'static str {
    match k {
        IntegrationKind::Alertmanager => "Prometheus Alertmanager",
        IntegrationKind::Grafana => "Grafana",
        IntegrationKind::Pagerduty => "PagerDuty",
        IntegrationKind::Opsgenie => "Opsgenie",
        IntegrationKind::Datadog => "Datadog",
        IntegrationKind::Generic => "Generic (any script)",
    }
}

fn mode_name(m: IncidentMode) -> &'static str {
    match m {
        IncidentMode::Draft => "draft an incident for approval",
        IncidentMode::Publish => "publish an incident at once",
        IncidentMode::None => "open no incident",
    }
}

fn outcome_pill(o: AlertOutcome) -> Markup {
    let class = match o {
        AlertOutcome::Opened | AlertOutcome::Moved | AlertOutcome::Joined => "s-major_outage",
        AlertOutcome::Drafted => "s-degraded",
        AlertOutcome::Resolved | AlertOutcome::Released | AlertOutcome::Withdrawn => {
            "s-operational"
        }
        AlertOutcome::Suppressed => "s-maintenance",
        _ => "s-none",
    };
    html! { span.pill.(class) { (o.as_str()) } }
}

/// The labels a sender's alerts carry, for the rule form's hint.
fn labels_hint(k: IntegrationKind) -> &'static str {
    match k {
        IntegrationKind::Alertmanager | IntegrationKind::Grafana => {
            "Match the alert's labels: alertname, severity, service, job, instance…"
        }
        IntegrationKind::Pagerduty => {
            "Labels: alertname (the title), service, urgency (also as severity), priority."
        }
        IntegrationKind::Opsgenie => {
            "Labels: alertname (the message), priority, entity, source, the details, and each tag (env:prod is env=prod, a bare tag is tag=true)."
        }
        IntegrationKind::Datadog => {
            "Labels: alertname (the title), priority, transition, and each tag (env:prod is env=prod)."
        }
        IntegrationKind::Generic => "Labels: alertname (the title), severity, and the labels sent.",
    }
}

/// How to point the sender at its receiver URL.
fn setup(k: IntegrationKind, url: &str) -> Markup {
    html! {
        @match k {
            IntegrationKind::Alertmanager => {
                p { "In " code { "alertmanager.yml" } ", add a receiver and route the alerts that concern your users to it:" }
                pre tabindex="0" { code { "receivers:\n  - name: upstate\n    webhook_configs:\n      - url: " (url) "\n        send_resolved: true" } }
            }
            IntegrationKind::Grafana => {
                p { "Alerting → Contact points → Add contact point → Webhook. URL: the receiver URL, method POST. Then send the alerts that concern your users to it in a notification policy." }
            }
            IntegrationKind::Pagerduty => {
                p { "Integrations → Generic Webhooks (v3) → New Webhook. URL: the receiver URL; events: incident.triggered, incident.reopened and incident.resolved. Paste the signing secret PagerDuty shows into Settings below: posts without its signature are then refused." }
            }
            IntegrationKind::Opsgenie => {
                p { "Settings → Integrations → Webhook. URL: the receiver URL, with \"Add alert description to payload\" and \"Add alert details to payload\" on; the Create and Close actions are the ones Upstate reads." }
            }
            IntegrationKind::Datadog => {
                p { "Integrations → Webhooks → New. URL: the receiver URL; custom payload:" }
                pre tabindex="0" { code { (DATADOG_TEMPLATE) } }
                p { "Then mention the webhook (@webhook-NAME) in the monitors that concern your users." }
            }
            IntegrationKind::Generic => {
                p { "POST JSON to the receiver URL, signed with the secret: the header " code { "X-Upstate-Signature: sha256=HEX" } " holds HMAC-SHA256 of the body." }
                pre tabindex="0" { code { "{\"key\": \"search-stale\", \"status\": \"firing\", \"title\": \"Search is out of date\",\n \"message\": \"The index is 40 minutes old.\", \"severity\": \"warning\", \"labels\": {\"service\": \"search\"}}" } }
                p.muted { "\"status\": \"resolved\" with the same key ends it. {\"alerts\": [...]} sends several." }
            }
        }
    }
}

pub struct IntegrationsScreen<'a> {
    pub integrations: &'a [Integration],
    pub pages: &'a [StatusPage],
}

pub fn integrations(frame: &Frame, flash: Option<&Flash>, s: &IntegrationsScreen) -> Markup {
    let back = "/admin/integrations";
    let page_name = |id| {
        s.pages
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.name.as_str())
            .unwrap_or("")
    };
    let kind_now = flash
        .and_then(|f| f.value_of("kind"))
        .unwrap_or_else(|| "alertmanager".into());
    let body = html! {
        header.top { h1 { "Integrations" } }
        p.muted { "Your alerting tells Upstate what breaks: each integration receives one tool's alerts, and its rules say which components they move and whether an incident opens, waits for a person's approval, or stays closed. Alerts for components under maintenance change nothing. Drafted incidents wait on the " a href="/admin/incidents" { "Incidents" } " screen." }
        section.card aria-labelledby="h-integrations" {
            h2 #h-integrations { "Receiving" }
            @if s.integrations.is_empty() {
                p.empty { "No integrations yet. Add one below, then point your alerting at its URL." }
            } @else {
                ul.rows {
                    @for i in s.integrations {
                        li {
                            span {
                                a href=(format!("/admin/integrations/{}", i.id)) { strong { (i.name) } }
                                " " span.pill.s-none { (kind_name(i.kind)) }
                                @if !i.enabled { " " span.pill.s-degraded { "Off" } }
                                @if i.signed { " " span.pill.s-operational { "Signed" } }
                                br; span.muted { (page_name(i.status_page_id)) " · "
                                    (i.rules.len()) (if i.rules.len() == 1 { " rule" } else { " rules" }) }
                            }
                            span.actions {
                                a.button.secondary href=(format!("/admin/integrations/{}", i.id)) { "Open" span.visually-hidden { " " (i.name) } }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="h-new" {
            h2 #h-new { "New integration" }
            @if s.pages.is_empty() {
                p.empty { "Make a status page first: an integration moves its components." }
            } @else {
                form.stack method="post" action="/api/integrations" {
                    (bridge(back, "/admin/integrations/{id}", Some("Integration made. Copy its receiver URL now: it is not shown again."), Some(frame.csrf)))
                    input type="hidden" name="_keep" value="receiverUrl,secret";
                    div.grid {
                        div.field {
                            label for="f-kind" { "Sender" }
                            select #f-kind name="kind" {
                                @for k in IntegrationKind::ALL {
                                    option value=(k.as_str()) selected[kind_now == k.as_str()] { (kind_name(*k)) }
                                }
                            }
                        }
                        div.field {
                            label for="f-statusPageId" { "Status page" }
                            select #f-statusPageId name="statusPageId:int" {
                                @for p in s.pages { option value=(p.id) { (p.name) } }
                            }
                        }
                    }
                    (Input { hint: Some("Say which system it is, like \"Prometheus production\"."), ..Input::new("name", "Name", "text") }.render(flash))
                    div { button type="submit" { "Make integration" } }
                }
            }
        }
    };
    page(frame, "Integrations", flash, body)
}

pub struct IntegrationScreen<'a> {
    pub integration: &'a Integration,
    pub page: &'a StatusPage,
    pub components: &'a [Component],
    pub events: &'a [IntegrationEvent],
}

fn rule_text(r: &Rule, components: &[Component]) -> Markup {
    let names: Vec<&str> = r
        .component_ids
        .iter()
        .map(|id| {
            components
                .iter()
                .find(|c| c.id == *id)
                .map(|c| c.name.as_str())
                .unwrap_or("(a removed component)")
        })
        .collect();
    html! {
        "When " @if r.when.trim().is_empty() { "any alert" } @else { code { (r.when) } }
        " fires: " strong { (names.join(", ")) } " → " (component_status_name(r.status).to_lowercase())
        ", " (mode_name(r.incident)) "."
        @if r.resolve { " On resolution they return" @if r.incident != IncidentMode::None { " and the incident resolves" } "." }
        @else { " Resolution is left to people." }
    }
}

pub fn integration(frame: &Frame, flash: Option<&Flash>, s: &IntegrationScreen) -> Markup {
    let i = s.integration;
    let back = format!("/admin/integrations/{}", i.id);
    let route = format!("/api/integrations/{}", i.id);
    let shown_url = flash
        .and_then(|f| f.values.get("receiverUrl"))
        .and_then(|v| v.as_str());
    let secret = flash
        .and_then(|f| f.values.get("secret"))
        .and_then(|v| v.as_str());
    let url_for_setup = shown_url
        .map(str::to_string)
        .unwrap_or_else(|| format!("https://…/api/integrations/{}/upi_…", i.kind.as_str()));
    let value =
        |field: &str, current: String| flash.and_then(|f| f.value_of(field)).unwrap_or(current);
    let body = html! {
        header.top {
            h1 { (i.name) " " span.pill.s-none { (kind_name(i.kind)) } @if !i.enabled { " " span.pill.s-degraded { "Off" } } }
            a href="/admin/integrations" { "All integrations" }
        }
        @if let Some(url) = shown_url {
            section.card.codes aria-labelledby="h-url" {
                h2 #h-url { "Receiver URL" }
                p { "Copy it now into " (kind_name(i.kind)) ": the token in it is the secret, and it is not shown again (make a new one below if it is lost)." }
                p.secret { code #new-url { (url) } " " button.secondary type="button" data-copy="new-url" hidden { "Copy" } }
                @if let Some(secret) = secret {
                    p { "Signing secret:" }
                    p.secret { code #new-secret { (secret) } " " button.secondary type="button" data-copy="new-secret" hidden { "Copy" } }
                }
            }
        }
        div.grid {
            section.card aria-labelledby="h-setup" {
                h2 #h-setup { "Point " (kind_name(i.kind)) " here" }
                (setup(i.kind, &url_for_setup))
                dl.facts {
                    dt { "Status page" } dd { a href=(format!("/admin/pages/{}", s.page.id)) { (s.page.name) } }
                    dt { "Signature" } dd { (if i.signed { "required" } else { "not asked (the URL's token is the secret)" }) }
                }
            }
            section.card aria-labelledby="h-rules" {
                h2 #h-rules { "Rules" }
                p.muted { "Tried in order: the first rule whose conditions hold decides. An alert no rule matches changes nothing (it shows in the log)." }
                @if i.rules.is_empty() {
                    p.empty { "No rules yet: alerts change nothing until you add one." }
                } @else {
                    ol.rows {
                        @for (n, r) in i.rules.iter().enumerate() {
                            li {
                                span { (rule_text(r, s.components)) }
                                span.actions {
                                    form.inline method="post" action=(format!("{route}/rules/{n}")) data-confirm="Remove this rule?" {
                                        (bridge(&back, &back, Some("Rule removed."), Some(frame.csrf)))
                                        input type="hidden" name="_method" value="DELETE";
                                        button.secondary type="submit" { "Remove" span.visually-hidden { " rule " (n + 1) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="h-add-rule" {
            h2 #h-add-rule { "Add a rule" }
            @if s.components.is_empty() {
                p.empty { "This page has no components yet." }
            } @else {
                form.stack method="post" action=(format!("{route}/rules")) {
                    (bridge(&back, &back, Some("Rule added."), Some(frame.csrf)))
                    (Input { value: Some(value("when", String::new())), required: false,
                        hint: Some(labels_hint(i.kind)),
                        ..Input::new("when", "When the labels match (empty: every alert)", "text") }.render(flash))
                    p.hint.muted { "Write conditions as Alertmanager does, comma-separated: " code { "severity=\"critical\", service=~\"api|web\"" } " (= equals, != differs, =~ and !~ match a regular expression)." }
                    @let comps_error = flash.and_then(|f| f.error_of("componentIds"));
                    fieldset.field.invalid[comps_error.is_some()] #f-componentIds {
                        legend { "Components it moves" }
                        div.choices {
                            @for c in s.components {
                                label { input type="checkbox" name="componentIds[]:int" value=(c.id); (c.name) }
                            }
                        }
                        @if let Some(e) = comps_error { span.error { (e) } }
                    }
                    div.grid {
                        div.field {
                            label for="f-status" { "To" }
                            select #f-status name="status" {
                                @for st in COMPONENT_STATUSES.iter().filter(|s| !matches!(s, ComponentStatus::Operational | ComponentStatus::Maintenance)) {
                                    option value=(st.as_str()) selected[*st == ComponentStatus::MajorOutage] { (component_status_name(*st)) }
                                }
                            }
                        }
                        div.field {
                            label for="f-incident" { "Incident" }
                            select #f-incident name="incident" aria-describedby="f-incident-hint" {
                                @for m in IncidentMode::ALL {
                                    option value=(m.as_str()) selected[*m == IncidentMode::Draft] { (mode_name(*m)) }
                                }
                            }
                            span.hint #f-incident-hint { "A draft is not public and tells nobody until someone approves it." }
                        }
                    }
                    div.field { div.choices {
                        input type="hidden" name="resolve:bool" value="";
                        label { input type="checkbox" name="resolve:bool" checked; "When its alerts resolve, return the components and resolve the incident" }
                    } }
                    (Input { required: false, hint: Some("The incident's last update (empty: \"This incident has been resolved.\")."),
                        ..Input::new("resolveMessage", "Resolution message", "text") }.render(flash))
                    div { button type="submit" { "Add rule" } }
                }
            }
        }
        section.card aria-labelledby="h-log" {
            h2 #h-log { "Latest alerts" }
            @if s.events.is_empty() {
                p.empty { "Nothing received yet." }
            } @else {
                div.scroll-x tabindex="0" role="region" aria-label="Table of the latest alerts" { table.events {
                    thead { tr { th { "When" } th { "Alert" } th { "State" } th { "Outcome" } th { "Detail" } } }
                    tbody {
                        @for e in s.events {
                            tr {
                                td { (when(e.at)) }
                                td { (e.title) @if !e.fingerprint.is_empty() { br; span.muted { code { (e.fingerprint) } } } }
                                td { (if e.firing { "firing" } else { "resolved" }) }
                                td { (outcome_pill(e.outcome)) }
                                td { (e.detail) }
                            }
                        }
                    }
                } }
            }
        }
        div.grid {
            section.card aria-labelledby="h-settings" {
                h2 #h-settings { "Settings" }
                form.stack method="post" action=(route) {
                    (bridge(&back, &back, Some("Integration saved."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PUT";
                    (Input { value: Some(value("name", i.name.clone())), id: Some("f-edit-name"), ..Input::new("name", "Name", "text") }.render(flash))
                    @if matches!(i.kind, IntegrationKind::Pagerduty | IntegrationKind::Generic) {
                        (Input { required: false, autocomplete: Some("off"),
                            hint: Some(if i.signed { "Set: type a new one to replace it; posts must carry its signature." } else { "Paste the sender's signing secret: posts must then carry its signature." }),
                            form_name: Some("secret:opt"),
                            ..Input::new("secret", "Signing secret", "password") }.render(flash))
                    }
                    div.field { div.choices {
                        input type="hidden" name="enabled:bool" value="";
                        label { input type="checkbox" name="enabled:bool" checked[i.enabled]; "On (an integration that is off answers 404 to its sender)" }
                    } }
                    div { button type="submit" { "Save" } }
                }
            }
            section.card aria-labelledby="h-token" {
                h2 #h-token { "Receiver URL" }
                p.muted { "A new URL stops the old one at once: use it when the URL may have leaked, then give the new one to the sender." }
                form.inline method="post" action=(format!("{route}/token")) data-confirm="Make a new receiver URL? The old one stops working now." {
                    (bridge(&back, &back, Some("New receiver URL made. Copy it now."), Some(frame.csrf)))
                    input type="hidden" name="_keep" value="receiverUrl";
                    button.secondary type="submit" { "Make a new URL" }
                }
            }
        }
        section.card.danger-zone aria-labelledby="h-delete" {
            h2 #h-delete { "Delete" }
            p.muted { "Its sender's posts are refused from now on; incidents it opened stay." }
            form.inline method="post" action=(route) data-confirm="Delete this integration?" {
                (bridge(&back, "/admin/integrations", Some("Integration deleted."), Some(frame.csrf)))
                input type="hidden" name="_method" value="DELETE";
                button.danger type="submit" { "Delete integration" }
            }
        }
    };
    page(frame, &i.name, flash, body)
}

fn impact_name(i: Impact) -> &'static str {
    match i {
        Impact::None => "None",
        Impact::Minor => "Minor",
        Impact::Major => "Major",
        Impact::Critical => "Critical",
    }
}

/// Drafted incidents waiting for a person: each with its words (editable
/// on the way), where it would move what, and approve or dismiss.
pub fn drafts(
    frame: &Frame,
    flash: Option<&Flash>,
    drafts: &[AlertDraft],
    components: &[Component],
) -> Markup {
    let can = frame.may(Permission::IncidentsWrite);
    let back = "/admin/incidents";
    html! {
        @if !drafts.is_empty() {
            section.card.drafts aria-labelledby="h-drafts" {
                h2 #h-drafts { "Awaiting approval " span.pill.s-degraded { (drafts.len()) } }
                p.muted { "Incidents your alerting drafted. Nothing is public and nobody is told until someone publishes one; a draft whose alerts resolve first is withdrawn by itself." }
                @for d in drafts {
                    @let tag = format!("draft-{}", d.id);
                    article.draft aria-labelledby=(format!("h-{tag}")) {
                        h3 #(format!("h-{tag}")) { (d.title) }
                        p.muted {
                            "From " a href=(format!("/admin/integrations/{}", d.integration_id)) { (d.integration_name) }
                            " · " (when(d.opened_at)) " · " (d.firing) (if d.firing == 1 { " alert firing" } else { " alerts firing" })
                        }
                        ul.moves {
                            @for c in &d.components {
                                @let name = components.iter().find(|x| x.id == c.component_id).map(|x| x.name.as_str()).unwrap_or("(a removed component)");
                                li { strong { (name) } " → " (component_status_name(c.status).to_lowercase()) }
                            }
                        }
                        @if can {
                            form.stack method="post" action=(format!("/api/alert-drafts/{}/approve", d.id)) {
                                (bridge(back, "/admin/incidents/{incidentId}", Some("Published: the incident is on the page and subscribers are told."), Some(frame.csrf)))
                                input type="hidden" name="_form" value=(tag);
                                (Input { value: Some(d.title.clone()), id: Some(&format!("{tag}-title")), ..Input::new("title", "Title", "text") }.render(flash))
                                (Input { value: Some(d.message.clone()), id: Some(&format!("{tag}-message")), ..Input::new("message", "First update", "textarea") }.render(flash))
                                div.field {
                                    label for=(format!("{tag}-impact")) { "Impact" }
                                    select id=(format!("{tag}-impact")) name="impact" {
                                        @for im in [Impact::Minor, Impact::Major, Impact::Critical, Impact::None] {
                                            option value=(im.as_str()) selected[im == d.impact] { (impact_name(im)) }
                                        }
                                    }
                                }
                                div.draft-actions {
                                    button type="submit" { "Publish" span.visually-hidden { " " (d.title) } }
                                    button.secondary type="submit" form=(format!("{tag}-dismiss")) { "Dismiss" span.visually-hidden { " " (d.title) } }
                                }
                            }
                            form #(format!("{tag}-dismiss")) method="post" action=(format!("/api/alert-drafts/{}/dismiss", d.id)) data-confirm="Dismiss this draft? Nothing is published." {
                                (bridge(back, back, Some("Draft dismissed: nothing was published."), Some(frame.csrf)))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What an approve link shows: the draft and its two answers, or what
/// became of it. No sign-in: the link's secret is the right to answer,
/// and the answer is a POST, so a chat app that opens links to preview
/// them publishes nothing.
pub fn approve_link(
    draft: Option<&AlertDraft>,
    components: &[Component],
    said: Option<&str>,
) -> Markup {
    use super::centered;
    centered(
        "Approve",
        None,
        html! {
            @if let Some(s) = said {
                h1 { "Done" }
                p role="status" { (s) }
                p { a href="/admin/incidents" { "Open the incidents screen" } }
            } @else if let Some(d) = draft {
                h1 { "Awaiting approval" }
                p.muted { "Drafted by " (d.integration_name) " at " (when(d.opened_at)) ". Nothing is public yet." }
                h2 { (d.title) }
                p { (d.message) }
                ul.moves {
                    @for c in &d.components {
                        @let name = components.iter().find(|x| x.id == c.component_id).map(|x| x.name.as_str()).unwrap_or("(a removed component)");
                        li { strong { (name) } " → " (component_status_name(c.status).to_lowercase()) }
                    }
                }
                div.draft-actions {
                    form method="post" {
                        input type="hidden" name="answer" value="publish";
                        button type="submit" { "Publish" }
                    }
                    form method="post" {
                        input type="hidden" name="answer" value="dismiss";
                        button.secondary type="submit" { "Dismiss" }
                    }
                }
                p.muted { "To change the words first, sign in and use the incidents screen." }
            } @else {
                h1 { "This link does not work" }
                p { "It is wrong, more than a day old, or its draft was published, dismissed or withdrawn already. The incidents screen shows what waits." }
                p { a href="/admin/incidents" { "Open the incidents screen" } }
            }
        },
    )
}
