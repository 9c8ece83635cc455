//! Background work as rows (docs/jobs.md). A job is scheduled inside the
//! write transaction of the change that calls for it, so it exists exactly
//! when the change does; `dedupe_key` names the one job a thing has, and
//! scheduling it again moves that job. A worker leases due jobs (PostgreSQL:
//! `FOR UPDATE SKIP LOCKED`; SQLite: the one writer of `BEGIN IMMEDIATE`),
//! so each runs on one instance; a lease that runs out (a killed instance)
//! lets another worker take the job. Done jobs are deleted, failed ones come
//! back later with their error.
//!
//! Wake-ups: a commit that scheduled a job wakes this process's worker
//! (`Changes::jobs`); on PostgreSQL it also notifies `upstate_jobs`, which
//! every instance listens to.

use crate::db::{Db, Tx, TxInner};
use crate::error::{StoreError, StoreResult};
use upstate_core::{Id, Timestamp};

pub const CHANNEL: &str = "upstate_jobs";

pub use crate::work::{JobKind, Work};

/// A leased job. `lease` is the lease's token: only its holder may finish it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Job {
    pub id: Id,
    pub kind: String,
    pub dedupe_key: String,
    pub payload: String,
    pub attempts: i64,
    #[sqlx(rename = "locked_until")]
    pub lease: i64,
}

impl Job {
    /// What this job asks for.
    pub fn work(&self) -> StoreResult<Work> {
        Work::read(&self.kind, &self.dedupe_key, &self.payload).map_err(StoreError::Config)
    }
}

impl Tx {
    /// Schedules `work` (or moves its job) to run at `run_at`.
    pub(crate) async fn schedule(&mut self, work: &Work, run_at: Timestamp) -> StoreResult<()> {
        let (kind, key, payload) = (work.kind().as_str(), work.key(), work.payload());
        on_tx!(self, |c| {
            sqlx::query(
            "INSERT INTO jobs (kind, dedupe_key, payload, run_at, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (dedupe_key) DO UPDATE SET kind = $1, payload = $3, run_at = $4, \
             attempts = 0, locked_until = NULL, last_error = NULL"
        )
        .bind(kind)
        .bind(&key)
        .bind(&payload)
        .bind(run_at.millis())
        .bind(self.clock.now().millis())
        .execute(c)
        .await?
        .rows_affected()
        });
        // Other instances' workers hear of it at commit (`Tx::commit`).
        self.scheduled_jobs = true;
        Ok(())
    }

    /// Removes `work`'s job, if there is one.
    pub(crate) async fn unschedule(&mut self, work: &Work) -> StoreResult<()> {
        let key = work.key();
        on_tx!(self, |c| sqlx::query(
            "DELETE FROM jobs WHERE dedupe_key = $1"
        )
        .bind(&key)
        .execute(c)
        .await?
        .rows_affected());
        Ok(())
    }
}

/// Runs one backend's lease statement (`$1` the lease's end, `$2` now, `$3`
/// the most rows) in a bookkeeping transaction; PostgreSQL's skips rows
/// another instance is leasing, SQLite's holds the one writer lock.
pub(crate) async fn lease_rows<T>(
    db: &Db,
    (postgres, sqlite): (&'static str, &'static str),
    now: Timestamp,
    lease_ms: i64,
    limit: i64,
) -> StoreResult<Vec<T>>
where
    T: Send
        + Unpin
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
        + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>,
{
    // One statement that skips rows others lock: it waits for no one, so
    // it need not wait for the writers' turn either.
    let mut tx = db.bookkeeping_beside_turn().await?;
    let until = now.millis() + lease_ms;
    let rows: Vec<T> = match &mut tx.inner {
        TxInner::Postgres(t, _) => {
            sqlx::query_as(postgres)
                .bind(until)
                .bind(now.millis())
                .bind(limit)
                .fetch_all(&mut **t)
                .await?
        }
        TxInner::Sqlite(t) => {
            sqlx::query_as(sqlite)
                .bind(until)
                .bind(now.millis())
                .bind(limit)
                .fetch_all(&mut **t)
                .await?
        }
    };
    tx.commit().await?;
    Ok(rows)
}

/// Leases up to `limit` due jobs for `lease_ms`.
pub async fn lease(db: &Db, now: Timestamp, lease_ms: i64, limit: i64) -> StoreResult<Vec<Job>> {
    // The one statement that differs: see `sqlite.rs` and `postgres.rs`.
    let sql = (crate::postgres::LEASE_JOBS, crate::sqlite::LEASE_JOBS);
    lease_rows(db, sql, now, lease_ms, limit).await
}

/// Deletes a job whose lease is still ours. A job scheduled again while it
/// ran (its lease cleared) stays, for its new time.
pub async fn finish(db: &Db, job: &Job) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    finish_in(&mut tx, job).await?;
    tx.commit().await
}

/// `finish`, inside the transaction that did the job's work.
pub(crate) async fn finish_in(tx: &mut crate::db::Bookkeeping, job: &Job) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| sqlx::query(
        "DELETE FROM jobs WHERE id = $1 AND locked_until = $2"
    )
    .bind(job.id)
    .bind(job.lease)
    .execute(c)
    .await?
    .rows_affected());
    Ok(())
}

/// Gives a failed job back, to run again at `run_at`, with its error.
pub async fn retry(db: &Db, job: &Job, error: &str, run_at: Timestamp) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE jobs SET locked_until = NULL, run_at = $1, last_error = $2 \
         WHERE id = $3 AND locked_until = $4"
    )
    .bind(run_at.millis())
    .bind(error)
    .bind(job.id)
    .bind(job.lease)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

/// When the next job is due, if any is waiting.
pub async fn next_run_at(db: &Db) -> StoreResult<Option<Timestamp>> {
    let at: Option<i64> = on_db!(db, |c| {
        sqlx::query_scalar(
        "SELECT MIN(CASE WHEN locked_until IS NULL OR locked_until < run_at THEN run_at ELSE locked_until END) FROM jobs"
    )
    .fetch_one(c)
    .await?
    });
    Ok(at.map(Timestamp::from_millis))
}

/// A job's state, for tests and operators: (run_at, attempts, last_error).
pub async fn by_key(db: &Db, key: &str) -> StoreResult<Option<(Timestamp, i64, Option<String>)>> {
    let row: Option<(i64, i64, Option<String>)> = on_db!(db, |c| sqlx::query_as(
        "SELECT run_at, attempts, last_error FROM jobs WHERE dedupe_key = $1"
    )
    .bind(key)
    .fetch_optional(c)
    .await?);
    Ok(row.map(|(at, n, e)| (Timestamp::from_millis(at), n, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_reads_back_as_it_was_written() {
        for work in [
            Work::MoveMaintenance(42),
            Work::FanOut(vec![7, 8, 9]),
            Work::Prune,
        ] {
            let read = Work::read(work.kind().as_str(), &work.key(), &work.payload());
            assert_eq!(read, Ok(work));
        }
        // The names the rows of earlier releases carry.
        assert_eq!(Work::MoveMaintenance(3).key(), "maintenance:3");
        assert_eq!(Work::FanOut(vec![5, 6]).key(), "notify:5");
        assert_eq!(Work::Prune.key(), "prune");
        assert!(Work::read("reindex", "x", "{}").is_err_and(|e| e.contains("reindex")));
        assert!(Work::read("maintenance", "maintenance:x", "{}").is_err());
        assert!(Work::read("notify", "notify:1", "not json").is_err());
    }
}
