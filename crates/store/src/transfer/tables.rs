//! Which tables the export carries and in what order, which of their values
//! are credentials or secrets, which text columns are enumerations, and the
//! references the schema holds without a foreign key.

use crate::sealed::Purpose;
use upstate_core::roles::Role;
use upstate_core::status::*;

/// The tables of an export, parents before children, so an import can
/// insert them in this order. `users` follows `status_pages` because a
/// user remembers the page they last worked on.
pub(crate) const CARRIED: &[&str] = &[
    "status_pages",
    "page_access",
    "page_viewers",
    "viewer_providers",
    "users",
    "recovery_codes",
    "component_groups",
    "components",
    "component_status_history",
    "page_audiences",
    "audience_components",
    "audience_members",
    "recurring_maintenance",
    "incidents",
    "incident_components",
    "incident_updates",
    "postmortems",
    "maintenance",
    "maintenance_components",
    "maintenance_updates",
    "maintenance_reminders",
    "quick_links",
    "incident_templates",
    "settings",
    "notification_channels",
    "api_keys",
    "subscribers",
    "subscriber_components",
    "subscriber_incidents",
    "comments",
    "vapid_keys",
    "monitors",
    "monitor_checks",
    "monitor_stats",
    "import_sources",
    "integrations",
    "alert_groups",
    "integration_alerts",
    "integration_events",
    "third_party",
    "managed",
];

/// What an export leaves out, and why (docs/operations.md says the same).
pub(crate) const LEFT_OUT: &[(&str, &str)] = &[
    (
        "audit_events",
        "the audit log is a chain of this install; read it with /api/audit-events/export",
    ),
    ("audit_head", "the audit log's head"),
    ("sessions", "sign-ins end with the move"),
    ("setup_tokens", "first-run tokens"),
    ("step_ups", "sign-in confirmations"),
    ("sso_logins", "single sign-ons under way"),
    ("viewer_links", "viewer sign-in links under way"),
    ("secret_failures", "password throttling"),
    ("jobs", "work in flight"),
    ("outbox", "change notices between instances"),
    ("deliveries", "notifications in flight"),
    ("selftest", "the health probe's row"),
];

/// The tables that belong to a page: what an import adds when it adds
/// pages to an install that has some already.
pub(crate) const PAGE_TABLES: &[&str] = &[
    "status_pages",
    "page_access",
    "page_viewers",
    "viewer_providers",
    "component_groups",
    "components",
    "component_status_history",
    "page_audiences",
    "audience_components",
    "audience_members",
    "recurring_maintenance",
    "incidents",
    "incident_components",
    "incident_updates",
    "postmortems",
    "maintenance",
    "maintenance_components",
    "maintenance_updates",
    "maintenance_reminders",
    "quick_links",
    "subscribers",
    "subscriber_components",
    "subscriber_incidents",
    "comments",
    "monitors",
    "monitor_checks",
    "monitor_stats",
    "third_party",
];

/// Settings rows that describe this install rather than its configuration.
pub(crate) const LOCAL_SETTINGS: &[&str] = &["server_key_check", "export_status"];

/// What takes the place of a withheld value.
pub(crate) const WITHHELD: &str = "<withheld>";

/// A credential hash: carried only when the export asks for passwords.
/// An import that finds one withheld stores `UNUSABLE`, which no password
/// or key matches (the person sets a new one).
pub(crate) const CREDENTIALS: &[(&str, &str)] = &[
    ("users", "password_hash"),
    ("status_pages", "password_hash"),
    ("api_keys", "secret_hash"),
    ("recovery_codes", "code_hash"),
    ("page_viewers", "secret"),
];

pub(crate) const UNUSABLE: &str = "!";

/// Where a sealed secret sits: a column, or a place inside a column's JSON
/// (`*` stands for every element of an array), on rows whose `name` is
/// `row` when given.
pub(crate) struct Sealed {
    pub table: &'static str,
    pub column: &'static str,
    pub pointer: &'static [&'static str],
    pub row: Option<&'static str>,
    pub purpose: Purpose,
    /// What it is, for the note an import leaves when it was withheld.
    pub what: &'static str,
}

pub(crate) const SEALED: &[Sealed] = &[
    Sealed {
        table: "users",
        column: "totp_secret",
        pointer: &[],
        row: None,
        purpose: Purpose::Totp,
        what: "second-factor seeds",
    },
    Sealed {
        table: "users",
        column: "totp_pending",
        pointer: &[],
        row: None,
        purpose: Purpose::Totp,
        what: "second-factor seeds being set up",
    },
    Sealed {
        table: "notification_channels",
        column: "secret",
        pointer: &[],
        row: None,
        purpose: Purpose::Channel,
        what: "channel signing secrets and bot tokens",
    },
    Sealed {
        table: "vapid_keys",
        column: "private_key",
        pointer: &[],
        row: None,
        purpose: Purpose::Vapid,
        what: "web push keys",
    },
    Sealed {
        table: "integrations",
        column: "secret",
        pointer: &[],
        row: None,
        purpose: Purpose::Channel,
        what: "integrations' signing secrets",
    },
    Sealed {
        table: "alert_groups",
        column: "approve_token",
        pointer: &[],
        row: None,
        purpose: Purpose::Channel,
        what: "drafts' approve links",
    },
    Sealed {
        table: "monitors",
        column: "config",
        pointer: &["headers", "*", "value"],
        row: None,
        purpose: Purpose::MonitorHeader,
        what: "monitor request header values",
    },
    Sealed {
        table: "settings",
        column: "value",
        pointer: &["s3", "secretAccessKey"],
        row: Some("export"),
        purpose: Purpose::Bucket,
        what: "bucket credentials of the static copy",
    },
    Sealed {
        table: "settings",
        column: "value",
        pointer: &["clientSecret"],
        row: Some("sso"),
        purpose: Purpose::Sso,
        what: "the identity provider's client secret",
    },
    Sealed {
        table: "viewer_providers",
        column: "client_secret",
        pointer: &[],
        row: None,
        purpose: Purpose::Sso,
        what: "pages' own identity providers' client secrets",
    },
];

/// The values an enumerated column may hold.
pub(crate) fn allowed(table: &str, column: &str) -> Option<Vec<&'static str>> {
    fn all<T: Copy>(values: &[T], text: fn(T) -> &'static str) -> Option<Vec<&'static str>> {
        Some(values.iter().map(|v| text(*v)).collect())
    }
    match (table, column) {
        ("components" | "component_status_history", "status")
        | ("maintenance_components", "prev_status") => {
            all(ComponentStatus::ALL, ComponentStatus::as_str)
        }
        ("incidents" | "incident_updates" | "incident_templates", "status") => {
            all(IncidentStatus::ALL, IncidentStatus::as_str)
        }
        ("incidents" | "incident_templates", "impact") => all(Impact::ALL, Impact::as_str),
        ("maintenance" | "maintenance_updates", "status") => {
            all(MaintenanceStatus::ALL, MaintenanceStatus::as_str)
        }
        ("users", "role") => all(&Role::ALL, Role::as_str),
        ("comments", "status") => all(CommentStatus::ALL, CommentStatus::as_str),
        ("notification_channels" | "subscribers", "kind") => {
            all(ChannelKind::ALL, ChannelKind::as_str)
        }
        ("subscribers", "scope") => all(SubscriberScope::ALL, SubscriberScope::as_str),
        ("monitors", "kind") => all(MonitorKind::ALL, MonitorKind::as_str),
        ("monitors", "state") => all(MonitorState::ALL, MonitorState::as_str),
        ("integrations", "kind") => all(IntegrationKind::ALL, IntegrationKind::as_str),
        ("integration_events", "outcome") => all(AlertOutcome::ALL, AlertOutcome::as_str),
        ("alert_groups", "impact") => all(Impact::ALL, Impact::as_str),
        ("managed", "kind") => all(ManagedKind::ALL, ManagedKind::as_str),
        ("third_party", "kind") => all(SourceKind::ALL, SourceKind::as_str),
        ("third_party", "feed_status" | "vendor_status") => {
            all(ComponentStatus::ALL, ComponentStatus::as_str)
        }
        ("alert_groups", "state") => Some(vec!["draft", "open", "closed", "dismissed"]),
        _ => None,
    }
}

/// A reference the schema keeps without a foreign key: a column, or a JSON
/// array of ids in a text column.
pub(crate) struct Hidden {
    pub table: &'static str,
    pub column: &'static str,
    pub to: &'static str,
    pub list: bool,
}

pub(crate) const HIDDEN: &[Hidden] = &[
    Hidden {
        table: "users",
        column: "current_page_id",
        to: "status_pages",
        list: false,
    },
    Hidden {
        table: "monitors",
        column: "incident_id",
        to: "incidents",
        list: false,
    },
    Hidden {
        table: "notification_channels",
        column: "page_ids",
        to: "status_pages",
        list: true,
    },
    Hidden {
        table: "notification_channels",
        column: "component_ids",
        to: "components",
        list: true,
    },
    Hidden {
        table: "recurring_maintenance",
        column: "component_ids",
        to: "components",
        list: true,
    },
];
