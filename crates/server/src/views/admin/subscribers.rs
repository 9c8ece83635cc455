//! `/admin/subscribers`: who follows the pages (search, add, remove) and,
//! per subscriber, what was sent to them.

use super::{Frame, Input, bridge, page, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::notify::{Delivery, DeliveryStatus, Subscriber, SubscriberScope};
use upstate_core::{Component, StatusPage};

fn state(s: &Subscriber) -> Markup {
    html! {
        @if s.verified { span.pill.s-operational { "Confirmed" } }
        @else { span.pill.s-degraded { "Waiting for confirmation" } }
    }
}

pub struct SubscribersScreen<'a> {
    pub list: &'a [Subscriber],
    pub pages: &'a [StatusPage],
    /// Every page's components, for scoping a new subscriber.
    pub components: &'a [Component],
    pub q: &'a str,
    /// The open subscriber's deliveries, newest first.
    pub open: Option<(&'a Subscriber, &'a [Delivery])>,
    pub mail: bool,
}

pub fn subscribers(frame: &Frame, flash: Option<&Flash>, s: &SubscribersScreen) -> Markup {
    let back = "/admin/subscribers";
    let page_name = |id: i64| {
        s.pages
            .iter()
            .find(|p| p.id == id)
            .map_or_else(|| format!("page {id}"), |p| p.name.clone())
    };
    let imported = flash
        .and_then(|f| f.values.get("imported"))
        .and_then(|v| v.as_i64());
    let unchanged = flash
        .and_then(|f| f.values.get("unchanged"))
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let csv_error = flash.and_then(|f| f.error_of("csv"));
    let body = html! {
        header.top { h1 { "Subscribers" } }
        @if let Some(n) = imported {
            div.alert.notice role="status" { "Imported " (n) "; " (unchanged) " were subscribed already." }
        }
        p.muted { "Visitors subscribe on each page's “Get updates” form (email, confirmed by a link) or through the API (webhook, Slack, Discord, Teams). Every message carries a one-click unsubscribe." }
        @if let Some((sub, log)) = s.open {
            section.card aria-labelledby="h-history" {
                h2 #h-history { "Sent to " (sub.target) }
                @if log.is_empty() { p.empty { "Nothing sent yet." } }
                @else {
                    div.scroll-x tabindex="0" role="region" aria-label="Table of the deliveries" { table.events {
                        thead { tr { th { "When" } th { "Message" } th { "State" } th { "Answer" } } }
                        tbody {
                            @for d in log {
                                tr {
                                    td { (when(d.created_at)) }
                                    td { (d.title.clone().unwrap_or_else(|| if d.kind == "confirm" { "Confirmation".into() } else { d.kind.clone() })) }
                                    td { @match d.status {
                                        DeliveryStatus::Delivered => span.pill.s-operational { "Delivered" },
                                        DeliveryStatus::Pending => span.pill.s-degraded { "Retrying" },
                                        DeliveryStatus::GivenUp => span.pill.s-major_outage { "Given up" },
                                    } }
                                    td { @if let Some(c) = d.response_status { (c) " " } @if let Some(e) = &d.last_error { span.muted { (e) } } }
                                }
                            }
                        }
                    } }
                }
            }
        }
        section.card aria-labelledby="h-list" {
            h2 #h-list { "Subscribers" }
            form.inline.filter method="get" action=(back) role="search" {
                label.visually-hidden for="f-q" { "Search subscribers" }
                input #f-q type="search" data-shortcut="/" name="q" value=(s.q) placeholder="Address or URL";
                button.secondary type="submit" { "Search" }
            }
            @if s.list.is_empty() { p.empty { "No subscribers" @if !s.q.is_empty() { " match this search" } "." } }
            @else { ul.rows.wraps {
                @for sub in s.list {
                    li {
                        span {
                            strong { (sub.target) } " " (state(sub))
                            br; span.muted {
                                (sub.kind.as_str()) " · " (page_name(sub.status_page_id))
                                @if sub.scope == SubscriberScope::Incidents {
                                    " · follows "
                                    @if sub.incident_ids.is_empty() { "no incident now" }
                                    @for (n, i) in sub.incident_ids.iter().enumerate() {
                                        @if n > 0 { ", " }
                                        a href=(format!("/admin/incidents/{i}")) { "incident #" (i) }
                                    }
                                } @else {
                                    @match sub.component_ids.len() { 0 => { " · whole page" }, 1 => { " · 1 component" }, n => { " · " (n) " components" } }
                                    @if let Some(l) = upstate_core::i18n::Lang::parse(&sub.lang) { " · in " (l.name()) }
                                }
                                " · since " (when(sub.created_at))
                            }
                        }
                        span.actions {
                            a.button.secondary href=(format!("{back}?open={}", sub.id)) { "History" span.visually-hidden { " of " (sub.target) } }
                            form.inline method="post" action=(format!("/api/subscribers/{}", sub.id)) data-confirm="Remove this subscriber? They get no more messages." {
                                (bridge(back, back, Some("Subscriber removed."), Some(frame.csrf)))
                                input type="hidden" name="_method" value="DELETE";
                                button.secondary.danger type="submit" { "Remove" span.visually-hidden { " " (sub.target) } }
                            }
                        }
                    }
                }
            } }
        }
        section.card aria-labelledby="h-add" {
            h2 #h-add { "Add a subscriber" }
            form.stack method="post" action="/api/subscribers" {
                (bridge(back, back, Some("Subscriber added."), Some(frame.csrf)))
                div.field {
                    label for="f-statusPageId" { "Page" }
                    select #f-statusPageId name="statusPageId:int" {
                        @for p in s.pages { option value=(p.id) { (p.name) } }
                    }
                }
                div.field {
                    label for="f-kind" { "Kind" }
                    select #f-kind name="kind" {
                        @if s.mail { option value="email" { "Email" } }
                        option value="webhook" { "Webhook" }
                        option value="slack" { "Slack" }
                        option value="discord" { "Discord" }
                        option value="teams" { "Microsoft Teams" }
                    }
                }
                (Input { hint: Some("An email address, or the webhook URL."), ..Input::new("target", "Address or URL", "text") }.render(flash))
                (super::notifications::lang_select("f-sub-lang", &flash.and_then(|f| f.value_of("lang")).unwrap_or_default(), "Visitors who subscribe on the page get the language they read it in."))
                @if !s.components.is_empty() {
                    @let ticked: Vec<String> = flash.and_then(|f| f.values_of("componentIds")).unwrap_or_default();
                    @let several = s.pages.len() > 1;
                    fieldset.field.invalid[flash.and_then(|f| f.error_of("componentIds")).is_some()] data-follows-page="f-statusPageId" {
                        legend { "Components" }
                        p.hint { "Tick some to send only their changes; none ticked sends every change of the page." }
                        div.choices {
                            @for c in s.components {
                                label data-page=(c.status_page_id) {
                                    input type="checkbox" name="componentIds[]:int" value=(c.id) checked[ticked.iter().any(|t| *t == c.id.to_string())];
                                    (c.name)
                                    @if several { span.muted { " (" (page_name(c.status_page_id)) ")" } }
                                }
                            }
                        }
                        @if let Some(e) = flash.and_then(|f| f.error_of("componentIds")) { span.error { (e) } }
                    }
                }
                @if s.mail {
                    div.field { div.choices {
                        input type="hidden" name="skipConfirmation:bool" value="";
                        label { input type="checkbox" name="skipConfirmation:bool"; "Skip the confirmation email (they opted in elsewhere)" }
                    } }
                }
                div { button type="submit" { "Add subscriber" } }
            }
        }
        section.card aria-labelledby="h-import" {
            h2 #h-import { "Import" }
            form.stack method="post" action="/api/subscribers/import" {
                (bridge(back, back, None, Some(frame.csrf)))
                input type="hidden" name="_keep" value="imported,unchanged";
                div.field {
                    label for="f-import-page" { "Page" }
                    select #f-import-page name="statusPageId:int" {
                        @for p in s.pages { option value=(p.id) { (p.name) } }
                    }
                }
                div.field.invalid[csv_error.is_some()] {
                    label for="f-csv" { "CSV" }
                    textarea #f-csv name="csv" required aria-describedby="f-csv-note" placeholder="target,kind\nops@example.com,email\nhttps://hooks.example.com/x,webhook" {
                        (flash.and_then(|f| f.value_of("csv")).unwrap_or_default())
                    }
                    @if let Some(e) = csv_error { span.error #f-csv-note { (e) } }
                    @else { span.hint #f-csv-note { "A header row naming target (or email), optionally kind and componentIds; one subscriber per row. One bad row refuses the whole list." } }
                }
                @if s.mail {
                    div.field { div.choices {
                        input type="hidden" name="skipConfirmation:bool" value="";
                        label { input type="checkbox" name="skipConfirmation:bool"; "Skip the confirmation emails (the list opted in elsewhere)" }
                    } }
                }
                div { button type="submit" { "Import subscribers" } }
            }
        }
    };
    page(frame, "Subscribers", flash, body)
}
