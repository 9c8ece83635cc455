//! Incidents and the updates of their timeline.

use super::{id_set, required};
use crate::Id;
use crate::status::{ComponentStatus, Impact, IncidentStatus};
use crate::timestamp::Timestamp;
use crate::validate::{self, FieldErrors};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IncidentUpdate {
    pub id: Id,
    pub message: String,
    pub status: IncidentStatus,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    pub id: Id,
    pub title: String,
    pub status: IncidentStatus,
    pub impact: Impact,
    pub status_page_id: Id,
    pub created_at: Timestamp,
    pub resolved_at: Option<Timestamp>,
    /// Newest first, as status pages show a timeline.
    pub updates: Vec<IncidentUpdate>,
    /// Ids of the affected components.
    pub affected_components: Vec<Id>,
    /// Not in the v1 shape; for views that show it.
    #[serde(skip)]
    pub updated_at: Timestamp,
}

/// One affected component and the status an incident's write moves it to
/// (Statuspage's "component status" beside each affected component).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ComponentStatusChange {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub component_id: Id,
    pub status: ComponentStatus,
}

/// `componentStatuses` checked: each component named once.
fn status_changes(
    e: &mut FieldErrors,
    raw: Option<Vec<ComponentStatusChange>>,
) -> Vec<ComponentStatusChange> {
    let list = raw.unwrap_or_default();
    let mut seen: Vec<Id> = list.iter().map(|c| c.component_id).collect();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        e.push(
            "componentStatuses",
            format!("names component {} more than once", w[0]),
        );
    }
    list
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewIncidentInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub title: Option<String>,
    pub status: Option<IncidentStatus>,
    pub impact: Option<Impact>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::optional_message))]
    pub message: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
    /// Affected components and the status each goes to, in the same
    /// transaction (they join `componentIds`).
    pub component_statuses: Option<Vec<ComponentStatusChange>>,
    /// `false`: the page's subscribers are not told of this change (team
    /// channels, the page and its live visitors are); default `true`.
    pub notify: Option<bool>,
    /// When it began, to record an incident of the past (RFC 3339; not in
    /// the future). Nobody is notified of a record of the past.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub created_at: Option<String>,
    /// When it was resolved (needs `createdAt`; between it and now): the
    /// incident is recorded resolved, with a closing update at that time,
    /// and its components' history shows the statuses of
    /// `componentStatuses` between the two.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub resolved_at: Option<String>,
}

/// When a past incident happened, as recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PastTimes {
    pub created_at: Timestamp,
    pub resolved_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewIncident {
    pub title: String,
    pub status: IncidentStatus,
    pub impact: Impact,
    pub status_page_id: Id,
    pub message: String,
    /// Every affected component, those in `component_statuses` included.
    pub component_ids: Vec<Id>,
    pub component_statuses: Vec<ComponentStatusChange>,
    /// Set when the incident is a record of the past.
    pub past: Option<PastTimes>,
}

impl NewIncidentInput {
    pub fn validate(self) -> Result<NewIncident, FieldErrors> {
        let mut e = FieldErrors::new();
        let title = required(&mut e, "title", self.title, validate::name);
        if self.status_page_id.is_none() {
            e.push("statusPageId", "is required");
        }
        let message = e.check(
            "message",
            validate::text(self.message.as_deref().unwrap_or(""), validate::MESSAGE_MAX),
        );
        let changes = status_changes(&mut e, self.component_statuses);
        let mut ids = self.component_ids.unwrap_or_default();
        ids.extend(changes.iter().map(|c| c.component_id));
        let created_at = self
            .created_at
            .as_deref()
            .and_then(|t| e.check("createdAt", Timestamp::parse(t)));
        let resolved_at = self
            .resolved_at
            .as_deref()
            .and_then(|t| e.check("resolvedAt", Timestamp::parse(t)));
        let mut status = self.status.unwrap_or(IncidentStatus::Investigating);
        let mut resolved_at = resolved_at;
        if self.resolved_at.is_some() {
            match (created_at, resolved_at) {
                (None, _) if self.created_at.is_none() => {
                    e.push("resolvedAt", "needs createdAt: when the incident began");
                }
                (Some(c), Some(r)) if r < c => {
                    e.push("resolvedAt", "must not be before createdAt");
                }
                _ => {}
            }
        } else if status == IncidentStatus::Resolved {
            // Over as soon as it began.
            resolved_at = created_at;
        }
        // A past incident recorded resolved begins as investigated; its
        // closing update says resolved.
        if resolved_at.is_some() && status == IncidentStatus::Resolved {
            status = IncidentStatus::Investigating;
        }
        let past = created_at.map(|created_at| PastTimes {
            created_at,
            resolved_at,
        });
        match (title, message, self.status_page_id) {
            (Some(title), Some(message), Some(status_page_id)) if e.is_empty() => Ok(NewIncident {
                past,
                title,
                status,
                impact: self.impact.unwrap_or(Impact::None),
                status_page_id,
                message,
                component_ids: id_set(ids),
                component_statuses: changes,
            }),
            _ => Err(e),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
pub struct IncidentPatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub title: Option<String>,
    pub status: Option<IncidentStatus>,
    pub impact: Option<Impact>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::message))]
    pub message: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
    /// Components whose status moves with this change (they become affected).
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub component_statuses: Option<Vec<ComponentStatusChange>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct IncidentPatch {
    pub title: Option<String>,
    pub status: Option<IncidentStatus>,
    pub impact: Option<Impact>,
    /// Text of the timeline entry recorded when the status changes.
    pub message: Option<String>,
    pub component_ids: Option<Vec<Id>>,
    pub component_statuses: Vec<ComponentStatusChange>,
}

impl IncidentPatchInput {
    pub fn validate(self) -> Result<IncidentPatch, FieldErrors> {
        let mut e = FieldErrors::new();
        let patch = IncidentPatch {
            title: self
                .title
                .and_then(|v| e.check("title", validate::name(&v))),
            status: self.status,
            impact: self.impact,
            message: self
                .message
                .and_then(|v| e.check("message", validate::text(&v, validate::MESSAGE_MAX))),
            component_ids: self.component_ids.map(|ids| {
                let extra = self.component_statuses.iter().flatten();
                id_set(
                    ids.into_iter()
                        .chain(extra.map(|c| c.component_id))
                        .collect(),
                )
            }),
            component_statuses: status_changes(&mut e, self.component_statuses),
        };
        if e.is_empty() && patch == IncidentPatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewIncidentUpdateInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::message, required))]
    pub message: Option<String>,
    pub status: Option<IncidentStatus>,
    /// Components whose status moves with this update (they become affected).
    pub component_statuses: Option<Vec<ComponentStatusChange>>,
    /// `false`: the page's subscribers are not told of this change (team
    /// channels, the page and its live visitors are); default `true`.
    pub notify: Option<bool>,
    /// When it was said, to record the timeline of a past incident (RFC
    /// 3339): not in the future, not before the incident's last update.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub created_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewIncidentUpdate {
    pub message: String,
    /// None keeps the incident's current status.
    pub status: Option<IncidentStatus>,
    pub component_statuses: Vec<ComponentStatusChange>,
    /// Set for an update of the past.
    pub at: Option<Timestamp>,
}

impl NewIncidentUpdateInput {
    pub fn validate(self) -> Result<NewIncidentUpdate, FieldErrors> {
        let mut e = FieldErrors::new();
        let message = required(&mut e, "message", self.message, validate::message);
        let component_statuses = status_changes(&mut e, self.component_statuses);
        let at = self
            .created_at
            .as_deref()
            .and_then(|t| e.check("createdAt", Timestamp::parse(t)));
        match message {
            Some(message) if e.is_empty() => Ok(NewIncidentUpdate {
                message,
                status: self.status,
                component_statuses,
                at,
            }),
            _ => Err(e),
        }
    }
}

/// Body of an incident's resolve: an optional closing message and the
/// statuses affected components go back to (commonly `operational`).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResolveInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::optional_message))]
    pub message: Option<String>,
    pub component_statuses: Option<Vec<ComponentStatusChange>>,
    /// `false`: the page's subscribers are not told of this change (team
    /// channels, the page and its live visitors are); default `true`.
    pub notify: Option<bool>,
}

impl ResolveInput {
    pub fn validate(self) -> Result<(String, Vec<ComponentStatusChange>), FieldErrors> {
        let mut e = FieldErrors::new();
        let m = e.check(
            "message",
            validate::text(self.message.as_deref().unwrap_or(""), validate::MESSAGE_MAX),
        );
        let changes = status_changes(&mut e, self.component_statuses);
        e.into_result().map(|()| (m.unwrap_or_default(), changes))
    }
}

/// `POST /api/incident-updates`: an update posted by naming its incident.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IncidentUpdatePost {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub incident_id: Option<Id>,
    #[serde(flatten)]
    pub update: NewIncidentUpdateInput,
}
