//! The enumerated states of the seed document and the transition rules that
//! the seed leaves open (decided in `docs/api.md`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Defines a string-backed enum whose wire form is its snake_case name, used
/// identically in JSON bodies, query strings and database columns.
macro_rules! wire_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        // The schema generator cannot read the per-variant names through the
        // macro; every wire name is the variant's snake_case, which it can.
        #[serde(rename_all = "snake_case")]
        pub enum $name { $(#[serde(rename = $text)] $variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The accepted values, for error messages.
            pub fn expected() -> String {
                [$($text),+].join(", ")
            }
        }

        impl FromStr for $name {
            type Err = UnknownVariant;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownVariant { expected: $name::expected() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// A string that names none of an enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be one of: {expected}")]
pub struct UnknownVariant {
    pub expected: String,
}

wire_enum!(
    /// Where a visitor's comment stands: held until a moderator decides
    /// (unless the install shows comments at once), then shown or not.
    CommentStatus {
        Pending => "pending",
        Approved => "approved",
        Rejected => "rejected",
    }
);

wire_enum!(
    /// Where a notification channel's messages go, and so their shape.
    ChannelKind {
        Webhook => "webhook",
        Slack => "slack",
        Discord => "discord",
        Teams => "teams",
        Telegram => "telegram",
        Email => "email",
        Push => "push",
    }
);

wire_enum!(
    /// What a visitor's subscription hears of: the page (or its chosen
    /// components), or only the incidents followed from their pages.
    SubscriberScope {
        Page => "page",
        Incidents => "incidents",
    }
);

wire_enum!(
    /// A delivery waits (first try or a retry), arrived, or was given up.
    DeliveryStatus {
        Pending => "pending",
        Delivered => "delivered",
        GivenUp => "given_up",
    }
);

wire_enum!(
    /// What a component is doing right now.
    ComponentStatus {
        Operational => "operational",
        Degraded => "degraded",
        PartialOutage => "partial_outage",
        MajorOutage => "major_outage",
        Maintenance => "maintenance",
    }
);

wire_enum!(
    /// Where an incident is in its life.
    IncidentStatus {
        Investigating => "investigating",
        Identified => "identified",
        Monitoring => "monitoring",
        Resolved => "resolved",
    }
);

wire_enum!(
    /// How bad an incident is for users.
    Impact {
        None => "none",
        Minor => "minor",
        Major => "major",
        Critical => "critical",
    }
);

wire_enum!(
    /// Where a maintenance window is in its life.
    MaintenanceStatus {
        Scheduled => "scheduled",
        InProgress => "in_progress",
        Completed => "completed",
        Cancelled => "cancelled",
    }
);

wire_enum!(
    /// What a monitor checks: a URL, a TCP port, a DNS name, or the silence
    /// of a service that should call in (heartbeat).
    MonitorKind {
        Http => "http",
        Tcp => "tcp",
        Dns => "dns",
        Heartbeat => "heartbeat",
    }
);

wire_enum!(
    /// What a monitor's recent checks say (unknown before the first).
    MonitorState {
        Unknown => "unknown",
        Up => "up",
        Degraded => "degraded",
        Down => "down",
    }
);

wire_enum!(
    /// The sender an integration reads: each posts its own payload to its
    /// own receiver route (docs/integrations.md).
    IntegrationKind {
        Alertmanager => "alertmanager",
        Grafana => "grafana",
        Pagerduty => "pagerduty",
        Opsgenie => "opsgenie",
        Datadog => "datadog",
        Generic => "generic",
    }
);

wire_enum!(
    /// What `upstate apply` manages (docs/setup-as-code.md).
    ManagedKind {
        Page => "page",
        Group => "group",
        Component => "component",
        Monitor => "monitor",
        ThirdParty => "third_party",
        Channel => "channel",
        Template => "template",
        Integration => "integration",
        Settings => "settings",
        Access => "access",
        Viewer => "viewer",
        Audience => "audience",
    }
);

wire_enum!(
    /// What a third-party component reads of its vendor: a
    /// Statuspage-compatible `summary.json`, or an RSS/Atom status feed.
    SourceKind {
        Statuspage => "statuspage",
        Feed => "feed",
    }
);

wire_enum!(
    /// What an alert that matches a rule does besides moving components:
    /// nothing more, an incident held for a person's approval, or an
    /// incident the public reads at once.
    IncidentMode {
        None => "none",
        Draft => "draft",
        Publish => "publish",
    }
);

wire_enum!(
    /// What one alert received did: `opened` an incident the public reads,
    /// `drafted` one awaiting approval, `joined` a group already open,
    /// `moved` components only, or nothing (`duplicate` of one firing,
    /// `unmatched` by every rule, `suppressed` by maintenance, `ignored`:
    /// a resolution of nothing firing); `released` one alert of a group
    /// others still hold, `resolved` the group's last, `withdrawn` a draft
    /// whose alerts resolved before anyone approved it.
    AlertOutcome {
        Opened => "opened",
        Drafted => "drafted",
        Joined => "joined",
        Moved => "moved",
        Duplicate => "duplicate",
        Unmatched => "unmatched",
        Suppressed => "suppressed",
        Ignored => "ignored",
        Released => "released",
        Resolved => "resolved",
        Withdrawn => "withdrawn",
    }
);

impl ComponentStatus {
    /// How bad a status is for users. Maintenance is planned, so it ranks
    /// above operational but below any unplanned trouble.
    pub fn severity(self) -> u8 {
        match self {
            ComponentStatus::Operational => 0,
            ComponentStatus::Maintenance => 1,
            ComponentStatus::Degraded => 2,
            ComponentStatus::PartialOutage => 3,
            ComponentStatus::MajorOutage => 4,
        }
    }
}

/// The moves operators (or the scheduler) ask of a maintenance window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintenanceAction {
    Start,
    Complete,
    Cancel,
}

impl MaintenanceAction {
    pub fn verb(self) -> &'static str {
        match self {
            MaintenanceAction::Start => "start",
            MaintenanceAction::Complete => "complete",
            MaintenanceAction::Cancel => "cancel",
        }
    }
}

/// A move the state machine refuses; rendered as 409.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {} a maintenance that is {}", action.verb(), from)]
pub struct InvalidTransition {
    pub action: MaintenanceAction,
    pub from: MaintenanceStatus,
}

impl MaintenanceStatus {
    /// start: scheduled → in_progress; complete: in_progress → completed;
    /// cancel: scheduled | in_progress → cancelled. Everything else is refused,
    /// so a finished window can never be re-opened by a retried request.
    pub fn apply(self, action: MaintenanceAction) -> Result<MaintenanceStatus, InvalidTransition> {
        use MaintenanceAction::*;
        use MaintenanceStatus::*;
        match (self, action) {
            (Scheduled, Start) => Ok(InProgress),
            (InProgress, Complete) => Ok(Completed),
            (Scheduled | InProgress, Cancel) => Ok(Cancelled),
            (from, action) => Err(InvalidTransition { action, from }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MaintenanceAction::*;
    use MaintenanceStatus::*;

    #[test]
    fn maintenance_moves_follow_the_documented_table() {
        let allowed = [
            (Scheduled, Start, InProgress),
            (InProgress, Complete, Completed),
            (Scheduled, Cancel, Cancelled),
            (InProgress, Cancel, Cancelled),
        ];
        for from in MaintenanceStatus::ALL {
            for action in [Start, Complete, Cancel] {
                let expected = allowed
                    .iter()
                    .find(|(f, a, _)| f == from && *a == action)
                    .map(|(_, _, to)| *to);
                assert_eq!(from.apply(action).ok(), expected, "{from} {action:?}");
            }
        }
    }

    #[test]
    fn wire_names_round_trip() {
        for s in ComponentStatus::ALL {
            assert_eq!(s.as_str().parse::<ComponentStatus>(), Ok(*s));
        }
        assert!("down".parse::<ComponentStatus>().is_err());
        assert_eq!(
            serde_json::to_string(&MaintenanceStatus::InProgress)
                .ok()
                .as_deref(),
            Some("\"in_progress\"")
        );
    }
}
