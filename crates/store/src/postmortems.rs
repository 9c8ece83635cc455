//! Postmortems, one per incident. Saving one is a change of record
//! (audited); publishing one changes the incident's public page (an outbox
//! event), and so does editing a published one.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::postmortem::{Postmortem, PostmortemChange};
use upstate_core::{Id, Timestamp};

#[derive(sqlx::FromRow)]
struct Row {
    incident_id: i64,
    body: String,
    published: bool,
    updated_at: i64,
    published_at: Option<i64>,
}

impl From<Row> for Postmortem {
    fn from(r: Row) -> Self {
        Postmortem {
            incident_id: r.incident_id,
            body: r.body,
            published: r.published,
            updated_at: Timestamp::from_millis(r.updated_at),
            published_at: r.published_at.map(Timestamp::from_millis),
        }
    }
}

pub async fn get(db: &Db, incident: Id) -> StoreResult<Option<Postmortem>> {
    let row: Option<Row> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT incident_id, body, published, updated_at, published_at FROM postmortems WHERE incident_id = $1"
    )
    .bind(incident)
    .fetch_optional(c)
    .await?
    });
    Ok(row.map(Postmortem::from))
}

/// The published postmortems of a page's incidents, by incident.
pub async fn published_on(db: &Db, page: Id) -> StoreResult<Vec<Published>> {
    let rows: Vec<(i64, String, String, Option<i64>)> = on_db!(db, |c| {
        sqlx::query_as(
            "SELECT p.incident_id, i.title, p.body, p.published_at FROM postmortems p \
         JOIN incidents i ON i.id = p.incident_id \
         WHERE i.page_id = $1 AND p.published ORDER BY p.published_at DESC",
        )
        .bind(page)
        .fetch_all(c)
        .await?
    });
    Ok(rows
        .into_iter()
        .map(|(incident, title, body, at)| Published {
            incident,
            title,
            body,
            published_at: Timestamp::from_millis(at.unwrap_or(0)),
        })
        .collect())
}

/// A published postmortem, as the public page and feeds show it.
#[derive(Debug, Clone)]
pub struct Published {
    pub incident: Id,
    /// The incident's title.
    pub title: String,
    pub body: String,
    pub published_at: Timestamp,
}

/// Writes an incident's postmortem. `only_if_draft` refuses to replace a
/// published one (a generated draft must not clobber what visitors read).
pub async fn put(
    db: &Db,
    ctx: &AuditCtx,
    incident: Id,
    change: &PostmortemChange,
    only_if_draft: bool,
) -> StoreResult<Postmortem> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let page: Option<i64> = locked!(
        &mut tx,
        "SELECT page_id FROM incidents WHERE id = $1",
        |c, q| sqlx::query_scalar(q)
            .bind(incident)
            .fetch_optional(c)
            .await?
    );
    let page = page.ok_or(StoreError::NotFound("incident"))?;
    let before: Option<(bool, Option<i64>)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT published, published_at FROM postmortems WHERE incident_id = $1"
    )
    .bind(incident)
    .fetch_optional(c)
    .await?);
    let was_published = before.is_some_and(|b| b.0);
    if only_if_draft && was_published {
        return Err(StoreError::Conflict(
            "the postmortem is published; edit it instead of generating a new draft".into(),
        ));
    }
    let published_at = match (change.published, before) {
        (true, Some((true, Some(at)))) => Some(at),
        (true, _) => Some(now),
        (false, _) => None,
    };
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO postmortems (incident_id, body, published, updated_at, published_at) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (incident_id) DO UPDATE SET body = $2, published = $3, updated_at = $4, published_at = $5"
    )
    .bind(incident)
    .bind(&change.body)
    .bind(change.published)
    .bind(now)
    .bind(published_at)
    .execute(c)
    .await?
    .rows_affected()
    });
    let audited = tx
        .audit(
            Action::PostmortemUpdate,
            "incident",
            Some(incident),
            json!({ "published": change.published, "chars": change.body.chars().count() }),
        )
        .await?;
    // What visitors see changes when it is (or was) published.
    if change.published && !was_published {
        tx.record(Event::PostmortemPublished { page, incident })
            .await?;
    } else if change.published || was_published {
        let (status, impact): (String, String) = on_tx!(&mut tx, |c| sqlx::query_as(
            "SELECT status, impact FROM incidents WHERE id = $1"
        )
        .bind(incident)
        .fetch_one(c)
        .await?);
        tx.record(Event::IncidentUpdated {
            page,
            incident,
            status: status
                .parse()
                .map_err(|_| StoreError::Config("bad status".into()))?,
            impact: impact
                .parse()
                .map_err(|_| StoreError::Config("bad impact".into()))?,
        })
        .await?;
    }
    tx.commit(audited).await?;
    get(db, incident)
        .await?
        .ok_or(StoreError::NotFound("postmortem"))
}
