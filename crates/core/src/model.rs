//! Resources as the management API (v1) shows them, and the inputs that create
//! or change them. Field names follow the seed document exactly (camelCase).

use crate::Id;
use crate::patch::Patch;
use crate::status::{ComponentStatus, Impact, IncidentStatus, MaintenanceStatus};
use crate::timestamp::Timestamp;
use crate::validate::{self, FieldErrors};
use crate::values::{Domain, HexColor, HttpUrl, Slug};
use serde::{Deserialize, Serialize};

pub const DEFAULT_ACCENT_COLOR: &str = "#2563eb";
pub const DEFAULT_TIME_ZONE: &str = "UTC";
pub const DEFAULT_UPTIME_DAYS: i32 = 90;
/// Statuspage shows the last two weeks of incidents day by day.
pub const DEFAULT_PAST_INCIDENT_DAYS: i32 = 14;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusPage {
    pub id: Id,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub logo_url: Option<String>,
    pub is_public: bool,
    pub created_at: Timestamp,
    pub favicon_url: Option<String>,
    pub custom_domain: Option<String>,
    pub accent_color: String,
    pub show_subscribe: bool,
    pub show_uptime: bool,
    /// Response-time charts of monitored components on the public page.
    pub show_response_times: bool,
    pub uptime_days: i32,
    pub time_zone: String,
    /// Days of the "Past incidents" section on the public page (0: none).
    pub past_incident_days: i32,
    /// An image across the top of the public page's header.
    pub header_image_url: Option<String>,
    /// The operator's own stylesheet, served at `/s/{slug}/custom.css`
    /// after ours (a file of its own: it cannot reach the page's HTML or
    /// its security headers).
    pub custom_css: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Component {
    pub id: Id,
    pub name: String,
    pub description: String,
    pub status: ComponentStatus,
    pub order: i32,
    pub status_page_id: Id,
    pub group_id: Option<Id>,
    /// Not in the v1 shape; for views that show it (Atlassian compatibility).
    #[serde(skip)]
    pub created_at: Timestamp,
    #[serde(skip)]
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ComponentGroup {
    pub id: Id,
    pub name: String,
    pub status_page_id: Id,
    pub order: i32,
}

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

// ---------------------------------------------------------------- inputs

/// Optional page settings shared by create and patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageSettings {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub logo_url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub favicon_url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domain_or_null))]
    pub custom_domain: Patch<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::hex_color))]
    pub accent_color: Option<String>,
    pub show_subscribe: Option<bool>,
    pub show_uptime: Option<bool>,
    pub show_response_times: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::uptime_days))]
    pub uptime_days: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::time_zone))]
    pub time_zone: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::past_incident_days))]
    pub past_incident_days: Option<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub header_image_url: Patch<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::custom_css))]
    pub custom_css: Option<String>,
}

impl PageSettings {
    fn validate(self, errors: &mut FieldErrors) -> ValidPageSettings {
        fn nullable<T>(
            errors: &mut FieldErrors,
            field: &str,
            p: Patch<String>,
            rule: fn(&str) -> Result<T, String>,
        ) -> Patch<T> {
            errors
                .check(field, p.try_map(|v| rule(&v)))
                .unwrap_or(Patch::Absent)
        }
        ValidPageSettings {
            logo_url: nullable(errors, "logoUrl", self.logo_url, HttpUrl::parse),
            favicon_url: nullable(errors, "faviconUrl", self.favicon_url, HttpUrl::parse),
            custom_domain: nullable(errors, "customDomain", self.custom_domain, Domain::parse),
            accent_color: self
                .accent_color
                .and_then(|c| errors.check("accentColor", HexColor::parse(&c))),
            show_subscribe: self.show_subscribe,
            show_uptime: self.show_uptime,
            show_response_times: self.show_response_times,
            uptime_days: self
                .uptime_days
                .and_then(|d| errors.check("uptimeDays", validate::uptime_days(d))),
            time_zone: self
                .time_zone
                .and_then(|z| errors.check("timeZone", validate::time_zone(&z))),
            past_incident_days: self
                .past_incident_days
                .and_then(|d| errors.check("pastIncidentDays", validate::past_incident_days(d))),
            header_image_url: nullable(
                errors,
                "headerImageUrl",
                self.header_image_url,
                HttpUrl::parse,
            ),
            custom_css: self
                .custom_css
                .and_then(|c| errors.check("customCss", validate::custom_css(&c))),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidPageSettings {
    pub logo_url: Patch<HttpUrl>,
    pub favicon_url: Patch<HttpUrl>,
    pub custom_domain: Patch<Domain>,
    pub accent_color: Option<HexColor>,
    pub show_subscribe: Option<bool>,
    pub show_uptime: Option<bool>,
    pub show_response_times: Option<bool>,
    pub uptime_days: Option<i32>,
    pub time_zone: Option<String>,
    pub past_incident_days: Option<i32>,
    pub header_image_url: Patch<HttpUrl>,
    pub custom_css: Option<String>,
}

/// Records "required" for a missing field and runs the rule on a present one.
fn required<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<String>,
    rule: impl FnOnce(&str) -> Result<T, String>,
) -> Option<T> {
    match value {
        None => {
            errors.push(field, "is required");
            None
        }
        Some(v) => errors.check(field, rule(&v)),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewPageInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::slug, required))]
    pub slug: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    pub is_public: Option<bool>,
    #[serde(flatten)]
    pub settings: PageSettings,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewPage {
    pub name: String,
    pub slug: Slug,
    pub description: String,
    pub is_public: bool,
    pub settings: ValidPageSettings,
}

impl NewPageInput {
    pub fn validate(self) -> Result<NewPage, FieldErrors> {
        let mut e = FieldErrors::new();
        let name = required(&mut e, "name", self.name, validate::name);
        let slug = required(&mut e, "slug", self.slug, Slug::parse);
        let description = e.check(
            "description",
            validate::text(
                self.description.as_deref().unwrap_or(""),
                validate::DESCRIPTION_MAX,
            ),
        );
        let settings = self.settings.validate(&mut e);
        match (name, slug, description) {
            (Some(name), Some(slug), Some(description)) if e.is_empty() => Ok(NewPage {
                name,
                slug,
                description,
                is_public: self.is_public.unwrap_or(true),
                settings,
            }),
            _ => Err(e),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PagePatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::slug))]
    pub slug: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    pub is_public: Option<bool>,
    #[serde(flatten)]
    pub settings: PageSettings,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PagePatch {
    pub name: Option<String>,
    pub slug: Option<Slug>,
    pub description: Option<String>,
    pub is_public: Option<bool>,
    pub settings: ValidPageSettings,
}

impl PagePatchInput {
    pub fn validate(self) -> Result<PagePatch, FieldErrors> {
        let mut e = FieldErrors::new();
        let patch = PagePatch {
            name: self.name.and_then(|v| e.check("name", validate::name(&v))),
            slug: self.slug.and_then(|v| e.check("slug", Slug::parse(&v))),
            description: self.description.and_then(|v| {
                e.check("description", validate::text(&v, validate::DESCRIPTION_MAX))
            }),
            is_public: self.is_public,
            settings: self.settings.validate(&mut e),
        };
        if e.is_empty() && patch == PagePatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewComponentInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    pub status: Option<ComponentStatus>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub group_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::order))]
    pub order: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewComponent {
    pub name: String,
    pub description: String,
    pub status_page_id: Id,
    pub status: ComponentStatus,
    pub group_id: Option<Id>,
    pub order: Option<i32>,
}

impl NewComponentInput {
    pub fn validate(self) -> Result<NewComponent, FieldErrors> {
        let mut e = FieldErrors::new();
        let name = required(&mut e, "name", self.name, validate::name);
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
        let order = self
            .order
            .and_then(|o| e.check("order", validate::order(o)));
        match (name, description, self.status_page_id) {
            (Some(name), Some(description), Some(status_page_id)) if e.is_empty() => {
                Ok(NewComponent {
                    name,
                    description,
                    status_page_id,
                    status: self.status.unwrap_or(ComponentStatus::Operational),
                    group_id: self.group_id,
                    order,
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
pub struct ComponentPatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    pub status: Option<ComponentStatus>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id_or_null))]
    pub group_id: Patch<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::order))]
    pub order: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComponentPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub status: Option<ComponentStatus>,
    pub group_id: Patch<Id>,
    pub order: Option<i32>,
}

impl ComponentPatchInput {
    pub fn validate(self) -> Result<ComponentPatch, FieldErrors> {
        let mut e = FieldErrors::new();
        let patch = ComponentPatch {
            name: self.name.and_then(|v| e.check("name", validate::name(&v))),
            description: self.description.and_then(|v| {
                e.check("description", validate::text(&v, validate::DESCRIPTION_MAX))
            }),
            status: self.status,
            group_id: self.group_id,
            order: self
                .order
                .and_then(|o| e.check("order", validate::order(o))),
        };
        if e.is_empty() && patch == ComponentPatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentStatusInput {
    #[cfg_attr(feature = "openapi", schema(required, nullable = false))]
    pub status: Option<ComponentStatus>,
}

impl ComponentStatusInput {
    pub fn validate(self) -> Result<ComponentStatus, FieldErrors> {
        self.status.ok_or_else(|| {
            FieldErrors::single(
                "status",
                format!("is required; one of: {}", ComponentStatus::expected()),
            )
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewGroupInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::order))]
    pub order: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewGroup {
    pub name: String,
    pub status_page_id: Id,
    pub order: Option<i32>,
}

impl NewGroupInput {
    pub fn validate(self) -> Result<NewGroup, FieldErrors> {
        let mut e = FieldErrors::new();
        let name = required(&mut e, "name", self.name, validate::name);
        if self.status_page_id.is_none() {
            e.push("statusPageId", "is required");
        }
        let order = self
            .order
            .and_then(|o| e.check("order", validate::order(o)));
        match (name, self.status_page_id) {
            (Some(name), Some(status_page_id)) if e.is_empty() => Ok(NewGroup {
                name,
                status_page_id,
                order,
            }),
            _ => Err(e),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
pub struct GroupPatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::order))]
    pub order: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupPatch {
    pub name: Option<String>,
    pub order: Option<i32>,
}

impl GroupPatchInput {
    pub fn validate(self) -> Result<GroupPatch, FieldErrors> {
        let mut e = FieldErrors::new();
        let patch = GroupPatch {
            name: self.name.and_then(|v| e.check("name", validate::name(&v))),
            order: self
                .order
                .and_then(|o| e.check("order", validate::order(o))),
        };
        if e.is_empty() && patch == GroupPatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
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
}

/// Sorted and deduplicated, so `[3, 3, 1]` means the same as `[1, 3]`.
fn id_set(mut ids: Vec<Id>) -> Vec<Id> {
    ids.sort_unstable();
    ids.dedup();
    ids
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
        match (title, message, self.status_page_id) {
            (Some(title), Some(message), Some(status_page_id)) if e.is_empty() => Ok(NewIncident {
                title,
                status: self.status.unwrap_or(IncidentStatus::Investigating),
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewIncidentUpdate {
    pub message: String,
    /// None keeps the incident's current status.
    pub status: Option<IncidentStatus>,
    pub component_statuses: Vec<ComponentStatusChange>,
}

impl NewIncidentUpdateInput {
    pub fn validate(self) -> Result<NewIncidentUpdate, FieldErrors> {
        let mut e = FieldErrors::new();
        let message = required(&mut e, "message", self.message, validate::message);
        let component_statuses = status_changes(&mut e, self.component_statuses);
        match message {
            Some(message) if e.is_empty() => Ok(NewIncidentUpdate {
                message,
                status: self.status,
                component_statuses,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn page_input(json: serde_json::Value) -> Result<NewPage, FieldErrors> {
        serde_json::from_value::<NewPageInput>(json)
            .map_err(|_| FieldErrors::single("json", "bad"))
            .and_then(NewPageInput::validate)
    }

    #[test]
    fn page_reports_every_bad_field_at_once() {
        let err =
            page_input(serde_json::json!({"name": "", "slug": "Bad Slug", "accentColor": "red"}))
                .err();
        let fields: Vec<String> = err
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default();
        assert_eq!(fields, ["name", "slug", "accentColor"]);
    }

    #[test]
    fn page_defaults() {
        let p = page_input(serde_json::json!({"name": "Acme", "slug": "acme"}));
        assert!(
            matches!(p, Ok(NewPage { is_public: true, ref description, .. }) if description.is_empty())
        );
    }

    #[test]
    fn maintenance_end_must_follow_start() {
        let input: Result<NewMaintenanceInput, _> = serde_json::from_value(serde_json::json!({
            "title": "DB", "statusPageId": 1,
            "scheduledStartTime": "2026-01-01T02:00:00Z", "scheduledEndTime": "2026-01-01T01:00:00Z"
        }));
        let err = input
            .ok()
            .map(NewMaintenanceInput::validate)
            .and_then(Result::err);
        assert_eq!(
            err.map(|e| e.0[0].field.clone()).as_deref(),
            Some("scheduledEndTime")
        );
    }

    #[test]
    fn empty_patch_is_refused() {
        let input: Option<ComponentPatchInput> = serde_json::from_value(serde_json::json!({})).ok();
        assert!(
            input
                .map(ComponentPatchInput::validate)
                .is_some_and(|r| r.is_err())
        );
    }
}

/// A component's place in a new layout: its group (or none). Its order is
/// its position in the list, within its group.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ComponentPlace {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub id: Id,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id_or_null))]
    pub group_id: Option<Id>,
}

/// `PUT /api/groups/reorder`: the whole layout of one page at once, so a
/// drag or a "move up" is one transaction and never half applied.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", schema(min_properties = 2))]
pub struct ReorderInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    /// Every group of the page, in their new order.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub group_ids: Option<Vec<Id>>,
    /// Every component of the page, in their new order.
    pub components: Option<Vec<ComponentPlace>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub status_page_id: Id,
    /// Left out: the groups keep their order.
    pub group_ids: Option<Vec<Id>>,
    /// Left out: the components keep their order and groups.
    pub components: Option<Vec<(Id, Option<Id>)>>,
}

impl ReorderInput {
    pub fn validate(self) -> Result<Layout, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.status_page_id.is_none() {
            e.push("statusPageId", "is required");
        }
        if self.group_ids.is_none() && self.components.is_none() {
            e.push("body", "names neither groupIds nor components");
        }
        let groups = self.group_ids;
        let comps: Option<Vec<(Id, Option<Id>)>> = self
            .components
            .map(|cs| cs.into_iter().map(|c| (c.id, c.group_id)).collect());
        let mut seen = std::collections::HashSet::new();
        if groups.iter().flatten().any(|g| !seen.insert(*g)) {
            e.push("groupIds", "lists a group twice");
        }
        let mut seen = std::collections::HashSet::new();
        if comps.iter().flatten().any(|(c, _)| !seen.insert(*c)) {
            e.push("components", "lists a component twice");
        }
        match self.status_page_id {
            Some(status_page_id) if e.is_empty() => Ok(Layout {
                status_page_id,
                group_ids: groups,
                components: comps,
            }),
            _ => Err(e),
        }
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
