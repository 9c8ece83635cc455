//! Monitors: a component's own check (HTTP, TCP, DNS, or a heartbeat the
//! watched service sends), how often it runs, and how results move the component
//! (docs/monitors.md). This module holds what a monitor is, what an operator
//! may set, and the pure rule that turns a run of results into a status; the
//! store keeps them and the jobs crate runs the checks.

use crate::status::{ComponentStatus, MonitorKind, MonitorState};
use crate::validate::FieldErrors;
use crate::{Id, Timestamp};
use serde::{Deserialize, Serialize};

/// Bounds of what an operator may choose.
pub const INTERVAL_MIN_S: i64 = 10;
pub const INTERVAL_MAX_S: i64 = 86_400;
pub const TIMEOUT_MIN_MS: i64 = 100;
pub const TIMEOUT_MAX_MS: i64 = 60_000;
pub const RETRIES_MAX: i64 = 10;
const TARGET_MAX: usize = 2_000;
const KEYWORD_MAX: usize = 200;
const BODY_MAX: usize = 10_000;
const HEADERS_MAX: usize = 20;
/// The request methods an HTTP monitor may use.
pub const METHODS: [&str; 6] = ["GET", "HEAD", "POST", "PUT", "PATCH", "OPTIONS"];
/// The record types a DNS monitor may ask for.
pub const DNS_TYPES: [&str; 6] = ["A", "AAAA", "CNAME", "MX", "NS", "TXT"];
pub const CERT_DAYS_MAX: i64 = 365;
const DAY_MS: i64 = 86_400_000;

/// What an operator sets (stored as one JSON document beside the monitor's
/// running state).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default)]
pub struct MonitorConfig {
    pub kind: MonitorKind,
    /// http: the URL; tcp: `host:port`; dns: the name to look up;
    /// heartbeat: empty (the service calls the monitor's own URL).
    pub target: String,
    /// Seconds between checks (heartbeat: the longest silence allowed).
    pub interval_seconds: i64,
    pub timeout_ms: i64,
    /// Failed checks in a row tolerated before the component moves (0: the
    /// first failure moves it).
    pub retries: i64,
    /// Answers slower than this mark the component degraded (none: speed
    /// does not matter).
    pub degraded_above_ms: Option<i64>,
    /// Open an incident when the component goes down, resolve it on recovery.
    pub open_incident: bool,
    pub enabled: bool,
    /// http: the request method.
    pub method: String,
    /// http: extra request headers.
    pub headers: Vec<Header>,
    /// http: the request body, sent as written.
    pub body: String,
    /// http: the answers that count as up, like `200-299` or `200, 301`.
    pub expected_status: String,
    /// http: text the answer's body must contain.
    pub keyword: String,
    /// http: follow redirects (each checked by the outgoing rule).
    pub follow_redirects: bool,
    /// https: refuse certificates that do not verify (off: for targets with
    /// their own authority; expiry is still watched).
    pub verify_tls: bool,
    /// https: days before the certificate expires when the component is
    /// marked degraded (0: off).
    pub cert_expiry_days: i64,
    /// dns: the record type asked for (A, AAAA, CNAME, MX, NS, TXT).
    pub dns_record_type: String,
    /// dns: the server asked, `ip` or `ip:port` (empty: the system's).
    pub dns_server: String,
    /// dns: one answer must be this (empty: any answer will do).
    pub dns_expected: String,
}

/// One request header of an HTTP monitor. Its value is write-only: often
/// a credential (`Authorization: Bearer …`), so it is never audited nor
/// returned once set; readers see `hint()` instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Header {
    pub name: String,
    /// Write-only: answers and the audit log show a hint such as
    /// `Bearer …c3t`; sending the hint back keeps the stored value.
    pub value: String,
}

/// What marks a hint; header values are visible ASCII, so no real value
/// holds it.
const HIDDEN: char = '…';

impl Header {
    /// What a reader may see of the value: its scheme word, if it has one
    /// (`Bearer`, `Basic`), and its last three characters when it is long
    /// enough that they give nothing away.
    pub fn hint(value: &str) -> String {
        let scheme = match value.split_once(' ') {
            Some((word, _)) if word.len() <= 20 => format!("{word} "),
            _ => String::new(),
        };
        let chars: Vec<char> = value.chars().collect();
        let tail: String = if chars.len() >= 16 {
            chars[chars.len() - 3..].iter().collect()
        } else {
            String::new()
        };
        format!("{scheme}{HIDDEN}{tail}")
    }

    /// This header as sent back by a reader: a hint of the stored header of
    /// the same name stands for its stored value.
    fn kept_from(&self, stored: &[Header]) -> Header {
        if self.value.contains(HIDDEN)
            && let Some(old) = stored.iter().find(|o| {
                o.name.eq_ignore_ascii_case(&self.name) && Header::hint(&o.value) == self.value
            })
        {
            return old.clone();
        }
        self.clone()
    }
}

impl MonitorConfig {
    /// The configuration as readers and the audit log see it: header values
    /// hinted, never shown.
    pub fn redacted(&self) -> MonitorConfig {
        let mut c = self.clone();
        for h in &mut c.headers {
            h.value = Header::hint(&h.value);
        }
        c
    }
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            kind: MonitorKind::Http,
            target: String::new(),
            interval_seconds: 60,
            timeout_ms: 10_000,
            retries: 1,
            degraded_above_ms: None,
            open_incident: false,
            enabled: true,
            method: "GET".into(),
            headers: Vec::new(),
            body: String::new(),
            expected_status: "200-299".into(),
            keyword: String::new(),
            follow_redirects: true,
            verify_tls: true,
            cert_expiry_days: 14,
            dns_record_type: "A".into(),
            dns_server: String::new(),
            dns_expected: String::new(),
        }
    }
}

/// `POST`/`PUT /api/monitors`: any subset over the current monitor (or the
/// defaults); `componentId` is required on create.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MonitorInput {
    pub component_id: Option<Id>,
    pub kind: Option<MonitorKind>,
    pub target: Option<String>,
    pub interval_seconds: Option<i64>,
    pub timeout_ms: Option<i64>,
    pub retries: Option<i64>,
    /// 0 turns the latency threshold off (absent or `null`: unchanged).
    #[serde(default)]
    pub degraded_above_ms: Option<i64>,
    pub open_incident: Option<bool>,
    pub enabled: Option<bool>,
    pub method: Option<String>,
    pub headers: Option<Vec<Header>>,
    pub body: Option<String>,
    pub expected_status: Option<String>,
    pub keyword: Option<String>,
    pub follow_redirects: Option<bool>,
    pub verify_tls: Option<bool>,
    pub cert_expiry_days: Option<i64>,
    pub dns_record_type: Option<String>,
    pub dns_server: Option<String>,
    pub dns_expected: Option<String>,
    /// Hand the component back to its monitor after an operator set its
    /// status by hand (`false`); `true` takes it over.
    pub manual: Option<bool>,
}

impl MonitorInput {
    /// `current` with this input's changes, checked as a whole.
    pub fn apply(&self, current: &MonitorConfig) -> Result<MonitorConfig, FieldErrors> {
        let mut e = FieldErrors::new();
        let mut c = current.clone();
        if let Some(k) = self.kind {
            // A heartbeat has no target: switching to one drops the old
            // kind's URL or address instead of refusing it.
            if k == MonitorKind::Heartbeat && k != c.kind && self.target.is_none() {
                c.target.clear();
            }
            c.kind = k;
        }
        if let Some(t) = &self.target {
            c.target = t.trim().to_string();
        }
        let mut bounded = |field: &str, v: Option<i64>, (lo, hi): (i64, i64), slot: &mut i64| {
            if let Some(v) = v {
                if (lo..=hi).contains(&v) {
                    *slot = v;
                } else {
                    e.push(field, format!("must be from {lo} to {hi}"));
                }
            }
        };
        bounded(
            "intervalSeconds",
            self.interval_seconds,
            (INTERVAL_MIN_S, INTERVAL_MAX_S),
            &mut c.interval_seconds,
        );
        bounded(
            "timeoutMs",
            self.timeout_ms,
            (TIMEOUT_MIN_MS, TIMEOUT_MAX_MS),
            &mut c.timeout_ms,
        );
        bounded("retries", self.retries, (0, RETRIES_MAX), &mut c.retries);
        bounded(
            "certExpiryDays",
            self.cert_expiry_days,
            (0, CERT_DAYS_MAX),
            &mut c.cert_expiry_days,
        );
        match self.degraded_above_ms {
            Some(0) => c.degraded_above_ms = None,
            Some(ms) if (1..=TIMEOUT_MAX_MS).contains(&ms) => c.degraded_above_ms = Some(ms),
            Some(_) => e.push(
                "degradedAboveMs",
                format!("must be from 1 to {TIMEOUT_MAX_MS} (0: off)"),
            ),
            None => {}
        }
        if let Some(v) = self.open_incident {
            c.open_incident = v;
        }
        if let Some(v) = self.enabled {
            c.enabled = v;
        }
        if let Some(m) = &self.method {
            let m = m.trim().to_ascii_uppercase();
            if METHODS.contains(&m.as_str()) {
                c.method = m;
            } else {
                e.push("method", format!("must be one of {}", METHODS.join(", ")));
            }
        }
        if let Some(h) = &self.headers {
            c.headers = h.iter().map(|h| h.kept_from(&current.headers)).collect();
        }
        if let Some(b) = &self.body {
            c.body = b.clone();
        }
        if let Some(s) = &self.expected_status {
            c.expected_status = s.trim().to_string();
        }
        if let Some(k) = &self.keyword {
            c.keyword = k.clone();
        }
        if let Some(f) = self.follow_redirects {
            c.follow_redirects = f;
        }
        if let Some(v) = self.verify_tls {
            c.verify_tls = v;
        }
        if let Some(t) = &self.dns_record_type {
            let t = t.trim().to_ascii_uppercase();
            if DNS_TYPES.contains(&t.as_str()) {
                c.dns_record_type = t;
            } else {
                e.push(
                    "dnsRecordType",
                    format!("must be one of {}", DNS_TYPES.join(", ")),
                );
            }
        }
        if let Some(v) = &self.dns_server {
            c.dns_server = v.trim().to_string();
        }
        if let Some(v) = &self.dns_expected {
            c.dns_expected = v.trim().to_string();
        }
        check(&c, &mut e);
        e.into_result().map(|()| c)
    }
}

/// What a whole configuration must satisfy, whatever changed.
fn check(c: &MonitorConfig, e: &mut FieldErrors) {
    match c.kind {
        MonitorKind::Http => {
            if let Err(m) = http_target(&c.target) {
                e.push("target", m);
            }
        }
        MonitorKind::Tcp => {
            if let Err(m) = host_port(&c.target) {
                e.push("target", m);
            }
        }
        MonitorKind::Dns => {
            if let Err(m) = dns_name(&c.target) {
                e.push("target", m);
            }
            if !c.dns_server.is_empty() && dns_server(&c.dns_server).is_err() {
                e.push(
                    "dnsServer",
                    "must be an IP address, optionally with a port (192.0.2.53:5353, [2001:db8::53]:53)",
                );
            }
            if c.dns_expected.chars().count() > KEYWORD_MAX {
                e.push(
                    "dnsExpected",
                    format!("must be at most {KEYWORD_MAX} characters"),
                );
            }
        }
        MonitorKind::Heartbeat => {
            if !c.target.is_empty() {
                e.push(
                    "target",
                    "must be empty: the service calls the monitor's heartbeat URL",
                );
            }
        }
    }
    if c.timeout_ms > c.interval_seconds * 1_000 {
        e.push("timeoutMs", "must not be longer than the interval");
    }
    if let Some(ms) = c.degraded_above_ms
        && ms >= c.timeout_ms
        && c.kind != MonitorKind::Heartbeat
    {
        e.push("degradedAboveMs", "must be shorter than the timeout");
    }
    if let Err(m) = expected_codes(&c.expected_status) {
        e.push("expectedStatus", m);
    }
    if c.keyword.chars().count() > KEYWORD_MAX {
        e.push(
            "keyword",
            format!("must be at most {KEYWORD_MAX} characters"),
        );
    }
    if c.body.len() > BODY_MAX {
        e.push("body", format!("must be at most {BODY_MAX} bytes"));
    }
    if c.headers.len() > HEADERS_MAX {
        e.push("headers", format!("at most {HEADERS_MAX} headers"));
    }
    for h in &c.headers {
        let name_ok = !h.name.is_empty()
            && h.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !name_ok {
            e.push("headers", format!("{:?} is no header name", h.name));
        } else if h.value.chars().any(|ch| ch.is_control() && ch != '\t') {
            e.push(
                "headers",
                format!("the value of {} holds a line break", h.name),
            );
        }
    }
}

/// An http(s) URL as the client will read it (WHATWG rules, through the
/// `url` crate): a port over 65535, a port that is no number or an
/// unclosed IPv6 bracket is refused here, not stored to fail every check.
fn http_target(t: &str) -> Result<(), String> {
    if t.is_empty() {
        return Err("is required: the URL to check".into());
    }
    if t.len() > TARGET_MAX {
        return Err(format!("must be at most {TARGET_MAX} characters"));
    }
    let lower = t.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return Err("must be an http:// or https:// URL".into());
    }
    let url = url::Url::parse(t).map_err(|e| format!("is not a valid URL: {e}"))?;
    if url.host_str().is_none_or(str::is_empty)
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err("must name a host (and no user or password)".into());
    }
    Ok(())
}

/// A name to look up: letters, digits and hyphens in dot-separated labels
/// (a trailing dot allowed, `_` for service names).
fn dns_name(t: &str) -> Result<(), String> {
    let bad = || "must be a DNS name like api.example.com".to_string();
    let name = t.strip_suffix('.').unwrap_or(t);
    if name.is_empty() || name.len() > 253 {
        return Err(bad());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(bad())
    }
}

/// A DNS server as `ip` or `ip:port` (IPv6 with a port in brackets); port
/// 53 when none is given.
pub fn dns_server(t: &str) -> Result<std::net::SocketAddr, String> {
    let bad = || format!("{t:?} is no IP address or ip:port");
    if let Ok(ip) = t.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, 53));
    }
    t.parse::<std::net::SocketAddr>().map_err(|_| bad())
}

/// Whether `r` saw a certificate that expires within the configured days
/// (counted from the check).
pub fn cert_expiring(c: &MonitorConfig, r: &CheckResult) -> Option<i64> {
    let expires = r.cert_expires_at?;
    if c.cert_expiry_days == 0 {
        return None;
    }
    let left = expires.millis() - r.at.millis();
    (left < c.cert_expiry_days * DAY_MS).then(|| left.div_euclid(DAY_MS))
}

/// `host:port` (IPv6 in brackets): the parts, checked.
pub fn host_port(t: &str) -> Result<(String, u16), String> {
    let bad = || "must be host:port, like db.example.com:5432".to_string();
    let (host, port) = t.rsplit_once(':').ok_or_else(bad)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.is_empty() || port == 0 || host.contains(['/', ' ', '@']) {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// Reads `200-299, 301` into ranges of status codes.
pub fn expected_codes(raw: &str) -> Result<Vec<(u16, u16)>, String> {
    let mut out = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let code = |s: &str| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..=599).contains(c))
        };
        match (code(lo), code(hi)) {
            (Some(a), Some(b)) if a <= b => out.push((a, b)),
            _ => return Err(format!("{part:?} is no status code or range like 200-299")),
        }
    }
    if out.is_empty() {
        return Err("name at least one status code, like 200-299".into());
    }
    Ok(out)
}

/// A monitor as operators see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Monitor {
    pub id: Id,
    pub component_id: Id,
    #[serde(flatten)]
    pub config: MonitorConfig,
    /// up, down, degraded, or unknown before the first check.
    pub state: MonitorState,
    /// An operator set the component's status by hand: checks go on and
    /// are recorded, but the component stays as set until handed back.
    pub manual: bool,
    /// The URL the watched service calls (heartbeat monitors only).
    pub heartbeat_url: Option<String>,
    pub last_check_at: Option<Timestamp>,
    pub last_latency_ms: Option<i64>,
    pub last_error: Option<String>,
    pub next_check_at: Timestamp,
    /// The incident this monitor opened and has not resolved yet.
    pub incident_id: Option<Id>,
    /// https: when the target's certificate expires, as last seen.
    pub cert_expires_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Monitor {
    /// The heartbeat URL in full (the store knows only its path), for the
    /// operator to give the watched service.
    pub fn under(mut self, public_url: &str) -> Monitor {
        if let Some(path) = self.heartbeat_url.take() {
            self.heartbeat_url = Some(format!("{}{path}", public_url.trim_end_matches('/')));
        }
        self
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    pub at: Timestamp,
    pub ok: bool,
    pub latency_ms: Option<i64>,
    /// The HTTP status answered, when there was one.
    pub status_code: Option<i64>,
    /// Why the check failed, in words.
    pub error: Option<String>,
    /// https: when the target's certificate expires.
    #[serde(default)]
    pub cert_expires_at: Option<Timestamp>,
}

/// Where a monitor stands after a check: its counters, its state, and the
/// status its component should have (None: leave the component alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub failures: i64,
    pub successes: i64,
    pub state: MonitorState,
}

/// The rule: `retries` failures in a row are tolerated, the next one moves
/// the monitor down; one good check brings it back (slow answers, and a
/// certificate close to expiry, count as degraded, after the same
/// tolerance).
pub fn judge(
    config: &MonitorConfig,
    state: MonitorState,
    failures: i64,
    successes: i64,
    r: &CheckResult,
) -> Verdict {
    let slow = r.ok
        && (matches!((config.degraded_above_ms, r.latency_ms), (Some(limit), Some(ms)) if ms > limit)
            || cert_expiring(config, r).is_some());
    let (failures, successes) = if r.ok && !slow {
        (0, successes + 1)
    } else {
        (failures + 1, 0)
    };
    let state = if r.ok && !slow {
        MonitorState::Up
    } else if failures > config.retries {
        if slow {
            MonitorState::Degraded
        } else {
            MonitorState::Down
        }
    } else {
        state
    };
    Verdict {
        failures,
        successes,
        state,
    }
}

impl MonitorState {
    /// The component status this state calls for (None: no opinion yet).
    pub fn component_status(self) -> Option<ComponentStatus> {
        match self {
            MonitorState::Unknown => None,
            MonitorState::Up => Some(ComponentStatus::Operational),
            MonitorState::Degraded => Some(ComponentStatus::Degraded),
            MonitorState::Down => Some(ComponentStatus::MajorOutage),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(ok: bool, ms: i64) -> CheckResult {
        CheckResult {
            at: Timestamp::from_millis(0),
            ok,
            latency_ms: Some(ms),
            status_code: None,
            error: None,
            cert_expires_at: None,
        }
    }

    #[test]
    fn failures_beyond_the_retries_move_the_state_and_one_success_brings_it_back() {
        let c = MonitorConfig {
            retries: 2,
            degraded_above_ms: Some(500),
            ..MonitorConfig::default()
        };
        let mut v = Verdict {
            failures: 0,
            successes: 0,
            state: MonitorState::Unknown,
        };
        let mut run = |ok, ms| {
            v = judge(&c, v.state, v.failures, v.successes, &result(ok, ms));
            v.state
        };
        assert_eq!(run(true, 10), MonitorState::Up);
        assert_eq!(run(false, 10), MonitorState::Up, "first failure tolerated");
        assert_eq!(run(false, 10), MonitorState::Up, "second tolerated");
        assert_eq!(run(false, 10), MonitorState::Down, "third moves it");
        assert_eq!(run(true, 10), MonitorState::Up, "one success recovers");
        for _ in 0..3 {
            run(true, 900);
        }
        assert_eq!(v.state, MonitorState::Degraded, "slow beyond the retries");
    }

    #[test]
    fn a_monitor_switched_to_heartbeat_drops_its_target() {
        let Ok(http) = (MonitorInput {
            target: Some("https://example.com/health".into()),
            ..Default::default()
        })
        .apply(&MonitorConfig::default()) else {
            panic!("an http monitor is accepted");
        };
        let Ok(beat) = (MonitorInput {
            kind: Some(MonitorKind::Heartbeat),
            ..Default::default()
        })
        .apply(&http) else {
            panic!("a switch to heartbeat is accepted");
        };
        assert_eq!(
            (beat.kind, beat.target.as_str()),
            (MonitorKind::Heartbeat, "")
        );
        // A target given with the switch is still checked (and refused).
        let refused = MonitorInput {
            kind: Some(MonitorKind::Heartbeat),
            target: Some("https://example.com/".into()),
            ..Default::default()
        }
        .apply(&http);
        assert!(refused.is_err_and(|e| e.0.iter().any(|f| f.field == "target")));
    }

    #[test]
    fn inputs_are_checked_as_a_whole() {
        let base = MonitorConfig::default();
        let ok = MonitorInput {
            target: Some("https://example.com/health".into()),
            ..Default::default()
        };
        assert!(ok.apply(&base).is_ok());
        for malformed in [
            "http://127.0.0.1:70000/",
            "http://example.com:abc/",
            "https://[::1/",
            "http://user:pw@example.com/",
        ] {
            let input = MonitorInput {
                target: Some(malformed.into()),
                ..Default::default()
            };
            assert!(
                input
                    .apply(&base)
                    .is_err_and(|e| e.0.iter().any(|f| f.field == "target")),
                "{malformed} is refused"
            );
        }
        let bad = MonitorInput {
            target: Some("ftp://x".into()),
            interval_seconds: Some(5),
            timeout_ms: Some(70_000),
            expected_status: Some("2xx".into()),
            method: Some("BREW".into()),
            headers: Some(vec![Header {
                name: "X Bad".into(),
                value: "v".into(),
            }]),
            ..Default::default()
        };
        let fields: Vec<String> = match bad.apply(&base) {
            Err(e) => e.0.iter().map(|f| f.field.clone()).collect(),
            Ok(c) => panic!("accepted {c:?}"),
        };
        for f in [
            "target",
            "intervalSeconds",
            "timeoutMs",
            "expectedStatus",
            "method",
            "headers",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} in {fields:?}");
        }
        let tcp = MonitorInput {
            kind: Some(MonitorKind::Tcp),
            target: Some("db.internal:5432".into()),
            ..Default::default()
        };
        assert_eq!(
            tcp.apply(&base).map(|c| c.target),
            Ok("db.internal:5432".into())
        );
        assert_eq!(
            expected_codes("200-299, 301"),
            Ok(vec![(200, 299), (301, 301)])
        );
        assert_eq!(host_port("[::1]:80"), Ok(("::1".into(), 80)));
    }
}

/// What a monitor that opens incidents writes on the public page, in the
/// install's language. Chosen above the store (which records, and does not
/// translate); `{name}` is filled with the component's name when an
/// incident is opened or resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentWords {
    pub title: String,
    pub message: String,
    pub recovered: String,
}

impl IncidentWords {
    pub fn in_lang(lang: crate::i18n::Lang) -> IncidentWords {
        IncidentWords {
            title: lang.t("monitor.incident_title").to_string(),
            message: lang.t("monitor.incident_text").to_string(),
            recovered: lang.t("monitor.recovered").to_string(),
        }
    }

    /// One of the texts, about the component called `name`.
    pub fn about(text: &str, name: &str) -> String {
        text.replace("{name}", name)
    }
}
