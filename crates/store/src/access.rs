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

type Row = (String, bool, String, bool);

fn parse(row: Option<Row>) -> PageAccess {
    let Some((nets, viewers, domains, viewer_sso)) = row else {
        return PageAccess::default();
    };
    PageAccess {
        allowed_networks: serde_json::from_str(&nets).unwrap_or_default(),
        viewers,
        viewer_domains: serde_json::from_str(&domains).unwrap_or_default(),
        viewer_sso,
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> StoreResult<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Config(e.to_string()))
}

/// A page's access; `NotFound` when there is no such page.
pub async fn get(db: &Db, page_id: Id) -> StoreResult<PageAccess> {
    crate::pages::get(db, page_id).await?;
    of(db, page_id).await
}

/// What the snapshot builder reads beside the page.
pub(crate) async fn of(db: &Db, page_id: Id) -> StoreResult<PageAccess> {
    let row: Option<Row> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT allowed_networks, viewers, viewer_domains, viewer_sso FROM page_access WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_optional(c)
    .await?
    });
    Ok(parse(row))
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
    let row: Option<Row> = on_tx!(tx, |c| {
        sqlx::query_as(
        "SELECT allowed_networks, viewers, viewer_domains, viewer_sso FROM page_access WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_optional(c)
    .await?
    });
    Ok(parse(row))
}

/// Changes a page's access with `change` (given what it is now, which is
/// read under the page's lock). The page row is locked first (and its
/// `updated_at` moved, so caches of its bodies change their ETag), as every
/// other write to a page does, so concurrent changes queue in one order.
/// The audit entry keeps the lists before and after.
pub async fn set(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    change: impl FnOnce(&PageAccess) -> Result<PageAccess, upstate_core::FieldErrors>,
) -> StoreResult<PageAccess> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let before = current(&mut tx, page_id).await?;
    let access = change(&before).map_err(StoreError::Invalid)?;
    let nets = to_json(&access.allowed_networks)?;
    let domains = to_json(&access.viewer_domains)?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO page_access (page_id, allowed_networks, updated_at, viewers, viewer_domains, viewer_sso) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (page_id) DO UPDATE SET \
         allowed_networks = excluded.allowed_networks, updated_at = excluded.updated_at, \
         viewers = excluded.viewers, viewer_domains = excluded.viewer_domains, viewer_sso = excluded.viewer_sso"
    )
    .bind(page_id)
    .bind(&nets)
    .bind(now)
    .bind(access.viewers)
    .bind(&domains)
    .bind(access.viewer_sso)
    .execute(c)
    .await
    .map(|_| ())?
    });
    let audited = tx
        .audit(
            Action::StatuspageAccess,
            "statuspage",
            Some(page_id),
            json!({ "from": before, "to": access }),
        )
        .await?;
    tx.record(Event::PageUpdated { page: page_id }).await?;
    tx.commit(audited).await?;
    Ok(access)
}
