//! The OpenAPI 3.1 document, generated from the handlers' `#[utoipa::path]`
//! annotations as the routers register them (utoipa-axum), so a route cannot
//! be served without being documented. Served at `/api/openapi.json`, with a
//! Swagger UI reference at `/api/docs` from assets vendored into the binary.

use axum::Router;
use serde::Serialize;
use upstate_core::FieldError;
use utoipa::openapi::OpenApi;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityRequirement, SecurityScheme,
};
use utoipa_swagger_ui::SwaggerUi;

/// An RFC 9457 problem, as every error is sent (`application/problem+json`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URN naming the kind of problem, e.g. `urn:upstate:problem:validation`.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// For validation failures (422): every bad field.
    pub errors: Option<Vec<FieldError>>,
}

/// Errors any keyed route may answer.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum KeyErrors {
    #[response(
        status = 401,
        description = "Missing, unknown, revoked or expired API key",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    #[response(
        status = 403,
        description = "The key lacks the scope this method needs",
        content_type = "application/problem+json"
    )]
    Forbidden(Problem),
    #[response(
        status = 429,
        description = "Rate limit exceeded; see Retry-After",
        content_type = "application/problem+json"
    )]
    RateLimited(Problem),
}

/// Errors of routes that take a JSON body.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum BodyErrors {
    #[response(
        status = 400,
        description = "Malformed JSON",
        content_type = "application/problem+json"
    )]
    Malformed(Problem),
    #[response(
        status = 413,
        description = "Body over the size limit",
        content_type = "application/problem+json"
    )]
    TooLarge(Problem),
    #[response(
        status = 415,
        description = "Body is not JSON",
        content_type = "application/problem+json"
    )]
    NotJson(Problem),
    #[response(
        status = 422,
        description = "Invalid fields, all named in `errors`",
        content_type = "application/problem+json"
    )]
    Invalid(Problem),
}

/// The 404 of routes that address one resource (or a public page).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum NotFound {
    #[response(
        status = 404,
        description = "No such resource",
        content_type = "application/problem+json"
    )]
    NotFound(Problem),
}

/// The 409 of routes that can refuse a state change or a duplicate.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum Conflict {
    #[response(
        status = 409,
        description = "Duplicate, or a state change the resource refuses",
        content_type = "application/problem+json"
    )]
    Conflict(Problem),
}

/// Errors of the signed-in routes.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum SessionErrors {
    #[response(
        status = 401,
        description = "Not signed in, or the session ended",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    #[response(
        status = 403,
        description = "Missing CSRF token, or the role lacks the permission",
        content_type = "application/problem+json"
    )]
    Forbidden(Problem),
}

/// The 429 of every route that checks a secret (`crate::guard`).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum Throttled {
    #[response(
        status = 429,
        description = "Too many wrong guesses at this secret: locked until Retry-After (seconds) has passed",
        content_type = "application/problem+json"
    )]
    Locked(Problem),
}

/// The 422 of routes whose query parameters are validated.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum BadQuery {
    #[response(
        status = 422,
        description = "A query parameter is invalid",
        content_type = "application/problem+json"
    )]
    Invalid(Problem),
}

/// Errors of the public read API.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum PublicErrors {
    #[response(
        status = 304,
        description = "Not modified: the If-None-Match ETag is current"
    )]
    NotModified,
    #[response(
        status = 401,
        description = "A private page, and the request lacks its password cookie (POST /api/verify-page-password)",
        content_type = "application/problem+json"
    )]
    Locked(Problem),
    #[response(
        status = 404,
        description = "Unknown or private page",
        content_type = "application/problem+json"
    )]
    NotFound(Problem),
    #[response(
        status = 429,
        description = "Rate limit for this route and client address exceeded",
        content_type = "application/problem+json"
    )]
    RateLimited(Problem),
}

/// Fills in what the handlers do not say: title, version, the key scheme.
/// Paths anyone may call without a key or a session.
fn anonymous(path: &str) -> bool {
    const OPEN: &[&str] = &[
        "/api/public/",
        "/api/v1/public/",
        "/s/",
        "/api/badge",
        "/api/calendar",
        "/api/feed/",
        "/api/health",
        "/api/manifest",
        "/api/widget",
        "/api/translate",
        "/api/verify-page-password",
        "/api/subscribers/verify",
        "/api/subscribers/unsubscribe",
        "/api/subscribers/manage",
        "/api/push/subscribe",
        "/api/heartbeat/",
        "/api/metrics",
        "/api/auth/login",
        "/api/auth/setup",
        "/api/auth/verify-2fa",
        "/api/v1/status",
    ];
    OPEN.iter().any(|p| path.starts_with(p))
        || (path.starts_with("/api/v2/") && path.ends_with(".json"))
}

/// OpenAPI requires a description on every response; an answer documented
/// by its body alone gets the status's name.
fn describe_responses(op: &mut utoipa::openapi::path::Operation) {
    for (code, response) in op.responses.responses.iter_mut() {
        if let utoipa::openapi::RefOr::T(r) = response
            && r.description.is_empty()
        {
            let reason = code
                .parse::<u16>()
                .ok()
                .and_then(|c| axum::http::StatusCode::from_u16(c).ok())
                .and_then(|c| c.canonical_reason())
                .unwrap_or("Answer");
            r.description = reason.to_string();
        }
    }
}

/// The answers the edge (`request_gate`, `listen`, `retry`) may give any
/// request before or around its route, added to every operation that does
/// not name them itself, so a client (or a fuzzer) meets no status the
/// document does not list.
fn edge_answers(op: &mut utoipa::openapi::path::Operation, writes: bool) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    let has_body = op.request_body.is_some();
    let mut add = |code: &str, description: &str| {
        op.responses
            .responses
            .entry(code.to_string())
            .or_insert_with(|| {
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/problem+json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("Problem")))
                            .build(),
                    )
                    .build()
                    .into()
            });
    };
    add(
        "400",
        "A request no route reads: a NUL (%00) in the query, a path that is not UTF-8, HTTP/1.1 without Host",
    );
    add(
        "429",
        "Too many requests, or too many open connections from this address; see Retry-After",
    );
    if has_body {
        add("408", "The body did not arrive in time");
        add("413", "The body exceeds the size limit");
    }
    if writes {
        add(
            "503",
            "The database was busy; nothing was applied, send the request again (see Retry-After)",
        );
    }
}

pub fn finish(mut doc: OpenApi) -> OpenApi {
    doc.info.title = "Upstate API".into();
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    // utoipa fills these from the crate metadata it can see: its own author's.
    doc.info.contact = None;
    // OpenAPI 3.1 wants the license as an SPDX `identifier` beside its name.
    let mut license = utoipa::openapi::info::License::new(env!("CARGO_PKG_LICENSE"));
    license.identifier = Some(env!("CARGO_PKG_LICENSE").into());
    doc.info.license = Some(license);
    // Every path is relative to wherever the install is reached.
    doc.servers = Some(vec![utoipa::openapi::server::Server::new("/")]);
    doc.info.description = Some(
        "Management API (/api/v1, /api/v2; Bearer API keys with read/write/admin scopes) and the public read API \
         (/api/public/status/{slug}, /api/v1/public/{slug}; no authentication). Decisions: docs/api.md."
            .into(),
    );
    // v2 and the application routes share v1's handlers (`routes::content`);
    // operation ids must stay unique per document.
    let v1_ids: std::collections::HashSet<String> = doc
        .paths
        .paths
        .iter()
        .filter(|(path, _)| path.starts_with("/api/v1/"))
        .flat_map(|(_, item)| operations(item).filter_map(|op| op.operation_id.clone()))
        .collect();
    for (path, item) in doc.paths.paths.iter_mut() {
        let v2 = path.starts_with("/api/v2/");
        let app = !v2 && !path.starts_with("/api/v1/");
        let open = anonymous(path);
        for op in operations_mut(item) {
            describe_responses(op);
            if op.security.is_none() {
                // Every operation says who may call it: nobody in particular
                // (an empty requirement), or a signed-in person.
                op.security = Some(vec![if open {
                    SecurityRequirement::default()
                } else {
                    SecurityRequirement::new("session", Vec::<String>::new())
                }]);
            }
            match op.operation_id.take() {
                Some(id) if v2 => op.operation_id = Some(format!("v2_{id}")),
                Some(id) if app && v1_ids.contains(&id) => {
                    let mut chars = id.chars();
                    let first = chars.next().map(|c| c.to_ascii_uppercase());
                    op.operation_id =
                        Some(format!("app{}{}", first.unwrap_or('_'), chars.as_str()));
                }
                other => op.operation_id = other,
            }
        }
    }
    for item in doc.paths.paths.values_mut() {
        for (op, writes) in [
            (&mut item.get, false),
            (&mut item.post, true),
            (&mut item.patch, true),
            (&mut item.put, true),
            (&mut item.delete, true),
        ] {
            if let Some(op) = op {
                edge_answers(op, writes);
            }
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    // Error bodies are referenced from response types, which register no schemas.
    let mut extra = vec![(
        "Problem".to_string(),
        <Problem as utoipa::PartialSchema>::schema(),
    )];
    <Problem as utoipa::ToSchema>::schemas(&mut extra);
    for (name, schema) in extra {
        components.schemas.entry(name).or_insert(schema);
    }
    components.add_security_scheme(
        "api_key",
        SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
    );
    components.add_security_scheme(
        "session",
        SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
            "upstate_session",
            "Set by POST /api/auth/login; state-changing requests also send X-CSRF-Token",
        ))),
    );
    doc
}

fn operations(
    item: &utoipa::openapi::PathItem,
) -> impl Iterator<Item = &utoipa::openapi::path::Operation> {
    [&item.get, &item.post, &item.patch, &item.put, &item.delete]
        .into_iter()
        .flatten()
}

fn operations_mut(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [
        &mut item.get,
        &mut item.post,
        &mut item.patch,
        &mut item.put,
        &mut item.delete,
    ]
    .into_iter()
    .flatten()
}

/// `/api/openapi.json` and the reference page at `/api/docs`. The document
/// is serialized once and only its bytes are kept: the built structure is
/// several megabytes of maps, most of an idle server's heap.
pub fn routes(doc: OpenApi) -> Router {
    let json = match serde_json::to_vec(&doc) {
        Ok(v) => axum::body::Bytes::from(v),
        Err(e) => {
            tracing::error!(error = %e, "the OpenAPI document does not serialize");
            axum::body::Bytes::new()
        }
    };
    drop(doc);
    let config = utoipa_swagger_ui::Config::from("/api/openapi.json").validator_url("none");
    Router::from(SwaggerUi::new("/api/docs").config(config))
        .route(
            "/api/openapi.json",
            axum::routing::get(move || {
                let json = json.clone();
                async move {
                    (
                        [(axum::http::header::CONTENT_TYPE, "application/json")],
                        json,
                    )
                }
            }),
        )
        .layer(axum::middleware::map_response(
            crate::security_headers::docs,
        ))
}
