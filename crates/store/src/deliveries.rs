//! Deliveries: one row per (change, recipient), and the log they leave.
//!
//! A write transaction whose events people are told of schedules a fan-out
//! job (`FAN_OUT_KIND`) in the same transaction (`Tx::commit`), so the job
//! exists exactly when the change does. The job renders the change's
//! notices once, stores each on its outbox row, and inserts a delivery per
//! recipient; the unique (event, recipient) pair makes running it twice
//! change nothing. Senders lease due deliveries (PostgreSQL: `FOR UPDATE
//! SKIP LOCKED`; SQLite: the one writer of `BEGIN IMMEDIATE`), so each is
//! made by one instance at a time; a lease that runs out (a killed
//! instance) lets another sender take it, with the same id, which receivers
//! dedupe on. Failures come back later with backoff until `give_up_at`;
//! then the row stays, given up, with its reason.

use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::rows::parse_enum;
use serde::{Deserialize, Serialize};
use upstate_core::events::Event;
use upstate_core::notify::{Delivery, DeliveryStatus, Notice};
use upstate_core::{Id, Timestamp};

macro_rules! delivery_cols {
    () => {
        "id, channel_id, event_id, kind, status, attempts, response_status, response_body, \
         last_error, created_at, run_at, finished_at"
    };
}

/// How much of a receiver's answer the log keeps.
pub const BODY_KEPT: usize = 1024;

/// An outbox row the fan-out reads.
#[derive(Debug, Clone)]
pub struct OutboxEvent {
    pub id: Id,
    pub at: Timestamp,
    pub event: Event,
    /// Written by a change that tells no subscriber (`AuditCtx::quiet`).
    pub quiet: bool,
}

/// An event as the outbox stores it: the event's JSON, with `"quiet": true`
/// when its change tells no subscriber.
pub(crate) fn payload(event: &Event, quiet: bool) -> StoreResult<String> {
    let mut value = serde_json::to_value(event)
        .map_err(|e| StoreError::Config(format!("unserializable event: {e}")))?;
    if quiet && let serde_json::Value::Object(fields) = &mut value {
        fields.insert("quiet".into(), serde_json::Value::Bool(true));
    }
    Ok(value.to_string())
}

/// The outbox's own mark on a stored event.
#[derive(serde::Deserialize)]
struct Marks {
    #[serde(default)]
    quiet: bool,
}

/// The outbox rows `ids`, in order; rows that no longer parse are skipped.
pub async fn outbox_events(db: &Db, ids: &[Id]) -> StoreResult<Vec<OutboxEvent>> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        let row: Option<(i64, String)> = on_db!(db, |c| sqlx::query_as(
            "SELECT at, payload FROM outbox WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(c)
        .await?);
        if let Some((at, payload)) = row {
            match serde_json::from_str(&payload) {
                Ok(event) => out.push(OutboxEvent {
                    id,
                    at: Timestamp::from_millis(at),
                    event,
                    quiet: serde_json::from_str::<Marks>(&payload).is_ok_and(|m| m.quiet),
                }),
                Err(e) => tracing::warn!(outbox = id, error = %e, "unreadable outbox event"),
            }
        }
    }
    Ok(out)
}

/// One notice and who gets it.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The outbox row the notice is stored on.
    pub event_id: Id,
    /// In the install's language (the one the fan-out's rules read).
    pub notice: Notice,
    /// The same notice in the other languages recipients read.
    pub translations: Vec<Notice>,
    pub channels: Vec<Id>,
    /// Whether the page's subscribers are told (not when the change was
    /// made quiet).
    pub subscribers: bool,
}

/// Stores each notice on its outbox row (the first rendering wins, so a
/// second run sends what the first rendered) and inserts its deliveries,
/// due now; returns how many deliveries are new. The fan-out `job` is done
/// in the same transaction: fanned out and finished commit together, and a
/// write costs one turn fewer (see `WriterTurn`).
pub async fn fan_out(
    db: &Db,
    job: &crate::jobs::Job,
    planned: &[Planned],
    now: Timestamp,
    give_up_after_ms: i64,
) -> StoreResult<u64> {
    let mut tx = db.bookkeeping_beside_turn().await?;
    let mut made = 0;
    for p in planned {
        let stored = StoredNotices::Many {
            notice: p.notice.clone(),
            translations: p.translations.clone(),
        };
        let text = serde_json::to_string(&stored)
            .map_err(|e| StoreError::Config(format!("unserializable notice: {e}")))?;
        on_tx!(&mut tx, |c| sqlx::query(
            "UPDATE outbox SET notice = $1 WHERE id = $2 AND notice IS NULL"
        )
        .bind(&text)
        .bind(p.event_id)
        .execute(c)
        .await?
        .rows_affected());
        // Verified subscribers of the page: those who chose none of its
        // components, and those who chose one this notice is about (a
        // notice about no component reaches them all); and whoever follows
        // the incident it is about from that incident's page. Only those
        // subscribed when the change committed (`joined_after`, migration
        // 0027): an address confirmed a moment after is not told of it.
        // And only of a component they may see: one in no audience group,
        // or in a group that names their viewer's address or its domain
        // (`upstate_core::audience`, the same rule in SQL).
        let subscriber_sql = "INSERT INTO deliveries (event_id, subscriber_id, recipient, kind, status, run_at, give_up_at, created_at) \
             SELECT $1, s.id, 'subscriber:' || s.id, $2, 'pending', $3, $4, $3 FROM subscribers s \
             WHERE s.page_id = $5 AND s.verified_at IS NOT NULL AND (s.joined_after IS NULL OR s.joined_after < $1) AND ((s.scope = 'page' AND ($6 OR NOT EXISTS \
               (SELECT 1 FROM subscriber_components sc WHERE sc.subscriber_id = s.id) OR EXISTS \
               (SELECT 1 FROM subscriber_components sc WHERE sc.subscriber_id = s.id AND sc.component_id = $7))) \
               OR EXISTS (SELECT 1 FROM subscriber_incidents si WHERE si.subscriber_id = s.id AND si.incident_id = $8)) \
             AND ($6 OR NOT EXISTS (SELECT 1 FROM audience_components ac WHERE ac.component_id = $7) OR EXISTS \
               (SELECT 1 FROM audience_components ac JOIN audience_members am ON am.audience_id = ac.audience_id \
                JOIN page_viewers v ON v.id = s.viewer_id WHERE ac.component_id = $7 AND (am.member = v.email \
                OR (substr(am.member, 1, 1) = '@' AND substr(v.email, length(v.email) - length(am.member) + 1) = am.member)))) \
             ON CONFLICT (event_id, recipient) DO NOTHING";
        let incident = if p.notice.subject == "incident" {
            p.notice.subject_id
        } else {
            0
        };
        let mut components: Vec<Option<Id>> =
            p.notice.components.iter().map(|c| Some(c.id)).collect();
        if components.is_empty() {
            components.push(None);
        }
        if !p.subscribers {
            components.clear();
        }
        for component in components {
            made += on_tx!(&mut tx, |c| sqlx::query(subscriber_sql)
                .bind(p.event_id)
                .bind(&p.notice.kind)
                .bind(now.millis())
                .bind(now.millis() + give_up_after_ms)
                .bind(p.notice.page_id)
                .bind(component.is_none())
                .bind(component.unwrap_or(0))
                .bind(incident)
                .execute(c)
                .await?
                .rows_affected());
        }
        for channel in &p.channels {
            made += on_tx!(&mut tx, |c| {
                sqlx::query(
                "INSERT INTO deliveries (event_id, channel_id, recipient, kind, status, run_at, give_up_at, created_at) \
                 VALUES ($1, $2, $3, $4, 'pending', $5, $6, $5) ON CONFLICT (event_id, recipient) DO NOTHING"
            )
            .bind(p.event_id)
            .bind(channel)
            .bind(format!("channel:{channel}"))
            .bind(&p.notice.kind)
            .bind(now.millis())
            .bind(now.millis() + give_up_after_ms)
            .execute(c)
            .await?
            .rows_affected()
            });
        }
    }
    crate::jobs::finish_in(&mut tx, job).await?;
    tx.commit().await?;
    if made > 0 {
        db.changes.deliveries.notify_one();
    }
    Ok(made)
}

/// A leased delivery. `lease` is the lease's token: only its holder may
/// settle it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Leased {
    pub id: Id,
    pub event_id: Option<Id>,
    pub channel_id: Option<Id>,
    pub subscriber_id: Option<Id>,
    pub recipient: String,
    pub kind: String,
    pub attempts: i64,
    #[sqlx(rename = "locked_until")]
    pub lease: i64,
    pub give_up_at: i64,
}

/// Leases up to `limit` due deliveries for `lease_ms`.
pub async fn lease(db: &Db, now: Timestamp, lease_ms: i64, limit: i64) -> StoreResult<Vec<Leased>> {
    let sql = (
        crate::postgres::LEASE_DELIVERIES,
        crate::sqlite::LEASE_DELIVERIES,
    );
    crate::jobs::lease_rows(db, sql, now, lease_ms, limit).await
}

/// The notice stored on an outbox row by its fan-out.
/// A change's notice as stored on its outbox row: in the install's
/// language with its translations (rows stored before recipients had
/// languages hold the one notice).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StoredNotices {
    Many {
        notice: Notice,
        #[serde(default)]
        translations: Vec<Notice>,
    },
    One(Notice),
}

impl StoredNotices {
    /// The notice in language `code` (a recipient's), else the install's.
    pub fn pick(&self, code: &str) -> Notice {
        match self {
            StoredNotices::One(n) => n.clone(),
            StoredNotices::Many {
                notice,
                translations,
            } => translations
                .iter()
                .find(|t| !code.is_empty() && t.lang == code)
                .unwrap_or(notice)
                .clone(),
        }
    }
}

/// The languages recipients read other than the install's default (the
/// codes channels and subscribers were given).
pub async fn recipient_langs(db: &Db) -> StoreResult<Vec<String>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT lang FROM notification_channels WHERE lang <> '' \
         UNION SELECT lang FROM subscribers WHERE lang <> ''"
    )
    .fetch_all(c)
    .await?))
}

pub async fn notice(db: &Db, event_id: Id) -> StoreResult<Option<StoredNotices>> {
    let text: Option<Option<String>> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT notice FROM outbox WHERE id = $1"
    )
    .bind(event_id)
    .fetch_optional(c)
    .await?);
    Ok(text.flatten().and_then(|t| serde_json::from_str(&t).ok()))
}

/// What one attempt came to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attempt {
    pub delivered: bool,
    pub response_status: Option<u16>,
    pub response_body: Option<String>,
    pub error: Option<String>,
    /// Trying again cannot help (our own rule refused the target, the
    /// channel is gone): give it up now.
    pub permanent: bool,
}

/// The first `BODY_KEPT` bytes of `s`, cut at a character boundary.
pub fn kept(s: &str) -> String {
    let mut end = s.len().min(BODY_KEPT);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Settles a leased delivery: delivered, tried again at `retry_at`, or
/// (without one) given up. Does nothing when the lease is no longer ours.
pub async fn settle(
    db: &Db,
    d: &Leased,
    attempt: &Attempt,
    now: Timestamp,
    retry_at: Option<Timestamp>,
) -> StoreResult<()> {
    settle_many(db, &[(d, attempt, retry_at)], now).await
}

/// Settles a batch of attempts in one transaction: on SQLite every write
/// waits for the one writer, so a round of sends is settled in one turn
/// of it rather than one each (bench/notify.sh). Each row is settled only
/// while the lease is still ours.
pub async fn settle_many(
    db: &Db,
    batch: &[(&Leased, &Attempt, Option<Timestamp>)],
    now: Timestamp,
) -> StoreResult<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut tx = db.bookkeeping().await?;
    for (d, attempt, retry_at) in batch {
        let status = match (attempt.delivered, retry_at) {
            (true, _) => DeliveryStatus::Delivered,
            (false, Some(_)) => DeliveryStatus::Pending,
            (false, None) => DeliveryStatus::GivenUp,
        };
        let finished = (status != DeliveryStatus::Pending).then_some(now.millis());
        on_tx!(&mut tx, |c| {
            sqlx::query(
            "UPDATE deliveries SET status = $1, run_at = COALESCE($2, run_at), locked_until = NULL, \
             response_status = $3, response_body = $4, last_error = $5, finished_at = $6 \
             WHERE id = $7 AND locked_until = $8"
        )
        .bind(status.as_str())
        .bind(retry_at.map(Timestamp::millis))
        .bind(attempt.response_status.map(i64::from))
        .bind(attempt.response_body.as_deref().map(kept))
        .bind(&attempt.error)
        .bind(finished)
        .bind(d.id)
        .bind(d.lease)
        .execute(c)
        .await?
        .rows_affected()
        });
    }
    tx.commit().await
}

/// Starts the log row of a test message (`/test`) before it is sent, so
/// the receiver sees its id. It is never leased: it begins given up ("not
/// answered yet") and `finish_test` settles it.
pub async fn begin_test(db: &Db, channel: Id, now: Timestamp) -> StoreResult<Id> {
    let mut tx = db.bookkeeping().await?;
    let id: i64 = on_tx!(&mut tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO deliveries (event_id, channel_id, recipient, kind, status, attempts, run_at, give_up_at, \
         last_error, created_at, finished_at) \
         VALUES (NULL, $1, $2, 'test', 'given_up', 1, $3, $3, 'no answer yet', $3, $3) RETURNING id"
    )
    .bind(channel)
    .bind(format!("channel:{channel}"))
    .bind(now.millis())
    .fetch_one(c)
    .await?
    });
    tx.commit().await?;
    Ok(id)
}

/// Settles a test message with what its one attempt came to.
pub async fn finish_test(
    db: &Db,
    id: Id,
    attempt: &Attempt,
    now: Timestamp,
) -> StoreResult<Delivery> {
    let status = if attempt.delivered {
        DeliveryStatus::Delivered
    } else {
        DeliveryStatus::GivenUp
    };
    let mut tx = db.bookkeeping().await?;
    let row: Row = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "UPDATE deliveries SET status = $1, response_status = $2, response_body = $3, last_error = $4, \
         finished_at = $5 WHERE id = $6 RETURNING ",
        delivery_cols!()
    ))
    .bind(status.as_str())
    .bind(attempt.response_status.map(i64::from))
    .bind(attempt.response_body.as_deref().map(kept))
    .bind(&attempt.error)
    .bind(now.millis())
    .bind(id)
    .fetch_one(c)
    .await?
    });
    tx.commit().await?;
    row.into_delivery()
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    channel_id: Option<i64>,
    event_id: Option<i64>,
    kind: String,
    status: String,
    attempts: i64,
    response_status: Option<i64>,
    response_body: Option<String>,
    last_error: Option<String>,
    created_at: i64,
    run_at: i64,
    finished_at: Option<i64>,
    #[sqlx(default)]
    notice: Option<String>,
    /// The recipient's language: the log shows the words it was sent.
    #[sqlx(default)]
    lang: String,
}

impl Row {
    fn into_delivery(self) -> StoreResult<Delivery> {
        let status: DeliveryStatus = parse_enum("status", &self.status)?;
        let title = self
            .notice
            .and_then(|n| serde_json::from_str::<StoredNotices>(&n).ok())
            .map(|n| n.pick(&self.lang).title);
        Ok(Delivery {
            id: self.id,
            channel_id: self.channel_id,
            event_id: self.event_id,
            kind: self.kind,
            title,
            status,
            attempts: self.attempts,
            response_status: self.response_status,
            response_body: self.response_body,
            last_error: self.last_error,
            created_at: Timestamp::from_millis(self.created_at),
            next_attempt_at: (status == DeliveryStatus::Pending)
                .then(|| Timestamp::from_millis(self.run_at)),
            finished_at: self.finished_at.map(Timestamp::from_millis),
        })
    }
}

/// The log of one channel (or all), newest first: `limit` rows with ids
/// below `before`.
pub async fn log(
    db: &Db,
    channel: Option<Id>,
    status: Option<DeliveryStatus>,
    before: Option<Id>,
    limit: i64,
) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<Row> = on_db!(db, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        delivery_cols!(),
        ", (SELECT notice FROM outbox o WHERE o.id = deliveries.event_id) AS notice, \
         COALESCE((SELECT lang FROM notification_channels nc WHERE nc.id = deliveries.channel_id), '') AS lang FROM deliveries \
         WHERE ($1 IS NULL OR channel_id = $1) AND ($2 IS NULL OR status = $2) \
         AND ($3 IS NULL OR id < $3) ORDER BY id DESC LIMIT $4"
    ))
    .bind(channel)
    .bind(status.map(DeliveryStatus::as_str))
    .bind(before)
    .bind(limit)
    .fetch_all(c)
    .await?
    });
    rows.into_iter().map(Row::into_delivery).collect()
}

/// Each channel's latest delivery: (channel, (state, when it was made)).
pub async fn last_of_channels(db: &Db) -> StoreResult<Vec<(Id, (DeliveryStatus, Timestamp))>> {
    let rows: Vec<(i64, String, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT channel_id, status, created_at FROM deliveries WHERE id IN \
         (SELECT MAX(id) FROM deliveries WHERE channel_id IS NOT NULL GROUP BY channel_id)"
    )
    .fetch_all(c)
    .await?);
    rows.into_iter()
        .map(|(id, status, at)| {
            Ok((
                id,
                (parse_enum("status", &status)?, Timestamp::from_millis(at)),
            ))
        })
        .collect()
}

/// What was sent to one subscriber, newest first.
pub async fn of_subscriber(db: &Db, subscriber: Id, limit: i64) -> StoreResult<Vec<Delivery>> {
    let rows: Vec<Row> = on_db!(db, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        delivery_cols!(),
        ", (SELECT notice FROM outbox o WHERE o.id = deliveries.event_id) AS notice, \
         COALESCE((SELECT lang FROM subscribers s WHERE s.id = deliveries.subscriber_id), '') AS lang FROM deliveries \
         WHERE subscriber_id = $1 ORDER BY id DESC LIMIT $2"
    ))
    .bind(subscriber)
    .bind(limit)
    .fetch_all(c)
    .await?
    });
    rows.into_iter().map(Row::into_delivery).collect()
}

/// When the next pending delivery is due, if any is waiting.
pub async fn next_due(db: &Db) -> StoreResult<Option<Timestamp>> {
    let at: Option<i64> = on_db!(db, |c| {
        sqlx::query_scalar(
        "SELECT MIN(CASE WHEN locked_until IS NULL OR locked_until < run_at THEN run_at ELSE locked_until END) \
         FROM deliveries WHERE status = 'pending'"
    )
    .fetch_one(c)
    .await?
    });
    Ok(at.map(Timestamp::from_millis))
}

/// How many deliveries are in each state (the metrics' queue depth and
/// failures).
pub async fn counts(db: &Db) -> StoreResult<Vec<(String, i64)>> {
    Ok(on_db!(db, |c| sqlx::query_as(
        "SELECT status, COUNT(*) FROM deliveries GROUP BY status ORDER BY status"
    )
    .fetch_all(c)
    .await?))
}
