//! The OpenAPI 3.1 document, generated from the handlers' `#[utoipa::path]`
//! annotations as the routers register them (utoipa-axum), so a route cannot
//! be served without being documented. Served at `/api/openapi.json`, with a
//! Swagger UI reference at `/api/docs` from assets vendored into the binary.

mod kinds;

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

/// The answer of a visitor route to a private page opened without its
/// password (for routes that do not list every `PublicErrors` answer).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "describes responses to the document; never built")]
pub enum PrivatePage {
    #[response(
        status = 401,
        description = "A private page, and the request lacks its password cookie (POST /api/verify-page-password), a viewer's cookie (POST /api/viewer-sign-in) or a viewer's token (`?token=`, from /api/viewer-links)",
        content_type = "application/problem+json"
    )]
    Locked(Problem),
    #[response(
        status = 403,
        description = "The page is open only to some networks (its allowedNetworks), and the client's address is not in them",
        content_type = "application/problem+json"
    )]
    OutsideNetworks(Problem),
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
        description = "A private page, and the request lacks its password cookie (POST /api/verify-page-password), a viewer's cookie (POST /api/viewer-sign-in) or a viewer's token (`?token=`, from /api/viewer-links)",
        content_type = "application/problem+json"
    )]
    Locked(Problem),
    #[response(
        status = 403,
        description = "The page is open only to some networks (its allowedNetworks), and the client's address is not in them",
        content_type = "application/problem+json"
    )]
    OutsideNetworks(Problem),
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

/// The values each query and path parameter takes, said in the document as
/// the handlers read them (`input::Query` accessors, `PathId`): enums for
/// closed sets, bounds for numbers, patterns for slugs and tokens, and no
/// NUL character in any text (the request gate refuses one). Kept in one
/// table keyed by name, and by path where the same name means different
/// things; `tests/api/contract.rs` holds the handlers to it with
/// schemathesis's `positive_data_acceptance`.
fn parameter_schema(path: &str, name: &str, in_path: bool) -> Option<utoipa::openapi::Object> {
    use upstate_core::schema;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let one_of = |values: Vec<&str>| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values))
            .build()
    };
    let pattern = |p: &str| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(p))
            .build()
    };
    let integer = |min: i64, max: i64| {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Int64,
            )))
            .minimum(Some(min as f64))
            .maximum(Some(max as f64))
            .build()
    };
    let names = |all: &mut dyn Iterator<Item = &'static str>| one_of(all.collect());
    Some(match name {
        "id" | "component" | "before" => schema::id(),
        n if n.ends_with("Id") => schema::id(),
        "page" | "slug" => schema::slug(),
        // Tokens we hand out are hex; anything else names nothing (404).
        "token" => pattern("^[0-9a-f]{16,128}$"),
        "limit" if path.starts_with("/api/audit-events") => integer(1, 500),
        "limit" if path.contains("/deliveries") => integer(1, 200),
        "limit" if path == "/api/subscribers" || path.starts_with("/api/comments") => {
            integer(1, 500)
        }
        "limit" => integer(1, 100),
        "days" => integer(1, upstate_core::validate::UPTIME_DAYS_MAX),
        "cursor" => pattern("^[0-9]{1,18}$"),
        "since" | "from" => schema::timestamp(),
        // Shown with a later example than the start's.
        "until" | "to" => schema::window_end(),
        "status" if path.contains("incidents") => names(
            &mut upstate_core::IncidentStatus::ALL
                .iter()
                .map(|s| s.as_str())
                .chain(["unresolved"]),
        ),
        "status" if path.starts_with("/api/comments") => {
            one_of(vec!["pending", "approved", "rejected", "all"])
        }
        "status" if path.contains("/deliveries") => {
            names(&mut upstate_core::DeliveryStatus::ALL.iter().map(|s| s.as_str()))
        }
        "actorKind" => names(
            &mut upstate_core::audit::ActorKind::ALL
                .iter()
                .map(|k| k.as_str()),
        ),
        "action" => names(&mut upstate_core::audit::Action::ALL.iter().map(|a| a.as_str())),
        "format" if path == "/api/badge" => one_of(vec!["svg", "shields"]),
        "format" if path == "/api/widget" => one_of(vec!["html", "js"]),
        "format" if path.starts_with("/api/feed") => one_of(vec!["rss", "atom"]),
        "format" if path.starts_with("/api/audit-events") => one_of(vec!["json", "csv"]),
        "style" => one_of(vec!["flat", "flat-square", "plastic", "for-the-badge"]),
        "theme" => one_of(vec!["auto", "light", "dark"]),
        // A language link outlives the languages: any other value (an
        // old link, a typo) reads the page in the visitor's
        // Accept-Language, as Statuspage does; so the document allows any
        // text and names the ones we speak.
        "lang" => {
            let mut lang = pattern(r"^[^\u0000]{0,35}$");
            lang.examples = upstate_core::i18n::LANGS
                .iter()
                .map(|l| serde_json::json!(l.code()))
                .collect();
            lang
        }
        "resolution" => names(
            &mut upstate_core::measurements::Resolution::ALL
                .iter()
                .map(|r| r.as_str()),
        ),
        "label" => {
            let mut label = pattern(r"^[^\u0000-\u001f\u007f-\u009f]*$");
            label.max_length = Some(64);
            label
        }
        "endpoint" => schema::url(),
        _ if in_path => pattern(r"^[^\u0000/]+$"),
        _ => return None,
    })
}

/// Puts `parameter_schema` on every parameter it knows; any other text
/// parameter still says it holds no NUL character.
fn strict_parameters(path: &str, op: &mut utoipa::openapi::path::Operation) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::schema::{Schema, SchemaType, Type};
    for p in op.parameters.iter_mut().flatten() {
        let RefOr::T(p) = p else { continue };
        let in_path = matches!(p.parameter_in, ParameterIn::Path);
        if let Some(strict) = parameter_schema(path, &p.name, in_path) {
            p.schema = Some(RefOr::T(Schema::Object(strict)));
        } else if let Some(RefOr::T(Schema::Object(o))) = p.schema.as_mut()
            && matches!(o.schema_type, SchemaType::Type(Type::String))
            && o.pattern.is_none()
            && o.enum_values.is_none()
        {
            o.pattern = Some(r"^[^\u0000]*$".into());
        }
    }
}

/// Request bodies as strictly as the handlers read them: an object of the
/// fields listed (a flattened `allOf` merged into one object so that can be
/// said), at least one of them in a PATCH, and `null` only where it means
/// something (`schema::NULL_REMOVES`): elsewhere a `null` reads as left out,
/// so the document shows just the values. Unknown fields are ignored by the
/// server; the document does not invite them.
fn strict_bodies(doc: &mut OpenApi) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{Schema, SchemaType, Type};
    let mut names: Vec<(String, bool)> = Vec::new();
    for item in doc.paths.paths.values() {
        for (op, patch) in [
            (&item.post, false),
            (&item.put, false),
            (&item.patch, true),
            (&item.delete, false),
        ] {
            let Some(RefOr::T(body)) = op.as_ref().and_then(|op| op.request_body.as_ref()) else {
                continue;
            };
            for content in body.content.values() {
                let RefOr::T(content) = content else { continue };
                let refs = match &content.schema {
                    Some(RefOr::Ref(r)) => vec![r.ref_location.clone()],
                    Some(RefOr::T(Schema::OneOf(one))) => one
                        .items
                        .iter()
                        .filter_map(|i| match i {
                            RefOr::Ref(r) => Some(r.ref_location.clone()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                for r in refs {
                    if let Some(name) = r.strip_prefix("#/components/schemas/") {
                        names.push((name.to_string(), patch));
                    }
                }
            }
        }
    }
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    // Objects inside a body (`componentStatuses` items) are closed as well.
    let mut at = 0;
    while at < names.len() {
        let mut found = Vec::new();
        if let Some(RefOr::T(schema)) = components.schemas.get(&names[at].0) {
            refs_within(schema, &mut found);
        }
        for name in found {
            if !names.iter().any(|(n, _)| *n == name) {
                names.push((name, false));
            }
        }
        at += 1;
    }
    for (name, patch) in names {
        // Alternatives of fields (`exactly_one_of`) stay beside the object.
        let mut alternatives: Vec<RefOr<Schema>> = Vec::new();
        // A flattened input (`#[serde(flatten)]`) is an allOf of a ref and
        // an inline object: one object says the same and can be closed.
        if let Some(RefOr::T(Schema::AllOf(all))) = components.schemas.get(&name) {
            let mut merged = utoipa::openapi::Object::with_type(Type::Object);
            for part in &all.items {
                let part = match part {
                    RefOr::Ref(r) => r
                        .ref_location
                        .strip_prefix("#/components/schemas/")
                        .and_then(|n| components.schemas.get(n)),
                    t => Some(t),
                };
                match part {
                    Some(RefOr::T(Schema::Object(o))) => {
                        merged.properties.extend(o.properties.clone());
                        merged.required.extend(o.required.clone());
                    }
                    Some(one @ RefOr::T(Schema::OneOf(_))) => alternatives.push(one.clone()),
                    _ => {}
                }
            }
            merged.description = all.description.clone();
            components
                .schemas
                .insert(name.clone(), RefOr::T(Schema::Object(merged)));
        }
        if let Some(RefOr::T(Schema::Object(o))) = components.schemas.get_mut(&name)
            && matches!(o.schema_type, SchemaType::Type(Type::Object))
        {
            close(o, patch);
        }
        if !alternatives.is_empty()
            && let Some(object) = components.schemas.remove(&name)
        {
            let mut all = utoipa::openapi::schema::AllOfBuilder::new().item(object);
            for one in alternatives {
                all = all.item(one);
            }
            components.schemas.insert(name, all.into());
        }
    }
}

/// A body's object as strictly as its handler reads it (`strict_bodies`).
fn close(o: &mut utoipa::openapi::Object, patch: bool) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{AdditionalProperties, Schema, SchemaType, Type};
    o.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
    if patch && o.min_properties.is_none() {
        o.min_properties = Some(1);
    }
    for property in o.properties.values_mut() {
        no_nul(property);
        match property {
            RefOr::T(Schema::Object(p))
                if p.description.as_deref() != Some(upstate_core::schema::NULL_REMOVES) =>
            {
                if let SchemaType::Array(types) = &p.schema_type {
                    let kept: Vec<Type> = types
                        .iter()
                        .filter(|t| **t != Type::Null)
                        .cloned()
                        .collect();
                    if kept.len() == 1 {
                        p.schema_type = SchemaType::Type(kept[0].clone());
                    }
                }
            }
            RefOr::T(Schema::Array(a))
                if a.description.as_deref() != Some(upstate_core::schema::NULL_REMOVES) =>
            {
                if let SchemaType::Array(types) = &a.schema_type
                    && types.contains(&Type::Null)
                {
                    a.schema_type = SchemaType::Type(Type::Array);
                }
            }
            RefOr::T(Schema::OneOf(one)) => {
                let kept: Vec<RefOr<Schema>> = one
                    .items
                    .iter()
                    .filter(|i| {
                        !matches!(i, RefOr::T(Schema::Object(n))
                            if matches!(n.schema_type, SchemaType::Type(Type::Null)))
                    })
                    .cloned()
                    .collect();
                if kept.len() == 1 && kept.len() < one.items.len() {
                    *property = kept[0].clone();
                }
            }
            _ => {}
        }
    }
}

/// The names of the component schemas `schema` refers to, one level down.
fn refs_within(schema: &utoipa::openapi::schema::Schema, out: &mut Vec<String>) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ArrayItems, Schema};
    let mut take = |r: &RefOr<Schema>| match r {
        RefOr::Ref(r) => {
            if let Some(n) = r.ref_location.strip_prefix("#/components/schemas/") {
                out.push(n.to_string());
            }
        }
        RefOr::T(Schema::Array(a)) => {
            if let ArrayItems::RefOrSchema(items) = &a.items
                && let RefOr::Ref(r) = items.as_ref()
                && let Some(n) = r.ref_location.strip_prefix("#/components/schemas/")
            {
                out.push(n.to_string());
            }
        }
        RefOr::T(Schema::OneOf(one)) => {
            for i in &one.items {
                if let RefOr::Ref(r) = i
                    && let Some(n) = r.ref_location.strip_prefix("#/components/schemas/")
                {
                    out.push(n.to_string());
                }
            }
        }
        _ => {}
    };
    match schema {
        Schema::Object(o) => o.properties.values().for_each(&mut take),
        Schema::AllOf(all) => all.items.iter().for_each(&mut take),
        _ => {}
    }
}

/// A text field with no rule of its own still holds no NUL character (the
/// body reader refuses one anywhere), and neither do lists of them.
fn no_nul(schema: &mut utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{ArrayItems, Schema, SchemaType, Type};
    match schema {
        RefOr::T(Schema::Object(o)) => {
            let text = match &o.schema_type {
                SchemaType::Type(t) => *t == Type::String,
                SchemaType::Array(types) => types.contains(&Type::String),
                SchemaType::AnyValue => false,
            };
            if text && o.pattern.is_none() && o.enum_values.is_none() && o.format.is_none() {
                o.pattern = Some(r"^[^\u0000]*$".into());
            }
        }
        RefOr::T(Schema::Array(a)) => {
            if let ArrayItems::RefOrSchema(items) = &mut a.items {
                no_nul(items);
            }
        }
        _ => {}
    }
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
            "The database was busy (`busy`: nothing was applied) or cannot be reached \
             (`database-unavailable`: pages are still served, changes are not); send the \
             request again after Retry-After",
        );
    }
}

/// A body of exactly one of `fields` (an alternative the server refuses to
/// guess between): one object per field, that field required and no other
/// allowed.
pub(crate) fn one_field_of(
    fields: &[(&str, utoipa::openapi::Object)],
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Type};
    let mut one_of = OneOfBuilder::new();
    for (name, schema) in fields {
        one_of = one_of.item(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(*name, schema.clone())
                .required(*name)
                .additional_properties(Some(
                    AdditionalProperties::<utoipa::openapi::schema::Schema>::FreeForm(false),
                )),
        );
    }
    one_of.into()
}

/// A body with other fields beside an alternative: `body` as it is, and
/// exactly one of `fields` required (`oneOf` of one `required` each, so
/// giving both matches two branches and is refused, as the server does).
pub(crate) fn exactly_one_of(
    body: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
    fields: &[&str],
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, OneOfBuilder};
    let mut one_of = OneOfBuilder::new();
    for name in fields {
        one_of = one_of.item(ObjectBuilder::new().required(*name));
    }
    AllOfBuilder::new().item(body).item(one_of).into()
}

/// `mail`: whether this install sends mail (the bodies that name an
/// email kind offer it only then).
pub fn finish(mut doc: OpenApi, mail: bool) -> OpenApi {
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
            strict_parameters(path, op);
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
    strict_bodies(&mut doc);
    kinds::by_kind(&mut doc, mail);
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
