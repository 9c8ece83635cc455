//! Visitors' comments on incidents and their moderation
//! (docs/comments.md). A comment's arrival is audited like any write (by
//! the anonymous actor, with the client address the audit log keeps for
//! every change); the row itself keeps only what the visitor typed. A
//! comment that shows or stops showing records `comments.changed`, so the
//! incident's page is rebuilt at once on every instance.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::rows::parse_enum;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::comments::{Comment, NewComment, PublicComment};
use upstate_core::events::Event;
use upstate_core::{CommentStatus, Id, Timestamp};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    page_id: i64,
    incident_id: i64,
    title: String,
    author: String,
    body: String,
    status: String,
    created_at: i64,
    moderated_at: Option<i64>,
}

impl TryFrom<Row> for Comment {
    type Error = StoreError;
    fn try_from(r: Row) -> StoreResult<Comment> {
        Ok(Comment {
            id: r.id,
            incident_id: r.incident_id,
            status_page_id: r.page_id,
            incident_title: r.title,
            author: r.author,
            body: r.body,
            status: parse_enum("status", &r.status)?,
            created_at: Timestamp::from_millis(r.created_at),
            moderated_at: r.moderated_at.map(Timestamp::from_millis),
        })
    }
}

macro_rules! select {
    ($where:literal) => {
        concat!(
            "SELECT c.id, c.page_id, c.incident_id, i.title, c.author, c.body, c.status, c.created_at, c.moderated_at \
             FROM comments c JOIN incidents i ON i.id = c.incident_id ",
            $where
        )
    };
}

fn rows(rows: Vec<Row>) -> StoreResult<Vec<Comment>> {
    rows.into_iter().map(Comment::try_from).collect()
}

/// The page (id and slug) an incident belongs to, if it exists.
pub async fn incident_page(db: &Db, incident: Id) -> StoreResult<Option<(Id, String)>> {
    Ok(on_db!(db, |c| {
        sqlx::query_as(
        "SELECT p.id, p.slug FROM incidents i JOIN status_pages p ON p.id = i.page_id WHERE i.id = $1"
    )
    .bind(incident)
    .fetch_optional(c)
    .await?
    }))
}

/// Stores a visitor's comment: `shown` when the install does not hold
/// comments for moderation, else pending.
pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    page: Id,
    new: &NewComment,
    shown: bool,
) -> StoreResult<Comment> {
    let status = if shown {
        CommentStatus::Approved
    } else {
        CommentStatus::Pending
    };
    let mut tx = db.begin_as(ctx).await?;
    let id: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "INSERT INTO comments (page_id, incident_id, author, body, status, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id"
    )
    .bind(page)
    .bind(new.incident_id)
    .bind(&new.author)
    .bind(&new.body)
    .bind(status.as_str())
    .bind(db.clock.now().millis())
    .fetch_one(c)
    .await?);
    let comment = get_in(&mut tx, id).await?;
    let audited = tx
        .audit(
            Action::CommentCreate,
            "comment",
            Some(id),
            json!({ "incidentId": new.incident_id, "status": status, "length": new.body.chars().count() }),
        )
        .await?;
    if shown {
        tx.record(Event::CommentsChanged {
            page,
            incident: new.incident_id,
        })
        .await?;
    }
    tx.commit(audited).await?;
    Ok(comment)
}

async fn get_in(tx: &mut Tx, id: Id) -> StoreResult<Comment> {
    let row: Option<Row> = on_tx!(tx, |c| sqlx::query_as(select!("WHERE c.id = $1"))
        .bind(id)
        .fetch_optional(c)
        .await?);
    row.ok_or(StoreError::NotFound("comment"))?.try_into()
}

/// The approved comments of an incident, oldest first (a conversation).
pub async fn shown(db: &Db, incident: Id) -> StoreResult<Vec<PublicComment>> {
    let list: Vec<Row> = on_db!(db, |c| sqlx::query_as(select!(
        "WHERE c.incident_id = $1 AND c.status = 'approved' ORDER BY c.id LIMIT 500"
    ))
    .bind(incident)
    .fetch_all(c)
    .await?);
    Ok(rows(list)?.into_iter().map(PublicComment::from).collect())
}

/// The moderation queue: comments in `status` (all when None), newest
/// first, optionally of one incident.
pub async fn list(
    db: &Db,
    status: Option<CommentStatus>,
    incident: Option<Id>,
    limit: i64,
) -> StoreResult<Vec<Comment>> {
    let list: Vec<Row> = on_db!(db, |c| {
        sqlx::query_as(select!(
        "WHERE ($1 IS NULL OR c.status = $1) AND ($2 IS NULL OR c.incident_id = $2) ORDER BY c.id DESC LIMIT $3"
    ))
    .bind(status.map(CommentStatus::as_str))
    .bind(incident)
    .bind(limit)
    .fetch_all(c)
    .await?
    });
    rows(list)
}

/// How many comments wait for a moderator.
pub async fn pending_count(db: &Db) -> StoreResult<i64> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM comments WHERE status = 'pending'"
    )
    .fetch_one(c)
    .await?))
}

/// A moderator's decision; the incident's page changes when the comment
/// starts or stops showing.
pub async fn moderate(db: &Db, ctx: &AuditCtx, id: Id, to: CommentStatus) -> StoreResult<Comment> {
    let mut tx = db.begin_as(ctx).await?;
    let before: Option<(i64, i64, String)> = locked!(
        &mut tx,
        "SELECT page_id, incident_id, status FROM comments WHERE id = $1",
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    let (page, incident, from) = before.ok_or(StoreError::NotFound("comment"))?;
    let from: CommentStatus = parse_enum("status", &from)?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE comments SET status = $1, moderated_at = $2 WHERE id = $3"
    )
    .bind(to.as_str())
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await
    .map(|_| ())?);
    let after = get_in(&mut tx, id).await?;
    let audited = tx
        .audit(
            Action::CommentModerate,
            "comment",
            Some(id),
            json!({ "incidentId": incident, "from": from, "to": to }),
        )
        .await?;
    if (from == CommentStatus::Approved) != (to == CommentStatus::Approved) {
        tx.record(Event::CommentsChanged { page, incident }).await?;
    }
    tx.commit(audited).await?;
    Ok(after)
}

/// Removes a comment for good.
pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let row: Option<(i64, i64, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "DELETE FROM comments WHERE id = $1 RETURNING page_id, incident_id, status"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let (page, incident, status) = row.ok_or(StoreError::NotFound("comment"))?;
    let audited = tx
        .audit(
            Action::CommentDelete,
            "comment",
            Some(id),
            json!({ "incidentId": incident, "status": status }),
        )
        .await?;
    if status == CommentStatus::Approved.as_str() {
        tx.record(Event::CommentsChanged { page, incident }).await?;
    }
    tx.commit(audited).await
}
