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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageAccess {
    /// The networks (CIDR) whose clients may open the page; empty: anyone
    /// the page's visibility lets in.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["203.0.113.0/24", "2001:db8::/32"])))]
    pub allowed_networks: Vec<IpNet>,
}

impl PageAccess {
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
#[serde(rename_all = "camelCase")]
pub struct PageAccessInput {
    /// Addresses or CIDR networks, such as `203.0.113.0/24`, `2001:db8::/32`
    /// or `198.51.100.7`; `[]` opens the page to every network again.
    #[cfg_attr(feature = "openapi", schema(required, max_items = 100, example = json!(["203.0.113.0/24"])))]
    pub allowed_networks: Option<Vec<String>>,
}

impl PageAccessInput {
    pub fn validate(self) -> Result<PageAccess, FieldErrors> {
        let mut e = FieldErrors::new();
        let Some(raw) = self.allowed_networks else {
            return Err(FieldErrors::single("allowedNetworks", "is required"));
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
        e.into_result().map(|()| PageAccess {
            allowed_networks: nets,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: &[&str]) -> PageAccessInput {
        PageAccessInput {
            allowed_networks: Some(v.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    #[test]
    fn networks_admit_their_own_clients_only() {
        let a = input(&["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"])
            .validate()
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
            .validate()
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
            .validate()
            .unwrap_or_default();
        assert_eq!(
            a.allowed_networks,
            vec!["10.0.0.0/8".parse::<IpNet>().unwrap_or_default()]
        );
        assert!(PageAccessInput::default().validate().is_err(), "required");
        let many: Vec<String> = (0..101).map(|i| format!("10.0.{i}.0/24")).collect();
        let too_many = PageAccessInput {
            allowed_networks: Some(many),
        };
        assert!(too_many.validate().is_err());
    }
}
