//! Failed checks of secrets, counted per subject, with growing locks. The
//! server's guard decides which subjects an attempt counts against; this
//! module keeps the counts where every instance sees them, and writes each
//! failure, each lock and each thing that died of failures to the audit log
//! in the same transaction as the count.
//!
//! A subject's count starts over after an hour without failures. From its
//! `free`-th failure on, the subject is locked: 1 s, then twice as long with
//! each further failure, up to 15 minutes. A mortal subject (a pending
//! sign-in, a step-up) does not lock: it ends when its count reaches `free`.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::StoreResult;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::{Id, Timestamp};

/// How long a count is remembered after its latest failure.
pub const FORGET_AFTER_MS: i64 = 3_600_000;
/// The longest lock.
pub const MAX_LOCK_MS: i64 = 15 * 60_000;

/// One subject an attempt counts against.
#[derive(Debug, Clone)]
pub struct Counter {
    pub key: String,
    /// Failures forgiven before the first lock.
    pub free: i64,
    /// What the subject is, for the audit log: `account`, `account+address`, `address`, ...
    pub scope: &'static str,
}

/// Something that ends when its counter reaches its `free` failures.
#[derive(Debug, Clone)]
pub enum Mortal {
    /// A sign-in that passed the password and waits for its second factor.
    PendingSignIn { session_id: String },
    /// A step-up token waiting to be verified.
    StepUp { token_hash: String },
}

impl Mortal {
    fn name(&self) -> &'static str {
        match self {
            Mortal::PendingSignIn { .. } => "pending sign-in",
            Mortal::StepUp { .. } => "step-up",
        }
    }
}

/// One failed check, as the audit log records it (never the guess itself).
#[derive(Debug)]
pub struct Failure<'a> {
    pub route: &'a str,
    /// `password`, `second factor`, `page password`, `setup link`.
    pub secret: &'a str,
    pub target_type: &'static str,
    pub target_id: Option<Id>,
    pub counters: &'a [Counter],
    pub mortal: Option<(Counter, Mortal)>,
}

/// What a failure led to.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The latest lock this failure started, if any.
    pub locked_until: Option<Timestamp>,
    /// Whether the mortal subject ended.
    pub ended: bool,
}

fn lock_ms(failures: i64, free: i64) -> Option<i64> {
    (failures >= free).then(|| (1_000i64 << (failures - free).min(10)).min(MAX_LOCK_MS))
}

/// The latest lock still running on any of these subjects (at most four):
/// the moment after which an attempt is accepted again.
pub async fn locked_until(db: &Db, keys: &[&str]) -> StoreResult<Option<Timestamp>> {
    let Some(last) = keys.last() else {
        return Ok(None);
    };
    let key = |i: usize| keys.get(i).unwrap_or(last).to_string();
    let until: Option<i64> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT MAX(locked_until) FROM secret_failures WHERE key IN ($1, $2, $3, $4)"
    )
    .bind(key(0))
    .bind(key(1))
    .bind(key(2))
    .bind(key(3))
    .fetch_one(c)
    .await?);
    let now = db.clock.now().millis();
    Ok(until.filter(|u| *u > now).map(Timestamp::from_millis))
}

/// The current count of one subject (0 when forgotten).
pub async fn count(db: &Db, key: &str) -> StoreResult<i64> {
    let row: Option<(i64, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT failures, updated_at FROM secret_failures WHERE key = $1"
    )
    .bind(key)
    .fetch_optional(c)
    .await?);
    let now = db.clock.now().millis();
    Ok(row
        .filter(|(_, at)| *at >= now - FORGET_AFTER_MS)
        .map_or(0, |(n, _)| n))
}

/// Counts one failure against every subject, locks those past their free
/// failures, ends the mortal subject at its limit, and audits all of it.
pub async fn record(db: &Db, ctx: &AuditCtx, f: Failure<'_>) -> StoreResult<Outcome> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let mut outcome = Outcome::default();
    let mut locks = Vec::new();
    let mortal = f.mortal.as_ref().map(|(c, m)| (c, Some(m)));
    for (counter, mortal) in f.counters.iter().map(|c| (c, None)).chain(mortal) {
        let failures: i64 = on_tx!(&mut tx, |c| {
            sqlx::query_scalar(
            "INSERT INTO secret_failures (key, failures, locked_until, updated_at) VALUES ($1, 1, 0, $2) \
             ON CONFLICT (key) DO UPDATE SET updated_at = $2, failures = CASE \
             WHEN secret_failures.updated_at < $3 THEN 1 ELSE secret_failures.failures + 1 END \
             RETURNING failures"
        )
        .bind(&counter.key)
        .bind(now)
        .bind(now - FORGET_AFTER_MS)
        .fetch_one(c)
        .await?
        });
        match (mortal, lock_ms(failures, counter.free)) {
            (Some(m), Some(_)) => {
                end(&mut tx, m).await?;
                outcome.ended = true;
            }
            (None, Some(ms)) => {
                on_tx!(&mut tx, |c| sqlx::query(
                    "UPDATE secret_failures SET locked_until = $1 WHERE key = $2"
                )
                .bind(now + ms)
                .bind(&counter.key)
                .execute(c)
                .await?
                .rows_affected());
                locks.push((counter.scope, failures, Timestamp::from_millis(now + ms)));
                outcome.locked_until = outcome
                    .locked_until
                    .max(Some(Timestamp::from_millis(now + ms)));
            }
            _ => {}
        }
    }
    let ended = f
        .mortal
        .as_ref()
        .filter(|_| outcome.ended)
        .map(|(_, m)| m.name());
    let mut audited = tx
        .audit(
            Action::AuthFailure,
            f.target_type,
            f.target_id,
            json!({ "route": f.route, "secret": f.secret, "ended": ended }),
        )
        .await?;
    for (scope, failures, until) in locks {
        audited = tx.audit(
            Action::AuthLockout,
            f.target_type,
            f.target_id,
            json!({ "route": f.route, "secret": f.secret, "scope": scope, "failures": failures, "until": until }),
        )
        .await?;
    }
    // Counts nobody has added to for a day are of no use to anyone.
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM secret_failures WHERE updated_at < $1 AND locked_until < $2"
    )
    .bind(now - 24 * FORGET_AFTER_MS)
    .bind(now)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit(audited).await?;
    Ok(outcome)
}

async fn end(tx: &mut crate::db::Tx, m: &Mortal) -> StoreResult<()> {
    match m {
        Mortal::PendingSignIn { session_id } => {
            on_tx!(&mut *tx, |c| sqlx::query(
                "DELETE FROM sessions WHERE id = $1 AND pending_2fa"
            )
            .bind(session_id)
            .execute(c)
            .await?
            .rows_affected())
        }
        Mortal::StepUp { token_hash } => {
            on_tx!(&mut *tx, |c| sqlx::query(
                "DELETE FROM step_ups WHERE token_hash = $1"
            )
            .bind(token_hash)
            .execute(c)
            .await?
            .rows_affected())
        }
    };
    Ok(())
}

/// Forgets every failure and lock (development mode's reset); how many
/// subjects were counted. Audited: it lifts what slows guessing.
pub async fn reset_all(db: &Db, ctx: &AuditCtx) -> StoreResult<u64> {
    let mut tx = db.begin_as(ctx).await?;
    let n = on_tx!(&mut tx, |c| sqlx::query("DELETE FROM secret_failures")
        .execute(c)
        .await?
        .rows_affected());
    let audited = tx
        .audit(
            Action::RateLimitsReset,
            "rate_limits",
            None,
            json!({ "failureCountersCleared": n }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(n)
}

/// Forgets these subjects' failures: the secret was proven right.
pub async fn clear(db: &Db, keys: &[&str]) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    for key in keys {
        on_tx!(&mut tx, |c| sqlx::query(
            "DELETE FROM secret_failures WHERE key = $1"
        )
        .bind(*key)
        .execute(c)
        .await?
        .rows_affected());
    }
    tx.commit().await
}

#[cfg(test)]
mod tests {
    #[test]
    fn locks_start_at_the_free_count_and_double_to_fifteen_minutes() {
        assert_eq!(super::lock_ms(2, 3), None);
        assert_eq!(super::lock_ms(3, 3), Some(1_000));
        assert_eq!(super::lock_ms(4, 3), Some(2_000));
        assert_eq!(super::lock_ms(12, 3), Some(512_000));
        assert_eq!(super::lock_ms(13, 3), Some(super::MAX_LOCK_MS));
        assert_eq!(super::lock_ms(500, 3), Some(super::MAX_LOCK_MS));
    }
}
