//! What is kept how long. The delivery log and the outbox grow with every
//! change told to every recipient (100,000 subscribers make 100,000 rows an
//! update), so finished deliveries are deleted once they are older than the
//! install's `deliveryLogDays`, and then the outbox events no delivery
//! refers to any more. Pending deliveries, and the events they are written
//! from, stay whatever their age: nothing acknowledged is dropped unsent.
//! A monitor's raw checks and its minute, hour and day sums are kept as
//! long as `Resolution::kept_ms` says. Visitors who followed one incident
//! are let go a week after it (and every other they followed) was resolved.
//! The audit log is
//! never pruned (its chain is the point).
//!
//! The work is one job row (`prune`, made by migration 0020) that runs
//! hourly and moves itself on, so it runs once per hour on any number of
//! instances.

use crate::db::Db;
use crate::error::StoreResult;
use upstate_core::Timestamp;
use upstate_core::measurements::Resolution;

/// How often the job runs.
pub const EVERY_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

/// What one round deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub deliveries: u64,
    pub events: u64,
    pub checks: u64,
    /// Minute, hour and day sums past their keeping.
    pub stats: u64,
    /// Incident followers whose incidents all ended a week ago or more.
    pub followers: u64,
    /// Alerts that stopped firing, and closed alert groups.
    pub alerts: u64,
}

/// How long an incident's followers are kept after it is resolved (a
/// reopened incident within it still reaches them).
pub const FOLLOW_AFTER_MS: i64 = 7 * DAY_MS;

/// Deletes what is older than `keep_days` at `now`, and moves the job to
/// its next hour in the same transaction (its lease cleared, so the
/// worker's `finish` leaves it in place).
pub async fn prune(db: &Db, now: Timestamp, keep_days: i64) -> StoreResult<Pruned> {
    let before = now.millis() - keep_days * DAY_MS;
    let mut tx = db.bookkeeping().await?;
    let deliveries = on_tx!(&mut tx, |c| {
        sqlx::query(
        "DELETE FROM deliveries WHERE status <> 'pending' AND COALESCE(finished_at, created_at) < $1"
    )
    .bind(before)
    .execute(c)
    .await?
    .rows_affected()
    });
    let events = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM outbox WHERE at < $1 \
         AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = outbox.id)"
    )
    .bind(before)
    .execute(c)
    .await?
    .rows_affected());
    let checks = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM monitor_checks WHERE at < $1"
    )
    .bind(now.millis() - Resolution::Raw.kept_ms())
    .execute(c)
    .await?
    .rows_affected());
    let stats = crate::monitor_stats::prune(&mut tx, now).await?;
    let followers = on_tx!(&mut tx, |c| {
        sqlx::query(
        "DELETE FROM subscribers WHERE scope = 'incidents' AND created_at < $1 AND NOT EXISTS ( \
             SELECT 1 FROM subscriber_incidents si JOIN incidents i ON i.id = si.incident_id \
             WHERE si.subscriber_id = subscribers.id AND (i.resolved_at IS NULL OR i.resolved_at >= $1))"
    )
    .bind(now.millis() - FOLLOW_AFTER_MS)
    .execute(c)
    .await?
    .rows_affected()
    });
    let resolved = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM integration_alerts WHERE firing = FALSE AND last_seen < $1"
    )
    .bind(before)
    .execute(c)
    .await?
    .rows_affected());
    let closed = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM alert_groups WHERE state NOT IN ('draft', 'open') \
         AND COALESCE(closed_at, opened_at) < $1"
    )
    .bind(before)
    .execute(c)
    .await?
    .rows_affected());
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE jobs SET run_at = $1, locked_until = NULL, attempts = 0, last_error = NULL \
         WHERE dedupe_key = $2"
    )
    .bind(now.millis() + EVERY_MS)
    .bind(crate::jobs::Work::Prune.key())
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await?;
    Ok(Pruned {
        deliveries,
        events,
        checks,
        stats,
        followers,
        alerts: resolved + closed,
    })
}
