//! What only SQLite does. It is the embedded default: one file, one process.
//! WAL journal, full sync (an acknowledged write survives a power cut),
//! foreign keys on, and one writer connection, because SQLite admits one
//! writer at a time anyway and queueing writers in the pool keeps latency
//! fair. Write transactions begin `IMMEDIATE`, taking the write lock at once,
//! so a read-then-write transaction never fails to upgrade it; that lock is
//! also what makes a job lease exclusive here.

use crate::db::Pools;
use crate::error::StoreResult;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::time::Duration;

pub(crate) const BEGIN: &str = "BEGIN IMMEDIATE";

/// Leases due jobs (the writer lock excludes every other worker).
pub(crate) const LEASE_JOBS: &str = "UPDATE jobs SET locked_until = $1, attempts = attempts + 1 WHERE id IN \
     (SELECT id FROM jobs WHERE run_at <= $2 AND (locked_until IS NULL OR locked_until < $2) \
      ORDER BY run_at LIMIT $3) \
     RETURNING id, kind, dedupe_key, payload, attempts, locked_until";

/// Leases monitors whose check is due (the writer lock excludes every other
/// runner).
pub(crate) const LEASE_MONITORS: &str = "UPDATE monitors SET locked_until = $1 WHERE id IN \
     (SELECT id FROM monitors WHERE enabled AND next_run_at <= $2 \
      AND (locked_until IS NULL OR locked_until < $2) ORDER BY next_run_at LIMIT $3) \
     RETURNING id, locked_until";

/// Leases the third-party components whose poll is due.
pub(crate) const LEASE_THIRD_PARTY: &str = "UPDATE third_party SET locked_until = $1 WHERE id IN \
     (SELECT id FROM third_party WHERE next_run_at <= $2 \
      AND (locked_until IS NULL OR locked_until < $2) ORDER BY next_run_at LIMIT $3) \
     RETURNING id, locked_until";

/// Leases due deliveries (the writer lock excludes every other sender).
pub(crate) const LEASE_DELIVERIES: &str = "UPDATE deliveries SET locked_until = $1, attempts = attempts + 1 WHERE id IN \
     (SELECT id FROM deliveries WHERE status = 'pending' AND run_at <= $2 \
      AND (locked_until IS NULL OR locked_until < $2) ORDER BY run_at, id LIMIT $3) \
     RETURNING id, event_id, channel_id, subscriber_id, recipient, kind, attempts, locked_until, give_up_at";

pub(crate) async fn connect(url: &str) -> StoreResult<Pools> {
    let opts = SqliteConnectOptions::from_str(url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(10));
    let write = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(opts.clone())
        .await?;
    // Public reads are served from memory; these connections only rebuild
    // snapshots and serve the interface. Small page caches, and connections
    // a burst opened close after a minute idle, so an idle server stays small.
    let read = SqlitePoolOptions::new()
        .max_connections(8)
        .min_connections(1)
        .idle_timeout(Duration::from_secs(60))
        .connect_with(opts.pragma("cache_size", "-1024"))
        .await?;
    Ok(Pools::Sqlite { read, write })
}

/// The migrations this build carries (run at start, compared by readiness).
pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

pub(crate) async fn migrate(write: &sqlx::SqlitePool) -> StoreResult<()> {
    MIGRATOR.run(write).await?;
    Ok(())
}

/// How often the outbox is looked at for other processes' commits.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);
/// Rows read at once; more than that at once counts as "everything".
const FOLLOW_BATCH: i64 = 1000;

/// Reads the outbox rows other processes committed (this process's own
/// were applied at their commit and are skipped), once a second, and
/// applies their events, so pages a command-line import or apply changed
/// are not served stale. Rows that cannot be read count as "everything".
pub(crate) async fn follow(pool: &sqlx::SqlitePool, changes: &crate::changes::Changes) {
    let mut last: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM outbox")
        .fetch_one(pool)
        .await
        .unwrap_or(0);
    loop {
        tokio::time::sleep(FOLLOW_EVERY).await;
        let rows: Vec<(i64, String)> = match sqlx::query_as(
            "SELECT id, payload FROM outbox WHERE id > $1 ORDER BY id LIMIT $2",
        )
        .bind(last)
        .bind(FOLLOW_BATCH)
        .fetch_all(pool)
        .await
        {
            Ok(rows) => rows,
            Err(_) => continue,
        };
        let Some((newest, _)) = rows.last() else {
            continue;
        };
        let newest = *newest;
        let mut events = Vec::new();
        let mut unreadable = rows.len() as i64 >= FOLLOW_BATCH;
        for (id, payload) in &rows {
            if changes.take_own(*id) {
                continue;
            }
            match serde_json::from_str::<upstate_core::events::Event>(payload) {
                Ok(e) => events.push(e),
                Err(_) => unreadable = true,
            }
        }
        changes.forget_own_through(newest);
        last = newest;
        if unreadable {
            changes.bump_all();
        } else {
            changes.committed(events);
        }
    }
}
