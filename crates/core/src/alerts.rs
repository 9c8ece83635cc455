//! Alerts from other tools (Alertmanager, Grafana, PagerDuty, Opsgenie,
//! Datadog, or any sender of the generic form), read into one shape, and
//! the rules that say what an alert moves. Each sender's payload is read
//! from its documented format (docs/integrations.md cites them); what a
//! payload lacks is a clear field error, never a guess.

use crate::status::{AlertOutcome, ComponentStatus, IncidentMode, IntegrationKind};
use crate::timestamp::Timestamp;
use crate::{FieldErrors, Id};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One alert as every sender is read: who it is (`fingerprint`, the
/// sender's own deduplication key), which of the sender's groups it
/// belongs to (alerts of one group share one incident), and whether it is
/// firing or resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Alert {
    pub fingerprint: String,
    pub group: String,
    pub firing: bool,
    pub title: String,
    pub description: Option<String>,
    /// What rules match on: the sender's labels, tags and severity.
    pub labels: BTreeMap<String, String>,
}

/// What a payload says: its alerts, and what it carried that is not an
/// alert (a PagerDuty ping, an Opsgenie note) in words for the log.
#[derive(Debug, Default)]
pub struct Received {
    pub alerts: Vec<Alert>,
    pub ignored: Option<String>,
}

/// Reads a sender's payload. Errors name the JSON path of what is missing
/// or wrong.
pub fn read(kind: IntegrationKind, body: &Value) -> Result<Received, FieldErrors> {
    if !body.is_object() {
        return Err(FieldErrors::single("", "must be a JSON object"));
    }
    let mut received = match kind {
        IntegrationKind::Alertmanager => alertmanager(body, true),
        IntegrationKind::Grafana => alertmanager(body, false),
        IntegrationKind::Pagerduty => pagerduty(body),
        IntegrationKind::Opsgenie => opsgenie(body),
        IntegrationKind::Datadog => datadog(body),
        IntegrationKind::Generic => generic(body),
    }?;
    // A sender's words become an incident's title and first message: they
    // keep the incident's rules (one line of at most 255 characters, no
    // control characters), as `POST /api/v1/incidents` would.
    for a in &mut received.alerts {
        a.title = crate::validate::headline(&a.title).unwrap_or_else(|| "Alert".into());
        a.description = a
            .description
            .as_deref()
            .map(|d| crate::validate::foreign_text(d, crate::validate::MESSAGE_MAX))
            .filter(|d| !d.is_empty());
    }
    Ok(received)
}

/// The errors found so far, when a payload cannot be read further.
fn so_far(e: &mut FieldErrors) -> Result<(), FieldErrors> {
    std::mem::replace(e, FieldErrors::new()).into_result()
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

fn required<'a>(v: &'a Value, key: &str, path: &str, e: &mut FieldErrors) -> &'a str {
    match v.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            e.push(path, "is required");
            ""
        }
        Some(_) => {
            e.push(path, "must be a string");
            ""
        }
    }
}

/// A JSON object of strings (labels, annotations); other values are
/// written as JSON text, so a number label still matches.
fn string_map(v: Option<&Value>, path: &str, e: &mut FieldErrors) -> BTreeMap<String, String> {
    match v {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect(),
        Some(_) => {
            e.push(path, "must be an object of strings");
            BTreeMap::new()
        }
    }
}

/// Firing or resolved, as Alertmanager and the generic form say it.
fn state(v: &Value, path: &str, e: &mut FieldErrors) -> bool {
    match v.get("status").and_then(Value::as_str) {
        Some("firing") => true,
        Some("resolved") => false,
        _ => {
            e.push(path, "must be firing or resolved");
            false
        }
    }
}

/// A stable fingerprint from labels, for senders that give none.
fn labels_fingerprint(labels: &BTreeMap<String, String>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (k, v) in labels {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..8])
}

/// Alertmanager's webhook (version 4) and Grafana's, which is the same
/// shape with a few fields more: https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
/// and https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/
fn alertmanager(body: &Value, strict_version: bool) -> Result<Received, FieldErrors> {
    let mut e = FieldErrors::new();
    if strict_version {
        match body.get("version").and_then(Value::as_str) {
            Some("4") | None => {}
            Some(_) => e.push(
                "version",
                "must be 4: Upstate reads Alertmanager's webhook version 4",
            ),
        }
    }
    let group_key = text(body, "groupKey").unwrap_or("").to_string();
    let common = string_map(body.get("commonLabels"), "commonLabels", &mut e);
    let Some(items) = body.get("alerts").and_then(Value::as_array) else {
        e.push("alerts", "is required: a list of alerts");
        return Err(e);
    };
    let mut alerts = Vec::new();
    for (i, a) in items.iter().enumerate() {
        let path = |f: &str| format!("alerts[{i}].{f}");
        let firing = state(a, &path("status"), &mut e);
        let labels = string_map(a.get("labels"), &path("labels"), &mut e);
        let annotations = string_map(a.get("annotations"), &path("annotations"), &mut e);
        let fingerprint = text(a, "fingerprint")
            .map(str::to_string)
            .unwrap_or_else(|| labels_fingerprint(&labels));
        let title = annotations
            .get("summary")
            .or_else(|| labels.get("alertname"))
            .or_else(|| common.get("alertname"))
            .cloned()
            .unwrap_or_else(|| "Alert".into());
        alerts.push(Alert {
            group: if group_key.is_empty() {
                fingerprint.clone()
            } else {
                group_key.clone()
            },
            fingerprint,
            firing,
            title,
            description: annotations.get("description").cloned(),
            labels,
        });
    }
    e.into_result()?;
    Ok(Received {
        alerts,
        ignored: None,
    })
}

/// PagerDuty's v3 webhooks: https://developer.pagerduty.com/docs/webhooks/v3-overview/
/// An incident triggered or reopened fires; resolved resolves; its other
/// events (acknowledged, annotated, a subscription's ping) change nothing.
fn pagerduty(body: &Value) -> Result<Received, FieldErrors> {
    let mut e = FieldErrors::new();
    let Some(event) = body.get("event").filter(|v| v.is_object()) else {
        return Err(FieldErrors::single(
            "event",
            "is required: PagerDuty's v3 webhook event",
        ));
    };
    let kind = required(event, "event_type", "event.event_type", &mut e).to_string();
    so_far(&mut e)?;
    let firing = match kind.as_str() {
        "incident.triggered" | "incident.reopened" => true,
        "incident.resolved" => false,
        other => {
            return Ok(Received {
                alerts: Vec::new(),
                ignored: Some(format!("PagerDuty event {other}: nothing to do")),
            });
        }
    };
    let Some(data) = event.get("data").filter(|v| v.is_object()) else {
        return Err(FieldErrors::single(
            "event.data",
            "is required: the incident",
        ));
    };
    let id = required(data, "id", "event.data.id", &mut e).to_string();
    let title = required(data, "title", "event.data.title", &mut e).to_string();
    e.into_result()?;
    let fingerprint = text(data, "incident_key").unwrap_or(&id).to_string();
    let mut labels = BTreeMap::new();
    labels.insert("alertname".to_string(), title.clone());
    let summary = |k: &str| {
        data.get(k)
            .and_then(|v| text(v, "summary"))
            .map(str::to_string)
    };
    if let Some(s) = summary("service") {
        labels.insert("service".into(), s);
    }
    if let Some(p) = summary("priority") {
        labels.insert("priority".into(), p);
    }
    if let Some(u) = text(data, "urgency") {
        labels.insert("urgency".into(), u.to_string());
        labels.insert("severity".into(), u.to_string());
    }
    Ok(Received {
        alerts: vec![Alert {
            group: fingerprint.clone(),
            fingerprint,
            firing,
            title,
            description: None,
            labels,
        }],
        ignored: None,
    })
}

/// Tags as labels: `env:prod` is `env=prod`, a bare `db` is `db=true`
/// (Datadog writes its tags that way, Opsgenie's are often bare).
fn tag_labels<'a>(tags: impl Iterator<Item = &'a str>, labels: &mut BTreeMap<String, String>) {
    for t in tags.map(str::trim).filter(|t| !t.is_empty()) {
        match t.split_once(':') {
            Some((k, v)) => labels.insert(k.to_string(), v.to_string()),
            None => labels.insert(t.to_string(), "true".into()),
        };
    }
}

/// Opsgenie's outgoing webhook: https://support.atlassian.com/opsgenie/docs/integrate-opsgenie-with-outgoing-webhooks/
/// `Create` fires, `Close` resolves; its other actions change nothing.
/// The alias is Opsgenie's own deduplication key.
fn opsgenie(body: &Value) -> Result<Received, FieldErrors> {
    let mut e = FieldErrors::new();
    let action = required(body, "action", "action", &mut e).to_string();
    so_far(&mut e)?;
    let firing = match action.as_str() {
        "Create" => true,
        "Close" => false,
        other => {
            return Ok(Received {
                alerts: Vec::new(),
                ignored: Some(format!("Opsgenie action {other}: nothing to do")),
            });
        }
    };
    let Some(alert) = body.get("alert").filter(|v| v.is_object()) else {
        return Err(FieldErrors::single("alert", "is required: the alert"));
    };
    let id = required(alert, "alertId", "alert.alertId", &mut e).to_string();
    let message = required(alert, "message", "alert.message", &mut e).to_string();
    let mut labels = string_map(alert.get("details"), "alert.details", &mut e);
    e.into_result()?;
    if let Some(tags) = alert.get("tags").and_then(Value::as_array) {
        tag_labels(tags.iter().filter_map(Value::as_str), &mut labels);
    }
    for k in ["priority", "entity", "source"] {
        if let Some(v) = text(alert, k) {
            labels.insert(k.to_string(), v.to_string());
        }
    }
    labels.insert("alertname".into(), message.clone());
    let fingerprint = text(alert, "alias").unwrap_or(&id).to_string();
    Ok(Received {
        alerts: vec![Alert {
            group: fingerprint.clone(),
            fingerprint,
            firing,
            title: message,
            description: text(alert, "description").map(str::to_string),
            labels,
        }],
        ignored: None,
    })
}

/// The payload a Datadog webhook must send (its "custom payload"); each
/// `$NAME` is Datadog's own variable.
pub const DATADOG_TEMPLATE: &str = r#"{
  "id": "$ID",
  "alertId": "$ALERT_ID",
  "aggregate": "$AGGREG_KEY",
  "transition": "$ALERT_TRANSITION",
  "alertType": "$ALERT_TYPE",
  "title": "$EVENT_TITLE",
  "body": "$EVENT_MSG",
  "priority": "$ALERT_PRIORITY",
  "tags": "$TAGS",
  "link": "$LINK"
}"#;

/// Datadog's webhook, with the payload template docs/integrations.md gives
/// (Datadog lets each webhook write its own; these are its variables:
/// https://docs.datadoghq.com/integrations/webhooks/#variables). A monitor's
/// alert is `alertId`, each of its groups (`aggregate`) is one alert.
fn datadog(body: &Value) -> Result<Received, FieldErrors> {
    let mut e = FieldErrors::new();
    let alert_id = required(body, "alertId", "alertId", &mut e).to_string();
    let transition = required(body, "transition", "transition", &mut e).to_string();
    let title = required(body, "title", "title", &mut e).to_string();
    e.into_result()?;
    let firing =
        !(transition.starts_with("Recovered") || text(body, "alertType") == Some("success"));
    let mut labels = BTreeMap::new();
    if let Some(tags) = text(body, "tags") {
        tag_labels(tags.split(','), &mut labels);
    }
    if let Some(p) = text(body, "priority") {
        labels.insert("priority".into(), p.to_string());
    }
    labels.insert("transition".into(), transition);
    labels.insert("alertname".into(), title.clone());
    let fingerprint = match text(body, "aggregate") {
        Some(a) => format!("{alert_id}/{a}"),
        None => alert_id.clone(),
    };
    Ok(Received {
        alerts: vec![Alert {
            fingerprint,
            group: alert_id,
            firing,
            title,
            description: text(body, "body").map(str::to_string),
            labels,
        }],
        ignored: None,
    })
}

/// Upstate's own form, for scripts and tools without a receiver here: one
/// alert, or `{"alerts": [...]}` (docs/integrations.md, "Generic").
fn generic(body: &Value) -> Result<Received, FieldErrors> {
    let one = [body.clone()];
    let (items, prefix): (&[Value], &str) = match body.get("alerts") {
        Some(Value::Array(a)) => (a, "alerts"),
        Some(_) => return Err(FieldErrors::single("alerts", "must be a list of alerts")),
        None => (&one, ""),
    };
    let mut e = FieldErrors::new();
    let mut alerts = Vec::new();
    for (i, a) in items.iter().enumerate() {
        let path = |f: &str| {
            if prefix.is_empty() {
                f.to_string()
            } else {
                format!("{prefix}[{i}].{f}")
            }
        };
        let key = required(a, "key", &path("key"), &mut e).to_string();
        let title = required(a, "title", &path("title"), &mut e).to_string();
        let firing = state(a, &path("status"), &mut e);
        let mut labels = string_map(a.get("labels"), &path("labels"), &mut e);
        if let Some(s) = text(a, "severity") {
            labels.insert("severity".into(), s.to_string());
        }
        labels.insert("alertname".into(), title.clone());
        alerts.push(Alert {
            group: text(a, "group").unwrap_or(&key).to_string(),
            fingerprint: key,
            firing,
            title,
            description: text(a, "message").map(str::to_string),
            labels,
        });
    }
    e.into_result()?;
    Ok(Received {
        alerts,
        ignored: None,
    })
}

/// One condition on a label, as Alertmanager writes them: `name=value`,
/// `name!=value`, `name=~regex`, `name!~regex` (regexes match the whole
/// value). A label the alert lacks has the empty value.
#[derive(Debug, Clone)]
pub struct Matcher {
    name: String,
    op: Op,
}

#[derive(Debug, Clone)]
enum Op {
    Eq(String),
    Ne(String),
    Re(Regex),
    NotRe(Regex),
}

impl Matcher {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.name).map(String::as_str).unwrap_or("");
        match &self.op {
            Op::Eq(x) => v == x,
            Op::Ne(x) => v != x,
            Op::Re(r) => r.is_match(v),
            Op::NotRe(r) => !r.is_match(v),
        }
    }
}

/// Splits at commas outside double quotes.
fn split_matchers(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => {
                cur.push(c);
                escaped = false;
            }
            '\\' if quoted => {
                cur.push(c);
                escaped = true;
            }
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn unquote(v: &str) -> Result<String, String> {
    let v = v.trim();
    if let Some(inner) = v.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"') else {
            return Err("has a quote that is not closed".into());
        };
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else {
                out.push(c);
            }
        }
        Ok(out)
    } else {
        Ok(v.to_string())
    }
}

/// Reads `severity="critical", service=~"api|web"`; the empty text is no
/// condition (every alert). Errors say which matcher is wrong and why.
pub fn parse_matchers(s: &str) -> Result<Vec<Matcher>, String> {
    let s = s.trim();
    let s = s
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(s);
    let mut out = Vec::new();
    for part in split_matchers(s) {
        let Some(at) = part.find(['=', '!']) else {
            return Err(format!(
                "“{part}” is not a matcher: write name=value, name!=value, name=~regex or name!~regex"
            ));
        };
        let name = part[..at].trim();
        let rest = &part[at..];
        let (op, value) = if let Some(v) = rest.strip_prefix("=~") {
            ("=~", v)
        } else if let Some(v) = rest.strip_prefix("!~") {
            ("!~", v)
        } else if let Some(v) = rest.strip_prefix("!=") {
            ("!=", v)
        } else if let Some(v) = rest.strip_prefix('=') {
            ("=", v)
        } else {
            return Err(format!("“{part}” has no operator (=, !=, =~ or !~)"));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        {
            return Err(format!(
                "“{part}” needs a label name of letters, digits, _ . or -"
            ));
        }
        let value = unquote(value).map_err(|m| format!("“{part}” {m}"))?;
        let regex = || {
            Regex::new(&format!("^(?:{value})$"))
                .map_err(|e| format!("“{part}” has a regex that does not compile: {e}"))
        };
        let op = match op {
            "=~" => Op::Re(regex()?),
            "!~" => Op::NotRe(regex()?),
            "!=" => Op::Ne(value),
            _ => Op::Eq(value),
        };
        out.push(Matcher {
            name: name.to_string(),
            op,
        });
    }
    Ok(out)
}

fn yes() -> bool {
    true
}

/// What an alert that matches does. Rules are tried in order; the first
/// that matches decides (as Alertmanager's routes do).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// Matchers on the alert's labels, comma-separated, as Alertmanager
    /// writes them: `severity="critical", service=~"api|web"`. Empty or
    /// absent: every alert.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub when: String,
    /// The components the alert moves (on the integration's page).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::rule_component_ids))]
    pub component_ids: Vec<Id>,
    /// Where they move: degraded, partial_outage or major_outage.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::alert_status))]
    pub status: ComponentStatus,
    /// `draft` (the default): an incident waits for a person's approval;
    /// `publish`: the incident is public at once; `none`: only the
    /// components move.
    #[serde(default = "default_mode")]
    pub incident: IncidentMode,
    /// When every alert of the group is resolved, the components return
    /// and the incident is resolved (default true). False leaves both to
    /// people.
    #[serde(default = "yes")]
    pub resolve: bool,
    /// The incident's last update when the alerts resolve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::optional_message))]
    pub resolve_message: Option<String>,
}

fn default_mode() -> IncidentMode {
    IncidentMode::Draft
}

impl Rule {
    /// Checks one rule; errors are named under `field` (`rules[2]`).
    pub fn check(&self, field: &str, e: &mut FieldErrors) {
        if let Err(m) = parse_matchers(&self.when) {
            e.push(&format!("{field}.when"), m);
        }
        if self.component_ids.is_empty() {
            e.push(
                &format!("{field}.componentIds"),
                "must name at least one component",
            );
        }
        let mut seen = std::collections::HashSet::new();
        if self.component_ids.iter().any(|c| !seen.insert(*c)) {
            e.push(&format!("{field}.componentIds"), "names a component twice");
        }
        if !matches!(
            self.status,
            ComponentStatus::Degraded
                | ComponentStatus::PartialOutage
                | ComponentStatus::MajorOutage
        ) {
            e.push(
                &format!("{field}.status"),
                "must be degraded, partial_outage or major_outage",
            );
        }
        if self.when.chars().count() > 1000 {
            e.push(&format!("{field}.when"), "must be at most 1000 characters");
        }
        if let Some(m) = &self.resolve_message
            && let Err(why) = crate::validate::text(m, crate::validate::MESSAGE_MAX)
        {
            e.push(&format!("{field}.resolveMessage"), why);
        }
    }

    /// True when every matcher holds for the alert's labels. A rule whose
    /// matchers were stored is valid; one that somehow is not matches
    /// nothing.
    pub fn matches(&self, alert: &Alert) -> bool {
        parse_matchers(&self.when)
            .map(|ms| ms.iter().all(|m| m.matches(&alert.labels)))
            .unwrap_or(false)
    }
}

/// The first rule that matches, with its index.
pub fn first_match<'a>(rules: &'a [Rule], alert: &Alert) -> Option<(usize, &'a Rule)> {
    rules.iter().enumerate().find(|(_, r)| r.matches(alert))
}

/// How bad an incident opened at `status` is.
pub fn impact_of(status: ComponentStatus) -> crate::Impact {
    match status {
        ComponentStatus::MajorOutage => crate::Impact::Critical,
        ComponentStatus::PartialOutage => crate::Impact::Major,
        _ => crate::Impact::Minor,
    }
}

/// Keeps a payload's free text to what an incident holds.
pub fn clip(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// An object from the labels, for the event log.
pub fn labels_json(labels: &BTreeMap<String, String>) -> Value {
    Value::Object(
        labels
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
    )
}

/// An integration as it leaves: never its token or secret, only whether it
/// has a secret (its sender's posts must then be signed).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Integration {
    pub id: Id,
    pub kind: IntegrationKind,
    pub name: String,
    pub status_page_id: Id,
    pub rules: Vec<Rule>,
    pub enabled: bool,
    /// Posts must carry the sender's signature (PagerDuty, generic).
    pub signed: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /api/integrations`: one sender, one page.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewIntegration {
    pub kind: IntegrationKind,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub status_page_id: Id,
    #[serde(default)]
    pub rules: Vec<Rule>,
    pub enabled: Option<bool>,
    /// The signing secret a sender gives (PagerDuty shows one when its
    /// webhook subscription is made). For `generic`, Upstate makes one
    /// when none is given.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::signing_secret))]
    pub secret: Option<String>,
}

/// `PUT /api/integrations/{id}`: any subset. The sender and the page stay
/// (make a new integration for another).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IntegrationChange {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: Option<String>,
    /// Replaces the whole list.
    pub rules: Option<Vec<Rule>>,
    pub enabled: Option<bool>,
    /// A new signing secret; the empty string removes it.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::signing_secret))]
    pub secret: Option<String>,
}

/// The longest signing secret kept.
pub const SECRET_MAX: usize = 256;

fn check_common(
    name: Option<&str>,
    rules: Option<&[Rule]>,
    secret: Option<&str>,
    e: &mut FieldErrors,
) {
    if let Some(n) = name
        && let Err(m) = crate::validate::name(n)
    {
        e.push("name", m);
    }
    if let Some(rules) = rules {
        if rules.len() > 50 {
            e.push("rules", "must hold at most 50 rules");
        }
        for (i, r) in rules.iter().enumerate() {
            r.check(&format!("rules[{i}]"), e);
        }
    }
    if let Some(s) = secret
        && (s.chars().count() > SECRET_MAX || s.chars().any(char::is_control))
    {
        e.push(
            "secret",
            format!("must be at most {SECRET_MAX} characters on one line"),
        );
    }
}

impl NewIntegration {
    pub fn check(&self) -> Result<(), FieldErrors> {
        let mut e = FieldErrors::new();
        check_common(
            Some(&self.name),
            Some(&self.rules),
            self.secret.as_deref(),
            &mut e,
        );
        e.into_result()
    }
}

impl IntegrationChange {
    pub fn check(&self) -> Result<(), FieldErrors> {
        let mut e = FieldErrors::new();
        check_common(
            self.name.as_deref(),
            self.rules.as_deref(),
            self.secret.as_deref(),
            &mut e,
        );
        e.into_result()
    }
}

/// A new integration, with what is shown only this once: the receiver URL
/// (its token is the secret of the path) and, for `generic`, the signing
/// secret Upstate made.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IntegrationCreated {
    #[serde(flatten)]
    pub integration: Integration,
    pub receiver_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// An incident an integration drafted and a person has not yet approved:
/// not on the page, told to nobody, its components not moved.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AlertDraft {
    pub id: Id,
    pub integration_id: Id,
    pub integration_name: String,
    pub status_page_id: Id,
    pub title: String,
    pub message: String,
    pub impact: crate::Impact,
    /// Where the components go when it is approved.
    pub components: Vec<crate::ComponentStatusChange>,
    /// How many of the group's alerts fire now.
    pub firing: i64,
    pub opened_at: Timestamp,
}

/// `POST /api/alert-drafts/{id}/approve`: the words may be changed on the
/// way (absent: as drafted).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftApproval {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::message))]
    pub message: Option<String>,
    pub impact: Option<crate::Impact>,
}

impl DraftApproval {
    pub fn check(&self) -> Result<(), FieldErrors> {
        let mut e = FieldErrors::new();
        if let Some(t) = &self.title
            && let Err(m) = crate::validate::name(t)
        {
            e.push("title", m);
        }
        if let Some(t) = &self.message
            && let Err(m) = crate::validate::message(t)
        {
            e.push("message", m);
        }
        e.into_result()
    }
}

/// One line of an integration's log: an alert received and what it did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IntegrationEvent {
    pub id: Id,
    pub at: Timestamp,
    pub fingerprint: String,
    pub firing: bool,
    pub title: String,
    pub outcome: AlertOutcome,
    pub detail: String,
}

/// What the receiver answers: one outcome per alert of the payload.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReceiveReport {
    pub message: String,
    pub outcomes: Vec<AlertOutcome>,
}

#[cfg(test)]
// A test that cannot read what it built must stop there, loudly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> Alert {
        Alert {
            fingerprint: "f".into(),
            group: "g".into(),
            firing: true,
            title: "t".into(),
            description: None,
            labels: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn rule(when: &str) -> Rule {
        Rule {
            when: when.into(),
            component_ids: vec![1],
            status: ComponentStatus::MajorOutage,
            incident: IncidentMode::Draft,
            resolve: true,
            resolve_message: None,
        }
    }

    #[test]
    fn matchers_read_as_alertmanager_writes_them() {
        let a = labels(&[("severity", "critical"), ("service", "api")]);
        assert!(rule("").matches(&a));
        assert!(rule("severity=critical").matches(&a));
        assert!(rule(r#"{severity="critical", service=~"api|web"}"#).matches(&a));
        assert!(!rule(r#"severity="critical", service!~"api|web""#).matches(&a));
        assert!(!rule("severity!=critical").matches(&a));
        assert!(rule("team=").matches(&a), "a missing label is empty");
        assert!(!rule("service=~ap").matches(&a), "regexes are anchored");
        assert!(rule(r#"note="a, b""#).matches(&labels(&[("note", "a, b")])));
    }

    #[test]
    fn bad_matchers_say_what_is_wrong() {
        assert!(
            parse_matchers("severity")
                .unwrap_err()
                .contains("not a matcher")
        );
        assert!(
            parse_matchers("sev=~(")
                .unwrap_err()
                .contains("does not compile")
        );
        assert!(parse_matchers("=x").unwrap_err().contains("label name"));
        assert!(
            parse_matchers(r#"a="x"#)
                .unwrap_err()
                .contains("not closed")
        );
    }

    #[test]
    fn the_first_rule_that_matches_decides() {
        let rules = [
            rule("severity=warning"),
            rule("severity=critical"),
            rule(""),
        ];
        let a = labels(&[("severity", "critical")]);
        assert_eq!(first_match(&rules, &a).map(|(i, _)| i), Some(1));
    }

    #[test]
    fn alertmanager_alerts_keep_the_group_and_fingerprint() {
        let r = read(
            IntegrationKind::Alertmanager,
            &json!({"version": "4", "groupKey": "{}:{alertname=\"Down\"}", "status": "firing",
                "alerts": [{"status": "firing", "labels": {"alertname": "Down", "severity": "critical"},
                    "annotations": {"summary": "API down"}, "fingerprint": "abc"}]}),
        )
        .unwrap();
        assert_eq!(r.alerts[0].fingerprint, "abc");
        assert_eq!(r.alerts[0].title, "API down");
        assert_eq!(r.alerts[0].group, "{}:{alertname=\"Down\"}");
        let bad = read(
            IntegrationKind::Alertmanager,
            &json!({"alerts": [{"status": "on"}]}),
        );
        assert_eq!(bad.unwrap_err().0[0].field, "alerts[0].status");
    }

    #[test]
    fn events_that_are_not_alerts_change_nothing() {
        let r = read(
            IntegrationKind::Pagerduty,
            &json!({"event": {"event_type": "pagey.ping"}}),
        )
        .unwrap();
        assert!(r.alerts.is_empty() && r.ignored.is_some());
        let r = read(
            IntegrationKind::Opsgenie,
            &json!({"action": "AddNote", "alert": {}}),
        )
        .unwrap();
        assert!(r.alerts.is_empty());
    }

    #[test]
    fn tags_become_labels() {
        let r = read(
            IntegrationKind::Datadog,
            &json!({"alertId": "7", "transition": "Recovered", "title": "CPU", "tags": "env:prod, db"}),
        )
        .unwrap();
        let a = &r.alerts[0];
        assert!(!a.firing);
        assert_eq!(a.labels["env"], "prod");
        assert_eq!(a.labels["db"], "true");
    }
}
