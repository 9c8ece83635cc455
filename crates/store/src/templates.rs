//! Incident templates. Audited like every change; not page content, so no
//! change event.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::templates::{IncidentTemplate, TemplateFields};
use upstate_core::{Id, Timestamp};

const COLS: &str = "id, name, title, message, status, impact, created_at, updated_at";

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    name: String,
    title: String,
    message: String,
    status: String,
    impact: String,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<Row> for IncidentTemplate {
    type Error = StoreError;
    fn try_from(r: Row) -> StoreResult<IncidentTemplate> {
        Ok(IncidentTemplate {
            id: r.id,
            name: r.name,
            title: r.title,
            message: r.message,
            status: r
                .status
                .parse()
                .map_err(|_| StoreError::Config(format!("template {}: bad status", r.id)))?,
            impact: r
                .impact
                .parse()
                .map_err(|_| StoreError::Config(format!("template {}: bad impact", r.id)))?,
            created_at: Timestamp::from_millis(r.created_at),
            updated_at: Timestamp::from_millis(r.updated_at),
        })
    }
}

pub async fn list(db: &Db) -> StoreResult<Vec<IncidentTemplate>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLS} FROM incident_templates ORDER BY name"
    )))
    .fetch_all(c)
    .await?);
    rows.into_iter().map(IncidentTemplate::try_from).collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<IncidentTemplate> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLS} FROM incident_templates WHERE id = $1"
    )))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("incident template"))?
        .try_into()
}

const TAKEN: &str = "a template with this name exists already";

pub async fn create(db: &Db, ctx: &AuditCtx, f: &TemplateFields) -> StoreResult<IncidentTemplate> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let id: i64 = on_tx!(&mut tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO incident_templates (name, title, message, status, impact, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id"
    )
    .bind(&f.name)
    .bind(&f.title)
    .bind(&f.message)
    .bind(f.status.as_str())
    .bind(f.impact.as_str())
    .bind(now)
    .fetch_one(c)
    .await
    .map_err(|e| StoreError::unique(e, TAKEN))?
    });
    let audited = tx
        .audit(
            Action::TemplateCreate,
            "template",
            Some(id),
            json!({ "name": &f.name }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

pub async fn replace(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    f: &TemplateFields,
) -> StoreResult<IncidentTemplate> {
    let mut tx = db.begin_as(ctx).await?;
    let changed = on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE incident_templates SET name = $1, title = $2, message = $3, status = $4, impact = $5, updated_at = $6 WHERE id = $7"
    )
    .bind(&f.name)
    .bind(&f.title)
    .bind(&f.message)
    .bind(f.status.as_str())
    .bind(f.impact.as_str())
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await
    .map_err(|e| StoreError::unique(e, TAKEN))?
    .rows_affected()
    });
    if changed == 0 {
        return Err(StoreError::NotFound("incident template"));
    }
    let audited = tx
        .audit(
            Action::TemplateUpdate,
            "template",
            Some(id),
            json!({ "name": &f.name }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let name: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM incident_templates WHERE id = $1 RETURNING name"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let name = name.ok_or(StoreError::NotFound("incident template"))?;
    let audited = tx
        .audit(
            Action::TemplateDelete,
            "template",
            Some(id),
            json!({ "name": name }),
        )
        .await?;
    tx.commit(audited).await
}
