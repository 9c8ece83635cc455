//! Incidents and their timelines. Every status change is a timeline entry;
//! `resolved_at` is set on entering `resolved` and cleared on leaving it.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::rows::{IncidentRow, UpdateRow};
use crate::timeline;
use crate::{components, pages};
use serde_json::json;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::*;

/// What `GET /incidents` filters on. `unresolved` is accepted as a status
/// meaning every state but `resolved`.
#[derive(Debug, Clone, Default)]
pub struct IncidentFilter {
    pub page_id: Option<Id>,
    pub status: Option<String>,
    pub limit: i64,
    /// Only incidents created at or after this instant and before the next.
    pub created_between: Option<(Timestamp, Timestamp)>,
    /// Only incidents whose title holds this text (any case).
    pub text: Option<String>,
    /// Only incidents of this impact (`none`, `minor`, `major`, `critical`).
    pub impact: Option<String>,
    /// Skip this many (paging).
    pub offset: i64,
}

/// `text` as a LIKE pattern that matches it anywhere, its own `%`, `_`
/// and `\` taken literally.
fn containing(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

pub async fn list(db: &Db, f: &IncidentFilter) -> StoreResult<Vec<Incident>> {
    let (from, until) = f
        .created_between
        .map(|(a, b)| (a.millis(), b.millis()))
        .unzip();
    let rows: Vec<IncidentRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        incident_cols!(),
        " FROM incidents WHERE ($1 IS NULL OR page_id = $1) \
          AND ($2 IS NULL OR status = $2 OR ($2 = 'unresolved' AND status <> 'resolved')) \
          AND ($4 IS NULL OR created_at >= $4) AND ($5 IS NULL OR created_at < $5) \
          AND ($6 IS NULL OR LOWER(title) LIKE $6 ESCAPE '\\') AND ($7 IS NULL OR impact = $7) \
          ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $8"
    ))
    .bind(f.page_id)
    .bind(f.status.as_deref())
    .bind(f.limit)
    .bind(from)
    .bind(until)
    .bind(f.text.as_deref().map(containing))
    .bind(f.impact.as_deref())
    .bind(f.offset)
    .fetch_all(c)
    .await?);
    assemble(db, rows).await
}

/// A page's incidents for its public snapshot: every open one, and the
/// latest `resolved` resolved ones, newest first. Two plain queries the
/// indexes answer (`incidents_open`, `incidents_page`), which `list`'s
/// filter of every option did not with 100,000 past incidents.
pub async fn of_page(db: &Db, page_id: Id, resolved: i64) -> StoreResult<Vec<Incident>> {
    let mut rows: Vec<IncidentRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        incident_cols!(),
        " FROM incidents WHERE page_id = $1 AND status <> 'resolved' \
          ORDER BY created_at DESC, id DESC"
    ))
    .bind(page_id)
    .fetch_all(c)
    .await?);
    let done: Vec<IncidentRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        incident_cols!(),
        " FROM incidents WHERE page_id = $1 AND status = 'resolved' \
          ORDER BY created_at DESC, id DESC LIMIT $2"
    ))
    .bind(page_id)
    .bind(resolved)
    .fetch_all(c)
    .await?);
    rows.extend(done);
    assemble(db, rows).await
}

async fn assemble(db: &Db, rows: Vec<IncidentRow>) -> StoreResult<Vec<Incident>> {
    let ids: Vec<Id> = rows.iter().map(|r| r.id).collect();
    let mut children = timeline::of(
        db,
        &timeline::INCIDENTS,
        &ids,
        UpdateRow::into_incident_update,
    )
    .await?;
    rows.into_iter()
        .map(|r| {
            let (updates, links) = children.take(r.id);
            r.into_incident(updates, links)
        })
        .collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Incident> {
    let row: Option<IncidentRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        incident_cols!(),
        " FROM incidents WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    let row = row.ok_or(StoreError::NotFound("incident"))?;
    assemble(db, vec![row])
        .await?
        .pop()
        .ok_or(StoreError::NotFound("incident"))
}

async fn lock(tx: &mut Tx, id: Id) -> StoreResult<IncidentRow> {
    let row: Option<IncidentRow> = locked!(
        tx,
        concat!("SELECT ", incident_cols!(), " FROM incidents WHERE id = $1"),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    row.ok_or(StoreError::NotFound("incident"))
}

async fn add_update(
    tx: &mut Tx,
    incident_id: Id,
    status: IncidentStatus,
    message: &str,
    at: Timestamp,
) -> StoreResult<IncidentUpdate> {
    let id: i64 = on_tx!(tx, |c| {
        sqlx::query_scalar("INSERT INTO incident_updates (incident_id, status, message, created_at) VALUES ($1, $2, $3, $4) RETURNING id")
        .bind(incident_id)
        .bind(status.as_str())
        .bind(message)
        .bind(at.millis())
        .fetch_one(c)
        .await?
    });
    Ok(IncidentUpdate {
        id,
        message: message.to_string(),
        status,
        created_at: at,
    })
}

async fn set_components(tx: &mut Tx, incident_id: Id, ids: &[Id]) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| sqlx::query(
        "DELETE FROM incident_components WHERE incident_id = $1"
    )
    .bind(incident_id)
    .execute(c)
    .await?
    .rows_affected());
    link_components(tx, incident_id, ids).await
}

/// Adds affected components to an incident that has none of them yet.
async fn link_components(tx: &mut Tx, incident_id: Id, ids: &[Id]) -> StoreResult<()> {
    for id in ids {
        on_tx!(&mut *tx, |c| sqlx::query(
            "INSERT INTO incident_components (incident_id, component_id) VALUES ($1, $2)"
        )
        .bind(incident_id)
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    }
    Ok(())
}

/// Moves each named component to its status (history and change events as
/// for any status change) and makes it one of the incident's affected
/// components unless it is among `linked` already. A component that is not
/// on the incident's page is refused, naming `componentStatuses` (the
/// transaction then rolls back what moved before it): the row it locks is
/// the check, so a write reads each component once.
async fn move_components(
    tx: &mut Tx,
    incident_id: Id,
    page_id: Id,
    changes: &[ComponentStatusChange],
    linked: &[Id],
    at: Timestamp,
) -> StoreResult<()> {
    for change in changes {
        let id = change.component_id;
        let current = match components::get_locked(tx, id).await {
            Ok(c) if c.status_page_id == page_id => c,
            Ok(_) => {
                return Err(StoreError::invalid_ref(
                    "componentStatuses",
                    format!("component {id} belongs to another status page"),
                ));
            }
            Err(StoreError::NotFound(_)) => {
                return Err(StoreError::invalid_ref(
                    "componentStatuses",
                    format!("no component with id {id}"),
                ));
            }
            Err(e) => return Err(e),
        };
        if current.status != change.status {
            crate::monitors::take_over_if_by_hand(tx, id).await?;
        }
        components::set_status(tx, id, current.status, change.status, at).await?;
        if linked.contains(&id) {
            continue;
        }
        on_tx!(&mut *tx, |c| {
            sqlx::query(
            "INSERT INTO incident_components (incident_id, component_id) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        )
        .bind(incident_id)
        .bind(id)
        .execute(c)
        .await?
        .rows_affected()
        });
    }
    Ok(())
}

/// Writes status, impact, title and `resolved_at` as a status change implies.
async fn write_state(
    tx: &mut Tx,
    id: Id,
    title: &str,
    status: IncidentStatus,
    impact: Impact,
    resolved_at: Option<i64>,
    at: Timestamp,
) -> StoreResult<()> {
    on_tx!(tx, |c| {
        sqlx::query("UPDATE incidents SET title = $1, status = $2, impact = $3, resolved_at = $4, updated_at = $5 WHERE id = $6")
        .bind(title)
        .bind(status.as_str())
        .bind(impact.as_str())
        .bind(resolved_at)
        .bind(at.millis())
        .bind(id)
        .execute(c)
        .await?
        .rows_affected()
    });
    Ok(())
}

/// `resolved_at` after moving from `from` to `to`: set on entering resolved,
/// kept while resolved, cleared on leaving.
fn resolved_at_after(
    from: IncidentStatus,
    to: IncidentStatus,
    current: Option<i64>,
    now: Timestamp,
) -> Option<i64> {
    match (from, to) {
        (IncidentStatus::Resolved, IncidentStatus::Resolved) => current.or(Some(now.millis())),
        (_, IncidentStatus::Resolved) => Some(now.millis()),
        _ => None,
    }
}

/// The event of a change to an incident: its resolution is news of its own.
fn moved(
    page: Id,
    incident: Id,
    from: IncidentStatus,
    to: IncidentStatus,
    impact: Impact,
) -> Event {
    if to == IncidentStatus::Resolved && from != to {
        Event::IncidentResolved { page, incident }
    } else {
        Event::IncidentUpdated {
            page,
            incident,
            status: to,
            impact,
        }
    }
}

pub async fn create(db: &Db, ctx: &AuditCtx, new: NewIncident) -> StoreResult<Incident> {
    let now = db.clock.now();
    let at = match new.past {
        Some(past) => {
            not_future(past.created_at, now, "createdAt")?;
            if let Some(resolved) = past.resolved_at {
                not_future(resolved, now, "resolvedAt")?;
            }
            past.created_at
        }
        None => now,
    };
    // A record of the past is news to nobody who subscribed.
    let ctx = ctx.quiet_if(ctx.quiet || new.past.is_some());
    let mut tx = db.begin_as(&ctx).await?;
    let (id, audited) = create_in(&mut tx, new, at).await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// How far ahead of this server's clock a time of the past may be (the
/// sender's clock may run a little fast).
const SKEW_MS: i64 = 60_000;

/// The closing update of a past incident recorded resolved.
const RESOLVED_MESSAGE: &str = "This incident has been resolved.";

fn not_future(t: Timestamp, now: Timestamp, field: &'static str) -> StoreResult<()> {
    if t.millis() > now.millis() + SKEW_MS {
        return Err(StoreError::Invalid(upstate_core::FieldErrors::single(
            field,
            "must not be in the future",
        )));
    }
    Ok(())
}

/// Creates an incident inside a transaction that may hold more of the same
/// change (a monitor's move of its component and the incident it opens
/// commit together, or neither does).
pub(crate) async fn create_in(
    tx: &mut Tx,
    new: NewIncident,
    now: Timestamp,
) -> StoreResult<(Id, crate::audit::Audited)> {
    pages::require_in(tx, new.status_page_id, "statusPageId").await?;
    // Components that move are checked as they move (`move_components`).
    let unmoved: Vec<Id> = new
        .component_ids
        .iter()
        .copied()
        .filter(|id| !new.component_statuses.iter().any(|c| c.component_id == *id))
        .collect();
    components::require_all_on_page(tx, &unmoved, new.status_page_id).await?;
    let resolved_at = (new.status == IncidentStatus::Resolved).then_some(now.millis());
    let id: i64 = on_tx!(tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO incidents (page_id, title, status, impact, created_at, updated_at, resolved_at) VALUES ($1, $2, $3, $4, $5, $5, $6) RETURNING id"
    )
    .bind(new.status_page_id)
    .bind(&new.title)
    .bind(new.status.as_str())
    .bind(new.impact.as_str())
    .bind(now.millis())
    .bind(resolved_at)
    .fetch_one(c)
    .await?
    });
    add_update(tx, id, new.status, &new.message, now).await?;
    link_components(tx, id, &new.component_ids).await?;
    let resolved_past = new.past.and_then(|p| p.resolved_at);
    if let Some(resolved) = resolved_past {
        // Over before it is recorded: the components' history shows it,
        // their present status stays.
        components::require_all_on_page(tx, &new.component_ids, new.status_page_id).await?;
        for change in &new.component_statuses {
            components::record_past(tx, change.component_id, change.status, now, resolved).await?;
        }
        add_update(tx, id, IncidentStatus::Resolved, RESOLVED_MESSAGE, resolved).await?;
        on_tx!(tx, |c| sqlx::query(
            "UPDATE incidents SET status = $1, resolved_at = $2, updated_at = $2 WHERE id = $3"
        )
        .bind(IncidentStatus::Resolved.as_str())
        .bind(resolved.millis())
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    } else {
        move_components(
            tx,
            id,
            new.status_page_id,
            &new.component_statuses,
            &new.component_ids,
            now,
        )
        .await?;
    }
    let mut summary = json!({ "title": &new.title, "status": new.status, "impact": new.impact, "statusPageId": new.status_page_id, "componentIds": &new.component_ids, "componentStatuses": &new.component_statuses, "message": &new.message });
    if let Some(past) = new.past {
        summary["backdated"] =
            json!({ "createdAt": past.created_at, "resolvedAt": past.resolved_at });
    }
    let audited = tx
        .audit(Action::IncidentCreate, "incident", Some(id), summary)
        .await?;
    tx.record(Event::IncidentCreated {
        page: new.status_page_id,
        incident: id,
        status: new.status,
        impact: new.impact,
    })
    .await?;
    Ok((id, audited))
}

pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    patch: IncidentPatch,
) -> StoreResult<Incident> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let row = lock(&mut tx, id).await?;
    let current = row.into_incident(vec![], vec![])?;
    if let Some(ids) = &patch.component_ids {
        components::require_all_on_page(&mut tx, ids, current.status_page_id).await?;
        set_components(&mut tx, id, ids).await?;
    }
    move_components(
        &mut tx,
        id,
        current.status_page_id,
        &patch.component_statuses,
        patch.component_ids.as_deref().unwrap_or_default(),
        now,
    )
    .await?;
    let status = patch.status.unwrap_or(current.status);
    let resolved_at = resolved_at_after(
        current.status,
        status,
        current.resolved_at.map(Timestamp::millis),
        now,
    );
    let title = patch.title.clone().unwrap_or(current.title);
    write_state(
        &mut tx,
        id,
        &title,
        status,
        patch.impact.unwrap_or(current.impact),
        resolved_at,
        now,
    )
    .await?;
    // A status change or an explicit message is a timeline entry.
    if status != current.status || patch.message.is_some() {
        add_update(
            &mut tx,
            id,
            status,
            patch.message.as_deref().unwrap_or(""),
            now,
        )
        .await?;
    }
    let summary = json!({ "from": current.status, "to": status, "title": &patch.title, "impact": patch.impact, "componentIds": &patch.component_ids, "componentStatuses": &patch.component_statuses, "message": &patch.message });
    let audited = tx
        .audit(Action::IncidentUpdate, "incident", Some(id), summary)
        .await?;
    let impact = patch.impact.unwrap_or(current.impact);
    tx.record(moved(
        current.status_page_id,
        id,
        current.status,
        status,
        impact,
    ))
    .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

pub async fn post_update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    new: NewIncidentUpdate,
) -> StoreResult<IncidentUpdate> {
    let now = db.clock.now();
    if let Some(at) = new.at {
        not_future(at, now, "createdAt")?;
    }
    let ctx = ctx.quiet_if(ctx.quiet || new.at.is_some());
    let mut tx = db.begin_as(&ctx).await?;
    let current = lock(&mut tx, id).await?.into_incident(vec![], vec![])?;
    // An update said before the incident's last one takes its place in
    // the timeline and changes nothing the later updates decided: the
    // incident's status stays, and no component moves.
    let mut earlier = false;
    if let Some(at) = new.at {
        let last: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
            "SELECT MAX(created_at) FROM incident_updates WHERE incident_id = $1"
        )
        .bind(id)
        .fetch_one(c)
        .await?);
        earlier = last.is_some_and(|l| at.millis() < l);
        if earlier && !new.component_statuses.is_empty() {
            // A later update decided where the components stand.
            return Err(StoreError::Conflict(
                "componentStatuses cannot move components at a time before the incident's last update".into(),
            ));
        }
    }
    let now = new.at.unwrap_or(now);
    let status = new.status.unwrap_or(current.status);
    if !earlier {
        let resolved_at = resolved_at_after(
            current.status,
            status,
            current.resolved_at.map(Timestamp::millis),
            now,
        );
        write_state(
            &mut tx,
            id,
            &current.title,
            status,
            current.impact,
            resolved_at,
            now,
        )
        .await?;
    }
    let update = add_update(&mut tx, id, status, &new.message, now).await?;
    move_components(
        &mut tx,
        id,
        current.status_page_id,
        &new.component_statuses,
        &[],
        now,
    )
    .await?;
    let audited = tx
        .audit(
            Action::IncidentPostUpdate,
            "incident",
            Some(id),
            json!({ "from": current.status, "to": if earlier { current.status } else { status }, "message": &new.message, "componentStatuses": &new.component_statuses, "backdated": new.at }),
        )
        .await?;
    tx.record(moved(
        current.status_page_id,
        id,
        current.status,
        if earlier { current.status } else { status },
        current.impact,
    ))
    .await?;
    tx.commit(audited).await?;
    Ok(update)
}

pub async fn resolve(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    resolution: (String, Vec<ComponentStatusChange>),
) -> StoreResult<Incident> {
    let mut tx = db.begin_as(ctx).await?;
    let audited = resolve_in(&mut tx, id, resolution, db.clock.now()).await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Resolves an incident inside a transaction that may hold more of the same
/// change (see `create_in`).
pub(crate) async fn resolve_in(
    tx: &mut Tx,
    id: Id,
    (message, changes): (String, Vec<ComponentStatusChange>),
    now: Timestamp,
) -> StoreResult<crate::audit::Audited> {
    let current = lock(tx, id).await?.into_incident(vec![], vec![])?;
    if current.status == IncidentStatus::Resolved {
        return Err(StoreError::Conflict(
            "the incident is already resolved".into(),
        ));
    }
    write_state(
        tx,
        id,
        &current.title,
        IncidentStatus::Resolved,
        current.impact,
        Some(now.millis()),
        now,
    )
    .await?;
    add_update(tx, id, IncidentStatus::Resolved, &message, now).await?;
    move_components(tx, id, current.status_page_id, &changes, &[], now).await?;
    let audited = tx
        .audit(
            Action::IncidentResolve,
            "incident",
            Some(id),
            json!({ "from": current.status, "message": &message, "componentStatuses": &changes }),
        )
        .await?;
    tx.record(Event::IncidentResolved {
        page: current.status_page_id,
        incident: id,
    })
    .await?;
    Ok(audited)
}

/// Locks an incident; false when it is resolved or gone (an integration's
/// group then stops following it).
pub(crate) async fn lock_open(tx: &mut Tx, id: Id) -> StoreResult<bool> {
    match lock(tx, id).await {
        Ok(row) => Ok(row.into_incident(vec![], vec![])?.status != IncidentStatus::Resolved),
        Err(StoreError::NotFound(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// More components join an open incident (an integration's alert of the
/// same group): they move and become affected ones, with no timeline
/// entry of their own.
pub(crate) async fn join_in(
    tx: &mut Tx,
    id: Id,
    changes: &[ComponentStatusChange],
    now: Timestamp,
) -> StoreResult<crate::audit::Audited> {
    let current = lock(tx, id).await?.into_incident(vec![], vec![])?;
    move_components(tx, id, current.status_page_id, changes, &[], now).await?;
    tx.audit(
        Action::IncidentUpdate,
        "incident",
        Some(id),
        json!({ "componentStatuses": changes, "by": "integration" }),
    )
    .await
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    db.delete_by_id(
        ctx,
        id,
        &crate::db::Deletion {
            sql: "DELETE FROM incidents WHERE id = $1 RETURNING page_id",
            what: "incident",
            target_type: "incident",
            action: upstate_core::audit::Action::IncidentDelete,
            event: |page, incident| Event::IncidentDeleted { page, incident },
            // The alert group that opened it ends with it: the group's next
            // alert opens a new incident (docs/integrations.md), where it
            // would otherwise join a group that has no incident left.
            before: "UPDATE alert_groups SET state = 'closed', closed_at = $2 \
                     WHERE incident_id = $1 AND state IN ('draft', 'open')",
        },
    )
    .await
}

/// Deletes one update of an incident's timeline (a mistaken or duplicate
/// post). The incident keeps at least one; its status stays what it is.
pub async fn delete_update(db: &Db, ctx: &AuditCtx, update_id: Id) -> StoreResult<Incident> {
    let mut tx = db.begin_as(ctx).await?;
    let incident: Option<Id> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT incident_id FROM incident_updates WHERE id = $1"
    )
    .bind(update_id)
    .fetch_optional(c)
    .await?);
    let incident = incident.ok_or(StoreError::NotFound("incident update"))?;
    let current = lock(&mut tx, incident)
        .await?
        .into_incident(vec![], vec![])?;
    let count: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM incident_updates WHERE incident_id = $1"
    )
    .bind(incident)
    .fetch_one(c)
    .await?);
    if count <= 1 {
        return Err(StoreError::Conflict(
            "this is the incident's only update; delete the incident instead".into(),
        ));
    }
    let message: String = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM incident_updates WHERE id = $1 RETURNING message"
    )
    .bind(update_id)
    .fetch_one(c)
    .await?);
    let summary = json!({ "updateId": update_id, "message": message });
    timeline_changed(db, tx, Action::IncidentDeleteUpdate, &current, summary).await
}

/// Commits a change of one timeline entry of `current`: audited, and the
/// incident's followers hear it was updated. Answers the incident.
async fn timeline_changed(
    db: &Db,
    mut tx: Tx,
    action: Action,
    current: &Incident,
    summary: serde_json::Value,
) -> StoreResult<Incident> {
    let audited = tx
        .audit(action, "incident", Some(current.id), summary)
        .await?;
    tx.record(Event::IncidentUpdated {
        page: current.status_page_id,
        incident: current.id,
        status: current.status,
        impact: current.impact,
    })
    .await?;
    tx.commit(audited).await?;
    get(db, current.id).await
}

/// Corrects the text of one update (a typo, a wrong figure); its status and
/// time stay. The audit event keeps the text before and after.
pub async fn edit_update(
    db: &Db,
    ctx: &AuditCtx,
    update_id: Id,
    message: &str,
) -> StoreResult<Incident> {
    let mut tx = db.begin_as(ctx).await?;
    let found: Option<(Id, String)> = on_tx!(&mut tx, |c| sqlx::query_as(
        "SELECT incident_id, message FROM incident_updates WHERE id = $1"
    )
    .bind(update_id)
    .fetch_optional(c)
    .await?);
    let (incident, before) = found.ok_or(StoreError::NotFound("incident update"))?;
    let current = lock(&mut tx, incident)
        .await?
        .into_incident(vec![], vec![])?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE incident_updates SET message = $1 WHERE id = $2"
    )
    .bind(message)
    .bind(update_id)
    .execute(c)
    .await?
    .rows_affected());
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE incidents SET updated_at = $1 WHERE id = $2"
    )
    .bind(db.clock.now().millis())
    .bind(incident)
    .execute(c)
    .await?
    .rows_affected());
    let summary = json!({ "updateId": update_id, "before": before, "after": message });
    timeline_changed(db, tx, Action::IncidentEditUpdate, &current, summary).await
}
