//! Single sign-on for the team (OpenID Connect): what an operator sets
//! (`GET/PUT /api/sso-settings`, the `sso` settings document) and the rules
//! that turn a person the identity provider vouches for into an account
//! here: which email domains may come in, and which role their groups give.
//!
//! The rules live here, pure, so the sign-in route only asks them. The
//! provider's own protocol (discovery, PKCE, nonce, the ID token's
//! signature) is the server's `sso` module, on the `openidconnect` crate.

use crate::roles::Role;
use crate::validate::{self, FieldErrors};
use serde::{Deserialize, Serialize};

/// The stored settings (the `sso` settings document). The client secret is
/// sealed at rest and never shown again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SsoSettings {
    pub enabled: bool,
    /// The provider's issuer URL; `/.well-known/openid-configuration` is
    /// read from under it.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// The sign-in button's words.
    pub button_label: String,
    /// Email domains that may sign in (empty: any the provider vouches for).
    pub allowed_domains: Vec<String>,
    /// The claim of the ID token (or user info) listing the person's groups.
    pub groups_claim: String,
    pub admin_groups: Vec<String>,
    pub editor_groups: Vec<String>,
    pub viewer_groups: Vec<String>,
    /// The role of someone in none of the groups above; none: refused.
    pub default_role: Option<Role>,
    /// Passwords stop opening sessions, except an owner's (the way back in
    /// when the provider is down or misconfigured).
    pub sso_only: bool,
}

pub const DEFAULT_BUTTON_LABEL: &str = "Sign in with single sign-on";
pub const DEFAULT_GROUPS_CLAIM: &str = "groups";

impl Default for SsoSettings {
    fn default() -> Self {
        SsoSettings {
            enabled: false,
            issuer: String::new(),
            client_id: String::new(),
            client_secret: String::new(),
            button_label: DEFAULT_BUTTON_LABEL.into(),
            allowed_domains: Vec::new(),
            groups_claim: DEFAULT_GROUPS_CLAIM.into(),
            admin_groups: Vec::new(),
            editor_groups: Vec::new(),
            viewer_groups: Vec::new(),
            default_role: None,
            sso_only: false,
        }
    }
}

/// The identity provider given in the server's configuration
/// (`sso_issuer`, `sso_client_id`, `sso_client_secret`): it takes the place
/// of the saved one, and its secret never enters the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
}

/// What `GET /api/sso-settings` shows: the settings without the secret,
/// and the address to register at the provider.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SsoView {
    pub enabled: bool,
    pub issuer: String,
    pub client_id: String,
    /// Whether a client secret is saved (it is never shown).
    pub client_secret_set: bool,
    pub button_label: String,
    pub allowed_domains: Vec<String>,
    pub groups_claim: String,
    pub admin_groups: Vec<String>,
    pub editor_groups: Vec<String>,
    pub viewer_groups: Vec<String>,
    pub default_role: Option<Role>,
    pub sso_only: bool,
    /// The redirect URI to register with the provider.
    pub redirect_uri: String,
    /// The issuer, client id and secret come from the server's
    /// configuration; they cannot be changed here.
    pub from_configuration: bool,
}

impl SsoSettings {
    /// These settings with the configured provider in place of the saved one.
    pub fn with(mut self, c: Option<&Connection>) -> SsoSettings {
        if let Some(c) = c {
            self.issuer = c.issuer.clone();
            self.client_id = c.client_id.clone();
            self.client_secret = c.client_secret.clone();
        }
        self
    }

    pub fn view(&self, redirect_uri: String, from_configuration: bool) -> SsoView {
        SsoView {
            enabled: self.enabled,
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret_set: !self.client_secret.is_empty(),
            button_label: self.button_label.clone(),
            allowed_domains: self.allowed_domains.clone(),
            groups_claim: self.groups_claim.clone(),
            admin_groups: self.admin_groups.clone(),
            editor_groups: self.editor_groups.clone(),
            viewer_groups: self.viewer_groups.clone(),
            default_role: self.default_role,
            sso_only: self.sso_only,
            redirect_uri,
            from_configuration,
        }
    }

    /// Whether the sign-in page offers single sign-on.
    pub fn offered(&self) -> bool {
        self.enabled && !self.issuer.is_empty() && !self.client_id.is_empty()
    }

    /// The sign-in button's label, when single sign-on is offered.
    pub fn offered_label(&self) -> Option<String> {
        self.offered().then(|| self.button_label.clone())
    }

    /// Whether passwords still open sessions for someone of this role.
    pub fn password_allowed(&self, role: Role) -> bool {
        !(self.offered() && self.sso_only) || role == Role::Owner
    }

    /// Why this email may not come in, if it may not.
    pub fn refuses_email(&self, email: &str) -> Option<String> {
        let domain = email
            .rsplit_once('@')
            .map(|(_, d)| d.to_ascii_lowercase())?;
        if self.allowed_domains.is_empty() || self.allowed_domains.contains(&domain) {
            None
        } else {
            Some(format!(
                "accounts of {domain} may not sign in here (allowed: {})",
                self.allowed_domains.join(", ")
            ))
        }
    }

    /// The role the person's groups give: the highest of the groups they
    /// are in, else the default role. Single sign-on never makes an owner.
    pub fn role_for(&self, groups: &[String]) -> Option<Role> {
        let in_any = |list: &[String]| list.iter().any(|g| groups.contains(g));
        if in_any(&self.admin_groups) {
            Some(Role::Admin)
        } else if in_any(&self.editor_groups) {
            Some(Role::Editor)
        } else if in_any(&self.viewer_groups) {
            Some(Role::Viewer)
        } else {
            self.default_role.filter(|r| *r != Role::Owner)
        }
    }
}

/// `PUT /api/sso-settings`: the whole setting.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SsoInput {
    /// Offer single sign-on on the sign-in page.
    pub enabled: bool,
    /// The provider's issuer URL, such as
    /// `https://keycloak.example.com/realms/ops`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_empty))]
    pub issuer: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential_or_empty))]
    pub client_id: Option<String>,
    /// Leave out to keep the saved secret of the same client id.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub client_secret: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub button_label: Option<String>,
    /// Email domains that may sign in; empty: any.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domains))]
    pub allowed_domains: Vec<String>,
    /// Default `groups`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::claim))]
    pub groups_claim: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::group_names))]
    pub admin_groups: Vec<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::group_names))]
    pub editor_groups: Vec<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::group_names))]
    pub viewer_groups: Vec<String>,
    /// The role of someone in none of the groups (`admin`, `editor`,
    /// `viewer`); leave out to refuse them.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::sso_role))]
    pub default_role: Option<String>,
    /// Passwords stop opening sessions, except an owner's.
    #[serde(default)]
    pub sso_only: bool,
}

const TEXT_MAX: usize = 256;
const LIST_MAX: usize = 50;

/// A client id, secret or claim name: printable, no spaces, bounded.
pub(crate) fn token(what: &str, raw: &str) -> Result<String, String> {
    let s = raw.trim();
    if s.is_empty() || s.len() > TEXT_MAX || !s.chars().all(|c| c.is_ascii_graphic()) {
        Err(format!(
            "must be {what}: 1 to {TEXT_MAX} printable ASCII characters without spaces"
        ))
    } else {
        Ok(s.to_string())
    }
}

/// A sign-in button's words: the default when left out or blank.
pub(crate) fn button_label(raw: Option<&str>, e: &mut FieldErrors) -> String {
    match raw.map(str::trim) {
        None | Some("") => DEFAULT_BUTTON_LABEL.to_string(),
        Some(l) => e
            .check("buttonLabel", validate::name(l))
            .unwrap_or_default(),
    }
}

/// A list of group names (each as the provider spells it).
fn groups(field: &str, raw: Vec<String>, e: &mut FieldErrors) -> Vec<String> {
    if raw.len() > LIST_MAX {
        e.push(field, format!("at most {LIST_MAX} groups"));
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for g in raw {
        let g = g.trim().to_string();
        if g.is_empty() {
            continue;
        }
        if g.len() > TEXT_MAX || g.chars().any(char::is_control) {
            e.push(
                field,
                format!("{g:?} is no group name (1 to {TEXT_MAX} characters)"),
            );
        } else if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

impl SsoInput {
    /// The settings this input makes, keeping `current`'s secret where the
    /// input leaves it out for the same client.
    pub fn apply(self, current: &SsoSettings) -> Result<SsoSettings, FieldErrors> {
        let mut e = FieldErrors::new();
        let issuer = match self.issuer.as_deref().map(str::trim) {
            None | Some("") => String::new(),
            Some(u) => e
                .check("issuer", validate::url(u))
                .map(|u| u.trim_end_matches('/').to_string())
                .unwrap_or_default(),
        };
        let client_id = match self.client_id.as_deref().map(str::trim) {
            None | Some("") => String::new(),
            Some(c) => e
                .check("clientId", token("the client id", c))
                .unwrap_or_default(),
        };
        let client_secret = match self.client_secret {
            Some(s) if !s.trim().is_empty() => e
                .check("clientSecret", token("the client secret", &s))
                .unwrap_or_default(),
            // Left out or empty: the saved one, if the client is the same.
            _ if current.client_id == client_id => current.client_secret.clone(),
            _ => String::new(),
        };
        let button_label = button_label(self.button_label.as_deref(), &mut e);
        let mut allowed_domains = Vec::new();
        if self.allowed_domains.len() > LIST_MAX {
            e.push("allowedDomains", format!("at most {LIST_MAX} domains"));
        }
        for d in self.allowed_domains.iter().take(LIST_MAX) {
            let d = d.trim().trim_start_matches('@');
            if d.is_empty() {
                continue;
            }
            match validate::domain(d) {
                Ok(d) if !allowed_domains.contains(&d) => allowed_domains.push(d),
                Ok(_) => {}
                Err(m) => e.push("allowedDomains", format!("{d:?}: {m}")),
            }
        }
        let groups_claim = match self.groups_claim.as_deref().map(str::trim) {
            None | Some("") => DEFAULT_GROUPS_CLAIM.to_string(),
            Some(c) => e
                .check("groupsClaim", token("a claim name", c))
                .unwrap_or_default(),
        };
        let admin_groups = groups("adminGroups", self.admin_groups, &mut e);
        let editor_groups = groups("editorGroups", self.editor_groups, &mut e);
        let viewer_groups = groups("viewerGroups", self.viewer_groups, &mut e);
        let default_role = match self.default_role.as_deref().map(str::trim) {
            None | Some("") => None,
            Some("admin") => Some(Role::Admin),
            Some("editor") => Some(Role::Editor),
            Some("viewer") => Some(Role::Viewer),
            Some(_) => {
                e.push(
                    "defaultRole",
                    "must be admin, editor or viewer (or left out)",
                );
                None
            }
        };
        if self.enabled && e.is_empty() {
            if issuer.is_empty() {
                e.push("issuer", "is required to turn single sign-on on");
            }
            if client_id.is_empty() {
                e.push("clientId", "is required to turn single sign-on on");
            }
            if client_secret.is_empty() {
                e.push("clientSecret", "is required with a new client id");
            }
            if admin_groups.is_empty()
                && editor_groups.is_empty()
                && viewer_groups.is_empty()
                && default_role.is_none()
            {
                e.push(
                    "defaultRole",
                    "name groups for a role or a default role: otherwise no one could sign in",
                );
            }
        }
        if self.sso_only && !self.enabled {
            e.push("ssoOnly", "needs single sign-on turned on");
        }
        e.into_result()?;
        Ok(SsoSettings {
            enabled: self.enabled,
            issuer,
            client_id,
            client_secret,
            button_label,
            allowed_domains,
            groups_claim,
            admin_groups,
            editor_groups,
            viewer_groups,
            default_role,
            sso_only: self.sso_only,
        })
    }
}

/// The groups a claim holds: a list of strings, or one string (some
/// providers send a single group bare, or space-separated).
pub fn groups_of(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(serde_json::Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> SsoInput {
        serde_json::from_value(v).unwrap()
    }

    fn configured() -> SsoSettings {
        input(
            json!({"enabled": true, "issuer": "https://id.example.com/", "clientId": "upstate",
            "clientSecret": "s3cret", "allowedDomains": ["Example.com", "@ops.example.org"],
            "adminGroups": ["ops-admins"], "editorGroups": ["ops"], "viewerGroups": ["staff"]}),
        )
        .apply(&SsoSettings::default())
        .unwrap()
    }

    #[test]
    fn groups_map_to_the_highest_role_and_never_to_owner() {
        let s = configured();
        assert_eq!(s.issuer, "https://id.example.com");
        let g = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(s.role_for(&g(&["staff", "ops-admins"])), Some(Role::Admin));
        assert_eq!(s.role_for(&g(&["ops"])), Some(Role::Editor));
        assert_eq!(s.role_for(&g(&["staff"])), Some(Role::Viewer));
        assert_eq!(s.role_for(&g(&["sales"])), None);
        let mut open = s.clone();
        open.default_role = Some(Role::Viewer);
        assert_eq!(open.role_for(&[]), Some(Role::Viewer));
        open.default_role = Some(Role::Owner);
        assert_eq!(open.role_for(&[]), None);
    }

    #[test]
    fn domains_are_kept_lowercase_and_checked() {
        let s = configured();
        assert_eq!(s.allowed_domains, vec!["example.com", "ops.example.org"]);
        assert_eq!(s.refuses_email("a@EXAMPLE.com"), None);
        assert!(s.refuses_email("a@evil.com").unwrap().contains("evil.com"));
    }

    #[test]
    fn sso_only_keeps_the_owner_s_password() {
        let mut s = configured();
        assert!(s.password_allowed(Role::Admin));
        s.sso_only = true;
        assert!(!s.password_allowed(Role::Admin));
        assert!(s.password_allowed(Role::Owner));
        s.enabled = false;
        assert!(s.password_allowed(Role::Viewer), "off: passwords work");
    }

    #[test]
    fn the_secret_is_kept_for_the_same_client_only() {
        let s = configured();
        let same = input(json!({"enabled": true, "issuer": "https://id.example.com", "clientId": "upstate", "defaultRole": "viewer"}))
            .apply(&s)
            .unwrap();
        assert_eq!(same.client_secret, "s3cret");
        let other = input(json!({"enabled": true, "issuer": "https://id.example.com", "clientId": "other", "defaultRole": "viewer"}))
            .apply(&s)
            .unwrap_err();
        assert_eq!(other.0[0].field, "clientSecret");
    }

    #[test]
    fn bad_settings_are_refused_by_field() {
        let e = input(
            json!({"enabled": true, "issuer": "not a url", "clientId": "a b",
            "allowedDomains": ["exa mple"], "defaultRole": "owner", "ssoOnly": true}),
        )
        .apply(&SsoSettings::default())
        .unwrap_err();
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        for f in ["issuer", "clientId", "allowedDomains", "defaultRole"] {
            assert!(fields.contains(&f), "{f} in {fields:?}");
        }
        let e = input(json!({"enabled": false, "ssoOnly": true}))
            .apply(&SsoSettings::default())
            .unwrap_err();
        assert_eq!(e.0[0].field, "ssoOnly");
        let e = input(json!({"enabled": true, "issuer": "https://id.example.com", "clientId": "c", "clientSecret": "s"}))
            .apply(&SsoSettings::default())
            .unwrap_err();
        assert_eq!(e.0[0].field, "defaultRole", "no way in for anyone");
    }

    #[test]
    fn groups_read_from_lists_or_strings() {
        assert_eq!(groups_of(Some(&json!(["a", 1, "b"]))), vec!["a", "b"]);
        assert_eq!(groups_of(Some(&json!("a b"))), vec!["a", "b"]);
        assert!(groups_of(None).is_empty());
    }
}
