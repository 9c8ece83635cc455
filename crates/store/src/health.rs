//! What readiness (`/api/health?ready`) and the self-test (`/api/selftest`)
//! ask of the database: are the migrations this build carries applied, does
//! a write come back, and where does an SQLite file live (for disk space).

use crate::db::{Db, Pools};
use crate::error::{StoreError, StoreResult};
use std::path::PathBuf;
use upstate_core::Timestamp;

/// The newest migration applied and the newest this build carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrations {
    pub applied: i64,
    pub expected: i64,
}

impl Migrations {
    pub fn current(&self) -> bool {
        self.applied >= self.expected
    }
}

pub async fn migrations(db: &Db) -> StoreResult<Migrations> {
    let migrator = match &db.pools {
        Pools::Sqlite { .. } => &crate::sqlite::MIGRATOR,
        Pools::Postgres { .. } => &crate::postgres::MIGRATOR,
    };
    let expected = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    let applied: Option<i64> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT MAX(version) FROM _sqlx_migrations WHERE success"
    )
    .fetch_one(c)
    .await?);
    Ok(Migrations {
        applied: applied.unwrap_or(0),
        expected,
    })
}

/// Asks the database for a round trip within `within` and records the
/// answer (`Db::reachable`); true if it answered. SQLite, a file beside the
/// process, always does. PostgreSQL may be restarting or out of reach: a
/// probe each second lets every request know without waiting for a
/// connection of its own to time out.
pub async fn probe(db: &Db, within: std::time::Duration) -> bool {
    let Pools::Postgres { pool, .. } = &db.pools else {
        return true;
    };
    let answered = matches!(
        tokio::time::timeout(within, sqlx::query("SELECT 1").execute(pool)).await,
        Ok(Ok(_))
    );
    let was = db
        .reachable
        .swap(answered, std::sync::atomic::Ordering::Relaxed);
    if was && !answered {
        tracing::warn!("the database does not answer: serving pages from memory, refusing changes");
    } else if !was && answered {
        tracing::info!("the database answers again");
    }
    answered
}

/// Writes the time into the self-test's row and reads it back through the
/// read connections; an error when what comes back is not what was written.
pub async fn write_and_read(db: &Db, now: Timestamp) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "INSERT INTO selftest (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = $1"
    )
    .bind(now.millis())
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await?;
    let back: Option<i64> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT at FROM selftest WHERE id = 1"
    )
    .fetch_optional(c)
    .await?);
    if back == Some(now.millis()) {
        Ok(())
    } else {
        Err(StoreError::Config(format!(
            "wrote {} and read back {back:?}",
            now.millis()
        )))
    }
}

/// The SQLite database file (None on PostgreSQL, or in memory).
pub async fn sqlite_file(db: &Db) -> StoreResult<Option<PathBuf>> {
    let Pools::Sqlite { read, .. } = &db.pools else {
        return Ok(None);
    };
    let rows: Vec<(i64, String, String)> = sqlx::query_as("PRAGMA database_list")
        .fetch_all(read)
        .await?;
    Ok(rows
        .into_iter()
        .find(|(_, name, file)| name == "main" && !file.is_empty())
        .map(|(_, _, file)| PathBuf::from(file)))
}
