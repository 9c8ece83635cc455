//! What every handler shares.

use crate::ServerSettings;
use crate::rate_limit::Limits;
use crate::snapshot::Snapshots;
use std::sync::Arc;
use upstate_store::Db;

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub limits: Arc<Limits>,
    pub snapshots: Arc<Snapshots>,
    pub settings: Arc<ServerSettings>,
}
