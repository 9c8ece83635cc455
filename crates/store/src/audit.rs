//! The audit log: appended inside each write transaction (so an event exists
//! exactly when its change does), read and verified by the audit routes.

use crate::db::{Db, Tx};
use crate::error::StoreResult;
pub use crate::writer::{AuditCtx, Audited};
use upstate_core::audit::{self, Action, Actor, AuditEvent, GENESIS, Verification};
use upstate_core::{Id, Timestamp};

macro_rules! audit_cols {
    () => {
        "id, seq, at, actor_kind, actor_id, actor_label, action, target_type, target_id, summary, client_addr, user_agent, prev_hash, hash"
    };
}

#[derive(sqlx::FromRow)]
struct EventRow {
    id: i64,
    seq: i64,
    at: i64,
    actor_kind: String,
    actor_id: Option<i64>,
    actor_label: String,
    action: String,
    target_type: String,
    target_id: Option<i64>,
    summary: String,
    client_addr: Option<String>,
    user_agent: Option<String>,
    prev_hash: String,
    hash: String,
}

impl From<EventRow> for AuditEvent {
    fn from(r: EventRow) -> Self {
        AuditEvent {
            id: r.id,
            seq: r.seq,
            at: Timestamp::from_millis(r.at),
            actor: Actor {
                kind: r.actor_kind,
                id: r.actor_id,
                label: r.actor_label,
            },
            action: r.action,
            target_type: r.target_type,
            target_id: r.target_id,
            // A summary that is not JSON any more is kept as text: verify reports the mismatch.
            summary: serde_json::from_str(&r.summary)
                .unwrap_or(serde_json::Value::String(r.summary)),
            client_addr: r.client_addr,
            user_agent: r.user_agent,
            prev_hash: r.prev_hash,
            hash: r.hash,
        }
    }
}

impl Tx {
    /// Appends the audit event of this transaction's change.
    pub(crate) async fn audit(
        &mut self,
        action: Action,
        target_type: &str,
        target_id: Option<Id>,
        summary: serde_json::Value,
    ) -> StoreResult<Audited> {
        let ctx = self.ctx.clone();
        let mut event = AuditEvent {
            id: 0,
            seq: 0,
            at: self.clock.now(),
            actor: ctx.actor,
            action: action.as_str().to_string(),
            target_type: target_type.to_string(),
            target_id,
            summary,
            client_addr: ctx.client_addr,
            user_agent: ctx.user_agent,
            prev_hash: String::new(),
            hash: String::new(),
        };
        // The head this process wrote last is the head unless another
        // instance (or a rolled-back write) moved it: the compare-and-set
        // tells, and only then is the head read. Writers take turns, so the
        // usual append is two statements instead of three.
        let mut head = self.changes.audit_head();
        loop {
            let Some((seq, prev)) = head.clone() else {
                head = Some(locked!(
                    self,
                    "SELECT seq, hash FROM audit_head WHERE id = 1",
                    |c, q| sqlx::query_as(q).fetch_one(c).await?
                ));
                continue;
            };
            event.seq = seq + 1;
            event.prev_hash = prev.clone();
            event.hash = audit::hash(&event.prev_hash, &event);
            let moved = on_tx!(self, |c| {
                sqlx::query(
                "UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1 AND seq = $3 AND hash = $4"
            )
            .bind(event.seq)
            .bind(&event.hash)
            .bind(seq)
            .bind(&prev)
            .execute(c)
            .await?
            .rows_affected()
            });
            if moved == 1 {
                break;
            }
            head = None;
        }
        on_tx!(self, |c| {
            sqlx::query(
            "INSERT INTO audit_events (seq, at, actor_kind, actor_id, actor_label, action, target_type, target_id, summary, \
             client_addr, user_agent, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        )
        .bind(event.seq)
        .bind(event.at.millis())
        .bind(&event.actor.kind)
        .bind(event.actor.id)
        .bind(&event.actor.label)
        .bind(&event.action)
        .bind(&event.target_type)
        .bind(event.target_id)
        .bind(event.summary.to_string())
        .bind(&event.client_addr)
        .bind(&event.user_agent)
        .bind(&event.prev_hash)
        .bind(&event.hash)
        .execute(c)
        .await?
        .rows_affected()
        });
        self.changes.set_audit_head((event.seq, event.hash));
        Ok(Audited::appended())
    }
}

/// The fields that differ between two states of a resource, as
/// `{"field": {"from": old, "to": new}}`.
pub(crate) fn changes<T: serde::Serialize>(before: &T, after: &T) -> serde_json::Value {
    let (Ok(serde_json::Value::Object(b)), Ok(serde_json::Value::Object(a))) =
        (serde_json::to_value(before), serde_json::to_value(after))
    else {
        return serde_json::Value::Null;
    };
    let changed: serde_json::Map<String, serde_json::Value> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), serde_json::json!({ "from": b.get(k), "to": v })))
        .collect();
    serde_json::Value::Object(changed)
}

/// What `GET /api/audit-events` filters on; `before_seq` is the cursor.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub actor_kind: Option<String>,
    pub actor_id: Option<Id>,
    /// An action (`incident.create`), or what comes before its dot
    /// (`incident`: every incident action).
    pub action: Option<String>,
    pub target_type: Option<String>,
    pub target_id: Option<Id>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    pub before_seq: Option<i64>,
    pub limit: i64,
}

/// Binds a filter's parameters, in `audit_filter!`'s order, to a query.
macro_rules! bind_filter {
    ($q:expr, $f:expr, $before:expr) => {
        $q.bind($f.actor_kind.as_deref())
            .bind($f.actor_id)
            .bind($f.action.as_deref())
            .bind($f.target_type.as_deref())
            .bind($f.target_id)
            .bind($f.since.map(Timestamp::millis))
            .bind($f.until.map(Timestamp::millis))
            .bind($before)
    };
}

macro_rules! audit_filter {
    () => {
        " FROM audit_events WHERE ($1 IS NULL OR actor_kind = $1) AND ($2 IS NULL OR actor_id = $2) \
          AND ($3 IS NULL OR action = $3 OR action LIKE $3 || '.%') AND ($4 IS NULL OR target_type = $4) AND ($5 IS NULL OR target_id = $5) \
          AND ($6 IS NULL OR at >= $6) AND ($7 IS NULL OR at < $7) AND ($8 IS NULL OR seq < $8)"
    };
}

/// Matching events, newest first.
pub async fn list(db: &Db, f: &AuditFilter) -> StoreResult<Vec<AuditEvent>> {
    let rows: Vec<EventRow> = on_db!(db, |c| bind_filter!(
        sqlx::query_as(concat!(
            "SELECT ",
            audit_cols!(),
            audit_filter!(),
            " ORDER BY seq DESC LIMIT $9"
        )),
        f,
        f.before_seq
    )
    .bind(f.limit)
    .fetch_all(c)
    .await?);
    Ok(rows.into_iter().map(AuditEvent::from).collect())
}

/// Counts of matching events by action and by actor (ignoring the cursor and limit).
pub async fn counts(
    db: &Db,
    f: &AuditFilter,
) -> StoreResult<(i64, Vec<(String, i64)>, Vec<(String, i64)>)> {
    let f = AuditFilter {
        before_seq: None,
        ..f.clone()
    };
    macro_rules! grouped {
        ($select:literal, $group:literal) => {
            on_db!(db, |c| bind_filter!(
                sqlx::query_as::<_, (String, i64)>(concat!(
                    "SELECT ",
                    $select,
                    ", COUNT(*)",
                    audit_filter!(),
                    " GROUP BY ",
                    $group,
                    " ORDER BY 2 DESC, 1"
                )),
                f,
                f.before_seq
            )
            .fetch_all(c)
            .await?)
        };
    }
    let by_action = grouped!("action", "action");
    let by_actor = grouped!(
        "actor_kind || ':' || actor_label",
        "actor_kind || ':' || actor_label"
    );
    let total = by_action.iter().map(|(_, n)| n).sum();
    Ok((total, by_action, by_actor))
}

/// Walks the whole chain in order, a page at a time.
pub async fn verify(db: &Db) -> StoreResult<Verification> {
    let (mut prev_hash, mut prev_seq) = (GENESIS.to_string(), 0i64);
    loop {
        let rows: Vec<EventRow> = on_db!(db, |c| sqlx::query_as(concat!(
            "SELECT ",
            audit_cols!(),
            " FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT 1000"
        ))
        .bind(prev_seq)
        .fetch_all(c)
        .await?);
        if rows.is_empty() {
            break;
        }
        let events: Vec<AuditEvent> = rows.into_iter().map(AuditEvent::from).collect();
        match audit::verify_run((&prev_hash, prev_seq), &events) {
            Ok((h, s)) => (prev_hash, prev_seq) = (h, s),
            Err((seq, reason)) => {
                return Ok(Verification {
                    intact: false,
                    checked: seq - 1,
                    broken_at: Some(seq),
                    reason: Some(reason),
                });
            }
        }
    }
    // The head must name the last event: a deleted tail shows here.
    let head: (i64, String) = on_db!(db, |c| sqlx::query_as(
        "SELECT seq, hash FROM audit_head WHERE id = 1"
    )
    .fetch_one(c)
    .await?);
    if head != (prev_seq, prev_hash) {
        return Ok(Verification {
            intact: false,
            checked: prev_seq,
            broken_at: Some(prev_seq + 1),
            reason: Some(format!(
                "the chain ends at event {prev_seq} but its head says {}: events were removed",
                head.0
            )),
        });
    }
    Ok(Verification {
        intact: true,
        checked: prev_seq,
        broken_at: None,
        reason: None,
    })
}

/// The oldest event matching a filter (its cursor and limit ignored).
pub async fn first(db: &Db, f: &AuditFilter) -> StoreResult<Option<AuditEvent>> {
    let row: Option<EventRow> = on_db!(db, |c| bind_filter!(
        sqlx::query_as(concat!(
            "SELECT ",
            audit_cols!(),
            audit_filter!(),
            " ORDER BY seq ASC LIMIT 1"
        )),
        f,
        None::<i64>
    )
    .fetch_optional(c)
    .await?);
    Ok(row.map(AuditEvent::from))
}
