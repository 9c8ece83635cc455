//! What every handler shares. One `Arc`, because axum clones the state for
//! every request: a single reference count to bump instead of one per field
//! (measured on the public read path; see docs/performance.md).

use crate::ServerSettings;
use crate::rate_limit::Limits;
use crate::snapshot::Snapshots;
use std::ops::Deref;
use std::sync::Arc;
use upstate_store::Db;

#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub db: Db,
    /// Makes test messages (`/api/notifications/{id}/test`) as the worker
    /// makes deliveries.
    pub sender: upstate_jobs::Sender,
    /// Runs "test now" checks and wakes the monitor loop after a change.
    pub checker: upstate_jobs::monitors::Checker,
    pub limits: Arc<Limits>,
    /// Redis, when limits are counted across instances.
    pub shared_limits: crate::rate_limit::SharedLimits,
    /// Visitors' sign-ups per client address (`POST /api/subscribers`).
    pub subscribe_limits: Arc<Limits>,
    /// Ways out to the identity provider per client address (`/api/auth/sso`).
    pub sso_limits: Arc<Limits>,
    /// Visitors' comments per client address (`POST /api/comments`).
    pub comment_limits: Arc<Limits>,
    pub snapshots: Snapshots,
    /// What this process counts for `/api/metrics`.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
    pub settings: ServerSettings,
    /// When this process started serving (for `/api/admin/system`).
    pub started: std::time::Instant,
    /// The team's identity provider (single sign-on).
    pub sso: crate::sso::Provider,
    /// Every public route's per-address limiter, for the development reset.
    pub public_limiters: std::sync::Mutex<Vec<std::sync::Weak<Limits>>>,
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        AppState(Arc::new(shared))
    }
}

impl Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}
