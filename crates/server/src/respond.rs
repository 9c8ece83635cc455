//! Response shapes of the management API: `{"data": ...}` for resources,
//! 201 + `Location` for creations, `{"message": ...}` for deletions.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The `data` wrapper of every management API body. Serialized directly (not
/// through `json!`) so fields keep their declared order.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Data<T> {
    pub data: T,
}

/// The body of a deletion: `{"message": "<Resource> deleted"}`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Message {
    pub message: String,
}

pub fn data<T: Serialize>(value: T) -> Response {
    nosniff(Json(Data { data: value }).into_response())
}

/// Every JSON response says it is JSON and nothing else.
pub fn nosniff(mut res: Response) -> Response {
    res.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

/// Where a route family is mounted (`/api/v1`, `/api`), for the `Location`
/// of what its shared handlers create.
#[derive(Clone, Copy)]
pub struct MountedAt(pub &'static str);

pub fn created<T: Serialize>(location: String, value: T) -> Response {
    let mut res = nosniff((StatusCode::CREATED, Json(Data { data: value })).into_response());
    if let Ok(v) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

pub fn deleted(what: &str) -> Response {
    nosniff(
        Json(Message {
            message: format!("{what} deleted"),
        })
        .into_response(),
    )
}
