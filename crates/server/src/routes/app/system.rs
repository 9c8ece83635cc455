//! `/api/admin/system` (what runs: version, uptime, backend, database size,
//! instance) and `/api/admin/cache` (the public snapshot cache's figures;
//! `POST` drops it, so every page is rebuilt from the database on its next
//! read). For admins (SETTINGS_WRITE), signed in or with an admin key.
//! `/api/admin/reset-rate-limits` exists only in development mode (`--dev`).

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
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
        .routes(routes!(reset_rate_limits))
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

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct RateLimitsReset {
    /// Subjects whose failed-secret counts (and locks) were forgotten.
    failure_counters_cleared: u64,
    /// In-memory limiters emptied: API keys, then every public route's.
    limiters_cleared: usize,
}

#[utoipa::path(post, path = "/api/admin/reset-rate-limits", tag = "system", operation_id = "resetRateLimits",
    summary = "Development only (`--dev`): forget every rate-limit count and lock on this instance",
    description = "Empties the API key limits and the per-address limits of public routes on this instance, and the failed-secret counters and locks (sign-in, 2FA, step-up, page passwords) shared by all instances. Answers 404 unless the server runs with `--dev` (`UPSTATE_DEV=true`).",
    responses((status = 200, body = Data<RateLimitsReset>), SessionErrors,
        (status = 404, description = "Not in development mode", content_type = "application/problem+json")),
    security(("session" = []), ("api_key" = [])))]
async fn reset_rate_limits(
    State(state): State<AppState>,
    caller: Result<Caller, ApiError>,
) -> ApiResult<Response> {
    // Outside development mode the route does not exist, for anyone: it
    // answers 404 before asking who calls.
    if !state.settings.dev {
        return Err(ApiError::NotFound(
            "no route POST /api/admin/reset-rate-limits: it exists only in development mode (--dev)".into(),
        ));
    }
    let caller = caller?;
    caller.require(Permission::SettingsWrite)?;
    state.limits.reset();
    let mut limiters_cleared = 1;
    if let Ok(mut all) = state.public_limiters.lock() {
        all.retain(|l| l.strong_count() > 0);
        for l in all.iter().filter_map(std::sync::Weak::upgrade) {
            l.reset();
            limiters_cleared += 1;
        }
    }
    let failure_counters_cleared =
        upstate_store::failures::reset_all(&state.db, &caller.audit).await?;
    tracing::warn!(by = %caller.audit.actor.label, "rate limits reset (development mode)");
    Ok(data(RateLimitsReset {
        failure_counters_cleared,
        limiters_cleared,
    }))
}
