//! `POST /api/incidents/notice-preview`: what people will be told of an
//! incident change before it is posted: the headline the fan-out writes,
//! the components it names, how many subscribers and which team channels
//! get it (none of the subscribers when "notify subscribers" is off).

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::extract::Body;
use crate::openapi::{BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use upstate_core::notify::reaches;
use upstate_core::roles::Permission;
use upstate_core::{ComponentStatus, ComponentStatusChange, FieldErrors, Id, IncidentStatus};
use upstate_store::{components, incidents, notifications, subscribers};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(preview))
}

/// The change as the form holds it, before it is posted: about an
/// incident (`incidentId`) or a new one on a page (`statusPageId`), one of
/// them.
#[derive(Deserialize)]
#[serde(transparent)]
struct NoticeInput(NoticeFields);

impl utoipa::PartialSchema for NoticeInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::openapi::exactly_one_of(
            <NoticeFields as utoipa::PartialSchema>::schema(),
            &["incidentId", "statusPageId"],
        )
    }
}

impl utoipa::ToSchema for NoticeInput {}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NoticeFields {
    /// The incident an update or the resolution is about; absent for a
    /// new incident.
    #[schema(schema_with = upstate_core::schema::id)]
    incident_id: Option<Id>,
    /// A new incident's page.
    #[schema(schema_with = upstate_core::schema::id)]
    status_page_id: Option<Id>,
    /// A new incident's title.
    title: Option<String>,
    /// The status the change sets (an update's; a new incident's).
    status: Option<IncidentStatus>,
    /// `true`: the change is the resolution.
    resolve: Option<bool>,
    component_ids: Option<Vec<Id>>,
    component_statuses: Option<Vec<ComponentStatusChange>>,
    /// As the change will be posted: `false` tells no subscriber.
    notify: Option<bool>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NamedComponent {
    id: Id,
    name: String,
    status: ComponentStatus,
}

/// What the people told will read, and who they are.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NoticePreview {
    /// The message's headline (an email's subject).
    headline: String,
    /// The language messages are written in (the install's).
    language: String,
    /// The components it names, with their status after the change.
    components: Vec<NamedComponent>,
    /// Subscribers who will be told (0 when `notify` is false).
    subscribers: i64,
    /// The team channels that will be told, by name.
    channels: Vec<String>,
    notify: bool,
}

#[utoipa::path(post, path = "/api/incidents/notice-preview", tag = "incidents", operation_id = "previewIncidentNotice",
    summary = "What subscribers and channels will be told of an incident change, before it is posted (needs INCIDENTS_WRITE)",
    request_body = NoticeInput,
    responses((status = 200, body = Data<NoticePreview>), SessionErrors, BodyErrors, NotFound),
    security(("session" = []), ("api_key" = [])))]
async fn preview(
    State(state): State<AppState>,
    caller: Caller,
    Body(NoticeInput(input)): Body<NoticeInput>,
) -> ApiResult<Response> {
    caller.require(Permission::IncidentsWrite)?;
    if input.incident_id.is_some() && input.status_page_id.is_some() {
        // An update's page is its incident's: which one counts would be a guess.
        return Err(FieldErrors::single(
            "statusPageId",
            "give incidentId (a change to an incident) or statusPageId (a new one), not both",
        )
        .into());
    }
    let changes = input.component_statuses.unwrap_or_default();
    let mut about = input.component_ids.unwrap_or_default();
    about.extend(changes.iter().map(|c| c.component_id));
    let resolve = input.resolve == Some(true);
    let (page, title, status, opened, incident) = match input.incident_id {
        Some(id) => {
            let inc = incidents::get(&state.db, id).await?;
            about.extend(inc.affected_components.iter().copied());
            let status = if resolve {
                IncidentStatus::Resolved
            } else {
                input.status.unwrap_or(inc.status)
            };
            (inc.status_page_id, inc.title, status, false, Some(id))
        }
        None => {
            let Some(page) = input.status_page_id else {
                return Err(
                    FieldErrors::single("statusPageId", "is required without incidentId").into(),
                );
            };
            let title = input
                .title
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "…".into());
            let status = input.status.unwrap_or(IncidentStatus::Investigating);
            (page, title, status, true, None)
        }
    };
    about.sort_unstable();
    about.dedup();
    let on_page = components::list(&state.db, Some(page), None).await?;
    if input.incident_id.is_none() && on_page.is_empty() {
        // A page with no components may still not exist at all.
        upstate_store::pages::get(&state.db, page).await?;
    }
    let named: Vec<NamedComponent> = on_page
        .iter()
        .filter(|c| about.contains(&c.id))
        .map(|c| NamedComponent {
            id: c.id,
            name: c.name.clone(),
            status: changes
                .iter()
                .find(|m| m.component_id == c.id)
                .map_or(c.status, |m| m.status),
        })
        .collect();
    let about: Vec<Id> = named.iter().map(|c| c.id).collect();
    let kind = match (opened, resolve) {
        (true, _) => "incident.created",
        (false, true) => "incident.resolved",
        (false, false) => "incident.updated",
    };
    let notify = input.notify != Some(false);
    let subscribers = if notify {
        subscribers::audience(&state.db, page, &about, incident).await?
    } else {
        0
    };
    let channels = notifications::list(&state.db)
        .await?
        .into_iter()
        .filter(|c| {
            c.enabled
                && reaches(
                    page,
                    kind,
                    &about,
                    &c.page_ids,
                    &c.component_ids,
                    &c.event_kinds,
                )
        })
        .map(|c| c.name)
        .collect();
    let lang = state.snapshots.settings().await?.language();
    Ok(data(NoticePreview {
        headline: upstate_jobs::notices::incident_headline(lang, opened, status, &title),
        language: lang.code().to_string(),
        components: named,
        subscribers,
        channels,
        notify,
    }))
}
