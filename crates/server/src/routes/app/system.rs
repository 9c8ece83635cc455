//! `/api/admin/system` (what runs: version, uptime, backend, database size,
//! instance) and `/api/admin/cache` (the public snapshot cache's figures;
//! `POST` drops it, so every page is rebuilt from the database on its next
//! read). For admins (SETTINGS_WRITE), signed in or with an admin key.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::openapi::SessionErrors;
use crate::respond::{Data, data};
use crate::snapshot::CacheFigures;
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use upstate_core::roles::Permission;
use upstate_store::Backend;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(system))
        .routes(routes!(cache, drop_cache))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SystemBody {
    version: &'static str,
    /// Seconds since this instance started.
    uptime_seconds: u64,
    /// `sqlite` or `postgres`.
    backend: &'static str,
    database_bytes: i64,
    /// This instance among several on one PostgreSQL database (random at start).
    instance_id: String,
}

#[utoipa::path(get, path = "/api/admin/system", tag = "system", operation_id = "systemInfo",
    summary = "Version, uptime, database backend and size, instance id",
    responses((status = 200, body = Data<SystemBody>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn system(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(SystemBody {
        version: env!("CARGO_PKG_VERSION"),
        uptime_seconds: state.started.elapsed().as_secs(),
        backend: match state.db.backend() {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        },
        database_bytes: state.db.size_bytes().await?,
        instance_id: state.db.changes.instance_id(),
    }))
}

#[utoipa::path(get, path = "/api/admin/cache", tag = "system", operation_id = "cacheFigures",
    summary = "The public snapshot cache of this instance: pages, bodies, bytes, hosts",
    responses((status = 200, body = Data<CacheFigures>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn cache(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    Ok(data(state.snapshots.figures()))
}

#[utoipa::path(post, path = "/api/admin/cache", tag = "system", operation_id = "dropCache",
    summary = "Drop this instance's public snapshot cache (pages rebuild on their next read); answers the figures after",
    responses((status = 200, body = Data<CacheFigures>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn drop_cache(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    state.snapshots.drop_all();
    tracing::info!(by = %caller.audit.actor.label, "snapshot cache dropped");
    Ok(data(state.snapshots.figures()))
}
