//! `/admin/notifications`: the team's channels (list, new channel, the new
//! webhook's secret shown once) and one channel's screen (change it, send a
//! test and read the receiver's answer, its delivery log, delete it).

use super::{Frame, Input, bridge, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::notify::{Channel, ChannelKind, Delivery, DeliveryStatus, NOTIFIED_KINDS};
use upstate_core::{Component, StatusPage};

/// The kinds offered in the interface, with what people call them.
const KINDS: [(ChannelKind, &str); 6] = [
    (ChannelKind::Webhook, "Webhook (signed, Standard Webhooks)"),
    (ChannelKind::Slack, "Slack"),
    (ChannelKind::Discord, "Discord"),
    (ChannelKind::Teams, "Microsoft Teams"),
    (ChannelKind::Telegram, "Telegram"),
    (ChannelKind::Email, "Email"),
];

/// The language a recipient's messages are written in: the install's
/// default, or one of the dictionaries.
pub(super) fn lang_select(id: &str, current: &str, hint: &str) -> Markup {
    html! {
        div.field {
            label for=(id) { "Language of its messages" }
            select id=(id) name="lang" aria-describedby=(format!("{id}-hint")) {
                option value="" selected[current.is_empty()] { "The install's default (Settings)" }
                @for l in upstate_core::i18n::LANGS {
                    option value=(l.code()) selected[current == l.code()] lang=(l.code()) { (l.name()) }
                }
            }
            span.hint id=(format!("{id}-hint")) { (hint) }
        }
    }
}

/// What "Where to send" is for a kind: its label and hint (our script
/// shows the chosen kind's; without it the field says all of them).
fn target_words(k: ChannelKind) -> (&'static str, &'static str) {
    match k {
        ChannelKind::Webhook => (
            "Webhook URL",
            "Your endpoint (https://…); each message is signed with the secret shown once after adding.",
        ),
        ChannelKind::Slack => (
            "Slack webhook URL",
            "An incoming webhook: https://hooks.slack.com/services/…",
        ),
        ChannelKind::Discord => (
            "Discord webhook URL",
            "Channel settings → Integrations → Webhooks: https://discord.com/api/webhooks/…",
        ),
        ChannelKind::Teams => (
            "Teams webhook URL",
            "An incoming webhook or workflow URL of the channel (https://…).",
        ),
        ChannelKind::Telegram => (
            "Chat id",
            "The chat's id, such as -1001234567890 (the bot must be a member).",
        ),
        ChannelKind::Email => (
            "Email address",
            "Where the team reads it, such as oncall@example.com.",
        ),
        ChannelKind::Push => ("Where to send", ""),
    }
}

fn kind_name(k: ChannelKind) -> &'static str {
    match k {
        ChannelKind::Webhook => "Webhook",
        ChannelKind::Slack => "Slack",
        ChannelKind::Discord => "Discord",
        ChannelKind::Teams => "Teams",
        ChannelKind::Telegram => "Telegram",
        ChannelKind::Email => "Email",
        ChannelKind::Push => "Browser push",
    }
}

fn event_name(kind: &str) -> &'static str {
    match kind {
        "incident.created" => "Incident opened",
        "incident.updated" => "Incident updated",
        "incident.resolved" => "Incident resolved",
        "component.status_changed" => "Component status changed (outside incidents)",
        "maintenance.scheduled" => "Maintenance scheduled",
        "maintenance.started" => "Maintenance started",
        "maintenance.completed" => "Maintenance completed",
        "maintenance.cancelled" => "Maintenance cancelled",
        "maintenance.reminder" => "Maintenance reminder",
        "postmortem.published" => "Postmortem published",
        "alert.drafted" => "Incident drafted by an alert (team only, with its approve link)",
        "test" => "Test message",
        _ => "Change",
    }
}

fn status_pill(s: DeliveryStatus) -> Markup {
    let (class, text) = match s {
        DeliveryStatus::Delivered => ("s-operational", "Delivered"),
        DeliveryStatus::Pending => ("s-degraded", "Retrying"),
        DeliveryStatus::GivenUp => ("s-major_outage", "Given up"),
    };
    html! { span.pill.(class) { (text) } }
}

/// What the filters of a channel let through, in words.
fn filters_text(c: &Channel, pages: &[StatusPage]) -> String {
    let pages_text = if c.page_ids.is_empty() {
        "every page".to_string()
    } else {
        pages
            .iter()
            .filter(|p| c.page_ids.contains(&p.id))
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kinds = if c.event_kinds.is_empty() {
        "every change".to_string()
    } else {
        format!("{} kinds of change", c.event_kinds.len())
    };
    let comps = if c.component_ids.is_empty() {
        String::new()
    } else {
        format!(", {} components", c.component_ids.len())
    };
    format!("{pages_text}{comps}; {kinds}")
}

/// The filter fields shared by the new-channel and change forms.
fn filter_fields(
    chosen_pages: &[i64],
    chosen_components: &[i64],
    chosen_kinds: &[String],
    pages: &[StatusPage],
    components: &[Component],
) -> Markup {
    html! {
        fieldset {
            legend { "Pages" }
            p.hint.muted { "None ticked: every page, including pages made later." }
            input type="hidden" name="pageIds[]:int" value="";
            div.choices {
                @for p in pages {
                    label { input type="checkbox" name="pageIds[]:int" value=(p.id) checked[chosen_pages.contains(&p.id)]; (p.name) }
                }
            }
        }
        details open[!chosen_components.is_empty()] {
            summary { "Only changes of some components" }
            fieldset {
                legend { "Components" }
                p.hint.muted { "None ticked: all. Incidents that name no component reach every channel of their page." }
                input type="hidden" name="componentIds[]:int" value="";
                @for p in pages {
                    @let mine: Vec<&Component> = components.iter().filter(|c| c.status_page_id == p.id).collect();
                    @if !mine.is_empty() {
                        div.muted { (p.name) }
                        div.choices {
                            @for c in mine {
                                label { input type="checkbox" name="componentIds[]:int" value=(c.id) checked[chosen_components.contains(&c.id)]; (c.name) }
                            }
                        }
                    }
                }
            }
        }
        fieldset {
            legend { "Changes to tell of" }
            p.hint.muted { "None ticked: all of them." }
            input type="hidden" name="eventKinds[]:opt" value="";
            div.choices.kinds {
                @for k in NOTIFIED_KINDS {
                    label { input type="checkbox" name="eventKinds[]:opt" value=(k) checked[chosen_kinds.iter().any(|c| c == k)]; (event_name(k)) }
                }
            }
        }
    }
}

/// The last delivery of each channel that has one: (channel, (state, when)).
pub type LastDeliveries = [(i64, (DeliveryStatus, upstate_core::Timestamp))];

pub fn channels(
    frame: &Frame,
    flash: Option<&Flash>,
    mail: bool,
    list: &[Channel],
    last: &LastDeliveries,
    pages: &[StatusPage],
    components: &[Component],
) -> Markup {
    let back = "/admin/notifications";
    let secret = flash
        .and_then(|f| f.values.get("secret"))
        .and_then(|v| v.as_str());
    let kind_now = flash
        .and_then(|f| f.value_of("kind"))
        .unwrap_or_else(|| "webhook".into());
    let kind_error = flash.and_then(|f| f.error_of("kind"));
    let token_error = flash.and_then(|f| f.error_of("token"));
    let body = html! {
        header.top { h1 { "Notifications" } }
        p.muted { "Channels tell your team of every change as it happens: incidents, status changes, maintenance and postmortems. Each message is retried until it arrives; every attempt is in the channel's log." }
        @if let Some(secret) = secret {
            section.card.codes aria-labelledby="h-secret" {
                h2 #h-secret { "Signing secret of the new webhook" }
                p { "Copy it now into the receiving service: it is not shown again. Receivers check each message's "
                    code { "webhook-signature" } " with it (Standard Webhooks, HMAC-SHA256)." }
                p.secret { code #new-secret { (secret) } " " button.secondary type="button" data-copy="new-secret" hidden { "Copy" } }
            }
        }
        section.card aria-labelledby="h-channels" {
            h2 #h-channels { "Channels" }
            @if list.is_empty() { p.empty { "No channels yet: add one below." } }
            @else { ul.rows {
                @for c in list {
                    li {
                        span {
                            a href=(format!("/admin/notifications/{}", c.id)) { strong { (c.name) } }
                            " " span.pill.s-none { (kind_name(c.kind)) }
                            @if !c.enabled { " " span.pill.s-degraded { "Off" } }
                            br; span.muted { (filters_text(c, pages)) }
                            @if let Some((status, at)) = last.iter().find(|(id, _)| *id == c.id).map(|(_, l)| l) {
                                br; span.muted { "Last message " (when(*at)) ": " } (status_pill(*status))
                            }
                        }
                        a.button.secondary href=(format!("/admin/notifications/{}", c.id)) { "Open" span.visually-hidden { " " (c.name) } }
                    }
                }
            } }
        }
        section.card aria-labelledby="h-new" {
            h2 #h-new { "New channel" }
            form.stack method="post" action="/api/notifications" {
                (bridge(back, "/admin/notifications/{id}", Some("Channel added. Send a test message to check it."), Some(frame.csrf)))
                input type="hidden" name="_keep" value="secret";
                (Input { hint: Some("For you: \"On-call Slack\", \"Status webhook\"."), ..Input::new("name", "Name", "text") }.render(flash))
                div.field.invalid[kind_error.is_some()] {
                    label for="f-kind" { "Kind" }
                    select #f-kind name="kind" aria-describedby="f-kind-note" {
                        @for (k, label) in KINDS.iter().filter(|(k, _)| mail || *k != ChannelKind::Email) {
                            @let (target_label, target_hint) = target_words(*k);
                            option value=(k.as_str()) selected[kind_now == k.as_str()] data-target-label=(target_label) data-target-hint=(target_hint) { (label) }
                        }
                    }
                    @if let Some(e) = kind_error { span.error #f-kind-note { (e) } }
                    @else if mail { span.hint #f-kind-note { "Webhooks are signed; chat kinds post to an incoming webhook; email goes through your SMTP relay." } }
                    @else { span.hint #f-kind-note { "Email needs an SMTP relay: set smtp_url and smtp_from (see the README)." } }
                }
                (Input { hint: Some("The incoming webhook URL (https://…); for Telegram the chat id such as -1001234567890; for email the address."),
                    ..Input::new("target", "Where to send", "text") }.render(flash))
                div.field.invalid[token_error.is_some()] data-only-kind="telegram" {
                    label for="f-token" { "Telegram bot token" }
                    input #f-token type="password" name="token:opt" autocomplete="off" aria-describedby="f-token-note";
                    @if let Some(e) = token_error { span.error #f-token-note { (e) } }
                    @else { span.hint #f-token-note { "Telegram only: the token BotFather gave (123456:ABC…)." } }
                }
                (lang_select("f-lang", &flash.and_then(|f| f.value_of("lang")).unwrap_or_default(), "Messages and the test message are written in it; what operators type stays as typed."))
                (filter_fields(&[], &[], &[], pages, components))
                div { button type="submit" { "Add channel" } }
            }
        }
    };
    page(frame, "Notifications", flash, body)
}

/// The result of the last test message, from the flash.
fn test_result(flash: Option<&Flash>) -> Markup {
    let Some(f) = flash else { return html! {} };
    let Some(status) = f.values.get("status").and_then(|v| v.as_str()) else {
        return html! {};
    };
    let code = f.values.get("responseStatus").and_then(|v| v.as_i64());
    let body = f
        .values
        .get("responseBody")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let error = f.values.get("lastError").and_then(|v| v.as_str());
    html! {
        div.alert.notice[status == "delivered"].error[status != "delivered"] role="status" #test-result {
            @if status == "delivered" { strong { "Test delivered." } } @else { strong { "Test not delivered." } }
            @if let Some(c) = code { " The receiver answered HTTP " (c) "." }
            @if let Some(e) = error { " " (e) "." }
            @if !body.is_empty() { pre.muted { (body) } }
        }
    }
}

pub struct ChannelScreen<'a> {
    pub channel: &'a Channel,
    pub log: &'a [Delivery],
    pub pages: &'a [StatusPage],
    pub components: &'a [Component],
}

pub fn channel(frame: &Frame, flash: Option<&Flash>, s: &ChannelScreen) -> Markup {
    let c = s.channel;
    let back = format!("/admin/notifications/{}", c.id);
    let route = format!("/api/notifications/{}", c.id);
    let secret = flash
        .and_then(|f| f.values.get("secret"))
        .and_then(|v| v.as_str());
    let body = html! {
        header.top {
            h1 { (c.name) " " span.pill.s-none { (kind_name(c.kind)) } }
            a href="/admin/notifications" { "All channels" }
        }
        @if let Some(secret) = secret {
            section.card.codes aria-labelledby="h-secret" {
                h2 #h-secret { "Signing secret" }
                p { "Copy it now into the receiving service: it is not shown again." }
                p.secret { code #new-secret { (secret) } " " button.secondary type="button" data-copy="new-secret" hidden { "Copy" } }
            }
        }
        div.grid {
            section.card aria-labelledby="h-test" {
                h2 #h-test { "Test" }
                p.muted { "Sends a real message now and shows what the receiver answered." }
                (test_result(flash))
                form method="post" action=(format!("{route}/test")) {
                    (bridge(&back, &back, None, Some(frame.csrf)))
                    input type="hidden" name="_keep" value="status,responseStatus,responseBody,lastError";
                    button type="submit" { "Send a test message" }
                }
                dl.facts {
                    dt { "Sends to" } dd { code { (c.target) } }
                    @if let Some(h) = &c.secret_hint {
                        dt { @if c.kind == ChannelKind::Webhook { "Signing secret" } @else { "Token" } }
                        dd { code { (h) } }
                    }
                    dt { "State" } dd { @if c.enabled { "On" } @else { "Off: nothing is sent" } }
                }
                @if c.kind == ChannelKind::Webhook {
                    form method="post" action=(route) data-confirm="Make a new signing secret? The receiver must be given it, or it will refuse every message." {
                        (bridge(&back, &back, Some("New signing secret made."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="PUT";
                        input type="hidden" name="rotateSecret:bool" value="true";
                        input type="hidden" name="_keep" value="secret";
                        button.secondary type="submit" { "Make a new signing secret" }
                    }
                }
            }
            section.card aria-labelledby="h-edit" {
                h2 #h-edit { "Change" }
                form.stack method="post" action=(route) {
                    (bridge(&back, &back, Some("Channel saved."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PUT";
                    (Input { value: Some(c.name.clone()), ..Input::new("name", "Name", "text") }.render(flash))
                    (Input { value: Some(c.target.clone()), ..Input::new("target", "Where to send", "text") }.render(flash))
                    @if c.kind == ChannelKind::Telegram {
                        div.field {
                            label for="f-token" { "New bot token" }
                            input #f-token type="password" name="token:opt" autocomplete="off" aria-describedby="f-token-note";
                            span.hint #f-token-note { "Leave empty to keep the current one." }
                        }
                    }
                    div.field {
                        div.choices {
                            input type="hidden" name="enabled:bool" value="";
                            label { input type="checkbox" name="enabled:bool" checked[c.enabled]; "On (send messages)" }
                        }
                    }
                    (lang_select("f-lang", &c.lang, "Messages and the test message are written in it; what operators type stays as typed."))
                    (filter_fields(&c.page_ids, &c.component_ids, &c.event_kinds, s.pages, s.components))
                    div { button type="submit" { "Save channel" } }
                }
            }
        }
        section.card aria-labelledby="h-log" {
            h2 #h-log { "Deliveries" }
            @if s.log.is_empty() {
                p.empty { "Nothing sent yet." }
            } @else {
                div.scroll-x tabindex="0" role="region" aria-label="Table of the deliveries" { table.events {
                    thead { tr { th { "When" } th { "Message" } th { "State" } th { "Tries" } th { "Answer" } } }
                    tbody {
                        @for d in s.log {
                            tr {
                                td { (when(d.created_at)) }
                                td { (event_name(&d.kind)) @if let Some(t) = &d.title { br; span.muted { (t) } } }
                                td { (status_pill(d.status))
                                    @if let Some(next) = d.next_attempt_at { br; span.muted { "next try " (when(next)) } } }
                                td { (d.attempts) }
                                td {
                                    @if let Some(code) = d.response_status { "HTTP " (code) }
                                    @if let Some(e) = &d.last_error { br; span.muted { (e) } }
                                }
                            }
                        }
                    }
                } }
            }
        }
        section.card.danger-zone aria-labelledby="h-delete" {
            h2 #h-delete { "Delete" }
            p.muted { "Removes the channel and its delivery log. Messages waiting to be retried are dropped." }
            form.inline method="post" action=(route) data-confirm="Delete this channel and its delivery log?" {
                (bridge(&back, "/admin/notifications", Some("Channel deleted."), Some(frame.csrf)))
                input type="hidden" name="_method" value="DELETE";
                button.danger type="submit" { "Delete " (c.name) }
            }
        }
    };
    page(frame, &c.name, flash, body)
}
