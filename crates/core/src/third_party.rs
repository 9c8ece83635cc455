//! Third-party components (docs/third-party.md): a component that mirrors a
//! vendor's published status instead of being set by the team. The vendor
//! is read from a Statuspage-compatible `summary.json` (Atlassian-hosted
//! pages, any Upstate page) or from an RSS/Atom status feed. This module
//! holds what an operator sets, and the pure readers that turn a vendor's
//! answer into a status; the store keeps the follow and the jobs crate
//! polls.

use crate::status::{ComponentStatus, SourceKind};
use crate::validate::FieldErrors;
use crate::{Id, Timestamp};
use serde::{Deserialize, Serialize};

/// Bounds of the polling interval: vendors' pages are cached for a minute
/// or more, so polling faster only costs them; a day is the longest a
/// mirror can lag and still be one.
pub const INTERVAL_MIN_S: i64 = 60;
pub const INTERVAL_MAX_S: i64 = 86_400;
const VENDOR_COMPONENT_MAX: usize = 200;
/// A feed entry older than this no longer holds the component down: a
/// vendor that forgot to post "resolved" must not colour the page forever.
pub const FEED_OPEN_MS: i64 = 3 * 86_400_000;
/// The most vendor components kept for the operator's choice.
const VENDOR_COMPONENTS_KEPT: usize = 500;

/// What an operator sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FollowConfig {
    pub kind: SourceKind,
    /// statuspage: the page's address or its `…/api/v2/summary.json`;
    /// feed: the RSS or Atom feed's address.
    pub url: String,
    /// statuspage: the vendor component mirrored, by id or name (empty:
    /// the vendor's whole page).
    pub vendor_component: String,
    /// Where the page's "third-party" mark links (empty: the vendor's own
    /// page, as its answer names it).
    pub link: String,
    /// Tell subscribers when the vendor's status moves the component (off:
    /// the page and the team's channels show it, subscribers hear nothing).
    pub notify: bool,
    pub interval_seconds: i64,
    /// feed: the status while the newest entry is an open incident.
    pub feed_status: ComponentStatus,
}

impl Default for FollowConfig {
    fn default() -> Self {
        FollowConfig {
            kind: SourceKind::Statuspage,
            url: String::new(),
            vendor_component: String::new(),
            link: String::new(),
            notify: false,
            interval_seconds: 300,
            feed_status: ComponentStatus::Degraded,
        }
    }
}

/// One component of the vendor's page, offered for the operator's choice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VendorComponent {
    pub id: String,
    pub name: String,
}

/// A component's follow as operators see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Follow {
    pub id: Id,
    pub component_id: Id,
    #[serde(flatten)]
    pub config: FollowConfig,
    /// The vendor's name, as its last answer gave it.
    pub vendor_name: String,
    /// The vendor's own page, as its last answer gave it.
    pub vendor_url: String,
    /// What the vendor said at the last poll that was read (none yet).
    pub vendor_status: Option<ComponentStatus>,
    /// statuspage: the vendor's components, to choose one from.
    pub vendor_components: Vec<VendorComponent>,
    pub last_polled_at: Option<Timestamp>,
    /// Why the last poll read nothing (none: it was read).
    pub last_error: Option<String>,
    pub next_poll_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Follow {
    /// Where the page's mark links.
    pub fn mark(&self) -> ThirdPartyMark {
        ThirdPartyMark {
            vendor: if self.vendor_name.is_empty() {
                host_of(&self.config.url)
            } else {
                self.vendor_name.clone()
            },
            url: [&self.config.link, &self.vendor_url]
                .into_iter()
                .find(|u| !u.is_empty())
                .cloned()
                .unwrap_or_else(|| self.config.url.clone()),
        }
    }
}

/// What a public page shows beside a third-party component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ThirdPartyMark {
    /// The vendor's name.
    pub vendor: String,
    /// The vendor's status page.
    pub url: String,
}

fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// A follow's settings, any subset (`FollowChange` and `NewFollow` become
/// one), and a component's `thirdParty` in a setup file.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FollowInput {
    /// Create only: the component that mirrors the vendor.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub component_id: Option<Id>,
    pub kind: Option<SourceKind>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url))]
    pub url: Option<String>,
    /// statuspage only (a feed has none).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::vendor_component))]
    pub vendor_component: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_empty))]
    pub link: Option<String>,
    pub notify: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::follow_interval))]
    pub interval_seconds: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::alert_status))]
    pub feed_status: Option<ComponentStatus>,
}

/// `PATCH /api/third-party/{id}`: any subset over the current follow. The
/// component is not among them: a follow stays with its component (delete
/// it and follow again from the other), so the document offers no
/// `componentId` to change and one sent is refused as unknown.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FollowChange {
    pub kind: Option<SourceKind>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url))]
    pub url: Option<String>,
    /// statuspage only (a feed has none).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::vendor_component))]
    pub vendor_component: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_empty))]
    pub link: Option<String>,
    pub notify: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::follow_interval))]
    pub interval_seconds: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::alert_status))]
    pub feed_status: Option<ComponentStatus>,
}

impl From<FollowChange> for FollowInput {
    fn from(c: FollowChange) -> FollowInput {
        FollowInput {
            component_id: None,
            kind: c.kind,
            url: c.url,
            vendor_component: c.vendor_component,
            link: c.link,
            notify: c.notify,
            interval_seconds: c.interval_seconds,
            feed_status: c.feed_status,
        }
    }
}

/// `POST /api/third-party`: what `FollowInput` says, with the component
/// and the address required (a change names neither).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewFollow {
    /// The component that mirrors the vendor.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub component_id: Id,
    pub kind: Option<SourceKind>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url))]
    pub url: String,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::vendor_component))]
    pub vendor_component: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_empty))]
    pub link: Option<String>,
    pub notify: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::follow_interval))]
    pub interval_seconds: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::alert_status))]
    pub feed_status: Option<ComponentStatus>,
}

impl From<NewFollow> for FollowInput {
    fn from(n: NewFollow) -> FollowInput {
        FollowInput {
            component_id: Some(n.component_id),
            kind: n.kind,
            url: Some(n.url),
            vendor_component: n.vendor_component,
            link: n.link,
            notify: n.notify,
            interval_seconds: n.interval_seconds,
            feed_status: n.feed_status,
        }
    }
}

impl FollowInput {
    /// `current` with this input's changes, checked as a whole.
    pub fn apply(&self, current: &FollowConfig) -> Result<FollowConfig, FieldErrors> {
        let mut e = FieldErrors::new();
        let mut c = current.clone();
        if let Some(k) = self.kind {
            c.kind = k;
        }
        if let Some(u) = &self.url {
            c.url = u.trim().to_string();
        }
        if let Some(v) = &self.vendor_component {
            c.vendor_component = v.trim().to_string();
        }
        if let Some(l) = &self.link {
            c.link = l.trim().to_string();
        }
        if let Some(n) = self.notify {
            c.notify = n;
        }
        if let Some(i) = self.interval_seconds {
            if (INTERVAL_MIN_S..=INTERVAL_MAX_S).contains(&i) {
                c.interval_seconds = i;
            } else {
                e.push(
                    "intervalSeconds",
                    format!("must be from {INTERVAL_MIN_S} to {INTERVAL_MAX_S}"),
                );
            }
        }
        if let Some(s) = self.feed_status {
            c.feed_status = s;
        }
        if c.url.is_empty() {
            e.push("url", "is required: the vendor's status page or feed");
        } else if let Err(m) = crate::validate::url(&c.url) {
            e.push("url", m);
        }
        if !c.link.is_empty()
            && let Err(m) = crate::validate::url(&c.link)
        {
            e.push("link", m);
        }
        if c.vendor_component.chars().count() > VENDOR_COMPONENT_MAX {
            e.push(
                "vendorComponent",
                format!("must be at most {VENDOR_COMPONENT_MAX} characters"),
            );
        }
        if c.kind == SourceKind::Feed && !c.vendor_component.is_empty() {
            e.push(
                "vendorComponent",
                "must be empty for a feed: a feed speaks for the vendor's whole service",
            );
        }
        if !matches!(
            c.feed_status,
            ComponentStatus::Degraded
                | ComponentStatus::PartialOutage
                | ComponentStatus::MajorOutage
        ) {
            e.push(
                "feedStatus",
                "must be degraded, partial_outage or major_outage",
            );
        }
        e.into_result().map(|()| c)
    }
}

/// What one answer of the vendor said.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub status: ComponentStatus,
    pub vendor_name: String,
    pub vendor_url: String,
    pub components: Vec<VendorComponent>,
}

/// Where a Statuspage-compatible page publishes its summary: the address
/// as given when it names a `.json`, else `…/api/v2/summary.json` under it.
pub fn summary_url(url: &str) -> String {
    let u = url.trim().trim_end_matches('/');
    if u.ends_with(".json") {
        u.to_string()
    } else {
        let base = u.trim_end_matches("/api/v2").trim_end_matches("/api");
        format!("{base}/api/v2/summary.json")
    }
}

#[derive(Deserialize)]
struct Summary {
    page: Option<SummaryPage>,
    status: Option<SummaryStatus>,
    #[serde(default)]
    components: Vec<SummaryComponent>,
}

#[derive(Deserialize)]
struct SummaryPage {
    #[serde(default)]
    name: String,
    #[serde(default)]
    url: String,
}

#[derive(Deserialize)]
struct SummaryStatus {
    indicator: String,
}

#[derive(Deserialize)]
struct SummaryComponent {
    id: serde_json::Value,
    name: String,
    status: String,
}

/// Statuspage's component words (and Upstate's own, which its summary
/// shares but for maintenance) in Upstate's.
fn component_word(w: &str) -> Option<ComponentStatus> {
    Some(match w {
        "operational" => ComponentStatus::Operational,
        "degraded_performance" | "degraded" => ComponentStatus::Degraded,
        "partial_outage" => ComponentStatus::PartialOutage,
        "major_outage" => ComponentStatus::MajorOutage,
        "under_maintenance" | "maintenance" => ComponentStatus::Maintenance,
        _ => return None,
    })
}

/// Reads a `summary.json`: the named component's status, or the page's
/// overall indicator when none is named. A component that is not there is
/// an error that lists what is.
pub fn read_summary(body: &str, wanted: &str) -> Result<Reading, String> {
    let s: Summary = serde_json::from_str(body)
        .map_err(|e| format!("the answer is no Statuspage summary.json: {e}"))?;
    let page = s.page.unwrap_or(SummaryPage {
        name: String::new(),
        url: String::new(),
    });
    let components: Vec<VendorComponent> = s
        .components
        .iter()
        .take(VENDOR_COMPONENTS_KEPT)
        .map(|c| VendorComponent {
            id: match &c.id {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            name: c.name.clone(),
        })
        .collect();
    let status = if wanted.is_empty() {
        let indicator = s
            .status
            .map(|i| i.indicator)
            .ok_or("the summary has no status indicator")?;
        match indicator.as_str() {
            "none" => ComponentStatus::Operational,
            "minor" => ComponentStatus::Degraded,
            "major" => ComponentStatus::PartialOutage,
            "critical" => ComponentStatus::MajorOutage,
            "maintenance" => ComponentStatus::Maintenance,
            other => return Err(format!("unknown status indicator {other:?}")),
        }
    } else {
        let at = components
            .iter()
            .position(|c| c.id == wanted)
            .or_else(|| {
                components
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(wanted))
            })
            .ok_or_else(|| {
                let names: Vec<&str> = components
                    .iter()
                    .take(20)
                    .map(|c| c.name.as_str())
                    .collect();
                format!(
                    "the vendor has no component {wanted:?} (it has: {})",
                    names.join(", ")
                )
            })?;
        let word = &s.components[at].status;
        component_word(word).ok_or_else(|| format!("unknown component status {word:?}"))?
    };
    Ok(Reading {
        status,
        vendor_name: page.name,
        vendor_url: page.url,
        components,
    })
}

/// Words that say an entry's incident is over, and words that say it is
/// not; the first of either in the entry decides (feeds put the latest
/// update first).
const OVER: [&str; 7] = [
    "resolved",
    "completed",
    "recovered",
    "restored",
    "operational",
    "back to normal",
    "scheduled",
];
const OPEN: [&str; 9] = [
    "investigating",
    "in_progress",
    "identified",
    "monitoring",
    "outage",
    "degraded",
    "disruption",
    "in progress",
    "update",
];

/// An entry's words: does its incident still hold (true) or is it over.
/// Maintenance in progress reads as open, and so does an entry that says
/// neither.
fn entry_open(text: &str) -> bool {
    let t = text.to_lowercase();
    let first = |words: &[&str]| words.iter().filter_map(|w| t.find(w)).min();
    match (first(&OVER), first(&OPEN)) {
        (Some(over), Some(open)) => open < over,
        (Some(_), None) => false,
        _ => true,
    }
}

/// Text without its markup (feeds carry HTML in their descriptions).
fn plain(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// One entry of a feed: when it was last written, and its words.
struct Entry {
    at: Option<i64>,
    text: String,
}

/// Reads an RSS or Atom status feed at `now`: the newest entry decides.
/// Open and younger than `FEED_OPEN_MS`: `open_status`; anything else
/// (over, old, or no entry at all): operational.
pub fn read_feed(
    body: &str,
    now: Timestamp,
    open_status: ComponentStatus,
) -> Result<Reading, String> {
    let (name, link, entries) = if let Ok(feed) = body.parse::<atom_syndication::Feed>() {
        let link = feed
            .links()
            .iter()
            .find(|l| l.rel() == "alternate")
            .or(feed.links().first())
            .map(|l| l.href().to_string())
            .unwrap_or_default();
        let entries: Vec<Entry> = feed
            .entries()
            .iter()
            .map(|e| Entry {
                at: Some(e.updated().timestamp_millis()),
                text: format!(
                    "{} {} {}",
                    e.content()
                        .and_then(|c| c.value())
                        .map(plain)
                        .unwrap_or_default(),
                    e.summary().map(|s| plain(&s.value)).unwrap_or_default(),
                    e.title().value
                ),
            })
            .collect();
        (feed.title().value.clone(), link, entries)
    } else {
        let channel = rss::Channel::read_from(body.as_bytes())
            .map_err(|e| format!("the answer is no RSS or Atom feed: {e}"))?;
        let entries: Vec<Entry> = channel
            .items()
            .iter()
            .map(|i| Entry {
                at: i
                    .pub_date()
                    .and_then(|d| jiff::fmt::rfc2822::parse(d.trim()).ok())
                    .map(|z| z.timestamp().as_millisecond()),
                text: format!(
                    "{} {}",
                    i.description().map(plain).unwrap_or_default(),
                    i.title().unwrap_or_default()
                ),
            })
            .collect();
        (
            channel.title().to_string(),
            channel.link().to_string(),
            entries,
        )
    };
    // Newest first by date; an undated entry counts where the feed put it
    // (feeds list newest first).
    let newest = entries
        .iter()
        .enumerate()
        .max_by_key(|(i, e)| (e.at.unwrap_or(i64::MIN), std::cmp::Reverse(*i)));
    let status = match newest {
        Some((_, e))
            if entry_open(&e.text) && e.at.is_none_or(|at| now.millis() - at < FEED_OPEN_MS) =>
        {
            open_status
        }
        _ => ComponentStatus::Operational,
    };
    Ok(Reading {
        status,
        vendor_name: name.trim().to_string(),
        vendor_url: link,
        components: Vec::new(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SUMMARY: &str = r#"{"page":{"id":"x","name":"Acme","url":"https://status.acme.test"},
        "status":{"indicator":"minor","description":"Minor Service Outage"},
        "components":[{"id":"c1","name":"API","status":"operational"},
                      {"id":"c2","name":"Web App","status":"partial_outage"}]}"#;

    #[test]
    fn a_summary_gives_the_page_or_one_component() -> Result<(), String> {
        let page = read_summary(SUMMARY, "")?;
        assert_eq!(page.status, ComponentStatus::Degraded);
        assert_eq!(page.vendor_name, "Acme");
        assert_eq!(page.components.len(), 2);
        assert_eq!(
            read_summary(SUMMARY, "c2")?.status,
            ComponentStatus::PartialOutage
        );
        assert_eq!(
            read_summary(SUMMARY, "web app")?.status,
            ComponentStatus::PartialOutage
        );
        let missing = read_summary(SUMMARY, "Billing").unwrap_err();
        assert!(missing.contains("API, Web App"), "{missing}");
        assert!(read_summary("<html>", "").is_err());
        Ok(())
    }

    #[test]
    fn summary_addresses_are_completed() {
        assert_eq!(
            summary_url("https://status.acme.test/"),
            "https://status.acme.test/api/v2/summary.json"
        );
        assert_eq!(
            summary_url("https://x.test/s/main/api/v2/summary.json"),
            "https://x.test/s/main/api/v2/summary.json"
        );
    }

    #[test]
    fn the_newest_entry_of_a_feed_decides() -> Result<(), String> {
        let now = Timestamp::from_millis(1_764_000_000_000);
        let rss = |first: &str, date: &str| {
            format!(
                "<rss version=\"2.0\"><channel><title>Acme status</title><link>https://status.acme.test</link>\
                 <description>d</description>\
                 <item><title>API errors</title><description>{first}</description><pubDate>{date}</pubDate></item>\
                 <item><title>Old</title><description>Resolved - fine</description><pubDate>Mon, 03 Nov 2025 10:00:00 +0000</pubDate></item>\
                 </channel></rss>"
            )
        };
        let recent = "Mon, 24 Nov 2025 15:00:00 +0000";
        let open = read_feed(
            &rss(
                "&lt;p&gt;&lt;b&gt;Investigating&lt;/b&gt; - errors. Earlier: resolved&lt;/p&gt;",
                recent,
            ),
            now,
            ComponentStatus::PartialOutage,
        )?;
        assert_eq!(open.status, ComponentStatus::PartialOutage);
        assert_eq!(open.vendor_name, "Acme status");
        let over = read_feed(
            &rss(
                "Resolved - This incident has been resolved. Investigating earlier",
                recent,
            ),
            now,
            ComponentStatus::PartialOutage,
        )?;
        assert_eq!(over.status, ComponentStatus::Operational);
        let stale = read_feed(
            &rss("Investigating", "Mon, 03 Nov 2025 11:00:00 +0000"),
            now,
            ComponentStatus::Degraded,
        )?;
        assert_eq!(stale.status, ComponentStatus::Operational);
        assert!(read_feed("{}", now, ComponentStatus::Degraded).is_err());
        Ok(())
    }

    #[test]
    fn follows_are_checked_whole() {
        let bad = FollowInput {
            url: Some("ftp://x".into()),
            interval_seconds: Some(5),
            kind: Some(SourceKind::Feed),
            vendor_component: Some("API".into()),
            feed_status: Some(ComponentStatus::Operational),
            ..Default::default()
        }
        .apply(&FollowConfig::default())
        .unwrap_err();
        let fields: Vec<&str> = bad.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["intervalSeconds", "url", "vendorComponent", "feedStatus"]
        );
    }
}
