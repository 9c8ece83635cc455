//! What visitors and integrations see: the public representations of the seed
//! (string ids, `scheduledStart`/`scheduledEnd`) and the rule that turns a
//! page's components and open incidents into one overall status.

use crate::Id;
use crate::model::{Component, ComponentGroup, Incident, Maintenance, StatusPage};
use crate::status::{ComponentStatus, Impact, IncidentStatus, MaintenanceStatus};
use crate::timestamp::Timestamp;
use serde::Serialize;

/// What an open incident's impact says about the page, if anything.
fn impact_status(impact: Impact) -> Option<ComponentStatus> {
    match impact {
        Impact::None => None,
        Impact::Minor => Some(ComponentStatus::Degraded),
        Impact::Major => Some(ComponentStatus::PartialOutage),
        Impact::Critical => Some(ComponentStatus::MajorOutage),
    }
}

/// The page's overall status: the worst of its components' statuses and of
/// what its unresolved incidents' impacts imply (minor → degraded, major →
/// partial outage, critical → major outage). An empty page is operational.
pub fn overall_status<'a>(
    components: impl IntoIterator<Item = &'a Component>,
    incidents: impl IntoIterator<Item = &'a Incident>,
) -> ComponentStatus {
    let from_components = components.into_iter().map(|c| c.status);
    let from_incidents = incidents
        .into_iter()
        .filter(|i| i.status != IncidentStatus::Resolved)
        .filter_map(|i| impact_status(i.impact));
    from_components
        .chain(from_incidents)
        .max_by_key(|s| s.severity())
        .unwrap_or(ComponentStatus::Operational)
}

/// The human text of an overall status.
pub fn status_label(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "All Systems Operational",
        ComponentStatus::Degraded => "Degraded Performance",
        ComponentStatus::PartialOutage => "Partial System Outage",
        ComponentStatus::MajorOutage => "Major System Outage",
        ComponentStatus::Maintenance => "Under Maintenance",
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublicComponentStatus {
    pub id: String,
    pub name: String,
    pub status: ComponentStatus,
    /// Set on a component that mirrors a vendor's status, as in the
    /// component list: a reader of the summary alone can tell whose
    /// outage it is.
    #[serde(rename = "thirdParty", skip_serializing_if = "Option::is_none")]
    pub third_party: Option<crate::third_party::ThirdPartyMark>,
}

/// The vendor mark of component `id`, if it follows one.
pub fn mark_of(
    marks: &[(Id, crate::third_party::ThirdPartyMark)],
    id: Id,
) -> Option<crate::third_party::ThirdPartyMark> {
    marks.iter().find(|(c, _)| *c == id).map(|(_, m)| m.clone())
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicUpdate {
    pub status: IncidentStatus,
    pub message: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicIncident {
    pub id: String,
    pub title: String,
    pub status: IncidentStatus,
    pub impact: Impact,
    pub created_at: Timestamp,
    pub resolved_at: Option<Timestamp>,
    pub updates: Vec<PublicUpdate>,
    pub affected_components: Vec<String>,
}

impl From<&Incident> for PublicIncident {
    fn from(i: &Incident) -> Self {
        PublicIncident {
            id: i.id.to_string(),
            title: i.title.clone(),
            status: i.status,
            impact: i.impact,
            created_at: i.created_at,
            resolved_at: i.resolved_at,
            updates: i
                .updates
                .iter()
                .map(|u| PublicUpdate {
                    status: u.status,
                    message: u.message.clone(),
                    created_at: u.created_at,
                })
                .collect(),
            affected_components: i
                .affected_components
                .iter()
                .map(|c| c.to_string())
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicMaintenance {
    pub id: String,
    pub title: String,
    pub status: MaintenanceStatus,
    pub scheduled_start: Timestamp,
    pub scheduled_end: Timestamp,
    pub affected_components: Vec<String>,
}

impl From<&Maintenance> for PublicMaintenance {
    fn from(m: &Maintenance) -> Self {
        PublicMaintenance {
            id: m.id.to_string(),
            title: m.title.clone(),
            status: m.status,
            scheduled_start: m.scheduled_start_time,
            scheduled_end: m.scheduled_end_time,
            affected_components: m
                .affected_components
                .iter()
                .map(|c| c.to_string())
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublicComponent {
    pub id: String,
    pub name: String,
    pub description: String,
    pub status: ComponentStatus,
    /// The group's name, or null for an ungrouped component.
    pub group: Option<String>,
    pub order: i32,
    /// Set on a component that mirrors a vendor's status: whose, and where
    /// the vendor publishes it.
    #[serde(rename = "thirdParty", skip_serializing_if = "Option::is_none")]
    pub third_party: Option<crate::third_party::ThirdPartyMark>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PublicGroup {
    pub id: String,
    pub name: String,
    pub order: i32,
}

/// `GET /api/public/status/{slug}`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusSummary {
    pub status: ComponentStatus,
    pub status_label: &'static str,
    pub components: Vec<PublicComponentStatus>,
    /// The unresolved incidents, newest first.
    pub active_incidents: Vec<PublicIncident>,
    pub last_updated: Timestamp,
}

/// `GET /api/public/status/{slug}/components`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentList {
    pub components: Vec<PublicComponent>,
    pub groups: Vec<PublicGroup>,
}

/// The page's own public fields, in `GET /api/v1/public/:slug`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicPageInfo {
    pub id: String,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub logo_url: Option<String>,
    pub favicon_url: Option<String>,
    pub accent_color: String,
    pub time_zone: String,
    pub show_uptime: bool,
    pub show_response_times: bool,
    pub show_subscribe: bool,
    pub uptime_days: i32,
    pub past_incident_days: i32,
    pub header_image_url: Option<String>,
}

impl From<&StatusPage> for PublicPageInfo {
    fn from(p: &StatusPage) -> Self {
        PublicPageInfo {
            id: p.id.to_string(),
            name: p.name.clone(),
            slug: p.slug.clone(),
            description: p.description.clone(),
            logo_url: p.logo_url.clone(),
            favicon_url: p.favicon_url.clone(),
            accent_color: p.accent_color.clone(),
            time_zone: p.time_zone.clone(),
            show_uptime: p.show_uptime,
            show_response_times: p.show_response_times,
            show_subscribe: p.show_subscribe,
            uptime_days: p.uptime_days,
            past_incident_days: p.past_incident_days,
            header_image_url: p.header_image_url.clone(),
        }
    }
}

/// Components in display order (groups by their order, members by theirs,
/// ungrouped components after the groups), with group names resolved.
pub fn component_list(
    components: &[Component],
    groups: &[ComponentGroup],
    marks: &[(Id, crate::third_party::ThirdPartyMark)],
) -> ComponentList {
    let group_name = |id: Option<i64>| {
        id.and_then(|g| groups.iter().find(|x| x.id == g))
            .map(|g| g.name.clone())
    };
    ComponentList {
        components: components
            .iter()
            .map(|c| PublicComponent {
                id: c.id.to_string(),
                name: c.name.clone(),
                description: c.description.clone(),
                status: c.status,
                group: group_name(c.group_id),
                order: c.order,
                third_party: mark_of(marks, c.id),
            })
            .collect(),
        groups: groups
            .iter()
            .map(|g| PublicGroup {
                id: g.id.to_string(),
                name: g.name.clone(),
                order: g.order,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comp(status: ComponentStatus) -> Component {
        Component {
            id: 1,
            name: "c".into(),
            description: String::new(),
            status,
            order: 0,
            status_page_id: 1,
            group_id: None,
            created_at: Timestamp::from_millis(0),
            updated_at: Timestamp::from_millis(0),
        }
    }

    fn inc(status: IncidentStatus, impact: Impact) -> Incident {
        Incident {
            id: 1,
            title: "i".into(),
            status,
            impact,
            status_page_id: 1,
            created_at: Timestamp::from_millis(0),
            resolved_at: None,
            updates: vec![],
            affected_components: vec![],
            updated_at: Timestamp::from_millis(0),
        }
    }

    #[test]
    fn overall_status_takes_the_worst() {
        use ComponentStatus::*;
        assert_eq!(overall_status(&[], &[]), Operational);
        assert_eq!(
            overall_status(&[comp(Operational), comp(Maintenance)], &[]),
            Maintenance
        );
        assert_eq!(
            overall_status(&[comp(Maintenance), comp(Degraded)], &[]),
            Degraded
        );
        assert_eq!(
            overall_status(&[comp(PartialOutage), comp(MajorOutage)], &[]),
            MajorOutage
        );
        let open_major = inc(IncidentStatus::Identified, Impact::Major);
        assert_eq!(
            overall_status(&[comp(Operational)], std::slice::from_ref(&open_major)),
            PartialOutage
        );
        assert_eq!(
            overall_status(&[comp(MajorOutage)], &[open_major]),
            MajorOutage
        );
        let resolved_critical = inc(IncidentStatus::Resolved, Impact::Critical);
        assert_eq!(
            overall_status(&[comp(Operational)], &[resolved_critical]),
            Operational
        );
        assert_eq!(
            overall_status(
                &[comp(Operational)],
                &[inc(IncidentStatus::Investigating, Impact::None)]
            ),
            Operational
        );
        assert_eq!(status_label(PartialOutage), "Partial System Outage");
    }
}
