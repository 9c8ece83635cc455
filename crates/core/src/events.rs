//! Change events: what happened to a page, in words the consumers of the
//! outbox share. Each write transaction that changes what a page shows
//! records one or more of these beside its audit event (store: `Tx::record`),
//! so an event exists exactly when its change does. Today the public
//! snapshot invalidation and the live event stream read them; the
//! notification issue expands them into deliveries.
//!
//! The audit log answers "who did what"; events answer "what should the
//! page's followers hear", so they carry ids and the states that matter to a
//! reader, not the actor.

use crate::Id;
use crate::status::{ComponentStatus, Impact, IncidentStatus, MaintenanceStatus};
use serde::{Deserialize, Serialize};

/// One change of one page. `kind` on the wire is the dotted name
/// (`incident.created`), the same in the outbox table and the live stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all_fields = "camelCase")]
pub enum Event {
    #[serde(rename = "page.created")]
    PageCreated { page: Id },
    #[serde(rename = "page.updated")]
    PageUpdated { page: Id },
    #[serde(rename = "page.deleted")]
    PageDeleted { page: Id },
    #[serde(rename = "component.created")]
    ComponentCreated { page: Id, component: Id },
    #[serde(rename = "component.updated")]
    ComponentUpdated { page: Id, component: Id },
    #[serde(rename = "component.status_changed")]
    ComponentStatusChanged {
        page: Id,
        component: Id,
        from: ComponentStatus,
        to: ComponentStatus,
    },
    #[serde(rename = "component.deleted")]
    ComponentDeleted { page: Id, component: Id },
    #[serde(rename = "group.created")]
    GroupCreated { page: Id, group: Id },
    #[serde(rename = "group.updated")]
    GroupUpdated { page: Id, group: Id },
    #[serde(rename = "group.deleted")]
    GroupDeleted { page: Id, group: Id },
    #[serde(rename = "incident.created")]
    IncidentCreated {
        page: Id,
        incident: Id,
        status: IncidentStatus,
        impact: Impact,
    },
    /// Its fields changed, or an update was posted to its timeline.
    #[serde(rename = "incident.updated")]
    IncidentUpdated {
        page: Id,
        incident: Id,
        status: IncidentStatus,
        impact: Impact,
    },
    #[serde(rename = "incident.resolved")]
    IncidentResolved { page: Id, incident: Id },
    #[serde(rename = "incident.deleted")]
    IncidentDeleted { page: Id, incident: Id },
    #[serde(rename = "postmortem.published")]
    PostmortemPublished { page: Id, incident: Id },
    #[serde(rename = "maintenance.scheduled")]
    MaintenanceScheduled { page: Id, maintenance: Id },
    #[serde(rename = "maintenance.updated")]
    MaintenanceUpdated { page: Id, maintenance: Id },
    #[serde(rename = "maintenance.started")]
    MaintenanceStarted { page: Id, maintenance: Id },
    #[serde(rename = "maintenance.completed")]
    MaintenanceCompleted { page: Id, maintenance: Id },
    #[serde(rename = "maintenance.cancelled")]
    MaintenanceCancelled { page: Id, maintenance: Id },
    /// A scheduled window starts in `minutes_before` minutes (the
    /// scheduler's reminder to subscribers; docs/notifications.md).
    #[serde(rename = "maintenance.reminder")]
    MaintenanceReminder {
        page: Id,
        maintenance: Id,
        minutes_before: i64,
    },
    #[serde(rename = "maintenance.deleted")]
    MaintenanceDeleted { page: Id, maintenance: Id },
    /// A visitor's comment on an incident was shown, hidden or removed.
    #[serde(rename = "comments.changed")]
    CommentsChanged { page: Id, incident: Id },
    #[serde(rename = "quick_links.changed")]
    QuickLinksChanged { page: Id },
    /// Groups and components took a new order (or components new groups).
    #[serde(rename = "layout.changed")]
    LayoutChanged { page: Id },
    /// An integration drafted an incident that waits for a person: only
    /// the team's channels hear of it, with the link that publishes it.
    #[serde(rename = "alert.drafted")]
    AlertDrafted { page: Id, draft: Id },
    /// Install-wide settings or feature switches changed: every page may
    /// show something else.
    #[serde(rename = "settings.changed")]
    SettingsChanged,
}

impl Event {
    /// The component a change is about, if it is about one.
    pub fn component(&self) -> Option<Id> {
        use Event::*;
        match *self {
            ComponentCreated { component, .. }
            | ComponentUpdated { component, .. }
            | ComponentStatusChanged { component, .. }
            | ComponentDeleted { component, .. } => Some(component),
            _ => None,
        }
    }

    /// The page whose followers care; `None` for a change of every page.
    pub fn page(&self) -> Option<Id> {
        use Event::*;
        Some(match *self {
            SettingsChanged => return None,
            PageCreated { page }
            | PageUpdated { page }
            | PageDeleted { page }
            | QuickLinksChanged { page }
            | LayoutChanged { page }
            | ComponentCreated { page, .. }
            | ComponentUpdated { page, .. }
            | ComponentStatusChanged { page, .. }
            | ComponentDeleted { page, .. }
            | GroupCreated { page, .. }
            | GroupUpdated { page, .. }
            | GroupDeleted { page, .. }
            | IncidentCreated { page, .. }
            | IncidentUpdated { page, .. }
            | IncidentResolved { page, .. }
            | IncidentDeleted { page, .. }
            | PostmortemPublished { page, .. }
            | CommentsChanged { page, .. }
            | MaintenanceScheduled { page, .. }
            | MaintenanceUpdated { page, .. }
            | MaintenanceStarted { page, .. }
            | MaintenanceCompleted { page, .. }
            | MaintenanceCancelled { page, .. }
            | MaintenanceReminder { page, .. }
            | MaintenanceDeleted { page, .. }
            | AlertDrafted { page, .. } => page,
        })
    }

    /// The dotted name, as stored in the outbox's `kind` column.
    pub fn kind(&self) -> &'static str {
        use Event::*;
        match self {
            PageCreated { .. } => "page.created",
            PageUpdated { .. } => "page.updated",
            PageDeleted { .. } => "page.deleted",
            ComponentCreated { .. } => "component.created",
            ComponentUpdated { .. } => "component.updated",
            ComponentStatusChanged { .. } => "component.status_changed",
            ComponentDeleted { .. } => "component.deleted",
            GroupCreated { .. } => "group.created",
            GroupUpdated { .. } => "group.updated",
            GroupDeleted { .. } => "group.deleted",
            IncidentCreated { .. } => "incident.created",
            IncidentUpdated { .. } => "incident.updated",
            IncidentResolved { .. } => "incident.resolved",
            IncidentDeleted { .. } => "incident.deleted",
            PostmortemPublished { .. } => "postmortem.published",
            MaintenanceScheduled { .. } => "maintenance.scheduled",
            MaintenanceUpdated { .. } => "maintenance.updated",
            MaintenanceStarted { .. } => "maintenance.started",
            MaintenanceCompleted { .. } => "maintenance.completed",
            MaintenanceCancelled { .. } => "maintenance.cancelled",
            MaintenanceReminder { .. } => "maintenance.reminder",
            MaintenanceDeleted { .. } => "maintenance.deleted",
            CommentsChanged { .. } => "comments.changed",
            QuickLinksChanged { .. } => "quick_links.changed",
            LayoutChanged { .. } => "layout.changed",
            AlertDrafted { .. } => "alert.drafted",
            SettingsChanged => "settings.changed",
        }
    }

    /// The event of a maintenance window moving to `to`.
    pub fn maintenance_moved(page: Id, maintenance: Id, to: MaintenanceStatus) -> Event {
        match to {
            MaintenanceStatus::Scheduled => Event::MaintenanceScheduled { page, maintenance },
            MaintenanceStatus::InProgress => Event::MaintenanceStarted { page, maintenance },
            MaintenanceStatus::Completed => Event::MaintenanceCompleted { page, maintenance },
            MaintenanceStatus::Cancelled => Event::MaintenanceCancelled { page, maintenance },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_kind_is_the_stored_kind() -> Result<(), serde_json::Error> {
        let e = Event::ComponentStatusChanged {
            page: 1,
            component: 2,
            from: ComponentStatus::Operational,
            to: ComponentStatus::MajorOutage,
        };
        let json = serde_json::to_value(&e)?;
        assert_eq!(json["kind"], e.kind());
        assert_eq!(json["component"], 2);
        assert_eq!(json["to"], "major_outage");
        let back: Event = serde_json::from_value(json)?;
        assert_eq!(back, e);
        assert_eq!(back.page(), Some(1));
        assert_eq!(Event::SettingsChanged.page(), None);
        Ok(())
    }
}
