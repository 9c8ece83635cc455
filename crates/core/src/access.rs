//! Who may open a page beyond its visibility: the networks it is held to.
//! A page with allowed networks answers only clients whose address falls in
//! one of them (Statuspage's and Better Stack's IP allowlists), whatever else
//! opens it (public, or its password). The address is the socket peer, or
//! what a configured trusted proxy forwarded (`client_ip`), never a header
//! from anyone else.

use crate::validate::FieldErrors;
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// More would be a list nobody reads; a whole organisation fits in a few.
pub const NETWORKS_MAX: usize = 100;
/// As many as single sign-on's allowed domains.
pub const DOMAINS_MAX: usize = 50;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageAccess {
    /// The networks (CIDR) whose clients may open the page; empty: anyone
    /// the page's visibility lets in.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["203.0.113.0/24", "2001:db8::/32"])))]
    pub allowed_networks: Vec<IpNet>,
    /// Whether a private page opens to its viewers (people outside the team
    /// who sign in with a link sent to their email).
    #[serde(default)]
    pub viewers: bool,
    /// Email domains whose people may sign in as viewers without an
    /// invitation (`example.com`).
    #[serde(default)]
    pub viewer_domains: Vec<String>,
    /// Whether viewers may also sign in through the team's identity
    /// provider (single sign-on), their email then checked as a link's is.
    #[serde(default)]
    pub viewer_sso: bool,
}

impl PageAccess {
    /// Whether `email` (lowercased) may sign in: invited (`listed`), or of
    /// an allowed domain.
    pub fn lets_in(&self, email: &str, listed: bool) -> bool {
        self.viewers
            && (listed
                || email
                    .rsplit_once('@')
                    .is_some_and(|(_, d)| self.viewer_domains.iter().any(|x| x == d)))
    }

    /// Whether the page is held to some networks.
    pub fn restricted(&self) -> bool {
        !self.allowed_networks.is_empty()
    }

    /// Whether a client at `ip` may open the page. A request without an
    /// address (the static copy, made from inside) opens only pages that are
    /// not restricted, so restricted ones never reach a public bucket.
    pub fn admits(&self, ip: Option<IpAddr>) -> bool {
        if !self.restricted() {
            return true;
        }
        ip.map(|ip| ip.to_canonical())
            .is_some_and(|ip| self.allowed_networks.iter().any(|n| n.contains(&ip)))
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageAccessInput {
    /// Addresses or CIDR networks, such as `203.0.113.0/24`, `2001:db8::/32`
    /// or `198.51.100.7`; `[]` opens the page to every network again.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::networks))]
    pub allowed_networks: Option<Vec<String>>,
    /// Whether the (private) page opens to its viewers.
    pub viewers: Option<bool>,
    /// Email domains whose people may sign in as viewers uninvited.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domains))]
    pub viewer_domains: Option<Vec<String>>,
    /// Whether viewers may sign in through the team's identity provider.
    pub viewer_sso: Option<bool>,
}

impl PageAccessInput {
    /// The access after this change of `current`: fields left out stay.
    pub fn apply(self, current: &PageAccess) -> Result<PageAccess, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.allowed_networks.is_none()
            && self.viewers.is_none()
            && self.viewer_domains.is_none()
            && self.viewer_sso.is_none()
        {
            return Err(FieldErrors::single("body", "names no field to change"));
        }
        let mut next = current.clone();
        if let Some(v) = self.viewers {
            next.viewers = v;
        }
        if let Some(v) = self.viewer_sso {
            next.viewer_sso = v;
        }
        if let Some(raw) = self.viewer_domains {
            if raw.len() > DOMAINS_MAX {
                e.push(
                    "viewerDomains",
                    format!("names {} domains; at most {DOMAINS_MAX}", raw.len()),
                );
            }
            let mut domains: Vec<String> = Vec::new();
            let mut bad: Vec<String> = Vec::new();
            for d in &raw {
                match crate::validate::domain(d.trim().trim_start_matches('@')) {
                    Ok(d) if !domains.contains(&d) => domains.push(d),
                    Ok(_) => {}
                    Err(_) => bad.push(format!("{d:?}")),
                }
            }
            if !bad.is_empty() {
                e.push(
                    "viewerDomains",
                    format!(
                        "{} not an email domain such as example.com",
                        if bad.len() == 1 {
                            format!("{} is", bad[0])
                        } else {
                            format!("{} are", bad.join(", "))
                        }
                    ),
                );
            }
            next.viewer_domains = domains;
        }
        let Some(raw) = self.allowed_networks else {
            return e.into_result().map(|()| next);
        };
        if raw.len() > NETWORKS_MAX {
            e.push(
                "allowedNetworks",
                format!("names {} networks; at most {NETWORKS_MAX}", raw.len()),
            );
        }
        let mut nets: Vec<IpNet> = Vec::new();
        let mut bad: Vec<String> = Vec::new();
        for entry in &raw {
            match network(entry) {
                Some(n) if !nets.contains(&n) => nets.push(n),
                Some(_) => {}
                None => bad.push(format!("{entry:?}")),
            }
        }
        // One message for the field, naming each bad entry: the form shows
        // it beside the list it came from.
        match bad.len() {
            0 => {}
            1 => e.push(
                "allowedNetworks",
                format!(
                    "{} is not an address or a CIDR network such as 203.0.113.0/24",
                    bad[0]
                ),
            ),
            _ => e.push(
                "allowedNetworks",
                format!(
                    "{} are not addresses or CIDR networks such as 203.0.113.0/24",
                    bad.join(", ")
                ),
            ),
        }
        next.allowed_networks = nets;
        e.into_result().map(|()| next)
    }
}

/// One entry: a CIDR network (host bits cleared, so `10.1.2.3/8` is
/// `10.0.0.0/8`) or a single address.
pub fn network(raw: &str) -> Option<IpNet> {
    let t = raw.trim();
    if let Ok(n) = t.parse::<IpNet>() {
        return Some(n.trunc());
    }
    t.parse::<IpAddr>()
        .ok()
        .map(|ip| IpNet::from(ip.to_canonical()))
}

/// A person outside the team who may read a private page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Viewer {
    pub id: crate::Id,
    pub email: String,
    /// Added by an operator; false: came in by an allowed domain.
    pub invited: bool,
    pub created_at: crate::Timestamp,
    /// The last sign-in, if any.
    pub signed_in_at: Option<crate::Timestamp>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ViewerInput {
    #[cfg_attr(
        feature = "openapi",
        schema(required, format = "email", example = "ann@example.com")
    )]
    pub email: Option<String>,
}

impl ViewerInput {
    pub fn validate(self) -> Result<crate::values::Email, FieldErrors> {
        let raw = self
            .email
            .ok_or_else(|| FieldErrors::single("email", "is required"))?;
        crate::values::Email::parse(&raw).map_err(|m| FieldErrors::single("email", m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: &[&str]) -> PageAccessInput {
        PageAccessInput {
            allowed_networks: Some(v.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        }
    }

    #[test]
    fn viewers_come_in_invited_or_by_domain_and_only_when_turned_on() {
        let change = PageAccessInput {
            viewers: Some(true),
            viewer_domains: Some(vec!["@Example.com".into(), "example.com".into()]),
            ..Default::default()
        };
        let a = change.apply(&PageAccess::default()).unwrap_or_default();
        assert_eq!(a.viewer_domains, vec!["example.com".to_string()]);
        assert!(a.lets_in("ann@example.com", false));
        assert!(!a.lets_in("ann@example.org", false));
        assert!(a.lets_in("ann@example.org", true));
        assert!(!a.lets_in("ann@sub.example.com", false), "no subdomains");
        let off = PageAccess {
            viewers: false,
            ..a.clone()
        };
        assert!(!off.lets_in("ann@example.com", true));
        let bad = PageAccessInput {
            viewer_domains: Some(vec!["not a domain".into()]),
            ..Default::default()
        };
        assert!(bad.apply(&a).is_err());
        let kept = PageAccessInput {
            viewers: Some(false),
            ..Default::default()
        }
        .apply(&a)
        .unwrap_or_default();
        assert_eq!(kept.viewer_domains, a.viewer_domains, "left out: kept");
    }

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    #[test]
    fn networks_admit_their_own_clients_only() {
        let a = input(&["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"])
            .apply(&PageAccess::default())
            .unwrap_or_default();
        assert_eq!(a.allowed_networks.len(), 3);
        assert!(a.admits(ip("203.0.113.200")));
        assert!(a.admits(ip("2001:db8::1")));
        assert!(a.admits(ip("198.51.100.7")));
        assert!(!a.admits(ip("198.51.100.8")));
        assert!(
            a.admits(ip("::ffff:203.0.113.9")),
            "IPv4 on a dual-stack socket"
        );
        assert!(!a.admits(None), "no address: the static copy");
        assert!(PageAccess::default().admits(None), "unrestricted");
    }

    #[test]
    fn entries_are_checked_one_by_one_and_normalised() {
        let e = input(&["10.0.0.0/8", "nonsense", "10.0.0.0/33"])
            .apply(&PageAccess::default())
            .err()
            .unwrap_or_default();
        let text = format!("{e:?}");
        assert!(
            text.contains("allowedNetworks")
                && text.contains("\\\"nonsense\\\", \\\"10.0.0.0/33\\\""),
            "{text}"
        );
        assert!(!text.contains("10.0.0.0/8"));
        let a = input(&["10.1.2.3/8", " 10.0.0.0/8 "])
            .apply(&PageAccess::default())
            .unwrap_or_default();
        assert_eq!(
            a.allowed_networks,
            vec!["10.0.0.0/8".parse::<IpNet>().unwrap_or_default()]
        );
        assert!(
            PageAccessInput::default().apply(&a).is_err(),
            "names nothing"
        );
        let many: Vec<String> = (0..101).map(|i| format!("10.0.{i}.0/24")).collect();
        let too_many = PageAccessInput {
            allowed_networks: Some(many),
            ..Default::default()
        };
        assert!(too_many.apply(&PageAccess::default()).is_err());
    }
}
