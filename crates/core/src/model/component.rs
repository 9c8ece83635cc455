//! Components, their groups, and the layout of a page.

use super::required;
use crate::Id;
use crate::patch::Patch;
use crate::status::ComponentStatus;
use crate::timestamp::Timestamp;
use crate::validate::{self, FieldErrors};
use serde::{Deserialize, Serialize};

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
