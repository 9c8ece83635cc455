//! The connection to whichever backend the URL names, and the macros that
//! run the same query text on it. Dialects agree on everything we use
//! (`$n` placeholders, `RETURNING`, `ON CONFLICT`, integers for time); what
//! differs lives in `sqlite.rs` and `postgres.rs`.

use crate::audit::AuditCtx;
use crate::changes::{CHANNEL, Changes};
use crate::error::{StoreError, StoreResult};
use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};
use std::sync::Arc;
use upstate_core::Id;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Pools on the live backend. SQLite gets a separate single-connection writer
/// pool: SQLite admits one writer at a time anyway, and queueing writers in
/// the pool (instead of in SQLite's busy handler) keeps write latency fair.
#[derive(Clone, Debug)]
pub enum Pools {
    Sqlite { read: SqlitePool, write: SqlitePool },
    Postgres(PgPool),
}

/// The database, and the record of which pages changed.
#[derive(Clone, Debug)]
pub struct Db {
    pub(crate) pools: Pools,
    pub changes: Arc<Changes>,
}

pub(crate) enum TxInner {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

/// One open write transaction, and the pages it changed.
pub struct Tx {
    pub(crate) inner: TxInner,
    touched: Vec<Id>,
    changes: Arc<Changes>,
    /// Who makes this change; every audited write has one.
    pub(crate) ctx: Option<AuditCtx>,
    /// Whether it scheduled a job (the worker is woken after commit).
    pub(crate) scheduled_jobs: bool,
}

/// Runs `$body` with `$c` bound to an executor of the live backend's read pool.
/// The body is written once and type-checked once per backend.
macro_rules! on_db {
    ($db:expr, |$c:ident| $body:expr) => {
        match &$db.pools {
            $crate::db::Pools::Sqlite { read, .. } => {
                let $c = read;
                $body
            }
            $crate::db::Pools::Postgres(pool) => {
                let $c = pool;
                $body
            }
        }
    };
}

/// Runs `$body` with `$c` bound to the connection of an open transaction.
macro_rules! on_tx {
    ($tx:expr, |$c:ident| $body:expr) => {
        match &mut $tx.inner {
            $crate::db::TxInner::Sqlite(t) => {
                let $c = &mut **t;
                $body
            }
            $crate::db::TxInner::Postgres(t) => {
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
        match &mut $tx.inner {
            $crate::db::TxInner::Sqlite(t) => {
                let $c = &mut **t;
                let $q = $sql;
                $body
            }
            $crate::db::TxInner::Postgres(t) => {
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
        let pools = if url.starts_with("sqlite:") {
            crate::sqlite::connect(url).await?
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            crate::postgres::connect(url).await?
        } else {
            return Err(StoreError::Config(format!(
                "unsupported database URL {:?}: use sqlite://PATH or postgres://USER@HOST/DB",
                redact(url)
            )));
        };
        Ok(Db {
            pools,
            changes: Arc::default(),
        })
    }

    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Sqlite { .. } => Backend::Sqlite,
            Pools::Postgres(_) => Backend::Postgres,
        }
    }

    /// Applies pending migrations of the live backend.
    pub async fn migrate(&self) -> StoreResult<()> {
        match &self.pools {
            Pools::Sqlite { write, .. } => crate::sqlite::migrate(write).await,
            Pools::Postgres(pool) => crate::postgres::migrate(pool).await,
        }
    }

    /// Starts a write transaction. SQLite's is `BEGIN IMMEDIATE` so a
    /// read-then-write transaction never fails to upgrade its lock.
    pub async fn begin(&self) -> StoreResult<Tx> {
        let inner = match &self.pools {
            Pools::Sqlite { write, .. } => {
                TxInner::Sqlite(write.begin_with(crate::sqlite::BEGIN).await?)
            }
            Pools::Postgres(pool) => TxInner::Postgres(pool.begin().await?),
        };
        Ok(Tx {
            inner,
            touched: Vec::new(),
            changes: self.changes.clone(),
            ctx: None,
            scheduled_jobs: false,
        })
    }

    /// Starts a write transaction whose change is recorded in the audit log
    /// as made by `ctx`.
    pub async fn begin_as(&self, ctx: &AuditCtx) -> StoreResult<Tx> {
        let mut tx = self.begin().await?;
        tx.ctx = Some(ctx.clone());
        Ok(tx)
    }

    /// Runs a one-row `DELETE ... WHERE id = $1 RETURNING <page id>`;
    /// `NotFound(what)` when no row matched. Rows the deleted one owns go with
    /// it by foreign key.
    pub(crate) async fn delete_by_id(
        &self,
        ctx: &AuditCtx,
        sql: &'static str,
        id: i64,
        what: &'static str,
        target_type: &'static str,
        action: upstate_core::audit::Action,
    ) -> StoreResult<()> {
        let mut tx = self.begin_as(ctx).await?;
        let page: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(sql)
            .bind(id)
            .fetch_optional(c)
            .await?);
        let page = page.ok_or(StoreError::NotFound(what))?;
        tx.audit(
            action,
            target_type,
            Some(id),
            serde_json::json!({ "statusPageId": page }),
        )
        .await?;
        tx.touch(page).await?;
        tx.commit().await
    }

    /// Follows PostgreSQL change notifications from every instance until the
    /// process ends, bumping page versions; a no-op on SQLite, where this
    /// process is the only writer of pages.
    pub async fn follow_changes(&self) {
        if let Pools::Postgres(pool) = &self.pools {
            crate::postgres::follow(pool, &self.changes).await;
        }
    }

    /// Waits for in-flight queries and closes every connection.
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Pools::Postgres(pool) => pool.close().await,
        }
    }
}

impl Tx {
    /// Records that this transaction changes what a page shows: stamps the
    /// page's `updated_at` (its public `lastUpdated`) and, on PostgreSQL,
    /// queues a notification that is delivered only if the transaction commits.
    pub(crate) async fn touch(&mut self, page: Id) -> StoreResult<()> {
        if self.touched.contains(&page) {
            return Ok(());
        }
        let now = upstate_core::Timestamp::now().millis();
        on_tx!(self, |c| sqlx::query(
            "UPDATE status_pages SET updated_at = $1 WHERE id = $2"
        )
        .bind(now)
        .bind(page)
        .execute(c)
        .await?
        .rows_affected());
        if let TxInner::Postgres(t) = &mut self.inner {
            let payload = self.changes.payload(page);
            crate::postgres::notify(t, CHANNEL, &payload).await?;
        }
        self.touched.push(page);
        Ok(())
    }

    pub async fn commit(self) -> StoreResult<()> {
        match self.inner {
            TxInner::Sqlite(t) => t.commit().await?,
            TxInner::Postgres(t) => t.commit().await?,
        }
        for page in self.touched {
            self.changes.bump(page);
        }
        if self.scheduled_jobs {
            self.changes.jobs.notify_one();
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
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &creds[..colon],
                    &url[at..]
                ),
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
        assert_eq!(
            super::redact("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(super::redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(super::redact("mysql://x"), "mysql://x");
    }
}
