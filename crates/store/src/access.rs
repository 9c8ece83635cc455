//! Who may open a page beyond its visibility: the networks it is held to
//! (`upstate_core::access`). One row per page that ever had some; the public
//! snapshot reads it with the page.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::Id;
use upstate_core::access::PageAccess;
use upstate_core::audit::Action;
use upstate_core::events::Event;

fn parse(raw: Option<String>) -> PageAccess {
    PageAccess {
        allowed_networks: raw
            .and_then(|r| serde_json::from_str(&r).ok())
            .unwrap_or_default(),
    }
}

/// A page's access; `NotFound` when there is no such page.
pub async fn get(db: &Db, page_id: Id) -> StoreResult<PageAccess> {
    let row: Option<(i64, Option<String>)> = on_db!(db, |c| sqlx::query_as(
        "SELECT p.id, a.allowed_networks FROM status_pages p \
         LEFT JOIN page_access a ON a.page_id = p.id WHERE p.id = $1"
    )
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    row.map(|(_, nets)| parse(nets))
        .ok_or(StoreError::NotFound("status page"))
}

/// What the snapshot builder reads beside the page.
pub(crate) async fn of(db: &Db, page_id: Id) -> StoreResult<PageAccess> {
    let nets: Option<String> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT allowed_networks FROM page_access WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    Ok(parse(nets))
}

/// The pages held to some networks.
pub async fn restricted(db: &Db) -> StoreResult<Vec<Id>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT page_id FROM page_access WHERE allowed_networks <> '[]'"
    )
    .fetch_all(c)
    .await?))
}

async fn current(tx: &mut Tx, page_id: Id) -> StoreResult<PageAccess> {
    let nets: Option<String> = on_tx!(tx, |c| sqlx::query_scalar(
        "SELECT allowed_networks FROM page_access WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    Ok(parse(nets))
}

/// Replaces a page's access. The page row is locked first (and its
/// `updated_at` moved, so caches of its bodies change their ETag), as every
/// other write to a page does, so concurrent changes queue in one order.
/// The audit entry keeps the lists before and after.
pub async fn set(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    access: &PageAccess,
) -> StoreResult<PageAccess> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let found: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "UPDATE status_pages SET updated_at = $1 WHERE id = $2 RETURNING id"
    )
    .bind(now)
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    found.ok_or(StoreError::NotFound("status page"))?;
    let before = current(&mut tx, page_id).await?;
    let nets = serde_json::to_string(&access.allowed_networks)
        .map_err(|e| StoreError::Config(e.to_string()))?;
    on_tx!(&mut tx, |c| sqlx::query(
        "INSERT INTO page_access (page_id, allowed_networks, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (page_id) DO UPDATE SET allowed_networks = excluded.allowed_networks, \
         updated_at = excluded.updated_at"
    )
    .bind(page_id)
    .bind(&nets)
    .bind(now)
    .execute(c)
    .await
    .map(|_| ())?);
    let audited = tx
        .audit(
            Action::StatuspageAccess,
            "statuspage",
            Some(page_id),
            json!({
                "allowedNetworks": { "from": before.allowed_networks, "to": access.allowed_networks },
            }),
        )
        .await?;
    tx.record(Event::PageUpdated { page: page_id }).await?;
    tx.commit(audited).await?;
    Ok(access.clone())
}
