//! `/api/push/subscribe`: a visitor's browser subscribes to a page's
//! changes by web push (docs/notifications.md, "Web push"). `GET` gives the
//! install's VAPID public key (the `applicationServerKey` the browser's
//! `pushManager.subscribe` needs) and, with `?endpoint=`, the pages that
//! browser follows; `POST` stores its subscription; `DELETE` ends it. The
//! endpoint URL is the browser's own secret, so holding it is the right to
//! end the subscription. No sign-in; sign-ups limited per client address.

use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, NotFound, Throttled};
use crate::rate_limit::Subject;
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use upstate_core::notify::PageRef;
use upstate_core::push::PushSubscribeInput;
use upstate_core::{FieldErrors, Id};
use upstate_store::{components, pages, push};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(key, subscribe, unsubscribe))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PushKey {
    /// The VAPID public key, base64url: `applicationServerKey`.
    public_key: String,
    /// With `?endpoint=`: the pages that browser is subscribed to.
    #[serde(skip_serializing_if = "Option::is_none")]
    subscribed_page_ids: Option<Vec<Id>>,
}

#[utoipa::path(get, path = "/api/push/subscribe", tag = "subscribers", operation_id = "pushKey",
    summary = "The VAPID public key browsers subscribe with, and which pages an endpoint follows",
    params(("endpoint" = Option<String>, Query, description = "A browser's push endpoint")),
    responses((status = 200, body = Data<PushKey>), BadQuery),
    security(()))]
async fn key(State(state): State<AppState>, q: QueryParams) -> ApiResult<Response> {
    let (_, public_key) = upstate_jobs::push::vapid_keys(&state.db).await?;
    let subscribed_page_ids = match q.get("endpoint") {
        // What the document says an endpoint is, and what subscribing
        // takes: anything else is no browser's, and is said so.
        Some(e) => {
            upstate_core::validate::url(e).map_err(|m| FieldErrors::single("endpoint", m))?;
            Some(push::pages_of(&state.db, e).await?)
        }
        None => None,
    };
    Ok(data(PushKey {
        public_key,
        subscribed_page_ids,
    }))
}

async fn page_id(state: &AppState, page: &PageRef) -> ApiResult<Id> {
    pages::resolve(&state.db, page)
        .await?
        .ok_or_else(|| FieldErrors::single("statusPageId", "names no page").into())
}

#[derive(Serialize, utoipa::ToSchema)]
struct Subscribed {
    message: String,
}

#[utoipa::path(post, path = "/api/push/subscribe", tag = "subscribers", operation_id = "pushSubscribe",
    summary = "Store a browser's push subscription to a page (visitors; no sign-in)",
    description = "The body carries the browser's `PushSubscription` as JSON under `subscription`. \
        Subscribing again refreshes the keys and components. Limited per client address.",
    request_body = PushSubscribeInput,
    responses((status = 201, body = Data<Subscribed>), BodyErrors, Throttled),
    security(()))]
async fn subscribe(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Body(input): Body<PushSubscribeInput>,
) -> ApiResult<Response> {
    let sub = input.validate()?;
    let page = page_id(&state, &sub.page).await?;
    for c in &sub.component_ids {
        match components::get(&state.db, *c).await {
            Ok(comp) if comp.status_page_id == page => {}
            _ => {
                return Err(FieldErrors::single(
                    "componentIds",
                    format!("{c} is no component of this page"),
                )
                .into());
            }
        }
    }
    let ip = client_ip(peer.ip(), &headers, &state.settings.trusted_proxies);
    if let Some(d) = state.subscribe_limits.take(Subject::Addr(ip)).await
        && let Some(retry_after_secs) = d.retry_after_secs
    {
        return Err(ApiError::RateLimited { retry_after_secs });
    }
    push::subscribe(&state.db, page, &sub).await?;
    Ok((
        StatusCode::CREATED,
        data(Subscribed {
            message: "This browser will be told of changes of the page.".into(),
        }),
    )
        .into_response())
}

/// Which subscription to end.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Unsubscribe {
    #[schema(schema_with = upstate_core::schema::url, required)]
    endpoint: Option<String>,
    /// Only this page's (absent: every page this browser follows).
    #[schema(schema_with = upstate_core::schema::id)]
    status_page_id: Option<Id>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Removed {
    removed: u64,
}

#[utoipa::path(delete, path = "/api/push/subscribe", tag = "subscribers", operation_id = "pushUnsubscribe",
    summary = "End a browser's push subscription by its endpoint",
    request_body = Unsubscribe,
    responses((status = 200, body = Data<Removed>), BodyErrors, NotFound),
    security(()))]
async fn unsubscribe(
    State(state): State<AppState>,
    Body(input): Body<Unsubscribe>,
) -> ApiResult<Response> {
    let Some(endpoint) = input.endpoint.filter(|e| !e.trim().is_empty()) else {
        return Err(FieldErrors::single("endpoint", "is required").into());
    };
    upstate_core::validate::url(&endpoint).map_err(|m| FieldErrors::single("endpoint", m))?;
    let removed = push::unsubscribe(&state.db, endpoint.trim(), input.status_page_id).await?;
    if removed == 0 {
        return Err(ApiError::NotFound(
            "no push subscription with this endpoint".into(),
        ));
    }
    Ok(data(Removed { removed }))
}
