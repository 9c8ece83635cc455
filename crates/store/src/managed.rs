//! What `upstate apply` manages (docs/setup-as-code.md): the objects it
//! made or adopted from a setup file, so that a later apply deletes only
//! those the file no longer declares, and screens can say an object is
//! managed as code. The list is replaced whole, in one audited change.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::StoreResult;
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::setup::{ManagedKind, ManagedObject};

#[derive(sqlx::FromRow)]
struct Row {
    kind: String,
    object_id: i64,
    key: String,
}

pub async fn list(db: &Db) -> StoreResult<Vec<ManagedObject>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(
        "SELECT kind, object_id, key FROM managed ORDER BY kind, object_id"
    )
    .fetch_all(c)
    .await?);
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            Some(ManagedObject {
                kind: r.kind.parse::<ManagedKind>().ok()?,
                id: r.object_id,
                key: r.key,
            })
        })
        .collect())
}

/// Whether an object of `kind` is managed.
pub async fn is_managed(db: &Db, kind: ManagedKind, id: upstate_core::Id) -> StoreResult<bool> {
    let n: i64 = on_db!(db, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM managed WHERE kind = $1 AND object_id = $2"
    )
    .bind(kind.as_str())
    .bind(id)
    .fetch_one(c)
    .await?);
    Ok(n > 0)
}

/// Replaces the whole list; the same list again writes nothing (an apply
/// that changes nothing leaves no trace in the audit log).
pub async fn replace(db: &Db, ctx: &AuditCtx, objects: &[ManagedObject]) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let now: Vec<Row> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT kind, object_id, key FROM managed"
    )
    .fetch_all(c)
    .await?);
    let mut before: Vec<(String, i64, String)> = now
        .into_iter()
        .map(|r| (r.kind, r.object_id, r.key))
        .collect();
    let mut after: Vec<(String, i64, String)> = objects
        .iter()
        .map(|o| (o.kind.as_str().to_string(), o.id, o.key.clone()))
        .collect();
    before.sort();
    after.sort();
    after.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    if before == after {
        return Ok(());
    }
    on_tx!(&mut tx, |c| sqlx::query("DELETE FROM managed")
        .execute(c)
        .await?
        .rows_affected());
    for o in objects {
        on_tx!(&mut tx, |c| sqlx::query(
            "INSERT INTO managed (kind, object_id, key) VALUES ($1, $2, $3) \
             ON CONFLICT (kind, object_id) DO UPDATE SET key = excluded.key"
        )
        .bind(o.kind.as_str())
        .bind(o.id)
        .bind(&o.key)
        .execute(c)
        .await?
        .rows_affected());
    }
    let audited = tx
        .audit(
            Action::ManagedReplace,
            "managed",
            None,
            json!({ "count": objects.len() }),
        )
        .await?;
    tx.commit(audited).await
}
