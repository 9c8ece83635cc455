//! API key scopes. `admin` implies `write` implies `read`; the seed's
//! `read:*` / `write:*` notations are accepted as the same scopes.

use crate::status::UnknownVariant;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    /// Whether a key holding `self` may do what needs `needed`.
    pub fn grants(self, needed: Scope) -> bool {
        self >= needed
    }
}

impl FromStr for Scope {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().trim_end_matches(":*") {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            "admin" => Ok(Scope::Admin),
            _ => Err(UnknownVariant {
                expected: "read, write, admin (or read:*, write:*, admin:*)".into(),
            }),
        }
    }
}

/// Parses a comma-separated scope list such as `read,write` or `read:*`.
pub fn parse_scopes(list: &str) -> Result<Vec<Scope>, UnknownVariant> {
    let mut scopes = list
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(str::parse)
        .collect::<Result<Vec<Scope>, _>>()?;
    if scopes.is_empty() {
        return Err(UnknownVariant {
            expected: "at least one of read, write, admin".into(),
        });
    }
    scopes.sort();
    scopes.dedup();
    Ok(scopes)
}

/// The longest life a key may be given, in days (ten years).
pub const MAX_KEY_DAYS: i64 = 3650;

/// When a key created `now` with a life of `days` expires: the one rule for
/// the command line and the HTTP routes (1 to `MAX_KEY_DAYS` days).
pub fn key_expiry(now: crate::Timestamp, days: i64) -> Result<crate::Timestamp, String> {
    if (1..=MAX_KEY_DAYS).contains(&days) {
        Ok(now.plus_millis(days * 86_400_000))
    } else {
        Err(format!("must be between 1 and {MAX_KEY_DAYS}"))
    }
}

/// The strongest scope in a list: what the key may do.
pub fn highest(scopes: &[Scope]) -> Option<Scope> {
    scopes.iter().copied().max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notations_and_implication() {
        assert_eq!(
            parse_scopes("read:*, write").ok(),
            Some(vec![Scope::Read, Scope::Write])
        );
        assert!(parse_scopes("").is_err());
        assert!(parse_scopes("read,delete").is_err());
        assert!(Scope::Admin.grants(Scope::Read));
        assert!(Scope::Write.grants(Scope::Write));
        assert!(!Scope::Read.grants(Scope::Write));
        assert!(!Scope::Write.grants(Scope::Admin));
    }
}
