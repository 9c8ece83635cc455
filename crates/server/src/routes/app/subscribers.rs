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

use crate::caller::Caller;
use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::extract::{FormOrJson, PathId, QueryParams};
use crate::i18n::{self, Lang};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors, Throttled};
use crate::rate_limit::Subject;
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use crate::views::notice_page;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use maud::html;
use serde::Serialize;
use std::net::SocketAddr;
use upstate_core::notify::{
    ChannelKind, Delivery, PageRef, SubscribeInput, Subscriber, SubscriberScope,
};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id, IncidentStatus};
use upstate_store::subscribers;
use upstate_store::{StoreError, components, deliveries, incidents, pages};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Requests per minute and client address on the routes a visitor's link
/// token opens: the tokens are 192 bits, so this only keeps a guesser from
/// costing us anything, while a person clicking links is never near it.
const LINKS_PER_MINUTE: u32 = 60;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let links = |r| crate::public_reads::limited(state, r, LINKS_PER_MINUTE);
    OpenApiRouter::new()
        .routes(routes!(list, subscribe))
        .routes(links(routes!(verify)))
        .routes(links(routes!(unsubscribe_form, unsubscribe)))
        .routes(links(routes!(manage_form, manage)))
        .routes(routes!(remove))
        .routes(routes!(history))
        .routes(routes!(import))
}

/// A CSV list of subscribers for one page.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ImportInput {
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
async fn import(
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
    let known: Vec<Id> = components::list(&state.db, Some(page), None)
        .await?
        .into_iter()
        .map(|c| c.id)
        .collect();
    let mut e = FieldErrors::new();
    for (i, r) in rows.iter().enumerate() {
        if let Some(bad) = r.component_ids.iter().find(|c| !known.contains(c)) {
            e.push(
                "csv",
                format!("row {}: {bad} is no component of this page", i + 1),
            );
        }
        if r.kind == ChannelKind::Email && !state.sender.has_mailer() {
            e.push(
                "csv",
                format!(
                    "row {}: this status page cannot send email (no SMTP server is configured)",
                    i + 1
                ),
            );
            break;
        }
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

#[utoipa::path(get, path = "/api/subscribers", tag = "subscribers", operation_id = "listSubscribers",
    summary = "Subscribers, newest first (needs SETTINGS_WRITE)",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's"),
        ("q" = Option<String>, Query, description = "Address or URL contains"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 100")),
    responses((status = 200, body = Data<Vec<Subscriber>>), SessionErrors, BadQuery),
    security(("session" = []), ("api_key" = [])))]
async fn list(
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

#[utoipa::path(post, path = "/api/subscribers", tag = "subscribers", operation_id = "subscribe",
    summary = "Subscribe to a page: visitors (no sign-in; email gets a confirmation link valid 24 h) or operators (SETTINGS_WRITE)",
    description = "A visitor's request is answered 202 with the same message whatever the address's state, and is limited per client address. \
        An operator's (API key, or session with CSRF token) answers 201 with the subscriber; `skipConfirmation` adds an email subscriber without the opt-in. \
        HTML forms are answered with a redirect back to the page.",
    request_body = SubscribeInput,
    responses((status = 202, body = Data<Accepted>), (status = 201, body = Data<Subscriber>), BodyErrors, Throttled,
        (status = 401, description = "A session cookie or key was sent and is not valid (an operator's request)", content_type = "application/problem+json", body = crate::openapi::Problem),
        (status = 403, description = "The operator lacks SETTINGS_WRITE, or the CSRF token is missing", content_type = "application/problem+json", body = crate::openapi::Problem)),
    security((), ("session" = []), ("api_key" = [])))]
async fn subscribe(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
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
        if let Some(id) = sub.incident_id {
            match incidents::get(&state.db, id).await {
                Ok(i) if i.status_page_id == page && i.status == IncidentStatus::Resolved => {
                    return Err(FieldErrors::single(
                        "incidentId",
                        "is resolved: no more updates will come (subscribe to the page instead)",
                    )
                    .into());
                }
                Ok(i) if i.status_page_id == page => {}
                Ok(_) | Err(StoreError::NotFound(_)) => {
                    return Err(FieldErrors::single(
                        "incidentId",
                        format!("{id} is no incident of this page"),
                    )
                    .into());
                }
                Err(e) => return Err(e.into()),
            }
        }
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
            if let Some(d) = state.subscribe_limits.check(Subject::Addr(ip))
                && let Some(retry_after_secs) = d.retry_after_secs
            {
                return Err(ApiError::RateLimited { retry_after_secs });
            }
        }
        let verified =
            sub.kind != ChannelKind::Email || (caller.is_some() && sub.skip_confirmation);
        let follows = match sub.incident_id {
            Some(i) => subscribers::Follows::Incident(i),
            None => subscribers::Follows::Page(&sub.component_ids),
        };
        // An operator's is audited with it; a visitor's is bookkeeping.
        let made = match &caller {
            Some(c) => Some(
                subscribers::add(
                    &state.db,
                    &c.audit,
                    page,
                    sub.kind,
                    &sub.target,
                    follows,
                    verified,
                )
                .await?,
            ),
            None => {
                subscribers::subscribe(&state.db, page, sub.kind, &sub.target, follows, verified)
                    .await?;
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

/// The language of a page opened from a message's link, or None when
/// the client asked for JSON.
async fn link_lang(state: &AppState, q: &QueryParams, headers: &HeaderMap) -> Option<Lang> {
    i18n::of_form(&state.db, wants_html(headers), q.get("lang"), headers).await
}

#[utoipa::path(get, path = "/api/subscribers/verify", tag = "subscribers", operation_id = "verifySubscriber",
    summary = "Confirm an email subscription (the link of its confirmation message)",
    description = "A browser gets a short page saying so; other clients JSON. An unknown or expired link is 404.",
    params(("token" = String, Query, description = "From the confirmation link")),
    responses((status = 200, body = Data<Accepted>), NotFound, BadQuery))]
async fn verify(State(state): State<AppState>, headers: HeaderMap, q: QueryParams) -> Response {
    let html = link_lang(&state, &q, &headers).await;
    let lang = html.unwrap_or(Lang::En);
    let token = q.get("token").unwrap_or("").to_string();
    match subscribers::verify(&state.db, &token, state.db.clock.now()).await {
        Ok(page) => {
            let p = pages::get(&state.db, page).await.ok();
            let name = p.as_ref().map_or("…", |p| p.name.as_str());
            let message = lang.t("notice.confirmed").replace("{page}", name);
            if html.is_some() {
                let back = p.map_or_else(
                    || "/".into(),
                    |p| format!("/s/{}?lang={}", p.slug, lang.code()),
                );
                return Html(notice_page(
                    lang,
                    lang.t("notice.confirmed_title"),
                    &message,
                    Some((&back, lang.t("notice.back"))),
                    None,
                ))
                .into_response();
            }
            data(Accepted { message })
        }
        Err(_) if html.is_some() => (
            StatusCode::NOT_FOUND,
            Html(notice_page(
                lang,
                lang.t("notice.bad_link_title"),
                lang.t("notice.expired"),
                None,
                None,
            )),
        )
            .into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

#[utoipa::path(get, path = "/api/subscribers/unsubscribe", tag = "subscribers", operation_id = "unsubscribeForm",
    summary = "The unsubscribe button of a message's link (opening the link changes nothing)",
    params(("token" = String, Query, description = "From the message")),
    responses((status = 200, description = "A page with the button", content_type = "text/html", body = String),
        (status = 400, description = "A page saying the link is missing its token; a problem document for a request no route reads (a NUL in the query)",
            content((String = "text/html"), (crate::openapi::Problem = "application/problem+json")))))]
async fn unsubscribe_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: QueryParams,
) -> Response {
    let lang = i18n::of_visitor(&state.db, q.get("lang"), &headers).await;
    let Some(token) = q.get("token") else {
        // A link cut short: a button that cannot work would only mislead.
        return ApiError::BadRequest(
            "this link is missing its token: open it from the message again".into(),
        )
        .answer(Some(lang));
    };
    let form = html! {
        form method="post" action=(own_link("unsubscribe", token, lang)) {
            button type="submit" { (lang.t("msg.unsubscribe")) }
        }
    };
    Html(notice_page(
        lang,
        lang.t("msg.unsubscribe"),
        lang.t("notice.unsubscribe_ask"),
        None,
        Some(form),
    ))
    .into_response()
}

/// A link of the subscriber's own (`unsubscribe`, `manage`) that keeps the
/// language of the page it is on.
fn own_link(what: &str, token: &str, lang: Lang) -> String {
    let token: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    format!("/api/subscribers/{what}?token={token}&lang={}", lang.code())
}

#[utoipa::path(post, path = "/api/subscribers/unsubscribe", tag = "subscribers", operation_id = "unsubscribe",
    summary = "End a subscription by its token (RFC 8058 one-click unsubscribe)",
    params(("token" = String, Query, description = "From the message's List-Unsubscribe link")),
    responses((status = 200, body = Data<Accepted>), NotFound))]
async fn unsubscribe(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: QueryParams,
) -> Response {
    let token = q.get("token").unwrap_or("").to_string();
    match subscribers::unsubscribe(&state.db, &token).await {
        Ok(_) if wants_html(&headers) => {
            let lang = i18n::of_visitor(&state.db, q.get("lang"), &headers).await;
            Html(notice_page(
                lang,
                lang.t("notice.unsubscribed_title"),
                lang.t("notice.unsubscribed"),
                None,
                None,
            ))
            .into_response()
        }
        Ok(_) => data(Accepted {
            message: "Unsubscribed.".into(),
        }),
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// A subscription as its owner sees it behind the link of their messages.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct OwnSubscription {
    target: String,
    kind: ChannelKind,
    status_page_id: Id,
    /// The components chosen (empty: the whole page).
    component_ids: Vec<Id>,
    /// The page's components to choose from.
    components: Vec<Choice>,
    /// The titles of the incidents followed, when only those are heard of
    /// (a choice of components then subscribes to the page instead).
    following: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Choice {
    id: Id,
    name: String,
}

async fn own(state: &AppState, token: &str) -> ApiResult<OwnSubscription> {
    let s = subscribers::by_token(&state.db, token).await?;
    let components = components::list(&state.db, Some(s.status_page_id), None)
        .await?
        .into_iter()
        .map(|c| Choice {
            id: c.id,
            name: c.name,
        })
        .collect();
    let mut following = Vec::new();
    if s.scope == SubscriberScope::Incidents {
        for id in &s.incident_ids {
            match incidents::get(&state.db, *id).await {
                Ok(i) => following.push(i.title),
                Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(OwnSubscription {
        target: s.target,
        kind: s.kind,
        status_page_id: s.status_page_id,
        component_ids: s.component_ids,
        components,
        following,
    })
}

#[utoipa::path(get, path = "/api/subscribers/manage", tag = "subscribers", operation_id = "ownSubscription",
    summary = "A subscriber's own subscription, by the token of their messages' link",
    description = "A browser gets a page to choose components (or leave); other clients JSON. An unknown token is 404.",
    params(("token" = String, Query, description = "From the message")),
    responses((status = 200, body = Data<OwnSubscription>), NotFound))]
async fn manage_form(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: QueryParams,
) -> Response {
    let token = q.get("token").unwrap_or("").to_string();
    let found = own(&state, &token).await;
    let html = link_lang(&state, &q, &headers).await;
    let lang = html.unwrap_or(Lang::En);
    match found {
        Ok(o) if html.is_some() => {
            let form = html! {
                @if !o.following.is_empty() {
                    p { (lang.t("notice.following").replace("{incidents}", &o.following.join(", "))) }
                }
                form method="post" action=(own_link("manage", &token, lang)) {
                    fieldset {
                        legend { (lang.t("notice.tell_me")) }
                        input type="hidden" name="componentIds[]" value="";
                        ul.choices {
                            @for c in &o.components {
                                li { label { input type="checkbox" name="componentIds[]" value=(c.id) checked[o.component_ids.contains(&c.id)]; " " (c.name) } }
                            }
                        }
                        p.meta { (lang.t("notice.none_ticked")) }
                    }
                    button type="submit" { (lang.t("notice.save")) }
                }
                form method="post" action=(own_link("unsubscribe", &token, lang)) {
                    button type="submit" { (lang.t("msg.unsubscribe")) }
                }
            };
            Html(notice_page(
                lang,
                lang.t("notice.manage_title"),
                &lang.t("notice.manage_to").replace("{target}", &o.target),
                None,
                Some(form),
            ))
            .into_response()
        }
        Ok(o) => data(o),
        Err(_) if html.is_some() => (
            StatusCode::NOT_FOUND,
            Html(notice_page(
                lang,
                lang.t("notice.bad_link_title"),
                lang.t("notice.ended"),
                None,
                None,
            )),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

/// A subscriber's choice of components.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Choose {
    /// The components to hear of (empty or absent: the whole page).
    component_ids: Option<Vec<serde_json::Value>>,
}

#[utoipa::path(post, path = "/api/subscribers/manage", tag = "subscribers", operation_id = "chooseComponents",
    summary = "Change which components a subscription tells of, by its token",
    params(("token" = String, Query, description = "From the message")),
    request_body = Choose,
    responses((status = 200, body = Data<OwnSubscription>), BodyErrors, NotFound))]
async fn manage(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: QueryParams,
    FormOrJson(input, is_form): FormOrJson<Choose>,
) -> Response {
    let form = i18n::of_form(&state.db, is_form, q.get("lang"), &headers).await;
    let token = q.get("token").unwrap_or("").to_string();
    let result = async {
        let current = own(&state, &token).await?;
        let mut ids = Vec::new();
        for v in input.component_ids.unwrap_or_default() {
            match v {
                serde_json::Value::String(s) if s.is_empty() => {}
                serde_json::Value::Number(n)
                    if n.as_i64()
                        .is_some_and(|id| current.components.iter().any(|c| c.id == id)) =>
                {
                    ids.push(n.as_i64().unwrap_or_default());
                }
                other => {
                    return Err(ApiError::from(FieldErrors::single(
                        "componentIds",
                        format!("{other} is no component of this page"),
                    )));
                }
            }
        }
        let s = subscribers::by_token(&state.db, &token).await?;
        subscribers::choose(&state.db, s.id, &ids).await?;
        own(&state, &token).await
    }
    .await;
    match result {
        Ok(_) if form.is_some() => {
            let lang = form.unwrap_or(Lang::En);
            Html(notice_page(
                lang,
                lang.t("notice.saved_title"),
                lang.t("notice.saved"),
                None,
                None,
            ))
            .into_response()
        }
        Ok(o) => data(o),
        Err(e) => e.answer(form),
    }
}

#[utoipa::path(delete, path = "/api/subscribers/{id}", tag = "subscribers", operation_id = "deleteSubscriber",
    summary = "Remove a subscriber (needs SETTINGS_WRITE); audited", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
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
async fn history(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    subscribers::get(&state.db, id).await?;
    Ok(data(deliveries::of_subscriber(&state.db, id, 100).await?))
}
