//! The setup as code (docs/setup-as-code.md): what `upstate apply -f
//! upstate.yaml` reads, and the registry of what it manages. Pages are
//! named by slug, groups and components by name within their page,
//! channels and templates by name; monitors and follows by their
//! component. Monitors and follows take the API's own fields, so a key of
//! the file means what it means in `/api/monitors` and `/api/third-party`.

use crate::Id;
use crate::monitors::MonitorInput;
pub use crate::status::ManagedKind;
use crate::status::{ComponentStatus, Impact, IncidentMode, IncidentStatus, IntegrationKind};
use crate::third_party::FollowInput;
use serde::{Deserialize, Serialize};

/// One object `upstate apply` made or adopted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ManagedObject {
    pub kind: ManagedKind,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id))]
    pub id: Id,
    /// How the setup file names it (`acme`, `acme/API`, `On-call`).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::managed_key))]
    pub key: String,
}

/// `PUT /api/managed`: the whole list.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ManagedList {
    #[cfg_attr(feature = "openapi", schema(max_items = 10000))]
    pub objects: Vec<ManagedObject>,
}

/// The longest key of a managed object (a page's slug and a component's
/// name, with the slash between).
pub const MANAGED_KEY_MAX: usize = 500;

impl ManagedList {
    /// Keys are one line of text, ids name rows.
    pub fn check(&self) -> Result<(), crate::validate::FieldErrors> {
        let mut e = crate::validate::FieldErrors::new();
        for (i, o) in self.objects.iter().enumerate() {
            let n = o.key.chars().count();
            if n == 0 || n > MANAGED_KEY_MAX || o.key.chars().any(char::is_control) {
                e.push(
                    &format!("objects[{i}].key"),
                    format!("must be 1 to {MANAGED_KEY_MAX} characters on one line"),
                );
            }
            if o.id < 1 {
                e.push(
                    &format!("objects[{i}].id"),
                    "must be a row's id (1 or more)",
                );
            }
        }
        e.into_result()
    }
}

/// A setup file.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetupFile {
    /// The pages it manages, with their groups and components.
    #[serde(default)]
    pub pages: Vec<PageDecl>,
    /// Notification channels, by name.
    #[serde(default)]
    pub channels: Vec<ChannelDecl>,
    /// Incident templates, by name (the API's fields).
    #[serde(default)]
    pub templates: Vec<TemplateDecl>,
    /// Alert integrations, by name.
    #[serde(default)]
    pub integrations: Vec<IntegrationDecl>,
    /// The install's settings (`/api/settings` fields); those left out stay.
    pub settings: Option<crate::settings::SettingsInput>,
}

/// An alert integration (docs/integrations.md). Its receiver URL is
/// printed once, when apply makes it; a signing secret is set on its
/// screen.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IntegrationDecl {
    pub name: String,
    pub kind: IntegrationKind,
    /// The slug of a page of this file.
    pub page: String,
    /// Tried in order; the first that matches decides.
    #[serde(default)]
    pub rules: Vec<RuleDecl>,
    pub enabled: Option<bool>,
}

/// A rule of an integration, its components named as on their page.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleDecl {
    /// Alertmanager-style matchers (empty: every alert).
    #[serde(default)]
    pub when: String,
    /// Names of components of the integration's page.
    pub components: Vec<String>,
    /// degraded, partial_outage or major_outage.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::alert_status))]
    pub status: ComponentStatus,
    /// none, draft (the default) or publish.
    pub incident: Option<IncidentMode>,
    /// Resolve when the alerts resolve (default true).
    pub resolve: Option<bool>,
    pub resolve_message: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageDecl {
    pub slug: String,
    pub name: String,
    pub description: Option<String>,
    pub is_public: Option<bool>,
    /// An IANA time zone, such as Europe/Berlin.
    pub time_zone: Option<String>,
    /// In display order.
    #[serde(default)]
    pub groups: Vec<GroupDecl>,
    /// In display order.
    #[serde(default)]
    pub components: Vec<ComponentDecl>,
    /// Who may open it beyond `isPublic` (`/statuspages/{id}/access`);
    /// fields left out stay.
    pub access: Option<crate::access::PageAccessInput>,
    /// Invited viewers, by email (docs/public-pages.md, "Viewers").
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::emails))]
    pub viewers: Vec<String>,
    /// Audience groups, by name: components only some viewers see.
    #[serde(default)]
    pub audiences: Vec<AudienceDecl>,
}

/// An audience group, its components named as on their page.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AudienceDecl {
    pub name: String,
    /// Names of components of the page.
    #[serde(default)]
    pub components: Vec<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::emails))]
    pub emails: Option<Vec<String>>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domains))]
    pub email_domains: Option<Vec<String>>,
}

/// An incident template (`/api/incident-templates` fields).
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateDecl {
    pub name: String,
    pub title: String,
    /// Markdown.
    pub message: Option<String>,
    /// Defaults to investigating.
    pub status: Option<IncidentStatus>,
    /// Defaults to minor.
    pub impact: Option<Impact>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupDecl {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentDecl {
    pub name: String,
    pub description: Option<String>,
    /// The name of one of the page's groups.
    pub group: Option<String>,
    /// Its monitor (`/api/monitors` fields, without `componentId`).
    pub monitor: Option<MonitorInput>,
    /// The vendor it mirrors (`/api/third-party` fields, without
    /// `componentId`).
    pub third_party: Option<FollowInput>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelDecl {
    pub name: String,
    /// webhook, slack, discord, teams, telegram or email.
    pub kind: String,
    pub target: String,
    /// Telegram's bot token (sent when the channel is made).
    pub token: Option<String>,
    /// Only these pages' changes, by slug (none: every page).
    pub pages: Option<Vec<String>>,
    /// Only these kinds of change (none: every kind).
    pub event_kinds: Option<Vec<String>>,
    pub enabled: Option<bool>,
}

impl SetupFile {
    /// What the file says that no schema can: names unique where they are
    /// keys, and groups that exist. Each problem names where it is.
    pub fn check(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut dup = |what: &str, names: Vec<&str>| {
            let mut seen = std::collections::HashSet::new();
            for n in names {
                if !seen.insert(n) {
                    out.push(format!("{what}: {n:?} is declared twice"));
                }
            }
        };
        dup(
            "pages",
            self.pages.iter().map(|p| p.slug.as_str()).collect(),
        );
        dup(
            "channels",
            self.channels.iter().map(|c| c.name.as_str()).collect(),
        );
        dup(
            "templates",
            self.templates.iter().map(|t| t.name.as_str()).collect(),
        );
        dup(
            "integrations",
            self.integrations.iter().map(|x| x.name.as_str()).collect(),
        );
        for (i, p) in self.pages.iter().enumerate() {
            dup(
                &format!("pages[{i}] ({}).groups", p.slug),
                p.groups.iter().map(|g| g.name.as_str()).collect(),
            );
            dup(
                &format!("pages[{i}] ({}).components", p.slug),
                p.components.iter().map(|c| c.name.as_str()).collect(),
            );
        }
        for (i, p) in self.pages.iter().enumerate() {
            let at = format!("pages[{i}] ({})", p.slug);
            if let Some(a) = &p.access
                && let Err(e) = a.clone().apply(&crate::access::PageAccess::default())
            {
                for fe in e.0 {
                    out.push(format!("{at}.access.{}: {}", fe.field, fe.message));
                }
            }
            let mut seen = std::collections::HashSet::new();
            for (j, v) in p.viewers.iter().enumerate() {
                match crate::values::Email::parse(v) {
                    Ok(e) if !seen.insert(e.as_str().to_string()) => {
                        out.push(format!("{at}.viewers[{j}]: {v:?} is declared twice"));
                    }
                    Ok(_) => {}
                    Err(m) => out.push(format!("{at}.viewers[{j}]: {m}")),
                }
            }
            let mut names = std::collections::HashSet::new();
            for (j, a) in p.audiences.iter().enumerate() {
                let here = format!("{at}.audiences[{j}] ({})", a.name);
                if !names.insert(a.name.as_str()) {
                    out.push(format!("{at}.audiences: {:?} is declared twice", a.name));
                }
                for n in &a.components {
                    if !p.components.iter().any(|c| &c.name == n) {
                        out.push(format!(
                            "{here}.components: no component {n:?} on page {}",
                            p.slug
                        ));
                    }
                }
                let input = crate::audience::AudienceInput {
                    name: Some(a.name.clone()),
                    component_ids: None,
                    emails: a.emails.clone(),
                    email_domains: a.email_domains.clone(),
                };
                if let Err(e) = input.create() {
                    for fe in e.0 {
                        out.push(format!("{here}.{}: {}", fe.field, fe.message));
                    }
                }
            }
        }
        for (i, p) in self.pages.iter().enumerate() {
            for (j, c) in p.components.iter().enumerate() {
                let at = format!("pages[{i}].components[{j}] ({})", c.name);
                if let Some(g) = &c.group
                    && !p.groups.iter().any(|x| &x.name == g)
                {
                    out.push(format!("{at}.group: no group {g:?} on page {}", p.slug));
                }
                if c.monitor.as_ref().is_some_and(|m| m.component_id.is_some())
                    || c.third_party
                        .as_ref()
                        .is_some_and(|f| f.component_id.is_some())
                {
                    out.push(format!(
                        "{at}: componentId is the component itself; leave it out"
                    ));
                }
                // The API's own rules, before anything is sent: a file
                // that the server would refuse halfway changes nothing.
                if let Some(m) = &c.monitor
                    && let Err(e) = m.apply(&crate::monitors::MonitorConfig::default())
                {
                    for fe in e.0 {
                        out.push(format!("{at}.monitor.{}: {}", fe.field, fe.message));
                    }
                }
                if let Some(f) = &c.third_party
                    && let Err(e) = f.apply(&crate::third_party::FollowConfig::default())
                {
                    for fe in e.0 {
                        out.push(format!("{at}.thirdParty.{}: {}", fe.field, fe.message));
                    }
                }
                if c.monitor.is_some() && c.third_party.is_some() {
                    out.push(format!(
                        "{at}: a component has a monitor or a thirdParty, not both"
                    ));
                }
            }
        }
        for (i, x) in self.integrations.iter().enumerate() {
            let at = format!("integrations[{i}] ({})", x.name);
            let Some(p) = self.pages.iter().find(|p| p.slug == x.page) else {
                out.push(format!(
                    "{at}.page: {:?} is not a page of this file",
                    x.page
                ));
                continue;
            };
            for (j, r) in x.rules.iter().enumerate() {
                let rule = crate::alerts::Rule {
                    when: r.when.clone(),
                    component_ids: r
                        .components
                        .iter()
                        .map(|n| {
                            p.components
                                .iter()
                                .position(|c| &c.name == n)
                                .map_or(0, |i| i as Id + 1)
                        })
                        .collect(),
                    status: r.status,
                    incident: r.incident.unwrap_or(IncidentMode::Draft),
                    resolve: r.resolve.unwrap_or(true),
                    resolve_message: r.resolve_message.clone(),
                };
                let mut e = crate::validate::FieldErrors::new();
                rule.check(&format!("rules[{j}]"), &mut e);
                for fe in e.0 {
                    out.push(format!("{at}.{}: {}", fe.field, fe.message));
                }
                for n in &r.components {
                    if !p.components.iter().any(|c| &c.name == n) {
                        out.push(format!(
                            "{at}.rules[{j}].components: no component {n:?} on page {}",
                            p.slug
                        ));
                    }
                }
            }
        }
        for (i, c) in self.channels.iter().enumerate() {
            for slug in c.pages.iter().flatten() {
                if !self.pages.iter().any(|p| &p.slug == slug) {
                    out.push(format!(
                        "channels[{i}] ({}).pages: {slug:?} is not a page of this file",
                        c.name
                    ));
                }
            }
        }
        out
    }
}
