//! `POST /api/verify-page-password`: opens a private page for a visitor who
//! knows its password, with a signed HttpOnly cookie (see `page_gate`).
//! Takes JSON (`{"slug", "password"}`: 200 or a problem) or the page's HTML
//! form (then answers with a redirect back to the page, so it works without
//! JavaScript). Wrong passwords are throttled by the guard (`crate::guard`):
//! 10 free failures per page and address, 100 per page, 50 per address.

use crate::error::ApiError;
use crate::extract::FormOrJson;
use crate::guard::Guard;
use crate::openapi::{BodyErrors, Throttled};
use crate::page_gate;
use crate::public_reads::visible_page;
use crate::respond::{Data, data};
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use upstate_core::Timestamp;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(verify))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct VerifyInput {
    /// The page's slug.
    #[schema(schema_with = upstate_core::schema::slug, required)]
    slug: Option<String>,
    #[schema(schema_with = upstate_core::schema::secret, required)]
    password: Option<String>,
    /// Form posts only: where to go back to (a path of this page).
    #[schema(ignore)]
    next: Option<String>,
    #[schema(ignore)]
    lang: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Opened {
    slug: String,
    /// When the cookie stops opening the page.
    expires_at: Timestamp,
}

#[utoipa::path(post, path = "/api/verify-page-password", tag = "public",
    operation_id = "verifyPagePassword",
    summary = "Open a private page with its password (sets an HttpOnly cookie for that page)",
    request_body = VerifyInput,
    responses((status = 200, body = Data<Opened>), (status = 401, description = "Wrong password", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 403, description = "The client's address is outside the page's networks (refused before the password is tried)", body = crate::openapi::Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such public page, or the page has no password", body = crate::openapi::Problem, content_type = "application/problem+json"),
        Throttled, BodyErrors))]
async fn verify(
    State(state): State<AppState>,
    guard: Guard,
    visitor: Visitor,
    FormOrJson(input, is_form): FormOrJson<VerifyInput>,
) -> Response {
    let slug = input.slug.clone().unwrap_or_default();
    // Forms go back to where they came from: a path of this page, never elsewhere.
    let back = input
        .next
        .as_deref()
        .filter(|n| n.starts_with(&format!("/s/{slug}")) || *n == "/" || n.starts_with("/?"))
        .unwrap_or("/")
        .split(['?', '#'])
        .next()
        .unwrap_or("/")
        .to_string();
    let back = if back == "/" && !slug.is_empty() && input.next.is_none() {
        format!("/s/{slug}")
    } else {
        back
    };
    let lang = input
        .lang
        .as_deref()
        .filter(|l| l.len() <= 5 && l.chars().all(|c| c.is_ascii_alphabetic()));
    let redirect = |error: Option<&str>| {
        let mut query: Vec<String> = lang.map(|l| format!("lang={l}")).into_iter().collect();
        query.extend(error.map(|e| format!("error={e}")));
        let to = if query.is_empty() {
            back.clone()
        } else {
            format!("{back}?{}", query.join("&"))
        };
        let mut res = StatusCode::SEE_OTHER.into_response();
        res.headers_mut().insert(
            header::LOCATION,
            HeaderValue::from_str(&to).unwrap_or(HeaderValue::from_static("/")),
        );
        res
    };
    let mut errors = upstate_core::FieldErrors::new();
    if slug.is_empty() {
        errors.push("slug", "is required");
    }
    let password = input.password.unwrap_or_default();
    if password.is_empty() {
        errors.push("password", "is required");
    }
    if let Err(e) = errors.into_result() {
        return if is_form {
            redirect(Some("wrong"))
        } else {
            ApiError::Validation(e).into_response()
        };
    }
    let snap = match visible_page(&state, &slug).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = page_gate::within_networks(&snap.data, &visitor) {
        return e.into_response();
    }
    let Some(hash) = snap
        .data
        .password_hash
        .clone()
        .filter(|_| snap.data.gated())
    else {
        return ApiError::NotFound(format!("status page {slug:?} has no password")).into_response();
    };
    match guard
        .page_password(snap.page_id, hash.clone(), password)
        .await
    {
        Ok(true) => {}
        Err(ApiError::RateLimited { retry_after_secs }) if is_form => {
            let mut res = redirect(Some("throttled"));
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            return res;
        }
        Err(e) => return e.into_response(),
        Ok(false) if is_form => return redirect(Some("wrong")),
        Ok(false) => {
            return ApiError::Unauthorized("wrong password for this page".into()).into_response();
        }
    }
    let (cookie, expires_at) =
        page_gate::set_cookie(snap.page_id, &hash, state.settings.secure_cookies);
    let mut res = if is_form {
        redirect(None)
    } else {
        data(Opened { slug, expires_at })
    };
    res.headers_mut().insert(header::SET_COOKIE, cookie);
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
