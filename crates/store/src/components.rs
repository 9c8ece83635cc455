//! Components and their status history. Every status a component takes is
//! written to `component_status_history` in the same transaction, which is
//! what uptime is computed from.

use crate::audit::{AuditCtx, changes};
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::rows::ComponentRow;
use crate::{groups, pages};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::*;

pub async fn list(
    db: &Db,
    page_id: Option<Id>,
    group_id: Option<Id>,
) -> StoreResult<Vec<Component>> {
    let rows: Vec<ComponentRow> = on_db!(db, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        component_cols!(),
        " FROM components WHERE ($1 IS NULL OR page_id = $1) AND ($2 IS NULL OR group_id = $2) ORDER BY page_id, position, id"
    ))
    .bind(page_id)
    .bind(group_id)
    .fetch_all(c)
    .await?
    });
    rows.into_iter().map(Component::try_from).collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Component> {
    let row: Option<ComponentRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        component_cols!(),
        " FROM components WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("component"))?.try_into()
}

pub(crate) async fn get_locked(tx: &mut Tx, id: Id) -> StoreResult<Component> {
    let row: Option<ComponentRow> = locked!(
        tx,
        concat!(
            "SELECT ",
            component_cols!(),
            " FROM components WHERE id = $1"
        ),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    row.ok_or(StoreError::NotFound("component"))?.try_into()
}

/// Checks that every id names a component of the given page.
pub(crate) async fn require_all_on_page(tx: &mut Tx, ids: &[Id], page_id: Id) -> StoreResult<()> {
    for &id in ids {
        let found: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
            "SELECT page_id FROM components WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(c)
        .await?);
        match found {
            None => {
                return Err(StoreError::invalid_ref(
                    "componentIds",
                    format!("no component with id {id}"),
                ));
            }
            Some(p) if p != page_id => {
                return Err(StoreError::invalid_ref(
                    "componentIds",
                    format!("component {id} belongs to another status page"),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// What sets a component's status besides people: its monitor, or the
/// vendor it follows (docs/third-party.md). One at most, or the two would
/// fight over its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driver {
    Monitor,
    Vendor,
}

/// Locks `component` for a new driver: the component must exist (422 on
/// `componentId`), and nothing may drive it yet (409 that says what does).
pub(crate) async fn lock_for_driver(tx: &mut Tx, component: Id, new: Driver) -> StoreResult<()> {
    get_locked(tx, component).await.map_err(|e| match e {
        StoreError::NotFound(_) => {
            StoreError::invalid_ref("componentId", format!("no component with id {component}"))
        }
        e => e,
    })?;
    let monitor: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT id FROM monitors WHERE component_id = $1"
    )
    .bind(component)
    .fetch_optional(c)
    .await?);
    let vendor: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT id FROM third_party WHERE component_id = $1"
    )
    .bind(component)
    .fetch_optional(c)
    .await?);
    let why = match (new, monitor, vendor) {
        (Driver::Monitor, Some(m), _) => {
            format!("has a monitor already (monitor {m}); change that one")
        }
        (Driver::Vendor, Some(m), _) => {
            format!("has a monitor (monitor {m}); remove it before following a vendor")
        }
        (Driver::Vendor, None, Some(v)) => {
            format!("follows a vendor already (third-party {v}); change that one")
        }
        (Driver::Monitor, None, Some(v)) => {
            format!("follows a vendor (third-party {v}); stop following before giving it a monitor")
        }
        (_, None, None) => return Ok(()),
    };
    Err(StoreError::Conflict(format!("component {component} {why}")))
}

/// Sets a component's status and records the change in its history; a no-op
/// when the status is unchanged, so history holds only real transitions.
pub(crate) async fn set_status(
    tx: &mut Tx,
    id: Id,
    from: ComponentStatus,
    to: ComponentStatus,
    at: Timestamp,
) -> StoreResult<()> {
    if from == to {
        return Ok(());
    }
    let page: Id = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "UPDATE components SET status = $1, updated_at = $2 WHERE id = $3 RETURNING page_id"
    )
    .bind(to.as_str())
    .bind(at.millis())
    .bind(id)
    .fetch_one(c)
    .await?);
    record_history(tx, id, to, at).await?;
    tx.record(Event::ComponentStatusChanged {
        page,
        component: id,
        from,
        to,
    })
    .await
}

/// A status a component had between two past moments (a past incident's
/// record): its history gains `status` at `from` and, at `to`, the status
/// it had just before `from` (operational when nothing was recorded).
pub(crate) async fn record_past(
    tx: &mut Tx,
    id: Id,
    status: ComponentStatus,
    from: Timestamp,
    to: Timestamp,
) -> StoreResult<()> {
    let before: Option<String> = on_tx!(&mut *tx, |c| {
        sqlx::query_scalar(
        "SELECT status FROM component_status_history WHERE component_id = $1 AND changed_at <= $2 \
         ORDER BY changed_at DESC, id DESC LIMIT 1"
    )
    .bind(id)
    .bind(from.millis())
    .fetch_optional(c)
    .await?
    });
    let before = match before {
        Some(b) => crate::rows::parse_enum("component status", &b)?,
        None => ComponentStatus::Operational,
    };
    record_history(tx, id, status, from).await?;
    record_history(tx, id, before, to).await
}

pub(crate) async fn record_history(
    tx: &mut Tx,
    id: Id,
    status: ComponentStatus,
    at: Timestamp,
) -> StoreResult<()> {
    tx.wrote_history(id);
    on_tx!(tx, |c| {
        sqlx::query("INSERT INTO component_status_history (component_id, status, changed_at) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(status.as_str())
            .bind(at.millis())
            .execute(c)
            .await?
            .rows_affected()
    });
    Ok(())
}

pub async fn create(db: &Db, ctx: &AuditCtx, new: NewComponent) -> StoreResult<Component> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, new.status_page_id, "statusPageId").await?;
    if let Some(g) = new.group_id {
        groups::require_on_page(&mut tx, g, new.status_page_id).await?;
    }
    let position = match new.order {
        Some(o) => o,
        None => on_tx!(&mut tx, |c| {
            sqlx::query_scalar::<_, i32>(
                "SELECT CAST(COALESCE(MAX(position), -1) + 1 AS INTEGER) FROM components WHERE page_id = $1",
            )
            .bind(new.status_page_id)
            .fetch_one(c)
            .await?
        }),
    };
    let row: ComponentRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
            "INSERT INTO components (page_id, group_id, name, description, status, position, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ",
            component_cols!()
        ))
        .bind(new.status_page_id)
        .bind(new.group_id)
        .bind(&new.name)
        .bind(&new.description)
        .bind(new.status.as_str())
        .bind(position)
        .bind(now.millis())
        .fetch_one(c)
        .await?
    });
    let component = Component::try_from(row)?;
    record_history(&mut tx, component.id, component.status, now).await?;
    let audited = tx
        .audit(
            Action::ComponentCreate,
            "component",
            Some(component.id),
            json!(component),
        )
        .await?;
    tx.record(Event::ComponentCreated {
        page: component.status_page_id,
        component: component.id,
    })
    .await?;
    tx.commit(audited).await?;
    Ok(component)
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: ComponentPatch,
) -> StoreResult<Component> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = get_locked(&mut tx, id).await?;
    let group_id = patch.group_id.apply(current.group_id);
    if let Some(g) = group_id.filter(|g| Some(*g) != current.group_id) {
        groups::require_on_page(&mut tx, g, current.status_page_id).await?;
    }
    let mut updated = Component {
        name: patch.name.clone().unwrap_or_else(|| current.name.clone()),
        description: patch
            .description
            .clone()
            .unwrap_or_else(|| current.description.clone()),
        group_id,
        order: patch.order.unwrap_or(current.order),
        status: patch.status.unwrap_or(current.status),
        ..current.clone()
    };
    // Only what changed is written: a monitor's or an operator's status
    // change is the usual patch, and it needs no other column.
    let others_changed = Component {
        status: current.status,
        ..updated.clone()
    } != current;
    if others_changed || updated.status != current.status {
        updated.updated_at = now;
    }
    if others_changed {
        on_tx!(&mut tx, |c| {
            sqlx::query("UPDATE components SET name = $1, description = $2, group_id = $3, position = $4, updated_at = $5 WHERE id = $6")
            .bind(&updated.name)
            .bind(&updated.description)
            .bind(updated.group_id)
            .bind(updated.order)
            .bind(now.millis())
            .bind(id)
            .execute(c)
            .await?
            .rows_affected()
        });
    }
    if updated.status != current.status {
        crate::monitors::take_over_if_by_hand(&mut tx, id).await?;
        set_status(&mut tx, id, current.status, updated.status, now).await?;
    }
    let audited = tx
        .audit(
            Action::ComponentUpdate,
            "component",
            Some(id),
            changes(&current, &updated),
        )
        .await?;
    // A status change is its own event (`set_status`); this one says that
    // anything else changed.
    if others_changed {
        tx.record(Event::ComponentUpdated {
            page: updated.status_page_id,
            component: id,
        })
        .await?;
    }
    tx.commit(audited).await?;
    Ok(updated)
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    db.delete_by_id(
        ctx,
        id,
        &crate::db::Deletion {
            sql: "DELETE FROM components WHERE id = $1 RETURNING page_id",
            what: "component",
            target_type: "component",
            action: upstate_core::audit::Action::ComponentDelete,
            event: |page, component| Event::ComponentDeleted { page, component },
            before: "",
        },
    )
    .await
}
