//! Web push subscriptions: what a visitor's browser sends (its
//! `PushSubscription` as JSON) and what makes it usable: an endpoint URL
//! and the keys RFC 8291 encrypts each message to (docs/notifications.md,
//! "Web push").

use crate::Id;
use crate::notify::PageRef;
use crate::validate::FieldErrors;
use crate::values::HttpUrl;
use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde::Deserialize;

/// The keys of a browser's subscription, base64url as browsers give them.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PushKeys {
    /// The browser's P-256 public key (65 bytes, uncompressed).
    pub p256dh: Option<String>,
    /// The 16-byte authentication secret.
    pub auth: Option<String>,
}

/// A browser's `PushSubscription.toJSON()`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrowserSubscription {
    pub endpoint: Option<String>,
    /// Browsers send it (usually null); not used.
    #[serde(default)]
    pub expiration_time: Option<serde_json::Value>,
    pub keys: Option<PushKeys>,
}

/// `POST /api/push/subscribe`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PushSubscribeInput {
    /// The page, by id or by `slug`.
    pub status_page_id: Option<Id>,
    pub slug: Option<String>,
    pub subscription: Option<BrowserSubscription>,
    /// Only changes of these components (empty or absent: all).
    pub component_ids: Option<Vec<Id>>,
}

/// A checked push subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct PushSubscription {
    pub page: PageRef,
    pub endpoint: String,
    /// base64url without padding, as stored.
    pub p256dh: String,
    pub auth: String,
    pub component_ids: Vec<Id>,
}

/// Decodes base64url with or without padding into exactly `len` bytes;
/// returns the unpadded form.
fn key(raw: &str, len: usize, what: &str) -> Result<String, String> {
    let t = raw.trim();
    let bytes = URL_SAFE_NO_PAD
        .decode(t.trim_end_matches('='))
        .or_else(|_| URL_SAFE.decode(t))
        .map_err(|_| format!("must be base64url ({what})"))?;
    if bytes.len() != len {
        return Err(format!("must be {len} bytes ({what})"));
    }
    if len == 65 && bytes[0] != 4 {
        return Err("must be an uncompressed P-256 point".into());
    }
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

impl PushSubscribeInput {
    pub fn validate(self) -> Result<PushSubscription, FieldErrors> {
        let mut e = FieldErrors::new();
        let page = PageRef::given(self.status_page_id, self.slug, &mut e);
        let sub = self.subscription.unwrap_or_default();
        let endpoint = match sub.endpoint {
            None => {
                e.push("subscription.endpoint", "is required");
                None
            }
            Some(u) => e.check(
                "subscription.endpoint",
                HttpUrl::parse(&u).map(String::from),
            ),
        };
        let keys = sub.keys.unwrap_or_default();
        let mut need = |field: &str, raw: Option<String>, len: usize, what: &str| match raw {
            None => {
                e.push(field, "is required");
                None
            }
            Some(k) => e.check(field, key(&k, len, what)),
        };
        let p256dh = need(
            "subscription.keys.p256dh",
            keys.p256dh,
            65,
            "the browser's public key",
        );
        let auth = need(
            "subscription.keys.auth",
            keys.auth,
            16,
            "the authentication secret",
        );
        let component_ids = self.component_ids.unwrap_or_default();
        if component_ids.len() > 500 {
            e.push("componentIds", "must list at most 500 components");
        }
        e.into_result()?;
        match (page, endpoint, p256dh, auth) {
            (Some(page), Some(endpoint), Some(p256dh), Some(auth)) => Ok(PushSubscription {
                page,
                endpoint,
                p256dh,
                auth,
                component_ids,
            }),
            _ => Err(FieldErrors::single("subscription", "is incomplete")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked() {
        let point = format!("BA{}", "A".repeat(85));
        assert_eq!(key(&point, 65, "k").map(|k| k.len()), Ok(87));
        assert!(key("AAAAAAAAAAAAAAAAAAAAAA", 16, "k").is_ok());
        assert!(key("AAAAAAAAAAAAAAAAAAAAAA==", 16, "k").is_ok());
        assert!(key("not base64!", 16, "k").is_err());
        assert!(key("AAAA", 16, "k").is_err());
        assert!(key(&format!("AA{}", "A".repeat(85)), 65, "k").is_err());
    }
}
