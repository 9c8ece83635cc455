//! The audit log's hash chain.
//!
//! Every event's hash is SHA-256 over the previous event's hash and a
//! canonical serialization of the event (fixed field order, object keys
//! sorted, no whitespace). Changing, removing or reordering any stored event
//! breaks every hash after it, which `verify` finds and names.

use crate::Id;
use crate::timestamp::Timestamp;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The hash before the first event.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The kinds of actor. An event keeps its kind as the stored text (so that
/// verifying the chain sees exactly what is stored); new events take it from
/// here, and the audit filter accepts only these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActorKind {
    Key,
    User,
    Cli,
    System,
    Anonymous,
}

impl ActorKind {
    pub const ALL: [ActorKind; 5] = [
        ActorKind::Key,
        ActorKind::User,
        ActorKind::Cli,
        ActorKind::System,
        ActorKind::Anonymous,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Key => "key",
            ActorKind::User => "user",
            ActorKind::Cli => "cli",
            ActorKind::System => "system",
            ActorKind::Anonymous => "anonymous",
        }
    }
}

impl std::str::FromStr for ActorKind {
    type Err = crate::status::UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ActorKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| crate::status::UnknownVariant {
                expected: "key, user, cli, system or anonymous".into(),
            })
    }
}

/// Who did something: an API key, a signed-in user, the command line, or the
/// service itself (the scheduler).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    /// One of `ActorKind`: `key`, `user`, `cli`, `system` or `anonymous`.
    pub kind: String,
    pub id: Option<Id>,
    /// A readable name: the key's name, the user's email, `scheduler`, ...
    pub label: String,
}

impl Actor {
    pub fn new(kind: ActorKind, id: Option<Id>, label: &str) -> Actor {
        Actor {
            kind: kind.as_str().into(),
            id,
            label: label.into(),
        }
    }
    /// A signed-in person, by their email.
    pub fn user(id: Id, email: &str) -> Actor {
        Actor::new(ActorKind::User, Some(id), email)
    }
    pub fn key(id: Id, name: &str) -> Actor {
        Actor {
            kind: ActorKind::Key.as_str().into(),
            id: Some(id),
            label: name.into(),
        }
    }
    pub fn cli() -> Actor {
        Actor {
            kind: ActorKind::Cli.as_str().into(),
            id: None,
            label: "command line".into(),
        }
    }
    /// Someone not signed in: a sign-in attempt, a visitor at a private page.
    pub fn anonymous() -> Actor {
        Actor {
            kind: ActorKind::Anonymous.as_str().into(),
            id: None,
            label: "not signed in".into(),
        }
    }
    pub fn system(what: &str) -> Actor {
        Actor {
            kind: ActorKind::System.as_str().into(),
            id: None,
            label: what.into(),
        }
    }
}

/// Declares the audit actions: the enum, each one's stored name, and the list.
macro_rules! actions {
    ($($variant:ident = $name:literal,)*) => {
        /// Every kind of event the audit log records. The names are stored
        /// with each event (and hashed into the chain), so they never change:
        /// `<target>.<verb>`, the nouns as they were first written.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $($variant,)*
        }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }
        }
    };
}

actions! {
    ApiKeyCreate = "api_key.create",
    ApiKeyRevoke = "api_key.revoke",
    ApiKeyRevokeAll = "api_key.revoke_all",
    ApiKeyUpdate = "api_key.update",
    AlertDraftApprove = "alert_draft.approve",
    AlertDraftCreate = "alert_draft.create",
    AlertDraftDismiss = "alert_draft.dismiss",
    AuthFailure = "auth.failure",
    AuthLockout = "auth.lockout",
    ComponentCreate = "component.create",
    ComponentDelete = "component.delete",
    ComponentResetStats = "component.reset_stats",
    ComponentUpdate = "component.update",
    FeaturesUpdate = "features.update",
    ExportSettingsUpdate = "export_settings.update",
    SsoSettingsUpdate = "sso_settings.update",
    CommentCreate = "comment.create",
    CommentDelete = "comment.delete",
    CommentModerate = "comment.moderate",
    GroupCreate = "group.create",
    GroupDelete = "group.delete",
    GroupReorder = "group.reorder",
    GroupUpdate = "group.update",
    IntegrationAlert = "integration.alert",
    IntegrationCreate = "integration.create",
    IntegrationDelete = "integration.delete",
    IntegrationUpdate = "integration.update",
    IncidentCreate = "incident.create",
    IncidentDelete = "incident.delete",
    IncidentDeleteUpdate = "incident.delete_update",
    IncidentEditUpdate = "incident.edit_update",
    IncidentPostUpdate = "incident.post_update",
    IncidentResolve = "incident.resolve",
    IncidentUpdate = "incident.update",
    MaintenanceCancel = "maintenance.cancel",
    ManagedReplace = "managed.replace",
    NotificationCreate = "notification.create",
    NotificationDelete = "notification.delete",
    NotificationUpdate = "notification.update",
    PostmortemUpdate = "postmortem.update",
    MaintenanceComplete = "maintenance.complete",
    MaintenanceCreate = "maintenance.create",
    MaintenanceDelete = "maintenance.delete",
    MaintenanceRemind = "maintenance.remind",
    RecurringCreate = "recurring.create",
    RecurringDelete = "recurring.delete",
    RecurringUpdate = "recurring.update",
    MaintenanceStart = "maintenance.start",
    MonitorCreate = "monitor.create",
    MonitorDelete = "monitor.delete",
    MonitorStatus = "monitor.status",
    MonitorUpdate = "monitor.update",
    MaintenanceUpdate = "maintenance.update",
    QuicklinkCreate = "quicklink.create",
    QuicklinkDelete = "quicklink.delete",
    QuicklinkUpdate = "quicklink.update",
    TemplateCreate = "template.create",
    TemplateDelete = "template.delete",
    TemplateUpdate = "template.update",
    ThirdPartyCreate = "third_party.create",
    ThirdPartyDelete = "third_party.delete",
    ThirdPartyStatus = "third_party.status",
    ThirdPartyUpdate = "third_party.update",
    RateLimitsReset = "rate_limits.reset",
    SettingsUpdate = "settings.update",
    ServerKeyRotate = "server_key.rotate",
    InstallExport = "install.export",
    InstallImport = "install.import",
    StatuspageCreate = "statuspage.create",
    SubscriberCreate = "subscriber.create",
    SubscriberDelete = "subscriber.delete",
    SubscriberImport = "subscriber.import",
    StatuspageDelete = "statuspage.delete",
    StatuspageAccess = "statuspage.access",
    StatuspageAudienceCreate = "statuspage.audience_create",
    StatuspageAudienceDelete = "statuspage.audience_delete",
    StatuspageAudienceUpdate = "statuspage.audience_update",
    StatuspagePasswordRemove = "statuspage.password_remove",
    StatuspagePasswordSet = "statuspage.password_set",
    StatuspageUpdate = "statuspage.update",
    StatuspageViewerAdd = "statuspage.viewer_add",
    StatuspageViewerProvider = "statuspage.viewer_provider",
    StatuspageViewerRemove = "statuspage.viewer_remove",
    StatuspageViewerReset = "statuspage.viewer_reset",
    StatuspageViewerSignIn = "statuspage.viewer_sign_in",
    User2faDisable = "user.2fa_disable",
    User2faEnable = "user.2fa_enable",
    User2faRecoveryCodes = "user.2fa_recovery_codes",
    User2faSetupStarted = "user.2fa_setup_started",
    UserChangePassword = "user.change_password",
    UserCreate = "user.create",
    UserDelete = "user.delete",
    UserLogin = "user.login",
    UserLogout = "user.logout",
    UserRevokeSessions = "user.revoke_sessions",
    UserStepUp = "user.step_up",
    UserUpdate = "user.update",
}

impl std::str::FromStr for Action {
    type Err = crate::status::UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Action::ALL
            .iter()
            .copied()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| crate::status::UnknownVariant {
                expected: "an audit action such as incident.resolve".into(),
            })
    }
}

impl From<crate::MaintenanceAction> for Action {
    fn from(a: crate::MaintenanceAction) -> Self {
        match a {
            crate::MaintenanceAction::Start => Action::MaintenanceStart,
            crate::MaintenanceAction::Complete => Action::MaintenanceComplete,
            crate::MaintenanceAction::Cancel => Action::MaintenanceCancel,
        }
    }
}

/// One recorded change, as stored and as the audit routes show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    pub id: Id,
    /// Position in the chain, from 1 without gaps.
    pub seq: i64,
    pub at: Timestamp,
    pub actor: Actor,
    /// `<target type>.<verb>`, e.g. `incident.resolve`.
    pub action: String,
    pub target_type: String,
    pub target_id: Option<Id>,
    /// What changed, never secrets.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub summary: serde_json::Value,
    pub client_addr: Option<String>,
    pub user_agent: Option<String>,
    pub prev_hash: String,
    pub hash: String,
}

/// The hashed fields, in a fixed order (the struct's), without the hashes.
#[derive(Serialize)]
struct Canonical<'a> {
    seq: i64,
    at: i64,
    actor_kind: &'a str,
    actor_id: Option<Id>,
    actor_label: &'a str,
    action: &'a str,
    target_type: &'a str,
    target_id: Option<Id>,
    summary: &'a serde_json::Value,
    client_addr: Option<&'a str>,
    user_agent: Option<&'a str>,
}

/// The hash of an event that follows `prev_hash`. `serde_json` keeps object
/// keys sorted (no `preserve_order`), so `summary` serializes canonically.
pub fn hash(prev_hash: &str, e: &AuditEvent) -> String {
    let canonical = Canonical {
        seq: e.seq,
        at: e.at.millis(),
        actor_kind: &e.actor.kind,
        actor_id: e.actor.id,
        actor_label: &e.actor.label,
        action: &e.action,
        target_type: &e.target_type,
        target_id: e.target_id,
        summary: &e.summary,
        client_addr: e.client_addr.as_deref(),
        user_agent: e.user_agent.as_deref(),
    };
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    h.update(serde_json::to_vec(&canonical).unwrap_or_default());
    hex::encode(h.finalize())
}

/// The outcome of walking the chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Verification {
    pub intact: bool,
    /// How many events were checked.
    pub checked: i64,
    /// The first event that does not fit, if any.
    pub broken_at: Option<i64>,
    pub reason: Option<String>,
}

/// Checks events given in `seq` order, continuing from `prev` (the hash and
/// seq before the first). Returns the first break, or the new head.
pub fn verify_run(
    prev: (&str, i64),
    events: &[AuditEvent],
) -> Result<(String, i64), (i64, String)> {
    let (mut prev_hash, mut prev_seq) = (prev.0.to_string(), prev.1);
    for e in events {
        if e.seq != prev_seq + 1 {
            return Err((
                e.seq,
                format!(
                    "sequence jumps from {prev_seq} to {}: events are missing",
                    e.seq
                ),
            ));
        }
        if e.prev_hash != prev_hash {
            return Err((
                e.seq,
                "its previous-hash link does not match the event before it".into(),
            ));
        }
        if hash(&prev_hash, e) != e.hash {
            return Err((
                e.seq,
                "its content does not match its hash: the event was altered".into(),
            ));
        }
        prev_hash = e.hash.clone();
        prev_seq = e.seq;
    }
    Ok((prev_hash, prev_seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<AuditEvent> {
        let mut prev = GENESIS.to_string();
        (1..=n)
            .map(|seq| {
                let mut e = AuditEvent {
                    id: seq,
                    seq,
                    at: Timestamp::from_millis(1_000 * seq),
                    actor: Actor::key(7, "deploy"),
                    action: "incident.create".into(),
                    target_type: "incident".into(),
                    target_id: Some(seq),
                    summary: serde_json::json!({"title": format!("t{seq}"), "b": 1, "a": 2}),
                    client_addr: Some("127.0.0.1".into()),
                    user_agent: None,
                    prev_hash: prev.clone(),
                    hash: String::new(),
                };
                e.hash = hash(&prev, &e);
                prev = e.hash.clone();
                e
            })
            .collect()
    }

    #[test]
    fn an_untouched_chain_verifies() {
        let c = chain(5);
        assert_eq!(verify_run((GENESIS, 0), &c).map(|h| h.1), Ok(5));
    }

    #[test]
    fn any_edit_removal_or_swap_is_found() {
        let mut edited = chain(5);
        edited[2].summary = serde_json::json!({"title": "forged"});
        assert_eq!(
            verify_run((GENESIS, 0), &edited).err().map(|e| e.0),
            Some(3)
        );
        let mut removed = chain(5);
        removed.remove(1);
        assert_eq!(
            verify_run((GENESIS, 0), &removed).err().map(|e| e.0),
            Some(3)
        );
        let mut relinked = chain(5);
        relinked[3].prev_hash = GENESIS.into();
        assert_eq!(
            verify_run((GENESIS, 0), &relinked).err().map(|e| e.0),
            Some(4)
        );
    }
}
