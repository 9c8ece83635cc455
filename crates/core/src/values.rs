//! Checked values: a `Slug`, `Email`, `HexColor`, `HttpUrl` or `Domain` can
//! only be made by its rule in `validate` (or `roles::email`), so a function
//! that takes one never has to wonder whether it was checked. Inputs are
//! parsed into these at the edge (`model` validation, the CLI); what the
//! store reads back stays a plain string, since only checked values were
//! ever written.

use serde::Serialize;
use std::fmt;
use std::ops::Deref;

macro_rules! checked {
    ($(#[$doc:meta])* $name:ident, $rule:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Checks `raw` by the rule; the error is the message shown
            /// beside the field.
            pub fn parse(raw: &str) -> Result<$name, String> {
                $rule(raw).map($name)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }
    };
}

checked!(
    /// A page's address segment: lowercase letters, digits, inner hyphens.
    Slug,
    crate::validate::slug
);
checked!(
    /// An email address, lowercased.
    Email,
    crate::roles::email
);
checked!(
    /// A colour as lowercase `#rrggbb`.
    HexColor,
    crate::validate::hex_color
);
checked!(
    /// An absolute http(s) URL.
    HttpUrl,
    crate::validate::url
);
checked!(
    /// A host name, lowercased, without scheme, port or path.
    Domain,
    crate::validate::domain
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_rule_makes_one() {
        assert_eq!(
            HexColor::parse("#ABC").map(String::from),
            Ok("#aabbcc".to_string())
        );
        assert!(Slug::parse("Not A Slug").is_err());
        assert_eq!(
            Email::parse(" Ops@Example.com")
                .as_deref()
                .map(|e| e.to_string()),
            Ok("ops@example.com".to_string())
        );
        assert!(HttpUrl::parse("javascript:alert(1)").is_err());
        assert_eq!(
            serde_json::to_string(&Domain::parse("Status.Example.com.").ok()).ok(),
            Some("\"status.example.com\"".to_string())
        );
    }
}
