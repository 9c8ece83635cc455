//! Web push subscriptions (subscribers of kind `push`) and the install's
//! VAPID key pair (docs/notifications.md, "Web push"). A visitor's browser
//! subscribes and unsubscribes by its endpoint, the capability only that
//! browser holds; like the other visitor actions this is bookkeeping.

use crate::db::Db;
use crate::error::StoreResult;
use crate::sealed::Purpose;
use crate::subscribers::{set_components, token};
use upstate_core::Id;
use upstate_core::push::PushSubscription;

/// Adds (or refreshes the keys and components of) a browser's
/// subscription to `page`; push needs no opt-in link, the browser's own
/// permission prompt is the consent.
pub async fn subscribe(db: &Db, page: Id, s: &PushSubscription) -> StoreResult<Id> {
    let now = db.clock.now().millis();
    let mut tx = db.bookkeeping().await?;
    let id: i64 = on_tx!(&mut tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO subscribers (page_id, kind, target, token, verified_at, created_at, push_p256dh, push_auth, joined_after) \
         VALUES ($1, 'push', $2, $3, $4, $4, $5, $6, (SELECT COALESCE(MAX(id), 0) FROM outbox)) \
         ON CONFLICT (page_id, kind, target) DO UPDATE SET push_p256dh = $5, push_auth = $6 RETURNING id"
    )
    .bind(page)
    .bind(&s.endpoint)
    .bind(token())
    .bind(now)
    .bind(&s.p256dh)
    .bind(&s.auth)
    .fetch_one(c)
    .await?
    });
    set_components(&mut tx.within(), id, &s.component_ids).await?;
    tx.commit().await?;
    Ok(id)
}

/// Ends every subscription of this endpoint (of one page, or all);
/// returns how many there were.
pub async fn unsubscribe(db: &Db, endpoint: &str, page: Option<Id>) -> StoreResult<u64> {
    let mut tx = db.bookkeeping().await?;
    let n = on_tx!(&mut tx, |c| {
        sqlx::query(
        "DELETE FROM subscribers WHERE kind = 'push' AND target = $1 AND ($2 IS NULL OR page_id = $2)"
    )
    .bind(endpoint)
    .bind(page)
    .execute(c)
    .await?
    .rows_affected()
    });
    tx.commit().await?;
    Ok(n)
}

/// Drops one push subscription its push service says is gone.
pub async fn forget(db: &Db, subscriber: Id) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM subscribers WHERE id = $1 AND kind = 'push'"
    )
    .bind(subscriber)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

/// The pages this endpoint is subscribed to.
pub async fn pages_of(db: &Db, endpoint: &str) -> StoreResult<Vec<Id>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT page_id FROM subscribers WHERE kind = 'push' AND target = $1 ORDER BY page_id"
    )
    .bind(endpoint)
    .fetch_all(c)
    .await?))
}

/// The VAPID key pair (private, public), if made.
pub async fn vapid(db: &Db) -> StoreResult<Option<(String, String)>> {
    let pair: Option<(String, String)> = on_db!(db, |c| sqlx::query_as(
        "SELECT private_key, public_key FROM vapid_keys WHERE id = 1"
    )
    .fetch_optional(c)
    .await?);
    pair.map(|(private, public)| Ok((db.keys.open(Purpose::Vapid, &private)?, public)))
        .transpose()
}

/// Keeps `pair` as the key pair unless one exists (two instances making
/// one at once keep the first); returns the one kept.
pub async fn keep_vapid(db: &Db, private: &str, public: &str) -> StoreResult<(String, String)> {
    let sealed = db.keys.seal(Purpose::Vapid, private)?;
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO vapid_keys (id, private_key, public_key, created_at) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING"
    )
    .bind(&sealed)
    .bind(public)
    .bind(db.clock.now().millis())
    .execute(c)
    .await?
    .rows_affected()
    });
    tx.commit().await?;
    Ok(vapid(db)
        .await?
        .unwrap_or((private.to_string(), public.to_string())))
}
