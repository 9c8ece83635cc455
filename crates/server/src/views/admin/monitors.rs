//! `/admin/monitors`: every monitor with its verdict (and a new one), and
//! one monitor's screen: test now with the answer shown, change it, hand the
//! component back, its latest checks, delete it.

use super::{Frame, Input, bridge, page, when};
use crate::form_bridge::Flash;
use crate::views::CHART_MS;
use crate::views::chart::{ChartText, response_chart};
use maud::{Markup, html};
use upstate_core::monitors::{CheckResult, DNS_TYPES, Monitor, MonitorConfig};
use upstate_core::{Component, MonitorKind, MonitorState, StatusPage, Timestamp};
use upstate_store::monitor_stats::Series;

/// A monitor with the names it is shown by.
pub struct Row<'a> {
    pub monitor: &'a Monitor,
    pub component: &'a str,
    pub page: &'a str,
    /// Its latest checks, newest first (read for the rows shown).
    pub recent: Vec<CheckResult>,
}

/// What the monitor list was asked for.
pub struct MonitorSearch {
    /// Words of the component, page or target.
    pub text: Option<String>,
    /// `failing` (down or slow), `up` or `paused`.
    pub state: Option<String>,
    /// The page of results, from 1.
    pub number: usize,
}

impl MonitorSearch {
    /// The list's address for results page `n` of this search.
    fn href(&self, n: usize) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if let Some(t) = &self.text {
            query.append_pair("q", t);
        }
        if let Some(s) = &self.state {
            query.append_pair("state", s);
        }
        if n > 1 {
            query.append_pair("p", &n.to_string());
        }
        let query = query.finish();
        if query.is_empty() {
            "/admin/monitors".into()
        } else {
            format!("/admin/monitors?{query}")
        }
    }

    pub fn keeps(&self, r: &Row) -> bool {
        let m = r.monitor;
        let words = self.text.as_deref().map(str::to_lowercase);
        let text_ok = words.is_none_or(|w| {
            [r.component, r.page, m.config.target.as_str()]
                .iter()
                .any(|f| f.to_lowercase().contains(&w))
        });
        let state_ok = match self.state.as_deref() {
            Some("failing") => {
                m.config.enabled && matches!(m.state, MonitorState::Down | MonitorState::Degraded)
            }
            Some("up") => m.config.enabled && m.state == MonitorState::Up,
            Some("paused") => !m.config.enabled,
            _ => true,
        };
        text_ok && state_ok
    }
}

/// Where a monitor goes in a list: failing first, paused last.
pub fn monitor_rank(m: &Monitor) -> u8 {
    if !m.config.enabled {
        return 5;
    }
    match m.state {
        MonitorState::Down => 0,
        MonitorState::Degraded => 1,
        MonitorState::Unknown => 2,
        MonitorState::Up => 3,
    }
}

/// The latest checks as a strip of bars, oldest left (as Uptime Kuma shows
/// them): up, slow (over the monitor's threshold) or down, each with its
/// time and answer as a tooltip; the strip says its counts in words.
pub fn strip(m: &Monitor, recent: &[CheckResult]) -> Markup {
    let slow = m.config.degraded_above_ms;
    let class = |c: &CheckResult| {
        if !c.ok {
            "down"
        } else if slow.is_some_and(|t| c.latency_ms.is_some_and(|l| l > t)) {
            "slow"
        } else {
            "up"
        }
    };
    let failed = recent.iter().filter(|c| !c.ok).count();
    let words = format!("Last {} checks: {} failed", recent.len(), failed);
    html! {
        @if !recent.is_empty() {
            span.strip role="img" aria-label=(words) title=(words) {
                @for c in recent.iter().rev() {
                    span class=(format!("bar {}", class(c))) title=(format!("{}{}{}", when(c.at),
                        c.latency_ms.map(|l| format!(", {l} ms")).unwrap_or_default(),
                        c.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default())) {}
                }
            }
        }
    }
}

fn state_pill(s: MonitorState) -> Markup {
    let (class, text) = match s {
        MonitorState::Up => ("s-operational", "Up"),
        MonitorState::Degraded => ("s-degraded", "Slow"),
        MonitorState::Down => ("s-major_outage", "Down"),
        MonitorState::Unknown => ("s-none", "Not checked yet"),
    };
    html! { span.pill.(class) { (text) } }
}

fn kind_name(k: MonitorKind) -> &'static str {
    match k {
        MonitorKind::Http => "HTTP",
        MonitorKind::Tcp => "TCP",
        MonitorKind::Dns => "DNS",
        MonitorKind::Heartbeat => "Heartbeat",
    }
}

/// What a monitor watches, in one line.
fn watches(m: &Monitor) -> String {
    match m.config.kind {
        MonitorKind::Heartbeat => format!("a call at least every {} s", m.config.interval_seconds),
        MonitorKind::Dns => format!("{} {}", m.config.dns_record_type, m.config.target),
        _ => m.config.target.clone(),
    }
}

/// The settings both forms share; `c` fills them.
fn settings_fields(flash: Option<&Flash>, c: &MonitorConfig) -> Markup {
    let value =
        |field: &str, current: String| flash.and_then(|f| f.value_of(field)).unwrap_or(current);
    let kind_now = value("kind", c.kind.as_str().into());
    html! {
        div.field {
            label for="f-kind" { "Kind" }
            select #f-kind name="kind" aria-describedby="f-kind-note" {
                @for k in MonitorKind::ALL {
                    option value=(k.as_str()) selected[kind_now == k.as_str()] { (kind_name(*k)) }
                }
            }
            span.hint #f-kind-note { "HTTP checks a URL; TCP opens a connection; DNS looks a name up; a heartbeat waits for your service to call its URL." }
        }
        (Input { value: Some(value("target", c.target.clone())), hint: Some("HTTP: https://api.example.com/health. TCP: db.internal:5432. DNS: api.example.com. Heartbeat: leave empty."),
            required: false, ..Input::new("target", "Target", "text") }.render(flash))
        div.grid {
            (Input { value: Some(value("intervalSeconds", c.interval_seconds.to_string())), form_name: Some("intervalSeconds:int"),
                hint: Some("10 to 86400. Heartbeat: the longest silence allowed."), ..Input::new("intervalSeconds", "Check every (seconds)", "number") }.render(flash))
            (Input { value: Some(value("timeoutMs", c.timeout_ms.to_string())), form_name: Some("timeoutMs:int"),
                hint: Some("100 to 60000, not longer than the interval."), ..Input::new("timeoutMs", "Timeout (ms)", "number") }.render(flash))
            (Input { value: Some(value("retries", c.retries.to_string())), form_name: Some("retries:int"),
                hint: Some("Failures in a row tolerated before the component moves (0 to 10)."), ..Input::new("retries", "Retries", "number") }.render(flash))
            (Input { value: Some(value("degradedAboveMs", c.degraded_above_ms.unwrap_or(0).to_string())), form_name: Some("degradedAboveMs:int"),
                hint: Some("Slower answers mark the component degraded; 0: off."), ..Input::new("degradedAboveMs", "Degraded above (ms)", "number") }.render(flash))
        }
        details {
            summary { "HTTP options" }
            div.grid {
                (Input { value: Some(value("method", c.method.clone())), hint: Some("GET, HEAD, POST, PUT, PATCH or OPTIONS."), ..Input::new("method", "Method", "text") }.render(flash))
                (Input { value: Some(value("expectedStatus", c.expected_status.clone())), hint: Some("Codes and ranges that count as up: 200-299, 301."),
                    ..Input::new("expectedStatus", "Expected status", "text") }.render(flash))
            }
            (Input { value: Some(value("keyword", c.keyword.clone())), hint: Some("Text the answer must contain (empty: any)."), required: false, ..Input::new("keyword", "Keyword", "text") }.render(flash))
            div.field { div.choices {
                input type="hidden" name="followRedirects:bool" value="";
                label { input type="checkbox" name="followRedirects:bool" checked[c.follow_redirects]; "Follow redirects" }
                input type="hidden" name="verifyTls:bool" value="";
                label { input type="checkbox" name="verifyTls:bool" checked[c.verify_tls]; "Verify the certificate (turn off for a target with its own authority)" }
            } }
            (Input { value: Some(value("certExpiryDays", c.cert_expiry_days.to_string())), form_name: Some("certExpiryDays:int"),
                hint: Some("HTTPS: mark the component degraded this many days before its certificate expires; 0: off."),
                ..Input::new("certExpiryDays", "Certificate warning (days)", "number") }.render(flash))
            (headers_fields(flash, c))
            (Input { value: Some(value("body", c.body.clone())), hint: Some("Sent as written (set a Content-Type header to match)."), required: false,
                ..Input::new("body", "Request body", "textarea") }.render(flash))
        }
        details {
            summary { "DNS options" }
            div.grid {
                @let type_now = value("dnsRecordType", c.dns_record_type.clone());
                div.field {
                    label for="f-dnsRecordType" { "Record type" }
                    select #f-dnsRecordType name="dnsRecordType" {
                        @for t in DNS_TYPES { option value=(t) selected[type_now == t] { (t) } }
                    }
                }
                (Input { value: Some(value("dnsServer", c.dns_server.clone())), hint: Some("An IP, optionally with a port: 1.1.1.1 or 10.0.0.53:5353. Empty: the system's resolver."),
                    required: false, ..Input::new("dnsServer", "DNS server", "text") }.render(flash))
            }
            (Input { value: Some(value("dnsExpected", c.dns_expected.clone())), hint: Some("One answer must be this, like 192.0.2.10 or mail.example.com (empty: any answer)."),
                required: false, ..Input::new("dnsExpected", "Expected answer", "text") }.render(flash))
        }
        div.field { div.choices {
            input type="hidden" name="openIncident:bool" value="";
            label { input type="checkbox" name="openIncident:bool" checked[c.open_incident]; "Open an incident when it goes down, and resolve it on recovery" }
        } }
        div.field { div.choices {
            input type="hidden" name="enabled:bool" value="";
            label { input type="checkbox" name="enabled:bool" checked[c.enabled]; "On (check on schedule)" }
        } }
    }
}

/// The request headers as rows of name and value (two blank rows to add
/// more; a row with no name is left out, so blanking every row removes
/// them all).
fn headers_fields(flash: Option<&Flash>, c: &MonitorConfig) -> Markup {
    let error = flash.and_then(|f| f.error_of("headers"));
    let rows: Vec<(&str, &str)> = c
        .headers
        .iter()
        .map(|h| (h.name.as_str(), h.value.as_str()))
        .chain([("", ""), ("", "")])
        .collect();
    html! {
        fieldset.field.invalid[error.is_some()] #f-headers aria-describedby=(if error.is_some() { "f-headers-error" } else { "f-headers-hint" }) {
            legend { "Request headers" }
            @for (i, (name, value)) in rows.iter().enumerate() {
                div.pair {
                    div.field {
                        label for=(format!("f-header-name-{i}")) { "Name " (i + 1) }
                        input id=(format!("f-header-name-{i}")) type="text" name="headers[][name]:req" value=(name) autocomplete="off";
                    }
                    div.field {
                        label for=(format!("f-header-value-{i}")) { "Value " (i + 1) }
                        input id=(format!("f-header-value-{i}")) type="text" name="headers[][value]" value=(value) autocomplete="off";
                    }
                }
            }
            @if let Some(e) = error { span.error #f-headers-error { (e) } }
            @else { span.hint #f-headers-hint { "Sent with every check (an Authorization header, say). Values are write-only: once saved, only a hint such as Bearer …c3t shows; leave it as it is to keep the value, or type a new one." } }
        }
    }
}

/// A third-party component, listed beside the monitors: the other way a
/// component's status moves on its own.
pub struct VendorRow<'a> {
    pub follow: &'a upstate_core::third_party::Follow,
    pub component: &'a str,
    pub page: &'a str,
}

/// What the monitor list shows.
pub struct MonitorsScreen<'a> {
    pub search: &'a MonitorSearch,
    /// This page of the matching monitors.
    pub rows: &'a [Row<'a>],
    /// Whether a next page follows.
    pub more: bool,
    pub pages: &'a [StatusPage],
    /// Components that can take a monitor.
    pub free: &'a [Component],
    pub vendors: &'a [VendorRow<'a>],
    pub can_write: bool,
}

pub fn monitors(frame: &Frame, flash: Option<&Flash>, screen: &MonitorsScreen) -> Markup {
    let MonitorsScreen {
        search,
        rows,
        more,
        pages,
        free,
        vendors,
        can_write,
    } = *screen;
    let back = "/admin/monitors";
    let body = html! {
        header.top { h1 { "Monitors" } }
        p.muted { "A monitor checks a component on its own and moves it: down after the failures you tolerate, back up on the first good check. Every move is in the component's history, the audit log, and the messages to subscribers. Targets on private addresses need monitor_allow (see docs/monitors.md)." }
        section.card aria-labelledby="h-monitors" {
            h2 #h-monitors { "Watching" }
            form.inline.filter.search method="get" action="/admin/monitors" role="search" {
                label for="f-mq" { "Find" }
                input #f-mq type="search" name="q" value=[search.text.as_deref()] placeholder="Component, page or target" data-shortcut="/";
                label for="f-mstate" { "Showing" }
                select #f-mstate name="state" {
                    @for (value, label) in [("", "All"), ("failing", "Failing (down or slow)"), ("up", "Up"), ("paused", "Paused")] {
                        option value=(value) selected[search.state.as_deref().unwrap_or("") == value] { (label) }
                    }
                }
                button.secondary type="submit" { "Search" }
                @if search.text.is_some() || search.state.is_some() { a href="/admin/monitors" { "Clear" } }
            }
            @if rows.is_empty() {
                @if search.text.is_some() || search.state.is_some() { p.empty { "No monitor matches." } }
                @else { p.empty { "No monitors yet." @if can_write { " Add one below." } } }
            }
            @else { ul.rows {
                @for r in rows {
                    @let m = r.monitor;
                    li {
                        span {
                            a href=(format!("/admin/monitors/{}", m.id)) { strong { (r.component) } }
                            " " span.muted { "(" (r.page) ")" }
                            " " (state_pill(m.state))
                            " " span.pill.s-none { (kind_name(m.config.kind)) }
                            @if !m.config.enabled { " " span.pill.s-degraded { "Paused" } }
                            @if m.manual { " " span.pill.s-degraded { "Held by hand" } }
                            br; span.muted { (watches(m)) }
                            @if let Some(at) = m.last_check_at {
                                br; span.muted { "Last check " (when(at))
                                    @if let Some(ms) = m.last_latency_ms { ", " (ms) " ms" }
                                    @if let Some(e) = &m.last_error { ": " (e) } }
                            }
                            br; (strip(m, &r.recent))
                        }
                        span.actions {
                            @if can_write {
                                form.inline method="post" action=(format!("/api/monitors/{}", m.id)) {
                                    (bridge(back, back, Some(if m.config.enabled { "Monitor paused." } else { "Monitor resumed." }), Some(frame.csrf)))
                                    input type="hidden" name="_method" value="PUT";
                                    input type="hidden" name="enabled:bool" value=(if m.config.enabled { "false" } else { "true" });
                                    button.secondary type="submit" { (if m.config.enabled { "Pause" } else { "Resume" }) span.visually-hidden { " " (r.component) } }
                                }
                            }
                            a.button.secondary href=(format!("/admin/monitors/{}", m.id)) { "Open" span.visually-hidden { " " (r.component) } }
                        }
                    }
                }
            } }
            @if search.number > 1 || more {
                nav.paging aria-label="Pages of monitors" {
                    @if search.number > 1 { a href=(search.href(search.number - 1)) rel="prev" { "← Previous" } }
                    span.muted { "Page " (search.number) }
                    @if more { a href=(search.href(search.number + 1)) rel="next" { "Next →" } }
                }
            }
        }
        section.card aria-labelledby="h-vendors" {
            h2 #h-vendors { "Third-party components" }
            p.muted { "Components that mirror a vendor's own status page or feed. Follow a vendor from the component's screen (docs/third-party.md)." }
            @if vendors.is_empty() { p.empty { "None yet." } }
            @else { ul.rows {
                @for v in vendors {
                    @let f = v.follow;
                    @let mark = f.mark();
                    li {
                        span {
                            a href=(format!("/admin/components/{}", f.component_id)) { strong { (v.component) } }
                            " " span.muted { "(" (v.page) ")" }
                            " " @match f.vendor_status {
                                Some(st) => span class=(format!("pill s-{}", st.as_str())) { (super::component_status_name(st)) },
                                None => span.pill.s-none { "not read yet" },
                            }
                            br; span.muted { "Mirrors " (mark.vendor) @if !f.config.vendor_component.is_empty() { " · " (f.config.vendor_component) } }
                            @if let Some(e) = &f.last_error { br; span.muted { "Last poll read nothing: " (e) } }
                        }
                        span.actions {
                            a.button.secondary href=(format!("/admin/components/{}#h-vendor", f.component_id)) { "Open" span.visually-hidden { " " (v.component) } }
                        }
                    }
                }
            } }
        }
        @if can_write {
            section.card aria-labelledby="h-new" {
                h2 #h-new { "New monitor" }
                @if free.is_empty() {
                    p.empty { "Every component has a monitor or follows a vendor. Add components on a status page first." }
                } @else {
                    form.stack method="post" action="/api/monitors" {
                        (bridge(back, "/admin/monitors/{id}", Some("Monitor added: its first check runs now."), Some(frame.csrf)))
                        div.field {
                            label for="f-componentId" { "Component" }
                            select #f-componentId name="componentId:int" {
                                @for p in pages {
                                    @let mine: Vec<&Component> = free.iter().filter(|c| c.status_page_id == p.id).collect();
                                    @if !mine.is_empty() {
                                        optgroup label=(p.name) {
                                            @for c in mine { option value=(c.id) { (c.name) } }
                                        }
                                    }
                                }
                            }
                        }
                        (settings_fields(flash, &MonitorConfig::default()))
                        div { button type="submit" { "Add monitor" } }
                    }
                }
            }
        }
    };
    page(frame, "Monitors", flash, body)
}

/// The result of "test now", from the flash.
fn test_result(flash: Option<&Flash>) -> Markup {
    let Some(f) = flash else { return html! {} };
    let Some(ok) = f.values.get("ok").and_then(|v| v.as_bool()) else {
        return html! {};
    };
    let code = f.values.get("statusCode").and_then(|v| v.as_i64());
    let ms = f.values.get("latencyMs").and_then(|v| v.as_i64());
    let error = f.values.get("error").and_then(|v| v.as_str());
    html! {
        div.alert.notice[ok].error[!ok] role="status" #test-result {
            @if ok { strong { "Up." } } @else { strong { "Down." } }
            @if let (Some(c), None) = (code, error) { " HTTP " (c) "." }
            @if let Some(ms) = ms { " " (ms) " ms." }
            @if let Some(e) = error { " " (e) "." }
        }
    }
}

pub struct MonitorScreen<'a> {
    pub monitor: &'a Monitor,
    pub component: &'a Component,
    pub checks: &'a [CheckResult],
    /// Its last 24 hours by the hour.
    pub day: &'a Series,
    pub now: Timestamp,
    pub can_write: bool,
}

pub fn monitor(frame: &Frame, flash: Option<&Flash>, s: &MonitorScreen) -> Markup {
    let m = s.monitor;
    let back = format!("/admin/monitors/{}", m.id);
    let route = format!("/api/monitors/{}", m.id);
    let title = format!("Monitor of {}", s.component.name);
    let body = html! {
        header.top {
            h1 { (title) " " (state_pill(m.state)) }
            a href="/admin/monitors" { "All monitors" }
        }
        div.grid {
            section.card aria-labelledby="h-now" {
                h2 #h-now { "Now" }
                dl.facts {
                    dt { "Watches" } dd { code { (watches(m)) } }
                    dt { "Component" } dd { a href=(format!("/admin/components/{}", s.component.id)) { (s.component.name) } " · " (s.component.status.as_str().replace('_', " ")) }
                    @if let Some(url) = &m.heartbeat_url {
                        dt { "Heartbeat URL" } dd { code #hb-url { (url) } " " button.secondary type="button" data-copy="hb-url" hidden { "Copy" } }
                    }
                    dt { "Next check" } dd { (when(m.next_check_at)) }
                    @if let Some(at) = m.cert_expires_at { dt { "Certificate expires" } dd #cert-expiry { (when(at)) } }
                    @if let Some(e) = &m.last_error { dt { "Last error" } dd { (e) } }
                }
                @if m.manual {
                    div.alert.notice role="status" {
                        "Someone set this component's status by hand: the monitor keeps checking but leaves the component alone until it is handed back."
                    }
                    @if s.can_write {
                        form method="post" action=(route) {
                            (bridge(&back, &back, Some("Handed back: the component follows its monitor again."), Some(frame.csrf)))
                            input type="hidden" name="_method" value="PUT";
                            input type="hidden" name="manual:bool" value="false";
                            button type="submit" { "Hand back to the monitor" }
                        }
                    }
                }
                @if s.can_write {
                    (test_result(flash))
                    form method="post" action=(format!("{route}/test")) {
                        (bridge(&back, &back, None, Some(frame.csrf)))
                        input type="hidden" name="_keep" value="ok,statusCode,latencyMs,error";
                        button.secondary type="submit" { "Test now" }
                    }
                    p.hint.muted { "Runs a check now and shows the answer; it is not recorded and moves nothing." }
                }
                @if m.config.kind != MonitorKind::Heartbeat {
                    (response_chart(&s.day.points, 3_600_000, s.now.plus_millis(-CHART_MS), s.now, &ChartText {
                        title: "Response time, last 24 hours", empty: "No measurements in the last 24 hours yet.",
                        avg: "average", p95: "95th percentile", start: "24 h ago", end: "now",
                    }, &s.day.summary))
                    p.hint.muted { "By the hour; the band reaches the 95th percentile. "
                        a href=(format!("/api/components/{}/response-times", m.component_id)) { "As JSON" } " (raw, minute, hour or day)." }
                }
            }
            @if s.can_write {
                section.card aria-labelledby="h-edit" {
                    h2 #h-edit { "Change" }
                    form.stack method="post" action=(route) {
                        (bridge(&back, &back, Some("Monitor saved: it checks again now."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="PUT";
                        (settings_fields(flash, &m.config))
                        div { button type="submit" { "Save monitor" } }
                    }
                }
            }
        }
        section.card aria-labelledby="h-checks" {
            h2 #h-checks { "Latest checks" }
            @if s.checks.is_empty() {
                p.empty { "No checks yet." }
            } @else {
                div.scroll-x tabindex="0" role="region" aria-label="Table of the latest checks" { table.events {
                    thead { tr { th { "When" } th { "Result" } th { "Time" } th { "Answer" } } }
                    tbody {
                        @for c in s.checks {
                            tr {
                                td { (when(c.at)) }
                                td { @if c.ok { span.pill.s-operational { "Up" } } @else { span.pill.s-major_outage { "Down" } } }
                                td { @if let Some(ms) = c.latency_ms { (ms) " ms" } }
                                td { @if let Some(code) = c.status_code { "HTTP " (code) " " } @if let Some(e) = &c.error { span.muted { (e) } } }
                            }
                        }
                    }
                } }
            }
        }
        @if s.can_write {
            section.card.danger-zone aria-labelledby="h-delete" {
                h2 #h-delete { "Delete" }
                p.muted { "The component keeps its status and history; nothing checks it any more." }
                form.inline method="post" action=(route) data-confirm="Delete this monitor and its checks?" {
                    (bridge(&back, "/admin/monitors", Some("Monitor deleted."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="DELETE";
                    button.danger type="submit" { "Delete monitor" }
                }
            }
        }
    };
    page(frame, &title, flash, body)
}
