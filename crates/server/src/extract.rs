//! Request parsing at the edge: bodies become core inputs, ids become numbers,
//! and every way a request can be malformed becomes a precise ApiError.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{StatusCode, header, request::Parts};
use serde::de::DeserializeOwned;
use upstate_core::Id;
use upstate_core::input::{self, JsonError, Query};

/// A JSON body that must be present.
pub struct Body<T>(pub T);

/// What an importer reads, as sent: read (`Upload::read`) only once the
/// caller is known to be allowed, so a stranger learns nothing from how a
/// document is refused.
pub struct Upload {
    sqlite: bool,
    empty: bool,
    bytes: Bytes,
}

/// An upload, read: a JSON document, or a SQLite database file (Uptime
/// Kuma's `kuma.db`) sent as `application/vnd.sqlite3`.
pub enum Uploaded {
    Json(serde_json::Value),
    Sqlite(Bytes),
}

/// The media type of a SQLite database file (IANA's registration).
pub const SQLITE_MEDIA_TYPE: &str = "application/vnd.sqlite3";

impl<S: Send + Sync> FromRequest<S> for Upload {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let sqlite = media_type(&req).as_deref() == Some(SQLITE_MEDIA_TYPE);
        let (empty, bytes) = if sqlite {
            let bytes = raw_bytes(req, state).await?;
            (bytes.is_empty(), bytes)
        } else {
            read_bytes(req, state).await?
        };
        Ok(Upload {
            sqlite,
            empty,
            bytes,
        })
    }
}

impl Upload {
    pub fn read(self) -> Result<Uploaded, ApiError> {
        if self.sqlite {
            if !self.bytes.starts_with(b"SQLite format 3\0") {
                return Err(ApiError::validation(
                    "body",
                    "is not a SQLite database file",
                ));
            }
            return Ok(Uploaded::Sqlite(self.bytes));
        }
        if self.empty {
            return Err(ApiError::BadRequest("a JSON body is required".into()));
        }
        parse(&self.bytes).map(Uploaded::Json)
    }
}

/// A JSON body kept as sent, for a route that checks a signature over
/// the bytes before it reads them (`RawJson::value`).
pub struct RawJson(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawJson {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let (empty, bytes) = read_bytes(req, state).await?;
        if empty {
            return Err(ApiError::BadRequest("a JSON body is required".into()));
        }
        Ok(RawJson(bytes))
    }
}

impl RawJson {
    pub fn value(&self) -> Result<serde_json::Value, ApiError> {
        parse(&self.0)
    }
}

/// A JSON body that may be left out (resolve, start, complete, cancel).
pub struct OptionalBody<T>(pub T);

/// The request's media type, lower-case, without its parameters.
fn media_type(req: &Request) -> Option<String> {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            ct.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}

async fn read_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<(bool, Bytes), ApiError> {
    let is_json = media_type(&req).map(|mime| {
        mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
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

/// The one strict reading of every JSON body (`input::read_json`): 400 when
/// it is not one well-formed object, 422 naming every field that does not fit.
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    input::read_json(bytes).map_err(|e| match e {
        JsonError::Malformed(why) => ApiError::BadRequest(why),
        JsonError::Invalid(errors) => ApiError::Validation(errors),
    })
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
        // JSON `null` says "no body" as plainly as an empty one does (the
        // document describes these bodies as the input or null).
        if empty || bytes.trim_ascii() == b"null" {
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
        path_id(&raw).map(PathId)
    }
}

fn path_id(raw: &str) -> Result<Id, ApiError> {
    raw.parse::<Id>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::NotFound(format!("no resource with id {raw:?}")))
}

/// Two numeric ids from the path: a resource and one of its own
/// (`/statuspages/{id}/viewers/{viewerId}`).
pub struct PathIds(pub Id, pub Id);

impl<S: Send + Sync> FromRequestParts<S> for PathIds {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path((a, b)) = Path::<(String, String)>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::NotFound("no such resource".into()))?;
        Ok(PathIds(path_id(&a)?, path_id(&b)?))
    }
}

/// Query parameters (`input::Query`), read from the request's URI.
pub struct QueryParams(pub Query);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(QueryParams(Query::parse(parts.uri.query().unwrap_or(""))))
    }
}

impl std::ops::Deref for QueryParams {
    type Target = Query;
    fn deref(&self) -> &Query {
        &self.0
    }
}

/// A body that is JSON, or an HTML form (`application/x-www-form-urlencoded`,
/// every field a string but `name[]` lists of ids and `name:int` ids): for routes that plain HTML forms post to, so they
/// work without JavaScript. `.1` tells which it was.
pub struct FormOrJson<T>(pub T, pub bool);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for FormOrJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_form = media_type(&req).as_deref() == Some("application/x-www-form-urlencoded");
        if !is_form {
            return Body::<T>::from_request(req, state)
                .await
                .map(|Body(t)| FormOrJson(t, false));
        }
        let bytes = raw_bytes(req, state).await?;
        let json = input::form_as_json(&bytes);
        parse(&json).map(|t| FormOrJson(t, true))
    }
}
