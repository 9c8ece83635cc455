//! The team's notification channels. Every change is audited (the audit
//! summary never holds a secret); a webhook channel gets a signing secret
//! made here, returned once by `create` (and by a change that rotates it).

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::rows::parse_enum;
use crate::sealed::{Keyring, Purpose};
use base64::Engine;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::notify::{Channel, ChannelFields, ChannelKind};
use upstate_core::{Id, Timestamp};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    name: String,
    kind: String,
    target: String,
    secret: Option<String>,
    page_ids: String,
    component_ids: String,
    event_kinds: String,
    enabled: bool,
    created_at: i64,
    updated_at: i64,
    lang: String,
}

macro_rules! cols {
    () => {
        "id, name, kind, target, secret, page_ids, component_ids, event_kinds, enabled, created_at, updated_at, lang"
    };
}

/// A channel with what sending needs and the routes never show.
#[derive(Debug, Clone)]
pub struct Sendable {
    pub channel: Channel,
    /// The webhook signing secret (`whsec_…`) or Telegram bot token.
    pub secret: Option<String>,
}

fn list_of<T: serde::de::DeserializeOwned>(
    column: &'static str,
    text: &str,
) -> StoreResult<Vec<T>> {
    serde_json::from_str(text).map_err(|e| {
        StoreError::Database(sqlx::Error::Decode(
            format!("unexpected {column} value {text:?}: {e}").into(),
        ))
    })
}

impl Row {
    fn into_sendable(mut self, keys: &Keyring) -> StoreResult<Sendable> {
        self.secret = keys.open_opt(Purpose::Channel, self.secret)?;
        let hint = self.secret.as_deref().map(|s| {
            let tail: String = s
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        });
        Ok(Sendable {
            channel: Channel {
                id: self.id,
                name: self.name,
                kind: parse_enum("kind", &self.kind)?,
                target: self.target,
                secret_hint: hint,
                page_ids: list_of("page_ids", &self.page_ids)?,
                component_ids: list_of("component_ids", &self.component_ids)?,
                event_kinds: list_of("event_kinds", &self.event_kinds)?,
                enabled: self.enabled,
                lang: self.lang,
                created_at: Timestamp::from_millis(self.created_at),
                updated_at: Timestamp::from_millis(self.updated_at),
            },
            secret: self.secret,
        })
    }
}

/// A new Standard Webhooks signing secret: `whsec_` and 24 random bytes in
/// base64.
fn new_secret() -> String {
    let bytes: [u8; 24] = rand::random();
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

fn json_list<T: serde::Serialize>(v: &[T]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

/// Every channel with its secret, in the order made (for sending).
pub async fn sendable(db: &Db) -> StoreResult<Vec<Sendable>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM notification_channels ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter()
        .map(|r| r.into_sendable(&db.keys))
        .collect()
}

pub async fn list(db: &Db) -> StoreResult<Vec<Channel>> {
    Ok(sendable(db).await?.into_iter().map(|s| s.channel).collect())
}

/// One channel with its secret.
pub async fn get_sendable(db: &Db, id: Id) -> StoreResult<Sendable> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM notification_channels WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("notification channel"))?
        .into_sendable(&db.keys)
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Channel> {
    Ok(get_sendable(db, id).await?.channel)
}

/// Refuses filters that name pages or components that do not exist.
async fn require_filters(tx: &mut Tx, f: &ChannelFields) -> StoreResult<()> {
    for (field, sql, ids) in [
        (
            "pageIds",
            "SELECT id FROM status_pages WHERE id = $1",
            &f.page_ids,
        ),
        (
            "componentIds",
            "SELECT id FROM components WHERE id = $1",
            &f.component_ids,
        ),
    ] {
        let Some(ids) = ids else { continue };
        for id in ids {
            let found: Option<i64> = on_tx!(tx, |c| sqlx::query_scalar(sql)
                .bind(id)
                .fetch_optional(c)
                .await?);
            if found.is_none() {
                return Err(StoreError::invalid_ref(
                    field,
                    format!("{id} does not exist"),
                ));
            }
        }
    }
    Ok(())
}

/// What the audit log keeps of a channel: never its secret or token.
fn summary(c: &Channel) -> serde_json::Value {
    json!({ "name": c.name, "kind": c.kind, "target": c.target, "pageIds": c.page_ids,
            "componentIds": c.component_ids, "eventKinds": c.event_kinds, "enabled": c.enabled })
}

/// `new` comes from `ChannelInput::validate_new`. Returns the channel and,
/// for a webhook, its signing secret (shown once).
pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    new: ChannelFields,
) -> StoreResult<(Channel, Option<String>)> {
    let (Some(name), Some(kind), Some(target)) = (&new.name, new.kind, &new.target) else {
        return Err(StoreError::invalid_ref(
            "body",
            "name, kind and target are required",
        ));
    };
    let mut tx = db.begin_as(ctx).await?;
    require_filters(&mut tx, &new).await?;
    let made = (kind == ChannelKind::Webhook).then(new_secret);
    let secret = db
        .keys
        .seal_opt(Purpose::Channel, made.as_deref().or(new.token.as_deref()))?;
    let now = db.clock.now().millis();
    let row: Row = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO notification_channels (name, kind, target, secret, page_ids, component_ids, \
         event_kinds, enabled, created_at, updated_at, lang) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10) RETURNING ",
        cols!()
    ))
    .bind(name)
    .bind(kind.as_str())
    .bind(target)
    .bind(&secret)
    .bind(json_list(new.page_ids.as_deref().unwrap_or_default()))
    .bind(json_list(new.component_ids.as_deref().unwrap_or_default()))
    .bind(json_list(new.event_kinds.as_deref().unwrap_or_default()))
    .bind(new.enabled.unwrap_or(true))
    .bind(now)
    .bind(new.lang.as_deref().unwrap_or(""))
    .fetch_one(c)
    .await?
    });
    let channel = row.into_sendable(&db.keys)?.channel;
    let audited = tx
        .audit(
            Action::NotificationCreate,
            "notification",
            Some(channel.id),
            summary(&channel),
        )
        .await?;
    tx.commit(audited).await?;
    Ok((channel, made))
}

/// `patch` comes from `ChannelInput::validate_change`. Returns the channel
/// and the new secret when the change rotated it.
pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: ChannelFields,
) -> StoreResult<(Channel, Option<String>)> {
    let mut tx = db.begin_as(ctx).await?;
    let row: Option<Row> = locked!(
        &mut tx,
        concat!(
            "SELECT ",
            cols!(),
            " FROM notification_channels WHERE id = $1"
        ),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    let current = row
        .ok_or(StoreError::NotFound("notification channel"))?
        .into_sendable(&db.keys)?;
    require_filters(&mut tx, &patch).await?;
    let made = patch.rotate_secret.then(new_secret);
    let secret = db.keys.seal_opt(
        Purpose::Channel,
        made.as_deref()
            .or(patch.token.as_deref())
            .or(current.secret.as_deref()),
    )?;
    let c0 = &current.channel;
    let row: Row = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "UPDATE notification_channels SET name = $1, target = $2, secret = $3, page_ids = $4, \
         component_ids = $5, event_kinds = $6, enabled = $7, updated_at = $8, lang = $10 WHERE id = $9 RETURNING ",
        cols!()
    ))
    .bind(patch.name.as_ref().unwrap_or(&c0.name))
    .bind(patch.target.as_ref().unwrap_or(&c0.target))
    .bind(&secret)
    .bind(json_list(patch.page_ids.as_ref().unwrap_or(&c0.page_ids)))
    .bind(json_list(patch.component_ids.as_ref().unwrap_or(&c0.component_ids)))
    .bind(json_list(patch.event_kinds.as_ref().unwrap_or(&c0.event_kinds)))
    .bind(patch.enabled.unwrap_or(c0.enabled))
    .bind(db.clock.now().millis())
    .bind(id)
    .bind(patch.lang.as_ref().unwrap_or(&c0.lang))
    .fetch_one(c)
    .await?
    });
    let channel = row.into_sendable(&db.keys)?.channel;
    let mut after = summary(&channel);
    after["secretRotated"] = json!(made.is_some());
    after["tokenChanged"] = json!(patch.token.is_some());
    let audited = tx
        .audit(
            Action::NotificationUpdate,
            "notification",
            Some(id),
            json!({ "before": summary(c0), "after": after }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok((channel, made))
}

/// Deletes a channel and its delivery log.
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let name: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM notification_channels WHERE id = $1 RETURNING name"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let name = name.ok_or(StoreError::NotFound("notification channel"))?;
    let audited = tx
        .audit(
            Action::NotificationDelete,
            "notification",
            Some(id),
            json!({ "name": name }),
        )
        .await?;
    tx.commit(audited).await
}
