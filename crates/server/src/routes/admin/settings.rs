//! Install-wide settings and the system screen.

use super::{Page, Screen, fail};
use crate::state::AppState;
use crate::views::admin as view;
use axum::extract::State;
use upstate_core::roles::Permission;
use upstate_store::pages;

pub(super) async fn system(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "system") {
        return Ok(refused);
    }
    let info = view::SystemInfo {
        version: env!("CARGO_PKG_VERSION"),
        uptime_seconds: state.started.elapsed().as_secs(),
        backend: match state.db.backend() {
            upstate_store::Backend::Sqlite => "sqlite",
            upstate_store::Backend::Postgres => "postgres",
        },
        database_bytes: state.db.size_bytes().await.map_err(fail)?,
        instance_id: state.db.changes.instance_id(),
        cache: state.snapshots.figures(),
        dev: state.settings.dev,
        selftest: crate::selftest::run(&state).await,
    };
    Ok(s.show(view::system(&s.frame("system"), s.flash(), &info)))
}

pub(super) async fn settings_screen(State(state): State<AppState>, s: Screen) -> Page {
    if let Some(refused) = s.refuse(Permission::SettingsWrite, "settings") {
        return Ok(refused);
    }
    let features = upstate_store::settings::features(&state.db)
        .await
        .map_err(fail)?;
    let all = pages::list(&state.db).await.map_err(fail)?;
    let languages: Vec<(&str, &str)> = crate::i18n::LANGS
        .iter()
        .map(|l| (l.code(), l.name()))
        .collect();
    let export = upstate_store::settings::export_settings(&state.db)
        .await
        .map_err(fail)?
        .view(
            upstate_store::settings::export_status(&state.db)
                .await
                .map_err(fail)?,
        );
    let sso = crate::sso::settings(&state).await.map_err(fail)?;
    let sso = crate::sso::view(&state, &sso);
    Ok(s.show(view::settings(
        &s.frame("settings"),
        s.flash(),
        &s.site,
        &features,
        &all,
        &languages,
        view::StaticCopy {
            export: &export,
            root: &state.settings.static_copy_root.display().to_string(),
            sso: &sso,
        },
    )))
}
