//! While the database does not answer (`Db::reachable`, probed each
//! second), a change cannot be made: it is refused at once with a 503
//! problem and `Retry-After`, instead of holding the client until a
//! connection attempt of its own times out. Reads pass: public pages come
//! from memory (`snapshot.rs` serves the last one it built).

use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use upstate_store::Db;

pub(crate) async fn refuse_changes(State(db): State<Db>, req: Request, next: Next) -> Response {
    if db.reachable() || matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    tracing::debug!(
        method = %req.method(),
        family = crate::telemetry::family(req.uri().path()),
        "the database does not answer: a change was refused"
    );
    ApiError::Unavailable.into_response()
}
