//! Integrations: other tools' alerts moving components and opening
//! incidents (docs/integrations.md). One payload is one transaction, under
//! the integration's row lock, so two posts of one sender never race: the
//! alerts it names, the groups they belong to, the components they move,
//! the incident they open or draft and the log line commit together.
//!
//! Lock order, everywhere here: the integration, then its group, then an
//! incident, then components (by id): the same order the incident routes
//! take after their incident, so PostgreSQL finds no cycle.

use crate::audit::{AuditCtx, Audited};
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::sealed::Purpose;
use rand::RngCore;
use serde_json::json;
use sha2::{Digest, Sha256};
use upstate_core::alerts::{
    Alert, AlertDraft, DraftApproval, Integration, IntegrationChange, IntegrationEvent,
    NewIntegration, Received, Rule, clip, first_match, impact_of, labels_json,
};
use upstate_core::audit::{Action, Actor};
use upstate_core::events::Event;
use upstate_core::status::{AlertOutcome, IncidentMode, IntegrationKind};
use upstate_core::{
    ComponentStatus, ComponentStatusChange, FieldErrors, Id, Impact, IncidentStatus, NewIncident,
    Timestamp,
};

/// Log lines kept per integration.
const EVENTS_KEPT: i64 = 200;
/// The token's prefix, so a leaked URL is recognised for what it is.
const TOKEN_PREFIX: &str = "upi_";
const TITLE_MAX: usize = 200;
const MESSAGE_MAX: usize = 5000;
/// What the incident says when its alerts resolve it and the rule gives
/// no words.
const RESOLVED: &str = "This incident has been resolved.";

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    page_id: i64,
    kind: String,
    name: String,
    secret: Option<String>,
    rules: String,
    enabled: bool,
    created_at: i64,
    updated_at: i64,
}

macro_rules! integration_cols {
    () => {
        "id, page_id, kind, name, secret, rules, enabled, created_at, updated_at"
    };
}

impl Row {
    fn rules(&self) -> StoreResult<Vec<Rule>> {
        serde_json::from_str(&self.rules)
            .map_err(|e| StoreError::Config(format!("integration {}: bad rules: {e}", self.id)))
    }

    fn integration(&self) -> StoreResult<Integration> {
        Ok(Integration {
            id: self.id,
            kind: self
                .kind
                .parse()
                .map_err(|_| StoreError::Config(format!("integration {}: bad kind", self.id)))?,
            name: self.name.clone(),
            status_page_id: self.page_id,
            rules: self.rules()?,
            enabled: self.enabled,
            signed: self.secret.is_some(),
            created_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
        })
    }
}

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn random_hex(prefix: &str) -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

/// Each rule's components must be on the integration's page.
async fn require_rules_on_page(tx: &mut Tx, rules: &[Rule], page: Id) -> StoreResult<()> {
    let mut e = FieldErrors::new();
    for (i, r) in rules.iter().enumerate() {
        for &id in &r.component_ids {
            let found: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
                "SELECT page_id FROM components WHERE id = $1"
            )
            .bind(id)
            .fetch_optional(c)
            .await?);
            match found {
                None => e.push(
                    &format!("rules[{i}].componentIds"),
                    format!("no component with id {id}"),
                ),
                Some(p) if p != page => e.push(
                    &format!("rules[{i}].componentIds"),
                    format!("component {id} belongs to another status page"),
                ),
                Some(_) => {}
            }
        }
    }
    e.into_result().map_err(StoreError::Invalid)
}

fn rules_json(rules: &[Rule]) -> StoreResult<String> {
    serde_json::to_string(rules).map_err(|e| StoreError::Config(format!("rules: {e}")))
}

/// What a new integration is given once: its receiver token and, when one
/// was made or given, its signing secret.
pub struct Made {
    pub integration: Integration,
    pub token: String,
    pub secret: Option<String>,
}

/// Creates an integration (input checked by the caller). A generic
/// integration without a secret gets one made here.
pub async fn create(db: &Db, ctx: &AuditCtx, input: &NewIntegration) -> StoreResult<Made> {
    let (kind, name, page) = (input.kind, &input.name, input.status_page_id);
    let rules = input.rules.clone();
    let secret = match input.secret.as_deref() {
        Some("") | None if kind == IntegrationKind::Generic => Some(random_hex("ups_")),
        Some("") | None => None,
        Some(s) => Some(s.to_string()),
    };
    let sealed = match &secret {
        Some(s) => Some(db.keys.seal(Purpose::Channel, s)?),
        None => None,
    };
    let token = random_hex(TOKEN_PREFIX);
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    crate::pages::require_in(&mut tx, page, "statusPageId").await?;
    require_rules_on_page(&mut tx, &rules, page).await?;
    let row: Row = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO integrations (page_id, kind, name, token_hash, secret, rules, enabled, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ",
        integration_cols!()
    ))
    .bind(page)
    .bind(kind.as_str())
    .bind(name.trim())
    .bind(hash(&token))
    .bind(&sealed)
    .bind(rules_json(&rules)?)
    .bind(input.enabled.unwrap_or(true))
    .bind(now)
    .fetch_one(c)
    .await?
    });
    let integration = row.integration()?;
    let audited = tx
        .audit(
            Action::IntegrationCreate,
            "integration",
            Some(integration.id),
            json!({ "kind": kind, "name": &integration.name, "statusPageId": page, "rules": &rules, "signed": integration.signed }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(Made {
        integration,
        token,
        secret,
    })
}

pub async fn list(db: &Db) -> StoreResult<Vec<Integration>> {
    let rows: Vec<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        integration_cols!(),
        " FROM integrations ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.iter().map(Row::integration).collect()
}

pub async fn get(db: &Db, id: Id) -> StoreResult<Integration> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        integration_cols!(),
        " FROM integrations WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("integration"))?
        .integration()
}

async fn lock(tx: &mut Tx, id: Id) -> StoreResult<Row> {
    let row: Option<Row> = locked!(
        tx,
        concat!(
            "SELECT ",
            integration_cols!(),
            " FROM integrations WHERE id = $1"
        ),
        |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
    );
    row.ok_or(StoreError::NotFound("integration"))
}

/// Changes name, rules, enabled or secret (checked by the caller).
pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    input: &IntegrationChange,
) -> StoreResult<Integration> {
    let sealed = match input.secret.as_deref() {
        Some("") => Some(None),
        Some(s) => Some(Some(db.keys.seal(Purpose::Channel, s)?)),
        None => None,
    };
    let mut tx = db.begin_as(ctx).await?;
    let row = lock(&mut tx, id).await?;
    let rules = match &input.rules {
        Some(r) => {
            require_rules_on_page(&mut tx, r, row.page_id).await?;
            r.clone()
        }
        None => row.rules()?,
    };
    let secret = match sealed {
        Some(s) => s,
        None => row.secret.clone(),
    };
    let name = input.name.as_deref().map(str::trim).unwrap_or(&row.name);
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE integrations SET name = $1, rules = $2, enabled = $3, secret = $4, updated_at = $5 WHERE id = $6"
    )
    .bind(name)
    .bind(rules_json(&rules)?)
    .bind(input.enabled.unwrap_or(row.enabled))
    .bind(&secret)
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await?
    .rows_affected()
    });
    let audited = tx
        .audit(
            Action::IntegrationUpdate,
            "integration",
            Some(id),
            json!({ "name": &input.name, "rules": &input.rules, "enabled": input.enabled,
                    "secret": input.secret.as_ref().map(|s| if s.is_empty() { "removed" } else { "changed" }) }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// Adds a rule at the end (`Some`) or removes the one at an index
/// (`None` with `remove`), under the integration's lock.
pub async fn edit_rules(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    add: Option<&Rule>,
    remove: Option<usize>,
) -> StoreResult<Integration> {
    let mut tx = db.begin_as(ctx).await?;
    let row = lock(&mut tx, id).await?;
    let mut rules = row.rules()?;
    if let Some(rule) = add {
        if rules.len() >= 50 {
            return Err(StoreError::Conflict(
                "an integration holds at most 50 rules".into(),
            ));
        }
        require_rules_on_page(&mut tx, std::slice::from_ref(rule), row.page_id)
            .await
            .map_err(|e| match e {
                // The rule alone is rules[0]: name its own fields.
                StoreError::Invalid(f) => StoreError::Invalid(FieldErrors(
                    f.0.into_iter()
                        .map(|mut x| {
                            x.field = x.field.replace("rules[0].", "");
                            x
                        })
                        .collect(),
                )),
                other => other,
            })?;
        rules.push(rule.clone());
    }
    if let Some(i) = remove {
        if i >= rules.len() {
            return Err(StoreError::NotFound("rule"));
        }
        rules.remove(i);
    }
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE integrations SET rules = $1, updated_at = $2 WHERE id = $3"
    )
    .bind(rules_json(&rules)?)
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::IntegrationUpdate,
            "integration",
            Some(id),
            json!({ "addedRule": add, "removedRule": remove }),
        )
        .await?;
    tx.commit(audited).await?;
    get(db, id).await
}

/// A new receiver token; the old URL stops working at once.
pub async fn rotate_token(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<(Integration, String)> {
    let token = random_hex(TOKEN_PREFIX);
    let mut tx = db.begin_as(ctx).await?;
    lock(&mut tx, id).await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE integrations SET token_hash = $1, updated_at = $2 WHERE id = $3"
    )
    .bind(hash(&token))
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::IntegrationUpdate,
            "integration",
            Some(id),
            json!({ "token": "rotated" }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok((get(db, id).await?, token))
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let row = lock(&mut tx, id).await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM integrations WHERE id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::IntegrationDelete,
            "integration",
            Some(id),
            json!({ "name": row.name, "kind": row.kind }),
        )
        .await?;
    tx.commit(audited).await
}

/// The integration a receiver URL's token names, with its signing secret
/// opened; None for a token nobody holds or an integration turned off.
pub async fn by_token(
    db: &Db,
    kind: IntegrationKind,
    token: &str,
) -> StoreResult<Option<(Integration, Option<String>)>> {
    let row: Option<Row> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        integration_cols!(),
        " FROM integrations WHERE token_hash = $1 AND kind = $2 AND enabled"
    ))
    .bind(hash(token))
    .bind(kind.as_str())
    .fetch_optional(c)
    .await?);
    let Some(row) = row else { return Ok(None) };
    let secret = match &row.secret {
        Some(s) => Some(db.keys.open(Purpose::Channel, s)?),
        None => None,
    };
    Ok(Some((row.integration()?, secret)))
}

#[derive(sqlx::FromRow)]
struct GroupRow {
    id: i64,
    integration_id: i64,
    rule_index: i64,
    state: String,
    incident_id: Option<i64>,
    title: String,
    message: String,
    impact: String,
    components: String,
    opened_at: i64,
}

macro_rules! group_cols {
    () => {
        "id, integration_id, rule_index, state, incident_id, title, message, impact, components, opened_at"
    };
}

impl GroupRow {
    fn components(&self) -> StoreResult<Vec<ComponentStatusChange>> {
        serde_json::from_str(&self.components)
            .map_err(|e| StoreError::Config(format!("alert group {}: {e}", self.id)))
    }
}

async fn live_group(tx: &mut Tx, integration: Id, key: &str) -> StoreResult<Option<GroupRow>> {
    Ok(on_tx!(&mut *tx, |c| {
        sqlx::query_as(concat!(
        "SELECT ",
        group_cols!(),
        " FROM alert_groups WHERE integration_id = $1 AND group_key = $2 AND state IN ('draft', 'open')"
    ))
    .bind(integration)
    .bind(key)
    .fetch_optional(c)
    .await?
    }))
}

async fn group(tx: &mut Tx, id: Id) -> StoreResult<GroupRow> {
    let row: Option<GroupRow> = on_tx!(&mut *tx, |c| sqlx::query_as(concat!(
        "SELECT ",
        group_cols!(),
        " FROM alert_groups WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("alert group"))
}

async fn set_group(
    tx: &mut Tx,
    id: Id,
    state: &str,
    incident: Option<Id>,
    components: &[ComponentStatusChange],
    closed_at: Option<i64>,
) -> StoreResult<()> {
    let comps = serde_json::to_string(components)
        .map_err(|e| StoreError::Config(format!("alert group: {e}")))?;
    on_tx!(&mut *tx, |c| {
        sqlx::query(
        "UPDATE alert_groups SET state = $1, incident_id = $2, components = $3, closed_at = $4 WHERE id = $5"
    )
    .bind(state)
    .bind(incident)
    .bind(&comps)
    .bind(closed_at)
    .bind(id)
    .execute(c)
    .await?
    .rows_affected()
    });
    Ok(())
}

/// What one alert's handling did, for the answer and the log.
struct Done {
    outcome: AlertOutcome,
    detail: String,
    audited: Option<Audited>,
}

impl Done {
    fn quiet(outcome: AlertOutcome, detail: impl Into<String>) -> Done {
        Done {
            outcome,
            detail: detail.into(),
            audited: None,
        }
    }
}

/// Applies a payload's alerts, in order. An integration deleted or turned
/// off meanwhile is `NotFound`.
pub async fn receive(
    db: &Db,
    integration: &Integration,
    received: &Received,
) -> StoreResult<Vec<AlertOutcome>> {
    let ctx = AuditCtx::of(Actor::system(&format!("integration {}", integration.name)));
    let now = db.clock.now();
    let mut tx = db.begin_as(&ctx).await?;
    let row = lock(&mut tx, integration.id).await?;
    if !row.enabled {
        return Err(StoreError::NotFound("integration"));
    }
    let rules = row.rules()?;
    let mut outcomes = Vec::new();
    let mut audited = None;
    if let Some(note) = &received.ignored {
        log(
            &mut tx,
            row.id,
            now,
            "",
            false,
            note,
            AlertOutcome::Ignored,
            "",
        )
        .await?;
        outcomes.push(AlertOutcome::Ignored);
    }
    for alert in &received.alerts {
        let done = one(&mut tx, &row, &rules, alert, now).await?;
        log(
            &mut tx,
            row.id,
            now,
            &alert.fingerprint,
            alert.firing,
            &alert.title,
            done.outcome,
            &done.detail,
        )
        .await?;
        outcomes.push(done.outcome);
        if done.audited.is_some() {
            audited = done.audited;
        }
    }
    prune(&mut tx, row.id).await?;
    tx.commit(audited.unwrap_or_else(Audited::bookkeeping))
        .await?;
    Ok(outcomes)
}

/// One alert: firing opens or joins its group, a repeat changes nothing,
/// a resolution closes the group when it was the last one firing.
async fn one(
    tx: &mut Tx,
    row: &Row,
    rules: &[Rule],
    alert: &Alert,
    now: Timestamp,
) -> StoreResult<Done> {
    let prev: Option<(bool, Option<i64>)> = on_tx!(&mut *tx, |c| {
        sqlx::query_as(
        "SELECT firing, group_id FROM integration_alerts WHERE integration_id = $1 AND fingerprint = $2"
    )
    .bind(row.id)
    .bind(&alert.fingerprint)
    .fetch_optional(c)
    .await?
    });
    if alert.firing {
        // A repeat of an alert that moved nothing (held back by
        // maintenance, or matched by no rule) is weighed again: the window
        // may have ended, the rules may have changed.
        if let Some((true, Some(_))) = prev {
            remember(tx, row.id, alert, prev.and_then(|p| p.1), now).await?;
            return Ok(Done::quiet(
                AlertOutcome::Duplicate,
                "already firing: nothing changes",
            ));
        }
        fire(tx, row, rules, alert, now).await
    } else {
        let Some((true, group_id)) = prev else {
            return Ok(Done::quiet(
                AlertOutcome::Ignored,
                "nothing of it was firing here",
            ));
        };
        remember(tx, row.id, alert, group_id, now).await?;
        let Some(group_id) = group_id else {
            return Ok(Done::quiet(AlertOutcome::Ignored, "it had moved nothing"));
        };
        settle(tx, row, rules, group_id, now).await
    }
}

async fn remember(
    tx: &mut Tx,
    integration: Id,
    alert: &Alert,
    group: Option<Id>,
    now: Timestamp,
) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| {
        sqlx::query(
        "INSERT INTO integration_alerts (integration_id, fingerprint, group_id, firing, last_seen) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (integration_id, fingerprint) DO UPDATE SET group_id = excluded.group_id, firing = excluded.firing, last_seen = excluded.last_seen"
    )
    .bind(integration)
    .bind(&alert.fingerprint)
    .bind(group)
    .bind(alert.firing)
    .bind(now.millis())
    .execute(c)
    .await?
    .rows_affected()
    });
    Ok(())
}

/// The rule's components that still exist on the page, each with the
/// status the alert gives it (never better than it is now), and the names
/// of those held by maintenance, which alerts do not touch. Locks them in
/// id order.
async fn targets(
    tx: &mut Tx,
    page: Id,
    ids: &[Id],
    status: ComponentStatus,
) -> StoreResult<(Vec<ComponentStatusChange>, Vec<String>)> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    let (mut moving, mut held) = (Vec::new(), Vec::new());
    for id in ids {
        match crate::components::get_locked(tx, id).await {
            Ok(c) if c.status_page_id == page => {
                if c.status == ComponentStatus::Maintenance {
                    held.push(c.name);
                } else {
                    let status = if c.status.severity() > status.severity() {
                        c.status
                    } else {
                        status
                    };
                    moving.push(ComponentStatusChange {
                        component_id: id,
                        status,
                    });
                }
            }
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((moving, held))
}

/// Moves components outside any incident.
async fn move_only(
    tx: &mut Tx,
    changes: &[ComponentStatusChange],
    now: Timestamp,
) -> StoreResult<usize> {
    let mut moved = 0;
    for ch in changes {
        let current = crate::components::get_locked(tx, ch.component_id).await?;
        if current.status != ch.status {
            crate::monitors::take_over_if_by_hand(tx, ch.component_id).await?;
            crate::components::set_status(tx, ch.component_id, current.status, ch.status, now)
                .await?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// Adds `more` to `to`, the worse status winning for a component in both.
fn merge(to: &mut Vec<ComponentStatusChange>, more: &[ComponentStatusChange]) {
    for m in more {
        match to.iter_mut().find(|c| c.component_id == m.component_id) {
            Some(c) if m.status.severity() > c.status.severity() => c.status = m.status,
            Some(_) => {}
            None => to.push(*m),
        }
    }
}

async fn fire(
    tx: &mut Tx,
    row: &Row,
    rules: &[Rule],
    alert: &Alert,
    now: Timestamp,
) -> StoreResult<Done> {
    let Some((index, rule)) = first_match(rules, alert) else {
        remember(tx, row.id, alert, None, now).await?;
        return Ok(Done::quiet(
            AlertOutcome::Unmatched,
            format!("no rule matches its labels {}", labels_json(&alert.labels)),
        ));
    };
    let mut live = live_group(tx, row.id, &alert.group).await?;
    // An incident the group opened is locked before the components; one a
    // person resolved or deleted meanwhile ends the group, and this alert
    // starts the next.
    if let Some(g) = &live
        && let Some(incident) = g.incident_id
        && !crate::incidents::lock_open(tx, incident).await?
    {
        set_group(
            tx,
            g.id,
            "closed",
            g.incident_id,
            &g.components()?,
            Some(now.millis()),
        )
        .await?;
        live = None;
    }
    let (moving, held) = targets(tx, row.page_id, &rule.component_ids, rule.status).await?;
    if moving.is_empty() {
        remember(tx, row.id, alert, None, now).await?;
        let detail = if held.is_empty() {
            "its rule's components are gone".to_string()
        } else {
            format!("under maintenance: {}", held.join(", "))
        };
        return Ok(Done::quiet(AlertOutcome::Suppressed, detail));
    }
    let held_note = if held.is_empty() {
        String::new()
    } else {
        format!("; under maintenance, left alone: {}", held.join(", "))
    };
    if let Some(g) = live {
        let mut comps = g.components()?;
        merge(&mut comps, &moving);
        let mut audited = None;
        if g.state == "open" {
            match g.incident_id {
                Some(incident) => {
                    audited = Some(crate::incidents::join_in(tx, incident, &moving, now).await?);
                }
                None => {
                    move_only(tx, &moving, now).await?;
                    audited = Some(audit_moves(tx, row, &moving, alert).await?);
                }
            }
        }
        set_group(tx, g.id, &g.state, g.incident_id, &comps, None).await?;
        remember(tx, row.id, alert, Some(g.id), now).await?;
        let what = match (g.state.as_str(), g.incident_id) {
            ("draft", _) => format!("joined draft {}", g.id),
            (_, Some(i)) => format!("joined incident {i}"),
            _ => "joined the moved components".into(),
        };
        return Ok(Done {
            outcome: AlertOutcome::Joined,
            detail: what + &held_note,
            audited,
        });
    }
    let title = clip(alert.title.trim(), TITLE_MAX);
    let message = clip(
        alert.description.as_deref().unwrap_or(&alert.title).trim(),
        MESSAGE_MAX,
    );
    let impact = impact_of(rule.status);
    let (state, incident, outcome, audited) = match rule.incident {
        IncidentMode::Draft => ("draft", None, AlertOutcome::Drafted, None),
        IncidentMode::Publish => {
            let (id, audited) =
                open_incident(tx, row.page_id, (&title, &message, impact), &moving, now).await?;
            ("open", Some(id), AlertOutcome::Opened, Some(audited))
        }
        IncidentMode::None => {
            move_only(tx, &moving, now).await?;
            let audited = audit_moves(tx, row, &moving, alert).await?;
            ("open", None, AlertOutcome::Moved, Some(audited))
        }
    };
    let comps = serde_json::to_string(&moving)
        .map_err(|e| StoreError::Config(format!("alert group: {e}")))?;
    let group_id: i64 = on_tx!(&mut *tx, |c| {
        sqlx::query_scalar(
        "INSERT INTO alert_groups (integration_id, group_key, rule_index, state, incident_id, title, message, impact, components, opened_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id"
    )
    .bind(row.id)
    .bind(&alert.group)
    .bind(index as i64)
    .bind(state)
    .bind(incident)
    .bind(&title)
    .bind(&message)
    .bind(impact.as_str())
    .bind(&comps)
    .bind(now.millis())
    .fetch_one(c)
    .await?
    });
    remember(tx, row.id, alert, Some(group_id), now).await?;
    if outcome == AlertOutcome::Drafted {
        // The team's channels hear of it, with the link that publishes it.
        let sealed = tx.keys.seal(Purpose::Channel, &random_hex("upa_"))?;
        on_tx!(&mut *tx, |c| sqlx::query(
            "UPDATE alert_groups SET approve_token = $1 WHERE id = $2"
        )
        .bind(&sealed)
        .bind(group_id)
        .execute(c)
        .await?
        .rows_affected());
        tx.record(Event::AlertDrafted {
            page: row.page_id,
            draft: group_id,
        })
        .await?;
    }
    let detail = match (outcome, incident) {
        (AlertOutcome::Drafted, _) => format!("draft {group_id} awaits approval"),
        (_, Some(i)) => format!("opened incident {i}"),
        _ => format!("moved {} component(s)", moving.len()),
    } + &held_note;
    let audited = match audited {
        Some(a) => Some(a),
        None => Some(
            tx.audit(
                Action::AlertDraftCreate,
                "alert_draft",
                Some(group_id),
                json!({ "integrationId": row.id, "title": &title, "components": &moving }),
            )
            .await?,
        ),
    };
    Ok(Done {
        outcome,
        detail,
        audited,
    })
}

/// Opens the incident a group publishes, its components moving as they go.
async fn open_incident(
    tx: &mut Tx,
    page: Id,
    (title, message, impact): (&str, &str, Impact),
    moving: &[ComponentStatusChange],
    now: Timestamp,
) -> StoreResult<(Id, Audited)> {
    crate::incidents::create_in(
        tx,
        NewIncident {
            title: title.to_string(),
            status: IncidentStatus::Investigating,
            impact,
            status_page_id: page,
            message: message.to_string(),
            component_ids: moving.iter().map(|c| c.component_id).collect(),
            component_statuses: moving.to_vec(),
            past: None,
        },
        now,
    )
    .await
}

async fn audit_moves(
    tx: &mut Tx,
    row: &Row,
    moving: &[ComponentStatusChange],
    alert: &Alert,
) -> StoreResult<Audited> {
    tx.audit(
        Action::IntegrationAlert,
        "integration",
        Some(row.id),
        json!({ "fingerprint": &alert.fingerprint, "firing": alert.firing, "title": &alert.title, "componentStatuses": moving }),
    )
    .await
}

/// The last alert of a group resolved (or another one: then nothing).
async fn settle(
    tx: &mut Tx,
    row: &Row,
    rules: &[Rule],
    group_id: Id,
    now: Timestamp,
) -> StoreResult<Done> {
    let firing: i64 = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM integration_alerts WHERE group_id = $1 AND firing"
    )
    .bind(group_id)
    .fetch_one(c)
    .await?);
    if firing > 0 {
        return Ok(Done::quiet(
            AlertOutcome::Released,
            format!("{firing} alert(s) of its group still fire"),
        ));
    }
    let g = group(tx, group_id).await?;
    let comps = g.components()?;
    match g.state.as_str() {
        "draft" => {
            set_group(tx, g.id, "dismissed", None, &comps, Some(now.millis())).await?;
            let audited = tx
                .audit(
                    Action::AlertDraftDismiss,
                    "alert_draft",
                    Some(g.id),
                    json!({ "reason": "its alerts resolved before anyone approved it" }),
                )
                .await?;
            Ok(Done {
                outcome: AlertOutcome::Withdrawn,
                detail: format!(
                    "draft {} withdrawn: its alerts resolved before anyone approved it",
                    g.id
                ),
                audited: Some(audited),
            })
        }
        "open" => {
            let rule = usize::try_from(g.rule_index)
                .ok()
                .and_then(|i| rules.get(i));
            set_group(
                tx,
                g.id,
                "closed",
                g.incident_id,
                &comps,
                Some(now.millis()),
            )
            .await?;
            if rule.is_some_and(|r| !r.resolve) {
                return Ok(Done::quiet(
                    AlertOutcome::Resolved,
                    "its rule leaves the incident and the components to people",
                ));
            }
            let message = rule
                .and_then(|r| r.resolve_message.clone())
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| RESOLVED.to_string());
            if let Some(incident) = g.incident_id
                && crate::incidents::lock_open(tx, incident).await?
            {
                let back = returning(tx, &comps).await?;
                let audited =
                    crate::incidents::resolve_in(tx, incident, (message, back), now).await?;
                return Ok(Done {
                    outcome: AlertOutcome::Resolved,
                    detail: format!("resolved incident {incident}"),
                    audited: Some(audited),
                });
            }
            let back = returning(tx, &comps).await?;
            let moved = move_only(tx, &back, now).await?;
            let audited = if moved > 0 {
                Some(
                    tx.audit(
                        Action::IntegrationAlert,
                        "integration",
                        Some(row.id),
                        json!({ "groupId": g.id, "firing": false, "componentStatuses": &back }),
                    )
                    .await?,
                )
            } else {
                None
            };
            Ok(Done {
                outcome: AlertOutcome::Resolved,
                detail: format!("{moved} component(s) back to operational"),
                audited,
            })
        }
        _ => Ok(Done::quiet(
            AlertOutcome::Ignored,
            "its group was closed already",
        )),
    }
}

/// The components a closing group returns to operational: those still at
/// the status it gave them (a person who moved one since decided), and
/// held by no other open group of any integration.
async fn returning(
    tx: &mut Tx,
    comps: &[ComponentStatusChange],
) -> StoreResult<Vec<ComponentStatusChange>> {
    let others: Vec<String> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT components FROM alert_groups WHERE state = 'open'"
    )
    .fetch_all(c)
    .await?);
    let held: Vec<Id> = others
        .iter()
        .filter_map(|s| serde_json::from_str::<Vec<ComponentStatusChange>>(s).ok())
        .flatten()
        .map(|c| c.component_id)
        .collect();
    let mut ids: Vec<&ComponentStatusChange> = comps.iter().collect();
    ids.sort_unstable_by_key(|c| c.component_id);
    let mut back = Vec::new();
    for ch in ids {
        if held.contains(&ch.component_id) {
            continue;
        }
        match crate::components::get_locked(tx, ch.component_id).await {
            Ok(c) if c.status == ch.status => back.push(ComponentStatusChange {
                component_id: ch.component_id,
                status: ComponentStatus::Operational,
            }),
            Ok(_) | Err(StoreError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(back)
}

#[allow(clippy::too_many_arguments)]
async fn log(
    tx: &mut Tx,
    integration: Id,
    at: Timestamp,
    fingerprint: &str,
    firing: bool,
    title: &str,
    outcome: AlertOutcome,
    detail: &str,
) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| {
        sqlx::query(
        "INSERT INTO integration_events (integration_id, at, fingerprint, firing, title, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    )
    .bind(integration)
    .bind(at.millis())
    .bind(clip(fingerprint, 200))
    .bind(firing)
    .bind(clip(title, TITLE_MAX))
    .bind(outcome.as_str())
    .bind(clip(detail, 1000))
    .execute(c)
    .await?
    .rows_affected()
    });
    Ok(())
}

async fn prune(tx: &mut Tx, integration: Id) -> StoreResult<()> {
    on_tx!(&mut *tx, |c| {
        sqlx::query(
        "DELETE FROM integration_events WHERE integration_id = $1 AND id < \
         (SELECT MIN(id) FROM (SELECT id FROM integration_events WHERE integration_id = $1 ORDER BY id DESC LIMIT $2) AS kept)"
    )
    .bind(integration)
    .bind(EVENTS_KEPT)
    .execute(c)
    .await?
    .rows_affected()
    });
    Ok(())
}

/// A sender's post the server refused before reading it (a bad signature,
/// a payload it cannot read): logged so the operator sees why nothing
/// moved.
pub async fn log_refusal(db: &Db, integration: Id, why: &str) -> StoreResult<()> {
    let ctx = AuditCtx::of(Actor::system("integration"));
    let mut tx = db.begin_as(&ctx).await?;
    log(
        &mut tx,
        integration,
        db.clock.now(),
        "",
        false,
        "refused",
        AlertOutcome::Ignored,
        why,
    )
    .await?;
    prune(&mut tx, integration).await?;
    tx.commit(Audited::bookkeeping()).await
}

/// The integration's log, newest first.
pub async fn events(db: &Db, integration: Id, limit: i64) -> StoreResult<Vec<IntegrationEvent>> {
    get(db, integration).await?;
    let rows: Vec<(i64, i64, String, bool, String, String, String)> =
        on_db!(db, |c| sqlx::query_as(
            "SELECT id, at, fingerprint, firing, title, outcome, detail FROM integration_events \
         WHERE integration_id = $1 ORDER BY id DESC LIMIT $2"
        )
        .bind(integration)
        .bind(limit)
        .fetch_all(c)
        .await?);
    rows.into_iter()
        .map(|(id, at, fingerprint, firing, title, outcome, detail)| {
            Ok(IntegrationEvent {
                id,
                at: Timestamp::from_millis(at),
                fingerprint,
                firing,
                title,
                outcome: outcome.parse().map_err(|_| {
                    StoreError::Config(format!("integration event {id}: bad outcome"))
                })?,
                detail,
            })
        })
        .collect()
}

type DraftRow = (
    i64,
    i64,
    String,
    i64,
    String,
    String,
    String,
    String,
    i64,
    i64,
);

fn draft_of(r: DraftRow) -> StoreResult<AlertDraft> {
    let (id, integration_id, integration_name, page, title, message, impact, comps, firing, at) = r;
    Ok(AlertDraft {
        id,
        integration_id,
        integration_name,
        status_page_id: page,
        title,
        message,
        impact: impact
            .parse()
            .map_err(|_| StoreError::Config(format!("alert draft {id}: bad impact")))?,
        components: serde_json::from_str(&comps)
            .map_err(|e| StoreError::Config(format!("alert draft {id}: {e}")))?,
        firing,
        opened_at: Timestamp::from_millis(at),
    })
}

macro_rules! draft_select {
    () => {
        "SELECT g.id, g.integration_id, i.name, i.page_id, g.title, g.message, g.impact, g.components, \
         (SELECT COUNT(*) FROM integration_alerts a WHERE a.group_id = g.id AND a.firing), g.opened_at \
         FROM alert_groups g JOIN integrations i ON i.id = g.integration_id WHERE g.state = 'draft'"
    };
}

/// Incidents the integrations drafted that wait for a person, newest first.
pub async fn drafts(db: &Db) -> StoreResult<Vec<AlertDraft>> {
    let rows: Vec<DraftRow> = on_db!(db, |c| sqlx::query_as(concat!(
        draft_select!(),
        " ORDER BY g.id DESC"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter().map(draft_of).collect()
}

pub async fn draft(db: &Db, id: Id) -> StoreResult<AlertDraft> {
    let row: Option<DraftRow> = on_db!(db, |c| sqlx::query_as(concat!(
        draft_select!(),
        " AND g.id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    draft_of(row.ok_or(StoreError::NotFound("alert draft"))?)
}

/// The draft's group, locked after its integration; a draft approved,
/// dismissed or withdrawn is a conflict.
async fn lock_draft(tx: &mut Tx, id: Id) -> StoreResult<(Row, GroupRow)> {
    let integration: Option<i64> = on_tx!(&mut *tx, |c| sqlx::query_scalar(
        "SELECT integration_id FROM alert_groups WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let integration = integration.ok_or(StoreError::NotFound("alert draft"))?;
    let row = lock(tx, integration).await?;
    let g = group(tx, id).await?;
    if g.state != "draft" {
        let what = match g.state.as_str() {
            "open" | "closed" => "approved",
            _ => "dismissed or withdrawn",
        };
        return Err(StoreError::Conflict(format!(
            "this draft was {what} already"
        )));
    }
    Ok((row, g))
}

/// Publishes a draft as an incident (words changed as asked): its
/// components move, subscribers are told. Returns the incident's id.
pub async fn approve(db: &Db, ctx: &AuditCtx, id: Id, with: &DraftApproval) -> StoreResult<Id> {
    let now = db.clock.now();
    let mut tx = db.begin_as(ctx).await?;
    let (row, g) = lock_draft(&mut tx, id).await?;
    let comps = g.components()?;
    let ids: Vec<Id> = comps.iter().map(|c| c.component_id).collect();
    let worst = comps
        .iter()
        .map(|c| c.status)
        .max_by_key(|s| s.severity())
        .unwrap_or(ComponentStatus::MajorOutage);
    let (moving, _held) = targets(&mut tx, row.page_id, &ids, worst).await?;
    // Each component to its own drafted status (targets used the worst).
    let moving: Vec<ComponentStatusChange> = moving
        .into_iter()
        .filter_map(|m| {
            comps
                .iter()
                .find(|c| c.component_id == m.component_id)
                .map(|c| ComponentStatusChange {
                    component_id: m.component_id,
                    status: c.status,
                })
        })
        .collect();
    let impact: Impact = match with.impact {
        Some(i) => i,
        None => g
            .impact
            .parse()
            .map_err(|_| StoreError::Config(format!("alert draft {id}: bad impact")))?,
    };
    let title = with.title.clone().unwrap_or(g.title.clone());
    let message = with.message.clone().unwrap_or(g.message.clone());
    let (incident, _) = open_incident(
        &mut tx,
        row.page_id,
        (&title, &message, impact),
        &moving,
        now,
    )
    .await?;
    set_group(&mut tx, g.id, "open", Some(incident), &moving, None).await?;
    let audited = tx
        .audit(
            Action::AlertDraftApprove,
            "alert_draft",
            Some(g.id),
            json!({ "incidentId": incident, "title": title, "message": message, "impact": impact, "integrationId": g.integration_id, "openedAt": g.opened_at }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(incident)
}

/// Drops a draft: nothing is published; the group's alerts stay known, so
/// their repeats change nothing until they resolve.
pub async fn dismiss(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let (_, g) = lock_draft(&mut tx, id).await?;
    let comps = g.components()?;
    set_group(
        &mut tx,
        g.id,
        "dismissed",
        None,
        &comps,
        Some(db.clock.now().millis()),
    )
    .await?;
    let audited = tx
        .audit(
            Action::AlertDraftDismiss,
            "alert_draft",
            Some(g.id),
            json!({ "title": g.title, "integrationId": g.integration_id }),
        )
        .await?;
    tx.commit(audited).await
}

/// How long a draft's approve link works after the draft is made.
pub const LINK_MS: i64 = 24 * 3_600_000;

/// The secret of a waiting draft's approve link; None once the draft is
/// approved, dismissed or withdrawn.
pub async fn approve_token(db: &Db, id: Id) -> StoreResult<Option<String>> {
    let row: Option<(String, Option<String>)> = on_db!(db, |c| sqlx::query_as(
        "SELECT state, approve_token FROM alert_groups WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    match row {
        Some((state, Some(sealed))) if state == "draft" => {
            Ok(Some(db.keys.open(Purpose::Channel, &sealed)?))
        }
        _ => Ok(None),
    }
}

/// The draft an approve link names, when its secret is right and the link
/// young enough; anything else is `NotFound`, so a guess learns nothing.
/// A draft handled already is a conflict that says so.
pub async fn draft_by_link(db: &Db, id: Id, token: &str) -> StoreResult<AlertDraft> {
    let row: Option<(String, Option<String>, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT state, approve_token, opened_at FROM alert_groups WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let Some((state, Some(sealed), opened_at)) = row else {
        return Err(StoreError::NotFound("alert draft"));
    };
    let secret = db.keys.open(Purpose::Channel, &sealed)?;
    let same: bool = Sha256::digest(secret.as_bytes()) == Sha256::digest(token.as_bytes());
    if !same || db.clock.now().millis() > opened_at + LINK_MS {
        return Err(StoreError::NotFound("alert draft"));
    }
    if state != "draft" {
        return Err(StoreError::Conflict(
            "this draft was approved, dismissed or withdrawn already".into(),
        ));
    }
    draft(db, id).await
}
