//! `/api/integrations`: other tools' alerts moving components and opening
//! incidents (docs/integrations.md). Operators make an integration per
//! sender and page, with rules; each sender posts to its own receiver,
//! `/api/integrations/{kind}/{token}`, where the token is the secret of the
//! URL (shown once) and senders that sign are verified. `/api/alert-drafts`:
//! the incidents integrations drafted, waiting for a person.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, OptionalBody, PathId, RawJson};
use crate::openapi::{BodyErrors, Conflict, NotFound, SessionErrors};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use upstate_core::alerts::{
    AlertDraft, DraftApproval, Integration, IntegrationChange, IntegrationCreated,
    IntegrationEvent, NewIntegration, ReceiveReport, Rule,
};
use upstate_core::roles::Permission;
use upstate_core::status::IntegrationKind;
use upstate_store::integrations;
use utoipa_axum::{router::OpenApiRouter, routes};

/// Posts per minute and sender address: an Alertmanager flushing many
/// groups fits, a guesser of tokens gets nowhere.
const POSTS_PER_MINUTE: u32 = 600;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(one, change, remove))
        .routes(routes!(rotate))
        .routes(routes!(add_rule))
        .routes(routes!(remove_rule))
        .routes(routes!(events))
        .routes(routes!(drafts))
        .routes(routes!(draft))
        .routes(routes!(approve))
        .routes(routes!(dismiss))
        .routes(crate::public_reads::limited(
            state,
            routes!(alertmanager),
            POSTS_PER_MINUTE,
        ))
        .routes(crate::public_reads::limited(
            state,
            routes!(grafana),
            POSTS_PER_MINUTE,
        ))
        .routes(crate::public_reads::limited(
            state,
            routes!(pagerduty),
            POSTS_PER_MINUTE,
        ))
        .routes(crate::public_reads::limited(
            state,
            routes!(opsgenie),
            POSTS_PER_MINUTE,
        ))
        .routes(crate::public_reads::limited(
            state,
            routes!(datadog),
            POSTS_PER_MINUTE,
        ))
        .routes(crate::public_reads::limited(
            state,
            routes!(generic),
            POSTS_PER_MINUTE,
        ))
}

fn receiver_url(state: &AppState, kind: IntegrationKind, token: &str) -> String {
    format!(
        "{}/api/integrations/{}/{token}",
        state.settings.public_url.trim_end_matches('/'),
        kind.as_str()
    )
}

#[utoipa::path(get, path = "/api/integrations", tag = "integrations", operation_id = "listIntegrations",
    summary = "Every integration (needs SETTINGS_WRITE)",
    responses((status = 200, body = Data<Vec<Integration>>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(integrations::list(&state.db).await?))
}

#[utoipa::path(post, path = "/api/integrations", tag = "integrations", operation_id = "createIntegration",
    summary = "Make an integration for one sender and page (needs SETTINGS_WRITE)",
    description = "The answer carries the receiver URL (its token is the secret and is shown only now) and, \
        for `generic` without a given secret, the signing secret Upstate made. Rules are tried in order; \
        the first whose matchers hold decides. Audited.",
    request_body = NewIntegration,
    responses((status = 201, body = Data<IntegrationCreated>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<NewIntegration>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    input.check()?;
    let made = integrations::create(&state.db, &caller.audit, &input).await?;
    let kind = made.integration.kind;
    Ok(created(
        format!("/api/integrations/{}", made.integration.id),
        IntegrationCreated {
            receiver_url: receiver_url(&state, kind, &made.token),
            integration: made.integration,
            secret: made.secret,
        },
    ))
}

#[utoipa::path(get, path = "/api/integrations/{id}", tag = "integrations", operation_id = "getIntegration",
    summary = "One integration (needs SETTINGS_WRITE)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Integration>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn one(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(integrations::get(&state.db, id).await?))
}

#[utoipa::path(put, path = "/api/integrations/{id}", tag = "integrations", operation_id = "updateIntegration",
    summary = "Change an integration's name, rules, secret or whether it is on (any subset; needs SETTINGS_WRITE)",
    description = "`rules` replaces the whole list. An empty `secret` removes it. The sender and the page \
        stay: make a new integration for another. Audited.",
    params(("id" = i64, Path)), request_body = IntegrationChange,
    responses((status = 200, body = Data<Integration>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<IntegrationChange>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    input.check()?;
    Ok(data(
        integrations::update(&state.db, &caller.audit, id, &input).await?,
    ))
}

#[utoipa::path(delete, path = "/api/integrations/{id}", tag = "integrations", operation_id = "deleteIntegration",
    summary = "Remove an integration (needs SETTINGS_WRITE); incidents it opened stay",
    params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    integrations::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("integration"))
}

#[utoipa::path(post, path = "/api/integrations/{id}/rules", tag = "integrations", operation_id = "addIntegrationRule",
    summary = "Add a rule after the others (needs SETTINGS_WRITE)",
    description = "The rule is tried after those before it; the first that matches an alert decides. Audited.",
    params(("id" = i64, Path)), request_body = Rule,
    responses((status = 201, body = Data<Integration>), SessionErrors, BodyErrors, NotFound, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn add_rule(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(rule): Body<Rule>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let mut e = upstate_core::FieldErrors::new();
    rule.check("rule", &mut e);
    // Named as the body's own fields.
    let e = upstate_core::FieldErrors(
        e.0.into_iter()
            .map(|mut f| {
                f.field = f.field.trim_start_matches("rule.").to_string();
                f
            })
            .collect(),
    );
    e.into_result()?;
    let i = integrations::edit_rules(&state.db, &caller.audit, id, Some(&rule), None).await?;
    Ok(created(format!("/api/integrations/{id}"), i))
}

#[utoipa::path(delete, path = "/api/integrations/{id}/rules/{index}", tag = "integrations", operation_id = "removeIntegrationRule",
    summary = "Remove the rule at an index, counted from 0 (needs SETTINGS_WRITE)",
    params(("id" = i64, Path), ("index" = u32, Path)),
    responses((status = 200, body = Data<Integration>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove_rule(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, index)): Path<(String, String)>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let (Ok(id), Ok(index)) = (id.parse::<i64>(), index.parse::<usize>()) else {
        return Err(ApiError::NotFound("no such rule".into()));
    };
    Ok(data(
        integrations::edit_rules(&state.db, &caller.audit, id, None, Some(index)).await?,
    ))
}

#[utoipa::path(post, path = "/api/integrations/{id}/token", tag = "integrations", operation_id = "rotateIntegrationToken",
    summary = "A new receiver URL (needs SETTINGS_WRITE); the old one stops working at once",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<IntegrationCreated>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn rotate(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let (integration, token) = integrations::rotate_token(&state.db, &caller.audit, id).await?;
    Ok(data(IntegrationCreated {
        receiver_url: receiver_url(&state, integration.kind, &token),
        integration,
        secret: None,
    }))
}

#[utoipa::path(get, path = "/api/integrations/{id}/events", tag = "integrations", operation_id = "integrationEvents",
    summary = "What the integration's last alerts did, newest first (needs SETTINGS_WRITE)",
    description = "Each alert received, with its outcome: opened, drafted, joined, moved, duplicate, unmatched, \
        suppressed (maintenance), ignored, released, resolved or withdrawn. Posts refused for a bad signature \
        or an unreadable payload are here too. The last 200 are kept.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<Vec<IntegrationEvent>>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn events(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(integrations::events(&state.db, id, 200).await?))
}

#[utoipa::path(get, path = "/api/alert-drafts", tag = "integrations", operation_id = "listAlertDrafts",
    summary = "Incidents integrations drafted that wait for a person's approval (needs PAGES_READ)",
    responses((status = 200, body = Data<Vec<AlertDraft>>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn drafts(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(integrations::drafts(&state.db).await?))
}

#[utoipa::path(get, path = "/api/alert-drafts/{id}", tag = "integrations", operation_id = "getAlertDraft",
    summary = "One draft waiting for approval (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<AlertDraft>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn draft(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(integrations::draft(&state.db, id).await?))
}

/// What approving a draft made.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Approved {
    message: String,
    incident_id: upstate_core::Id,
}

#[utoipa::path(post, path = "/api/alert-drafts/{id}/approve", tag = "integrations", operation_id = "approveAlertDraft",
    summary = "Publish a drafted incident, its words changed on the way if given (needs INCIDENTS_WRITE)",
    description = "The incident opens as any incident does: its components move, subscribers and channels are \
        told. Refused (409) when the draft was approved, dismissed or withdrawn already. Audited.",
    params(("id" = i64, Path)), request_body(content = Option<DraftApproval>),
    responses((status = 200, body = Data<Approved>), SessionErrors, BodyErrors, NotFound, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn approve(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    OptionalBody(with): OptionalBody<DraftApproval>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    with.check()?;
    let incident = integrations::approve(&state.db, &caller.audit, id, &with).await?;
    Ok(data(Approved {
        message: "The incident is published.".into(),
        incident_id: incident,
    }))
}

#[utoipa::path(post, path = "/api/alert-drafts/{id}/dismiss", tag = "integrations", operation_id = "dismissAlertDraft",
    summary = "Drop a drafted incident: nothing is published (needs INCIDENTS_WRITE)",
    description = "The group's alerts stay known: their repeats change nothing until they resolve. Audited.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound, Conflict),
    security(("session" = []), ("api_key" = [])))]
async fn dismiss(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    integrations::dismiss(&state.db, &caller.audit, id).await?;
    Ok(crate::respond::nosniff(
        axum::Json(Message {
            message: "The draft is dismissed.".into(),
        })
        .into_response(),
    ))
}

/// Whether `body` carries the sender's HMAC-SHA256 signature: PagerDuty's
/// `X-PagerDuty-Signature: v1=HEX[,v1=HEX]` (several while it rotates its
/// secret), everyone else's `X-Upstate-Signature: sha256=HEX`.
fn signed(kind: IntegrationKind, headers: &HeaderMap, body: &[u8], secret: &str) -> bool {
    let (header, prefix) = match kind {
        IntegrationKind::Pagerduty => ("x-pagerduty-signature", "v1="),
        _ => ("x-upstate-signature", "sha256="),
    };
    let Some(value) = headers.get(header).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    value.split(',').any(|sig| {
        let Some(hex_sig) = sig.trim().strip_prefix(prefix) else {
            return false;
        };
        let Ok(bytes) = hex::decode(hex_sig) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return false;
        };
        mac.update(body);
        mac.verify_slice(&bytes).is_ok()
    })
}

/// One receiver: the token finds the integration, the signature (when it
/// has a secret) proves the sender, the payload is read in the sender's
/// format, and the alerts are applied in one transaction. A refusal after
/// the token is known goes into the integration's log.
async fn receive(
    state: &AppState,
    kind: IntegrationKind,
    token: &str,
    headers: &HeaderMap,
    body: RawJson,
) -> ApiResult<Response> {
    let Some((integration, secret)) = integrations::by_token(&state.db, kind, token).await? else {
        return Err(ApiError::NotFound(format!(
            "no {kind} integration has this receiver URL (its token was rotated, or the integration is off or gone)"
        )));
    };
    let refuse = |why: String| async move {
        integrations::log_refusal(&state.db, integration.id, &why).await?;
        Ok::<_, ApiError>(why)
    };
    if let Some(secret) = &secret
        && !signed(kind, headers, &body.0, secret)
    {
        let why = refuse("the signature is missing or does not match the secret".into()).await?;
        return Err(ApiError::Unauthorized(why));
    }
    let value = match body.value() {
        Ok(v) => v,
        Err(e) => {
            refuse("the payload is not one JSON object".into()).await?;
            return Err(e);
        }
    };
    let received = match upstate_core::alerts::read(kind, &value) {
        Ok(r) => r,
        Err(e) => {
            let fields: Vec<String> =
                e.0.iter()
                    .map(|f| format!("{} {}", f.field, f.message))
                    .collect();
            refuse(format!("unreadable payload: {}", fields.join("; "))).await?;
            return Err(ApiError::Validation(e));
        }
    };
    let outcomes = integrations::receive(&state.db, &integration, &received).await?;
    Ok(data(ReceiveReport {
        message: format!("{} alert(s) read.", received.alerts.len()),
        outcomes,
    }))
}

macro_rules! receiver {
    ($fn:ident, $kind:expr, $path:literal, $op:literal, $summary:literal) => {
        #[utoipa::path(post, path = $path, tag = "integrations", operation_id = $op,
            summary = $summary,
            description = "No sign-in: the token in the path is the secret. An integration with a secret also \
                needs its sender's signature (401 without it). 404 for a token nobody holds. The payload \
                format and the labels rules can match are in docs/integrations.md.",
            params(("token" = String, Path, description = "The integration's receiver token")),
            request_body(content = Object, description = "The sender's own payload"),
            responses((status = 200, body = Data<ReceiveReport>), BodyErrors, NotFound,
                (status = 401, description = "The signature is missing or wrong", body = crate::openapi::Problem,
                 content_type = "application/problem+json")),
            security(()))]
        async fn $fn(
            State(state): State<AppState>,
            Path(token): Path<String>,
            headers: HeaderMap,
            body: RawJson,
        ) -> ApiResult<Response> {
            receive(&state, $kind, &token, &headers, body).await
        }
    };
}

receiver!(
    alertmanager,
    IntegrationKind::Alertmanager,
    "/api/integrations/alertmanager/{token}",
    "receiveAlertmanager",
    "Prometheus Alertmanager's webhook (version 4)"
);
receiver!(
    grafana,
    IntegrationKind::Grafana,
    "/api/integrations/grafana/{token}",
    "receiveGrafana",
    "Grafana alerting's webhook contact point"
);
receiver!(
    pagerduty,
    IntegrationKind::Pagerduty,
    "/api/integrations/pagerduty/{token}",
    "receivePagerduty",
    "PagerDuty's v3 webhook subscription (incident events; signed when a secret is set)"
);
receiver!(
    opsgenie,
    IntegrationKind::Opsgenie,
    "/api/integrations/opsgenie/{token}",
    "receiveOpsgenie",
    "Opsgenie's outgoing webhook (Create and Close)"
);
receiver!(
    datadog,
    IntegrationKind::Datadog,
    "/api/integrations/datadog/{token}",
    "receiveDatadog",
    "Datadog's webhook, with the payload template in docs/integrations.md"
);
receiver!(
    generic,
    IntegrationKind::Generic,
    "/api/integrations/generic/{token}",
    "receiveGeneric",
    "Upstate's generic alert form, signed with X-Upstate-Signature"
);
