//! What every handler shares.

use crate::rate_limit::Limits;
use std::sync::Arc;
use upstate_store::Db;

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub limits: Arc<Limits>,
}
