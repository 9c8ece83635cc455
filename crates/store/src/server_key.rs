//! Which server key seals this database's secrets, and bringing every
//! sealed secret to the current key (`sealed` has the format).
//!
//! The database keeps one sealed check value: an instance whose keys do not
//! open it refuses to start instead of sealing new secrets with a key its
//! peers lack. `settle` runs at every start and in `upstate rotate-key`: it
//! re-seals each secret not sealed with the current key (an earlier key's,
//! or one stored before sealing existed), in one transaction.

use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::sealed::{Keyring, Purpose};
use serde_json::Value;

/// The `settings` row holding the check value.
const CHECK: &str = "server_key_check";
const CHECK_TEXT: &str = "upstate server key";

/// What `settle` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The key every secret is sealed with now.
    pub key_id: String,
    /// How many secrets it sealed again.
    pub resealed: usize,
}

/// The id of the key this database's secrets were sealed with, if any
/// were (read without a key: a fresh instance asks before making one).
pub async fn sealed_with(db: &Db) -> StoreResult<Option<String>> {
    let raw: Option<String> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT value FROM settings WHERE name = $1"
    )
    .bind(CHECK)
    .fetch_optional(c)
    .await?);
    Ok(raw
        .and_then(|r| serde_json::from_str::<String>(&r).ok())
        .and_then(|s| crate::sealed::key_id(&s).map(String::from)))
}

/// One sealed value: re-sealed with the current key unless it is already.
fn reseal(keys: &Keyring, purpose: Purpose, stored: &str) -> StoreResult<Option<String>> {
    if keys.is_current(stored) {
        return Ok(None);
    }
    let plain = keys.open(purpose, stored)?;
    Ok(Some(keys.seal(purpose, &plain)?))
}

/// `reseal`, for a column that may be empty.
fn reseal_opt(
    keys: &Keyring,
    purpose: Purpose,
    stored: Option<&str>,
) -> StoreResult<Option<String>> {
    Ok(stored
        .map(|s| reseal(keys, purpose, s))
        .transpose()?
        .flatten())
}

/// Checks that the ring opens this database's secrets (recording the check
/// value on first use) and re-seals every secret the current key did not.
pub async fn settle(db: &Db) -> StoreResult<Settled> {
    let keys = &*db.keys;
    let key_id = keys
        .current_id()
        .ok_or_else(|| StoreError::Config("no server key".into()))?;
    let now = db.clock.now().millis();
    let mut tx = db.bookkeeping().await?;
    let mut resealed = 0;

    let first = serde_json::to_string(&keys.seal(Purpose::Check, CHECK_TEXT)?)
        .map_err(|e| StoreError::Config(e.to_string()))?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING"
    )
    .bind(CHECK)
    .bind(&first)
    .bind(now)
    .execute(c)
    .await?
    .rows_affected()
    });
    let raw: String = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT value FROM settings WHERE name = $1"
    )
    .bind(CHECK)
    .fetch_one(c)
    .await?);
    let check: String = serde_json::from_str(&raw)
        .map_err(|e| StoreError::Config(format!("the server key check does not read: {e}")))?;
    if keys.open(Purpose::Check, &check)? != CHECK_TEXT {
        return Err(StoreError::Config("the server key check is damaged".into()));
    }
    if let Some(again) = reseal(keys, Purpose::Check, &check)? {
        let text = serde_json::to_string(&again).map_err(|e| StoreError::Config(e.to_string()))?;
        on_tx!(&mut tx, |c| sqlx::query(
            "UPDATE settings SET value = $2, updated_at = $3 WHERE name = $1"
        )
        .bind(CHECK)
        .bind(&text)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    }

    // Second factors: the seed in use and the one being set up.
    let users: Vec<(i64, Option<String>, Option<String>)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT id, totp_secret, totp_pending FROM users \
         WHERE totp_secret IS NOT NULL OR totp_pending IS NOT NULL ORDER BY id"
    )
    .fetch_all(c)
    .await?);
    for (id, secret, pending) in users {
        let secret_again = reseal_opt(keys, Purpose::Totp, secret.as_deref())?;
        let pending_again = reseal_opt(keys, Purpose::Totp, pending.as_deref())?;
        if secret_again.is_none() && pending_again.is_none() {
            continue;
        }
        resealed += usize::from(secret_again.is_some()) + usize::from(pending_again.is_some());
        on_tx!(&mut tx, |c| sqlx::query(
            "UPDATE users SET totp_secret = $1, totp_pending = $2 WHERE id = $3"
        )
        .bind(secret_again.or(secret))
        .bind(pending_again.or(pending))
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    }

    // Channels' signing secrets and bot tokens, integrations' signing
    // secrets and drafts' approve links (all sealed as channels' are).
    // Pages' own identity providers' client secrets (as the team's).
    for (table, key, column, purpose) in [
        ("notification_channels", "id", "secret", Purpose::Channel),
        ("integrations", "id", "secret", Purpose::Channel),
        ("alert_groups", "id", "approve_token", Purpose::Channel),
        ("viewer_providers", "page_id", "client_secret", Purpose::Sso),
    ] {
        resealed += reseal_column(&mut tx, keys, (table, key, column), purpose).await?;
    }

    // The web push key pair's private half.
    let vapid: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT private_key FROM vapid_keys WHERE id = 1"
    )
    .fetch_optional(c)
    .await?);
    if let Some(again) = reseal_opt(keys, Purpose::Vapid, vapid.as_deref())? {
        resealed += 1;
        on_tx!(&mut tx, |c| sqlx::query(
            "UPDATE vapid_keys SET private_key = $1 WHERE id = 1"
        )
        .bind(&again)
        .execute(c)
        .await?
        .rows_affected());
    }

    // Monitors' request header values, inside their configuration.
    let monitors: Vec<(i64, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT id, config FROM monitors ORDER BY id"
    )
    .fetch_all(c)
    .await?);
    for (id, config) in monitors {
        let mut doc: Value = serde_json::from_str(&config)
            .map_err(|e| StoreError::Config(format!("monitor {id}: bad config: {e}")))?;
        let mut changed = 0;
        if let Some(headers) = doc.get_mut("headers").and_then(Value::as_array_mut) {
            for h in headers {
                let Some(value) = h.get_mut("value") else {
                    continue;
                };
                if let Some(again) = reseal_opt(keys, Purpose::MonitorHeader, value.as_str())? {
                    *value = Value::String(again);
                    changed += 1;
                }
            }
        }
        if changed > 0 {
            resealed += changed;
            on_tx!(&mut tx, |c| sqlx::query(
                "UPDATE monitors SET config = $1 WHERE id = $2"
            )
            .bind(doc.to_string())
            .bind(id)
            .execute(c)
            .await?
            .rows_affected());
        }
    }

    // Secrets inside settings documents: the static copy's bucket and the
    // identity provider's client secret.
    for (name, pointer, purpose) in [
        ("export", "/s3/secretAccessKey", Purpose::Bucket),
        ("sso", "/clientSecret", Purpose::Sso),
    ] {
        let stored: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
            "SELECT value FROM settings WHERE name = $1"
        )
        .bind(name)
        .fetch_optional(c)
        .await?);
        let Some(stored) = stored else { continue };
        let mut doc: Value = serde_json::from_str(&stored)
            .map_err(|e| StoreError::Config(format!("stored {name} do not read: {e}")))?;
        if let Some(value) = doc.pointer_mut(pointer)
            && let Some(again) =
                reseal_opt(keys, purpose, value.as_str().filter(|v| !v.is_empty()))?
        {
            *value = Value::String(again);
            resealed += 1;
            on_tx!(&mut tx, |c| sqlx::query(
                "UPDATE settings SET value = $1 WHERE name = $2"
            )
            .bind(doc.to_string())
            .bind(name)
            .execute(c)
            .await?
            .rows_affected());
        }
    }

    tx.commit().await?;
    if resealed > 0 {
        scrub(db).await;
    }
    Ok(Settled { key_id, resealed })
}

/// Leaves no copy of what was just re-sealed in the SQLite file: the old
/// values stay in free pages and in the write-ahead log until they are
/// overwritten, so the file is rebuilt and the log emptied. Best effort: a
/// reader in the way only postpones it to the next start. (PostgreSQL's old
/// row versions go at its next vacuum; docs/operations.md.)
async fn scrub(db: &Db) {
    let crate::db::Pools::Sqlite { write, .. } = &db.pools else {
        return;
    };
    for sql in ["VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"] {
        if let Err(e) = sqlx::query(sql).execute(write).await {
            tracing::warn!("{sql} after re-sealing secrets: {e}");
        }
    }
}

/// Records that `upstate rotate-key` moved every secret from key `from` to
/// the current one.
pub async fn record_rotation(
    db: &Db,
    ctx: &crate::audit::AuditCtx,
    from: &str,
    settled: &Settled,
) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let audited = tx
        .audit(
            upstate_core::audit::Action::ServerKeyRotate,
            "server_key",
            None,
            serde_json::json!({ "from": from, "to": settled.key_id, "resealed": settled.resealed }),
        )
        .await?;
    tx.commit(audited).await
}

/// Re-seals one column's sealed values under the current key; returns how
/// many it changed. The table, its key column and the sealed column are
/// this module's own names.
async fn reseal_column(
    tx: &mut crate::db::Bookkeeping,
    keys: &Keyring,
    (table, key, column): (&str, &str, &str),
    purpose: Purpose,
) -> StoreResult<usize> {
    let read =
        format!("SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL ORDER BY {key}");
    let rows: Vec<(i64, String)> = on_tx!(&mut *tx, |c| sqlx::query_as(sqlx::AssertSqlSafe(
        read.as_str()
    ))
    .fetch_all(c)
    .await?);
    let write = format!("UPDATE {table} SET {column} = $1 WHERE {key} = $2");
    let mut n = 0;
    for (id, sealed) in rows {
        if let Some(again) = reseal(keys, purpose, &sealed)? {
            n += 1;
            on_tx!(&mut *tx, |c| sqlx::query(sqlx::AssertSqlSafe(
                write.as_str()
            ))
            .bind(&again)
            .bind(id)
            .execute(c)
            .await?
            .rows_affected());
        }
    }
    Ok(n)
}
