//! Request parsing at the edge: bodies become core inputs, ids become numbers,
//! and every way a request can be malformed becomes a precise ApiError.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{StatusCode, header, request::Parts};
use serde::de::DeserializeOwned;
use upstate_core::{FieldErrors, Id};

/// A JSON body that must be present.
pub struct Body<T>(pub T);

/// A JSON body that may be left out (resolve, start, complete, cancel).
pub struct OptionalBody<T>(pub T);

async fn read_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<(bool, Bytes), ApiError> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            let mime = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
    let bytes = raw_bytes(req, state).await?;
    if !bytes.iter().all(u8::is_ascii_whitespace) && is_json != Some(true) {
        return Err(ApiError::UnsupportedMediaType);
    }
    Ok((bytes.iter().all(u8::is_ascii_whitespace), bytes))
}

/// The body as bytes, within the body limit.
async fn raw_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge
        } else {
            ApiError::BadRequest(rejection.body_text())
        }
    })
}

/// How deep a body's arrays and objects may nest. Ours nest three deep at
/// most; serde skips unknown fields without a depth limit of its own.
const MAX_DEPTH: usize = 32;

/// The one strict reading of every JSON body: exactly one JSON object and
/// nothing after it (400), nested at most `MAX_DEPTH` deep (400), no NUL
/// character in any string or key (422: PostgreSQL cannot store one, and no
/// text of ours needs it). A number with no fraction (`1.0`) counts as the
/// integer it is, as JSON Schema says. Well-formed JSON of the wrong shape
/// is 422 naming every field that did not fit (not only the first serde
/// stops at).
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde::Deserialize::deserialize(&mut de)
        .and_then(|v: serde_json::Value| de.end().map(|()| v))
        .map_err(|e| ApiError::BadRequest(format!("malformed JSON: {e}")))?;
    let serde_json::Value::Object(mut fields) = value else {
        return Err(ApiError::Validation(FieldErrors::single(
            "body",
            "must be a JSON object",
        )));
    };
    let mut nul = None;
    for (key, v) in fields.iter_mut() {
        if let Err(e) = tidy(v, 1) {
            return Err(ApiError::BadRequest(format!("malformed JSON: {e}")));
        }
        if key.contains('\0') || holds_nul(v) {
            nul.get_or_insert_with(|| key.clone());
        }
    }
    if let Some(field) = nul {
        return Err(ApiError::Validation(FieldErrors::single(
            &field,
            "must not contain a NUL character",
        )));
    }
    let err = match serde_path_to_error::deserialize(&serde_json::Value::Object(fields.clone())) {
        Ok(t) => return Ok(t),
        Err(err) => err,
    };
    // Each round names one bad field and sets it aside, until the rest fits
    // or what is left to report is only the absence of a field set aside.
    let mut errors = FieldErrors::new();
    let mut next = Some(err);
    while let Some(err) = next.take() {
        let top = match err.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
            _ => None,
        };
        let path = err.path().to_string();
        match top {
            Some(key) if fields.remove(&key).is_some() => {
                errors.push(&path, clean_message(&err.into_inner().to_string()));
                let rest = serde_json::Value::Object(fields.clone());
                next = serde_path_to_error::deserialize::<_, T>(&rest).err();
            }
            _ if errors.is_empty() => {
                let field = if path == "." || path.is_empty() {
                    "body".to_string()
                } else {
                    path
                };
                errors.push(&field, clean_message(&err.into_inner().to_string()));
            }
            _ => {}
        }
    }
    Err(ApiError::Validation(errors))
}

/// Checks nesting depth and turns whole numbers written with a fraction
/// (`1.0`) into integers.
fn tidy(v: &mut serde_json::Value, depth: usize) -> Result<(), String> {
    use serde_json::Value;
    match v {
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            Err(format!("nested deeper than {MAX_DEPTH} levels"))
        }
        Value::Array(items) => items.iter_mut().try_for_each(|i| tidy(i, depth + 1)),
        Value::Object(map) => map.values_mut().try_for_each(|i| tidy(i, depth + 1)),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether a NUL character is in any string or key inside `v`.
fn holds_nul(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

/// serde's messages end with " at line L column C", noise next to a field name.
fn clean_message(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (empty, bytes) = read_bytes(req, state).await?;
        if empty {
            return Err(ApiError::BadRequest("a JSON body is required".into()));
        }
        parse(&bytes).map(Body)
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalBody<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (empty, bytes) = read_bytes(req, state).await?;
        if empty {
            Ok(OptionalBody(T::default()))
        } else {
            parse(&bytes).map(OptionalBody)
        }
    }
}

/// A numeric id from the path. Anything else names no resource: 404.
pub struct PathId(pub Id);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(raw) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::NotFound("no such resource".into()))?;
        raw.parse::<Id>()
            .ok()
            .filter(|id| *id > 0)
            .map(PathId)
            .ok_or_else(|| ApiError::NotFound(format!("no resource with id {raw:?}")))
    }
}

/// Query parameters, parsed leniently into strings so each bad value can be
/// reported by name (instead of one opaque deserializer message).
pub struct QueryParams(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let q = parts.uri.query().unwrap_or("");
        Ok(QueryParams(form_pairs(q)))
    }
}

fn form_pairs(q: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

impl QueryParams {
    /// The first value given for a parameter; an empty value counts as absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The `page` parameter: a page's slug, required.
    pub fn page_slug(&self, errors: &mut FieldErrors) -> String {
        let slug = self.get("page").map(str::to_string);
        if slug.is_none() {
            errors.push("page", "is required: the page's slug");
        }
        slug.unwrap_or_default()
    }

    /// A parameter that must be one of `allowed` (the first is the default).
    pub fn one_of(
        &self,
        name: &str,
        allowed: &[&'static str],
        errors: &mut FieldErrors,
    ) -> &'static str {
        let Some(raw) = self.get(name) else {
            return allowed.first().copied().unwrap_or("");
        };
        match allowed.iter().find(|a| **a == raw) {
            Some(a) => a,
            None => {
                errors.push(name, format!("must be one of {}", allowed.join(", ")));
                allowed.first().copied().unwrap_or("")
            }
        }
    }

    /// Parses a parameter with `FromStr`, recording a bad value under its name.
    pub fn parsed<T: std::str::FromStr>(
        &self,
        name: &str,
        what: &str,
        errors: &mut FieldErrors,
    ) -> Option<T> {
        let raw = self.get(name)?;
        errors.check(
            name,
            raw.parse::<T>().map_err(|_| format!("must be {what}")),
        )
    }

    pub fn id(&self, name: &str, errors: &mut FieldErrors) -> Option<Id> {
        let id: Option<Id> = self.parsed(name, "a positive integer id", errors);
        match id {
            Some(i) if i <= 0 => {
                errors.push(name, "must be a positive integer id");
                None
            }
            other => other,
        }
    }

    pub fn bool(&self, name: &str, errors: &mut FieldErrors) -> Option<bool> {
        match self.get(name)? {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => {
                errors.push(name, "must be true or false");
                None
            }
        }
    }

    /// An incident status filter: one of the four states, or `unresolved`
    /// for every state but resolved.
    pub fn incident_status(&self, errors: &mut FieldErrors) -> Option<&'static str> {
        match self.get("status")? {
            "unresolved" => Some("unresolved"),
            raw => match raw.parse::<upstate_core::IncidentStatus>() {
                Ok(s) => Some(s.as_str()),
                Err(_) => {
                    errors.push(
                        "status",
                        format!(
                            "must be one of: {}, unresolved",
                            upstate_core::IncidentStatus::expected()
                        ),
                    );
                    None
                }
            },
        }
    }

    /// A page size: `default` when absent, refused outside 1..=max.
    pub fn limit(&self, name: &str, default: i64, max: i64, errors: &mut FieldErrors) -> i64 {
        let value: Option<i64> = self.parsed(name, &format!("an integer from 1 to {max}"), errors);
        match value {
            None => default,
            Some(v) if (1..=max).contains(&v) => v,
            Some(_) => {
                errors.push(name, format!("must be an integer from 1 to {max}"));
                default
            }
        }
    }
}

/// A body that is JSON, or an HTML form (`application/x-www-form-urlencoded`,
/// every field a string but `name[]` lists of ids and `name:int` ids): for routes that plain HTML forms post to, so they
/// work without JavaScript. `.1` tells which it was.
pub struct FormOrJson<T>(pub T, pub bool);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for FormOrJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_form = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| {
                ct.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !is_form {
            return Body::<T>::from_request(req, state)
                .await
                .map(|Body(t)| FormOrJson(t, false));
        }
        let bytes = raw_bytes(req, state).await?;
        // `name[]` fields (checkboxes) gather into a list; their values are
        // ids, so those that are whole numbers go as numbers.
        let mut fields = serde_json::Map::new();
        for (k, v) in form_urlencoded::parse(&bytes) {
            match k.strip_suffix("[]") {
                Some(list) => {
                    let item = v
                        .parse::<i64>()
                        .map(serde_json::Value::from)
                        .unwrap_or_else(|_| serde_json::Value::String(v.into_owned()));
                    let entry = fields
                        .entry(list.to_string())
                        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
                    if let serde_json::Value::Array(items) = entry {
                        items.push(item);
                    }
                }
                None => match k.strip_suffix(":int") {
                    // A hidden id (`incidentId:int`) goes as a number.
                    Some(name) => {
                        let value = v
                            .parse::<i64>()
                            .map(serde_json::Value::from)
                            .unwrap_or_else(|_| serde_json::Value::String(v.into_owned()));
                        fields.insert(name.to_string(), value);
                    }
                    None => {
                        fields.insert(k.into_owned(), serde_json::Value::String(v.into_owned()));
                    }
                },
            }
        }
        let json = serde_json::to_vec(&fields).map_err(|e| ApiError::Internal(e.to_string()))?;
        parse(&json).map(|t| FormOrJson(t, true))
    }
}

/// The items of a comma-separated, quality-weighted header (`Accept-Encoding`,
/// `Accept-Language`, `Accept`) as (token, q), q defaulting to 1.
pub fn weighted(
    headers: &axum::http::HeaderMap,
    name: header::HeaderName,
) -> impl Iterator<Item = (&str, f32)> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            let mut parts = item.split(';').map(str::trim);
            let token = parts.next().unwrap_or("");
            let q = parts
                .find_map(|p| p.strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            (token, q)
        })
}
