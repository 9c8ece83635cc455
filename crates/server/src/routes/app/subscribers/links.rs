//! The links of a subscriber's messages: confirm, unsubscribe (RFC 8058 one-click POST; its GET only shows the button, since mail scanners open links), choose components. A browser gets a short page, anything else JSON.

use super::{Accepted, wants_html};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FormOrJson, QueryParams};
use crate::i18n::{self, Lang};
use crate::openapi::{BadQuery, BodyErrors, NotFound};
use crate::respond::{Data, data};
use crate::state::AppState;
use crate::views::notice_page;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use maud::html;
use serde::Serialize;
use upstate_core::notify::{ChannelKind, SubscriberScope};
use upstate_core::{FieldErrors, Id};
use upstate_store::subscribers;
use upstate_store::{StoreError, components, incidents, pages};

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
pub(super) async fn verify(
    State(state): State<AppState>,
    headers: HeaderMap,
    q: QueryParams,
) -> Response {
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
pub(super) async fn unsubscribe_form(
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
pub(super) async fn unsubscribe(
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
pub(super) async fn manage_form(
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
pub(super) struct Choose {
    /// The components to hear of (empty or absent: the whole page).
    component_ids: Option<Vec<serde_json::Value>>,
}

#[utoipa::path(post, path = "/api/subscribers/manage", tag = "subscribers", operation_id = "chooseComponents",
    summary = "Change which components a subscription tells of, by its token",
    params(("token" = String, Query, description = "From the message")),
    request_body = Choose,
    responses((status = 200, body = Data<OwnSubscription>), BodyErrors, NotFound))]
pub(super) async fn manage(
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
