//! Monitors and their checks (docs/monitors.md). A check's result is
//! recorded in one transaction with what it changes: the monitor's counters
//! and verdict, and, when the verdict moves, the component's status (history,
//! audit by the actor `monitor`, and the outbox event subscribers hear of).
//! The component is left alone while an operator holds it (`manual`, set
//! when a person or key sets its status) and while it is under maintenance.
//!
//! Due checks are leased like jobs (`next_run_at`, `locked_until`), so with
//! several instances each check runs once per interval.

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::sealed::{Keyring, Purpose};
use serde_json::json;
use upstate_core::audit::{Action, Actor, ActorKind};
use upstate_core::monitors::{CheckResult, IncidentWords, Monitor, MonitorConfig, Verdict, judge};
use upstate_core::{
    ComponentStatus, Id, Impact, IncidentStatus, MonitorKind, MonitorState, NewIncident, Timestamp,
};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    component_id: i64,
    config: String,
    heartbeat_token: Option<String>,
    state: String,
    failures: i64,
    successes: i64,
    manual: bool,
    incident_id: Option<i64>,
    last_check_at: Option<i64>,
    last_latency_ms: Option<i64>,
    last_error: Option<String>,
    next_run_at: i64,
    locked_until: Option<i64>,
    cert_expires_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

macro_rules! cols {
    () => {
        "id, component_id, config, heartbeat_token, state, failures, successes, manual, incident_id, \
         last_check_at, last_latency_ms, last_error, next_run_at, locked_until, cert_expires_at, \
         created_at, updated_at"
    };
}

/// A monitor with what only the store and the runner need.
#[derive(Debug, Clone)]
pub struct Stored {
    pub monitor: Monitor,
    pub failures: i64,
    pub successes: i64,
    /// The secret of a heartbeat monitor's URL.
    pub heartbeat_token: Option<String>,
    /// Until when the instance running its check holds it.
    pub lease: Option<i64>,
}

impl Row {
    /// The monitor this row holds, its header values opened.
    fn into_stored(self, keys: &Keyring) -> StoreResult<Stored> {
        let r = self;
        let mut config: MonitorConfig = serde_json::from_str(&r.config)
            .map_err(|e| StoreError::Config(format!("monitor {}: bad config: {e}", r.id)))?;
        for h in &mut config.headers {
            h.value = keys.open(Purpose::MonitorHeader, &h.value)?;
        }
        let state = r.state.parse().unwrap_or(MonitorState::Unknown);
        Ok(Stored {
            monitor: Monitor {
                id: r.id,
                component_id: r.component_id,
                config,
                state,
                manual: r.manual,
                heartbeat_url: r
                    .heartbeat_token
                    .as_ref()
                    .map(|t| format!("/api/heartbeat/{t}")),
                last_check_at: r.last_check_at.map(Timestamp::from_millis),
                last_latency_ms: r.last_latency_ms,
                last_error: r.last_error,
                next_check_at: Timestamp::from_millis(r.next_run_at),
                incident_id: r.incident_id,
                cert_expires_at: r.cert_expires_at.map(Timestamp::from_millis),
                created_at: Timestamp::from_millis(r.created_at),
                updated_at: Timestamp::from_millis(r.updated_at),
            },
            failures: r.failures,
            successes: r.successes,
            heartbeat_token: r.heartbeat_token,
            lease: r.locked_until,
        })
    }
}

/// The configuration as stored: header values sealed (they are often
/// credentials).
fn config_json(keys: &Keyring, c: &MonitorConfig) -> StoreResult<String> {
    let mut sealed = c.clone();
    for h in &mut sealed.headers {
        h.value = keys.seal(Purpose::MonitorHeader, &h.value)?;
    }
    Ok(serde_json::to_string(&sealed).unwrap_or_else(|_| "{}".into()))
}

pub async fn list(db: &Db) -> StoreResult<Vec<Monitor>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM monitors ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter()
        .map(|r| r.into_stored(&db.keys).map(|s| s.monitor))
        .collect()
}

/// At most `limit` monitors after the one with id `after`, by id.
pub async fn page(db: &Db, after: Option<Id>, limit: i64) -> StoreResult<Vec<Monitor>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM monitors WHERE id > $1 ORDER BY id LIMIT $2"
    ))
    .bind(after.unwrap_or(0))
    .bind(limit)
    .fetch_all(c)
    .await?);
    rows.into_iter()
        .map(|r| r.into_stored(&db.keys).map(|s| s.monitor))
        .collect()
}

pub async fn stored(db: &Db, id: Id) -> StoreResult<Stored> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM monitors WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("monitor"))?
        .into_stored(&db.keys)
}

/// The monitor of a component, if it has one.
pub async fn of_component(db: &Db, component: Id) -> StoreResult<Option<Monitor>> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        cols!(),
        " FROM monitors WHERE component_id = $1"
    ))
    .bind(component)
    .fetch_optional(c)
    .await?);
    row.map(|r| r.into_stored(&db.keys).map(|s| s.monitor))
        .transpose()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Monitor> {
    Ok(stored(db, id).await?.monitor)
}

/// The monitor, locked after its component: the order deleting the
/// component takes (its cascade reaches the monitor after the component's
/// row), so a check and a delete never wait on each other.
async fn locked(tx: &mut Tx, id: Id) -> StoreResult<Stored> {
    let component: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT component_id FROM monitors WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let component = component.ok_or(StoreError::NotFound("monitor"))?;
    crate::components::get_locked(tx, component).await?;
    let row: Option<Row> = locked!(
        tx,
        concat!("SELECT ", cols!(), " FROM monitors WHERE id = $1"),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    row.ok_or(StoreError::NotFound("monitor"))?
        .into_stored(&tx.keys)
}

/// When a monitor's next check is due: at once for checks we make, one
/// interval on for a heartbeat (the first silence that counts).
fn first_run(c: &MonitorConfig, now: Timestamp) -> i64 {
    match c.kind {
        MonitorKind::Heartbeat => now.millis() + c.interval_seconds * 1_000,
        _ => now.millis(),
    }
}

pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    component: Id,
    c: &MonitorConfig,
) -> StoreResult<Monitor> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    crate::components::lock_for_driver(&mut tx, component, crate::components::Driver::Monitor)
        .await?;
    let token = (c.kind == MonitorKind::Heartbeat).then(crate::subscribers::token);
    let id: i64 = on_tx!(&mut tx, |x| {
        sqlx::query_scalar(
        "INSERT INTO monitors (component_id, kind, config, enabled, heartbeat_token, next_run_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id"
    )
    .bind(component)
    .bind(c.kind.as_str())
    .bind(config_json(&db.keys, c)?)
    .bind(c.enabled)
    .bind(&token)
    .bind(first_run(c, now))
    .bind(now.millis())
    .fetch_one(x)
    .await?
    });
    let audited = tx
        .audit(
            Action::MonitorCreate,
            "monitor",
            Some(id),
            json!({ "componentId": component, "config": c.redacted() }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Changes a monitor's settings (checked at once, its counters reset) and,
/// with `manual`, takes its component over or hands it back; handed back,
/// the component takes the status the monitor's verdict calls for.
pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    c: &MonitorConfig,
    manual: Option<bool>,
) -> StoreResult<Monitor> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let current = locked(&mut tx, id).await?;
    let changed = current.monitor.config != *c;
    let token = match (c.kind, current.heartbeat_token.clone()) {
        (MonitorKind::Heartbeat, Some(t)) => Some(t),
        (MonitorKind::Heartbeat, None) => Some(crate::subscribers::token()),
        _ => None,
    };
    let manual = manual.unwrap_or(current.monitor.manual);
    let next = if changed {
        first_run(c, now)
    } else {
        current.monitor.next_check_at.millis()
    };
    let (state, failures, successes) = if changed {
        ("unknown", 0, 0)
    } else {
        (
            current.monitor.state.as_str(),
            current.failures,
            current.successes,
        )
    };
    on_tx!(&mut tx, |x| {
        sqlx::query(
        "UPDATE monitors SET kind = $1, config = $2, enabled = $3, heartbeat_token = $4, manual = $5, \
         next_run_at = $6, state = $7, failures = $8, successes = $9, locked_until = NULL, updated_at = $10 WHERE id = $11"
    )
    .bind(c.kind.as_str())
    .bind(config_json(&db.keys, c)?)
    .bind(c.enabled)
    .bind(&token)
    .bind(manual)
    .bind(next)
    .bind(state)
    .bind(failures)
    .bind(successes)
    .bind(now.millis())
    .bind(id)
    .execute(x)
    .await?
    .rows_affected()
    });
    if current.monitor.manual && !manual && !changed {
        follow_verdict(
            &mut tx,
            current.monitor.component_id,
            current.monitor.state,
            now,
        )
        .await?;
    }
    let audited = tx
        .audit(
            Action::MonitorUpdate,
            "monitor",
            Some(id),
            json!({ "componentId": current.monitor.component_id, "config": c.redacted(), "manual": manual }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let component: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "DELETE FROM monitors WHERE id = $1 RETURNING component_id"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let component = component.ok_or(StoreError::NotFound("monitor"))?;
    let audited = tx
        .audit(
            Action::MonitorDelete,
            "monitor",
            Some(id),
            json!({ "componentId": component }),
        )
        .await?;
    tx.commit(audited).await
}

/// Leases the monitors whose check is due: (id, lease token).
pub async fn lease_due(
    db: &Db,
    now: Timestamp,
    lease_ms: i64,
    limit: i64,
) -> StoreResult<Vec<(Id, i64)>> {
    let sql = (
        crate::postgres::LEASE_MONITORS,
        crate::sqlite::LEASE_MONITORS,
    );
    crate::jobs::lease_rows(db, sql, now, lease_ms, limit).await
}

/// When the next check is due on any monitor.
pub async fn next_due(db: &Db) -> StoreResult<Option<Timestamp>> {
    let at: Option<i64> = on_db!(db, |c| {
        sqlx::query_scalar(
        "SELECT MIN(CASE WHEN locked_until IS NULL OR locked_until < next_run_at THEN next_run_at ELSE locked_until END) \
         FROM monitors WHERE enabled"
    )
    .fetch_one(c)
    .await?
    });
    Ok(at.map(Timestamp::from_millis))
}

/// What recording a check did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    pub verdict: Verdict,
    /// The component's status, when the check moved it.
    pub moved: Option<(ComponentStatus, ComponentStatus)>,
}

/// Records a check made under `lease` (None for a heartbeat the service
/// sent), moves the component when the verdict calls for it, and sets the
/// next check at `next_run_at`. A lease that is no longer ours records
/// nothing (another instance took the check over): `Ok(None)`.
pub async fn record(
    db: &Db,
    id: Id,
    lease: Option<i64>,
    r: &CheckResult,
    next_run_at: Timestamp,
    words: &IncidentWords,
) -> StoreResult<Option<Recorded>> {
    let ctx = AuditCtx::of(Actor::system("monitor"));
    let mut tx = db.begin_as(&ctx).await?;
    let m = locked(&mut tx, id).await?;
    if lease.is_some() && m.lease != lease {
        return Ok(None);
    }
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO monitor_checks (monitor_id, at, ok, latency_ms, status_code, error) VALUES ($1, $2, $3, $4, $5, $6)"
    )
    .bind(id)
    .bind(r.at.millis())
    .bind(r.ok)
    .bind(r.latency_ms)
    .bind(r.status_code)
    .bind(&r.error)
    .execute(c)
    .await?
    .rows_affected()
    });
    crate::monitor_stats::add(&mut tx, id, r).await?;
    let verdict = judge(
        &m.monitor.config,
        m.monitor.state,
        m.failures,
        m.successes,
        r,
    );
    let beat = (lease.is_none() && r.ok).then_some(r.at.millis());
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE monitors SET state = $1, failures = $2, successes = $3, last_check_at = $4, last_latency_ms = $5, \
         last_error = $6, last_beat_at = COALESCE($7, last_beat_at), next_run_at = $8, locked_until = NULL, \
         cert_expires_at = CASE WHEN $10 THEN $11 ELSE COALESCE($11, cert_expires_at) END WHERE id = $9"
    )
    .bind(verdict.state.as_str())
    .bind(verdict.failures)
    .bind(verdict.successes)
    .bind(r.at.millis())
    .bind(r.latency_ms)
    .bind(&r.error)
    .bind(beat)
    .bind(next_run_at.millis())
    .bind(id)
    .bind(r.ok)
    .bind(r.cert_expires_at.map(|t| t.millis()))
    .execute(c)
    .await?
    .rows_affected()
    });
    // The component follows the verdict on every check (not only when it
    // changes), so one that maintenance held comes back to the truth after.
    let moved = if m.monitor.manual {
        None
    } else {
        follow_verdict(&mut tx, m.monitor.component_id, verdict.state, r.at).await?
    };
    let moved_to = moved.map(|(_, to)| to);
    let mut audited = match moved {
        Some((from, to)) => Some(
            tx.audit(
                Action::MonitorStatus,
                "component",
                Some(m.monitor.component_id),
                json!({ "monitorId": id, "from": from, "to": to, "state": verdict.state,
                        "error": r.error, "latencyMs": r.latency_ms }),
            )
            .await?,
        ),
        None => None,
    };
    // The incident a move calls for commits with the move, or neither does:
    // no down component without its incident after a crash.
    if m.monitor.config.open_incident
        && let Some(a) = follow_up(db, &mut tx, &m.monitor, moved_to, r.at, words).await?
    {
        audited.get_or_insert(a);
    }
    tx.commit(audited.unwrap_or_else(crate::audit::Audited::bookkeeping))
        .await?;
    Ok(Some(Recorded { verdict, moved }))
}

/// A monitor that opens incidents: one when its component goes down
/// (unless it has one open), resolved when the component recovers, in the
/// caller's `words` (which say nothing of the target: an internal address
/// is nobody's business on a public page). An incident someone resolved or
/// deleted by hand is left as it is. Runs in the check's transaction;
/// returns the audit proof when it changed an incident.
async fn follow_up(
    db: &Db,
    tx: &mut Tx,
    m: &Monitor,
    moved_to: Option<ComponentStatus>,
    at: Timestamp,
    words: &IncidentWords,
) -> StoreResult<Option<crate::audit::Audited>> {
    if moved_to.is_none() {
        return Ok(None);
    }
    let component = crate::components::get(db, m.component_id).await?;
    let say = |text: &str| IncidentWords::about(text, &component.name);
    match (moved_to, m.incident_id) {
        (Some(ComponentStatus::MajorOutage), None) => {
            let (incident, audited) = crate::incidents::create_in(
                tx,
                NewIncident {
                    title: say(&words.title),
                    status: IncidentStatus::Investigating,
                    impact: Impact::Major,
                    status_page_id: component.status_page_id,
                    message: say(&words.message),
                    component_ids: vec![component.id],
                    component_statuses: Vec::new(),
                    past: None,
                },
                at,
            )
            .await?;
            set_incident(tx, m.id, Some(incident)).await?;
            Ok(Some(audited))
        }
        (Some(ComponentStatus::Operational), Some(incident)) => {
            let done = (say(&words.recovered), Vec::new());
            let audited = match crate::incidents::resolve_in(tx, incident, done, at).await {
                Ok(a) => Some(a),
                // Resolved or deleted by hand meanwhile: nothing to do (no
                // statement failed, so the transaction goes on).
                Err(StoreError::Conflict(_) | StoreError::NotFound(_)) => None,
                Err(e) => return Err(e),
            };
            set_incident(tx, m.id, None).await?;
            Ok(audited)
        }
        _ => Ok(None),
    }
}

async fn set_incident(tx: &mut Tx, id: Id, incident: Option<Id>) -> StoreResult<()> {
    on_tx!(tx, |c| sqlx::query(
        "UPDATE monitors SET incident_id = $1 WHERE id = $2"
    )
    .bind(incident)
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    Ok(())
}

/// Moves the component to what `state` calls for, unless the verdict has no
/// opinion, the component is under maintenance (alerts suppressed), or it
/// already is there. Returns (from, to) when it moved.
async fn follow_verdict(
    tx: &mut Tx,
    component: Id,
    state: MonitorState,
    at: Timestamp,
) -> StoreResult<Option<(ComponentStatus, ComponentStatus)>> {
    let Some(to) = state.component_status() else {
        return Ok(None);
    };
    let current = crate::components::get_locked(tx, component).await?;
    if current.status == to || current.status == ComponentStatus::Maintenance {
        return Ok(None);
    }
    crate::components::set_status(tx, component, current.status, to, at).await?;
    Ok(Some((current.status, to)))
}

/// A heartbeat from the watched service: a good check now, and the next
/// silence that counts one interval on. Unknown tokens are `NotFound`.
pub async fn heartbeat(
    db: &Db,
    token: &str,
    now: Timestamp,
    words: &IncidentWords,
) -> StoreResult<Recorded> {
    let found: Option<(i64, String, bool)> = on_db!(db, |c| sqlx::query_as(
        "SELECT id, config, enabled FROM monitors WHERE heartbeat_token = $1"
    )
    .bind(token)
    .fetch_optional(c)
    .await?);
    let (id, config, enabled) = found.ok_or(StoreError::NotFound("heartbeat monitor"))?;
    if !enabled {
        return Err(StoreError::NotFound("heartbeat monitor"));
    }
    let c: MonitorConfig = serde_json::from_str(&config)
        .map_err(|e| StoreError::Config(format!("monitor {id}: bad config: {e}")))?;
    let r = CheckResult {
        at: now,
        ok: true,
        latency_ms: None,
        status_code: None,
        error: None,
        cert_expires_at: None,
    };
    let next = Timestamp::from_millis(now.millis() + c.interval_seconds * 1_000);
    record(db, id, None, &r, next, words)
        .await?
        .ok_or(StoreError::NotFound("heartbeat monitor"))
}

/// The latest checks of a monitor, newest first.
pub async fn checks(db: &Db, id: Id, limit: i64) -> StoreResult<Vec<CheckResult>> {
    type CheckRow = (i64, bool, Option<i64>, Option<i64>, Option<String>);
    let rows: Vec<CheckRow> = on_db!(db, |c| {
        sqlx::query_as(
            "SELECT at, ok, latency_ms, status_code, error FROM monitor_checks WHERE monitor_id = $1 \
             ORDER BY at DESC, id DESC LIMIT $2",
        )
        .bind(id)
        .bind(limit)
        .fetch_all(c)
        .await?
    });
    Ok(rows
        .into_iter()
        .map(|(at, ok, latency_ms, status_code, error)| CheckResult {
            at: Timestamp::from_millis(at),
            ok,
            latency_ms,
            status_code,
            error,
            cert_expires_at: None,
        })
        .collect())
}

/// An operator (a person, a key, the command line) set a component's
/// status (directly, or through an incident): its monitor keeps checking
/// but leaves the component as set until they hand it back. Maintenance
/// moving its components, the scheduler and monitors do not take one over.
pub(crate) async fn take_over_if_by_hand(tx: &mut Tx, component: Id) -> StoreResult<()> {
    let by_hand = [ActorKind::User, ActorKind::Key, ActorKind::Cli]
        .iter()
        .any(|k| k.as_str() == tx.ctx.actor.kind);
    if by_hand {
        on_tx!(tx, |c| sqlx::query(
            "UPDATE monitors SET manual = TRUE WHERE component_id = $1"
        )
        .bind(component)
        .execute(c)
        .await?
        .rows_affected());
    }
    Ok(())
}
