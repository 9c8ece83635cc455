//! While the database does not answer (`Db::reachable`, probed each
//! second), a change cannot be made: it is refused at once with a 503
//! problem and `Retry-After`, instead of holding the client until a
//! connection attempt of its own times out. Reads pass: public pages come
//! from memory (`snapshot.rs` serves the last one it built).
//!
//! A change already under way when the database goes is given up as soon
//! as two probes in a row say so (within about 2.5 s), with the same 503: it
//! would otherwise wait out its pool's connection timeouts, once per retry
//! (30-40 s seen behind a load balancer). Whether it was stored is then as
//! unknown as after any cut connection: the 503 says to try again.

use crate::error::ApiError;
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use upstate_store::Db;

/// How often a change under way looks whether the database went away.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `change` (a request that is not a read: `App` sends reads past)
/// while the database answers, or refuses it when it does not.
pub(crate) async fn hold(
    db: &Db,
    method: &Method,
    family: &'static str,
    change: impl Future<Output = Response>,
) -> Response {
    if db.reachable() {
        tokio::pin!(change);
        // Away for 1.5 s on end, two probes a second apart: one probe that
        // missed its second under load does not cost a change that was
        // about to succeed.
        let mut away = 0;
        loop {
            tokio::select! {
                res = &mut change => return res,
                () = tokio::time::sleep(WATCH_EVERY) => {
                    away = if db.reachable() { 0 } else { away + 1 };
                    if away >= 15 {
                        tracing::debug!("the database went away: a change under way was given up");
                        return ApiError::Unavailable.into_response();
                    }
                }
            }
        }
    }
    tracing::debug!(
        %method,
        family,
        "the database does not answer: a change was refused"
    );
    ApiError::Unavailable.into_response()
}
