//! What only PostgreSQL does. It serves several instances on one database:
//! rows a transaction reads to change are locked `FOR UPDATE` (the `locked!`
//! macro), job leases skip rows another instance holds (`SKIP LOCKED`), and
//! instances tell each other of changes and new jobs with LISTEN/NOTIFY (a
//! notification sent inside a transaction is delivered only if it commits).

use crate::changes::{self, Changes, Notice};
use crate::db::Pools;
use crate::error::StoreResult;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use std::str::FromStr;
use std::time::Duration;

/// Leases due jobs, skipping those another instance is leasing right now.
pub(crate) const LEASE_JOBS: &str = "UPDATE jobs SET locked_until = $1, attempts = attempts + 1 WHERE id IN \
     (SELECT id FROM jobs WHERE run_at <= $2 AND (locked_until IS NULL OR locked_until < $2) \
      ORDER BY run_at LIMIT $3 FOR UPDATE SKIP LOCKED) \
     RETURNING id, kind, dedupe_key, payload, attempts, locked_until";

/// Leases monitors whose check is due, skipping those another instance is
/// leasing right now.
pub(crate) const LEASE_MONITORS: &str = "UPDATE monitors SET locked_until = $1 WHERE id IN \
     (SELECT id FROM monitors WHERE enabled AND next_run_at <= $2 \
      AND (locked_until IS NULL OR locked_until < $2) ORDER BY next_run_at LIMIT $3 FOR UPDATE SKIP LOCKED) \
     RETURNING id, locked_until";

/// Leases due deliveries, skipping those another instance is leasing right now.
pub(crate) const LEASE_DELIVERIES: &str = "UPDATE deliveries SET locked_until = $1, attempts = attempts + 1 WHERE id IN \
     (SELECT id FROM deliveries WHERE status = 'pending' AND run_at <= $2 \
      AND (locked_until IS NULL OR locked_until < $2) ORDER BY run_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) \
     RETURNING id, event_id, channel_id, subscriber_id, recipient, kind, attempts, locked_until, give_up_at";

pub(crate) async fn connect(url: &str) -> StoreResult<Pools> {
    let opts = PgConnectOptions::from_str(url)?;
    let pool = PgPoolOptions::new()
        .max_connections(16)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(opts)
        .await?;
    Ok(Pools::Postgres {
        pool,
        turn: Default::default(),
    })
}

/// The migrations this build carries (run at start, compared by readiness).
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub(crate) async fn migrate(pool: &PgPool) -> StoreResult<()> {
    MIGRATOR.run(pool).await?;
    Ok(())
}

/// Queues a notification, delivered to every instance if the transaction commits.
pub(crate) async fn notify(
    conn: &mut sqlx::PgConnection,
    channel: &str,
    payload: &str,
) -> StoreResult<()> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(channel)
        .bind(payload)
        .execute(conn)
        .await?;
    Ok(())
}

/// Follows every instance's notifications until the process ends: changed
/// pages bump their versions, new jobs wake the worker. While the connection
/// is down, anything may have happened, so everything counts as changed.
pub(crate) async fn follow(pool: &PgPool, changes: &Changes) {
    loop {
        match PgListener::connect_with(pool).await {
            Ok(mut listener) => {
                if listener
                    .listen_all([changes::CHANNEL, crate::jobs::CHANNEL])
                    .await
                    .is_ok()
                {
                    changes.bump_all();
                    changes.jobs.notify_one();
                    while let Ok(n) = listener.recv().await {
                        if n.channel() == crate::jobs::CHANNEL {
                            changes.jobs.notify_one();
                        } else {
                            apply(pool, changes, n.payload()).await;
                        }
                    }
                }
                tracing::warn!("lost the change notification connection; reconnecting");
            }
            Err(e) => tracing::warn!(error = %e, "cannot listen for changes; retrying"),
        }
        changes.bump_all();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Applies another instance's commit: reads the outbox rows it names and
/// hands their events on. Rows that cannot be read count as "everything".
async fn apply(pool: &PgPool, changes: &Changes, payload: &str) {
    let ids = match changes.notice(payload) {
        Notice::Own => return,
        Notice::Everything => return changes.bump_all(),
        Notice::Rows(ids) => ids,
    };
    let rows: Result<Vec<String>, _> =
        sqlx::query_scalar("SELECT payload FROM outbox WHERE id = ANY($1) ORDER BY id")
            .bind(&ids)
            .fetch_all(pool)
            .await;
    let events: Option<Vec<upstate_core::events::Event>> = rows
        .ok()
        .and_then(|rows| rows.iter().map(|r| serde_json::from_str(r).ok()).collect());
    match events {
        Some(events) if events.len() == ids.len() => changes.committed(events),
        _ => changes.bump_all(),
    }
}
