//! Viewers' sign-in to a private page (docs/public-pages.md, "Viewers"):
//! `POST /api/viewer-sign-in` mails a link (single use, 15 minutes) to an
//! invited address or one of an allowed domain, answering the same whoever
//! asks; `GET /api/viewer-sign-in?token=` shows one button, and its
//! `POST /api/viewer-sign-in/confirm` takes the link, signs the viewer in
//! with a cookie for that page (`page_gate`) and sends them to it.

use crate::error::ApiError;
use crate::extract::{FormOrJson, QueryParams};
use crate::i18n::{Lang, Negotiate};
use crate::openapi::{BodyErrors, Throttled};
use crate::page_gate;
use crate::public_reads::{limited, visible_page};
use crate::respond::{Data, data};
use crate::state::AppState;
use crate::views::{self, View};
use crate::visitor::Visitor;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::access::PageAccess;
use upstate_core::values::Email;
use upstate_store::{pages, users::token_hash, viewers};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Requests per minute and client address: a person asks once or twice, an
/// office behind one address a few times more.
const ASKS_PER_MINUTE: u32 = 30;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(limited(state, routes!(ask, show), ASKS_PER_MINUTE))
        .routes(limited(state, routes!(confirm), ASKS_PER_MINUTE))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct AskInput {
    /// The page's slug.
    #[schema(schema_with = upstate_core::schema::slug, required)]
    slug: Option<String>,
    #[schema(required, format = "email")]
    email: Option<String>,
    /// Form posts only: where to go back to (a path of this page).
    #[schema(ignore)]
    next: Option<String>,
    #[schema(ignore)]
    lang: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Asked {
    message: String,
}

fn random_token() -> String {
    page_gate::new_secret()
}

fn see_other(to: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    res.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/")),
    );
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn lang_param(raw: Option<&str>) -> Option<&str> {
    raw.filter(|l| l.len() <= 5 && l.chars().all(|c| c.is_ascii_alphabetic()))
}

#[utoipa::path(post, path = "/api/viewer-sign-in", tag = "public",
    operation_id = "askViewerSignIn",
    summary = "Mail a sign-in link for a private page to a viewer (answered the same whoever asks)",
    description = "The link is sent when viewers open the page and the address is invited or of an allowed domain; it works once, within 15 minutes. \
        At most 3 links go to one address for one page in 15 minutes. Forms are answered with a redirect back to the page (`?sent=1`).",
    request_body = AskInput,
    responses((status = 202, body = Data<Asked>),
        (status = 303, description = "A form post: back to the page"),
        (status = 403, description = "The client's address is outside the page's networks", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such page, or viewers do not open it", body = crate::openapi::Problem, content_type = "application/problem+json"),
        Throttled, BodyErrors),
    security(()))]
async fn ask(
    State(state): State<AppState>,
    visitor: Visitor,
    FormOrJson(input, is_form): FormOrJson<AskInput>,
) -> Response {
    let slug = input.slug.clone().unwrap_or_default();
    let lang = lang_param(input.lang.as_deref());
    let result = async {
        let mut e = upstate_core::FieldErrors::new();
        if slug.is_empty() {
            e.push("slug", "is required");
        }
        let email = match input.email.as_deref().map(Email::parse) {
            Some(Ok(m)) => Some(m),
            Some(Err(why)) => {
                e.push("email", why);
                None
            }
            None => {
                e.push("email", "is required");
                None
            }
        };
        e.into_result()?;
        let email = email.ok_or_else(|| ApiError::validation("email", "is required"))?;
        let snap = visible_page(&state, &slug).await?;
        let d = &snap.data;
        if !d.access.viewers {
            return Err(ApiError::NotFound(format!(
                "status page {slug:?} has no viewers"
            )));
        }
        page_gate::within_networks(d, &visitor)?;
        if !state.sender.has_mailer() {
            return Err(ApiError::validation(
                "email",
                "this status page cannot send email (no SMTP server is configured)",
            ));
        }
        send_link(&state, &d.access, &d.page, &email, lang).await?;
        Ok(())
    }
    .await;
    match result {
        Err(e) => e.into_response(),
        Ok(()) if is_form => {
            let back = input
                .next
                .as_deref()
                .filter(|n| n.starts_with(&format!("/s/{slug}")) || *n == "/")
                .unwrap_or("/")
                .split(['?', '#'])
                .next()
                .unwrap_or("/")
                .to_string();
            let back = if back == "/" {
                format!("/s/{slug}")
            } else {
                back
            };
            let lang = lang.map(|l| format!("&lang={l}")).unwrap_or_default();
            see_other(&format!("{back}?sent=1{lang}"))
        }
        Ok(()) => {
            let mut res = data(Asked {
                message: "If this address may read the page, a sign-in link is on its way.".into(),
            });
            *res.status_mut() = StatusCode::ACCEPTED;
            res
        }
    }
}

/// Keeps and mails a link when `email` may come in; nothing otherwise (the
/// answer is the same, so nobody learns who may read the page).
async fn send_link(
    state: &AppState,
    access: &PageAccess,
    page: &upstate_core::StatusPage,
    email: &Email,
    lang: Option<&str>,
) -> Result<(), ApiError> {
    let listed = viewers::listed(&state.db, page.id, email.as_str()).await?;
    if !access.lets_in(email.as_str(), listed) {
        return Ok(());
    }
    let token = random_token();
    if !viewers::keep_link(&state.db, page.id, email.as_str(), &token_hash(&token)).await? {
        return Ok(());
    }
    let base = state.settings.public_url.trim_end_matches('/');
    let lang = lang.and_then(Lang::parse).unwrap_or(Lang::En);
    let url = format!(
        "{base}/api/viewer-sign-in?token={token}&lang={}",
        lang.code()
    );
    // Sent after the answer: how long the answer took must not say whether
    // the address may come in, and the mail server's round trip would.
    let (sender, to, page, now) = (
        state.sender.clone(),
        email.as_str().to_string(),
        page.clone(),
        state.db.clock.now(),
    );
    tokio::spawn(async move {
        let sent = sender.sign_in_link(&to, &page, lang, url, now).await;
        if !sent.delivered {
            tracing::warn!(page = page.id, error = ?sent.error, "a viewer's sign-in link was not sent");
        }
    });
    Ok(())
}

/// A stale or unknown link: said in the visitor's language.
fn expired(visitor: &Visitor, q: &QueryParams) -> Response {
    let lang = Lang::negotiate(q.get("lang"), visitor);
    let body = views::error_page(lang, 410, "");
    let mut res = (
        StatusCode::GONE,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response();
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

#[utoipa::path(get, path = "/api/viewer-sign-in", tag = "public",
    operation_id = "viewerSignInPage",
    summary = "The page a viewer's sign-in link opens: one button that signs in",
    params(("token" = String, Query, description = "The link's token")),
    responses((status = 200, description = "An HTML page", content_type = "text/html"),
        (status = 403, description = "The client's address is outside the page's networks", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 410, description = "The link was used or is older than 15 minutes", content_type = "text/html"),
        Throttled),
    security(()))]
async fn show(State(state): State<AppState>, visitor: Visitor, q: QueryParams) -> Response {
    let token = q.get("token").unwrap_or_default().to_string();
    let found = match viewers::peek_link(&state.db, &token_hash(&token)).await {
        Ok(f) => f,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let Some((page_id, _)) = found else {
        return expired(&visitor, &q);
    };
    let snap = match pages::get(&state.db, page_id).await {
        Ok(p) => match visible_page(&state, &p.slug).await {
            Ok(s) => s,
            Err(_) => return expired(&visitor, &q),
        },
        Err(_) => return expired(&visitor, &q),
    };
    if let Err(e) = page_gate::within_networks(&snap.data, &visitor) {
        return e.into_response();
    }
    let lang = Lang::negotiate_or(
        q.get("lang"),
        &visitor,
        snap.data.settings.default_language.as_deref(),
    );
    let view = View::new(
        &snap.data,
        lang,
        snap.version,
        "/api/viewer-sign-in".into(),
        state.db.clock.now(),
    );
    let mut res = (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        views::confirm_sign_in(&view, &token),
    )
        .into_response();
    crate::security_headers::html(res.headers_mut(), crate::security_headers::PAGE_CSP);
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The token rides in the query, as subscribers' links do: 256 random bits
/// no one guesses, behind the route's per-address limit.
#[derive(Deserialize, utoipa::ToSchema)]
pub struct ConfirmInput {
    /// The language to go on in.
    lang: Option<String>,
}

#[utoipa::path(post, path = "/api/viewer-sign-in/confirm", tag = "public",
    operation_id = "confirmViewerSignIn",
    summary = "Take a sign-in link: sets the viewer's cookie for the page and goes there",
    params(("token" = String, Query, description = "The link's token")),
    request_body(content = ConfirmInput, content_type = "application/x-www-form-urlencoded"),
    responses((status = 303, description = "Signed in: to the page (with the viewer's HttpOnly cookie)"),
        (status = 403, description = "The client's address is outside the page's networks: the link stays unused", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 410, description = "The link was used, is older than 15 minutes, or its address may no longer read the page", content_type = "text/html"),
        Throttled, BodyErrors),
    security(()))]
async fn confirm(
    State(state): State<AppState>,
    visitor: Visitor,
    q: QueryParams,
    FormOrJson(input, _): FormOrJson<ConfirmInput>,
) -> Response {
    let token = q.get("token").unwrap_or_default().to_string();
    let lang = lang_param(input.lang.as_deref()).map(str::to_string);
    let result = async {
        // Outside the page's networks the link stays unused (the person
        // may open it again from inside) and no cookie is set.
        if let Some((page_id, _)) = viewers::peek_link(&state.db, &token_hash(&token)).await? {
            let page = pages::get(&state.db, page_id).await?;
            if let Ok(snap) = visible_page(&state, &page.slug).await {
                page_gate::within_networks(&snap.data, &visitor)?;
            }
        }
        let Some((page_id, email)) = viewers::take_link(&state.db, &token_hash(&token)).await?
        else {
            return Ok(None);
        };
        let page = pages::get(&state.db, page_id).await?;
        let access = upstate_store::access::get(&state.db, page_id).await?;
        let listed = viewers::listed(&state.db, page_id, &email).await?;
        // Removed, or the domain no longer allowed, since the link went out.
        if page.is_public || !access.lets_in(&email, listed) {
            return Ok(None);
        }
        let (viewer, secret) = viewers::admit(&state.db, page_id, &email, &random_token()).await?;
        Ok::<_, ApiError>(Some((page_id, page.slug, viewer, secret)))
    }
    .await;
    match result {
        Err(e) => e.into_response(),
        Ok(None) => expired(&visitor, &q),
        Ok(Some((page_id, slug, viewer, secret))) => {
            let cookie = page_gate::set_viewer_cookie(
                page_id,
                viewer,
                &secret,
                state.settings.secure_cookies,
            );
            let lang = lang.map(|l| format!("?lang={l}")).unwrap_or_default();
            let mut res = see_other(&format!("/s/{slug}{lang}"));
            res.headers_mut().insert(header::SET_COOKIE, cookie);
            res
        }
    }
}
