//! How public reads are answered, for every family that serves them (the
//! JSON API, Atlassian's, feeds, embeds, the HTML page): the snapshot of a
//! page the request may see, bodies in the best accepted encoding with their
//! ETag (304 when current), CORS for any origin, and the per-address limit
//! of each route.

use crate::accept::weighted;
use crate::client_ip::client_ip;
use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::key_auth::rate_headers;
use crate::page_gate;
use crate::rate_limit::{Limits, Subject};
use crate::snapshot::{Body, Encoding, Snapshot};
use crate::state::AppState;
use crate::visitor::Visitor;
use axum::extract::{ConnectInfo, Request, State};
use axum::handler::HandlerWithoutStateExt;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;
use tower_http::cors::{Any, CorsLayer};
use upstate_core::*;
use upstate_store::public::PageData;
use utoipa_axum::router::UtoipaMethodRouter;

pub const CACHE_CONTROL: &str = "public, max-age=30";

/// Requests per minute and client address for each public route.
#[derive(Debug, Clone)]
pub struct PublicLimits {
    pub summary: u32,
    pub components: u32,
    pub incidents: u32,
    pub maintenance: u32,
    pub uptime: u32,
    pub page: u32,
}

impl Default for PublicLimits {
    fn default() -> Self {
        PublicLimits {
            summary: 100,
            components: 60,
            incidents: 30,
            maintenance: 30,
            uptime: 30,
            page: 60,
        }
    }
}

/// Adds the per-address limit to a public route (none at all when the limit
/// is 0: a CDN origin, a benchmark) and answers its CORS preflights.
///
/// tower-http's CORS layer wraps only the OPTIONS method, after the limit, so
/// preflights are not counted. On GET, CORS is two constant headers
/// (`open_cors`); a CORS layer around every GET cost about a tenth of the
/// throughput (docs/performance.md).
pub(crate) fn limited(
    state: &AppState,
    (schemas, paths, route): UtoipaMethodRouter<AppState>,
    per_minute: u32,
) -> UtoipaMethodRouter<AppState> {
    let name = paths.paths.keys().next().cloned().unwrap_or_default();
    (schemas, paths, limit_route(state, route, per_minute, &name))
}

/// `limited` for a route outside the OpenAPI document (the HTML pages).
pub(crate) fn limit_route(
    state: &AppState,
    route: MethodRouter<AppState>,
    per_minute: u32,
    // Its own count in Redis: the route's path.
    name: &str,
) -> MethodRouter<AppState> {
    let route = if per_minute == 0 {
        route
    } else {
        let limits = Limits::new(per_minute, 0)
            .shared(&state.shared_limits, name)
            .swept();
        if let Ok(mut all) = state.public_limiters.lock() {
            all.push(Arc::downgrade(&limits));
        }
        route.route_layer(from_fn_with_state(
            (state.clone(), limits),
            limit_by_address,
        ))
    };
    let preflight = cors_layer().layer((|| async { StatusCode::NO_CONTENT }).into_service());
    route.options_service(preflight)
}

const EXPOSED: &str =
    "etag, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset";

fn cors_layer() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::HEAD, Method::OPTIONS])
        .allow_headers(Any)
        .max_age(Duration::from_secs(86_400))
}

/// What CORS asks of a simple GET: any origin may read it, and these headers.
fn open_cors(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED),
    );
    res
}

/// A public answer: the body, or the problem, readable from any origin.
pub(crate) fn public(result: Result<Response, ApiError>) -> Response {
    open_cors(result.unwrap_or_else(IntoResponse::into_response))
}

async fn limit_by_address(
    State((state, limits)): State<(AppState, Arc<Limits>)>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    // The static copy asks for every page at once, from inside.
    if req
        .extensions()
        .get::<crate::static_copy::StaticCopy>()
        .is_some()
    {
        return next.run(req).await;
    }
    let ip = client_ip(peer.ip(), req.headers(), &state.settings.trusted_proxies);
    let decision = limits.take(Subject::Addr(ip)).await;
    let mut res = match decision.and_then(|d| d.retry_after_secs) {
        Some(retry_after_secs) => {
            open_cors(ApiError::RateLimited { retry_after_secs }.into_response())
        }
        None => next.run(req).await,
    };
    if let Some(d) = decision {
        rate_headers(&mut res, &d);
    }
    res
}

fn encoding(headers: &HeaderMap) -> Encoding {
    let accepted = |name: &str| {
        weighted(headers, header::ACCEPT_ENCODING)
            .any(|(t, q)| t.eq_ignore_ascii_case(name) && q > 0.0)
    };
    if accepted("br") {
        Encoding::Brotli
    } else if accepted("gzip") {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

/// The most headers a public answer carries.
const ANSWER_HEADERS: usize = 20;

/// A 200 with the body in the best accepted encoding, or a 304 when the
/// client already has it.
pub(crate) fn serve(headers: &HeaderMap, body: &Body) -> Response {
    let enc = encoding(headers);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| body.matches(v));
    let mut res = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = body.bytes(enc).into_response();
        // Room for every header a public answer gets (these, CORS, the
        // page's security headers, rate limits, HSTS) at once: grown one
        // insert at a time, the map was reallocated twice per request.
        r.headers_mut().reserve(ANSWER_HEADERS);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(body.content_type),
        );
        match enc {
            Encoding::Gzip => {
                r.headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            Encoding::Brotli => {
                r.headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
            }
            Encoding::Identity => {}
        }
        r
    };
    let h = res.headers_mut();
    h.insert(header::ETAG, body.etag(enc).clone());
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

/// `serve` for a body of a page: a guarded page's bodies (seen with its
/// password cookie, or from its networks) must stay out of shared caches.
pub(crate) fn serve_page(snap: &Snapshot, headers: &HeaderMap, body: &Body) -> Response {
    let mut res = serve(headers, body);
    if snap.data.guarded() {
        let h = res.headers_mut();
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, no-cache"),
        );
        h.insert(
            header::VARY,
            HeaderValue::from_static("Accept-Encoding, Cookie"),
        );
    }
    res
}

/// Serves the body a route always builds the same way from a page's snapshot.
pub(crate) async fn fixed(
    state: &AppState,
    slug: &str,
    visitor: &Visitor,
    key: &str,
    make: impl FnOnce(&PageData) -> Result<Body, ApiError>,
) -> Response {
    public(
        async {
            let snap = page(state, slug, visitor).await?;
            let body = snap.body(key, make)?;
            Ok::<_, ApiError>(serve_page(&snap, visitor, &body))
        }
        .await,
    )
}

/// The snapshot of a page this request may read: public pages, and private
/// ones with a password when the request carries the page's cookie; either
/// only from its networks when it has some.
pub(crate) async fn page(
    state: &AppState,
    slug: &str,
    visitor: &Visitor,
) -> Result<Arc<Snapshot>, ApiError> {
    let snap = visible_page(state, slug).await?;
    admitted(&snap, visitor)
}

/// The page as this visitor may see it, or the gate's refusal (a password,
/// a network, a viewer's sign-in). Also asked again by an open event stream
/// at every change, so one opened before the page was closed to its visitor
/// ends then.
pub(crate) fn admitted(snap: &Arc<Snapshot>, visitor: &Visitor) -> Result<Arc<Snapshot>, ApiError> {
    match page_gate::refusal(page_gate::check(&snap.data, visitor), &snap.data, visitor) {
        Some(refused) => Err(refused),
        None => Ok(seen_by(snap, visitor)),
    }
}

/// The page as this visitor may see it: without the components of
/// audience groups they are not in (`upstate_core::audience`). One view per
/// set of groups, kept with the snapshot.
pub(crate) fn seen_by(snap: &Arc<Snapshot>, visitor: &Visitor) -> Arc<Snapshot> {
    let d = &snap.data;
    if d.audiences.is_empty() {
        return snap.clone();
    }
    let email = page_gate::viewer_of(d, visitor)
        .and_then(|id| d.viewer_keys.iter().find(|k| k.id == id))
        .map(|k| k.email.as_str());
    let groups = upstate_core::audience::groups_of(&d.audiences, email);
    let key = groups
        .iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",");
    snap.seen_without(
        &key,
        upstate_core::audience::hidden_from(&d.audiences, &groups),
    )
}

/// The page the `page` query parameter names, once it and the other
/// parameters (whose errors are in `errors`) are valid; all errors together.
pub(crate) async fn queried_page(
    state: &AppState,
    q: &QueryParams,
    visitor: &Visitor,
    mut errors: FieldErrors,
) -> Result<Arc<Snapshot>, ApiError> {
    let slug = q.page_slug(&mut errors);
    errors.into_result()?;
    page(state, &slug, visitor).await
}

/// The snapshot of a public or password-protected page, without the gate.
pub(crate) async fn visible_page(state: &AppState, slug: &str) -> Result<Arc<Snapshot>, ApiError> {
    state
        .snapshots
        .get(slug)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no public status page {slug:?}")))
}

/// Refuses with 404 when an operator turned the feature off (the switch
/// in `/api/features`): a feature that is off does not exist for visitors.
pub(crate) fn offered(on: bool, what: &str) -> Result<(), ApiError> {
    if on {
        Ok(())
    } else {
        Err(ApiError::NotFound(format!(
            "{what} are turned off on this install"
        )))
    }
}

/// The page a host name stands for: a page's custom domain, else the
/// configured default page.
pub(crate) async fn host_slug(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<String>, ApiError> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if let Some(slug) = state.snapshots.slug_for_host(host).await? {
        return Ok(Some(slug));
    }
    // The settings screen's default page wins over upstate.toml's.
    let settings = state.snapshots.settings().await?;
    Ok(settings
        .default_page
        .clone()
        .or_else(|| state.settings.default_page.clone()))
}
