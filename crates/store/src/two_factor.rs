//! Two-factor state of users: TOTP secrets (pending while being set up), the
//! last accepted time step (so no code is accepted twice), recovery codes
//! (stored as SHA-256 hashes, each good once) and pending sign-in sessions.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::sealed::Purpose;
use crate::users::{Session, token_hash};
use serde_json::json;
use upstate_core::Id;
use upstate_core::audit::Action;

#[derive(Debug, Clone, Default)]
pub struct TotpState {
    pub secret: Option<String>,
    pub pending: Option<String>,
    pub last_step: i64,
}

pub async fn state(db: &Db, user: Id) -> StoreResult<TotpState> {
    let row: Option<(Option<String>, Option<String>, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT totp_secret, totp_pending, totp_last_step FROM users WHERE id = $1"
    )
    .bind(user)
    .fetch_optional(c)
    .await?);
    let (secret, pending, last_step) = row.ok_or(StoreError::NotFound("user"))?;
    Ok(TotpState {
        secret: db.keys.open_opt(Purpose::Totp, secret)?,
        pending: db.keys.open_opt(Purpose::Totp, pending)?,
        last_step,
    })
}

pub async fn set_pending(db: &Db, ctx: &AuditCtx, user: Id, secret: &str) -> StoreResult<()> {
    let secret = db.keys.seal(Purpose::Totp, secret)?;
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE users SET totp_pending = $1 WHERE id = $2"
    )
    .bind(secret)
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(Action::User2faSetupStarted, "user", Some(user), json!({}))
        .await?;
    tx.commit(audited).await
}

/// Records a code's time step as used, if it is newer than the last one:
/// false when the code (or an older one) was already used.
pub async fn use_step(db: &Db, user: Id, step: i64) -> StoreResult<bool> {
    let mut tx = db.bookkeeping().await?;
    let n = on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE users SET totp_last_step = $1 WHERE id = $2 AND totp_last_step < $1"
    )
    .bind(step)
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await?;
    Ok(n == 1)
}

/// Turns the pending secret on and replaces the recovery codes.
pub async fn enable(
    db: &Db,
    ctx: &AuditCtx,
    user: Id,
    secret: &str,
    step: i64,
    codes: &[String],
) -> StoreResult<()> {
    let secret = db.keys.seal(Purpose::Totp, secret)?;
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE users SET totp_secret = $1, totp_pending = NULL, totp_enabled = TRUE, totp_last_step = $2 WHERE id = $3"
    )
    .bind(secret)
    .bind(step)
    .bind(user)
    .execute(c)
    .await?
    .rows_affected()
    });
    replace_codes(&mut tx, user, codes).await?;
    let audited = tx
        .audit(
            Action::User2faEnable,
            "user",
            Some(user),
            json!({ "recoveryCodes": codes.len() }),
        )
        .await?;
    tx.commit(audited).await
}

async fn replace_codes(tx: &mut crate::db::Tx, user: Id, codes: &[String]) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| sqlx::query(
        "DELETE FROM recovery_codes WHERE user_id = $1"
    )
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    for code in codes {
        on_tx!(&mut *tx, |c| sqlx::query(
            "INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2)"
        )
        .bind(user)
        .bind(token_hash(code))
        .execute(c)
        .await?
        .rows_affected());
    }
    Ok(())
}

pub async fn regenerate_codes(
    db: &Db,
    ctx: &AuditCtx,
    user: Id,
    codes: &[String],
) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    replace_codes(&mut tx, user, codes).await?;
    let audited = tx
        .audit(
            Action::User2faRecoveryCodes,
            "user",
            Some(user),
            json!({ "recoveryCodes": codes.len() }),
        )
        .await?;
    tx.commit(audited).await
}

pub async fn disable(db: &Db, ctx: &AuditCtx, user: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_enabled = FALSE WHERE id = $1"
    )
    .bind(user)
    .execute(c)
    .await?
    .rows_affected()
    });
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM recovery_codes WHERE user_id = $1"
    )
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(Action::User2faDisable, "user", Some(user), json!({}))
        .await?;
    tx.commit(audited).await
}

/// Spends a recovery code: true when it was valid and unused.
pub async fn spend_code(db: &Db, user: Id, code: &str) -> StoreResult<bool> {
    let mut tx = db.bookkeeping().await?;
    let n = on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE recovery_codes SET used_at = $1 WHERE user_id = $2 AND code_hash = $3 AND used_at IS NULL"
    )
    .bind(db.clock.now().millis())
    .bind(user)
    .bind(token_hash(code.trim()))
    .execute(c)
    .await?
    .rows_affected()
    });
    tx.commit().await?;
    Ok(n == 1)
}

pub async fn codes_left(db: &Db, user: Id) -> StoreResult<i64> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL"
    )
    .bind(user)
    .fetch_one(c)
    .await?))
}

/// Marks a fresh sign-in session as waiting for its second factor.
pub async fn mark_pending(db: &Db, session: &Session) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE sessions SET pending_2fa = TRUE WHERE id = $1"
    )
    .bind(&session.id)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

/// The user of a session waiting for its second factor (None if there is none).
pub async fn pending_user(
    db: &Db,
    token: &str,
    valid_ms: i64,
) -> StoreResult<Option<(String, Id)>> {
    let id = token_hash(token);
    let row: Option<(i64, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT user_id, created_at FROM sessions WHERE id = $1 AND pending_2fa"
    )
    .bind(&id)
    .fetch_optional(c)
    .await?);
    Ok(row
        .filter(|(_, created)| db.clock.now().millis() - created < valid_ms)
        .map(|(user, _)| (id, user)))
}

pub async fn is_pending(db: &Db, session_id: &str) -> StoreResult<bool> {
    let p: Option<bool> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT pending_2fa FROM sessions WHERE id = $1"
    )
    .bind(session_id)
    .fetch_optional(c)
    .await?);
    Ok(p.unwrap_or(false))
}
