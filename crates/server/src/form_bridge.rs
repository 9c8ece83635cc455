//! Lets the admin interface's plain HTML forms post to the same application
//! routes scripts use, so the interface works without JavaScript and does
//! nothing a script could not.
//!
//! A form marks itself with a hidden `_back` field. The bridge then turns
//! the form into the JSON body the route expects (field names carry the
//! type: `statusPageId:int`, `autoStart:bool`, `componentIds[]:int`,
//! `startsAt:datetime` (a `datetime-local` value, read in the time zone a
//! `_tz` field names, such as the page's `Europe/Berlin`, else UTC), and
//! `list[][key]:int` for a list of objects (a repeated key starts the next);
//! an empty `:int`, `:datetime` or `:opt` field is left out, or `null`
//! inside an object; an object whose `:req` field is empty is left out
//! altogether: a row of a form the person left blank), moves `_csrf` into the `X-CSRF-Token`
//! header and `_method` into the method (forms only GET and POST), runs the
//! route, and answers like a web form: after success a 303 to `_next` (its
//! `{id}` filled from the answer), after a refusal a 303 back to `_back` with
//! the problem and the typed values in a short-lived flash cookie, which the
//! page shows beside the fields (secrets are never put in it). A sign-in
//! that needs a second factor goes to `_pending`. `_keep` names fields of a
//! success's answer the next page must show once (new recovery codes, a new
//! key's secret), comma-separated.
//!
//! A form with `_method=GET` sends its fields as the query string instead
//! (a download: an answer marked `Content-Disposition: attachment` goes back
//! to the browser as it is). A `multipart/form-data` form may carry a file
//! in a field named `_body:json`: the file is the body the route reads
//! (JSON, or a SQLite database file, sent as `application/vnd.sqlite3`),
//! and the form's other fields go into the query string (the import of an
//! export document).
//!
//! A sensitive action (deleting a page, changing a role) carries its
//! step-up inline: a `_step_up` field (or `_step_up:<tag>` when a screen
//! has several such forms, so the message lands beside the right one) with
//! the person's password or current 2FA code. The bridge runs the step-up
//! routes a script would (`POST /api/admin/step-up`, then
//! `verify-password` or `verify-totp`) and sends the verified token as
//! `X-Step-Up-Token`; a wrong proof comes back beside that field and the
//! action is not attempted.

use crate::app::answer as run;
use crate::error::ApiError;
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::{BoxFuture, Either};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::convert::Infallible;
use std::task::{Context, Poll};
use tower::Service;

pub const FLASH_COOKIE: &str = "upstate_flash";
/// What a flash cookie may carry; values beyond it are not refilled.
const FLASH_MAX: usize = 3_000;
const FORM_MAX: usize = 256 * 1024;
/// What a form's file may weigh, and where one is taken: the bridge reads
/// before any sign-in is checked, so only one route gets the larger room
/// (a bigger document goes through the API or `upstate import`).
const UPLOAD_MAX: usize = 32 * 1024 * 1024;
const UPLOAD_PATH: &str = "/api/admin/export";
const STEP_UP_REFUSED: &str = "Nothing was changed: the action needs you to confirm it is you.";
const STEP_UP_ASK: &str = "Enter your password or a current 2FA code to confirm.";

/// What the page after a form shows: a notice after success, or the
/// problem with every field's message and what was typed.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Flash {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// (field, message) pairs of a 422.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<(String, String)>,
    /// What was typed, by plain field name (a list field: every value).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub values: Map<String, Value>,
    /// Which form of the screen was sent (its `_form`), so that a refusal
    /// refills and marks that form only when two share field names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<String>,
}

impl Flash {
    /// The flash of this request, if one was set.
    pub fn read(headers: &HeaderMap) -> Option<Flash> {
        let raw = crate::session::cookies(headers)
            .find(|c| c.name() == FLASH_COOKIE)?
            .value()
            .to_string();
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The message beside `field`, if the last attempt had one.
    pub fn error_of(&self, field: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(f, _)| f == field || f.starts_with(&format!("{field}[")))
            .map(|(_, m)| m.as_str())
    }

    /// What was typed into `field` last time.
    pub fn value_of(&self, field: &str) -> Option<String> {
        match self.values.get(field)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// Every value a list field (`name[]`: ticked boxes) was sent with, or
    /// `None` when the last attempt did not send it.
    pub fn values_of(&self, field: &str) -> Option<Vec<String>> {
        match self.values.get(field)? {
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(|v| v.as_str())
                    .filter(|v| !v.is_empty())
                    .map(String::from)
                    .collect(),
            ),
            Value::String(s) => Some(vec![s.clone()]),
            _ => None,
        }
    }

    /// This flash if it came from form `name` (or from a form that did not
    /// say which it was), for that form's fields.
    pub fn of_form(&self, name: &str) -> Option<&Flash> {
        match &self.form {
            Some(f) if f != name => None,
            _ => Some(self),
        }
    }

    pub(crate) fn cookie(&self) -> HeaderValue {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let value = URL_SAFE_NO_PAD.encode(json);
        HeaderValue::from_str(&format!(
            "{FLASH_COOKIE}={value}; Path=/admin; Max-Age=60; HttpOnly; SameSite=Lax"
        ))
        .unwrap_or_else(|_| HeaderValue::from_static("upstate_flash=; Path=/admin; Max-Age=0"))
    }

    /// What was typed, to refill the form, up to what a cookie may carry.
    fn keep_typed(&mut self, typed: Map<String, Value>) {
        let mut size = 0;
        for (k, v) in typed {
            size += k.len() + v.to_string().len();
            if size < FLASH_MAX {
                self.values.insert(k, v);
            }
        }
    }

    /// Clears the flash once a page has shown it.
    pub fn clear() -> HeaderValue {
        HeaderValue::from_static("upstate_flash=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Lax")
    }
}

/// Marks the flash cookie `Secure` (the install's cookies are), wherever
/// in the answer it is set or cleared.
pub(crate) fn secure_flash(headers: &mut HeaderMap) {
    let prefix = format!("{FLASH_COOKIE}=");
    let cookies: Vec<HeaderValue> = headers
        .get_all(header::SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    if !cookies
        .iter()
        .any(|c| c.as_bytes().starts_with(prefix.as_bytes()))
    {
        return;
    }
    headers.remove(header::SET_COOKIE);
    for c in cookies {
        let marked = match c.to_str() {
            Ok(text) if text.starts_with(&prefix) && !text.contains("; Secure") => {
                HeaderValue::from_str(&format!("{text}; Secure")).unwrap_or(c)
            }
            _ => c,
        };
        headers.append(header::SET_COOKIE, marked);
    }
}

fn is_form(headers: &HeaderMap) -> bool {
    media_type(headers).is_some_and(|m| {
        m.eq_ignore_ascii_case("application/x-www-form-urlencoded")
            || m.eq_ignore_ascii_case("multipart/form-data")
    })
}

fn media_type(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| ct.split(';').next())
        .map(str::trim)
}

/// The fields of a `multipart/form-data` body, files read as text; a
/// `_body:json` file that is not text (a SQLite database an importer
/// reads) comes apart, as bytes.
async fn multipart_pairs(
    headers: &HeaderMap,
    bytes: axum::body::Bytes,
) -> Option<(Vec<(String, String)>, Option<axum::body::Bytes>)> {
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let boundary = multer::parse_boundary(content_type).ok()?;
    let stream = futures_util::stream::once(async move { Ok::<_, Infallible>(bytes) });
    let mut parts = multer::Multipart::new(stream, boundary);
    let mut pairs = Vec::new();
    let mut binary = None;
    while let Some(field) = parts.next_field().await.ok()? {
        let name = field.name()?.to_string();
        let value = field.bytes().await.ok()?;
        match String::from_utf8(value.to_vec()) {
            Ok(text) => pairs.push((name, text)),
            Err(_) if name == "_body:json" => binary = Some(value),
            Err(_) => return None,
        }
    }
    Some((pairs, binary))
}

/// Only our own interface's paths are followed after a form.
fn local(path: &str) -> Option<&str> {
    (path.starts_with("/admin") && !path.contains("//") && !path.contains('\\')).then_some(path)
}

/// Fields that never go into a cookie or back into a form.
/// `_next` with each `{field}` replaced by the answer's number of that
/// name (`{id}`, or `{incidentId}` for an approved draft); a field the
/// answer lacks becomes empty.
fn fill_ids(to: &str, data: &Value) -> String {
    let mut out = String::new();
    let mut rest = to;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let name = &rest[open + 1..open + close];
        if let Some(n) = data[name].as_i64() {
            out.push_str(&n.to_string());
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

fn secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["password", "code", "token", "secret", "apikey"]
        .iter()
        .any(|s| n.contains(s))
}

/// A `datetime-local` value ("2026-11-23T14:30") in zone `tz` as an
/// RFC 3339 instant; anything else is passed on for the route to refuse.
fn instant(raw: &str, tz: Option<&str>) -> String {
    let zone = tz
        .and_then(|t| jiff::tz::TimeZone::get(t).ok())
        .unwrap_or(jiff::tz::TimeZone::UTC);
    match raw
        .parse::<jiff::civil::DateTime>()
        .ok()
        .filter(|_| matches!(raw.len(), 16 | 19))
        .and_then(|dt| dt.to_zoned(zone).ok())
    {
        Some(z) => z.timestamp().to_string(),
        None => raw.to_string(),
    }
}

/// A form field's value as the JSON its name asks for; `tz` is the zone
/// of `datetime` fields.
fn typed(kind: &str, raw: &str, tz: Option<&str>) -> Option<Value> {
    match kind {
        "int" | "datetime" | "opt" | "req" if raw.trim().is_empty() => None,
        "datetime" => Some(Value::String(instant(raw, tz))),
        "int" => Some(
            raw.trim()
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(raw.to_string())),
        ),
        "bool" => Some(Value::Bool(matches!(raw, "on" | "true" | "1" | "yes"))),
        "null" if raw.trim().is_empty() => Some(Value::Null),
        // A list typed one per line or comma-separated (domains, groups).
        "lines" => Some(Value::Array(
            raw.split([',', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
                .collect(),
        )),
        _ => Some(Value::String(raw.to_string())),
    }
}

/// The bridge's reading of a form: the JSON body and its own fields.
#[derive(Default)]
struct Form {
    body: Map<String, Value>,
    typed_values: Map<String, Value>,
    back: Option<String>,
    next: Option<String>,
    pending: Option<String>,
    done: Option<String>,
    /// A field of the answer the next page must show once (recovery codes).
    keep: Option<String>,
    csrf: Option<String>,
    method: Option<String>,
    /// The step-up field's name and the proof typed into it.
    step_up: Option<(String, String)>,
    /// Which form of the screen this is (`_form`).
    form: Option<String>,
    /// (list, key) of `:req` fields: objects where it is empty are dropped.
    required: Vec<(String, String)>,
    /// (object, key) of `:req` fields of nested objects: where it is empty
    /// the object is `null`.
    required_in: Vec<(String, String)>,
    /// The file of a `_body:json` field: the body itself.
    raw_body: Option<String>,
}

fn read_form(bytes: &[u8]) -> Form {
    read_pairs(form_urlencoded::parse(bytes).into_owned().collect())
}

fn read_pairs(pairs: Vec<(String, String)>) -> Form {
    let mut f = Form::default();
    let tz = pairs
        .iter()
        .find(|(k, _)| k == "_tz")
        .map(|(_, v)| v.clone());
    let tz = tz.as_deref();
    for (k, v) in pairs {
        match k.as_str() {
            "_body:json" => f.raw_body = Some(v),
            "_back" => f.back = Some(v),
            "_next" => f.next = Some(v),
            "_pending" => f.pending = Some(v),
            "_done" => f.done = Some(v),
            "_keep" => f.keep = Some(v),
            "_csrf" => f.csrf = Some(v),
            "_tz" => {}
            "_form" => f.form = Some(v),
            "_method" => f.method = Some(v.to_ascii_uppercase()),
            _ if k == "_step_up" || k.starts_with("_step_up:") => f.step_up = Some((k, v)),
            _ => {
                let (name, kind) = k.split_once(':').unwrap_or((k.as_str(), "text"));
                // `list[][key]`: a list of objects; a key seen again starts
                // the next object.
                if let Some((list, key)) = name
                    .split_once("[][")
                    .and_then(|(l, rest)| Some((l, rest.strip_suffix(']')?)))
                {
                    let entry = f
                        .body
                        .entry(list.to_string())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(items) = entry {
                        let fresh = match items.last() {
                            Some(Value::Object(o)) => o.contains_key(key),
                            _ => true,
                        };
                        if fresh {
                            items.push(Value::Object(Map::new()));
                        }
                        if let Some(Value::Object(o)) = items.last_mut() {
                            // Inside an object an empty field is `null`.
                            o.insert(key.to_string(), typed(kind, &v, tz).unwrap_or(Value::Null));
                        }
                    }
                    if kind == "req" {
                        let pair = (list.to_string(), key.to_string());
                        if !f.required.contains(&pair) {
                            f.required.push(pair);
                        }
                    }
                    continue;
                }
                // `object.key`: one nested object; its `:req` field left
                // empty leaves the whole object out (a target not set up).
                if let Some((object, key)) = name.split_once('.') {
                    if !secret(key) {
                        f.typed_values
                            .insert(name.to_string(), Value::String(v.clone()));
                    }
                    let entry = f
                        .body
                        .entry(object.to_string())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let (Value::Object(o), Some(value)) = (entry, typed(kind, &v, tz)) {
                        o.insert(key.to_string(), value);
                    }
                    if kind == "req" {
                        f.required_in.push((object.to_string(), key.to_string()));
                    }
                    continue;
                }
                let (name, list) = match name.strip_suffix("[]") {
                    Some(n) => (n.to_string(), true),
                    None => (name.to_string(), false),
                };
                if !secret(&name) {
                    if list {
                        let kept = f
                            .typed_values
                            .entry(name.clone())
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let Value::Array(items) = kept {
                            items.push(Value::String(v.clone()));
                        }
                    } else {
                        f.typed_values
                            .insert(name.clone(), Value::String(v.clone()));
                    }
                }
                if list {
                    let entry = f
                        .body
                        .entry(name)
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let (Value::Array(items), Some(value)) = (entry, typed(kind, &v, tz)) {
                        items.push(value);
                    }
                } else if let Some(value) = typed(kind, &v, tz) {
                    f.body.insert(name, value);
                }
            }
        }
    }
    for (list, key) in &f.required {
        if let Some(Value::Array(items)) = f.body.get_mut(list) {
            items.retain(|o| !o.get(key).is_none_or(Value::is_null));
        }
    }
    for (object, key) in &f.required_in {
        if f.body.get(object).is_some_and(|o| o.get(key).is_none()) {
            f.body.insert(object.clone(), Value::Null);
        }
    }
    f
}

/// A message of the API as a sentence on a page: capital first, full stop.
fn sentence(message: &str) -> String {
    let mut chars = message.trim().chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    if !out.ends_with(['.', '!', '?', ')']) {
        out.push('.');
    }
    out
}

/// The bridge around the whole application. It wraps the router from
/// outside (not as a route layer) because `_method` must be applied before
/// routing picks a handler by method. Anything but a form POST goes straight
/// to the router, with no allocation on the public read path.
#[derive(Clone)]
pub struct Bridged<S>(pub S);

impl<S> Service<Request> for Bridged<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.method() != Method::POST || !is_form(req.headers()) {
            return Either::Left(self.0.call(req));
        }
        // The clone is ready-checked inside `bridge`; this one stays ready.
        let inner = self.0.clone();
        Either::Right(Box::pin(async move { Ok(bridge(req, inner).await) }))
    }
}

/// Passes everything but a marked form through untouched.
async fn bridge<S>(req: Request, inner: S) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone,
{
    let (mut parts, body) = req.into_parts();
    let multipart =
        media_type(&parts.headers).is_some_and(|m| m.eq_ignore_ascii_case("multipart/form-data"));
    let limit = if multipart && parts.uri.path() == UPLOAD_PATH {
        UPLOAD_MAX
    } else {
        FORM_MAX
    };
    let Ok(bytes) = to_bytes(body, limit).await else {
        return ApiError::PayloadTooLarge.into_response();
    };
    let mut binary = None;
    let form = if multipart {
        match multipart_pairs(&parts.headers, bytes.clone()).await {
            Some((pairs, file)) => {
                binary = file;
                read_pairs(pairs)
            }
            None => return run(inner, Request::from_parts(parts, Body::from(bytes))).await,
        }
    } else {
        read_form(&bytes)
    };
    let Some(back) = form.back.as_deref().and_then(local).map(str::to_string) else {
        // Not one of our forms: the route reads the body itself.
        return run(inner, Request::from_parts(parts, Body::from(bytes))).await;
    };
    match form.method.as_deref() {
        Some("GET") => parts.method = Method::GET,
        Some("PUT") => parts.method = Method::PUT,
        Some("PATCH") => parts.method = Method::PATCH,
        Some("DELETE") => parts.method = Method::DELETE,
        _ => {}
    }
    let in_query = parts.method == Method::GET || form.raw_body.is_some() || binary.is_some();
    if in_query {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &form.body {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            query.append_pair(name, &text);
        }
        let target = format!("{}?{}", parts.uri.path(), query.finish());
        if let Ok(uri) = target.parse() {
            parts.uri = uri;
        }
    }
    if let Some(token) = form
        .csrf
        .as_deref()
        .and_then(|t| HeaderValue::from_str(t).ok())
    {
        parts.headers.insert("x-csrf-token", token);
    }
    let json = match (&form.raw_body, in_query) {
        (Some(raw), _) => raw.clone().into_bytes(),
        (None, true) => binary.as_deref().map(<[u8]>::to_vec).unwrap_or_default(),
        (None, false) => serde_json::to_vec(&Value::Object(form.body.clone())).unwrap_or_default(),
    };
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(if binary.is_some() {
            crate::extract::SQLITE_MEDIA_TYPE
        } else {
            "application/json"
        }),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    // An empty proof is no step-up: the route says whether it needed one.
    if let Some((field, proof)) = form.step_up.clone().filter(|(_, p)| !p.trim().is_empty()) {
        // Proven at the identity provider (single sign-on): its cookie.
        if proof.trim() == "sso" {
            let kept = crate::session::cookies(&parts.headers)
                .find(|c| c.name() == crate::session::STEP_UP_COOKIE)
                .and_then(|c| HeaderValue::from_str(c.value()).ok());
            match kept {
                Some(token) => {
                    parts.headers.insert("x-step-up-token", token);
                }
                None => {
                    let again =
                        "The confirmation ran out: confirm at your identity provider again.";
                    return refused_step_up(form, back, field, again.into());
                }
            }
        } else {
            match step_up(inner.clone(), &parts, proof.trim()).await {
                Ok(token) => {
                    parts.headers.insert("x-step-up-token", token);
                }
                Err(message) => return refused_step_up(form, back, field, message),
            }
        }
    }
    let res = run(inner, Request::from_parts(parts, Body::from(json))).await;
    answer(res, form, back).await
}

/// A request to an application route on behalf of the form's sender: its
/// cookies, CSRF token and connection (the guard counts by address).
fn call_as(parts: &axum::http::request::Parts, path: &'static str, body: &Value) -> Request {
    let mut req = Request::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    *req.method_mut() = Method::POST;
    *req.uri_mut() = axum::http::Uri::from_static(path);
    *req.extensions_mut() = parts.extensions.clone();
    let h = req.headers_mut();
    for name in [header::COOKIE, header::USER_AGENT, header::HOST] {
        for v in parts.headers.get_all(&name) {
            h.append(name.clone(), v.clone());
        }
    }
    for name in ["x-csrf-token", "x-forwarded-for"] {
        if let Some(v) = parts.headers.get(name) {
            h.insert(name, v.clone());
        }
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    req
}

/// The API's message in a refusal, as a sentence.
async fn refusal(res: Response) -> String {
    let status = res.status();
    let body = to_bytes(res.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let message = json["errors"][0]["message"]
        .as_str()
        .map(|m| format!("That password or code {m}"))
        .or_else(|| json["detail"].as_str().map(String::from))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("refused").into());
    sentence(&message)
}

/// Creates and verifies a step-up with `proof` (six digits: a TOTP code,
/// anything else: the password); the verified token, or why not.
async fn step_up<S>(
    inner: S,
    parts: &axum::http::request::Parts,
    proof: &str,
) -> Result<HeaderValue, String>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone,
{
    let res = run(
        inner.clone(),
        call_as(parts, "/api/admin/step-up", &Value::Null),
    )
    .await;
    if !res.status().is_success() {
        return Err(refusal(res).await);
    }
    let body = to_bytes(res.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let created: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(token) = created["data"]["token"].as_str().map(String::from) else {
        return Err("The step-up could not be started.".into());
    };
    let totp = proof.len() == 6 && proof.bytes().all(|b| b.is_ascii_digit());
    let (path, body) = if totp {
        (
            "/api/admin/step-up/verify-totp",
            serde_json::json!({"token": token, "code": proof}),
        )
    } else {
        (
            "/api/admin/step-up/verify-password",
            serde_json::json!({"token": token, "password": proof}),
        )
    };
    let res = run(inner, call_as(parts, path, &body)).await;
    if !res.status().is_success() {
        return Err(refusal(res).await);
    }
    HeaderValue::from_str(&token).map_err(|_| "The step-up could not be started.".to_string())
}

/// Back to the form, the message beside its step-up field; nothing done.
fn refused_step_up(form: Form, back: String, field: String, message: String) -> Response {
    let mut flash = Flash {
        error: Some(STEP_UP_REFUSED.into()),
        fields: vec![(field.clone(), message)],
        form: form.form.clone(),
        ..Flash::default()
    };
    flash.keep_typed(form.typed_values);
    // Straight to the field, which may be far down the screen.
    let to = match field.strip_prefix("_step_up:") {
        Some(tag) if tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') => {
            format!("{back}#su-{tag}")
        }
        _ => back,
    };
    let mut out = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
    out.headers_mut().append(header::SET_COOKIE, flash.cookie());
    out
}

async fn answer(res: Response, form: Form, back: String) -> Response {
    let status = res.status();
    // A download goes to the browser as it is.
    if status.is_success()
        && res
            .headers()
            .get(header::CONTENT_DISPOSITION)
            .is_some_and(|v| v.as_bytes().starts_with(b"attachment"))
    {
        return res;
    }
    let cookies: Vec<HeaderValue> = res
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    let body = to_bytes(res.into_body(), 1024 * 1024)
        .await
        .unwrap_or_default();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (to, flash) = if status.is_success() {
        let data = &json["data"];
        let pending = data["twoFactorRequired"] == Value::Bool(true);
        let to = match (&form.pending, pending) {
            (Some(p), true) => p.clone(),
            _ => form.next.clone().unwrap_or(back),
        };
        let to = local(&fill_ids(&to, data)).unwrap_or("/admin").to_string();
        let mut flash = Flash {
            notice: form.done.clone(),
            ..Flash::default()
        };
        for key in form.keep.iter().flat_map(|k| k.split(',')) {
            if let Some(value) = data.get(key) {
                flash.values.insert(key.to_string(), value.clone());
            }
        }
        (to, flash)
    } else {
        let mut flash = Flash {
            error: json["detail"]
                .as_str()
                .or(json["title"].as_str())
                .map(sentence)
                .or_else(|| Some(status.canonical_reason().unwrap_or("refused").into())),
            ..Flash::default()
        };
        // A sensitive action sent without its proof: ask beside the field.
        if status == StatusCode::FORBIDDEN
            && json["detail"]
                .as_str()
                .is_some_and(|d| d.contains("step-up"))
            && let Some((field, _)) = &form.step_up
        {
            flash.error = Some(STEP_UP_REFUSED.into());
            flash.fields.push((field.clone(), STEP_UP_ASK.into()));
        }
        if let Some(errors) = json["errors"].as_array().filter(|e| !e.is_empty()) {
            flash.error = Some(if errors.len() == 1 {
                "Please correct the field marked below.".into()
            } else {
                "Please correct the fields marked below.".into()
            });
            for e in errors {
                let field = e["field"].as_str().unwrap_or("").to_string();
                let message = e["message"].as_str().unwrap_or("").to_string();
                flash.fields.push((field, message));
            }
        }
        flash.form = form.form.clone();
        flash.keep_typed(form.typed_values);
        (back, flash)
    };
    let mut out = (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response();
    for c in cookies {
        out.headers_mut().append(header::SET_COOKIE, c);
    }
    if flash.notice.is_some() || flash.error.is_some() || !flash.values.is_empty() {
        out.headers_mut().append(header::SET_COOKIE, flash.cookie());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_carry_their_types() {
        let f = read_form(
            b"_back=/admin/x&title=Down&statusPageId:int=3&autoStart:bool=on&componentIds[]:int=4&componentIds[]:int=5&note:opt=&groupId:int=&at:datetime=2026-11-23T14:30&password=hunter2&_csrf=t",
        );
        assert_eq!(
            Value::Object(f.body),
            serde_json::json!({"title": "Down", "statusPageId": 3, "autoStart": true,
                               "componentIds": [4, 5], "password": "hunter2", "at": "2026-11-23T14:30:00Z"})
        );
        assert!(
            !f.typed_values.contains_key("password"),
            "secrets stay out of the flash"
        );
        assert_eq!(
            f.typed_values["componentIds"],
            serde_json::json!(["4", "5"]),
            "every ticked box is kept to tick again"
        );
        let nested = read_form(
            b"_back=/admin/x&enabled:bool=on&s3.bucket:req=copy&s3.region:opt=&s3.secretAccessKey:opt=k3y",
        );
        assert_eq!(
            Value::Object(nested.body),
            serde_json::json!({"enabled": true, "s3": {"bucket": "copy", "secretAccessKey": "k3y"}})
        );
        assert!(!nested.typed_values.contains_key("s3.secretAccessKey"));
        let import = read_form(b"_back=/admin/x&url=https://a.test&apiKey:opt=k3y");
        assert!(
            !import.typed_values.contains_key("apiKey") && import.typed_values.contains_key("url"),
            "another product's key stays out of the flash"
        );
        let unset = read_form(b"_back=/admin/x&s3.bucket:req=&s3.region:opt=eu");
        assert_eq!(
            Value::Object(unset.body),
            serde_json::json!({"s3": null}),
            "a target left blank is no target"
        );
        let again = read_form(b"_back=/admin/x&_form=recurring&title=A");
        assert_eq!(again.form.as_deref(), Some("recurring"));
        let flash = Flash {
            form: again.form,
            values: again.typed_values,
            ..Flash::default()
        };
        assert!(flash.of_form("once").is_none() && flash.of_form("recurring").is_some());
        assert_eq!(f.csrf.as_deref(), Some("t"));
        assert_eq!(local("//evil.example/admin"), None);
        assert_eq!(local("https://evil.example"), None);
        assert_eq!(local("/admin/incidents/4"), Some("/admin/incidents/4"));
        assert_eq!(sentence("the email is wrong"), "The email is wrong.");
        let f = read_form(b"_back=/admin/x&_tz=Europe/Berlin&at:datetime=2026-07-01T09:30");
        assert_eq!(
            f.body["at"], "2026-07-01T07:30:00Z",
            "read in the page's zone (summer time)"
        );
        let f = read_form(
            b"_back=/admin/x&c[][id]:int=4&c[][groupId]:int=2&c[][id]:int=5&c[][groupId]:int=",
        );
        assert_eq!(
            Value::Object(f.body),
            serde_json::json!({"c": [{"id": 4, "groupId": 2}, {"id": 5, "groupId": null}]})
        );
        let f = read_form(
            b"_back=/admin/x&s[][componentId]:int=4&s[][status]:req=&s[][componentId]:int=5&s[][status]:req=degraded",
        );
        assert_eq!(
            Value::Object(f.body),
            serde_json::json!({"s": [{"componentId": 5, "status": "degraded"}]}),
            "a blank row is left out"
        );
    }
}
