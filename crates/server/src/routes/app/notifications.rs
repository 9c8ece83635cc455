//! `/api/notifications`: the team's notification channels (webhook, Slack,
//! Discord, Teams, Telegram), their test message and their delivery log.
//! Channels hold secrets (signing secrets, bot tokens, webhook URLs that
//! are credentials), so every route needs SETTINGS_WRITE, the admins'.
//! A webhook's signing secret is shown once: in the answer that made it.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use upstate_core::FieldErrors;
use upstate_core::notify::{Channel, ChannelInput, ChannelKind, Delivery, DeliveryStatus};
use upstate_core::roles::Permission;
use upstate_store::{deliveries, notifications, pages};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, change, remove))
        .routes(routes!(test))
        .routes(routes!(log))
}

/// A channel, with its signing secret when this answer made one.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Made {
    #[serde(flatten)]
    channel: Channel,
    /// The webhook signing secret (`whsec_…`): shown in this answer only.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

/// Email channels need an SMTP relay (`smtp_url`).
fn refuse_email(state: &AppState, kind: Option<&str>) -> ApiResult<()> {
    if kind == Some(ChannelKind::Email.as_str()) && !state.sender.has_mailer() {
        return Err(FieldErrors::single(
            "kind",
            "email channels need an SMTP server, which this install does not have configured",
        )
        .into());
    }
    Ok(())
}

#[utoipa::path(get, path = "/api/notifications", tag = "notifications", operation_id = "listNotificationChannels",
    summary = "The team's notification channels (needs SETTINGS_WRITE)",
    responses((status = 200, body = Data<Vec<Channel>>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn list(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(notifications::list(&state.db).await?))
}

#[utoipa::path(post, path = "/api/notifications", tag = "notifications", operation_id = "createNotificationChannel",
    summary = "Add a channel (needs SETTINGS_WRITE); a webhook's signing secret is in this answer only",
    description = "`kind` is webhook, slack, discord, teams, telegram or email (when `smtp_url` is configured); `target` the URL (Telegram: the chat id; email: the address); \
        telegram also needs `token`. Filters (`pageIds`, `componentIds`, `eventKinds`) are empty for \"all\". \
        Targets on private or loopback addresses are refused when sent, unless `outgoing_allow` allows them.",
    request_body = ChannelInput,
    responses((status = 201, body = Data<Made>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<ChannelInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    refuse_email(&state, input.kind.as_deref())?;
    let (channel, secret) =
        notifications::create(&state.db, &caller.audit, input.validate_new()?).await?;
    Ok(created(
        format!("/api/notifications/{}", channel.id),
        Made { channel, secret },
    ))
}

#[utoipa::path(get, path = "/api/notifications/{id}", tag = "notifications", operation_id = "getNotificationChannel",
    summary = "A channel (needs SETTINGS_WRITE)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Channel>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn show(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(notifications::get(&state.db, id).await?))
}

#[utoipa::path(put, path = "/api/notifications/{id}", tag = "notifications", operation_id = "updateNotificationChannel",
    summary = "Change the fields named (needs SETTINGS_WRITE); `rotateSecret` makes a webhook's new secret, shown in this answer only",
    params(("id" = i64, Path)), request_body = ChannelInput,
    responses((status = 200, body = Data<Made>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<ChannelInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let kind = notifications::get(&state.db, id).await?.kind;
    let (channel, secret) =
        notifications::update(&state.db, &caller.audit, id, input.validate_change(kind)?).await?;
    Ok(data(Made { channel, secret }))
}

#[utoipa::path(delete, path = "/api/notifications/{id}", tag = "notifications", operation_id = "deleteNotificationChannel",
    summary = "Remove a channel and its delivery log (needs SETTINGS_WRITE)", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    notifications::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Notification channel"))
}

#[utoipa::path(post, path = "/api/notifications/{id}/test", tag = "notifications", operation_id = "testNotificationChannel",
    summary = "Send a real test message now and answer what the receiver said (needs SETTINGS_WRITE)",
    description = "One attempt, no retries; the result is also kept in the channel's delivery log (kind `test`). \
        `status` is delivered when the receiver answered 2xx; `responseStatus`, `responseBody` and `lastError` say what happened.",
    params(("id" = i64, Path)),
    responses((status = 200, body = Data<Delivery>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn test(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let channel = notifications::get_sendable(&state.db, id).await?;
    let page = match channel.channel.page_ids.first() {
        Some(p) => pages::get(&state.db, *p).await.ok(),
        None => pages::list(&state.db).await?.into_iter().next(),
    };
    let install = state.snapshots.settings().await?.language();
    let notice = state
        .sender
        .test_notice(&channel, page.as_ref(), install, state.db.clock.now());
    let row = deliveries::begin_test(&state.db, id, state.db.clock.now()).await?;
    let attempt = state
        .sender
        .send(&channel, &notice, &format!("msg_{row}"))
        .await;
    Ok(data(
        deliveries::finish_test(&state.db, row, &attempt, state.db.clock.now()).await?,
    ))
}

#[utoipa::path(get, path = "/api/notifications/{id}/deliveries", tag = "notifications", operation_id = "listNotificationDeliveries",
    summary = "A channel's delivery log, newest first (needs SETTINGS_WRITE)",
    params(("id" = i64, Path),
        ("status" = Option<String>, Query, description = "pending, delivered or given_up"),
        ("before" = Option<i64>, Query, description = "Only deliveries with smaller ids (the next page)"),
        ("limit" = Option<i64>, Query, description = "1 to 200, default 50")),
    responses((status = 200, body = Data<Vec<Delivery>>), SessionErrors, BadQuery, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn log(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let mut e = FieldErrors::new();
    let status =
        q.parsed::<DeliveryStatus>("status", "one of pending, delivered, given_up", &mut e);
    let before = q.id("before", &mut e);
    let limit = q.limit("limit", 50, 200, &mut e);
    e.into_result()?;
    notifications::get(&state.db, id).await?;
    Ok(data(
        deliveries::log(&state.db, Some(id), status, before, limit).await?,
    ))
}
