//! API keys. The secret (`upk_` + 64 hex digits, 256 random bits) is shown
//! once; only its SHA-256 is stored. A plain hash suffices for secrets of that
//! entropy (no dictionary to guess from) and lets a lookup be one indexed read.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use rand::RngCore;
use sha2::{Digest, Sha256};
use upstate_core::audit::Action;
use upstate_core::scope::{Scope, parse_scopes};
use upstate_core::{Id, Timestamp};

pub const SECRET_PREFIX: &str = "upk_";

#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: Id,
    pub name: String,
    /// The first characters of the secret, to tell keys apart in listings.
    pub prefix: String,
    pub scopes: Vec<Scope>,
    pub created_at: Timestamp,
    pub expires_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
    pub last_used_at: Option<Timestamp>,
    /// The user who created it in the admin interface (None: the command line).
    pub user_id: Option<Id>,
}

impl ApiKey {
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    id: i64,
    name: String,
    prefix: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
    last_used_at: Option<i64>,
    user_id: Option<i64>,
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;
    fn try_from(r: KeyRow) -> StoreResult<Self> {
        Ok(ApiKey {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            scopes: parse_scopes(&r.scopes)
                .map_err(|e| StoreError::Database(sqlx::Error::Decode(e.to_string().into())))?,
            created_at: Timestamp::from_millis(r.created_at),
            expires_at: r.expires_at.map(Timestamp::from_millis),
            revoked_at: r.revoked_at.map(Timestamp::from_millis),
            last_used_at: r.last_used_at.map(Timestamp::from_millis),
            user_id: r.user_id,
        })
    }
}

macro_rules! key_cols {
    () => {
        "id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at, user_id"
    };
}

fn hash(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Creates a key and returns it with its secret, which is not stored.
pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    name: &str,
    scopes: &[Scope],
    expires_at: Option<Timestamp>,
) -> StoreResult<(ApiKey, String)> {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let secret = format!("{SECRET_PREFIX}{}", hex::encode(bytes));
    let prefix = secret[..SECRET_PREFIX.len() + 8].to_string();
    let scope_list = scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let mut tx = db.begin_as(ctx).await?;
    let row: KeyRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO api_keys (name, prefix, secret_hash, scopes, created_at, expires_at, user_id) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ",
        key_cols!()
    ))
    .bind(name)
    .bind(&prefix)
    .bind(hash(&secret))
    .bind(&scope_list)
    .bind(db.clock.now().millis())
    .bind(expires_at.map(Timestamp::millis))
    .bind(ctx.actor.id.filter(|_| ctx.actor.kind == "user"))
    .fetch_one(c)
    .await?
    });
    let key = ApiKey::try_from(row)?;
    let summary = serde_json::json!({ "name": &key.name, "prefix": &key.prefix, "scopes": scope_list, "expiresAt": key.expires_at });
    let audited = tx
        .audit(Action::ApiKeyCreate, "api_key", Some(key.id), summary)
        .await?;
    tx.commit(audited).await?;
    Ok((key, secret))
}

pub async fn list(db: &Db) -> StoreResult<Vec<ApiKey>> {
    let rows: Vec<KeyRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        key_cols!(),
        " FROM api_keys ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter().map(ApiKey::try_from).collect()
}

/// The key a presented secret belongs to, active or not (callers decide).
pub async fn find_by_secret(db: &Db, secret: &str) -> StoreResult<Option<ApiKey>> {
    let row: Option<KeyRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        key_cols!(),
        " FROM api_keys WHERE secret_hash = $1"
    ))
    .bind(hash(secret))
    .fetch_optional(c)
    .await?);
    row.map(ApiKey::try_from).transpose()
}

pub async fn revoke(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<ApiKey> {
    let mut tx = db.begin_as(ctx).await?;
    let row: Option<KeyRow> = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 RETURNING ",
        key_cols!()
    ))
    .bind(db.clock.now().millis())
    .bind(id)
    .fetch_optional(c)
    .await?);
    let key = ApiKey::try_from(row.ok_or(StoreError::NotFound("API key"))?)?;
    let audited = tx
        .audit(
            Action::ApiKeyRevoke,
            "api_key",
            Some(key.id),
            serde_json::json!({ "name": &key.name, "prefix": &key.prefix }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(key)
}

/// Records use. Callers throttle it (once a minute per key is plenty) so reads
/// do not turn into writes.
pub async fn touch(db: &Db, id: Id, at: Timestamp) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE api_keys SET last_used_at = $1 WHERE id = $2"
    )
    .bind(at.millis())
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

/// Keys created by a user, newest first.
pub async fn list_of(db: &Db, user: Id) -> StoreResult<Vec<ApiKey>> {
    let rows: Vec<KeyRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        key_cols!(),
        " FROM api_keys WHERE user_id = $1 ORDER BY id DESC"
    ))
    .bind(user)
    .fetch_all(c)
    .await?);
    rows.into_iter().map(ApiKey::try_from).collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<ApiKey> {
    let row: Option<KeyRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        key_cols!(),
        " FROM api_keys WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("API key"))?.try_into()
}

/// Renames a key and/or changes its scopes.
pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    name: Option<&str>,
    scopes: Option<&[Scope]>,
) -> StoreResult<ApiKey> {
    let current = get(db, id).await?;
    let scope_list = scopes.map(|s| s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(","));
    let mut tx = db.begin_as(ctx).await?;
    let row: KeyRow = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "UPDATE api_keys SET name = $1, scopes = $2 WHERE id = $3 RETURNING ",
        key_cols!()
    ))
    .bind(name.unwrap_or(&current.name))
    .bind(scope_list.clone().unwrap_or_else(|| {
        current
            .scopes
            .iter()
            .map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }))
    .bind(id)
    .fetch_one(c)
    .await?);
    let key = ApiKey::try_from(row)?;
    let audited = tx
        .audit(
            Action::ApiKeyUpdate,
            "api_key",
            Some(id),
            serde_json::json!({ "name": name, "scopes": scope_list }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(key)
}

/// Revokes every live key of a user; returns how many.
pub async fn revoke_all_of(db: &Db, ctx: &AuditCtx, user: Id) -> StoreResult<u64> {
    let mut tx = db.begin_as(ctx).await?;
    let n = on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE api_keys SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL"
    )
    .bind(db.clock.now().millis())
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::ApiKeyRevokeAll,
            "user",
            Some(user),
            serde_json::json!({ "revoked": n }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(n)
}
