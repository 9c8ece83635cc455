//! Atlassian Statuspage's public v2 JSON, which a whole ecosystem of tools
//! reads: the same page in their field names and vocabulary (mapping in
//! docs/atlassian.md). Ids are strings; group rows get a `group-` prefix
//! because groups and components are numbered separately here.

use crate::model::{Component, ComponentGroup, Incident, Maintenance, StatusPage};
use crate::public::overall_status;
use crate::status::{ComponentStatus, Impact, IncidentStatus, MaintenanceStatus};
use crate::timestamp::Timestamp;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub id: String,
    pub name: String,
    pub url: String,
    pub time_zone: String,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// none, minor, major or critical.
    pub indicator: &'static str,
    pub description: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct AComponent {
    pub id: String,
    pub name: String,
    pub status: &'static str,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub position: i32,
    pub description: Option<String>,
    pub showcase: bool,
    pub start_date: Option<String>,
    pub group_id: Option<String>,
    pub page_id: String,
    pub group: bool,
    pub only_show_if_degraded: bool,
    /// For a group row: the ids of its components.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AUpdate {
    pub id: String,
    pub status: &'static str,
    pub body: String,
    pub incident_id: String,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub display_at: Timestamp,
    pub affected_components: Option<Vec<String>>,
    pub deliver_notifications: bool,
    pub custom_tweet: Option<String>,
    pub tweet_id: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AIncident {
    pub id: String,
    pub name: String,
    pub status: &'static str,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub monitoring_at: Option<Timestamp>,
    pub resolved_at: Option<Timestamp>,
    pub impact: &'static str,
    pub shortlink: String,
    pub started_at: Timestamp,
    pub page_id: String,
    pub incident_updates: Vec<AUpdate>,
    pub components: Vec<AComponent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_for: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_until: Option<Timestamp>,
}

pub fn component_status(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "operational",
        ComponentStatus::Degraded => "degraded_performance",
        ComponentStatus::PartialOutage => "partial_outage",
        ComponentStatus::MajorOutage => "major_outage",
        ComponentStatus::Maintenance => "under_maintenance",
    }
}

/// The page indicator and its words, as Statuspage says them: degraded →
/// minor ("Partially Degraded Service"), partial outage → major ("Partial
/// System Outage"), major outage → critical ("Major Service Outage"),
/// maintenance → maintenance ("Service Under Maintenance").
pub fn status(components: &[Component], incidents: &[Incident]) -> Status {
    let (indicator, description) = match overall_status(components, incidents) {
        ComponentStatus::Operational => ("none", "All Systems Operational"),
        ComponentStatus::Degraded => ("minor", "Partially Degraded Service"),
        ComponentStatus::PartialOutage => ("major", "Partial System Outage"),
        ComponentStatus::MajorOutage => ("critical", "Major Service Outage"),
        ComponentStatus::Maintenance => ("maintenance", "Service Under Maintenance"),
    };
    Status {
        indicator,
        description,
    }
}

fn impact(i: Impact) -> &'static str {
    i.as_str()
}

/// Where the page is read: its custom domain, else its path on this server
/// (`server` is the server's public URL), absolute like Statuspage's links.
pub fn page_url(p: &StatusPage, server: &str) -> String {
    match &p.custom_domain {
        Some(d) => format!("https://{d}"),
        None => format!("{server}/s/{}", p.slug),
    }
}

pub fn page(p: &StatusPage, updated_at: Timestamp, server: &str) -> Page {
    let url = page_url(p, server);
    Page {
        id: p.id.to_string(),
        name: p.name.clone(),
        url,
        time_zone: p.time_zone.clone(),
        updated_at,
    }
}

fn one(c: &Component) -> AComponent {
    AComponent {
        id: c.id.to_string(),
        name: c.name.clone(),
        status: component_status(c.status),
        created_at: c.created_at,
        updated_at: c.updated_at,
        position: c.order,
        description: (!c.description.is_empty()).then(|| c.description.clone()),
        showcase: true,
        start_date: None,
        group_id: c.group_id.map(|g| format!("group-{g}")),
        page_id: c.status_page_id.to_string(),
        group: false,
        only_show_if_degraded: false,
        components: None,
    }
}

fn by_order(mut v: Vec<&Component>) -> Vec<&Component> {
    v.sort_by_key(|c| (c.order, c.id));
    v
}

/// Rows in the order the page shows them, as Statuspage lists them: each
/// group's row (status: the worst of its members) followed by its members,
/// then the components without a group; `position` counts through the
/// whole list from 1.
pub fn components(
    cs: &[Component],
    groups: &[ComponentGroup],
    page_updated: Timestamp,
) -> Vec<AComponent> {
    let mut ordered: Vec<&ComponentGroup> = groups.iter().collect();
    ordered.sort_by_key(|g| (g.order, g.id));
    let mut out: Vec<AComponent> = Vec::with_capacity(cs.len() + groups.len());
    for g in ordered {
        let members = by_order(cs.iter().filter(|c| c.group_id == Some(g.id)).collect());
        let worst = members
            .iter()
            .map(|c| c.status)
            .max_by_key(|s| s.severity())
            .unwrap_or(ComponentStatus::Operational);
        out.push(AComponent {
            id: format!("group-{}", g.id),
            name: g.name.clone(),
            status: component_status(worst),
            created_at: page_updated,
            updated_at: page_updated,
            position: 0,
            description: None,
            showcase: false,
            start_date: None,
            group_id: None,
            page_id: g.status_page_id.to_string(),
            group: true,
            only_show_if_degraded: false,
            components: Some(members.iter().map(|c| c.id.to_string()).collect()),
        });
        out.extend(members.into_iter().map(one));
    }
    out.extend(
        by_order(cs.iter().filter(|c| c.group_id.is_none()).collect())
            .into_iter()
            .map(one),
    );
    for (i, row) in out.iter_mut().enumerate() {
        row.position = i as i32 + 1;
    }
    out
}

fn affected(ids: &[i64], cs: &[Component]) -> Vec<AComponent> {
    cs.iter().filter(|c| ids.contains(&c.id)).map(one).collect()
}

pub fn incident(i: &Incident, cs: &[Component], page_base: &str) -> AIncident {
    let id = i.id.to_string();
    let monitoring_at = i
        .updates
        .iter()
        .filter(|u| u.status == IncidentStatus::Monitoring)
        .map(|u| u.created_at)
        .min();
    AIncident {
        name: i.title.clone(),
        status: i.status.as_str(),
        created_at: i.created_at,
        updated_at: i.updated_at,
        monitoring_at,
        resolved_at: i.resolved_at,
        impact: impact(i.impact),
        shortlink: format!("{page_base}/incidents/{id}"),
        started_at: i.created_at,
        page_id: i.status_page_id.to_string(),
        incident_updates: i
            .updates
            .iter()
            .map(|u| AUpdate {
                id: u.id.to_string(),
                status: u.status.as_str(),
                body: u.message.clone(),
                incident_id: id.clone(),
                created_at: u.created_at,
                updated_at: u.created_at,
                display_at: u.created_at,
                affected_components: None,
                deliver_notifications: true,
                custom_tweet: None,
                tweet_id: None,
            })
            .collect(),
        components: affected(&i.affected_components, cs),
        scheduled_for: None,
        scheduled_until: None,
        id,
    }
}

fn maintenance_status(s: MaintenanceStatus) -> &'static str {
    match s {
        MaintenanceStatus::Scheduled => "scheduled",
        MaintenanceStatus::InProgress => "in_progress",
        MaintenanceStatus::Completed | MaintenanceStatus::Cancelled => "completed",
    }
}

pub fn maintenance(m: &Maintenance, cs: &[Component], page_base: &str) -> AIncident {
    let id = m.id.to_string();
    AIncident {
        name: m.title.clone(),
        status: maintenance_status(m.status),
        created_at: m.created_at,
        updated_at: m.updated_at,
        monitoring_at: None,
        resolved_at: None,
        impact: "maintenance",
        shortlink: format!("{page_base}/maintenance/{id}"),
        started_at: m.scheduled_start_time,
        page_id: m.status_page_id.to_string(),
        incident_updates: m
            .updates
            .iter()
            .map(|u| AUpdate {
                id: u.id.to_string(),
                status: maintenance_status(u.status),
                body: u.message.clone(),
                incident_id: id.clone(),
                created_at: u.created_at,
                updated_at: u.created_at,
                display_at: u.created_at,
                affected_components: None,
                deliver_notifications: true,
                custom_tweet: None,
                tweet_id: None,
            })
            .collect(),
        components: affected(&m.affected_components, cs),
        scheduled_for: Some(m.scheduled_start_time),
        scheduled_until: Some(m.scheduled_end_time),
        id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vocabulary() {
        assert_eq!(
            component_status(ComponentStatus::Degraded),
            "degraded_performance"
        );
        assert_eq!(
            component_status(ComponentStatus::Maintenance),
            "under_maintenance"
        );
        assert_eq!(status(&[], &[]).indicator, "none");
    }
}
