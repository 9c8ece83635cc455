//! Maintenance windows. Transitions are compare-and-set on the status column,
//! so two instances (or the scheduler and an operator) racing on the same
//! window apply it once and the loser gets a 409.
//!
//! While a window is in progress its components show `maintenance`; when it
//! ends each goes back to what it showed before, unless someone changed it in
//! the meantime or another in-progress window still covers it.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::jobs::Work;
use crate::rows::{MaintenanceRow, UpdateRow, parse_enum};
use crate::timeline;
use crate::{components, pages};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::*;

#[derive(Debug, Clone, Default)]
pub struct MaintenanceFilter {
    pub page_id: Option<Id>,
    pub status: Option<MaintenanceStatus>,
    /// Only windows still to start (scheduled, start in the future).
    pub upcoming_after: Option<Timestamp>,
    /// Only windows starting at or after this instant and before the next.
    pub starting_between: Option<(Timestamp, Timestamp)>,
    /// Only windows scheduled to end at or after this instant.
    pub ending_after: Option<Timestamp>,
    /// Only finished (completed or cancelled) windows, or only unfinished ones.
    pub finished: Option<bool>,
    /// Latest start first (else earliest).
    pub newest_first: bool,
    /// At most this many (none: all).
    pub limit: Option<i64>,
    /// Skip this many (paging).
    pub offset: i64,
}

pub async fn list(db: &Db, f: &MaintenanceFilter) -> StoreResult<Vec<Maintenance>> {
    let status = f.status.map(MaintenanceStatus::as_str);
    let after = f.upcoming_after.map(Timestamp::millis);
    let (from, until) = f
        .starting_between
        .map(|(a, b)| (a.millis(), b.millis()))
        .unzip();
    let ending_after = f.ending_after.map(Timestamp::millis);
    let rows: Vec<MaintenanceRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        maintenance_cols!(),
        " FROM maintenance WHERE ($1 IS NULL OR page_id = $1) AND ($2 IS NULL OR status = $2) \
          AND ($3 IS NULL OR (status = 'scheduled' AND scheduled_start > $3)) \
          AND ($4 IS NULL OR scheduled_start >= $4) AND ($5 IS NULL OR scheduled_start < $5) \
          AND ($6 IS NULL OR scheduled_end >= $6) \
          AND ($7 IS NULL OR (status IN ('completed', 'cancelled')) = $7)",
        " ORDER BY CASE WHEN $8 THEN -scheduled_start ELSE scheduled_start END, \
           CASE WHEN $8 THEN -id ELSE id END LIMIT $9 OFFSET $10"
    ))
    .bind(f.page_id)
    .bind(status)
    .bind(after)
    .bind(from)
    .bind(until)
    .bind(ending_after)
    .bind(f.finished)
    .bind(f.newest_first)
    .bind(f.limit.unwrap_or(i64::from(i32::MAX)))
    .bind(f.offset)
    .fetch_all(c)
    .await?);
    assemble(db, rows).await
}

async fn assemble(db: &Db, rows: Vec<MaintenanceRow>) -> StoreResult<Vec<Maintenance>> {
    let ids: Vec<Id> = rows.iter().map(|r| r.id).collect();
    let mut children = timeline::of(
        db,
        &timeline::MAINTENANCE,
        &ids,
        UpdateRow::into_maintenance_update,
    )
    .await?;
    rows.into_iter()
        .map(|r| {
            let (updates, links) = children.take(r.id);
            r.into_maintenance(updates, links)
        })
        .collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Maintenance> {
    let row: Option<MaintenanceRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        maintenance_cols!(),
        " FROM maintenance WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    let row = row.ok_or(StoreError::NotFound("maintenance"))?;
    assemble(db, vec![row])
        .await?
        .pop()
        .ok_or(StoreError::NotFound("maintenance"))
}

async fn lock(tx: &mut Tx, id: Id) -> StoreResult<Maintenance> {
    let row: Option<MaintenanceRow> = locked!(
        tx,
        concat!(
            "SELECT ",
            maintenance_cols!(),
            " FROM maintenance WHERE id = $1"
        ),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    let row = row.ok_or(StoreError::NotFound("maintenance"))?;
    let links: Vec<i64> = on_tx!(tx, |c| {
        sqlx::query_scalar(
            "SELECT component_id FROM maintenance_components WHERE maintenance_id = $1 ORDER BY component_id",
        )
        .bind(id)
        .fetch_all(c)
        .await?
    });
    row.into_maintenance(vec![], links)
}

pub async fn create(db: &Db, ctx: &AuditCtx, new: NewMaintenance) -> StoreResult<Maintenance> {
    let id = insert(db, ctx, &new)
        .await?
        .ok_or(StoreError::NotFound("maintenance"))?;
    get(db, id).await
}

/// Makes the windows of a recurring template's occurrences, each
/// `(window, occurrence start)`, in one transaction: those that exist (made
/// before, or by another instance at the same moment) are left as they
/// are. The ids made. One transaction, not one per window: a template's
/// expansion is up to `EXPAND_MAX` windows, and as many commits (each one
/// a turn of the writers, a flush and a rebuilt page) made creating a rule
/// take seconds.
pub async fn create_occurrences(
    db: &Db,
    ctx: &AuditCtx,
    recurring: Id,
    windows: &[(NewMaintenance, Timestamp)],
) -> StoreResult<Vec<Id>> {
    let mut made = Vec::new();
    if windows.is_empty() {
        return Ok(made);
    }
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    // A template's windows share its page and components: checked once.
    if let Some((first, _)) = windows.first() {
        require_place(&mut tx, first).await?;
    }
    let mut audited = None;
    for (new, occurrence) in windows {
        if let Some((id, a)) =
            insert_in(&mut tx, now, false, new, Some((recurring, *occurrence))).await?
        {
            made.push(id);
            audited = Some(a);
        }
    }
    // Nothing made, nothing written: the transaction is let go.
    if let Some(audited) = audited {
        tx.commit(audited).await?;
    }
    Ok(made)
}

async fn insert(db: &Db, ctx: &AuditCtx, new: &NewMaintenance) -> StoreResult<Option<Id>> {
    let now = db.clock.now();
    // A window that is over already is a record of the past: kept as
    // completed, shown in the components' history, news to nobody.
    let past = new.scheduled_end_time <= now;
    let ctx = ctx.quiet_if(ctx.quiet || past);
    let mut tx = db.begin_as(&ctx).await?;
    require_place(&mut tx, new).await?;
    let Some((id, audited)) = insert_in(&mut tx, now, past, new, None).await? else {
        return Ok(None);
    };
    tx.commit(audited).await?;
    Ok(Some(id))
}

/// The window's page exists and its components are on it.
async fn require_place(tx: &mut Tx, new: &NewMaintenance) -> StoreResult<()> {
    pages::require_in(tx, new.status_page_id, "statusPageId").await?;
    components::require_all_on_page(tx, &new.component_ids, new.status_page_id).await
}

/// Writes one window in `tx` at `now` (`past`: over already, kept as completed):
/// its id, or None when its occurrence's window exists (nothing was
/// written then).
async fn insert_in(
    tx: &mut Tx,
    now: Timestamp,
    past: bool,
    new: &NewMaintenance,
    occurrence: Option<(Id, Timestamp)>,
) -> StoreResult<Option<(Id, crate::writer::Audited)>> {
    let status = if past {
        MaintenanceStatus::Completed
    } else {
        MaintenanceStatus::Scheduled
    };
    let id: Option<i64> = on_tx!(&mut *tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO maintenance (page_id, title, description, status, scheduled_start, scheduled_end, auto_start, created_at, updated_at, recurring_id, occurrence_start) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10) ON CONFLICT (recurring_id, occurrence_start) DO NOTHING RETURNING id"
    )
    .bind(new.status_page_id)
    .bind(&new.title)
    .bind(&new.description)
    .bind(status.as_str())
    .bind(new.scheduled_start_time.millis())
    .bind(new.scheduled_end_time.millis())
    .bind(new.auto_start)
    .bind(now.millis())
    .bind(occurrence.map(|o| o.0))
    .bind(occurrence.map(|o| o.1.millis()))
    .fetch_optional(c)
    .await?
    });
    let Some(id) = id else {
        // The occurrence's window exists.
        return Ok(None);
    };
    for cid in &new.component_ids {
        link(tx, id, *cid).await?;
    }
    let mut summary = json!({ "title": &new.title, "statusPageId": new.status_page_id, "scheduledStartTime": new.scheduled_start_time, "scheduledEndTime": new.scheduled_end_time, "autoStart": new.auto_start, "componentIds": &new.component_ids });
    if let Some((recurring, _)) = occurrence {
        summary["recurringId"] = json!(recurring);
    }
    if past {
        summary["backdated"] = json!(true);
        for cid in &new.component_ids {
            components::record_past(
                tx,
                *cid,
                upstate_core::ComponentStatus::Maintenance,
                new.scheduled_start_time,
                new.scheduled_end_time,
            )
            .await?;
        }
    }
    let audited = tx
        .audit(Action::MaintenanceCreate, "maintenance", Some(id), summary)
        .await?;
    if !past {
        plan(tx, id).await?;
    }
    tx.record(Event::MaintenanceScheduled {
        page: new.status_page_id,
        maintenance: id,
    })
    .await?;
    Ok(Some((id, audited)))
}

async fn link(tx: &mut Tx, maintenance_id: Id, component_id: Id) -> StoreResult<()> {
    on_tx!(tx, |c| sqlx::query(
        "INSERT INTO maintenance_components (maintenance_id, component_id) VALUES ($1, $2)"
    )
    .bind(maintenance_id)
    .bind(component_id)
    .execute(c)
    .await?
    .rows_affected());
    Ok(())
}

/// The `prev_status` of another in-progress window that already holds this
/// component in maintenance, if any.
async fn held_by_other(
    tx: &mut Tx,
    maintenance_id: Id,
    component_id: Id,
) -> StoreResult<Option<Option<String>>> {
    let row: Option<(Option<String>,)> = on_tx!(tx, |c| {
        sqlx::query_as(
            "SELECT mc.prev_status FROM maintenance_components mc JOIN maintenance m ON m.id = mc.maintenance_id \
         WHERE mc.component_id = $1 AND m.status = 'in_progress' AND m.id <> $2 ORDER BY m.id LIMIT 1",
        )
        .bind(component_id)
        .bind(maintenance_id)
        .fetch_optional(c)
        .await?
    });
    Ok(row.map(|r| r.0))
}

/// Puts one component into maintenance for this window, remembering what it
/// showed before (inherited from an overlapping window that got there first).
async fn enter(
    tx: &mut Tx,
    maintenance_id: Id,
    component_id: Id,
    at: Timestamp,
) -> StoreResult<()> {
    let component = components::get_locked(tx, component_id).await?;
    let prev = match held_by_other(tx, maintenance_id, component_id).await? {
        Some(inherited) if component.status == ComponentStatus::Maintenance => inherited,
        _ => Some(component.status.as_str().to_string()),
    };
    on_tx!(&mut *tx, |c| {
        sqlx::query(
            "UPDATE maintenance_components SET prev_status = $1 WHERE maintenance_id = $2 AND component_id = $3",
        )
        .bind(prev)
        .bind(maintenance_id)
        .bind(component_id)
        .execute(c)
        .await?
        .rows_affected()
    });
    components::set_status(
        tx,
        component_id,
        component.status,
        ComponentStatus::Maintenance,
        at,
    )
    .await
}

/// Gives one component back after this window, when nobody changed it meanwhile
/// and no other in-progress window still covers it.
async fn leave(
    tx: &mut Tx,
    maintenance_id: Id,
    component_id: Id,
    at: Timestamp,
) -> StoreResult<()> {
    let component = components::get_locked(tx, component_id).await?;
    if component.status != ComponentStatus::Maintenance
        || held_by_other(tx, maintenance_id, component_id)
            .await?
            .is_some()
    {
        return Ok(());
    }
    let prev: Option<String> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT prev_status FROM maintenance_components WHERE maintenance_id = $1 AND component_id = $2"
    )
    .bind(maintenance_id)
    .bind(component_id)
    .fetch_optional(c)
    .await?)
    .flatten();
    let back = match prev {
        Some(p) => parse_enum("component status", &p)?,
        None => ComponentStatus::Operational,
    };
    let back = if back == ComponentStatus::Maintenance {
        ComponentStatus::Operational
    } else {
        back
    };
    // A component that mirrors a vendor goes back to what the vendor says
    // now: its polls during the window were read but left the component
    // alone, and an unchanged vendor moves nothing later.
    let vendor: Option<String> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT vendor_status FROM third_party WHERE component_id = $1"
    )
    .bind(component_id)
    .fetch_optional(c)
    .await?)
    .flatten();
    let back = match vendor.map(|v| parse_enum::<ComponentStatus>("component status", &v)) {
        Some(Ok(v)) if v != ComponentStatus::Maintenance => v,
        Some(Err(e)) => return Err(e),
        _ => back,
    };
    components::set_status(tx, component_id, ComponentStatus::Maintenance, back, at).await
}

async fn add_update(
    tx: &mut Tx,
    maintenance_id: Id,
    status: MaintenanceStatus,
    message: &str,
    at: Timestamp,
) -> StoreResult<()> {
    on_tx!(tx, |c| {
        sqlx::query(
            "INSERT INTO maintenance_updates (maintenance_id, status, message, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(maintenance_id)
        .bind(status.as_str())
        .bind(message)
        .bind(at.millis())
        .execute(c)
        .await?
        .rows_affected()
    });
    Ok(())
}

/// Applies start, complete or cancel. Refused moves are `StoreError::Transition`.
pub async fn transition(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    action: MaintenanceAction,
    message: &str,
) -> StoreResult<Maintenance> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = lock(&mut tx, id).await?;
    let next = current.status.apply(action)?;
    let changed = on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE maintenance SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4"
    )
    .bind(next.as_str())
    .bind(now.millis())
    .bind(id)
    .bind(current.status.as_str())
    .execute(c)
    .await?
    .rows_affected());
    if changed != 1 {
        return Err(StoreError::Conflict(
            "the maintenance changed state meanwhile; reload and retry".into(),
        ));
    }
    for &cid in &current.affected_components {
        match (current.status, next) {
            (_, MaintenanceStatus::InProgress) => enter(&mut tx, id, cid, now).await?,
            (MaintenanceStatus::InProgress, _) => leave(&mut tx, id, cid, now).await?,
            _ => {}
        }
    }
    add_update(&mut tx, id, next, message, now).await?;
    let audited = tx
        .audit(
            Action::from(action),
            "maintenance",
            Some(id),
            json!({ "from": current.status, "to": next, "message": message }),
        )
        .await?;
    plan(&mut tx, id).await?;
    tx.record(Event::maintenance_moved(current.status_page_id, id, next))
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: MaintenancePatch,
) -> StoreResult<Maintenance> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = lock(&mut tx, id).await?;
    patch.check_window(&current).map_err(|e| {
        let first = e.0.into_iter().next();
        StoreError::invalid_ref(
            "scheduledEndTime",
            first.map(|f| f.message).unwrap_or_default(),
        )
    })?;
    if let Some(ids) = &patch.component_ids {
        components::require_all_on_page(&mut tx, ids, current.status_page_id).await?;
        let in_progress = current.status == MaintenanceStatus::InProgress;
        for &gone in current
            .affected_components
            .iter()
            .filter(|c| !ids.contains(c))
        {
            if in_progress {
                leave(&mut tx, id, gone, now).await?;
            }
            on_tx!(&mut tx, |c| sqlx::query(
                "DELETE FROM maintenance_components WHERE maintenance_id = $1 AND component_id = $2"
            )
            .bind(id)
            .bind(gone)
            .execute(c)
            .await?
            .rows_affected());
        }
        for &added in ids
            .iter()
            .filter(|c| !current.affected_components.contains(c))
        {
            link(&mut tx, id, added).await?;
            if in_progress {
                enter(&mut tx, id, added, now).await?;
            }
        }
    }
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE maintenance SET title = $1, description = $2, scheduled_start = $3, scheduled_end = $4, auto_start = $5, updated_at = $6 WHERE id = $7"
    )
    .bind(patch.title.clone().unwrap_or(current.title))
    .bind(patch.description.clone().unwrap_or(current.description))
    .bind(patch.scheduled_start_time.unwrap_or(current.scheduled_start_time).millis())
    .bind(patch.scheduled_end_time.unwrap_or(current.scheduled_end_time).millis())
    .bind(patch.auto_start.unwrap_or(current.auto_start))
    .bind(now.millis())
    .bind(id)
    .execute(c)
    .await?
        .rows_affected()
    });
    let summary = json!({ "title": &patch.title, "description": patch.description.is_some(), "scheduledStartTime": patch.scheduled_start_time, "scheduledEndTime": patch.scheduled_end_time, "autoStart": patch.auto_start, "componentIds": &patch.component_ids });
    let audited = tx
        .audit(Action::MaintenanceUpdate, "maintenance", Some(id), summary)
        .await?;
    plan(&mut tx, id).await?;
    tx.record(Event::MaintenanceUpdated {
        page: current.status_page_id,
        maintenance: id,
    })
    .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Deleting an in-progress window first gives its components back.
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = lock(&mut tx, id).await?;
    if current.status == MaintenanceStatus::InProgress {
        on_tx!(&mut tx, |c| sqlx::query(
            "UPDATE maintenance SET status = 'cancelled' WHERE id = $1"
        )
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
        for &cid in &current.affected_components {
            leave(&mut tx, id, cid, now).await?;
        }
    }
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM maintenance WHERE id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::MaintenanceDelete,
            "maintenance",
            Some(id),
            json!({ "title": &current.title, "status": current.status }),
        )
        .await?;
    tx.unschedule(&Work::MoveMaintenance(id)).await?;
    tx.record(Event::MaintenanceDeleted {
        page: current.status_page_id,
        maintenance: id,
    })
    .await?;
    tx.commit(audited).await
}

/// Windows the scheduler must move now: auto-start windows whose start has
/// come (start) and in-progress auto-start windows whose end has come (complete).
/// The name of a window's one job.
pub fn job_key(id: Id) -> String {
    Work::MoveMaintenance(id).key()
}

/// Keeps a window's job in step with the window, in the transaction that
/// changed it: an auto-start window that is scheduled has its job at its
/// start, one in progress at its end; any other has none.
async fn plan(tx: &mut Tx, id: Id) -> StoreResult<()> {
    let row: Option<(String, bool, i64, i64)> = on_tx!(&mut *tx, |c| {
        sqlx::query_as(
        "SELECT status, auto_start, scheduled_start, scheduled_end FROM maintenance WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?
    });
    let due = match row {
        Some((status, true, start, _)) if status == "scheduled" => Some(start),
        Some((status, true, _, end)) if status == "in_progress" => Some(end),
        _ => None,
    };
    match due {
        Some(at) => {
            tx.schedule(&Work::MoveMaintenance(id), Timestamp::from_millis(at))
                .await
        }
        None => tx.unschedule(&Work::MoveMaintenance(id)).await,
    }
}

/// The move a window is due for at `now`, if any (what its job does).
pub async fn due_move(db: &Db, id: Id, now: Timestamp) -> StoreResult<Option<MaintenanceAction>> {
    let m = get(db, id).await?;
    Ok(match m.status {
        MaintenanceStatus::Scheduled if m.auto_start && m.scheduled_start_time <= now => {
            Some(MaintenanceAction::Start)
        }
        MaintenanceStatus::InProgress if m.auto_start && m.scheduled_end_time <= now => {
            Some(MaintenanceAction::Complete)
        }
        _ => None,
    })
}
