//! Quick links of public pages. Every change touches the page, so its public
//! snapshot (and HTML) shows the change at once.

use crate::audit::{AuditCtx, changes};
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::pages;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::links::{QuickLink, QuickLinkFields};
use upstate_core::*;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    label: String,
    url: String,
    position: i32,
    page_id: i64,
}

impl From<Row> for QuickLink {
    fn from(r: Row) -> Self {
        QuickLink {
            id: r.id,
            label: r.label,
            url: r.url,
            order: r.position,
            status_page_id: r.page_id,
        }
    }
}

macro_rules! cols {
    () => {
        "id, label, url, position, page_id"
    };
}

/// One page's links (or every page's), in display order.
pub async fn list(db: &Db, page_id: Option<Id>) -> StoreResult<Vec<QuickLink>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM quick_links WHERE ($1 IS NULL OR page_id = $1) ORDER BY page_id, position, id"
    ))
    .bind(page_id)
    .fetch_all(c)
    .await?);
    Ok(rows.into_iter().map(QuickLink::from).collect())
}

pub async fn get(db: &Db, id: Id) -> StoreResult<QuickLink> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM quick_links WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.map(QuickLink::from)
        .ok_or(StoreError::NotFound("quick link"))
}

/// `new` comes from `QuickLinkInput::validate_new`: page, label and url are set.
pub async fn create(db: &Db, ctx: &AuditCtx, new: QuickLinkFields) -> StoreResult<QuickLink> {
    let (Some(page_id), Some(label), Some(url)) = (new.status_page_id, new.label, new.url) else {
        return Err(StoreError::invalid_ref(
            "body",
            "statusPageId, label and url are required",
        ));
    };
    let mut tx = db.begin_as(ctx).await?;
    pages::require_in(&mut tx, page_id, "statusPageId").await?;
    let position = match new.order {
        Some(o) => o,
        None => on_tx!(&mut tx, |c| {
            sqlx::query_scalar::<_, i32>(
                "SELECT CAST(COALESCE(MAX(position), -1) + 1 AS INTEGER) FROM quick_links WHERE page_id = $1",
            )
            .bind(page_id)
            .fetch_one(c)
            .await?
        }),
    };
    let row: Row = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO quick_links (page_id, label, url, position, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ",
        cols!()
    ))
    .bind(page_id)
    .bind(&label)
    .bind(url.as_str())
    .bind(position)
    .bind(db.clock.now().millis())
    .fetch_one(c)
    .await?
    });
    let link = QuickLink::from(row);
    let audited = tx
        .audit(
            Action::QuicklinkCreate,
            "quicklink",
            Some(link.id),
            json!(link),
        )
        .await?;
    tx.record(Event::QuickLinksChanged { page: page_id })
        .await?;
    tx.commit(audited).await?;
    Ok(link)
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: QuickLinkFields,
) -> StoreResult<QuickLink> {
    let mut tx = db.begin_as(ctx).await?;
    let current: QuickLink = locked!(
        &mut tx,
        concat!("SELECT ", cols!(), " FROM quick_links WHERE id = $1"),
        |c, q| {
            sqlx::query_as::<_, Row>(q)
                .bind(id)
                .fetch_optional(c)
                .await?
        }
    )
    .ok_or(StoreError::NotFound("quick link"))?
    .into();
    let row: Row = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "UPDATE quick_links SET label = $1, url = $2, position = $3 WHERE id = $4 RETURNING ",
        cols!()
    ))
    .bind(patch.label.unwrap_or(current.label.clone()))
    .bind(patch.url.map_or(current.url.clone(), String::from))
    .bind(patch.order.unwrap_or(current.order))
    .bind(id)
    .fetch_one(c)
    .await?);
    let after = QuickLink::from(row);
    let audited = tx
        .audit(
            Action::QuicklinkUpdate,
            "quicklink",
            Some(id),
            changes(&current, &after),
        )
        .await?;
    tx.record(Event::QuickLinksChanged {
        page: current.status_page_id,
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
            sql: "DELETE FROM quick_links WHERE id = $1 RETURNING page_id",
            what: "quick link",
            target_type: "quicklink",
            action: upstate_core::audit::Action::QuicklinkDelete,
            event: |page, _| Event::QuickLinksChanged { page },
            before: "",
        },
    )
    .await
}
