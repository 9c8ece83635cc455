//! Telling people: notification channels of the team, what a change says
//! (`Notice`), and the states of a delivery. Not described by the seed
//! beyond its route names; the shape is ours (docs/notifications.md).
//!
//! A committed change's events become one `Notice` (an incident's own
//! component moves fold into the incident's notice rather than arriving as
//! messages of their own), and the notice is delivered to every channel
//! whose filters it passes.

use crate::Id;
use crate::validate::{self, FieldErrors};
use crate::values::{Email, HttpUrl};
use serde::{Deserialize, Serialize};

pub const NAME_MAX: usize = 100;
/// Filters longer than this are a mistake, not a configuration.
pub const FILTER_MAX: usize = 200;

/// The event kinds people are told of, as channels filter them.
pub const NOTIFIED_KINDS: [&str; 11] = [
    "incident.created",
    "incident.updated",
    "incident.resolved",
    "component.status_changed",
    "maintenance.scheduled",
    "maintenance.started",
    "maintenance.completed",
    "maintenance.cancelled",
    "maintenance.reminder",
    "postmortem.published",
    "alert.drafted",
];

pub use crate::status::{ChannelKind, DeliveryStatus, SubscriberScope};

impl ChannelKind {
    /// What `target` holds for this kind, for error messages and forms.
    pub fn target_hint(self) -> &'static str {
        match self {
            ChannelKind::Webhook => "the URL to POST to",
            ChannelKind::Slack => "the Slack incoming webhook URL",
            ChannelKind::Discord => "the Discord webhook URL",
            ChannelKind::Teams => "the Teams incoming webhook (workflow) URL",
            ChannelKind::Telegram => "the chat id (a number, or @channelname)",
            ChannelKind::Email => "the address to write to",
            ChannelKind::Push => "the browser's push endpoint",
        }
    }

    /// Whether the kind needs a secret from the operator (Telegram's bot
    /// token). Webhooks get one made for them.
    pub fn takes_token(self) -> bool {
        self == ChannelKind::Telegram
    }

    fn check_target(self, raw: &str) -> Result<String, String> {
        match self {
            ChannelKind::Email => Email::parse(raw).map(String::from),
            ChannelKind::Telegram => {
                let s = raw.trim();
                let numeric = s.strip_prefix('-').unwrap_or(s);
                let ok = (!numeric.is_empty()
                    && numeric.len() <= 20
                    && numeric.bytes().all(|b| b.is_ascii_digit()))
                    || (s.len() > 1
                        && s.len() <= 33
                        && s.starts_with('@')
                        && s[1..]
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_'));
                if ok {
                    Ok(s.to_string())
                } else {
                    Err("must be a Telegram chat id (a number such as -1001234567890) or @channelname".into())
                }
            }
            _ => HttpUrl::parse(raw).map(String::from),
        }
    }
}

/// A channel as the routes show it. The secret is never shown again after
/// it was made; `secretHint` tells which one is in use.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    pub id: Id,
    pub name: String,
    pub kind: ChannelKind,
    pub target: String,
    /// The last four characters of the signing secret or token, if any.
    pub secret_hint: Option<String>,
    /// Only changes of these pages (empty: every page).
    pub page_ids: Vec<Id>,
    /// Only changes touching these components (empty: all).
    pub component_ids: Vec<Id>,
    /// Only these kinds of change (empty: all of `NOTIFIED_KINDS`).
    pub event_kinds: Vec<String>,
    pub enabled: bool,
    /// The language its messages are written in (a code); empty: the
    /// install's default language of public pages.
    pub lang: String,
    pub created_at: crate::Timestamp,
    pub updated_at: crate::Timestamp,
}

/// Create or change a channel; on change, absent fields stay.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelInput {
    pub name: Option<String>,
    /// webhook, slack, discord, teams, telegram or email; fixed once made.
    pub kind: Option<String>,
    pub target: Option<String>,
    /// Telegram's bot token (required for telegram, refused for the others).
    pub token: Option<String>,
    pub page_ids: Option<Vec<Id>>,
    pub component_ids: Option<Vec<Id>>,
    pub event_kinds: Option<Vec<String>>,
    pub enabled: Option<bool>,
    /// The language of its messages: a code of `/api/settings`'
    /// languages, or empty for the install's default.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::lang_or_default))]
    pub lang: Option<String>,
    /// On change of a webhook: make a new signing secret (shown once).
    #[serde(default)]
    pub rotate_secret: bool,
}

/// A recipient's language as given: a known language's code, or empty for
/// the install's default.
pub fn recipient_lang(given: &str) -> Result<String, String> {
    let t = given.trim();
    if t.is_empty() {
        return Ok(String::new());
    }
    crate::i18n::Lang::parse(t)
        .map(|l| l.code().to_string())
        .ok_or_else(|| {
            format!(
                "must be one of {} (or empty for the install's default)",
                crate::i18n::LANGS.map(|l| l.code()).join(", ")
            )
        })
}

/// A checked create (name, kind, target set) or change (any subset).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChannelFields {
    pub name: Option<String>,
    pub kind: Option<ChannelKind>,
    pub target: Option<String>,
    pub token: Option<String>,
    pub page_ids: Option<Vec<Id>>,
    pub component_ids: Option<Vec<Id>>,
    pub event_kinds: Option<Vec<String>>,
    pub enabled: Option<bool>,
    pub lang: Option<String>,
    pub rotate_secret: bool,
}

fn ids(field: &str, v: Vec<Id>, e: &mut FieldErrors) -> Option<Vec<Id>> {
    if v.len() > FILTER_MAX {
        e.push(field, format!("may name at most {FILTER_MAX} ids"));
        return None;
    }
    let mut v = v;
    v.sort_unstable();
    v.dedup();
    Some(v)
}

impl ChannelInput {
    /// `kind` is the channel's kind: given for a create, stored for a change.
    fn check(self, kind: Option<ChannelKind>, e: &mut FieldErrors) -> ChannelFields {
        let target = match (self.target, kind) {
            (Some(t), Some(k)) => e.check("target", k.check_target(&t)),
            _ => None,
        };
        let token = match (self.token, kind) {
            (Some(t), Some(k)) if k.takes_token() => {
                let t = t.trim().to_string();
                let ok = !t.is_empty()
                    && t.len() <= 100
                    && t.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b':' || b == b'_' || b == b'-');
                if ok {
                    Some(t)
                } else {
                    e.push(
                        "token",
                        "must be a Telegram bot token such as 123456:ABC-DEF…",
                    );
                    None
                }
            }
            (Some(_), Some(_)) => {
                e.push("token", "only Telegram channels take a token");
                None
            }
            _ => None,
        };
        let event_kinds = self.event_kinds.and_then(|kinds| {
            let mut kinds = kinds;
            kinds.sort();
            kinds.dedup();
            match kinds.iter().find(|k| !NOTIFIED_KINDS.contains(&k.as_str())) {
                Some(bad) => {
                    e.push(
                        "eventKinds",
                        format!(
                            "{bad:?} is no event kind; use {}",
                            NOTIFIED_KINDS.join(", ")
                        ),
                    );
                    None
                }
                None => Some(kinds),
            }
        });
        if self.rotate_secret && kind != Some(ChannelKind::Webhook) {
            e.push(
                "rotateSecret",
                "only webhook channels have a signing secret",
            );
        }
        ChannelFields {
            name: self
                .name
                .and_then(|n| e.check("name", validate::text(&n, NAME_MAX).and_then(non_blank))),
            kind,
            target,
            token,
            page_ids: self.page_ids.and_then(|v| ids("pageIds", v, e)),
            component_ids: self.component_ids.and_then(|v| ids("componentIds", v, e)),
            event_kinds,
            enabled: self.enabled,
            lang: self.lang.and_then(|l| e.check("lang", recipient_lang(&l))),
            rotate_secret: self.rotate_secret,
        }
    }

    pub fn validate_new(self) -> Result<ChannelFields, FieldErrors> {
        let mut e = FieldErrors::new();
        let kind = match self.kind.as_deref().map(str::parse::<ChannelKind>) {
            None => {
                e.push("kind", "is required");
                None
            }
            Some(Err(bad)) => {
                e.push("kind", bad.to_string());
                None
            }
            Some(Ok(ChannelKind::Push)) => {
                e.push(
                    "kind",
                    "push is for visitors' browsers (POST /api/push/subscribe), not a team channel",
                );
                None
            }
            Some(Ok(k)) => Some(k),
        };
        for (field, present) in [
            ("name", self.name.is_some()),
            ("target", self.target.is_some()),
        ] {
            if !present {
                e.push(field, "is required");
            }
        }
        if kind.is_some_and(ChannelKind::takes_token) && self.token.is_none() {
            e.push("token", "is required: the bot token BotFather gave");
        }
        if self.rotate_secret {
            e.push("rotateSecret", "only applies to a change");
        }
        let input = ChannelInput {
            rotate_secret: false,
            ..self
        };
        let fields = input.check(kind, &mut e);
        e.into_result().map(|()| fields)
    }

    /// A change of a channel of `kind`; the kind itself stays.
    pub fn validate_change(self, kind: ChannelKind) -> Result<ChannelFields, FieldErrors> {
        let mut e = FieldErrors::new();
        if let Some(k) = &self.kind
            && k != kind.as_str()
        {
            e.push("kind", "cannot be changed; make a new channel");
        }
        let mut fields = ChannelInput { kind: None, ..self }.check(Some(kind), &mut e);
        fields.kind = None;
        if e.is_empty() && fields == ChannelFields::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| fields)
    }
}

fn non_blank(s: String) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be blank".into())
    } else {
        Ok(s)
    }
}

/// One delivery as the log shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Also the idempotency id receivers see (`webhook-id: msg_<id>`).
    pub id: Id,
    pub channel_id: Option<Id>,
    /// The outbox event it tells of; `null` for a test message.
    pub event_id: Option<Id>,
    /// The event kind, or `test`.
    pub kind: String,
    /// The headline it carried.
    pub title: Option<String>,
    pub status: DeliveryStatus,
    pub attempts: i64,
    /// The receiver's HTTP status on the last attempt.
    pub response_status: Option<i64>,
    /// The first kilobyte of what the receiver answered last.
    pub response_body: Option<String>,
    /// Why the last attempt failed (or why it was given up).
    pub last_error: Option<String>,
    pub created_at: crate::Timestamp,
    /// When a pending delivery is tried next.
    pub next_attempt_at: Option<crate::Timestamp>,
    /// When it arrived or was given up.
    pub finished_at: Option<crate::Timestamp>,
}

/// A visitor's subscription, as operators see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Subscriber {
    pub id: Id,
    pub status_page_id: Id,
    /// email, webhook, slack, discord or teams.
    pub kind: ChannelKind,
    pub target: String,
    /// The components chosen (empty: the whole page).
    pub component_ids: Vec<Id>,
    /// `page`: hears of the page (or of `componentIds`); `incidents`: came
    /// from an incident's page and hears only of `incidentIds`.
    pub scope: SubscriberScope,
    /// The incidents followed from their pages.
    pub incident_ids: Vec<Id>,
    /// Email subscribers are told of changes only once they opened the
    /// link of their confirmation.
    pub verified: bool,
    /// The language its messages are written in; empty: the install's.
    pub lang: String,
    pub verified_at: Option<crate::Timestamp>,
    pub created_at: crate::Timestamp,
}

/// Subscribe to a page: a visitor (no sign-in) or an operator.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubscribeInput {
    /// The page, by id or by `slug`.
    pub status_page_id: Option<Id>,
    pub slug: Option<String>,
    /// email (default), webhook, slack, discord or teams.
    pub kind: Option<String>,
    /// The address, or the webhook URL.
    pub target: Option<String>,
    /// Only changes of these components (empty or absent: all).
    pub component_ids: Option<Vec<Id>>,
    /// Follow only this open incident of the page (its updates and its
    /// resolution), as its page offers; not with `componentIds`.
    pub incident_id: Option<Id>,
    /// Operators only: add an email subscriber without the confirmation
    /// (for lists that opted in elsewhere).
    #[serde(default)]
    pub skip_confirmation: bool,
    /// The language the page was read in (its subscribe form says): its
    /// messages are written in it. Absent or empty: the install's default.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::lang_or_default))]
    pub lang: Option<String>,
}

/// A checked subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    pub page: PageRef,
    pub kind: ChannelKind,
    pub target: String,
    pub component_ids: Vec<Id>,
    /// The one incident followed (None: the page).
    pub incident_id: Option<Id>,
    pub skip_confirmation: bool,
    /// A language code, or empty: the install's default.
    pub lang: String,
}

/// A page named by id or slug.
#[derive(Debug, Clone, PartialEq)]
pub enum PageRef {
    Id(Id),
    Slug(String),
}

impl PageRef {
    /// The page a body names by `statusPageId` or `slug` (the id wins);
    /// neither is an error on `statusPageId`.
    pub fn given(id: Option<Id>, slug: Option<String>, e: &mut FieldErrors) -> Option<PageRef> {
        match (id, slug) {
            (Some(id), _) => Some(PageRef::Id(id)),
            (None, Some(slug)) => Some(PageRef::Slug(slug.trim().to_ascii_lowercase())),
            (None, None) => {
                e.push("statusPageId", "is required (or slug)");
                None
            }
        }
    }
}

impl SubscribeInput {
    pub fn validate(self) -> Result<Subscription, FieldErrors> {
        let mut e = FieldErrors::new();
        let page = PageRef::given(self.status_page_id, self.slug, &mut e);
        let kind = match self
            .kind
            .as_deref()
            .unwrap_or("email")
            .parse::<ChannelKind>()
        {
            Ok(k) if k != ChannelKind::Telegram && k != ChannelKind::Push => Some(k),
            _ => {
                e.push(
                    "kind",
                    "must be one of email, webhook, slack, discord, teams",
                );
                None
            }
        };
        let target = match (self.target, kind) {
            (None, _) => {
                e.push("target", "is required: the email address or webhook URL");
                None
            }
            (Some(t), Some(k)) => e.check("target", k.check_target(&t)),
            (Some(_), None) => None,
        };
        let component_ids = self
            .component_ids
            .map(|v| ids("componentIds", v, &mut e))
            .unwrap_or(Some(Vec::new()));
        if let Some(id) = self.incident_id {
            if id < 1 {
                e.push("incidentId", "must be an incident's id");
            }
            if component_ids.as_ref().is_some_and(|c| !c.is_empty()) {
                e.push(
                    "componentIds",
                    "cannot be chosen with incidentId: an incident's followers hear of that incident",
                );
            }
        }
        let lang = e
            .check("lang", recipient_lang(self.lang.as_deref().unwrap_or("")))
            .unwrap_or_default();
        e.into_result()?;
        match (page, kind, target, component_ids) {
            (Some(page), Some(kind), Some(target), Some(component_ids)) => Ok(Subscription {
                page,
                kind,
                target,
                component_ids,
                incident_id: self.incident_id,
                skip_confirmation: self.skip_confirmation,
                lang,
            }),
            _ => Err(FieldErrors::single("body", "is incomplete")),
        }
    }
}

/// A component as a notice names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NoticeComponent {
    pub id: Id,
    pub name: String,
    pub status: crate::ComponentStatus,
}

/// What one committed change says to people: rendered once, when the
/// change's events are fanned out, and sent to every recipient as it was
/// then (a later edit is a later notice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// One of `NOTIFIED_KINDS`.
    pub kind: String,
    pub page_id: Id,
    pub page_name: String,
    pub page_slug: String,
    /// A one-line headline ("Identified: API errors").
    pub title: String,
    /// The words of the update, as the operator wrote them (Markdown).
    pub text: String,
    /// Where a reader sees it on the status page.
    pub url: String,
    /// The components it is about, with their status after the change.
    pub components: Vec<NoticeComponent>,
    /// incident / maintenance / component the notice is about: its id.
    pub subject: String,
    pub subject_id: Id,
    /// The subject's state after the change (incident or maintenance
    /// status, component status), and an incident's impact.
    pub state: String,
    pub impact: Option<String>,
    pub at: crate::Timestamp,
    /// The language it is written in (a code; absent in notices stored
    /// before messages were translated: English).
    #[serde(default)]
    pub lang: String,
}

impl Notice {
    /// Whether a channel with these filters wants it. A change that names no
    /// component (a page-wide incident) reaches component filters too.
    pub fn passes(&self, page_ids: &[Id], component_ids: &[Id], kinds: &[String]) -> bool {
        let about: Vec<Id> = self.components.iter().map(|c| c.id).collect();
        reaches(
            self.page_id,
            &self.kind,
            &about,
            page_ids,
            component_ids,
            kinds,
        )
    }
}

/// Whether a change of `kind` on `page` about `components` (none: the whole
/// page) passes a channel's filters (`passes`, and the form's preview).
pub fn reaches(
    page: Id,
    kind: &str,
    components: &[Id],
    page_ids: &[Id],
    component_ids: &[Id],
    kinds: &[String],
) -> bool {
    (page_ids.is_empty() || page_ids.contains(&page))
        && (kinds.is_empty() || kinds.iter().any(|k| k == kind))
        && (component_ids.is_empty()
            || components.is_empty()
            || components.iter().any(|c| component_ids.contains(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(kind: &str, target: &str) -> ChannelInput {
        ChannelInput {
            name: Some("Ops".into()),
            kind: Some(kind.into()),
            target: Some(target.into()),
            ..Default::default()
        }
    }

    #[test]
    fn targets_follow_the_kind() {
        assert!(
            input("webhook", "https://example.com/hook")
                .validate_new()
                .is_ok()
        );
        assert!(input("webhook", "ftp://x").validate_new().is_err());
        assert!(input("email", "ops@example.com").validate_new().is_ok());
        assert!(input("email", "not-an-address").validate_new().is_err());
        assert!(input("pager", "https://x.example").validate_new().is_err());
        let mut tg = input("telegram", "-100123");
        assert!(
            tg.clone().validate_new().is_err(),
            "telegram needs its token"
        );
        tg.token = Some("123456:ABC-def_1".into());
        assert!(tg.validate_new().is_ok());
        let mut slack = input("slack", "https://hooks.slack.com/services/x");
        slack.token = Some("abc".into());
        assert!(slack.validate_new().is_err(), "only telegram takes a token");
    }

    #[test]
    fn filters_are_checked_and_applied() {
        let mut i = input("webhook", "https://example.com/hook");
        i.event_kinds = Some(vec!["incident.created".into(), "nope".into()]);
        assert!(i.validate_new().is_err());
        let notice = Notice {
            kind: "incident.created".into(),
            page_id: 1,
            page_name: "P".into(),
            page_slug: "p".into(),
            title: "t".into(),
            text: String::new(),
            url: String::new(),
            components: vec![NoticeComponent {
                id: 7,
                name: "API".into(),
                status: crate::ComponentStatus::MajorOutage,
            }],
            subject: "incident".into(),
            subject_id: 3,
            state: "investigating".into(),
            impact: Some("major".into()),
            at: crate::Timestamp::from_millis(0),
            lang: String::new(),
        };
        assert!(notice.passes(&[], &[], &[]));
        assert!(notice.passes(&[1], &[7], &["incident.created".into()]));
        assert!(!notice.passes(&[2], &[], &[]));
        assert!(!notice.passes(&[], &[8], &[]));
        assert!(!notice.passes(&[], &[], &["incident.resolved".into()]));
    }

    #[test]
    fn changes_keep_the_kind() {
        let change = ChannelInput {
            kind: Some("slack".into()),
            ..Default::default()
        };
        assert!(change.validate_change(ChannelKind::Webhook).is_err());
        assert!(
            ChannelInput::default()
                .validate_change(ChannelKind::Webhook)
                .is_err()
        );
        let rotate = ChannelInput {
            rotate_secret: true,
            ..Default::default()
        };
        assert!(rotate.clone().validate_change(ChannelKind::Webhook).is_ok());
        assert!(rotate.validate_change(ChannelKind::Slack).is_err());
    }
}
