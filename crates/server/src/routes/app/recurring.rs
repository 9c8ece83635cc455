//! `/api/maintenance/recurring`: templates of maintenance that repeats by an
//! RFC 5545 RRULE. `GET` makes the windows of upcoming occurrences that do
//! not exist yet (the seed's "meant to be called periodically"; the
//! scheduler does the same on its own) and lists the templates with their
//! next occurrences. See docs/maintenance.md.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::{Body, PathId, QueryParams};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, Message, created, data, deleted};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::Serialize;
use upstate_core::recurring::{Recurring, RecurringInput};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Id, Timestamp};
use upstate_store::{pages, recurring};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(expand_and_list, create))
        .routes(routes!(one, change, remove))
        .routes(routes!(preview))
}

/// One occurrence a template would make.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PlannedWindow {
    #[schema(value_type = String)]
    start: Timestamp,
    #[schema(value_type = String)]
    end: Timestamp,
}

/// What a template would do, before it is saved.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct RecurringPreview {
    /// The RRULE it makes (from `repeat` when that was given).
    rrule: String,
    /// The rule in words, where it is one of the shapes people pick.
    in_words: Option<String>,
    /// The page's time zone, in which the rule runs.
    time_zone: String,
    /// The next occurrences from now (at most five).
    next: Vec<PlannedWindow>,
}

/// How many occurrences a preview shows.
const PREVIEW_COUNT: u16 = 5;

#[utoipa::path(post, path = "/api/maintenance/recurring/preview", tag = "maintenance", operation_id = "previewRecurringMaintenance",
    summary = "The next five occurrences a template would make, without saving it (needs INCIDENTS_WRITE)",
    description = "Takes the body of a create; `title` may be left out. Field errors are those a create would answer.",
    request_body = RecurringInput,
    responses((status = 200, body = Data<RecurringPreview>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn preview(
    State(state): State<AppState>,
    caller: Caller,
    Body(mut input): Body<RecurringInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    if input.title.as_deref().is_none_or(|t| t.trim().is_empty()) {
        input.title = Some("Preview".into());
    }
    let zones = zones(&state).await?;
    let fields = input.apply(None, zone_of(&zones))?;
    let page_zone = zone_of(&zones)(fields.status_page_id).unwrap_or_else(|| "UTC".into());
    let tz = fields.zone(&page_zone).to_string();
    let now = state.db.clock.now();
    // Far enough for a yearly rule's five occurrences.
    let until = now.plus_millis(6 * 366 * 86_400_000);
    let starts = upstate_core::recurring::occurrences(
        &fields.rrule,
        &fields.first_start,
        &tz,
        now,
        until,
        PREVIEW_COUNT,
    )
    .map_err(|m| FieldErrors::single("rrule", m))?;
    let length = fields.duration_minutes * 60_000;
    Ok(data(RecurringPreview {
        in_words: upstate_core::recurring::in_words(&fields.rrule),
        rrule: fields.rrule,
        time_zone: tz,
        next: starts
            .into_iter()
            .map(|start| PlannedWindow {
                start,
                end: start.plus_millis(length),
            })
            .collect(),
    }))
}

/// A template and the starts of its next occurrences within its horizon.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Planned {
    #[serde(flatten)]
    template: Recurring,
    upcoming: Vec<Timestamp>,
}

/// What `GET` did and what there is.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Expanded {
    /// Ids of the maintenance windows this call made.
    created: Vec<Id>,
    templates: Vec<Planned>,
}

async fn planned(state: &AppState, r: Recurring) -> ApiResult<Planned> {
    let upcoming = recurring::upcoming(&state.db, &r, state.db.clock.now()).await?;
    Ok(Planned {
        template: r,
        upcoming,
    })
}

/// The time zone of each page, for checking a rule against its page.
async fn zones(state: &AppState) -> ApiResult<Vec<(Id, String)>> {
    Ok(pages::list(&state.db)
        .await?
        .into_iter()
        .map(|p| (p.id, p.time_zone))
        .collect())
}

fn zone_of(zones: &[(Id, String)]) -> impl Fn(Id) -> Option<String> + '_ {
    |id| zones.iter().find(|(p, _)| *p == id).map(|(_, z)| z.clone())
}

#[utoipa::path(get, path = "/api/maintenance/recurring", tag = "maintenance", operation_id = "expandRecurringMaintenance",
    summary = "Make the windows of upcoming occurrences, then list the templates (needs INCIDENTS_WRITE)",
    description = "Idempotent: each occurrence's window is made once, whoever calls (the scheduler does so every round). \
        A window deleted by an operator is not made again.",
    params(("statusPageId" = Option<i64>, Query, description = "Only this page's templates")),
    responses((status = 200, body = Data<Expanded>), SessionErrors, BadQuery),
    security(("session" = []), ("api_key" = [])))]
async fn expand_and_list(
    State(state): State<AppState>,
    caller: Caller,
    q: QueryParams,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let mut e = FieldErrors::new();
    let page = q.id("statusPageId", &mut e);
    e.into_result()?;
    let created = recurring::expand(&state.db, state.db.clock.now()).await?;
    let mut templates = Vec::new();
    for r in recurring::list(&state.db, page).await? {
        templates.push(planned(&state, r).await?);
    }
    Ok(data(Expanded { created, templates }))
}

#[utoipa::path(post, path = "/api/maintenance/recurring", tag = "maintenance", operation_id = "createRecurringMaintenance",
    summary = "Create a recurring maintenance template (needs INCIDENTS_WRITE); its windows within the horizon are made at once",
    request_body = RecurringInput,
    responses((status = 201, body = Data<Planned>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(input): Body<RecurringInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let zones = zones(&state).await?;
    let fields = input.apply(None, zone_of(&zones))?;
    let r = recurring::create(&state.db, &caller.audit, &fields).await?;
    recurring::expand_one(&state.db, r.id, state.db.clock.now()).await?;
    let id = r.id;
    Ok(created(
        format!("/api/maintenance/recurring/{id}"),
        planned(&state, r).await?,
    ))
}

#[utoipa::path(get, path = "/api/maintenance/recurring/{id}", tag = "maintenance", operation_id = "getRecurringMaintenance",
    summary = "One template and its next occurrences (needs PAGES_READ)", params(("id" = i64, Path)),
    responses((status = 200, body = Data<Planned>), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn one(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let r = recurring::get(&state.db, id).await?;
    Ok(data(planned(&state, r).await?))
}

#[utoipa::path(put, path = "/api/maintenance/recurring/{id}", tag = "maintenance", operation_id = "updateRecurringMaintenance",
    summary = "Change a template (any subset; needs INCIDENTS_WRITE): windows not made yet follow the change",
    params(("id" = i64, Path)), request_body = RecurringInput,
    responses((status = 200, body = Data<Planned>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn change(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
    Body(input): Body<RecurringInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    let current = recurring::get(&state.db, id).await?;
    let zones = zones(&state).await?;
    let fields = input.apply(Some(&recurring::fields(&current)), zone_of(&zones))?;
    let r = recurring::update(&state.db, &caller.audit, id, &fields).await?;
    recurring::expand_one(&state.db, r.id, state.db.clock.now()).await?;
    Ok(data(planned(&state, r).await?))
}

#[utoipa::path(delete, path = "/api/maintenance/recurring/{id}", tag = "maintenance", operation_id = "deleteRecurringMaintenance",
    summary = "Delete a template (needs INCIDENTS_WRITE); windows it made stay", params(("id" = i64, Path)),
    responses((status = 200, body = Message), SessionErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    PathId(id): PathId,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    recurring::delete(&state.db, &caller.audit, id).await?;
    Ok(deleted("Recurring maintenance"))
}
