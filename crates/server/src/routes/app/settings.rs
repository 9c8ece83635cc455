//! `/api/settings` (site name, default page, default language),
//! `/api/features` (the feature switches) and `/api/export-settings` (where
//! the static copy is published). Anyone signed in (or any key)
//! may read them; changing them needs SETTINGS_WRITE. A change reaches every
//! page on every instance at once (`settings.changed` in the outbox).

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::Body;
use crate::i18n::LANGS;
use crate::openapi::{BodyErrors, SessionErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Map, Value};
use upstate_core::roles::Permission;
use upstate_core::settings::{Features, Settings, SettingsInput};
use upstate_core::static_copy::{ExportInput, ExportView};
use upstate_store::settings;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show_settings, change_settings))
        .routes(routes!(show_features, change_features))
        .routes(routes!(show_export, change_export))
}

#[utoipa::path(get, path = "/api/settings", tag = "settings", operation_id = "getSettings",
    summary = "The install's settings (needs PAGES_READ)",
    responses((status = 200, body = Data<Settings>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn show_settings(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(settings::settings(&state.db).await?))
}

#[utoipa::path(put, path = "/api/settings", tag = "settings", operation_id = "putSettings",
    summary = "Change any of the settings (needs SETTINGS_WRITE); `null` clears the default page or language",
    description = "`defaultPage` must be the slug of an existing page; `defaultLanguage` one of en, de, fr, es, ja, ar. Unknown fields are refused.",
    request_body = SettingsInput,
    responses((status = 200, body = Data<Settings>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn change_settings(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<SettingsInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let codes: Vec<&str> = LANGS.iter().map(|l| l.code()).collect();
    let next = settings::change_settings(&state.db, &caller.audit, |cur| input.apply(&cur, &codes))
        .await?;
    Ok(data(next))
}

#[utoipa::path(get, path = "/api/features", tag = "settings", operation_id = "getFeatures",
    summary = "The feature switches (needs PAGES_READ)",
    responses((status = 200, body = Data<Features>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn show_features(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    Ok(data(settings::features(&state.db).await?))
}

#[utoipa::path(put, path = "/api/features", tag = "settings", operation_id = "putFeatures",
    summary = "Turn features on or off (needs SETTINGS_WRITE): any subset of the switches, each true or false",
    description = "A switch that is off removes its feature everywhere: its route answers 404 and public pages drop their links to it. Unknown names are refused.",
    request_body = Features,
    responses((status = 200, body = Data<Features>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn change_features(
    State(state): State<AppState>,
    caller: Caller,
    Body(body): Body<Map<String, Value>>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let next =
        settings::change_features(&state.db, &caller.audit, |cur| cur.changed_by(&body)).await?;
    Ok(data(next))
}

#[utoipa::path(get, path = "/api/export-settings", tag = "settings", operation_id = "getExportSettings",
    summary = "Where the static copy of the public pages is published, and how the last publish went (needs SETTINGS_WRITE)",
    description = "The bucket's secret is never shown: `secretAccessKeySet` says one is saved.",
    responses((status = 200, body = Data<ExportView>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn show_export(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let saved = settings::export_settings(&state.db).await?;
    Ok(data(saved.view(settings::export_status(&state.db).await?)))
}

#[utoipa::path(put, path = "/api/export-settings", tag = "settings", operation_id = "putExportSettings",
    summary = "Set where the static copy is published after every change (needs SETTINGS_WRITE)",
    description = "The whole setting: `enabled`, a `directory` (a folder under the server's copy root, `static_copy_root`) and/or an S3-compatible bucket (`s3`). Leave `s3.secretAccessKey` out to keep the saved one of the same access key. Publishing starts within seconds; its outcome is in `status`.",
    request_body = ExportInput,
    responses((status = 200, body = Data<ExportView>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn change_export(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<ExportInput>,
) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let next =
        settings::change_export_settings(&state.db, &caller.audit, |cur| input.apply(&cur)).await?;
    Ok(data(next.view(settings::export_status(&state.db).await?)))
}
