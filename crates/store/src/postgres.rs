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

/// Leases the third-party components whose poll is due.
pub(crate) const LEASE_THIRD_PARTY: &str = "UPDATE third_party SET locked_until = $1 WHERE id IN \
     (SELECT id FROM third_party WHERE next_run_at <= $2 \
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

/// Tells every instance's worker, if the transaction commits, that this
/// instance scheduled jobs: for a commit that wrote no events (one that did
/// says so in `write_outbox`).
pub(crate) async fn notify_jobs(conn: &mut sqlx::PgConnection, origin: &str) -> StoreResult<()> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(crate::jobs::CHANNEL)
        .bind(origin)
        .execute(conn)
        .await?;
    Ok(())
}

/// A change's events, written at its commit (`Tx::commit`).
pub(crate) struct Outbox<'a> {
    pub events: &'a [upstate_core::events::Event],
    /// The pages they change, stamped (their public `lastUpdated`).
    pub pages: &'a [i64],
    /// This instance, in the notifications.
    pub origin: &'a str,
    /// Whether the transaction scheduled jobs of its own.
    pub jobs_scheduled: bool,
    /// The commit's time (the events', the pages' stamp, the fan-out's).
    pub at: upstate_core::Timestamp,
    /// The change tells no subscriber (`AuditCtx::quiet`).
    pub quiet: bool,
}

/// Writes a change's events into the outbox, stamps their pages, schedules
/// the fan-out of those people are told of (`NOTIFIED_KINDS`) and notifies the other
/// instances (changed pages; new jobs), all in one statement: inside the
/// writers' turn each round trip counts. The fan-out job and the notification payload are those
/// `Tx::schedule` and `Changes::payload` make on SQLite.
pub(crate) async fn write_outbox(
    conn: &mut sqlx::PgConnection,
    out: &Outbox<'_>,
) -> StoreResult<()> {
    let mut pages = Vec::with_capacity(out.events.len());
    let mut kinds = Vec::with_capacity(out.events.len());
    let mut payloads = Vec::with_capacity(out.events.len());
    for event in out.events {
        // Status page 0: a change of every page (no foreign key to break).
        pages.push(event.page().unwrap_or(0));
        kinds.push(event.kind().to_string());
        payloads.push(crate::deliveries::payload(event, out.quiet)?);
    }
    let told = upstate_core::notify::NOTIFIED_KINDS;
    let _: (Vec<i64>, i64) = sqlx::query_as(
        "WITH o AS ( \
           INSERT INTO outbox (at, status_page_id, kind, payload) \
           SELECT $1, u.page, u.kind, u.payload \
           FROM UNNEST($2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS u(page, kind, payload, n) \
           ORDER BY u.n RETURNING id, kind), \
         stamped AS (UPDATE status_pages SET updated_at = $1 WHERE id = ANY($5::bigint[]) RETURNING id), \
         told AS (SELECT min(id) AS first, string_agg(id::text, ',' ORDER BY id) AS list \
           FROM o WHERE kind = ANY($6::text[])), \
         job AS ( \
           INSERT INTO jobs (kind, dedupe_key, payload, run_at, created_at) \
           SELECT $7, $7 || ':' || first, '[' || list || ']', $1, $1 FROM told WHERE first IS NOT NULL \
           ON CONFLICT (dedupe_key) DO UPDATE SET kind = EXCLUDED.kind, payload = EXCLUDED.payload, \
             run_at = EXCLUDED.run_at, attempts = 0, locked_until = NULL, last_error = NULL \
           RETURNING id), \
         all_ids AS (SELECT string_agg(id::text, ',' ORDER BY id) AS list FROM o) \
         SELECT COALESCE((SELECT array_agg(id ORDER BY id) FROM o), '{}'::bigint[]), \
           (SELECT count(*) FROM stamped) \
           + (SELECT count(*) FROM (SELECT pg_notify($8, CASE WHEN length($9 || ':' || list) > $10 \
                THEN $9 || ':*' ELSE $9 || ':' || list END) FROM all_ids WHERE list IS NOT NULL) AS n1) \
           + (SELECT count(*) FROM (SELECT pg_notify($11, $9) WHERE $12 OR EXISTS (SELECT 1 FROM job)) AS n2)",
    )
    .bind(out.at.millis())
    .bind(&pages)
    .bind(&kinds)
    .bind(&payloads)
    .bind(out.pages)
    .bind(&told[..])
    // The fan-out's kind, and its key's prefix (`jobs::Work::key`).
    .bind(crate::jobs::JobKind::Notify.as_str())
    .bind(changes::CHANNEL)
    .bind(out.origin)
    .bind(changes::MAX_PAYLOAD as i32)
    .bind(crate::jobs::CHANNEL)
    .bind(out.jobs_scheduled)
    .fetch_one(conn)
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
                            // This process's worker was woken at its commit.
                            if !changes.is_own_jobs(n.payload()) {
                                changes.jobs.notify_one();
                            }
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
