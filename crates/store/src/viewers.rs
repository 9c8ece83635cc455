//! A private page's viewers and their sign-in links (docs/private-pages.md).
//! A viewer is a row per page and email; its `secret` keys the HMAC of its
//! cookie, so removing the row ends its sessions everywhere at once. Links
//! are single use: taking one deletes it.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::access::Viewer;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::values::Email;
use upstate_core::{Id, Timestamp};

/// How long a sign-in link is good for.
pub const LINK_MS: i64 = 15 * 60 * 1000;
/// Links sent to one address for one page within `LINK_MS`: more is
/// someone filling a stranger's inbox.
pub const LINKS_PER_EMAIL: i64 = 3;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    email: String,
    invited: bool,
    created_at: i64,
    signed_in_at: Option<i64>,
}

impl From<Row> for Viewer {
    fn from(r: Row) -> Viewer {
        Viewer {
            id: r.id,
            email: r.email,
            invited: r.invited,
            created_at: Timestamp::from_millis(r.created_at),
            signed_in_at: r.signed_in_at.map(Timestamp::from_millis),
        }
    }
}

macro_rules! viewer_cols {
    () => {
        "id, email, invited, created_at, signed_in_at"
    };
}

pub async fn list(db: &Db, page_id: Id) -> StoreResult<Vec<Viewer>> {
    crate::pages::get(db, page_id).await?;
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        viewer_cols!(),
        " FROM page_viewers WHERE page_id = $1 ORDER BY email"
    ))
    .bind(page_id)
    .fetch_all(c)
    .await?);
    Ok(rows.into_iter().map(Viewer::from).collect())
}

/// What the page gate knows of a viewer: the secret it checks cookies
/// with, and the email that puts them in audience groups.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ViewerKey {
    pub id: Id,
    pub secret: String,
    pub email: String,
}

/// Each viewer's key, for the page's snapshot.
pub async fn keys(db: &Db, page_id: Id) -> StoreResult<Vec<ViewerKey>> {
    Ok(on_db!(db, |c| sqlx::query_as(
        "SELECT id, secret, email FROM page_viewers WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_all(c)
    .await?))
}

/// Whether `email` is a viewer of the page already.
pub async fn listed(db: &Db, page_id: Id, email: &str) -> StoreResult<bool> {
    let found: Option<i64> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT id FROM page_viewers WHERE page_id = $1 AND email = $2"
    )
    .bind(page_id)
    .bind(email)
    .fetch_optional(c)
    .await?);
    Ok(found.is_some())
}

/// An operator adds a viewer. `secret`: a fresh random key for its cookies.
pub async fn invite(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    email: &Email,
    secret: &str,
) -> StoreResult<Viewer> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::require_in(&mut tx, page_id, "statusPageId")
        .await
        .map_err(|_| StoreError::NotFound("status page"))?;
    let row: Row = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "INSERT INTO page_viewers (page_id, email, secret, invited, created_at) \
         VALUES ($1, $2, $3, TRUE, $4) RETURNING ",
        viewer_cols!()
    ))
    .bind(page_id)
    .bind(email.as_str())
    .bind(secret)
    .bind(now)
    .fetch_one(c)
    .await
    .map_err(|e| StoreError::unique(
        e,
        "this email is a viewer of the page already"
    ))?);
    let id = row.id;
    finish(tx, Action::StatuspageViewerAdd, page_id, id, email.as_str()).await?;
    Ok(row.into())
}

/// Audits a change to one viewer and has the page's snapshot read the
/// viewers again (whose keys its gate checks), with the commit.
async fn finish(
    mut tx: Tx,
    action: Action,
    page_id: Id,
    viewer_id: Id,
    email: &str,
) -> StoreResult<()> {
    let audited = tx
        .audit(
            action,
            "statuspage",
            Some(page_id),
            json!({ "viewerId": viewer_id, "email": email }),
        )
        .await?;
    tx.record(Event::PageUpdated { page: page_id }).await?;
    tx.commit(audited).await
}

/// An operator removes a viewer: its cookies stop opening the page.
pub async fn remove(db: &Db, ctx: &AuditCtx, page_id: Id, viewer_id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let gone: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM page_viewers WHERE id = $1 AND page_id = $2 RETURNING email"
    )
    .bind(viewer_id)
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    let email = gone.ok_or(StoreError::NotFound("viewer"))?;
    finish(
        tx,
        Action::StatuspageViewerRemove,
        page_id,
        viewer_id,
        &email,
    )
    .await
}

/// Keeps a sign-in link for `email`, unless `LINKS_PER_EMAIL` went out to it
/// for this page within `LINK_MS` (then false: nothing kept, nothing to send).
pub async fn keep_link(db: &Db, page_id: Id, email: &str, token_hash: &str) -> StoreResult<bool> {
    let now = db.clock.now().millis();
    let since = now - LINK_MS;
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM viewer_links WHERE created_at < $1"
    )
    .bind(since)
    .execute(c)
    .await
    .map(|_| ())?);
    let recent: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM viewer_links WHERE page_id = $1 AND email = $2"
    )
    .bind(page_id)
    .bind(email)
    .fetch_one(c)
    .await?);
    if recent >= LINKS_PER_EMAIL {
        return Ok(false);
    }
    on_tx!(&mut tx, |c| sqlx::query(
        "INSERT INTO viewer_links (token_hash, page_id, email, created_at) VALUES ($1, $2, $3, $4)"
    )
    .bind(token_hash)
    .bind(page_id)
    .bind(email)
    .bind(now)
    .execute(c)
    .await
    .map(|_| ())?);
    tx.commit().await?;
    Ok(true)
}

/// Takes a link: its page and email when it exists and is younger than
/// `LINK_MS`. Taken once, whatever the answer.
pub async fn take_link(db: &Db, token_hash: &str) -> StoreResult<Option<(Id, String)>> {
    let since = db.clock.now().millis() - LINK_MS;
    let row: Option<(i64, String, i64)> = on_db!(db, |c| sqlx::query_as(
        "DELETE FROM viewer_links WHERE token_hash = $1 RETURNING page_id, email, created_at"
    )
    .bind(token_hash)
    .fetch_optional(c)
    .await?);
    Ok(row
        .filter(|(_, _, at)| *at >= since)
        .map(|(page, email, _)| (page, email)))
}

/// A link's page and email without taking it (the page that asks the
/// person to confirm: mail scanners open links, and must not use them up).
pub async fn peek_link(db: &Db, token_hash: &str) -> StoreResult<Option<(Id, String)>> {
    let since = db.clock.now().millis() - LINK_MS;
    let row: Option<(i64, String)> = on_db!(db, |c| sqlx::query_as(
        "SELECT page_id, email FROM viewer_links WHERE token_hash = $1 AND created_at >= $2"
    )
    .bind(token_hash)
    .bind(since)
    .fetch_optional(c)
    .await?);
    Ok(row)
}

/// Signs a viewer in: the existing row (its `signed_in_at` moved), or a new
/// one for an allowed domain. A secret an import withheld is replaced, so
/// its cookies can be made again. Answers the viewer's id and secret.
pub async fn admit(db: &Db, page_id: Id, email: &str, fresh: &str) -> StoreResult<(Id, String)> {
    let now = db.clock.now().millis();
    let ctx = AuditCtx::of(upstate_core::audit::Actor::system("viewer sign-in"));
    let mut tx = db.begin_as(&ctx).await?;
    let found: Option<(i64, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT id, secret FROM page_viewers WHERE page_id = $1 AND email = $2"
    )
    .bind(page_id)
    .bind(email)
    .fetch_optional(c)
    .await?);
    let (id, secret, changed) = match found {
        Some((id, secret)) if usable(&secret) => (id, secret, false),
        Some((id, _)) => (id, fresh.to_string(), true),
        None => {
            let id: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
                "INSERT INTO page_viewers (page_id, email, secret, invited, created_at) \
                 VALUES ($1, $2, $3, FALSE, $4) RETURNING id"
            )
            .bind(page_id)
            .bind(email)
            .bind(fresh)
            .bind(now)
            .fetch_one(c)
            .await?);
            (id, fresh.to_string(), true)
        }
    };
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE page_viewers SET signed_in_at = $1, secret = $2 WHERE id = $3"
    )
    .bind(now)
    .bind(&secret)
    .bind(id)
    .execute(c)
    .await
    .map(|_| ())?);
    if changed {
        tx.record(Event::PageUpdated { page: page_id }).await?;
    }
    let audited = tx
        .audit(
            Action::StatuspageViewerSignIn,
            "statuspage",
            Some(page_id),
            json!({ "viewerId": id, "email": email }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok((id, secret))
}

/// A secret that keys cookies: 64 hex characters. An import that withheld
/// it leaves a placeholder no cookie is made with.
pub fn usable(secret: &str) -> bool {
    secret.len() >= 32
}

/// Gives a viewer a new secret: their cookies and tokens stop opening the
/// page. `ctx` is the operator's, or the system's when the viewer resets
/// their own links.
pub async fn reset(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    viewer_id: Id,
    fresh: &str,
) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let email: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "UPDATE page_viewers SET secret = $1 WHERE id = $2 AND page_id = $3 RETURNING email"
    )
    .bind(fresh)
    .bind(viewer_id)
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    let email = email.ok_or(StoreError::NotFound("viewer"))?;
    finish(
        tx,
        Action::StatuspageViewerReset,
        page_id,
        viewer_id,
        &email,
    )
    .await
}
