//! Roles and what each may do. A role is a fixed, documented set of
//! permissions; routes ask for a permission, never for a role.

use crate::status::UnknownVariant;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Permission {
    /// Read pages, components, incidents and maintenance in the admin interface.
    PagesRead,
    /// Create and change incidents and maintenance.
    IncidentsWrite,
    /// Create and change pages, components and groups.
    PagesWrite,
    /// See roles and their permissions.
    RolesView,
    /// Read the audit log.
    AuditView,
    /// Create and revoke API keys.
    KeysManage,
    /// Invite, change and remove users.
    UsersManage,
    /// Change service settings.
    SettingsWrite,
}

impl Permission {
    /// What the permission lets a person do, as a person would say it.
    fn deed(self) -> &'static str {
        match self {
            Permission::PagesRead => "read the status pages here",
            Permission::IncidentsWrite => "report incidents and plan maintenance",
            Permission::PagesWrite => "change pages, components and groups",
            Permission::RolesView => "see the roles",
            Permission::AuditView => "read the audit log",
            Permission::KeysManage => "manage API keys",
            Permission::UsersManage => "manage the team",
            Permission::SettingsWrite => "change settings, notification channels and subscribers",
        }
    }

    /// The refusal a person reads when their role lacks this permission:
    /// who may ("Only editors and above can change pages, components and
    /// groups."), never the permission's internal name.
    pub fn refusal(self) -> String {
        let least = Role::ALL
            .iter()
            .rev()
            .find(|r| r.has(self))
            .copied()
            .unwrap_or(Role::Owner);
        let who = match least {
            Role::Viewer => "Everyone on the team",
            Role::Editor => "Only editors and above",
            Role::Admin => "Only admins and owners",
            Role::Owner => "Only owners",
        };
        format!("{who} can {}.", self.deed())
    }

    pub const ALL: [Permission; 8] = [
        Permission::PagesRead,
        Permission::IncidentsWrite,
        Permission::PagesWrite,
        Permission::RolesView,
        Permission::AuditView,
        Permission::KeysManage,
        Permission::UsersManage,
        Permission::SettingsWrite,
    ];
}

/// Ordered from least to most powerful: nobody may grant a role above their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Admin,
    Owner,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Owner, Role::Admin, Role::Editor, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Editor => "editor",
            Role::Viewer => "viewer",
        }
    }

    /// owner: everything. admin: everything but managing owners (a rule of the
    /// user routes, by rank). editor: day-to-day status work. viewer: read only.
    pub fn permissions(self) -> &'static [Permission] {
        use Permission::*;
        match self {
            Role::Owner | Role::Admin => &Permission::ALL,
            Role::Editor => &[PagesRead, IncidentsWrite, PagesWrite],
            Role::Viewer => &[PagesRead],
        }
    }

    pub fn has(self, p: Permission) -> bool {
        self.permissions().contains(&p)
    }

    /// The role whose permissions an API key of `scope` has: the same role a
    /// person needs to create such a key (docs/security.md), so a key never
    /// does more than its creator could.
    pub fn of_scope(scope: crate::scope::Scope) -> Role {
        match scope {
            crate::scope::Scope::Read => Role::Viewer,
            crate::scope::Scope::Write => Role::Editor,
            crate::scope::Scope::Admin => Role::Admin,
        }
    }
}

impl FromStr for Role {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "owner" => Ok(Role::Owner),
            "admin" => Ok(Role::Admin),
            "editor" => Ok(Role::Editor),
            "viewer" => Ok(Role::Viewer),
            _ => Err(UnknownVariant {
                expected: "owner, admin, editor, viewer".into(),
            }),
        }
    }
}

/// Passwords: 12 to 128 characters (ASVS 2.1.1/2.1.2); anything printable.
pub fn password(raw: &str) -> Result<(), String> {
    let n = raw.chars().count();
    if !(12..=128).contains(&n) {
        return Err("must be 12 to 128 characters".into());
    }
    Ok(())
}

/// An email address, lowercased: one `@`, a dot in the domain, no spaces.
pub fn email(raw: &str) -> Result<String, String> {
    let s = raw.trim().to_ascii_lowercase();
    match s.split_once('@') {
        Some((local, domain))
            if !local.is_empty()
                && domain.contains('.')
                && !s.chars().any(char::is_whitespace)
                && s.len() <= 254 =>
        {
            Ok(s)
        }
        _ => Err("must be an email address".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_matrix() {
        assert!(Role::Owner.has(Permission::UsersManage));
        assert!(Role::Admin.has(Permission::AuditView));
        assert!(Role::Editor.has(Permission::IncidentsWrite));
        assert!(!Role::Editor.has(Permission::RolesView));
        assert!(!Role::Viewer.has(Permission::IncidentsWrite));
        assert!(Role::Viewer < Role::Editor && Role::Admin < Role::Owner);
    }

    #[test]
    fn refusals_name_who_may_in_words() {
        assert_eq!(
            Permission::PagesWrite.refusal(),
            "Only editors and above can change pages, components and groups."
        );
        assert_eq!(
            Permission::KeysManage.refusal(),
            "Only admins and owners can manage API keys."
        );
        for p in Permission::ALL {
            assert!(!p.refusal().contains('_'), "{p:?}");
        }
    }

    #[test]
    fn credentials() {
        assert!(password("short").is_err());
        assert!(password("correct horse battery").is_ok());
        assert_eq!(email(" Ops@Example.COM ").as_deref(), Ok("ops@example.com"));
        assert!(email("no-at.example.com").is_err());
        assert!(email("a@b").is_err());
    }
}
