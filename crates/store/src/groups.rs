//! Component groups. A new group goes last on its page; deleting a group
//! leaves its components on the page, ungrouped (`ON DELETE SET NULL`).

use crate::audit::{AuditCtx, changes};
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::pages;
use crate::rows::GroupRow;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::*;

pub async fn list(db: &Db, page_id: Option<Id>) -> StoreResult<Vec<ComponentGroup>> {
    let rows: Vec<GroupRow> = on_db!(db, |c| {
        sqlx::query_as(concat!(
            "SELECT ",
            group_cols!(),
            " FROM component_groups WHERE ($1 IS NULL OR page_id = $1) ORDER BY page_id, position, id"
        ))
        .bind(page_id)
        .fetch_all(c)
        .await?
    });
    Ok(rows.into_iter().map(ComponentGroup::from).collect())
}

pub async fn get(db: &Db, id: Id) -> StoreResult<ComponentGroup> {
    let row: Option<GroupRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        group_cols!(),
        " FROM component_groups WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.map(ComponentGroup::from)
        .ok_or(StoreError::NotFound("component group"))
}

/// Checks that a group exists and is on the given page.
pub(crate) async fn require_on_page(tx: &mut Tx, group_id: Id, page_id: Id) -> StoreResult<()> {
    let found: Option<i64> = on_tx!(tx, |c| sqlx::query_scalar(
        "SELECT page_id FROM component_groups WHERE id = $1"
    )
    .bind(group_id)
    .fetch_optional(c)
    .await?);
    match found {
        None => Err(StoreError::invalid_ref(
            "groupId",
            format!("no component group with id {group_id}"),
        )),
        Some(p) if p != page_id => Err(StoreError::invalid_ref(
            "groupId",
            format!("component group {group_id} belongs to another status page"),
        )),
        Some(_) => Ok(()),
    }
}

pub async fn create(db: &Db, ctx: &AuditCtx, new: NewGroup) -> StoreResult<ComponentGroup> {
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, new.status_page_id, "statusPageId").await?;
    let position = match new.order {
        Some(o) => o,
        None => on_tx!(&mut tx, |c| {
            sqlx::query_scalar::<_, i32>(
                "SELECT CAST(COALESCE(MAX(position), -1) + 1 AS INTEGER) FROM component_groups WHERE page_id = $1",
            )
            .bind(new.status_page_id)
            .fetch_one(c)
            .await?
        }),
    };
    let row: GroupRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
            "INSERT INTO component_groups (page_id, name, position, created_at) VALUES ($1, $2, $3, $4) RETURNING ",
            group_cols!()
        ))
        .bind(new.status_page_id)
        .bind(&new.name)
        .bind(position)
        .bind(db.clock.now().millis())
        .fetch_one(c)
        .await?
    });
    let group = ComponentGroup::from(row);
    let audited = tx
        .audit(Action::GroupCreate, "group", Some(group.id), json!(group))
        .await?;
    tx.record(Event::GroupCreated {
        page: new.status_page_id,
        group: group.id,
    })
    .await?;
    tx.commit(audited).await?;
    Ok(group)
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: GroupPatch,
) -> StoreResult<ComponentGroup> {
    let mut tx = db.begin_as(ctx).await?;
    let current: ComponentGroup = locked!(
        &mut tx,
        concat!(
            "SELECT ",
            group_cols!(),
            " FROM component_groups WHERE id = $1"
        ),
        |c, q| {
            sqlx::query_as::<_, GroupRow>(q)
                .bind(id)
                .fetch_optional(c)
                .await?
        }
    )
    .ok_or(StoreError::NotFound("component group"))?
    .into();
    let row: GroupRow = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "UPDATE component_groups SET name = $1, position = $2 WHERE id = $3 RETURNING ",
        group_cols!()
    ))
    .bind(patch.name.unwrap_or(current.name.clone()))
    .bind(patch.order.unwrap_or(current.order))
    .bind(id)
    .fetch_one(c)
    .await?);
    let after = ComponentGroup::from(row);
    let audited = tx
        .audit(
            Action::GroupUpdate,
            "group",
            Some(id),
            changes(&current, &after),
        )
        .await?;
    tx.record(Event::GroupUpdated {
        page: current.status_page_id,
        group: id,
    })
    .await?;
    tx.commit(audited).await?;
    Ok(after)
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    db.delete_by_id(
        ctx,
        id,
        &crate::db::Deletion {
            sql: "DELETE FROM component_groups WHERE id = $1 RETURNING page_id",
            what: "component group",
            target_type: "group",
            action: upstate_core::audit::Action::GroupDelete,
            event: |page, group| Event::GroupDeleted { page, group },
            before: "",
        },
    )
    .await
}

/// Puts a page's groups and components in a new order (and components in
/// new groups), all at once. A list must name every group or component of
/// the page exactly once, so a stale screen cannot drop one.
pub async fn reorder(db: &Db, ctx: &AuditCtx, layout: &Layout) -> StoreResult<()> {
    let page = layout.status_page_id;
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, page, "statusPageId").await?;
    let mut groups: Vec<Id> = locked!(
        &mut tx,
        "SELECT id FROM component_groups WHERE page_id = $1",
        |c, q| sqlx::query_scalar(q).bind(page).fetch_all(c).await?
    );
    let mut comps: Vec<Id> = locked!(
        &mut tx,
        "SELECT id FROM components WHERE page_id = $1",
        |c, q| sqlx::query_scalar(q).bind(page).fetch_all(c).await?
    );
    groups.sort_unstable();
    comps.sort_unstable();
    if let Some(order) = &layout.group_ids {
        let mut given = order.clone();
        given.sort_unstable();
        if given != groups {
            return Err(StoreError::invalid_ref(
                "groupIds",
                "must list every group of this page exactly once",
            ));
        }
        for (i, g) in order.iter().enumerate() {
            on_tx!(&mut tx, |c| sqlx::query(
                "UPDATE component_groups SET position = $1 WHERE id = $2"
            )
            .bind(i as i32)
            .bind(*g)
            .execute(c)
            .await?
            .rows_affected());
        }
    }
    if let Some(places) = &layout.components {
        let mut given: Vec<Id> = places.iter().map(|(c, _)| *c).collect();
        given.sort_unstable();
        if given != comps {
            return Err(StoreError::invalid_ref(
                "components",
                "must list every component of this page exactly once",
            ));
        }
        if places
            .iter()
            .any(|(_, g)| g.is_some_and(|g| groups.binary_search(&g).is_err()))
        {
            return Err(StoreError::invalid_ref(
                "components",
                "names a group that is not on this page",
            ));
        }
        let now = db.clock.now().millis();
        for (i, (id, group)) in places.iter().enumerate() {
            on_tx!(&mut tx, |c| sqlx::query(
                "UPDATE components SET position = $1, group_id = $2, updated_at = $3 WHERE id = $4"
            )
            .bind(i as i32)
            .bind(*group)
            .bind(now)
            .bind(*id)
            .execute(c)
            .await?
            .rows_affected());
        }
    }
    let summary = json!({ "statusPageId": page, "groupIds": &layout.group_ids,
        "components": layout.components.as_ref().map(|p| p.iter().map(|(id, g)| json!({"id": id, "groupId": g})).collect::<Vec<_>>()) });
    let audited = tx
        .audit(Action::GroupReorder, "statuspage", Some(page), summary)
        .await?;
    tx.record(Event::LayoutChanged { page }).await?;
    tx.commit(audited).await
}
