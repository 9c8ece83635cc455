//! A page's audience groups (`upstate_core::audience`): which components
//! only some viewers see. The public snapshot reads them with the page; the
//! fan-out matches subscribers against them in SQL (`deliveries::fan_out`),
//! by the same rule.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use serde_json::json;
use upstate_core::audience::{AUDIENCES_MAX, Audience, AudienceInput, NewAudienceInput};
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::{FieldErrors, Id};

const HEADS: &str = "SELECT id, name FROM page_audiences WHERE page_id = $1 ORDER BY name, id";
const COMPONENTS: &str = "SELECT ac.audience_id, ac.component_id FROM audience_components ac \
     JOIN page_audiences a ON a.id = ac.audience_id WHERE a.page_id = $1 ORDER BY ac.component_id";
const MEMBERS: &str = "SELECT am.audience_id, am.member FROM audience_members am \
     JOIN page_audiences a ON a.id = am.audience_id WHERE a.page_id = $1 ORDER BY am.member";

fn assemble(
    heads: Vec<(i64, String)>,
    components: Vec<(i64, i64)>,
    members: Vec<(i64, String)>,
) -> Vec<Audience> {
    heads
        .into_iter()
        .map(|(id, name)| {
            let mut a = Audience {
                id,
                name,
                component_ids: components
                    .iter()
                    .filter(|(g, _)| *g == id)
                    .map(|(_, c)| *c)
                    .collect(),
                emails: Vec::new(),
                email_domains: Vec::new(),
            };
            a.set_members(
                members
                    .iter()
                    .filter(|(g, _)| *g == id)
                    .map(|(_, m)| m.clone())
                    .collect(),
            );
            a
        })
        .collect()
}

/// A page's groups; `NotFound` when there is no such page.
pub async fn list(db: &Db, page_id: Id) -> StoreResult<Vec<Audience>> {
    crate::pages::get(db, page_id).await?;
    of(db, page_id).await
}

/// A page's groups, by name (the snapshot builder, the sender).
pub async fn of(db: &Db, page_id: Id) -> StoreResult<Vec<Audience>> {
    let heads = on_db!(db, |c| sqlx::query_as(HEADS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    if heads.is_empty() {
        return Ok(Vec::new());
    }
    let components = on_db!(db, |c| sqlx::query_as(COMPONENTS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    let members = on_db!(db, |c| sqlx::query_as(MEMBERS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    Ok(assemble(heads, components, members))
}

async fn of_in(tx: &mut Tx, page_id: Id) -> StoreResult<Vec<Audience>> {
    let heads = on_tx!(tx, |c| sqlx::query_as(HEADS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    let components = on_tx!(tx, |c| sqlx::query_as(COMPONENTS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    let members = on_tx!(tx, |c| sqlx::query_as(MEMBERS)
        .bind(page_id)
        .fetch_all(c)
        .await?);
    Ok(assemble(heads, components, members))
}

/// Locks the page row first, as every write to a page does (and moves its
/// `updated_at`, so caches of its bodies change their ETag).
/// The group's components must be the page's own: one read of the
/// page's ids, however many the group names.
async fn check_components(tx: &mut Tx, page_id: Id, a: &Audience) -> StoreResult<()> {
    let own: Vec<i64> = on_tx!(tx, |c| sqlx::query_scalar(
        "SELECT id FROM components WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_all(c)
    .await?);
    let foreign: Vec<String> = a
        .component_ids
        .iter()
        .filter(|id| !own.contains(id))
        .map(ToString::to_string)
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    Err(StoreError::Invalid(FieldErrors::single(
        "componentIds",
        format!("no component of this page has id {}", foreign.join(", ")),
    )))
}

/// Writes the group's name, components and members (all of them anew).
async fn write(tx: &mut Tx, a: &Audience) -> StoreResult<()> {
    on_tx!(tx, |c| sqlx::query(
        "UPDATE page_audiences SET name = $1 WHERE id = $2"
    )
    .bind(&a.name)
    .bind(a.id)
    .execute(c)
    .await
    .map_err(|e| StoreError::unique(e, "the page has an audience group of this name already"))
    .map(|_| ())?);
    for sql in [
        "DELETE FROM audience_components WHERE audience_id = $1",
        "DELETE FROM audience_members WHERE audience_id = $1",
    ] {
        on_tx!(tx, |c| sqlx::query(sql)
            .bind(a.id)
            .execute(c)
            .await
            .map(|_| ())?);
    }
    for component in &a.component_ids {
        on_tx!(tx, |c| sqlx::query(
            "INSERT INTO audience_components (audience_id, component_id) VALUES ($1, $2)"
        )
        .bind(a.id)
        .bind(component)
        .execute(c)
        .await
        .map(|_| ())?);
    }
    for member in a.members() {
        on_tx!(tx, |c| sqlx::query(
            "INSERT INTO audience_members (audience_id, member) VALUES ($1, $2)"
        )
        .bind(a.id)
        .bind(&member)
        .execute(c)
        .await
        .map(|_| ())?);
    }
    Ok(())
}

async fn finish(
    mut tx: Tx,
    action: Action,
    page_id: Id,
    detail: serde_json::Value,
) -> StoreResult<()> {
    let audited = tx
        .audit(action, "statuspage", Some(page_id), detail)
        .await?;
    tx.record(Event::PageUpdated { page: page_id }).await?;
    tx.commit(audited).await
}

pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    input: NewAudienceInput,
) -> StoreResult<Audience> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let mut a = input.create().map_err(StoreError::Invalid)?;
    let count: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM page_audiences WHERE page_id = $1"
    )
    .bind(page_id)
    .fetch_one(c)
    .await?);
    if count >= AUDIENCES_MAX as i64 {
        return Err(StoreError::Conflict(format!(
            "the page has {count} audience groups; at most {AUDIENCES_MAX}"
        )));
    }
    check_components(&mut tx, page_id, &a).await?;
    a.id = on_tx!(&mut tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO page_audiences (page_id, name, created_at) VALUES ($1, $2, $3) RETURNING id"
    )
    .bind(page_id)
    .bind(&a.name)
    .bind(now)
    .fetch_one(c)
    .await
    .map_err(|e| StoreError::unique(e, "the page has an audience group of this name already"))?
    });
    write(&mut tx, &a).await?;
    finish(
        tx,
        Action::StatuspageAudienceCreate,
        page_id,
        json!({ "audience": a }),
    )
    .await?;
    Ok(a)
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    page_id: Id,
    audience_id: Id,
    input: AudienceInput,
) -> StoreResult<Audience> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let before = of_in(&mut tx, page_id)
        .await?
        .into_iter()
        .find(|a| a.id == audience_id)
        .ok_or(StoreError::NotFound("audience group"))?;
    let after = input.apply(&before).map_err(StoreError::Invalid)?;
    check_components(&mut tx, page_id, &after).await?;
    write(&mut tx, &after).await?;
    finish(
        tx,
        Action::StatuspageAudienceUpdate,
        page_id,
        json!({ "from": before, "to": after }),
    )
    .await?;
    Ok(after)
}

pub async fn delete(db: &Db, ctx: &AuditCtx, page_id: Id, audience_id: Id) -> StoreResult<()> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::lock_in(&mut tx, page_id, now).await?;
    let before = of_in(&mut tx, page_id)
        .await?
        .into_iter()
        .find(|a| a.id == audience_id)
        .ok_or(StoreError::NotFound("audience group"))?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM page_audiences WHERE id = $1"
    )
    .bind(audience_id)
    .execute(c)
    .await
    .map(|_| ())?);
    finish(
        tx,
        Action::StatuspageAudienceDelete,
        page_id,
        json!({ "audience": before }),
    )
    .await
}
