//! `GET /api/selftest`: the self-test (`crate::selftest`) for an operator
//! asking "is it me or Upstate?"; restricted to admins and admin keys.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::openapi::SessionErrors;
use crate::respond::Data;
use crate::selftest::{self, Report};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use upstate_core::roles::Permission;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(run_selftest))
}

#[utoipa::path(get, path = "/api/selftest", tag = "operations", operation_id = "selftest",
    summary = "Run the self-test: database write and read back, migrations, background loops, SMTP, disk (needs SETTINGS_WRITE)",
    description = "Answers 200 when every check passes and 503 when one fails; either way the body lists each check with its timing.",
    responses((status = 200, body = Data<Report>), (status = 503, description = "A check failed", body = Data<Report>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn run_selftest(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let report = selftest::run(&state).await;
    let status = if report.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    Ok((status, Json(Data { data: report })).into_response())
}
