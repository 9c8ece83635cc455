//! The connection to whichever backend the URL names, and the macros that
//! run the same query text on it. Dialects agree on everything we use
//! (`$n` placeholders, `RETURNING`, `ON CONFLICT`, integers for time); what
//! differs lives in `sqlite.rs` and `postgres.rs`.

use crate::changes::Changes;
use crate::error::{StoreError, StoreResult};
use crate::writer::{AuditCtx, Audited};
use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};
use std::sync::Arc;
use upstate_core::Id;
use upstate_core::events::Event;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Pools on the live backend. SQLite gets a separate single-connection writer
/// pool: SQLite admits one writer at a time anyway, and queueing writers in
/// the pool (instead of in SQLite's busy handler) keeps write latency fair.
/// PostgreSQL writers take turns too (`WriterTurn`).
#[derive(Clone, Debug)]
pub enum Pools {
    Sqlite { read: SqlitePool, write: SqlitePool },
    Postgres { pool: PgPool, turn: WriterTurn },
}

/// PostgreSQL's writers take one turn at a time, as SQLite's do, in every
/// instance on the database: each write transaction begins by taking one
/// transaction-scoped advisory lock (the turn across instances), released
/// by its commit or rollback. Every write appends to the one audit chain and
/// most stamp their page, so they serialise at some point anyway; taking the
/// turn first, before any row lock, is what makes that point a queue instead
/// of a deadlock (two writers each holding a row the other needs: a page's
/// `updated_at` and `audit_head`, or two components moved in opposite
/// order).
///
/// A few writers of this process wait for the turn inside PostgreSQL (so
/// the next one starts the moment the last commits, with no round trip in
/// between); the rest wait here, holding no pooled connection, so a storm of
/// writes never takes the connections that readers need.
#[derive(Clone, Debug)]
pub struct WriterTurn(Arc<tokio::sync::Semaphore>);

/// How many of this process's writers may hold a connection while they wait
/// for the turn: a quarter of the pool.
const WAITING_IN_POSTGRES: usize = 4;

impl Default for WriterTurn {
    fn default() -> Self {
        WriterTurn(Arc::new(tokio::sync::Semaphore::new(WAITING_IN_POSTGRES)))
    }
}

/// The advisory lock key of the writers' turn: 0x55707374, "Upst" in ASCII.
#[cfg(test)]
const WRITER_LOCK: i64 = 0x5570_7374;

/// How a PostgreSQL write transaction begins: with the turn, in the same
/// round trip (one simple query).
const BEGIN_IN_TURN: &str = "BEGIN; SELECT pg_advisory_xact_lock(1433432948)";

impl WriterTurn {
    async fn take(&self) -> StoreResult<tokio::sync::OwnedSemaphorePermit> {
        self.0
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Config("the writers' queue is closed".into()))
    }
}

/// The database, and the record of which pages changed.
#[derive(Clone, Debug)]
pub struct Db {
    pub(crate) pools: Pools,
    pub changes: Arc<Changes>,
    /// The process's one clock: what every change, route and job calls now.
    pub clock: upstate_core::Clock,
    /// The server keys that seal stored secrets (`sealed`).
    pub(crate) keys: Arc<crate::sealed::Keyring>,
    /// Whether the database answered the last probe (`health::probe`).
    pub(crate) reachable: Arc<std::sync::atomic::AtomicBool>,
}

pub(crate) enum TxInner {
    Sqlite(Transaction<'static, Sqlite>),
    /// The transaction, and its place among this process's writers, held
    /// until it ends.
    Postgres(
        Transaction<'static, Postgres>,
        Option<tokio::sync::OwnedSemaphorePermit>,
    ),
}

/// One open change of record: who makes it (`ctx`), the change events it
/// recorded into the outbox, the pages they touch. It commits only with the
/// proof that its audit event was appended (`Tx::audit` returns it), so a
/// change without its audit event does not compile.
pub struct Tx {
    pub(crate) inner: TxInner,
    pub(crate) changes: Arc<Changes>,
    pub(crate) ctx: AuditCtx,
    pub(crate) clock: upstate_core::Clock,
    pub(crate) keys: Arc<crate::sealed::Keyring>,
    /// The events this transaction recorded, and (SQLite, which writes them
    /// as they are recorded) their outbox ids; PostgreSQL writes them all at
    /// commit.
    events: Vec<Event>,
    outbox_ids: Vec<i64>,
    touched: Vec<Id>,
    /// What it wrote of component status history, for the snapshots.
    history: crate::changes::HistoryWritten,
    /// Whether it scheduled a job (the worker is woken after commit).
    pub(crate) scheduled_jobs: bool,
}

/// A write that is not a change of record: failure counters, job leases,
/// sessions' last use, spent codes. Nothing to audit, no event.
pub struct Bookkeeping {
    pub(crate) inner: TxInner,
}

/// Either kind of write transaction, for statements that run inside both
/// (a visitor's subscription is bookkeeping, an operator's is a change of
/// record, audited in the same transaction). `on_tx!` takes it like either.
pub(crate) struct Within<'a> {
    pub(crate) inner: &'a mut TxInner,
}

impl Tx {
    pub(crate) fn within(&mut self) -> Within<'_> {
        Within {
            inner: &mut self.inner,
        }
    }
}

impl Bookkeeping {
    pub(crate) fn within(&mut self) -> Within<'_> {
        Within {
            inner: &mut self.inner,
        }
    }
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
            $crate::db::Pools::Postgres { pool, .. } => {
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
            $crate::db::TxInner::Postgres(t, _) => {
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
            $crate::db::TxInner::Postgres(t, _) => {
                let $c = &mut **t;
                let $q = concat!($sql, " FOR UPDATE");
                $body
            }
        }
    };
}

/// How one kind of row is deleted: the `DELETE ... RETURNING <page id>`,
/// its name in a 404, and its audit action and change event.
pub(crate) struct Deletion {
    pub sql: &'static str,
    pub what: &'static str,
    pub target_type: &'static str,
    pub action: upstate_core::audit::Action,
    /// The event, from the page id and the deleted row's id.
    pub event: fn(Id, Id) -> Event,
    /// Run first, in the same transaction, with the row's id and the time:
    /// what ends with the row and no foreign key ends (empty: nothing).
    pub before: &'static str,
}

impl Db {
    /// Brings the query planner's statistics up to date after many rows
    /// came in at once (an import). PostgreSQL planned a page's reads on
    /// the figures of the empty tables until autovacuum came by: its
    /// snapshot took 100 ms to rebuild instead of 7 with 100,000 imported
    /// incidents.
    pub async fn refresh_statistics(&self) -> StoreResult<()> {
        match &self.pools {
            Pools::Sqlite { write, .. } => {
                sqlx::query("PRAGMA optimize").execute(write).await?;
            }
            Pools::Postgres { pool, .. } => {
                sqlx::query("ANALYZE").execute(pool).await?;
            }
        }
        Ok(())
    }

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
            clock: upstate_core::Clock::default(),
            keys: Arc::default(),
            reachable: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }

    /// Whether the database answered its last probe: while it does not,
    /// changes are refused at once and pages are served from memory
    /// instead of waiting for connections that cannot be made.
    pub fn reachable(&self) -> bool {
        self.reachable.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records that the database just failed to answer (a connection cut or
    /// refused), ahead of the next probe, which says when it answers again.
    pub fn mark_unreachable(&self) {
        self.reachable
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// This database with the keys that seal its secrets (set once, before
    /// the handle is shared).
    pub fn with_keys(mut self, keys: crate::sealed::Keyring) -> Db {
        self.keys = Arc::new(keys);
        self
    }

    /// The keys that seal this database's secrets.
    pub fn keys(&self) -> &crate::sealed::Keyring {
        &self.keys
    }

    pub fn backend(&self) -> Backend {
        match self.pools {
            Pools::Sqlite { .. } => Backend::Sqlite,
            Pools::Postgres { .. } => Backend::Postgres,
        }
    }

    /// Applies pending migrations of the live backend.
    pub async fn migrate(&self) -> StoreResult<()> {
        match &self.pools {
            Pools::Sqlite { write, .. } => crate::sqlite::migrate(write).await,
            Pools::Postgres { pool, .. } => crate::postgres::migrate(pool).await,
        }
    }

    /// Opens a write transaction on the live backend, in the writers' turn:
    /// SQLite's is `BEGIN IMMEDIATE` on its one writer connection (so a
    /// read-then-write transaction never fails to upgrade its lock);
    /// PostgreSQL's waits for `WriterTurn`. Bookkeeping takes the turn too:
    /// run beside the changes it was measured slower (bench/writes.sh: the
    /// machine's cores, not the lock, are what writers wait for), and one
    /// queue for every write leaves no order of locks to get wrong.
    async fn begin_inner(&self) -> StoreResult<TxInner> {
        Ok(match &self.pools {
            Pools::Sqlite { write, .. } => {
                TxInner::Sqlite(write.begin_with(crate::sqlite::BEGIN).await?)
            }
            Pools::Postgres { pool, turn } => {
                let held = turn.take().await?;
                TxInner::Postgres(pool.begin_with(BEGIN_IN_TURN).await?, Some(held))
            }
        })
    }

    /// Starts a change of record made by `ctx`.
    pub async fn begin_as(&self, ctx: &AuditCtx) -> StoreResult<Tx> {
        Ok(Tx {
            inner: self.begin_inner().await?,
            changes: self.changes.clone(),
            ctx: ctx.clone(),
            clock: self.clock.clone(),
            keys: self.keys.clone(),
            events: Vec::new(),
            outbox_ids: Vec::new(),
            touched: Vec::new(),
            history: crate::changes::HistoryWritten::None,
            scheduled_jobs: false,
        })
    }

    /// Starts a bookkeeping write (see `Bookkeeping`).
    pub(crate) async fn bookkeeping(&self) -> StoreResult<Bookkeeping> {
        Ok(Bookkeeping {
            inner: self.begin_inner().await?,
        })
    }

    /// Starts a bookkeeping write that does not wait for the writers' turn
    /// on PostgreSQL: for one that only inserts rows of its own and changes
    /// rows nobody else changes (a leased job's fan-out), so it cannot take
    /// part in a deadlock, and its commit's flush to disk may share one with
    /// the writer in turn instead of queueing behind it.
    pub(crate) async fn bookkeeping_beside_turn(&self) -> StoreResult<Bookkeeping> {
        Ok(Bookkeeping {
            inner: match &self.pools {
                Pools::Sqlite { write, .. } => {
                    TxInner::Sqlite(write.begin_with(crate::sqlite::BEGIN).await?)
                }
                Pools::Postgres { pool, .. } => TxInner::Postgres(pool.begin().await?, None),
            },
        })
    }

    /// Runs a one-row `DELETE ... WHERE id = $1 RETURNING <page id>`;
    /// `NotFound(what)` when no row matched. Rows the deleted one owns go with
    /// it by foreign key.
    pub(crate) async fn delete_by_id(
        &self,
        ctx: &AuditCtx,
        id: i64,
        d: &Deletion,
    ) -> StoreResult<()> {
        let mut tx = self.begin_as(ctx).await?;
        if !d.before.is_empty() {
            on_tx!(&mut tx, |c| sqlx::query(d.before)
                .bind(id)
                .bind(self.clock.now().millis())
                .execute(c)
                .await?
                .rows_affected());
        }
        let page: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(d.sql)
            .bind(id)
            .fetch_optional(c)
            .await?);
        let page = page.ok_or(StoreError::NotFound(d.what))?;
        let audited = tx
            .audit(
                d.action,
                d.target_type,
                Some(id),
                serde_json::json!({ "statusPageId": page }),
            )
            .await?;
        tx.record((d.event)(page, id)).await?;
        tx.commit(audited).await
    }

    /// Follows the changes other processes commit until this one ends,
    /// bumping page versions: PostgreSQL's notifications from every
    /// instance, or SQLite's outbox, where the command line (`upstate
    /// import`, `apply`, `user`) writes beside the running service.
    pub async fn follow_changes(&self) {
        match &self.pools {
            Pools::Postgres { pool, .. } => crate::postgres::follow(pool, &self.changes).await,
            Pools::Sqlite { read, .. } => crate::sqlite::follow(read, &self.changes).await,
        }
    }

    /// How many bytes the database takes on disk (SQLite: the main file's
    /// pages; PostgreSQL: `pg_database_size` of this database).
    pub async fn size_bytes(&self) -> StoreResult<i64> {
        Ok(match &self.pools {
            Pools::Sqlite { read, .. } => {
                sqlx::query_scalar(
                    "SELECT p.page_count * s.page_size FROM pragma_page_count() p, pragma_page_size() s",
                )
                .fetch_one(read)
                .await?
            }
            Pools::Postgres { pool, .. } => {
                sqlx::query_scalar("SELECT pg_database_size(current_database())")
                    .fetch_one(pool)
                    .await?
            }
        })
    }

    /// Each connection pool's (name, open connections, idle ones): SQLite
    /// has a pool of readers and one writer, PostgreSQL one pool.
    pub fn pool_figures(&self) -> Vec<(&'static str, u32, usize)> {
        match &self.pools {
            Pools::Sqlite { read, write } => vec![
                ("read", read.size(), read.num_idle()),
                ("write", write.size(), write.num_idle()),
            ],
            Pools::Postgres { pool, .. } => vec![("main", pool.size(), pool.num_idle())],
        }
    }

    /// Waits for in-flight queries and closes every connection.
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { read, write } => {
                read.close().await;
                write.close().await;
            }
            Pools::Postgres { pool, .. } => pool.close().await,
        }
    }
}

impl Tx {
    /// Records a change event into the outbox, in this transaction, and
    /// stamps the page it changes (its public `lastUpdated`). After commit the
    /// page's snapshot is rebuilt and its live streams hear the event; on
    /// PostgreSQL the other instances read it from the outbox. PostgreSQL
    /// writes the events at commit, in the statement that ends the change
    /// (`postgres::write_outbox`): every round trip inside the writers' turn
    /// is one every other writer waits for.
    pub(crate) async fn record(&mut self, event: Event) -> StoreResult<()> {
        self.record_stamping(event, true).await
    }

    /// `record` for a change that wrote its page's `updated_at` itself: an
    /// import keeps the time the document carries.
    pub(crate) async fn record_unstamped(&mut self, event: Event) -> StoreResult<()> {
        self.record_stamping(event, false).await
    }

    async fn record_stamping(&mut self, event: Event, stamp: bool) -> StoreResult<()> {
        let page = event.page().filter(|_| stamp);
        if let TxInner::Sqlite(_) = self.inner {
            let now = self.clock.now().millis();
            let payload = crate::deliveries::payload(&event, self.ctx.quiet)?;
            // Status page 0: a change of every page (no foreign key to break).
            let id: i64 = on_tx!(self, |c| {
                sqlx::query_scalar(
                "INSERT INTO outbox (at, status_page_id, kind, payload) VALUES ($1, $2, $3, $4) RETURNING id"
            )
            .bind(now)
            .bind(event.page().unwrap_or(0))
            .bind(event.kind())
            .bind(&payload)
            .fetch_one(c)
            .await?
            });
            self.outbox_ids.push(id);
            if let Some(page) = page
                && !self.touched.contains(&page)
            {
                on_tx!(self, |c| sqlx::query(
                    "UPDATE status_pages SET updated_at = $1 WHERE id = $2"
                )
                .bind(now)
                .bind(page)
                .execute(c)
                .await?
                .rows_affected());
            }
        }
        if let Some(page) = page
            && !self.touched.contains(&page)
        {
            self.touched.push(page);
        }
        self.events.push(event);
        Ok(())
    }

    /// Notes that this transaction wrote (or deleted) status history of
    /// `component`: the page's snapshot reads that component's again.
    pub(crate) fn wrote_history(&mut self, component: Id) {
        use crate::changes::HistoryWritten as W;
        match &mut self.history {
            W::None => self.history = W::Components(vec![component]),
            W::Components(ids) if !ids.contains(&component) => ids.push(component),
            W::Components(_) | W::Unknown => {}
        }
    }

    /// Notes that this transaction wrote status history by other means
    /// than `wrote_history` (an import's rows): its pages are read again.
    pub(crate) fn rewrote_history(&mut self) {
        self.history = crate::changes::HistoryWritten::Unknown;
    }

    /// Commits the change with its audit event. The events it recorded bump
    /// their pages' versions before this returns (so an acknowledged write is
    /// never followed by a stale public read) and go to live listeners; on
    /// PostgreSQL one notification names their outbox rows to the other
    /// instances, delivered only if the commit happens. People are told of
    /// some changes: their fan-out job exists exactly when the change does.
    pub async fn commit(mut self, _audited: Audited) -> StoreResult<()> {
        let told = |e: &Event| upstate_core::notify::NOTIFIED_KINDS.contains(&e.kind());
        match &mut self.inner {
            TxInner::Sqlite(_) => {
                let ids: Vec<i64> = self
                    .outbox_ids
                    .iter()
                    .zip(&self.events)
                    .filter(|(_, e)| told(e))
                    .map(|(id, _)| *id)
                    .collect();
                if !ids.is_empty() {
                    self.schedule(&crate::work::Work::FanOut(ids), self.clock.now())
                        .await?;
                }
            }
            TxInner::Postgres(t, _) if self.events.is_empty() => {
                if self.scheduled_jobs {
                    crate::postgres::notify_jobs(t, &self.changes.jobs_payload()).await?;
                }
            }
            TxInner::Postgres(t, _) => {
                let written = crate::postgres::Outbox {
                    events: &self.events,
                    pages: &self.touched,
                    origin: &self.changes.jobs_payload(),
                    jobs_scheduled: self.scheduled_jobs,
                    at: self.clock.now(),
                    quiet: self.ctx.quiet,
                };
                crate::postgres::write_outbox(t, &written).await?;
                self.scheduled_jobs |= self.events.iter().any(told);
            }
        }
        match self.inner {
            TxInner::Sqlite(t) => {
                self.changes.mark_own(&self.outbox_ids);
                t.commit().await?
            }
            TxInner::Postgres(t, _turn) => t.commit().await?,
        }
        self.changes.committed_own(self.events, self.history);
        if self.scheduled_jobs {
            self.changes.jobs.notify_one();
        }
        Ok(())
    }
}

impl Bookkeeping {
    pub async fn commit(self) -> StoreResult<()> {
        match self.inner {
            TxInner::Sqlite(t) => t.commit().await?,
            TxInner::Postgres(t, _turn) => t.commit().await?,
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
    fn the_turn_is_taken_with_its_own_key() {
        assert!(super::BEGIN_IN_TURN.ends_with(&format!("({})", super::WRITER_LOCK)));
    }

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
