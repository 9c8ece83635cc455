//! Rows as both backends return them, and their conversion into core types.
//! Column lists live in macros so `concat!` can build `&'static str` queries.

use crate::error::{StoreError, StoreResult};
use std::str::FromStr;
use upstate_core::*;

macro_rules! page_cols {
    () => {
        "id, name, slug, description, logo_url, favicon_url, custom_domain, accent_color, is_public, \
         show_subscribe, show_uptime, show_response_times, uptime_days, time_zone, created_at, past_incident_days, \
         header_image_url, custom_css"
    };
}
macro_rules! component_cols {
    () => {
        "id, name, description, status, position, page_id, group_id, created_at, updated_at"
    };
}
macro_rules! group_cols {
    () => {
        "id, name, page_id, position"
    };
}
macro_rules! incident_cols {
    () => {
        "id, title, status, impact, page_id, created_at, resolved_at, updated_at"
    };
}
macro_rules! maintenance_cols {
    () => {
        "id, title, description, status, page_id, scheduled_start, scheduled_end, auto_start, created_at, updated_at"
    };
}

/// Parses an enum column; a value no code wrote means a damaged database.
pub(crate) fn parse_enum<T: FromStr>(column: &'static str, value: &str) -> StoreResult<T> {
    value.parse().map_err(|_| {
        StoreError::Database(sqlx::Error::Decode(
            format!("unexpected {column} value {value:?}").into(),
        ))
    })
}

#[derive(sqlx::FromRow)]
pub(crate) struct PageRow {
    pub(crate) id: i64,
    name: String,
    slug: String,
    description: String,
    logo_url: Option<String>,
    favicon_url: Option<String>,
    custom_domain: Option<String>,
    accent_color: String,
    is_public: bool,
    show_subscribe: bool,
    show_uptime: bool,
    show_response_times: bool,
    uptime_days: i32,
    time_zone: String,
    past_incident_days: i32,
    header_image_url: Option<String>,
    custom_css: String,
    created_at: i64,
}

impl From<PageRow> for StatusPage {
    fn from(r: PageRow) -> Self {
        StatusPage {
            id: r.id,
            name: r.name,
            slug: r.slug,
            description: r.description,
            logo_url: r.logo_url,
            is_public: r.is_public,
            created_at: Timestamp::from_millis(r.created_at),
            favicon_url: r.favicon_url,
            custom_domain: r.custom_domain,
            accent_color: r.accent_color,
            show_subscribe: r.show_subscribe,
            show_uptime: r.show_uptime,
            show_response_times: r.show_response_times,
            uptime_days: r.uptime_days,
            time_zone: r.time_zone,
            past_incident_days: r.past_incident_days,
            header_image_url: r.header_image_url,
            custom_css: r.custom_css,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct ComponentRow {
    id: i64,
    name: String,
    description: String,
    status: String,
    position: i32,
    page_id: i64,
    group_id: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl TryFrom<ComponentRow> for Component {
    type Error = StoreError;
    fn try_from(r: ComponentRow) -> StoreResult<Self> {
        Ok(Component {
            id: r.id,
            name: r.name,
            description: r.description,
            status: parse_enum("component status", &r.status)?,
            order: r.position,
            status_page_id: r.page_id,
            group_id: r.group_id,
            created_at: Timestamp::from_millis(r.created_at),
            updated_at: Timestamp::from_millis(r.updated_at),
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct GroupRow {
    id: i64,
    name: String,
    page_id: i64,
    position: i32,
}

impl From<GroupRow> for ComponentGroup {
    fn from(r: GroupRow) -> Self {
        ComponentGroup {
            id: r.id,
            name: r.name,
            status_page_id: r.page_id,
            order: r.position,
        }
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct IncidentRow {
    pub(crate) id: i64,
    title: String,
    status: String,
    impact: String,
    page_id: i64,
    created_at: i64,
    resolved_at: Option<i64>,
    updated_at: i64,
}

impl IncidentRow {
    pub(crate) fn into_incident(
        self,
        updates: Vec<IncidentUpdate>,
        affected_components: Vec<Id>,
    ) -> StoreResult<Incident> {
        Ok(Incident {
            id: self.id,
            title: self.title,
            status: parse_enum("incident status", &self.status)?,
            impact: parse_enum("impact", &self.impact)?,
            status_page_id: self.page_id,
            created_at: Timestamp::from_millis(self.created_at),
            resolved_at: self.resolved_at.map(Timestamp::from_millis),
            updates,
            affected_components,
            updated_at: Timestamp::from_millis(self.updated_at),
        })
    }
}

/// A timeline entry of an incident or a maintenance window, with its owner.
#[derive(sqlx::FromRow)]
pub(crate) struct UpdateRow {
    pub(crate) owner_id: i64,
    id: i64,
    status: String,
    message: String,
    created_at: i64,
}

impl UpdateRow {
    pub(crate) fn into_incident_update(self) -> StoreResult<IncidentUpdate> {
        Ok(IncidentUpdate {
            id: self.id,
            message: self.message,
            status: parse_enum("incident status", &self.status)?,
            created_at: Timestamp::from_millis(self.created_at),
        })
    }

    pub(crate) fn into_maintenance_update(self) -> StoreResult<MaintenanceUpdate> {
        Ok(MaintenanceUpdate {
            id: self.id,
            message: self.message,
            status: parse_enum("maintenance status", &self.status)?,
            created_at: Timestamp::from_millis(self.created_at),
        })
    }
}

/// A (owner, component) link of an incident or a maintenance window.
#[derive(sqlx::FromRow)]
pub(crate) struct LinkRow {
    pub(crate) owner_id: i64,
    pub(crate) component_id: i64,
}

#[derive(sqlx::FromRow)]
pub(crate) struct MaintenanceRow {
    pub(crate) id: i64,
    title: String,
    description: String,
    status: String,
    page_id: i64,
    scheduled_start: i64,
    scheduled_end: i64,
    auto_start: bool,
    created_at: i64,
    updated_at: i64,
}

impl MaintenanceRow {
    pub(crate) fn into_maintenance(
        self,
        updates: Vec<MaintenanceUpdate>,
        affected_components: Vec<Id>,
    ) -> StoreResult<Maintenance> {
        Ok(Maintenance {
            id: self.id,
            title: self.title,
            description: self.description,
            status: parse_enum("maintenance status", &self.status)?,
            status_page_id: self.page_id,
            scheduled_start_time: Timestamp::from_millis(self.scheduled_start),
            scheduled_end_time: Timestamp::from_millis(self.scheduled_end),
            auto_start: self.auto_start,
            affected_components,
            updates,
            created_at: Timestamp::from_millis(self.created_at),
            updated_at: Timestamp::from_millis(self.updated_at),
        })
    }
}

/// Groups child rows by owner id, keeping their order.
pub(crate) fn by_owner<T, R>(
    rows: Vec<R>,
    owner: impl Fn(&R) -> i64,
    map: impl Fn(R) -> StoreResult<T>,
) -> StoreResult<std::collections::HashMap<i64, Vec<T>>> {
    let mut out: std::collections::HashMap<i64, Vec<T>> = std::collections::HashMap::new();
    for r in rows {
        let k = owner(&r);
        out.entry(k).or_default().push(map(r)?);
    }
    Ok(out)
}
