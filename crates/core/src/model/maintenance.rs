//! Maintenance windows and their updates.

use super::{id_set, required};
use crate::Id;
use crate::status::MaintenanceStatus;
use crate::timestamp::Timestamp;
use crate::validate::{self, FieldErrors};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceUpdate {
    pub id: Id,
    pub message: String,
    pub status: MaintenanceStatus,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    pub id: Id,
    pub title: String,
    pub description: String,
    pub status: MaintenanceStatus,
    pub status_page_id: Id,
    pub scheduled_start_time: Timestamp,
    pub scheduled_end_time: Timestamp,
    pub auto_start: bool,
    /// Ids of the affected components.
    pub affected_components: Vec<Id>,
    /// The messages given to start/complete/cancel, newest first.
    pub updates: Vec<MaintenanceUpdate>,
    /// Not in the v1 shape; for views that show them.
    #[serde(skip)]
    pub created_at: Timestamp,
    #[serde(skip)]
    pub updated_at: Timestamp,
}

/// Body of maintenance's complete and cancel: an optional closing message.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClosingMessageInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::optional_message))]
    pub message: Option<String>,
}

impl ClosingMessageInput {
    pub fn validate(self) -> Result<String, FieldErrors> {
        let mut e = FieldErrors::new();
        let m = e.check(
            "message",
            validate::text(self.message.as_deref().unwrap_or(""), validate::MESSAGE_MAX),
        );
        e.into_result().map(|()| m.unwrap_or_default())
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewMaintenanceInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::window_start, required))]
    pub scheduled_start_time: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::window_end, required))]
    pub scheduled_end_time: Option<String>,
    pub auto_start: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewMaintenance {
    pub title: String,
    pub description: String,
    pub status_page_id: Id,
    pub scheduled_start_time: Timestamp,
    pub scheduled_end_time: Timestamp,
    pub auto_start: bool,
    pub component_ids: Vec<Id>,
}

fn window_order(e: &mut FieldErrors, start: Option<Timestamp>, end: Option<Timestamp>) {
    if let (Some(s), Some(en)) = (start, end)
        && en <= s
    {
        e.push("scheduledEndTime", "must be after scheduledStartTime");
    }
}

impl NewMaintenanceInput {
    pub fn validate(self) -> Result<NewMaintenance, FieldErrors> {
        let mut e = FieldErrors::new();
        let title = required(&mut e, "title", self.title, validate::name);
        let description = e.check(
            "description",
            validate::text(
                self.description.as_deref().unwrap_or(""),
                validate::DESCRIPTION_MAX,
            ),
        );
        if self.status_page_id.is_none() {
            e.push("statusPageId", "is required");
        }
        let start = required(
            &mut e,
            "scheduledStartTime",
            self.scheduled_start_time,
            Timestamp::parse,
        );
        let end = required(
            &mut e,
            "scheduledEndTime",
            self.scheduled_end_time,
            Timestamp::parse,
        );
        window_order(&mut e, start, end);
        match (title, description, self.status_page_id, start, end) {
            (Some(title), Some(description), Some(status_page_id), Some(start), Some(end))
                if e.is_empty() =>
            {
                Ok(NewMaintenance {
                    title,
                    description,
                    status_page_id,
                    scheduled_start_time: start,
                    scheduled_end_time: end,
                    auto_start: self.auto_start.unwrap_or(false),
                    component_ids: id_set(self.component_ids.unwrap_or_default()),
                })
            }
            _ => Err(e),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
pub struct MaintenancePatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::window_start))]
    pub scheduled_start_time: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::window_end))]
    pub scheduled_end_time: Option<String>,
    pub auto_start: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
    /// Refused: status moves only through start/complete/cancel.
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub status: Option<serde_json::Value>,
    /// Refused: a window stays on the page it was created on.
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub status_page_id: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MaintenancePatch {
    pub title: Option<String>,
    pub description: Option<String>,
    pub scheduled_start_time: Option<Timestamp>,
    pub scheduled_end_time: Option<Timestamp>,
    pub auto_start: Option<bool>,
    pub component_ids: Option<Vec<Id>>,
}

impl MaintenancePatchInput {
    pub fn validate(self) -> Result<MaintenancePatch, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.status.is_some() {
            e.push(
                "status",
                "cannot be set directly; use the start, complete and cancel routes",
            );
        }
        if self.status_page_id.is_some() {
            e.push("statusPageId", "cannot be changed");
        }
        let patch = MaintenancePatch {
            title: self
                .title
                .and_then(|v| e.check("title", validate::name(&v))),
            description: self.description.and_then(|v| {
                e.check("description", validate::text(&v, validate::DESCRIPTION_MAX))
            }),
            scheduled_start_time: self
                .scheduled_start_time
                .and_then(|v| e.check("scheduledStartTime", Timestamp::parse(&v))),
            scheduled_end_time: self
                .scheduled_end_time
                .and_then(|v| e.check("scheduledEndTime", Timestamp::parse(&v))),
            auto_start: self.auto_start,
            component_ids: self.component_ids.map(id_set),
        };
        window_order(&mut e, patch.scheduled_start_time, patch.scheduled_end_time);
        if e.is_empty() && patch == MaintenancePatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
}

impl MaintenancePatch {
    /// The window after this patch, checked against the fields it leaves alone.
    pub fn check_window(&self, current: &Maintenance) -> Result<(), FieldErrors> {
        let start = self
            .scheduled_start_time
            .unwrap_or(current.scheduled_start_time);
        let end = self
            .scheduled_end_time
            .unwrap_or(current.scheduled_end_time);
        let mut e = FieldErrors::new();
        window_order(&mut e, Some(start), Some(end));
        e.into_result()
    }
}
