//! Runs a request again when the database gave up on its change for a
//! moment's reason (`ApiError::Busy`: a deadlock or serialization failure on
//! PostgreSQL, a busy SQLite, no pooled connection free). Such a transaction
//! was rolled back whole, so running the same request again is what the
//! client would do, only sooner and without an error in between. Writers
//! take turns (`upstate_store::db::WriterTurn`), so this is the backstop,
//! not the plan. Reads never come here (`App` sends them past): the public
//! read path pays nothing for it.

use crate::error::Retryable;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use std::time::Duration;

/// Runs after the first: three more tries, about 20, 40 and 80 ms apart.
const RETRIES: u32 = 3;

/// Runs a change on `routes`, again while the database was busy.
pub(crate) async fn when_busy(req: Request, routes: Router, family: &'static str) -> Response {
    let (parts, body) = req.into_parts();
    // `request_gate` has read the body into memory already: no limit to
    // enforce here, and a copy per try is cheap.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return axum::response::IntoResponse::into_response(crate::error::ApiError::BadRequest(
            "the request body could not be read".into(),
        ));
    };
    let mut tries = 0;
    loop {
        let req = Request::from_parts(parts.clone(), Body::from(bytes.clone()));
        let res = crate::app::answer(routes.clone(), req).await;
        if res.extensions().get::<Retryable>().is_none() || tries == RETRIES {
            return res;
        }
        tries += 1;
        let jitter = u64::from(rand::random::<u8>() % 20);
        tokio::time::sleep(Duration::from_millis(10 * (1 << tries) + jitter)).await;
        // The path's family, not the path: paths carry tokens.
        tracing::info!(
            tries,
            method = %parts.method,
            family,
            "running a request again after the database was busy"
        );
    }
}
