//! `/api/monitor/check`: may an outside alerting tool page someone about
//! this component now? Not while a maintenance window covering it is in
//! progress, or scheduled over this very moment (an automatic start may lag
//! a second behind its time). Keys with the read scope and signed-in people
//! may ask (PAGES_READ). `GET` asks for one component, `POST` for several.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id, MaintenanceStatus, Timestamp};
use upstate_store::maintenance::{self, MaintenanceFilter};
use upstate_store::{StoreError, components};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(check_one, check_many))
}

/// A window that silences alerts.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Window {
    id: Id,
    title: String,
    status: MaintenanceStatus,
    scheduled_start_time: Timestamp,
    scheduled_end_time: Timestamp,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Check {
    component_id: Id,
    /// True while a maintenance window covers the component: do not page.
    suppressed: bool,
    /// `maintenance` when suppressed, else null.
    reason: Option<&'static str>,
    /// The windows covering it now.
    maintenance: Vec<Window>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CheckMany {
    #[schema(required, nullable = false, min_items = 1, max_items = 500)]
    component_ids: Option<Vec<Id>>,
}

async fn check(state: &AppState, component: Id, now: Timestamp) -> Result<Check, StoreError> {
    let c = components::get(&state.db, component).await?;
    let open = maintenance::list(
        &state.db,
        &MaintenanceFilter {
            page_id: Some(c.status_page_id),
            finished: Some(false),
            ..Default::default()
        },
    )
    .await?;
    let covering: Vec<Window> = open
        .into_iter()
        .filter(|m| m.affected_components.contains(&component))
        .filter(|m| {
            m.status == MaintenanceStatus::InProgress
                || (m.status == MaintenanceStatus::Scheduled
                    && m.scheduled_start_time.millis() <= now.millis()
                    && now.millis() < m.scheduled_end_time.millis())
        })
        .map(|m| Window {
            id: m.id,
            title: m.title,
            status: m.status,
            scheduled_start_time: m.scheduled_start_time,
            scheduled_end_time: m.scheduled_end_time,
        })
        .collect();
    Ok(Check {
        component_id: component,
        suppressed: !covering.is_empty(),
        reason: (!covering.is_empty()).then_some("maintenance"),
        maintenance: covering,
    })
}

#[utoipa::path(get, path = "/api/monitor/check", tag = "monitoring", operation_id = "checkMonitor",
    summary = "Is this component in maintenance right now, with alerts to be suppressed? (needs PAGES_READ)",
    params(("componentId" = i64, Query, description = "The component")),
    responses((status = 200, body = Data<Check>), SessionErrors, BadQuery, NotFound),
    security(("api_key" = []), ("session" = [])))]
async fn check_one(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let mut e = FieldErrors::new();
    let id = q.id("componentId", &mut e);
    if id.is_none() && e.is_empty() {
        e.push("componentId", "is required");
    }
    e.into_result()?;
    let id = id.unwrap_or_default();
    Ok(data(check(&state, id, state.db.clock.now()).await?))
}

#[utoipa::path(post, path = "/api/monitor/check", tag = "monitoring", operation_id = "checkMonitors",
    summary = "The same question for several components at once (needs PAGES_READ)",
    request_body = CheckMany,
    responses((status = 200, body = Data<Vec<Check>>), SessionErrors, BodyErrors),
    security(("api_key" = []), ("session" = [])))]
async fn check_many(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<CheckMany>,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let ids = match input.component_ids {
        Some(ids) if !ids.is_empty() && ids.len() <= 500 => ids,
        Some(_) => {
            return Err(
                FieldErrors::single("componentIds", "must name 1 to 500 components").into(),
            );
        }
        None => return Err(FieldErrors::single("componentIds", "is required").into()),
    };
    let now = state.db.clock.now();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match check(&state, id, now).await {
            Ok(c) => out.push(c),
            Err(StoreError::NotFound(_)) => {
                return Err(
                    FieldErrors::single("componentIds", format!("{id} is no component")).into(),
                );
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(data(out))
}
