//! Third-party components (docs/third-party.md): a component that follows
//! a vendor's published status. A poll's outcome is recorded in one
//! transaction with what it changes: the follow's vendor fields and, when
//! the vendor's status moved, the component (history, audit by the actor
//! `third-party`, and the outbox event, quiet unless the operator asked
//! subscribers to hear of it).
//!
//! The component moves only when the vendor's status changes, so a
//! person's move stands until the vendor says something new. Polls are
//! leased like monitors' checks, so with several instances each runs once.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::audit::{Action, Actor};
use upstate_core::events::Event;
use upstate_core::third_party::{Follow, FollowConfig, Reading, ThirdPartyMark, VendorComponent};
use upstate_core::{ComponentStatus, Id, SourceKind, Timestamp};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    component_id: i64,
    kind: String,
    url: String,
    vendor_component: String,
    link: String,
    notify: bool,
    interval_seconds: i64,
    feed_status: String,
    vendor_name: String,
    vendor_url: String,
    vendor_status: Option<String>,
    vendor_components: String,
    etag: Option<String>,
    last_modified: Option<String>,
    last_polled_at: Option<i64>,
    last_error: Option<String>,
    next_run_at: i64,
    locked_until: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

macro_rules! cols {
    () => {
        "id, component_id, kind, url, vendor_component, link, notify, interval_seconds, feed_status, \
         vendor_name, vendor_url, vendor_status, vendor_components, etag, last_modified, last_polled_at, \
         last_error, next_run_at, locked_until, created_at, updated_at"
    };
}

/// A follow with what only the store and the poller need.
#[derive(Debug, Clone)]
pub struct Stored {
    pub follow: Follow,
    /// The vendor's validators, sent back on the next poll.
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// Until when the instance polling it holds it.
    pub lease: Option<i64>,
}

impl TryFrom<Row> for Stored {
    type Error = StoreError;
    fn try_from(r: Row) -> StoreResult<Stored> {
        let bad = |what: &str| StoreError::Config(format!("third-party {}: bad {what}", r.id));
        let kind: SourceKind = r.kind.parse().map_err(|_| bad("kind"))?;
        let feed_status: ComponentStatus = r.feed_status.parse().map_err(|_| bad("feed_status"))?;
        let vendor_components: Vec<VendorComponent> =
            serde_json::from_str(&r.vendor_components).unwrap_or_default();
        Ok(Stored {
            follow: Follow {
                id: r.id,
                component_id: r.component_id,
                config: FollowConfig {
                    kind,
                    url: r.url,
                    vendor_component: r.vendor_component,
                    link: r.link,
                    notify: r.notify,
                    interval_seconds: r.interval_seconds,
                    feed_status,
                },
                vendor_name: r.vendor_name,
                vendor_url: r.vendor_url,
                vendor_status: r.vendor_status.and_then(|s| s.parse().ok()),
                vendor_components,
                last_polled_at: r.last_polled_at.map(Timestamp::from_millis),
                last_error: r.last_error,
                next_poll_at: Timestamp::from_millis(r.next_run_at),
                created_at: Timestamp::from_millis(r.created_at),
                updated_at: Timestamp::from_millis(r.updated_at),
            },
            etag: r.etag,
            last_modified: r.last_modified,
            lease: r.locked_until,
        })
    }
}

pub async fn list(db: &Db) -> StoreResult<Vec<Follow>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM third_party ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter()
        .map(|r| Stored::try_from(r).map(|s| s.follow))
        .collect()
}

pub async fn stored(db: &Db, id: Id) -> StoreResult<Stored> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM third_party WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("third-party component"))?
        .try_into()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Follow> {
    Ok(stored(db, id).await?.follow)
}

/// The follow of a component, if it has one.
pub async fn of_component(db: &Db, component: Id) -> StoreResult<Option<Follow>> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM third_party WHERE component_id = $1"
    ))
    .bind(component)
    .fetch_optional(c)
    .await?);
    row.map(|r| Stored::try_from(r).map(|s| s.follow))
        .transpose()
}

/// The marks of a page's third-party components, for its public reads.
pub async fn marks(db: &Db, page: Id) -> StoreResult<Vec<(Id, ThirdPartyMark)>> {
    let rows: Vec<Row> = on_db!(db, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM third_party WHERE component_id IN (SELECT id FROM components WHERE page_id = $1) ORDER BY id"
    ))
    .bind(page)
    .fetch_all(c)
    .await?
    });
    rows.into_iter()
        .map(|r| Stored::try_from(r).map(|s| (s.follow.component_id, s.follow.mark())))
        .collect()
}

/// The follow, locked after its component: the order deleting the
/// component takes (its cascade reaches the follow after the component's
/// row), so a poll and a delete never wait on each other.
async fn locked(tx: &mut Tx, id: Id) -> StoreResult<Stored> {
    let component: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT component_id FROM third_party WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let component = component.ok_or(StoreError::NotFound("third-party component"))?;
    crate::components::get_locked(tx, component).await?;
    let row: Option<Row> = locked!(
        tx,
        concat!("SELECT ", cols!(), " FROM third_party WHERE id = $1"),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    row.ok_or(StoreError::NotFound("third-party component"))?
        .try_into()
}

/// Tells the page's readers its mark changed (the snapshot is rebuilt).
async fn touch(tx: &mut Tx, component: Id) -> StoreResult<()> {
    let page = crate::components::get_locked(tx, component)
        .await?
        .status_page_id;
    tx.record(Event::ComponentUpdated { page, component }).await
}

/// Makes `component` follow a vendor; its first poll runs at once. A
/// component has one follow, and none while a monitor checks it (two
/// sources of truth would fight over its status).
pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    component: Id,
    c: &FollowConfig,
) -> StoreResult<Follow> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    crate::components::lock_for_driver(&mut tx, component, crate::components::Driver::Vendor)
        .await?;
    let id: i64 = on_tx!(&mut tx, |x| {
        sqlx::query_scalar(
        "INSERT INTO third_party (component_id, kind, url, vendor_component, link, notify, interval_seconds, \
         feed_status, next_run_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $9) RETURNING id"
    )
    .bind(component)
    .bind(c.kind.as_str())
    .bind(&c.url)
    .bind(&c.vendor_component)
    .bind(&c.link)
    .bind(c.notify)
    .bind(c.interval_seconds)
    .bind(c.feed_status.as_str())
    .bind(now.millis())
    .fetch_one(x)
    .await?
    });
    touch(&mut tx, component).await?;
    let audited = tx
        .audit(
            Action::ThirdPartyCreate,
            "third_party",
            Some(id),
            json!({ "componentId": component, "config": c }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Changes a follow. A new source (kind, address or vendor component) is
/// read afresh at once: its validators and last status are forgotten.
pub async fn update(db: &Db, ctx: &AuditCtx, id: Id, c: &FollowConfig) -> StoreResult<Follow> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = locked(&mut tx, id).await?;
    let old = &current.follow.config;
    let fresh =
        old.kind != c.kind || old.url != c.url || old.vendor_component != c.vendor_component;
    on_tx!(&mut tx, |x| {
        sqlx::query(
        "UPDATE third_party SET kind = $1, url = $2, vendor_component = $3, link = $4, notify = $5, \
         interval_seconds = $6, feed_status = $7, updated_at = $8, \
         etag = CASE WHEN $9 THEN NULL ELSE etag END, last_modified = CASE WHEN $9 THEN NULL ELSE last_modified END, \
         vendor_status = CASE WHEN $9 THEN NULL ELSE vendor_status END, \
         next_run_at = CASE WHEN $9 THEN $8 ELSE next_run_at END, \
         locked_until = CASE WHEN $9 THEN NULL ELSE locked_until END WHERE id = $10"
    )
    .bind(c.kind.as_str())
    .bind(&c.url)
    .bind(&c.vendor_component)
    .bind(&c.link)
    .bind(c.notify)
    .bind(c.interval_seconds)
    .bind(c.feed_status.as_str())
    .bind(now.millis())
    .bind(fresh)
    .bind(id)
    .execute(x)
    .await?
    .rows_affected()
    });
    touch(&mut tx, current.follow.component_id).await?;
    let audited = tx
        .audit(
            Action::ThirdPartyUpdate,
            "third_party",
            Some(id),
            json!({ "componentId": current.follow.component_id, "config": c }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Stops following: the component keeps its status, and is the team's again.
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let current = locked(&mut tx, id).await?;
    on_tx!(&mut tx, |x| sqlx::query(
        "DELETE FROM third_party WHERE id = $1"
    )
    .bind(id)
    .execute(x)
    .await?
    .rows_affected());
    touch(&mut tx, current.follow.component_id).await?;
    let audited = tx
        .audit(
            Action::ThirdPartyDelete,
            "third_party",
            Some(id),
            json!({ "componentId": current.follow.component_id }),
        )
        .await?;
    tx.commit(audited).await
}

/// Leases the follows whose poll is due: (id, lease token).
pub async fn lease_due(
    db: &Db,
    now: Timestamp,
    lease_ms: i64,
    limit: i64,
) -> StoreResult<Vec<(Id, i64)>> {
    let sql = (
        crate::postgres::LEASE_THIRD_PARTY,
        crate::sqlite::LEASE_THIRD_PARTY,
    );
    crate::jobs::lease_rows(db, sql, now, lease_ms, limit).await
}

/// When the next poll is due on any follow.
pub async fn next_due(db: &Db) -> StoreResult<Option<Timestamp>> {
    let at: Option<i64> = on_db!(db, |c| {
        sqlx::query_scalar(
        "SELECT MIN(CASE WHEN locked_until IS NULL OR locked_until < next_run_at THEN next_run_at ELSE locked_until END) \
         FROM third_party"
    )
    .fetch_one(c)
    .await?
    });
    Ok(at.map(Timestamp::from_millis))
}

/// What one poll found.
#[derive(Debug, Clone)]
pub enum Polled {
    /// The vendor answered with something readable.
    Read {
        reading: Reading,
        etag: Option<String>,
        last_modified: Option<String>,
    },
    /// 304: nothing changed since the validators we sent.
    Unchanged,
    /// Nothing could be read; the component stays as it is (a vendor we
    /// cannot reach is not a vendor that is down).
    Failed(String),
}

/// Records a poll made under `lease` (None: "poll now" by a person),
/// moves the component when the vendor's status changed, and sets the
/// next poll at `next_run_at`. A lease that is no longer ours records
/// nothing: `Ok(None)`. Returns the component's move, if any.
pub async fn record(
    db: &Db,
    id: Id,
    lease: Option<i64>,
    polled: &Polled,
    next_run_at: Timestamp,
) -> StoreResult<Option<Option<(ComponentStatus, ComponentStatus)>>> {
    let now = db.clock.now();
    let ctx = AuditCtx::of(Actor::system("third-party"));
    let mut tx = db.begin_as(&ctx).await?;
    let s = match locked(&mut tx, id).await {
        Ok(s) => s,
        // Stopped following while the poll was out.
        Err(StoreError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    if lease.is_some() && s.lease != lease {
        return Ok(None);
    }
    // Quiet unless the operator asked subscribers to hear of the vendor.
    tx.ctx = tx.ctx.quiet_if(!s.follow.config.notify);
    let mut moved = None;
    match polled {
        Polled::Read {
            reading,
            etag,
            last_modified,
        } => {
            let components =
                serde_json::to_string(&reading.components).unwrap_or_else(|_| "[]".into());
            on_tx!(&mut tx, |x| {
                sqlx::query(
                "UPDATE third_party SET vendor_name = $1, vendor_url = $2, vendor_status = $3, vendor_components = $4, \
                 etag = $5, last_modified = $6, last_polled_at = $7, last_error = NULL, next_run_at = $8, \
                 locked_until = NULL WHERE id = $9"
            )
            .bind(&reading.vendor_name)
            .bind(&reading.vendor_url)
            .bind(reading.status.as_str())
            .bind(&components)
            .bind(etag)
            .bind(last_modified)
            .bind(now.millis())
            .bind(next_run_at.millis())
            .bind(id)
            .execute(x)
            .await?
            .rows_affected()
            });
            if s.follow.vendor_status != Some(reading.status) {
                moved = follow_vendor(
                    &mut tx,
                    s.follow.component_id,
                    s.follow.vendor_status,
                    reading.status,
                    now,
                )
                .await?;
            }
            if s.follow.vendor_name != reading.vendor_name
                || s.follow.vendor_url != reading.vendor_url
            {
                touch(&mut tx, s.follow.component_id).await?;
            }
        }
        Polled::Unchanged | Polled::Failed(_) => {
            let error = match polled {
                Polled::Failed(e) => Some(e.as_str()),
                _ => None,
            };
            on_tx!(&mut tx, |x| {
                sqlx::query(
                "UPDATE third_party SET last_polled_at = $1, last_error = $2, next_run_at = $3, locked_until = NULL WHERE id = $4"
            )
            .bind(now.millis())
            .bind(error)
            .bind(next_run_at.millis())
            .bind(id)
            .execute(x)
            .await?
            .rows_affected()
            });
        }
    }
    let audited = match moved {
        Some((from, to)) => {
            tx.audit(
                Action::ThirdPartyStatus,
                "component",
                Some(s.follow.component_id),
                json!({ "thirdPartyId": id, "from": from, "to": to, "vendor": s.follow.mark().vendor }),
            )
            .await?
        }
        None => crate::audit::Audited::bookkeeping(),
    };
    tx.commit(audited).await?;
    Ok(Some(moved))
}

/// Moves the component to the vendor's new status, unless it is under one
/// of the team's own maintenance windows (a window the vendor set is the
/// vendor's to end) or already there.
async fn follow_vendor(
    tx: &mut Tx,
    component: Id,
    before: Option<ComponentStatus>,
    to: ComponentStatus,
    at: Timestamp,
) -> StoreResult<Option<(ComponentStatus, ComponentStatus)>> {
    let current = crate::components::get_locked(tx, component).await?;
    let ours = current.status == ComponentStatus::Maintenance
        && before != Some(ComponentStatus::Maintenance);
    if current.status == to || ours {
        return Ok(None);
    }
    crate::components::set_status(tx, component, current.status, to, at).await?;
    Ok(Some((current.status, to)))
}
