//! A signed-in viewer's own links to a private page (`/api/viewer-links`):
//! the feeds, calendar, JSON and badge with their token, for apps that
//! cannot carry the cookie, and the button that resets them
//! (docs/public-pages.md, "Viewers").

use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::i18n::{Lang, Negotiate};
use crate::page_gate;
use crate::public_reads::{limited, visible_page};
use crate::state::AppState;
use crate::views::{self, View};
use crate::visitor::Visitor;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use upstate_core::audit::Actor;
use upstate_store::{AuditCtx, viewers};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Requests per minute and client address: a person opens it now and then.
const PER_MINUTE: u32 = 30;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(limited(state, routes!(show), PER_MINUTE))
        .routes(limited(state, routes!(reset), PER_MINUTE))
        .routes(limited(state, routes!(sign_out), PER_MINUTE))
}

/// The page and the viewer this browser is signed in as on it.
async fn signed_in(
    state: &AppState,
    q: &QueryParams,
    visitor: &Visitor,
) -> Result<(std::sync::Arc<crate::snapshot::Snapshot>, i64), ApiError> {
    let mut e = upstate_core::FieldErrors::new();
    let slug = q.page_slug(&mut e);
    e.into_result()?;
    let snap = visible_page(state, &slug).await?;
    if let Some(refused) =
        page_gate::refusal(page_gate::check(&snap.data, visitor), &snap.data, visitor)
    {
        return Err(refused);
    }
    let viewer = page_gate::signed_in_viewer(&snap.data, visitor).ok_or_else(|| {
        ApiError::Unauthorized(format!(
            "sign in as a viewer of {slug:?} first (POST /api/viewer-sign-in)"
        ))
    })?;
    Ok((snap, viewer))
}

fn html(body: String) -> Response {
    let mut res = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response();
    crate::security_headers::html(res.headers_mut(), crate::security_headers::PAGE_CSP);
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

#[utoipa::path(get, path = "/api/viewer-links", tag = "public",
    operation_id = "viewerLinks",
    summary = "A signed-in viewer's links to a private page, with their token (HTML)",
    params(("page" = String, Query, description = "The page's slug")),
    responses((status = 200, description = "An HTML page", content_type = "text/html"),
        (status = 401, description = "Not signed in as a viewer of the page", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 403, description = "The client's address is outside the page's networks", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such page", body = crate::openapi::Problem, content_type = "application/problem+json"),
        crate::openapi::BadQuery, crate::openapi::Throttled),
    security(()))]
async fn show(State(state): State<AppState>, visitor: Visitor, q: QueryParams) -> Response {
    let (snap, viewer) = match signed_in(&state, &q, &visitor).await {
        Ok(x) => x,
        Err(e) => return e.into_response(),
    };
    let d = &snap.data;
    let Some(secret) = page_gate::viewer_secret(d, viewer) else {
        return ApiError::Unauthorized("sign in again".into()).into_response();
    };
    let token = page_gate::viewer_token(secret, d.page.id, viewer);
    let base = state.settings.public_url.trim_end_matches('/');
    let slug = &d.page.slug;
    let lang = Lang::negotiate_or(
        q.get("lang"),
        &visitor,
        d.settings.default_language.as_deref(),
    );
    let mut links: Vec<(&str, String)> = Vec::new();
    if d.features.feeds {
        links.push((
            lang.t("nav.rss"),
            format!("{base}/api/feed/rss?page={slug}&token={token}"),
        ));
        links.push((
            lang.t("nav.atom"),
            format!("{base}/api/feed/rss?format=atom&page={slug}&token={token}"),
        ));
    }
    if d.features.calendar {
        links.push((
            lang.t("nav.calendar"),
            format!("{base}/api/calendar?page={slug}&token={token}"),
        ));
    }
    links.push((
        lang.t("viewer.link_json"),
        format!("{base}/api/public/status/{slug}?token={token}"),
    ));
    links.push((
        lang.t("viewer.link_v2"),
        format!("{base}/s/{slug}/api/v2/summary.json?token={token}"),
    ));
    links.push((
        lang.t("viewer.link_badge"),
        format!("{base}/api/badge?page={slug}&token={token}"),
    ));
    let view = View::new(
        d,
        lang,
        snap.version,
        "/api/viewer-links".into(),
        state.db.clock.now(),
    );
    html(views::viewer_links(&view, &links, q.get("reset").is_some()))
}

#[utoipa::path(post, path = "/api/viewer-links/reset", tag = "public",
    operation_id = "resetViewerLinks",
    summary = "A viewer resets their own links: old tokens stop working; this browser stays signed in",
    params(("page" = String, Query, description = "The page's slug")),
    responses((status = 303, description = "Back to the links, with a new cookie"),
        (status = 401, description = "Not signed in as a viewer of the page", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 403, description = "The client's address is outside the page's networks", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such page", body = crate::openapi::Problem, content_type = "application/problem+json"),
        crate::openapi::BadQuery, crate::openapi::Throttled),
    security(()))]
async fn reset(State(state): State<AppState>, visitor: Visitor, q: QueryParams) -> Response {
    let result = async {
        let (snap, viewer) = signed_in(&state, &q, &visitor).await?;
        let page = snap.page_id;
        let secret = page_gate::new_secret();
        let ctx = AuditCtx::of(Actor::system("viewer links"));
        viewers::reset(&state.db, &ctx, page, viewer, &secret).await?;
        Ok::<_, ApiError>((snap.data.page.slug.clone(), page, viewer, secret))
    }
    .await;
    match result {
        Err(e) => e.into_response(),
        Ok((slug, page, viewer, secret)) => {
            let cookie =
                page_gate::set_viewer_cookie(page, viewer, &secret, state.settings.secure_cookies);
            let mut res = StatusCode::SEE_OTHER.into_response();
            let to = format!("/api/viewer-links?page={slug}&reset=1");
            res.headers_mut().insert(
                header::LOCATION,
                HeaderValue::from_str(&to).unwrap_or(HeaderValue::from_static("/")),
            );
            res.headers_mut().insert(header::SET_COOKIE, cookie);
            res
        }
    }
}

#[utoipa::path(post, path = "/api/viewer-sign-out", tag = "public",
    operation_id = "viewerSignOut",
    summary = "A viewer signs this browser out of a private page (their other browsers and tokens stay; resetting the links ends those)",
    params(("page" = String, Query, description = "The page's slug")),
    responses((status = 303, description = "To the page's gate, the viewer's cookie removed"),
        (status = 404, description = "No such page", body = crate::openapi::Problem, content_type = "application/problem+json"),
        crate::openapi::BadQuery, crate::openapi::Throttled),
    security(()))]
async fn sign_out(State(state): State<AppState>, q: QueryParams) -> Response {
    let mut e = upstate_core::FieldErrors::new();
    let slug = q.page_slug(&mut e);
    if let Err(e) = e.into_result() {
        return ApiError::from(e).into_response();
    }
    let snap = match visible_page(&state, &slug).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let gone = crate::session::cookie_header(
        page_gate::viewer_cookie_name(snap.page_id),
        String::new(),
        state.settings.secure_cookies,
        cookie::time::Duration::ZERO,
    );
    let mut res = StatusCode::SEE_OTHER.into_response();
    let to = format!("/s/{slug}");
    res.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(&to).unwrap_or(HeaderValue::from_static("/")),
    );
    res.headers_mut().insert(header::SET_COOKIE, gone);
    res
}
