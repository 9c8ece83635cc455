//! Audience groups: Statuspage's audience-specific pages. A page's
//! components put in a group are shown only to the viewers the group names
//! (by email, or by email domain); components in no group are shown to
//! everyone who opens the page. Whatever a visitor cannot see is left out of
//! everything they read: HTML, JSON, feeds, calendar, widget, and the
//! messages sent to them. A visitor who is no viewer (a password holder,
//! anyone on a public page) sees the shared components only, so a
//! component in a group is never shown by accident.

use crate::Id;
use crate::validate::FieldErrors;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Groups per page: Statuspage's plans stop at a few dozen.
pub const AUDIENCES_MAX: usize = 50;
/// Emails and domains per group.
pub const MEMBERS_MAX: usize = 500;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Audience {
    pub id: Id,
    pub name: String,
    /// The components only this group's members (and other groups' that
    /// hold them too) see.
    pub component_ids: Vec<Id>,
    /// Viewers named one by one.
    pub emails: Vec<String>,
    /// Viewers of these email domains.
    pub email_domains: Vec<String>,
}

impl Audience {
    /// Whether the viewer with this (lowercased) email is in the group.
    pub fn includes(&self, email: &str) -> bool {
        self.emails.iter().any(|e| e == email)
            || email
                .rsplit_once('@')
                .is_some_and(|(_, d)| self.email_domains.iter().any(|x| x == d))
    }

    /// The stored form of the members: emails, and domains as `@domain`
    /// (what the fan-out's SQL matches an address's end against).
    pub fn members(&self) -> Vec<String> {
        self.emails
            .iter()
            .cloned()
            .chain(self.email_domains.iter().map(|d| format!("@{d}")))
            .collect()
    }

    /// Back from the stored members.
    pub fn set_members(&mut self, members: Vec<String>) {
        for m in members {
            match m.strip_prefix('@') {
                Some(d) => self.email_domains.push(d.to_string()),
                None => self.emails.push(m),
            }
        }
    }
}

/// The groups a viewer (None: a visitor who is no viewer) belongs to.
pub fn groups_of(audiences: &[Audience], email: Option<&str>) -> Vec<Id> {
    email.map_or_else(Vec::new, |e| {
        audiences
            .iter()
            .filter(|a| a.includes(e))
            .map(|a| a.id)
            .collect()
    })
}

/// The components hidden from the members of `groups`: those in some group
/// and in none of theirs.
pub fn hidden_from(audiences: &[Audience], groups: &[Id]) -> BTreeSet<Id> {
    let seen: BTreeSet<Id> = audiences
        .iter()
        .filter(|a| groups.contains(&a.id))
        .flat_map(|a| a.component_ids.iter().copied())
        .collect();
    audiences
        .iter()
        .flat_map(|a| a.component_ids.iter().copied())
        .filter(|c| !seen.contains(c))
        .collect()
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
#[serde(rename_all = "camelCase")]
pub struct AudienceInput {
    /// Required when creating; unique on the page.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 255, example = "Acme Corp")
    )]
    pub name: Option<String>,
    /// Components of this page only this group's members see.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
    /// Viewers' addresses.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::emails))]
    pub emails: Option<Vec<String>>,
    /// Email domains whose viewers are members (`example.com`).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domains))]
    pub email_domains: Option<Vec<String>>,
}

/// `POST …/audiences`: a new group, its name required.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewAudienceInput {
    /// Unique on the page.
    #[cfg_attr(
        feature = "openapi",
        schema(required, min_length = 1, max_length = 255, example = "Acme Corp")
    )]
    pub name: Option<String>,
    /// Components of this page only this group's members see.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
    /// Viewers' addresses.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::emails))]
    pub emails: Option<Vec<String>>,
    /// Email domains whose viewers are members (`example.com`).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domains))]
    pub email_domains: Option<Vec<String>>,
}

impl NewAudienceInput {
    /// The new group (`id` 0 until stored).
    pub fn create(self) -> Result<Audience, FieldErrors> {
        AudienceInput {
            name: self.name,
            component_ids: self.component_ids,
            emails: self.emails,
            email_domains: self.email_domains,
        }
        .create()
    }
}

impl AudienceInput {
    /// A new group from this input (`id` 0 until stored).
    pub fn create(self) -> Result<Audience, FieldErrors> {
        if self.name.is_none() {
            return Err(FieldErrors::single("name", "is required"));
        }
        self.apply(&Audience {
            id: 0,
            name: String::new(),
            component_ids: Vec::new(),
            emails: Vec::new(),
            email_domains: Vec::new(),
        })
    }

    /// The group after this change of `current`: fields left out stay.
    pub fn apply(self, current: &Audience) -> Result<Audience, FieldErrors> {
        if self.name.is_none()
            && self.component_ids.is_none()
            && self.emails.is_none()
            && self.email_domains.is_none()
        {
            return Err(FieldErrors::single("body", "names no field to change"));
        }
        let mut e = FieldErrors::new();
        let mut next = current.clone();
        if let Some(n) = self.name
            && let Some(n) = e.check("name", crate::validate::name(&n))
        {
            next.name = n;
        }
        if let Some(ids) = self.component_ids {
            let mut kept: Vec<Id> = Vec::new();
            for id in ids {
                if id <= 0 {
                    e.push("componentIds", format!("{id} is not a component id"));
                } else if !kept.contains(&id) {
                    kept.push(id);
                }
            }
            next.component_ids = kept;
        }
        if let Some(raw) = self.emails {
            let mut kept: Vec<String> = Vec::new();
            let mut bad: Vec<String> = Vec::new();
            for m in &raw {
                match crate::values::Email::parse(m) {
                    Ok(a) if !kept.iter().any(|k| k == a.as_str()) => kept.push(a.as_str().into()),
                    Ok(_) => {}
                    Err(_) => bad.push(format!("{m:?}")),
                }
            }
            if !bad.is_empty() {
                e.push("emails", format!("{} not an email address", listed(&bad)));
            }
            next.emails = kept;
        }
        if let Some(raw) = self.email_domains {
            let mut kept: Vec<String> = Vec::new();
            let mut bad: Vec<String> = Vec::new();
            for d in &raw {
                match crate::validate::domain(d.trim().trim_start_matches('@')) {
                    Ok(d) if !kept.contains(&d) => kept.push(d),
                    Ok(_) => {}
                    Err(_) => bad.push(format!("{d:?}")),
                }
            }
            if !bad.is_empty() {
                e.push(
                    "emailDomains",
                    format!("{} not an email domain such as example.com", listed(&bad)),
                );
            }
            next.email_domains = kept;
        }
        if next.email_domains.len() > crate::access::DOMAINS_MAX {
            e.push(
                "emailDomains",
                format!(
                    "names {} domains; at most {}",
                    next.email_domains.len(),
                    crate::access::DOMAINS_MAX
                ),
            );
        }
        let members = next.emails.len() + next.email_domains.len();
        if members > MEMBERS_MAX {
            e.push(
                "emails",
                format!("the group names {members} emails and domains; at most {MEMBERS_MAX}"),
            );
        }
        e.into_result().map(|()| next)
    }
}

/// `"a" is` / `"a", "b" are`, for one message naming each bad entry.
fn listed(bad: &[String]) -> String {
    if bad.len() == 1 {
        format!("{} is", bad[0])
    } else {
        format!("{} are", bad.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: Id, components: &[Id], emails: &[&str], domains: &[&str]) -> Audience {
        Audience {
            id,
            name: format!("g{id}"),
            component_ids: components.to_vec(),
            emails: emails.iter().map(|s| s.to_string()).collect(),
            email_domains: domains.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn members_see_their_groups_and_the_shared_components() {
        let a = [
            group(1, &[10, 11], &["ann@x.org"], &["acme.com"]),
            group(2, &[11, 12], &[], &["globex.com"]),
        ];
        let acme = groups_of(&a, Some("bob@acme.com"));
        assert_eq!(acme, vec![1]);
        assert_eq!(hidden_from(&a, &acme), BTreeSet::from([12]));
        let globex = groups_of(&a, Some("eve@globex.com"));
        assert_eq!(hidden_from(&a, &globex), BTreeSet::from([10]));
        assert!(groups_of(&a, Some("eve@sub.globex.com")).is_empty());
        assert_eq!(
            hidden_from(&a, &groups_of(&a, None)),
            BTreeSet::from([10, 11, 12]),
            "no viewer: shared components only"
        );
        let mut back = group(3, &[], &[], &[]);
        back.set_members(a[0].members());
        assert_eq!(
            (back.emails, back.email_domains),
            (a[0].emails.clone(), a[0].email_domains.clone())
        );
    }

    #[test]
    fn input_is_checked_entry_by_entry() {
        let bad = AudienceInput {
            name: Some(String::new()),
            component_ids: Some(vec![0]),
            emails: Some(vec!["nope".into()]),
            email_domains: Some(vec!["not a domain".into()]),
        }
        .create()
        .err()
        .unwrap_or_default();
        let text = format!("{bad:?}");
        for field in ["name", "componentIds", "emails", "emailDomains"] {
            assert!(text.contains(field), "{field}: {text}");
        }
        assert!(AudienceInput::default().create().is_err(), "name required");
        let ok = AudienceInput {
            name: Some("Acme".into()),
            email_domains: Some(vec!["@Acme.com".into(), "acme.com".into()]),
            ..Default::default()
        }
        .create()
        .unwrap_or_else(|_| group(0, &[], &[], &[]));
        assert_eq!(ok.email_domains, vec!["acme.com".to_string()]);
    }
}
