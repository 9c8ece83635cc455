//! Step-up tokens: created by a signed-in session, verified by password or
//! TOTP, then presented (within a few minutes of verification) with a
//! sensitive request of the same session.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::users::{token, token_hash};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::{Id, Timestamp};

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepUp {
    pub created_at: Timestamp,
    pub verified_at: Option<Timestamp>,
    pub method: Option<String>,
}

pub async fn create(db: &Db, session_id: &str, user: Id) -> StoreResult<String> {
    let t = token();
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "INSERT INTO step_ups (token_hash, session_id, user_id, created_at) VALUES ($1, $2, $3, $4)"
    )
    .bind(token_hash(&t))
    .bind(session_id)
    .bind(user)
    .bind(db.clock.now().millis())
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await?;
    Ok(t)
}

/// A step-up of this session, by token.
pub async fn get(db: &Db, session_id: &str, token: &str) -> StoreResult<StepUp> {
    let row: Option<(i64, Option<i64>, Option<String>)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT created_at, verified_at, method FROM step_ups WHERE token_hash = $1 AND session_id = $2"
    )
    .bind(token_hash(token))
    .bind(session_id)
    .fetch_optional(c)
    .await?
    });
    let (created, verified, method) = row.ok_or(StoreError::NotFound("step-up"))?;
    Ok(StepUp {
        created_at: Timestamp::from_millis(created),
        verified_at: verified.map(Timestamp::from_millis),
        method,
    })
}

/// The session's latest step-up, if any.
pub async fn latest(db: &Db, session_id: &str) -> StoreResult<Option<StepUp>> {
    let row: Option<(i64, Option<i64>, Option<String>)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT created_at, verified_at, method FROM step_ups WHERE session_id = $1 ORDER BY created_at DESC LIMIT 1"
    )
    .bind(session_id)
    .fetch_optional(c)
    .await?
    });
    Ok(row.map(|(c, v, m)| StepUp {
        created_at: Timestamp::from_millis(c),
        verified_at: v.map(Timestamp::from_millis),
        method: m,
    }))
}

/// Marks a pending step-up of this session verified (once; within `valid_ms` of its creation).
pub async fn verify(
    db: &Db,
    ctx: &AuditCtx,
    session_id: &str,
    token: &str,
    method: &str,
    valid_ms: i64,
) -> StoreResult<()> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let n = on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE step_ups SET verified_at = $1, method = $2 WHERE token_hash = $3 AND session_id = $4 \
         AND verified_at IS NULL AND created_at > $5"
    )
    .bind(now)
    .bind(method)
    .bind(token_hash(token))
    .bind(session_id)
    .bind(now - valid_ms)
    .execute(c)
    .await?
    .rows_affected()
    });
    if n != 1 {
        return Err(StoreError::Conflict(
            "this step-up is unknown, expired or verified already".into(),
        ));
    }
    let audited = tx
        .audit(
            Action::UserStepUp,
            "session",
            None,
            json!({ "method": method }),
        )
        .await?;
    tx.commit(audited).await
}
