//! Status pages: the root aggregate. Deleting one deletes everything it owns
//! (foreign keys cascade in both backends).

use crate::audit::{AuditCtx, changes};
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::rows::PageRow;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::*;

const SLUG_TAKEN: &str = "a status page with this slug already exists";
const DOMAIN_TAKEN: &str = "another status page already uses this customDomain";

pub async fn list(db: &Db) -> StoreResult<Vec<StatusPage>> {
    let rows: Vec<PageRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        page_cols!(),
        " FROM status_pages ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    Ok(rows.into_iter().map(StatusPage::from).collect())
}

pub async fn get(db: &Db, id: Id) -> StoreResult<StatusPage> {
    let row: Option<PageRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        page_cols!(),
        " FROM status_pages WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.map(StatusPage::from)
        .ok_or(StoreError::NotFound("status page"))
}

/// Checks inside a transaction that a page exists; `field` names the body
/// field that referenced it, for the 422.
pub(crate) async fn require_in(tx: &mut Tx, id: Id, field: &'static str) -> StoreResult<()> {
    let found: Option<i64> = on_tx!(tx, |c| sqlx::query_scalar(
        "SELECT id FROM status_pages WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    found
        .map(|_| ())
        .ok_or_else(|| StoreError::invalid_ref(field, format!("no status page with id {id}")))
}

/// Locks a page's row first, as every write to a page or to what hangs
/// off it does (so concurrent writes queue in one order), and moves its
/// `updated_at` so caches of its bodies change their ETag.
pub(crate) async fn lock_in(tx: &mut Tx, id: Id, now: i64) -> StoreResult<()> {
    let found: Option<i64> = on_tx!(tx, |c| sqlx::query_scalar(
        "UPDATE status_pages SET updated_at = $1 WHERE id = $2 RETURNING id"
    )
    .bind(now)
    .bind(id)
    .fetch_optional(c)
    .await?);
    found.map(|_| ()).ok_or(StoreError::NotFound("status page"))
}

pub async fn create(db: &Db, ctx: &AuditCtx, new: NewPage) -> StoreResult<StatusPage> {
    let now = db.clock.now().millis();
    let s = new.settings;
    let mut tx = db.begin_as(ctx).await?;
    let row: PageRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
            "INSERT INTO status_pages (name, slug, description, logo_url, favicon_url, custom_domain, accent_color, \
         is_public, show_subscribe, show_uptime, uptime_days, time_zone, created_at, updated_at, show_response_times, past_incident_days, header_image_url, custom_css) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14, $15, $16, $17) RETURNING ",
            page_cols!()
        ))
        .bind(&new.name)
        .bind(new.slug.as_str())
        .bind(&new.description)
        .bind(s.logo_url.map(String::from).apply(None))
        .bind(s.favicon_url.map(String::from).apply(None))
        .bind(s.custom_domain.map(String::from).apply(None))
        .bind(s.accent_color.map_or_else(|| DEFAULT_ACCENT_COLOR.to_string(), String::from))
        .bind(new.is_public)
        .bind(s.show_subscribe.unwrap_or(true))
        .bind(s.show_uptime.unwrap_or(true))
        .bind(s.uptime_days.unwrap_or(DEFAULT_UPTIME_DAYS))
        .bind(s.time_zone.unwrap_or_else(|| DEFAULT_TIME_ZONE.to_string()))
        .bind(now)
        .bind(s.show_response_times.unwrap_or(false))
        .bind(s.past_incident_days.unwrap_or(DEFAULT_PAST_INCIDENT_DAYS))
        .bind(s.header_image_url.map(String::from).apply(None))
        .bind(s.custom_css.unwrap_or_default())
        .fetch_one(c)
        .await
        .map_err(|e| conflict(e, &new.slug))?
    });
    let audited = tx
        .audit(
            Action::StatuspageCreate,
            "statuspage",
            Some(row.id),
            json!({ "name": &new.name, "slug": &new.slug, "isPublic": new.is_public }),
        )
        .await?;
    tx.record(Event::PageCreated { page: row.id }).await?;
    tx.commit(audited).await?;
    Ok(row.into())
}

fn conflict(e: sqlx::Error, _slug: &str) -> StoreError {
    let msg = e
        .as_database_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default();
    if msg.contains("custom_domain") {
        StoreError::unique(e, DOMAIN_TAKEN)
    } else {
        StoreError::unique(e, SLUG_TAKEN)
    }
}

pub async fn update(db: &Db, ctx: &AuditCtx, id: Id, patch: PagePatch) -> StoreResult<StatusPage> {
    let mut tx = db.begin_as(ctx).await?;
    let current: PageRow = locked!(
        &mut tx,
        concat!("SELECT ", page_cols!(), " FROM status_pages WHERE id = $1"),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    )
    .ok_or(StoreError::NotFound("status page"))?;
    let p: StatusPage = current.into();
    let before = p.clone();
    let s = patch.settings;
    let slug = patch.slug.map_or(p.slug, String::from);
    let row: PageRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
            "UPDATE status_pages SET name = $1, slug = $2, description = $3, logo_url = $4, favicon_url = $5, \
         custom_domain = $6, accent_color = $7, is_public = $8, show_subscribe = $9, show_uptime = $10, \
         uptime_days = $11, time_zone = $12, updated_at = $13, show_response_times = $15, \
         past_incident_days = $16, header_image_url = $17, custom_css = $18 WHERE id = $14 RETURNING ",
            page_cols!()
        ))
        .bind(patch.name.unwrap_or(p.name))
        .bind(&slug)
        .bind(patch.description.unwrap_or(p.description))
        .bind(s.logo_url.map(String::from).apply(p.logo_url))
        .bind(s.favicon_url.map(String::from).apply(p.favicon_url))
        .bind(s.custom_domain.map(String::from).apply(p.custom_domain))
        .bind(s.accent_color.map_or(p.accent_color, String::from))
        .bind(patch.is_public.unwrap_or(p.is_public))
        .bind(s.show_subscribe.unwrap_or(p.show_subscribe))
        .bind(s.show_uptime.unwrap_or(p.show_uptime))
        .bind(s.uptime_days.unwrap_or(p.uptime_days))
        .bind(s.time_zone.unwrap_or(p.time_zone))
        .bind(db.clock.now().millis())
        .bind(id)
        .bind(s.show_response_times.unwrap_or(p.show_response_times))
        .bind(s.past_incident_days.unwrap_or(p.past_incident_days))
        .bind(s.header_image_url.map(String::from).apply(p.header_image_url))
        .bind(s.custom_css.unwrap_or(p.custom_css))
        .fetch_one(c)
        .await
        .map_err(|e| conflict(e, &slug))?
    });
    let after = StatusPage::from(row);
    let audited = tx
        .audit(
            Action::StatuspageUpdate,
            "statuspage",
            Some(id),
            changes(&before, &after),
        )
        .await?;
    tx.record(Event::PageUpdated { page: id }).await?;
    tx.commit(audited).await?;
    Ok(after)
}

/// The password hash of a page that has one.
pub async fn password_hash(db: &Db, id: Id) -> StoreResult<Option<String>> {
    let found: Option<Option<String>> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT password_hash FROM status_pages WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    Ok(found.flatten())
}

/// Sets (or with `None` removes) the password that opens a private page. The
/// audit entry says that it changed, never the hash.
pub async fn set_password(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    hash: Option<String>,
) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let updated: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "UPDATE status_pages SET password_hash = $1, updated_at = $2 WHERE id = $3 RETURNING id"
    )
    .bind(hash.as_deref())
    .bind(db.clock.now().millis())
    .bind(id)
    .fetch_optional(c)
    .await?);
    updated.ok_or(StoreError::NotFound("status page"))?;
    let action = if hash.is_some() {
        Action::StatuspagePasswordSet
    } else {
        Action::StatuspagePasswordRemove
    };
    let audited = tx
        .audit(action, "statuspage", Some(id), serde_json::json!({}))
        .await?;
    tx.record(Event::PageUpdated { page: id }).await?;
    tx.commit(audited).await?;
    Ok(())
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    db.delete_by_id(
        ctx,
        id,
        &crate::db::Deletion {
            sql: "DELETE FROM status_pages WHERE id = $1 RETURNING id",
            what: "status page",
            target_type: "statuspage",
            action: upstate_core::audit::Action::StatuspageDelete,
            event: |page, _| Event::PageDeleted { page },
            before: "",
        },
    )
    .await
}

/// How many pages exist; also the cheapest real query, used by health checks.
pub async fn count(db: &Db) -> StoreResult<i64> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM status_pages"
    )
    .fetch_one(c)
    .await?))
}

/// The id of the page a request names by id or slug, if it exists.
pub async fn resolve(db: &Db, page: &upstate_core::notify::PageRef) -> StoreResult<Option<Id>> {
    Ok(match page {
        upstate_core::notify::PageRef::Id(id) => get(db, *id).await.ok().map(|p| p.id),
        upstate_core::notify::PageRef::Slug(slug) => {
            crate::public::page_id_by_slug(db, slug).await?
        }
    })
}
