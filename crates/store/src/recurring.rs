//! Recurring maintenance templates and their expansion into windows
//! (docs/maintenance.md). Expansion is idempotent: each occurrence's window
//! is made once, whoever expands (the scheduler's sweep on any instance,
//! or `GET /api/maintenance/recurring`), because (recurring_id,
//! occurrence_start) is unique and the window's insert is the first write
//! of its transaction.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::{maintenance, pages};
use serde_json::json;
use upstate_core::audit::{Action, Actor};
use upstate_core::recurring::{EXPAND_MAX, Recurring, RecurringFields, occurrences};
use upstate_core::{Id, NewMaintenance, Timestamp};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    page_id: i64,
    title: String,
    description: String,
    rrule: String,
    first_start: String,
    time_zone: Option<String>,
    duration_minutes: i64,
    auto_start: bool,
    horizon_days: i64,
    component_ids: String,
    expanded_until: i64,
    created_at: i64,
    updated_at: i64,
}

impl From<Row> for Recurring {
    fn from(r: Row) -> Self {
        Recurring {
            id: r.id,
            status_page_id: r.page_id,
            title: r.title,
            description: r.description,
            rrule: r.rrule,
            first_start: r.first_start,
            time_zone: r.time_zone,
            duration_minutes: r.duration_minutes,
            auto_start: r.auto_start,
            horizon_days: r.horizon_days,
            component_ids: serde_json::from_str(&r.component_ids).unwrap_or_default(),
            created_at: Timestamp::from_millis(r.created_at),
            updated_at: Timestamp::from_millis(r.updated_at),
        }
    }
}

macro_rules! cols {
    () => {
        "id, page_id, title, description, rrule, first_start, time_zone, duration_minutes, auto_start, horizon_days, component_ids, expanded_until, created_at, updated_at"
    };
}

/// The fields of a stored template, for a change to apply over.
pub fn fields(r: &Recurring) -> RecurringFields {
    RecurringFields {
        status_page_id: r.status_page_id,
        title: r.title.clone(),
        description: r.description.clone(),
        rrule: r.rrule.clone(),
        first_start: r.first_start.clone(),
        time_zone: r.time_zone.clone(),
        duration_minutes: r.duration_minutes,
        auto_start: r.auto_start,
        horizon_days: r.horizon_days,
        component_ids: r.component_ids.clone(),
    }
}

pub async fn list(db: &Db, page: Option<Id>) -> StoreResult<Vec<Recurring>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM recurring_maintenance WHERE ($1 IS NULL OR page_id = $1) ORDER BY id"
    ))
    .bind(page)
    .fetch_all(c)
    .await?);
    Ok(rows.into_iter().map(Recurring::from).collect())
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Recurring> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM recurring_maintenance WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.map(Recurring::from)
        .ok_or(StoreError::NotFound("recurring maintenance"))
}

fn ids_json(ids: &[Id]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())
}

pub async fn create(db: &Db, ctx: &AuditCtx, f: &RecurringFields) -> StoreResult<Recurring> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, f.status_page_id, "statusPageId").await?;
    crate::components::require_all_on_page(&mut tx, &f.component_ids, f.status_page_id).await?;
    let id: i64 = on_tx!(&mut tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO recurring_maintenance (page_id, title, description, rrule, first_start, duration_minutes, auto_start, horizon_days, component_ids, created_at, updated_at, time_zone) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) RETURNING id"
    )
    .bind(f.status_page_id)
    .bind(&f.title)
    .bind(&f.description)
    .bind(&f.rrule)
    .bind(&f.first_start)
    .bind(f.duration_minutes)
    .bind(f.auto_start)
    .bind(f.horizon_days)
    .bind(ids_json(&f.component_ids))
    .bind(now)
    .bind(&f.time_zone)
    .fetch_one(c)
    .await?
    });
    let audited = tx
        .audit(Action::RecurringCreate, "recurring", Some(id), summary(f))
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

fn summary(f: &RecurringFields) -> serde_json::Value {
    json!({ "statusPageId": f.status_page_id, "title": f.title, "rrule": f.rrule, "firstStart": f.first_start, "timeZone": f.time_zone,
            "durationMinutes": f.duration_minutes, "autoStart": f.auto_start, "horizonDays": f.horizon_days,
            "componentIds": f.component_ids })
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    f: &RecurringFields,
) -> StoreResult<Recurring> {
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, f.status_page_id, "statusPageId").await?;
    crate::components::require_all_on_page(&mut tx, &f.component_ids, f.status_page_id).await?;
    let n = on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE recurring_maintenance SET page_id = $1, title = $2, description = $3, rrule = $4, first_start = $5, \
         duration_minutes = $6, auto_start = $7, horizon_days = $8, component_ids = $9, updated_at = $10, time_zone = $12 WHERE id = $11"
    )
    .bind(f.status_page_id)
    .bind(&f.title)
    .bind(&f.description)
    .bind(&f.rrule)
    .bind(&f.first_start)
    .bind(f.duration_minutes)
    .bind(f.auto_start)
    .bind(f.horizon_days)
    .bind(ids_json(&f.component_ids))
    .bind(db.clock.now().millis())
    .bind(id)
    .bind(&f.time_zone)
    .execute(c)
    .await?
    .rows_affected()
    });
    if n == 0 {
        return Err(StoreError::NotFound("recurring maintenance"));
    }
    let audited = tx
        .audit(Action::RecurringUpdate, "recurring", Some(id), summary(f))
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Deletes a template; the windows it made stay (they were announced).
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let row: Option<(i64, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "DELETE FROM recurring_maintenance WHERE id = $1 RETURNING page_id, title"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let (page, title) = row.ok_or(StoreError::NotFound("recurring maintenance"))?;
    let audited = tx
        .audit(
            Action::RecurringDelete,
            "recurring",
            Some(id),
            json!({ "statusPageId": page, "title": title }),
        )
        .await?;
    tx.commit(audited).await
}

/// The starts of a template's occurrences in `[from, until)`.
async fn starts(
    db: &Db,
    r: &Recurring,
    from: Timestamp,
    until: Timestamp,
) -> StoreResult<Vec<Timestamp>> {
    let page = pages::get(db, r.status_page_id).await?;
    occurrences(
        &r.rrule,
        &r.first_start,
        r.zone(&page.time_zone),
        from,
        until,
        EXPAND_MAX,
    )
    .map_err(|m| StoreError::invalid_ref("rrule", &m))
}

fn horizon(r: &Recurring, now: Timestamp) -> Timestamp {
    Timestamp::from_millis(now.millis() + r.horizon_days * 86_400_000)
}

/// The next starts of a template within its horizon from `now`.
pub async fn upcoming(db: &Db, r: &Recurring, now: Timestamp) -> StoreResult<Vec<Timestamp>> {
    starts(db, r, now, horizon(r, now)).await
}

/// Makes the windows of every template's occurrences up to its horizon
/// that were not made before; returns the ids made. Occurrences are made
/// once: past the template's watermark only (so a window an operator
/// deleted is not made again), and guarded by the unique occurrence.
pub async fn expand(db: &Db, now: Timestamp) -> StoreResult<Vec<Id>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM recurring_maintenance ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    expand_rows(db, rows, now).await
}

/// `expand` for one template: what creating or changing it makes at once
/// (the others are the scheduler's; expanding every template on each
/// write made a rule's creation cost as much as all the rules before it).
pub async fn expand_one(db: &Db, id: Id, now: Timestamp) -> StoreResult<Vec<Id>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM recurring_maintenance WHERE id = $1"
    ))
    .bind(id)
    .fetch_all(c)
    .await?);
    expand_rows(db, rows, now).await
}

async fn expand_rows(db: &Db, rows: Vec<Row>, now: Timestamp) -> StoreResult<Vec<Id>> {
    let ctx = AuditCtx::of(Actor::system("scheduler"));
    let mut made = Vec::new();
    for row in rows {
        let done = row.expanded_until;
        let r = Recurring::from(row);
        let until = horizon(&r, now);
        let from = Timestamp::from_millis(now.millis().max(done));
        if from >= until {
            continue;
        }
        let found = match starts(db, &r, from, until).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(recurring = r.id, error = %e, "recurring maintenance cannot be expanded");
                continue;
            }
        };
        // No occurrence since the watermark: it may stay where it is, as
        // no window lies between (the sweep runs every round, and a write
        // for each template each time was most of its cost).
        if found.is_empty() {
            continue;
        }
        // Components deleted since the template was made drop out.
        let alive: Vec<Id> = crate::components::list(db, Some(r.status_page_id), None)
            .await?
            .into_iter()
            .map(|c| c.id)
            .filter(|c| r.component_ids.contains(c))
            .collect();
        let windows: Vec<_> = found
            .into_iter()
            .map(|start| {
                let window = NewMaintenance {
                    title: r.title.clone(),
                    description: r.description.clone(),
                    status_page_id: r.status_page_id,
                    scheduled_start_time: start,
                    scheduled_end_time: Timestamp::from_millis(
                        start.millis() + r.duration_minutes * 60_000,
                    ),
                    auto_start: r.auto_start,
                    component_ids: alive.clone(),
                };
                (window, start)
            })
            .collect();
        made.extend(maintenance::create_occurrences(db, &ctx, r.id, &windows).await?);
        let mut tx = db.bookkeeping().await?;
        on_tx!(&mut tx, |c| {
            sqlx::query(
            "UPDATE recurring_maintenance SET expanded_until = CASE WHEN expanded_until < $1 THEN $1 ELSE expanded_until END WHERE id = $2"
        )
        .bind(until.millis())
        .bind(r.id)
        .execute(c)
        .await?
        .rows_affected()
        });
        tx.commit().await?;
    }
    Ok(made)
}
