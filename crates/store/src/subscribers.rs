//! Visitors' subscriptions to a page (docs/notifications.md).
//!
//! Email needs double opt-in: a new address gets a confirmation (a
//! delivery of kind `confirm`, so it is retried like any message) with a
//! link valid 24 hours, and nothing else until the link is opened. Asking
//! again answers the same whatever the state (no one learns whether an
//! address is subscribed); an unverified address gets a fresh link at most
//! every 10 minutes. Webhook and chat subscribers are told at once (their
//! URL is checked by the SSRF rule on every send).
//!
//! A visitor's own actions (subscribe, confirm, unsubscribe) are
//! bookkeeping: they change no page and have no actor to audit beyond the
//! address itself. An operator's removal is audited.

use crate::audit::AuditCtx;
use crate::db::{Db, Within};
use crate::error::{StoreError, StoreResult};
use crate::rows::parse_enum;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::notify::{ChannelKind, Subscriber, SubscriberScope};
use upstate_core::{Id, Timestamp};

/// How long an opt-in link works.
pub const CONFIRM_VALID_MS: i64 = 24 * 3_600_000;
/// The least time between two confirmations to one address.
pub const CONFIRM_EVERY_MS: i64 = 10 * 60_000;

pub(crate) fn token() -> String {
    let bytes: [u8; 24] = rand::random();
    hex::encode(bytes)
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    page_id: i64,
    kind: String,
    target: String,
    verified_at: Option<i64>,
    created_at: i64,
    scope: String,
    lang: String,
}

macro_rules! cols {
    () => {
        "id, page_id, kind, target, verified_at, created_at, scope, lang"
    };
}

async fn components_of(db: &Db, id: Id) -> StoreResult<Vec<Id>> {
    Ok(on_db!(db, |c| {
        sqlx::query_scalar(
        "SELECT component_id FROM subscriber_components WHERE subscriber_id = $1 ORDER BY component_id"
    )
    .bind(id)
    .fetch_all(c)
    .await?
    }))
}

async fn incidents_of(db: &Db, id: Id) -> StoreResult<Vec<Id>> {
    Ok(on_db!(db, |c| {
        sqlx::query_scalar(
            "SELECT incident_id FROM subscriber_incidents WHERE subscriber_id = $1 ORDER BY incident_id",
        )
        .bind(id)
        .fetch_all(c)
        .await?
    }))
}

impl Row {
    async fn into_subscriber(self, db: &Db) -> StoreResult<Subscriber> {
        Ok(Subscriber {
            id: self.id,
            status_page_id: self.page_id,
            kind: parse_enum("kind", &self.kind)?,
            component_ids: components_of(db, self.id).await?,
            scope: parse_enum("scope", &self.scope)?,
            incident_ids: incidents_of(db, self.id).await?,
            target: self.target,
            verified: self.verified_at.is_some(),
            verified_at: self.verified_at.map(Timestamp::from_millis),
            created_at: Timestamp::from_millis(self.created_at),
            lang: self.lang,
        })
    }
}

/// What a subscription request came to (the route answers the same to
/// the visitor whatever it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscribed {
    /// A confirmation was queued.
    Confirming,
    /// Told at once from now on (webhook, chat, or an operator's skip).
    Active,
    /// Already subscribed, or a confirmation went out minutes ago: nothing
    /// was sent.
    Unchanged,
}

/// The components a subscriber hears of (none: the whole page); a choice
/// of the page's, so an incident follower who makes one becomes a page
/// subscriber.
pub(crate) async fn set_components(
    tx: &mut Within<'_>,
    id: Id,
    components: &[Id],
) -> StoreResult<()> {
    on_tx!(tx, |c| sqlx::query(
        "UPDATE subscribers SET scope = 'page' WHERE id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    on_tx!(tx, |c| sqlx::query(
        "DELETE FROM subscriber_components WHERE subscriber_id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    for comp in components {
        on_tx!(tx, |c| {
            sqlx::query(
            "INSERT INTO subscriber_components (subscriber_id, component_id) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        )
        .bind(id)
        .bind(comp)
        .execute(c)
        .await?
        .rows_affected()
        });
    }
    Ok(())
}

/// What a subscription is to: the page (or some of its components), or
/// one incident followed from its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follows<'a> {
    Page(&'a [Id]),
    Incident(Id),
}

/// What a subscription may follow: components of its own page, and an
/// incident of its page that is not resolved (no more updates will come).
/// Returns the field that is wrong and why, or None.
fn refusal(
    page: Id,
    follows: Follows<'_>,
    component_pages: &[(Id, Option<i64>)],
    incident: Option<(i64, String)>,
) -> Option<(&'static str, String)> {
    match follows {
        Follows::Page(_) => component_pages
            .iter()
            .find(|(_, p)| *p != Some(page))
            .map(|(c, _)| ("componentIds", format!("{c} is no component of this page"))),
        Follows::Incident(id) => match incident {
            Some((p, status)) if p == page && status == "resolved" => Some((
                "incidentId",
                "is resolved: no more updates will come (subscribe to the page instead)".into(),
            )),
            Some((p, _)) if p == page => None,
            _ => Some(("incidentId", format!("{id} is no incident of this page"))),
        },
    }
}

const COMPONENT_PAGE: &str = "SELECT page_id FROM components WHERE id = $1";
const INCIDENT_PAGE: &str = "SELECT page_id, status FROM incidents WHERE id = $1";

/// The facts `refusal` needs, read through `$run` (`on_db` for the read
/// pool, `on_tx` inside a transaction): one text for both.
macro_rules! follows_refused {
    ($run:ident, $on:expr, $page:expr, $follows:expr) => {{
        let mut comps = Vec::new();
        let mut incident = None;
        match $follows {
            Follows::Page(ids) => {
                for &id in ids {
                    let p: Option<i64> = $run!($on, |c| sqlx::query_scalar(COMPONENT_PAGE)
                        .bind(id)
                        .fetch_optional(c)
                        .await?);
                    comps.push((id, p));
                }
            }
            Follows::Incident(id) => {
                incident = $run!($on, |c| sqlx::query_as(INCIDENT_PAGE)
                    .bind(id)
                    .fetch_optional(c)
                    .await?);
            }
        }
        refusal($page, $follows, &comps, incident)
    }};
}

/// `refusal` of a request before it is made (a visitor's typo should not
/// count against their sign-up limit); `subscribe_in` asks again inside
/// its transaction, which is what holds.
pub async fn check(db: &Db, page: Id, follows: Follows<'_>) -> StoreResult<()> {
    refused(follows_refused!(on_db, db, page, follows))
}

async fn check_in(
    tx: &mut Within<'_>,
    page: Id,
    follows: Follows<'_>,
) -> StoreResult<Option<(&'static str, String)>> {
    Ok(follows_refused!(on_tx, tx, page, follows))
}

fn refused(r: Option<(&'static str, String)>) -> StoreResult<()> {
    match r {
        Some((field, message)) => Err(StoreError::Invalid(upstate_core::FieldErrors::single(
            field, message,
        ))),
        None => Ok(()),
    }
}

/// Subscribes `target` to `page`; components and incident must be the
/// page's (refused as invalid fields otherwise). `verified` skips the opt-in (webhooks, chat,
/// operators). Following an incident adds it to an existing subscriber's
/// list and changes nothing else; subscribing to the page makes an
/// incident follower a page subscriber.
pub async fn subscribe(
    db: &Db,
    page: Id,
    to: Recipient<'_>,
    follows: Follows<'_>,
    verified: bool,
) -> StoreResult<(Id, Subscribed)> {
    let now = db.clock.now().millis();
    let mut tx = db.bookkeeping().await?;
    let (id, outcome, _) = subscribe_in(&mut tx.within(), now, page, to, follows, verified).await?;
    tx.commit().await?;
    if outcome == Subscribed::Confirming {
        db.changes.deliveries.notify_one();
    }
    Ok((id, outcome))
}

/// An operator's subscription (`subscribe`), audited in its own
/// transaction: the subscriber and its audit event exist together or not
/// at all.
pub async fn add(
    db: &Db,
    ctx: &AuditCtx,
    page: Id,
    to: Recipient<'_>,
    follows: Follows<'_>,
    verified: bool,
) -> StoreResult<Subscriber> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let (id, outcome, confirmed) =
        subscribe_in(&mut tx.within(), now, page, to, follows, verified).await?;
    let Recipient { kind, target, .. } = to;
    let (components, incident) = match follows {
        Follows::Page(ids) => (ids.to_vec(), None),
        Follows::Incident(i) => (Vec::new(), Some(i)),
    };
    let audited = tx
        .audit(
            Action::SubscriberCreate,
            "subscriber",
            Some(id),
            json!({ "statusPageId": page, "kind": kind, "target": target,
                    "componentIds": components, "incidentId": incident,
                    "skippedConfirmation": confirmed }),
        )
        .await?;
    tx.commit(audited).await?;
    if outcome == Subscribed::Confirming {
        db.changes.deliveries.notify_one();
    }
    get(db, id).await
}

/// Subscribers of one page from a list (the CSV import), with one audit
/// event, in one transaction: all of them or none. Returns how many were
/// added and how many were there already.
pub async fn import(
    db: &Db,
    ctx: &AuditCtx,
    page: Id,
    rows: &[upstate_core::notify::Subscription],
    skip_confirmation: bool,
) -> StoreResult<(usize, usize)> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let (mut imported, mut unchanged, mut confirming) = (0, 0, false);
    let mut wrong = upstate_core::FieldErrors::new();
    for (i, r) in rows.iter().enumerate() {
        let verified = r.kind != ChannelKind::Email || skip_confirmation;
        let follows = Follows::Page(&r.component_ids);
        if let Some((_, message)) = check_in(&mut tx.within(), page, follows).await? {
            wrong.push("csv", format!("row {}: {message}", i + 1));
            continue;
        }
        let to = Recipient {
            kind: r.kind,
            target: &r.target,
            lang: &r.lang,
            viewer: None,
        };
        let (_, outcome, _) =
            subscribe_in(&mut tx.within(), now, page, to, follows, verified).await?;
        confirming |= outcome == Subscribed::Confirming;
        if outcome == Subscribed::Unchanged {
            unchanged += 1;
        } else {
            imported += 1;
        }
    }
    if !wrong.is_empty() {
        return Err(StoreError::Invalid(wrong));
    }
    let audited = tx
        .audit(
            Action::SubscriberImport,
            "subscriber",
            None,
            json!({ "statusPageId": page, "imported": imported, "unchanged": unchanged,
                    "skippedConfirmation": skip_confirmation }),
        )
        .await?;
    tx.commit(audited).await?;
    if confirming {
        db.changes.deliveries.notify_one();
    }
    Ok((imported, unchanged))
}

/// Who subscribes: how they are reached and the language they read.
#[derive(Debug, Clone, Copy)]
pub struct Recipient<'a> {
    pub kind: ChannelKind,
    pub target: &'a str,
    /// A language code, or empty: the install's default.
    pub lang: &'a str,
    /// The viewer whose sign-in opened a private page to this visitor: the
    /// subscription goes when the viewer does.
    pub viewer: Option<Id>,
}

/// `subscribe`'s statements, inside the caller's transaction; also says
/// whether the subscriber is confirmed now.
async fn subscribe_in(
    tx: &mut Within<'_>,
    now: i64,
    page: Id,
    to: Recipient<'_>,
    follows: Follows<'_>,
    verified: bool,
) -> StoreResult<(Id, Subscribed, bool)> {
    let Recipient {
        kind,
        target,
        lang,
        viewer,
    } = to;
    refused(check_in(tx, page, follows).await?)?;
    let found: Option<(i64, Option<i64>, Option<i64>)> = on_tx!(tx, |c| {
        sqlx::query_as(
        "SELECT id, verified_at, confirm_sent FROM subscribers WHERE page_id = $1 AND kind = $2 AND target = $3"
    )
    .bind(page)
    .bind(kind.as_str())
    .bind(target)
    .fetch_optional(c)
    .await?
    });
    let scope = match follows {
        Follows::Page(_) => SubscriberScope::Page,
        Follows::Incident(_) => SubscriberScope::Incidents,
    };
    let id = match found {
        Some((id, ..)) => id,
        None => on_tx!(tx, |c| {
            sqlx::query_scalar(
                "INSERT INTO subscribers (page_id, kind, target, token, verified_at, created_at, scope, joined_after, lang, viewer_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, (SELECT COALESCE(MAX(id), 0) FROM outbox), $8, $9) RETURNING id",
            )
            .bind(page)
            .bind(kind.as_str())
            .bind(target)
            .bind(token())
            .bind(verified.then_some(now))
            .bind(now)
            .bind(scope.as_str())
            .bind(lang)
            .bind(viewer)
            .fetch_one(c)
            .await?
        }),
    };
    if let (Some(_), Some(viewer)) = (found, viewer) {
        // The same address subscribing again as a viewer: it now goes with
        // that viewer.
        on_tx!(tx, |c| sqlx::query(
            "UPDATE subscribers SET viewer_id = $1 WHERE id = $2"
        )
        .bind(viewer)
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    }
    if found.is_some() && !lang.is_empty() {
        // Subscribing again from a page read in another language: its
        // messages follow.
        on_tx!(tx, |c| sqlx::query(
            "UPDATE subscribers SET lang = $1 WHERE id = $2"
        )
        .bind(lang)
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    }
    match follows {
        Follows::Page(components) => set_components(tx, id, components).await?,
        Follows::Incident(incident) => {
            on_tx!(tx, |c| {
                sqlx::query(
                "INSERT INTO subscriber_incidents (subscriber_id, incident_id) VALUES ($1, $2) ON CONFLICT DO NOTHING"
            )
            .bind(id)
            .bind(incident)
            .execute(c)
            .await?
            .rows_affected()
            });
        }
    }
    let outcome = match found {
        Some((_, Some(_), _)) => Subscribed::Unchanged,
        Some((_, None, sent)) if !verified && sent.is_some_and(|s| now - s < CONFIRM_EVERY_MS) => {
            Subscribed::Unchanged
        }
        Some((_, None, _)) if verified => {
            on_tx!(tx, |c| sqlx::query(
                "UPDATE subscribers SET verified_at = $1, confirm_token = NULL, \
                 joined_after = (SELECT COALESCE(MAX(id), 0) FROM outbox) WHERE id = $2"
            )
            .bind(now)
            .bind(id)
            .execute(c)
            .await?
            .rows_affected());
            Subscribed::Active
        }
        Some(_) => Subscribed::Confirming,
        None if verified => Subscribed::Active,
        None => Subscribed::Confirming,
    };
    if outcome == Subscribed::Confirming {
        on_tx!(tx, |c| {
            sqlx::query(
            "UPDATE subscribers SET confirm_token = $1, confirm_until = $2, confirm_sent = $3 WHERE id = $4"
        )
        .bind(token())
        .bind(now + CONFIRM_VALID_MS)
        .bind(now)
        .bind(id)
        .execute(c)
        .await?
        .rows_affected()
        });
        on_tx!(tx, |c| {
            sqlx::query(
            "INSERT INTO deliveries (event_id, subscriber_id, recipient, kind, status, run_at, give_up_at, created_at) \
             VALUES (NULL, $1, $2, 'confirm', 'pending', $3, $4, $3)"
        )
        .bind(id)
        .bind(format!("subscriber:{id}"))
        .bind(now)
        .bind(now + CONFIRM_VALID_MS)
        .execute(c)
        .await?
        .rows_affected()
        });
    }
    // Confirmed before, or now without the opt-in.
    let confirmed = verified || matches!(found, Some((_, Some(_), _)));
    Ok((id, outcome, confirmed))
}

/// Opens an opt-in link at `now`: the subscriber's page id once verified.
pub async fn verify(db: &Db, confirm_token: &str, now: Timestamp) -> StoreResult<Id> {
    let now = now.millis();
    let mut tx = db.bookkeeping().await?;
    let page: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "UPDATE subscribers SET verified_at = $1, confirm_token = NULL, \
         joined_after = (SELECT COALESCE(MAX(id), 0) FROM outbox) \
         WHERE confirm_token = $2 AND confirm_until > $1 RETURNING page_id"
    )
    .bind(now)
    .bind(confirm_token)
    .fetch_optional(c)
    .await?);
    tx.commit().await?;
    page.ok_or(StoreError::NotFound(
        "confirmation link (it may have expired: subscribe again)",
    ))
}

/// Ends a subscription by its own token (one-click unsubscribe); the page
/// it was of.
pub async fn unsubscribe(db: &Db, token: &str) -> StoreResult<Id> {
    let mut tx = db.bookkeeping().await?;
    let page: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM subscribers WHERE token = $1 RETURNING page_id"
    )
    .bind(token)
    .fetch_optional(c)
    .await?);
    tx.commit().await?;
    page.ok_or(StoreError::NotFound("subscription"))
}

/// Subscribers, newest first: of one page or all, whose address or URL
/// contains `q`.
pub async fn list(
    db: &Db,
    page: Option<Id>,
    q: Option<&str>,
    limit: i64,
) -> StoreResult<Vec<Subscriber>> {
    let pattern = q.map(|q| format!("%{}%", q.to_lowercase().replace(['%', '_'], "")));
    let rows: Vec<Row> = on_db!(db, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM subscribers WHERE ($1 IS NULL OR page_id = $1) AND ($2 IS NULL OR LOWER(target) LIKE $2) \
         ORDER BY id DESC LIMIT $3"
    ))
    .bind(page)
    .bind(&pattern)
    .bind(limit)
    .fetch_all(c)
    .await?
    });
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        out.push(r.into_subscriber(db).await?);
    }
    Ok(out)
}

/// How many subscribers a change of `page` about `components` (none: the
/// whole page), of incident `incident`, would tell: the fan-out's rule
/// (`deliveries::fan_out`), audience groups included, counted for the
/// form's preview.
pub async fn audience(
    db: &Db,
    page: Id,
    components: &[Id],
    incident: Option<Id>,
) -> StoreResult<i64> {
    let chosen: Vec<(i64, Option<i64>)> = on_db!(db, |c| sqlx::query_as(
        "SELECT s.id, sc.component_id FROM subscribers s \
         LEFT JOIN subscriber_components sc ON sc.subscriber_id = s.id \
         WHERE s.page_id = $1 AND s.verified_at IS NOT NULL AND s.scope = 'page'"
    )
    .bind(page)
    .fetch_all(c)
    .await?);
    let mut told: std::collections::BTreeSet<i64> = std::collections::BTreeSet::new();
    let mut picky: std::collections::BTreeMap<i64, bool> = std::collections::BTreeMap::new();
    for (id, component) in chosen {
        match component {
            None => {
                told.insert(id);
            }
            Some(c) => {
                let hit = components.is_empty() || components.contains(&c);
                *picky.entry(id).or_insert(false) |= hit;
            }
        }
    }
    told.extend(picky.into_iter().filter(|(_, hit)| *hit).map(|(id, _)| id));
    if let Some(incident) = incident {
        let following: Vec<i64> = on_db!(db, |c| {
            sqlx::query_scalar(
            "SELECT s.id FROM subscribers s JOIN subscriber_incidents si ON si.subscriber_id = s.id \
             WHERE si.incident_id = $1 AND s.page_id = $2 AND s.verified_at IS NOT NULL"
        )
        .bind(incident)
        .bind(page)
        .fetch_all(c)
        .await?
        });
        told.extend(following);
    }
    // Only those who may see one of the components (audience groups), as
    // the fan-out's SQL has it.
    if !components.is_empty() {
        let audiences = crate::audiences::of(db, page).await?;
        if !audiences.is_empty() {
            let readers: Vec<(i64, Option<String>)> = on_db!(db, |c| {
                sqlx::query_as(
                "SELECT s.id, v.email FROM subscribers s LEFT JOIN page_viewers v ON v.id = s.viewer_id \
                 WHERE s.page_id = $1"
            )
            .bind(page)
            .fetch_all(c)
            .await?
            });
            for (id, email) in readers {
                let groups = upstate_core::audience::groups_of(&audiences, email.as_deref());
                let hidden = upstate_core::audience::hidden_from(&audiences, &groups);
                if components.iter().all(|c| hidden.contains(c)) {
                    told.remove(&id);
                }
            }
        }
    }
    Ok(told.len() as i64)
}

/// The subscription a manage or unsubscribe link's token stands for.
pub async fn by_token(db: &Db, token: &str) -> StoreResult<Subscriber> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM subscribers WHERE token = $1 AND token <> ''"
    ))
    .bind(token)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("subscription"))?
        .into_subscriber(db)
        .await
}

/// How many confirmed visitors follow `incident` from its page (and hear
/// of nothing else), for the operator's incident screen.
pub async fn followers(db: &Db, incident: Id) -> StoreResult<i64> {
    Ok(on_db!(db, |c| {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM subscriber_incidents si JOIN subscribers s ON s.id = si.subscriber_id \
             WHERE si.incident_id = $1 AND s.scope = 'incidents' AND s.verified_at IS NOT NULL",
        )
        .bind(incident)
        .fetch_one(c)
        .await?
    }))
}

/// A subscriber's own choice of components (none: the whole page); an
/// incident follower who makes one becomes a page subscriber.
pub async fn choose(db: &Db, id: Id, components: &[Id]) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    set_components(&mut tx.within(), id, components).await?;
    tx.commit().await
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Subscriber> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM subscribers WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("subscriber"))?
        .into_subscriber(db)
        .await
}

/// What the sender needs of a subscriber.
#[derive(Debug, Clone)]
pub struct Reachable {
    pub kind: ChannelKind,
    pub target: String,
    pub token: String,
    pub confirm_token: Option<String>,
    pub page_id: Id,
    pub verified: bool,
    /// A push subscription's keys (p256dh, auth).
    pub push_keys: Option<(String, String)>,
    /// The titles of the incidents an incident follower follows (empty for
    /// a page subscriber), so its confirmation says what it is for.
    pub following: Vec<String>,
    /// A language code, or empty: the install's default.
    pub lang: String,
    /// The page's components this subscriber may not see (audience groups
    /// they are not in): their messages leave them out.
    pub hidden: std::collections::BTreeSet<Id>,
}

#[derive(sqlx::FromRow)]
struct ReachableRow {
    kind: String,
    target: String,
    token: String,
    confirm_token: Option<String>,
    page_id: i64,
    verified_at: Option<i64>,
    push_p256dh: Option<String>,
    push_auth: Option<String>,
    scope: String,
    lang: String,
}

pub async fn reachable(db: &Db, id: Id) -> StoreResult<Option<Reachable>> {
    let row: Option<ReachableRow> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT kind, target, token, confirm_token, page_id, verified_at, push_p256dh, push_auth, scope, lang FROM subscribers WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?
    });
    let following: Vec<String> = match &row {
        Some(r) if r.scope == SubscriberScope::Incidents.as_str() => on_db!(db, |c| {
            sqlx::query_scalar(
                "SELECT i.title FROM subscriber_incidents si JOIN incidents i ON i.id = si.incident_id \
                 WHERE si.subscriber_id = $1 ORDER BY i.id",
            )
            .bind(id)
            .fetch_all(c)
            .await?
        }),
        _ => Vec::new(),
    };
    let hidden = match &row {
        Some(r) => {
            let audiences = crate::audiences::of(db, r.page_id).await?;
            let email: Option<String> = if audiences.is_empty() {
                None
            } else {
                on_db!(db, |c| {
                    sqlx::query_scalar(
                    "SELECT v.email FROM subscribers s JOIN page_viewers v ON v.id = s.viewer_id WHERE s.id = $1"
                )
                .bind(id)
                .fetch_optional(c)
                .await?
                })
            };
            let groups = upstate_core::audience::groups_of(&audiences, email.as_deref());
            upstate_core::audience::hidden_from(&audiences, &groups)
        }
        None => Default::default(),
    };
    row.map(|r| {
        Ok(Reachable {
            hidden,
            following,
            kind: parse_enum("kind", &r.kind)?,
            target: r.target,
            token: r.token,
            confirm_token: r.confirm_token,
            page_id: r.page_id,
            lang: r.lang,
            verified: r.verified_at.is_some(),
            push_keys: r.push_p256dh.zip(r.push_auth),
        })
    })
    .transpose()
}

/// An operator removes a subscriber (audited, the address kept in the log).
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let row: Option<(i64, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "DELETE FROM subscribers WHERE id = $1 RETURNING page_id, target"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let (page, target) = row.ok_or(StoreError::NotFound("subscriber"))?;
    let audited = tx
        .audit(
            Action::SubscriberDelete,
            "subscriber",
            Some(id),
            json!({ "statusPageId": page, "target": target }),
        )
        .await?;
    tx.commit(audited).await
}
