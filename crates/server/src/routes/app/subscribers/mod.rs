//! `/api/subscribers`: visitors subscribe to a page (email with double
//! opt-in, webhook, or a chat's incoming webhook), confirm and leave by the
//! links of their messages; operators list, add and remove subscribers and
//! read each one's delivery history (SETTINGS_WRITE: addresses are
//! personal data).
//!
//! `POST /api/subscribers` serves both: a request with an API key or a
//! signed-in person's CSRF token is an operator's; any other is a
//! visitor's, answered 202 with the same words whatever happened (no one
//! learns whether an address is subscribed), limited per client address.
//! `GET /api/subscribers/verify` and `/unsubscribe` are links people open:
//! a browser gets a short page, anything else JSON. Unsubscribing is one
//! POST (RFC 8058 one-click: mail clients post `List-Unsubscribe=One-Click`);
//! its GET only shows the button, since mail scanners open links.
//!
//! Split by caller: `subscribe` (both) here, `operator` (SETTINGS_WRITE),
//! `links` (the tokens of a subscriber's messages). What a subscription may
//! follow is the store's rule (`upstate_store::subscribers::check`).

use crate::caller::Caller;
use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::extract::{FormOrJson, QueryParams};
use crate::i18n::{self, Lang};
use crate::openapi::{BodyErrors, Throttled};
use crate::rate_limit::Subject;
use crate::respond::{Data, created, data};
use crate::state::AppState;
use crate::views::notice_page;
use crate::visitor::Visitor;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Serialize;
use std::net::SocketAddr;
use upstate_core::notify::{ChannelKind, PageRef, SubscribeInput, Subscriber};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id};
use upstate_store::pages;
use upstate_store::subscribers;
use utoipa_axum::{router::OpenApiRouter, routes};

/// Requests per minute and client address on the routes a visitor's link
/// token opens: the tokens are 192 bits, so this only keeps a guesser from
/// costing us anything, while a person clicking links is never near it.
const LINKS_PER_MINUTE: u32 = 60;

mod links;
mod operator;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let links = |r| crate::public_reads::limited(state, r, LINKS_PER_MINUTE);
    OpenApiRouter::new()
        .routes(routes!(operator::list, subscribe))
        .routes(links(routes!(links::verify)))
        .routes(links(routes!(links::unsubscribe_form, links::unsubscribe)))
        .routes(links(routes!(links::manage_form, links::manage)))
        .routes(routes!(operator::remove))
        .routes(routes!(operator::history))
        .routes(routes!(operator::import))
}

/// What a visitor is told.
#[derive(Serialize, utoipa::ToSchema)]
struct Accepted {
    message: String,
}

fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"))
}

async fn page_id(state: &AppState, page: &PageRef) -> ApiResult<Id> {
    pages::resolve(&state.db, page)
        .await?
        .ok_or_else(|| FieldErrors::single("statusPageId", "names no page").into())
}

#[utoipa::path(post, path = "/api/subscribers", tag = "subscribers", operation_id = "subscribe",
    summary = "Subscribe to a page: visitors (no sign-in; email gets a confirmation link valid 24 h) or operators (SETTINGS_WRITE)",
    description = "A visitor's request is answered 202 with the same message whatever the address's state, and is limited per client address. \
        An operator's (API key, or session with CSRF token) answers 201 with the subscriber; `skipConfirmation` adds an email subscriber without the opt-in. \
        HTML forms are answered with a redirect back to the page.",
    request_body = SubscribeInput,
    responses((status = 202, body = Data<Accepted>), (status = 201, body = Data<Subscriber>), BodyErrors, Throttled,
        (status = 401, description = "A session cookie or key was sent and is not valid (an operator's request), or a visitor lacks the private page's password cookie", content_type = "application/problem+json", body = crate::openapi::Problem),
        (status = 403, description = "The operator lacks SETTINGS_WRITE, or the CSRF token is missing, or the visitor's address is outside the page's networks", content_type = "application/problem+json", body = crate::openapi::Problem)),
    security((), ("session" = []), ("api_key" = [])))]
async fn subscribe(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: Visitor,
    q: QueryParams,
    caller: Option<Caller>,
    FormOrJson(input, is_form): FormOrJson<SubscribeInput>,
) -> Response {
    let form = i18n::of_form(&state.db, is_form, q.get("lang"), &headers).await;
    let result = async {
        let caller = match caller {
            Some(c) => {
                c.require(Permission::SettingsWrite)?;
                Some(c)
            }
            None => None,
        };
        if caller.is_none() && input.skip_confirmation {
            return Err(FieldErrors::single(
                "skipConfirmation",
                "only operators may skip the confirmation",
            )
            .into());
        }
        let mut input = input;
        // A visitor's page form: messages in the language the page was read
        // in (the one its answer and confirmation are written in).
        if input.lang.is_none()
            && let Some(lang) = form
        {
            input.lang = Some(lang.code().to_string());
        }
        let sub = input.validate()?;
        let page = page_id(&state, &sub.page).await?;
        // A visitor subscribes only to a page they may read (its password
        // cookie, from its networks): news of a page is the page.
        let mut viewer = None;
        if caller.is_none() {
            let slug = pages::get(&state.db, page).await?.slug;
            let snap = crate::public_reads::page(&state, &slug, &headers).await?;
            viewer = crate::page_gate::viewer_of(&snap.data, &headers);
        }
        let follows = match sub.incident_id {
            Some(i) => subscribers::Follows::Incident(i),
            None => subscribers::Follows::Page(&sub.component_ids),
        };
        subscribers::check(&state.db, page, follows).await?;
        if sub.kind == ChannelKind::Email && !state.sender.has_mailer() {
            return Err(FieldErrors::single(
                "kind",
                "this status page cannot send email (no SMTP server is configured)",
            )
            .into());
        }
        // What counts against a client is a sign-up that would be made
        // (a script trying addresses), not a typo refused above.
        if caller.is_none() {
            let ip = client_ip(peer.ip(), &headers, &state.settings.trusted_proxies);
            if let Some(d) = state.subscribe_limits.take(Subject::Addr(ip)).await
                && let Some(retry_after_secs) = d.retry_after_secs
            {
                return Err(ApiError::RateLimited { retry_after_secs });
            }
        }
        let verified =
            sub.kind != ChannelKind::Email || (caller.is_some() && sub.skip_confirmation);
        let to = subscribers::Recipient {
            kind: sub.kind,
            target: &sub.target,
            lang: &sub.lang,
            viewer,
        };
        // An operator's is audited with it; a visitor's is bookkeeping.
        let made = match &caller {
            Some(c) => {
                Some(subscribers::add(&state.db, &c.audit, page, to, follows, verified).await?)
            }
            None => {
                subscribers::subscribe(&state.db, page, to, follows, verified).await?;
                None
            }
        };
        Ok((made, page, sub.kind, sub.incident_id))
    }
    .await;
    match result {
        Ok((Some(s), ..)) => created(format!("/api/subscribers/{}", s.id), s),
        Ok((None, page, kind, incident)) => {
            let lang = form.unwrap_or(Lang::En);
            let (title, message) = match kind {
                ChannelKind::Email => ("notice.inbox_title", "notice.inbox"),
                _ => ("notice.subscribed_title", "notice.subscribed"),
            };
            let message = lang.t(message);
            if form.is_some() {
                let slug = pages::get(&state.db, page)
                    .await
                    .map(|p| p.slug)
                    .unwrap_or_default();
                let back = match incident {
                    Some(i) => format!("/s/{slug}/incidents/{i}?lang={}", lang.code()),
                    None => format!("/s/{slug}?lang={}", lang.code()),
                };
                return Html(notice_page(
                    lang,
                    lang.t(title),
                    message,
                    Some((&back, lang.t("notice.back"))),
                    None,
                ))
                .into_response();
            }
            (
                StatusCode::ACCEPTED,
                data(Accepted {
                    message: message.into(),
                }),
            )
                .into_response()
        }
        Err(e) => e.answer(form),
    }
}
