//! Telling people: the fan-out job that turns a committed change into
//! deliveries, and the sender that makes them (docs/notifications.md).
//!
//! The sender leases due deliveries in batches and sends a batch at once,
//! each request bounded by the client's timeout. A 2xx answer is delivered;
//! anything else is tried again with exponential backoff and jitter (10 s,
//! 20 s, 40 s … up to an hour) until the delivery's give-up time, when it
//! stays in the log, given up, with the last reason. A target the SSRF rule
//! refuses, or a channel that was turned off, is given up at once: trying
//! again would change nothing.

use crate::mailer::{Letter, Mailer};
use crate::messages::{self, Target};
use crate::notices::Renderer;
use crate::outgoing::{Guard, Outgoing};
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use upstate_core::StatusPage;
use upstate_core::Timestamp;
use upstate_core::i18n::Lang;
use upstate_core::notify::Notice;
use upstate_store::deliveries::{self, Attempt, Leased, Planned};
use upstate_store::jobs::Job;
use upstate_store::notifications::{self, Sendable};
use upstate_store::subscribers;
use upstate_store::{Db, StoreError, StoreResult};

/// How deliveries are made; from the configuration.
#[derive(Debug, Clone)]
pub struct DeliverySettings {
    /// Address ranges outgoing requests may reach although they are
    /// private or loopback (`outgoing_allow`).
    pub allow: Vec<ipnet::IpNet>,
    /// Where visitors reach the server, for links in messages.
    pub public_url: String,
    /// Telegram's Bot API base URL.
    pub telegram_api: String,
    /// How long a failing delivery is retried before it is given up.
    pub give_up_after: Duration,
    /// Per request.
    pub timeout: Duration,
    /// The SMTP relay, if mail is configured.
    pub smtp: Option<SmtpSettings>,
    /// With `smtp`: keep mail here instead of dialling the relay (set by
    /// the tests that read what a message says; no setting reaches it).
    pub keep_mail: Option<crate::mailer::KeptMail>,
}

/// `smtp_url` and `smtp_from`. The URL may hold a password: `Debug`
/// shows it redacted.
#[derive(Clone)]
pub struct SmtpSettings {
    pub url: String,
    pub from: String,
}

impl std::fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("url", &upstate_store::redact(&self.url))
            .field("from", &self.from)
            .finish()
    }
}

impl Default for DeliverySettings {
    fn default() -> Self {
        DeliverySettings {
            allow: Vec::new(),
            public_url: "http://127.0.0.1:8080".into(),
            telegram_api: "https://api.telegram.org".into(),
            give_up_after: Duration::from_secs(24 * 3600),
            timeout: Duration::from_secs(10),
            smtp: None,
            keep_mail: None,
        }
    }
}

/// How long a leased batch of deliveries is ours: each is sent at once and
/// bounded by the request timeout, so three of those and a margin for
/// recording the results. Past it, another instance takes a delivery over
/// (this one died holding it): a receiver may then get it twice, with the
/// same `webhook-id`, never not at all.
fn lease_ms(timeout: Duration) -> i64 {
    i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX / 4) * 3 + 15_000
}
/// Deliveries leased (and sent concurrently) at once.
const BATCH: i64 = 500;
const SAFETY_POLL: Duration = Duration::from_secs(30);

/// Sends deliveries; shared by the worker and the `/test` route.
#[derive(Clone)]
pub struct Sender {
    pub settings: DeliverySettings,
    outgoing: Outgoing,
    mailer: Option<Mailer>,
}

impl Sender {
    pub fn new(settings: DeliverySettings) -> Result<Sender, String> {
        let outgoing = Outgoing::new(
            Guard {
                allow: settings.allow.clone(),
                setting: "outgoing_allow",
            },
            settings.timeout,
        )?;
        let mailer = match &settings.smtp {
            Some(smtp) => Some(match &settings.keep_mail {
                Some(kept) => Mailer::keeping(kept.clone(), &smtp.from, settings.timeout)?,
                None => Mailer::new(&smtp.url, &smtp.from, settings.timeout)?,
            }),
            None => None,
        };
        Ok(Sender {
            settings,
            outgoing,
            mailer,
        })
    }

    /// Whether mail can be sent (an SMTP relay is configured).
    /// The guarded HTTP client (also what fetches an importer's source).
    pub fn outgoing(&self) -> &Outgoing {
        &self.outgoing
    }

    pub fn has_mailer(&self) -> bool {
        self.mailer.is_some()
    }

    /// Whether the SMTP relay answers (None: no mail configured).
    pub async fn smtp_reachable(&self) -> Option<Result<(), String>> {
        match &self.mailer {
            Some(m) => Some(m.reachable().await),
            None => None,
        }
    }

    async fn mail(
        &self,
        to: &str,
        notice: &Notice,
        id: &str,
        links: Option<(&str, &str)>,
    ) -> Attempt {
        let Some(mailer) = &self.mailer else {
            return refused("no SMTP server is configured (smtp_url)".into());
        };
        let letter = Letter {
            to,
            notice,
            id,
            unsubscribe: links.map(|l| l.0),
            manage: links.map(|l| l.1),
        };
        match mailer.send(&letter).await {
            Ok(a) => Attempt {
                delivered: true,
                response_status: Some(a.code),
                response_body: Some(a.text),
                ..Attempt::default()
            },
            Err(f) => Attempt {
                error: Some(f.reason),
                permanent: f.permanent,
                ..Attempt::default()
            },
        }
    }

    /// One attempt to tell `channel` of `notice`; `id` is the delivery's
    /// stable id (`msg_<n>`).
    pub async fn send(&self, channel: &Sendable, notice: &Notice, id: &str) -> Attempt {
        if channel.channel.kind == upstate_core::notify::ChannelKind::Email {
            return self.mail(&channel.channel.target, notice, id, None).await;
        }
        let target = Target {
            kind: channel.channel.kind,
            target: &channel.channel.target,
            secret: channel.secret.as_deref(),
            telegram_api: &self.settings.telegram_api,
        };
        let now_secs = Timestamp::now().millis() / 1000;
        match messages::request(&target, notice, id, now_secs) {
            Ok(req) => self.post(&req, false).await,
            Err(e) => refused(e),
        }
    }

    /// Sends one prepared request and reads the receiver's answer.
    /// `push`: a push service's 404 or 410 means the subscription is gone
    /// for good (RFC 8030 §7.3), so no retry.
    async fn post(&self, req: &messages::Request, push: bool) -> Attempt {
        match self
            .outgoing
            .post_json(&req.url, &req.headers, &req.body)
            .await
        {
            Ok(answer) => Attempt {
                delivered: (200..300).contains(&answer.status),
                response_status: Some(answer.status),
                error: (!(200..300).contains(&answer.status))
                    .then(|| format!("the receiver answered HTTP {}", answer.status)),
                // A push service's 404 or 410: the browser unsubscribed.
                permanent: push && matches!(answer.status, 404 | 410),
                response_body: Some(answer.body),
            },
            // The bot token is part of Telegram's URL: the reason never
            // repeats the URL.
            Err(f) => Attempt {
                error: Some(f.reason),
                permanent: f.permanent,
                ..Attempt::default()
            },
        }
    }

    /// A change told to a browser's push subscription, encrypted to its keys.
    async fn push(
        &self,
        r: &subscribers::Reachable,
        vapid: Option<&(String, String)>,
        notice: &Notice,
        id: &str,
    ) -> Attempt {
        let (Some((p256dh, auth)), Some((private, _))) = (&r.push_keys, vapid) else {
            return refused("the push subscription has no keys".into());
        };
        let subject = format!("{}/", self.base());
        match crate::push::request(&r.target, (p256dh, auth), private, &subject, notice, id) {
            Ok(req) => self.post(&req, true).await,
            Err(e) => refused(e),
        }
    }

    fn base(&self) -> &str {
        self.settings.public_url.trim_end_matches('/')
    }

    /// A viewer's sign-in link to a private page (`url`, valid 15 minutes),
    /// sent at once: the person waits for it, and asks again if it is lost.
    pub async fn sign_in_link(
        &self,
        to: &str,
        page: &StatusPage,
        lang: Lang,
        url: String,
        now: Timestamp,
    ) -> Attempt {
        let notice = Notice {
            kind: "sign_in".into(),
            page_id: page.id,
            page_name: page.name.clone(),
            page_slug: page.slug.clone(),
            title: lang.t("msg.sign_in_title").replace("{page}", &page.name),
            text: lang.t("msg.sign_in_text").replace("{page}", &page.name),
            url,
            components: Vec::new(),
            subject: "viewer".into(),
            subject_id: 0,
            state: "sign_in".into(),
            impact: None,
            at: now,
            lang: lang.code().into(),
        };
        let id = format!("signin_{}", now.millis());
        self.mail(to, &notice, &id, None).await
    }

    /// The opt-in message of a new email subscriber: the link that turns
    /// the subscription on, valid 24 hours.
    async fn confirm(
        &self,
        r: &subscribers::Reachable,
        page: &StatusPage,
        lang: Lang,
        id: &str,
        now: Timestamp,
    ) -> Attempt {
        let Some(token) = &r.confirm_token else {
            return refused("the confirmation is no longer needed".into());
        };
        let link = format!("{}/api/subscribers/verify?token={token}", self.base());
        let notice = Notice {
            kind: "confirm".into(),
            page_id: page.id,
            page_name: page.name.clone(),
            page_slug: page.slug.clone(),
            title: lang.t("msg.confirm_title").replace("{page}", &page.name),
            text: if r.following.is_empty() {
                lang.t("msg.confirm_text").replace("{page}", &page.name)
            } else {
                lang.t("msg.confirm_follow_text")
                    .replace("{page}", &page.name)
                    .replace("{incident}", &r.following.join(", "))
            },
            url: link,
            components: Vec::new(),
            subject: "subscription".into(),
            subject_id: 0,
            state: "confirm".into(),
            impact: None,
            at: now,
            lang: lang.code().into(),
        };
        self.mail(&r.target, &notice, id, None).await
    }

    /// A change told to a visitor's subscription: email with its one-click
    /// unsubscribe, or the webhook or chat it gave (unsigned: a visitor has
    /// no secret to check).
    async fn tell_subscriber(
        &self,
        r: &subscribers::Reachable,
        notice: &Notice,
        id: &str,
        now: Timestamp,
    ) -> Attempt {
        if r.kind == upstate_core::notify::ChannelKind::Email {
            let leave = format!(
                "{}/api/subscribers/unsubscribe?token={}",
                self.base(),
                r.token
            );
            let manage = format!("{}/api/subscribers/manage?token={}", self.base(), r.token);
            return self
                .mail(&r.target, notice, id, Some((&leave, &manage)))
                .await;
        }
        let channel = Sendable {
            channel: upstate_core::notify::Channel {
                id: 0,
                name: String::new(),
                kind: r.kind,
                target: r.target.clone(),
                secret_hint: None,
                page_ids: Vec::new(),
                component_ids: Vec::new(),
                event_kinds: Vec::new(),
                enabled: true,
                lang: r.lang.clone(),
                created_at: now,
                updated_at: now,
            },
            secret: None,
        };
        self.send(&channel, notice, id).await
    }

    /// A message that says it is a test, about `channel`'s first page, in
    /// the language the channel's messages are written in (its own, else
    /// the install's `default`): what it will receive, but for the words.
    pub fn test_notice(
        &self,
        channel: &Sendable,
        page: Option<&upstate_core::StatusPage>,
        default: Lang,
        now: Timestamp,
    ) -> Notice {
        let base = self.settings.public_url.trim_end_matches('/');
        let lang = Lang::parse(&channel.channel.lang).unwrap_or(default);
        Notice {
            kind: "test".into(),
            page_id: page.map_or(0, |p| p.id),
            page_name: page.map_or_else(|| "Upstate".to_string(), |p| p.name.clone()),
            page_slug: page.map_or_else(String::new, |p| p.slug.clone()),
            title: lang
                .t("msg.test_title")
                .replace("{name}", &channel.channel.name),
            text: lang.t("msg.test_text").to_string(),
            url: page.map_or_else(
                || format!("{base}/admin"),
                |p| format!("{base}/s/{}", p.slug),
            ),
            components: Vec::new(),
            subject: "test".into(),
            subject_id: 0,
            state: "operational".into(),
            impact: None,
            at: now,
            lang: lang.code().to_string(),
        }
    }
}

/// Who a leased delivery goes to (`None`: gone since it was made).
enum Recipient {
    Channel(Option<Sendable>),
    Subscriber(Option<(subscribers::Reachable, Option<std::sync::Arc<StatusPage>>)>),
}

/// An attempt that could not be made, and never will be as things stand.
fn refused(error: String) -> Attempt {
    Attempt {
        error: Some(error),
        permanent: true,
        ..Attempt::default()
    }
}

/// 10 s, 20 s, 40 s … up to an hour, jittered so that deliveries that
/// failed together do not retry together.
fn backoff_ms(attempts: i64) -> i64 {
    let base = (10_000i64 << (attempts - 1).clamp(0, 9)).min(3_600_000);
    base + i64::from(rand::random::<u16>()) % (base / 5 + 1)
}

/// Expands the committed change whose outbox rows are `ids` into
/// deliveries. Idempotent: the notices are rendered once
/// and each (event, recipient) is inserted once.
pub async fn fan_out(
    db: &Db,
    sender_settings: &DeliverySettings,
    job: &Job,
    ids: &[upstate_core::Id],
    now: Timestamp,
) -> StoreResult<u64> {
    let events = deliveries::outbox_events(db, ids).await?;
    let quiet: Vec<upstate_core::Id> = events.iter().filter(|e| e.quiet).map(|e| e.id).collect();
    let channels: Vec<Sendable> = notifications::sendable(db)
        .await?
        .into_iter()
        .filter(|c| c.channel.enabled)
        .collect();
    let install = install_lang(db).await?;
    let renderer = Renderer {
        db,
        public_url: &sender_settings.public_url,
        lang: install,
    };
    // The same notices in every other language a recipient reads: each
    // recipient gets the one of its language (`StoredNotices::pick`).
    let mut translated: Vec<(upstate_core::Id, Notice)> = Vec::new();
    for code in deliveries::recipient_langs(db).await? {
        let Some(lang) = Lang::parse(&code).filter(|l| *l != install) else {
            continue;
        };
        let other = Renderer {
            db,
            public_url: &sender_settings.public_url,
            lang,
        };
        translated.extend(other.notices(&events).await?);
    }
    let planned: Vec<Planned> = renderer
        .notices(&events)
        .await?
        .into_iter()
        .map(|(event_id, notice)| Planned {
            translations: translated
                .iter()
                .filter(|(id, _)| *id == event_id)
                .map(|(_, n)| n.clone())
                .collect(),
            event_id,
            channels: channels
                .iter()
                .filter(|c| {
                    notice.passes(
                        &c.channel.page_ids,
                        &c.channel.component_ids,
                        &c.channel.event_kinds,
                    )
                })
                .map(|c| c.channel.id)
                .collect(),
            // A draft is the team's business until someone publishes it.
            subscribers: !quiet.contains(&event_id) && notice.subject != "alert_draft",
            notice,
        })
        .collect();
    deliveries::fan_out(
        db,
        job,
        &planned,
        now,
        sender_settings.give_up_after.as_millis() as i64,
    )
    .await
}

/// The language messages are written in: the install's default language
/// of public pages.
pub(crate) async fn install_lang(db: &Db) -> StoreResult<Lang> {
    Ok(upstate_store::settings::settings(db).await?.language())
}

/// Makes every delivery due at `now`; returns how many it settled.
pub async fn send_due(db: &Db, sender: &Sender, now: Timestamp) -> StoreResult<usize> {
    let leased = deliveries::lease(db, now, lease_ms(sender.settings.timeout), BATCH).await?;
    if leased.is_empty() {
        return Ok(0);
    }
    // A batch mostly tells of one or two changes, to a few channels.
    let mut notices: HashMap<i64, Option<deliveries::StoredNotices>> = HashMap::new();
    let mut channels: HashMap<i64, Option<Sendable>> = HashMap::new();
    // Shared, not copied per delivery: a page carries its stylesheet too.
    let mut pages: HashMap<i64, Option<std::sync::Arc<StatusPage>>> = HashMap::new();
    let vapid = if leased.iter().any(|d| d.subscriber_id.is_some()) {
        Some(std::sync::Arc::new(crate::push::vapid_keys(db).await?))
    } else {
        None
    };
    let lang = if leased.iter().any(|d| d.kind == "confirm") {
        install_lang(db).await?
    } else {
        Lang::En
    };
    let mut work = JoinSet::new();
    for d in leased {
        let stored = match d.event_id {
            Some(id) => match notices.get(&id) {
                Some(n) => n.clone(),
                None => {
                    let n = deliveries::notice(db, id).await?;
                    notices.insert(id, n.clone());
                    n
                }
            },
            None => None,
        };
        let recipient = match (d.channel_id, d.subscriber_id) {
            (Some(id), _) => Recipient::Channel(match channels.get(&id) {
                Some(c) => c.clone(),
                None => {
                    let c = match notifications::get_sendable(db, id).await {
                        Ok(c) => Some(c),
                        Err(StoreError::NotFound(_)) => None,
                        Err(e) => return Err(e),
                    };
                    channels.insert(id, c.clone());
                    c
                }
            }),
            (None, Some(id)) => match subscribers::reachable(db, id).await? {
                Some(r) => {
                    let page = match pages.get(&r.page_id) {
                        Some(p) => p.clone(),
                        None => {
                            let p = upstate_store::pages::get(db, r.page_id)
                                .await
                                .ok()
                                .map(std::sync::Arc::new);
                            pages.insert(r.page_id, p.clone());
                            p
                        }
                    };
                    Recipient::Subscriber(Some((r, page)))
                }
                None => Recipient::Subscriber(None),
            },
            (None, None) => Recipient::Subscriber(None),
        };
        // The notice in the language this recipient reads.
        let reads = match &recipient {
            Recipient::Channel(Some(c)) => c.channel.lang.as_str(),
            Recipient::Subscriber(Some((r, _))) => r.lang.as_str(),
            _ => "",
        };
        let mut notice = stored.as_ref().map(|s| s.pick(reads));
        // Nothing of a component the subscriber may not see.
        if let (Some(n), Recipient::Subscriber(Some((r, _)))) = (&mut notice, &recipient) {
            n.components.retain(|c| !r.hidden.contains(&c.id));
        }
        let lang = match &recipient {
            Recipient::Subscriber(Some((r, _))) => Lang::parse(&r.lang).unwrap_or(lang),
            _ => lang,
        };
        let sender = sender.clone();
        let vapid = vapid.clone();
        work.spawn(async move {
            let id = format!("msg_{}", d.id);
            let attempt = match (notice, recipient, d.kind.as_str()) {
                (_, Recipient::Subscriber(Some((r, Some(page)))), "confirm") => {
                    sender.confirm(&r, &page, lang, &id, now).await
                }
                (Some(n), Recipient::Subscriber(Some((r, _))), _)
                    if r.kind == upstate_core::notify::ChannelKind::Push =>
                {
                    sender.push(&r, vapid.as_deref(), &n, &id).await
                }
                (Some(n), Recipient::Subscriber(Some((r, _))), _) if r.verified => {
                    sender.tell_subscriber(&r, &n, &id, now).await
                }
                (Some(n), Recipient::Channel(Some(c)), _) if c.channel.enabled => {
                    sender.send(&c, &n, &id).await
                }
                (_, Recipient::Channel(Some(_)), _) => refused("the channel is turned off".into()),
                (_, Recipient::Channel(None), _) => refused("the channel was deleted".into()),
                (_, Recipient::Subscriber(None), _) => refused("the subscriber is gone".into()),
                (_, Recipient::Subscriber(Some(_)), _) => {
                    refused("the subscriber has not confirmed, or the page is gone".into())
                }
            };
            (d, attempt)
        });
    }
    let mut done = Vec::new();
    while let Some(finished) = work.join_next().await {
        if let Ok((d, attempt)) = finished {
            let retry_at = retry_at(&d, &attempt, now);
            done.push((d, attempt, retry_at));
        }
    }
    let batch: Vec<_> = done.iter().map(|(d, a, r)| (d, a, *r)).collect();
    deliveries::settle_many(db, &batch, now).await?;
    for (d, attempt, _) in &done {
        // A push service's 404 or 410: the browser's subscription is gone.
        if let Some(sub) = d.subscriber_id
            && attempt.permanent
            && matches!(attempt.response_status, Some(404 | 410))
        {
            upstate_store::push::forget(db, sub).await?;
        }
    }
    Ok(done.len())
}

/// When a failed attempt is tried again (None: given up, or delivered).
fn retry_at(d: &Leased, attempt: &Attempt, now: Timestamp) -> Option<Timestamp> {
    let retry_at = (!attempt.delivered && !attempt.permanent)
        .then(|| now.millis() + backoff_ms(d.attempts))
        .filter(|at| *at < d.give_up_at)
        .map(Timestamp::from_millis);
    if !attempt.delivered {
        tracing::warn!(delivery = d.id, recipient = %d.recipient, error = ?attempt.error,
            retry = retry_at.is_some(), "delivery failed");
    }
    retry_at
}

/// Sends deliveries until cancelled: woken when this process fanned some
/// out, sleeping until the next retry is due, polling as the safety net
/// (deliveries fanned out on another instance are found by it).
pub async fn run_sender(db: Db, sender: Sender, cancel: CancellationToken) {
    // Two loops, each with its own leased batch: while one waits for the
    // slowest sends of its batch, the other keeps the connections busy
    // (bench/notify.sh). The mailer's connection limit is shared.
    let second = tokio::spawn(send_loop(db.clone(), sender.clone(), cancel.clone()));
    send_loop(db, sender, cancel).await;
    let _ = second.await;
}

async fn send_loop(db: Db, sender: Sender, cancel: CancellationToken) {
    loop {
        let round = send_due(&db, &sender, db.clock.now()).await;
        if let Err(e) = &round {
            tracing::warn!(error = %e, "delivery round failed");
        }
        crate::beats::beat(crate::beats::Loop::Sender);
        let wait = match round {
            Ok(n) if n as i64 >= BATCH => {
                // More is waiting: wake the other loop too.
                db.changes.deliveries.notify_one();
                Duration::ZERO
            }
            Ok(_) => match deliveries::next_due(&db).await {
                Ok(Some(at)) => {
                    Duration::from_millis((at.millis() - db.clock.now().millis()).max(0) as u64)
                        .min(SAFETY_POLL)
                }
                Ok(None) => SAFETY_POLL,
                Err(_) => Duration::from_secs(1),
            },
            Err(_) => Duration::from_secs(1),
        };
        if wait.is_zero() {
            if cancel.is_cancelled() {
                break;
            }
            continue;
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = db.changes.deliveries.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}
