//! The connection to whichever backend the URL names, and the two macros that
//! run the same query text on it. Dialects agree on everything we use
//! (`$n` placeholders, `RETURNING`, integers for time); only migrations and
//! transaction start differ, and those live here.

use crate::error::{StoreError, StoreResult};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};
use std::str::FromStr;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A pool on the live backend. SQLite gets a separate single-connection writer
/// pool: SQLite admits one writer at a time anyway, and queueing writers in
/// the pool (instead of in SQLite's busy handler) keeps write latency fair.
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite { read: SqlitePool, write: SqlitePool },
    Postgres(PgPool),
}

/// One open transaction on the live backend.
pub enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

/// Runs `$body` with `$c` bound to an executor of the live backend's read pool.
/// The body is written once and type-checked once per backend.
macro_rules! on_db {
    ($db:expr, |$c:ident| $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite { read, .. } => {
                let $c = read;
                $body
            }
            $crate::db::Db::Postgres(pool) => {
                let $c = pool;
                $body
            }
        }
    };
}

/// Runs `$body` with `$c` bound to the connection of an open transaction.
macro_rules! on_tx {
    ($tx:expr, |$c:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(t) => {
                let $c = &mut **t;
                $body
            }
            $crate::db::Tx::Postgres(t) => {
                let $c = &mut **t;
                $body
            }
        }
    };
}

/// Like `on_tx!`, for a `SELECT` that must lock the rows it reads until
/// commit: PostgreSQL gets `FOR UPDATE`; SQLite's `BEGIN IMMEDIATE` already
/// holds the database's write lock.
macro_rules! locked {
    ($tx:expr, $sql:expr, |$c:ident, $q:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(t) => {
                let $c = &mut **t;
                let $q = $sql;
                $body
            }
            $crate::db::Tx::Postgres(t) => {
                let $c = &mut **t;
                let $q = concat!($sql, " FOR UPDATE");
                $body
            }
        }
    };
}

impl Db {
    /// Opens the database a URL names: `sqlite://PATH` (created if missing) or
    /// `postgres://...`. Any other scheme is refused with a message that says
    /// which ones work.
    pub async fn connect(url: &str) -> StoreResult<Db> {
        if url.starts_with("sqlite:") {
            let opts = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10));
            let write = SqlitePoolOptions::new().max_connections(1).connect_with(opts.clone()).await?;
            let read = SqlitePoolOptions::new().max_connections(8).connect_with(opts).await?;
            Ok(Db::Sqlite { read, write })
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let opts = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await?;
            Ok(Db::Postgres(pool))
        } else {
            Err(StoreError::Config(format!(
                "unsupported database URL {:?}: use sqlite://PATH or postgres://USER@HOST/DB",
                redact(url)
            )))
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite { .. } => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Applies pending migrations of the live backend.
    pub async fn migrate(&self) -> StoreResult<()> {
        match self {
            Db::Sqlite { write, .. } => sqlx::migrate!("./migrations/sqlite").run(write).await?,
            Db::Postgres(pool) => sqlx::migrate!("./migrations/postgres").run(pool).await?,
        }
        Ok(())
    }

    /// Starts a write transaction. SQLite's is `BEGIN IMMEDIATE` so a
    /// read-then-write transaction never fails to upgrade its lock.
    pub async fn begin(&self) -> StoreResult<Tx> {
        Ok(match self {
            Db::Sqlite { write, .. } => Tx::Sqlite(write.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }

    /// Runs a one-row `DELETE ... WHERE id = $1`; `NotFound(what)` when no
    /// row matched. Rows the deleted one owns go with it by foreign key.
    pub(crate) async fn delete_by_id(&self, sql: &'static str, id: i64, what: &'static str) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        let done = on_tx!(&mut tx, |c| sqlx::query(sql).bind(id).execute(c).await?.rows_affected());
        if done == 0 {
            return Err(StoreError::NotFound(what));
        }
        tx.commit().await
    }

    /// Waits for in-flight queries and closes every connection.
    pub async fn close(&self) {
        match self {
            Db::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

impl Tx {
    pub async fn commit(self) -> StoreResult<()> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
}

/// The URL with any password replaced, safe for logs and error messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let creds = &url[scheme_end + 3..at];
            match creds.find(':') {
                Some(colon) => format!("{}{}:***{}", &url[..scheme_end + 3], &creds[..colon], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(super::redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(super::redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::redact("mysql://x"), "mysql://x");
    }
}
