//! An operator's side: list, import from CSV, remove, a subscriber's deliveries (SETTINGS_WRITE: addresses are personal data).

use super::page_id;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, Message, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use upstate_core::notify::{ChannelKind, Delivery, PageRef, Subscriber};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id};
use upstate_store::deliveries;
use upstate_store::subscribers;

/// A CSV list of subscribers for one page.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ImportInput {
    status_page_id: Option<Id>,
    /// A header row naming `target` (or `email`), and optionally `kind`
    /// (email, webhook, slack, discord, teams) and `componentIds` (ids
    /// separated by spaces or semicolons); then one subscriber per row.
    csv: Option<String>,
    /// Add email subscribers without the confirmation (they opted in
    /// elsewhere); otherwise each gets one.
    #[serde(default)]
    skip_confirmation: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Imported {
    /// Rows that made a subscriber (or changed one's components).
    imported: usize,
    /// Rows whose subscriber existed already.
    unchanged: usize,
}

#[utoipa::path(post, path = "/api/subscribers/import", tag = "subscribers", operation_id = "importSubscribers",
    summary = "Add subscribers from CSV (needs SETTINGS_WRITE); one bad row refuses the file",
    description = "The CSV's header names `target` (or `email`), optionally `kind` and `componentIds`. \
        Email subscribers get a confirmation unless `skipConfirmation`. Audited as one event with the counts.",
    request_body = ImportInput,
    responses((status = 200, body = Data<Imported>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
pub(super) async fn import(
    State(state): State<AppState>,
    caller: Caller,
    crate::extract::Body(input): crate::extract::Body<ImportInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let Some(page) = input.status_page_id else {
        return Err(FieldErrors::single("statusPageId", "is required").into());
    };
    let page = page_id(&state, &PageRef::Id(page)).await?;
    let rows = upstate_core::subscriber_csv::parse(page, input.csv.as_deref().unwrap_or(""))?;
    let mut e = FieldErrors::new();
    if rows.iter().any(|r| r.kind == ChannelKind::Email) && !state.sender.has_mailer() {
        e.push(
            "csv",
            "this file has email subscribers and this status page cannot send email (no SMTP server is configured)",
        );
    }
    e.into_result()?;
    let (imported, unchanged) = subscribers::import(
        &state.db,
        &caller.audit,
        page,
        &rows,
        input.skip_confirmation,
    )
    .await?;
    Ok(data(Imported {
        imported,
        unchanged,
    }))
}

#[utoipa::path(get, path = "/api/subscribers", tag = "subscribers", operation_id = "listSubscribers",
    summary = "Subscribers, newest first (needs SETTINGS_WRITE)",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's"),
        ("q" = Option<String>, Query, description = "Address or URL contains"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 100")),
    responses((status = 200, body = Data<Vec<Subscriber>>), SessionErrors, BadQuery),
    security(("session" = []), ("api_key" = [])))]
pub(super) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let mut e = FieldErrors::new();
    let page = q.id("statusPageId", &mut e);
    let limit = q.limit("limit", 100, 500, &mut e);
    e.into_result()?;
    let text = q.get("q").map(str::trim).filter(|s| !s.is_empty());
    Ok(data(subscribers::list(&state.db, page, text, limit).await?))
}

#[utoipa::path(delete, path = "/api/subscribers/{id}", tag = "subscribers", operation_id = "deleteSubscriber",
    summary = "Remove a subscriber (needs SETTINGS_WRITE); audited", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
pub(super) async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    subscribers::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Subscriber"))
}

#[utoipa::path(get, path = "/api/subscribers/{id}/deliveries", tag = "subscribers", operation_id = "listSubscriberDeliveries",
    summary = "What was sent to a subscriber, newest first (needs SETTINGS_WRITE)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Vec<Delivery>>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
pub(super) async fn history(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    subscribers::get(&state.db, id).await?;
    Ok(data(deliveries::of_subscriber(&state.db, id, 100).await?))
}
