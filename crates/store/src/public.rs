//! Everything a public page shows, loaded in one go for the public snapshot.
//! Only the snapshot builder calls this; visitors never reach SQL directly.

use crate::db::Db;
use crate::error::StoreResult;
use crate::incidents::{self, IncidentFilter};
use crate::maintenance::{self, MaintenanceFilter};
use crate::rows::{PageRow, parse_enum};
use crate::{components, groups};
use upstate_core::uptime::StatusChange;
use upstate_core::*;

/// How many resolved incidents a public page keeps (all unresolved ones are kept too).
pub const RESOLVED_KEPT: i64 = 100;

#[derive(Debug, Clone)]
pub struct PageData {
    pub page: StatusPage,
    /// When anything on the page last changed.
    pub updated_at: Timestamp,
    pub components: Vec<Component>,
    pub groups: Vec<ComponentGroup>,
    /// Unresolved ones, then the latest resolved ones; newest first.
    pub incidents: Vec<Incident>,
    /// Scheduled and in-progress windows, by start time.
    pub maintenance: Vec<Maintenance>,
}

#[derive(sqlx::FromRow)]
struct PageWithStamp {
    #[sqlx(flatten)]
    page: PageRow,
    updated_at: i64,
}

/// The id of the page with this slug, if there is one.
pub async fn page_id_by_slug(db: &Db, slug: &str) -> StoreResult<Option<Id>> {
    Ok(on_db!(db, |c| sqlx::query_scalar("SELECT id FROM status_pages WHERE slug = $1")
        .bind(slug)
        .fetch_optional(c)
        .await?))
}

pub async fn load(db: &Db, page_id: Id) -> StoreResult<Option<PageData>> {
    let row: Option<PageWithStamp> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        page_cols!(),
        ", updated_at FROM status_pages WHERE id = $1"
    ))
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    let Some(PageWithStamp { page, updated_at }) = row else { return Ok(None) };
    let mut open = incidents::list(
        db,
        &IncidentFilter { page_id: Some(page_id), status: Some("unresolved".into()), limit: i64::from(i32::MAX) },
    )
    .await?;
    let resolved = incidents::list(
        db,
        &IncidentFilter { page_id: Some(page_id), status: Some("resolved".into()), limit: RESOLVED_KEPT },
    )
    .await?;
    open.extend(resolved);
    open.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    let mut windows = vec![];
    for status in [MaintenanceStatus::Scheduled, MaintenanceStatus::InProgress] {
        let filter = MaintenanceFilter { page_id: Some(page_id), status: Some(status), upcoming_after: None };
        windows.extend(maintenance::list(db, &filter).await?);
    }
    windows.sort_by(|a, b| a.scheduled_start_time.cmp(&b.scheduled_start_time).then(a.id.cmp(&b.id)));
    Ok(Some(PageData {
        page: page.into(),
        updated_at: Timestamp::from_millis(updated_at),
        components: components::list(db, Some(page_id), None).await?,
        groups: groups::list(db, Some(page_id)).await?,
        incidents: open,
        maintenance: windows,
    }))
}

/// Status changes of a page's components since `since`, plus the change in
/// effect at `since` for each, ordered by component and time.
pub async fn status_history(db: &Db, page_id: Id, since: Timestamp) -> StoreResult<Vec<StatusChange>> {
    let rows: Vec<(i64, String, i64)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT h.component_id, h.status, h.changed_at FROM component_status_history h \
         JOIN components c ON c.id = h.component_id \
         WHERE c.page_id = $1 AND (h.changed_at >= $2 OR h.id = ( \
             SELECT h2.id FROM component_status_history h2 WHERE h2.component_id = h.component_id AND h2.changed_at < $2 \
             ORDER BY h2.changed_at DESC, h2.id DESC LIMIT 1)) \
         ORDER BY h.component_id, h.changed_at, h.id"
    )
    .bind(page_id)
    .bind(since.millis())
    .fetch_all(c)
    .await?
    });
    rows.into_iter()
        .map(|(component_id, status, at)| {
            Ok(StatusChange {
                component_id,
                status: parse_enum("component status", &status)?,
                at: Timestamp::from_millis(at),
            })
        })
        .collect()
}
