//! A private page's own identity provider for its viewers
//! (`upstate_core::viewer_provider`): one row per page that has one, its
//! client secret sealed with the server key as the team's is. Read when a
//! viewer signs in and when the gate is drawn, never by the public snapshot.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::sealed::Purpose;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::viewer_provider::ViewerProvider;
use upstate_core::{FieldErrors, Id};

type Row = (String, String, Option<String>, String, bool);

const SELECT: &str = "SELECT issuer, client_id, client_secret, button_label, admit_all \
     FROM viewer_providers WHERE page_id = $1";

fn open(db: &Db, row: Option<Row>) -> StoreResult<Option<ViewerProvider>> {
    let Some((issuer, client_id, sealed, button_label, admit_all)) = row else {
        return Ok(None);
    };
    Ok(Some(ViewerProvider {
        issuer,
        client_id,
        client_secret: match sealed {
            Some(sealed) => db.keys.open(Purpose::Sso, &sealed)?,
            None => String::new(),
        },
        button_label,
        admit_all,
    }))
}

/// The page's own provider, if it has one (no page: none either).
pub async fn of(db: &Db, page_id: Id) -> StoreResult<Option<ViewerProvider>> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(SELECT)
        .bind(page_id)
        .fetch_optional(c)
        .await?);
    open(db, row)
}

/// The page's own provider; `NotFound` when there is no such page.
pub async fn get(db: &Db, page_id: Id) -> StoreResult<Option<ViewerProvider>> {
    crate::pages::get(db, page_id).await?;
    of(db, page_id).await
}

async fn current(db: &Db, tx: &mut Tx, page_id: Id) -> StoreResult<Option<ViewerProvider>> {
    let row: Option<Row> = on_tx!(tx, |c| sqlx::query_as(SELECT)
        .bind(page_id)
        .fetch_optional(c)
        .await?);
    open(db, row)
}

/// Sets the page's provider with `change` (given the saved one, read under
/// the page's lock, taken first as every page write does). Audited without
/// the secret.
pub async fn set(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    change: impl FnOnce(Option<&ViewerProvider>) -> Result<ViewerProvider, FieldErrors>,
) -> StoreResult<ViewerProvider> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let before = current(db, &mut tx, page_id).await?;
    let next = change(before.as_ref()).map_err(StoreError::Invalid)?;
    let sealed = db.keys.seal_opt(
        Purpose::Sso,
        Some(next.client_secret.as_str()).filter(|s| !s.is_empty()),
    )?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO viewer_providers (page_id, issuer, client_id, client_secret, button_label, admit_all, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (page_id) DO UPDATE SET \
         issuer = excluded.issuer, client_id = excluded.client_id, client_secret = excluded.client_secret, \
         button_label = excluded.button_label, admit_all = excluded.admit_all, updated_at = excluded.updated_at"
    )
    .bind(page_id)
    .bind(&next.issuer)
    .bind(&next.client_id)
    .bind(&sealed)
    .bind(&next.button_label)
    .bind(next.admit_all)
    .bind(now)
    .execute(c)
    .await
    .map(|_| ())?
    });
    let audited = tx
        .audit(
            Action::StatuspageViewerProvider,
            "statuspage",
            Some(page_id),
            json!({
                "from": before.as_ref().map(ViewerProvider::audited),
                "to": next.audited(),
            }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(next)
}

/// Removes the page's provider: its viewers sign in through the team's
/// again. `NotFound` when the page has none.
pub async fn remove(db: &Db, ctx: &AuditCtx, page_id: Id) -> StoreResult<()> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let before = current(db, &mut tx, page_id)
        .await?
        .ok_or(StoreError::NotFound("viewer provider"))?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM viewer_providers WHERE page_id = $1"
    )
    .bind(page_id)
    .execute(c)
    .await
    .map(|_| ())?);
    let audited = tx
        .audit(
            Action::StatuspageViewerProvider,
            "statuspage",
            Some(page_id),
            json!({ "from": before.audited(), "to": null }),
        )
        .await?;
    tx.commit(audited).await
}
