//! The password gate of private pages. A visitor who gives the right password
//! (`POST /api/verify-page-password`) gets a cookie that opens that one page
//! for a week: `{expiry ms}.{HMAC-SHA256}` over the page id and the expiry,
//! keyed with the page's password hash. The hash never leaves the server and
//! carries a random salt, so the cookie cannot be forged, and changing or
//! removing the password ends every cookie made with the old one. No session
//! table, and it works the same on every instance.

use crate::visitor::Visitor;
use axum::http::HeaderValue;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use upstate_core::{Id, Timestamp};
use upstate_store::public::PageData;

pub const LIFETIME_SECS: i64 = 7 * 86_400;

pub fn cookie_name(page_id: Id) -> String {
    format!("upstate_page_{page_id}")
}

fn mac(hash: &str, page_id: Id, expires: i64) -> Option<Hmac<Sha256>> {
    let mut m = Hmac::<Sha256>::new_from_slice(hash.as_bytes()).ok()?;
    m.update(format!("{page_id}.{expires}").as_bytes());
    Some(m)
}

/// The cookie value opening `page_id` until `expires`.
pub fn cookie_value(hash: &str, page_id: Id, expires: Timestamp) -> String {
    let tag = mac(hash, page_id, expires.millis())
        .map(|m| hex::encode(m.finalize().into_bytes()))
        .unwrap_or_default();
    format!("{}.{tag}", expires.millis())
}

/// Whether the request carries a valid, unexpired cookie for this page.
fn valid(hash: &str, page_id: Id, value: &str) -> bool {
    let Some((expires, tag)) = value.split_once('.') else {
        return false;
    };
    let (Ok(expires), Ok(tag)) = (expires.parse::<i64>(), hex::decode(tag)) else {
        return false;
    };
    expires > Timestamp::now().millis()
        && mac(hash, page_id, expires).is_some_and(|m| m.verify_slice(&tag).is_ok())
}

/// What the gate says to a request for a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Open,
    /// A private page and no cookie that opens it: it wants its password,
    /// or a viewer's sign-in (whichever it offers).
    Locked,
    /// The client's address is outside the page's networks: nothing opens
    /// it from there.
    Network,
}

/// Whether this visitor may see the page: its networks first; then public
/// pages always, private ones with a valid password or viewer cookie.
pub fn check(d: &PageData, v: &Visitor) -> Gate {
    if !d.access.admits(v.ip) {
        return Gate::Network;
    }
    if d.page.is_public {
        return Gate::Open;
    }
    let id = d.page.id;
    let (password, viewer) = (cookie_name(id), viewer_cookie_name(id));
    let opened = crate::session::cookies(&v.headers).any(|c| {
        (c.name() == password
            && d.password_hash
                .as_deref()
                .is_some_and(|hash| valid(hash, id, c.value())))
            || (c.name() == viewer && d.access.viewers && viewer_valid(d, c.value()))
    }) || (d.access.viewers
        && v.token
            .as_deref()
            .and_then(|t| token_viewer(d, t))
            .is_some());
    if opened { Gate::Open } else { Gate::Locked }
}

/// Refuses a visitor outside the page's networks, before anything else
/// the route would check: a password tried or a link taken from outside
/// would tell the stranger something (a right guess, a live link).
pub fn within_networks(d: &PageData, v: &Visitor) -> Result<(), crate::error::ApiError> {
    if d.access.admits(v.ip) {
        Ok(())
    } else {
        Err(refusal(Gate::Network, d, v)
            .unwrap_or_else(|| crate::error::ApiError::Forbidden(d.page.slug.clone())))
    }
}

/// The problem a refused request gets, for the routes that answer JSON.
pub fn refusal(gate: Gate, d: &PageData, v: &Visitor) -> Option<crate::error::ApiError> {
    let slug = &d.page.slug;
    match gate {
        Gate::Open => None,
        Gate::Locked => {
            let ways = match (d.password_hash.is_some(), d.access.viewers) {
                (true, true) => {
                    "open it with its password (POST /api/verify-page-password) or sign in as a viewer (POST /api/viewer-sign-in)"
                }
                (false, true) => "sign in as a viewer (POST /api/viewer-sign-in)",
                _ => "open it with its password (POST /api/verify-page-password)",
            };
            Some(crate::error::ApiError::Unauthorized(format!(
                "status page {slug:?} is private: {ways}"
            )))
        }
        Gate::Network => Some(crate::error::ApiError::Forbidden(format!(
            "status page {slug:?} is open only to some networks, and your address{} is not in them",
            v.ip.map(|ip| format!(" ({ip})")).unwrap_or_default()
        ))),
    }
}

pub fn viewer_cookie_name(page_id: Id) -> String {
    format!("upstate_viewer_{page_id}")
}

/// `{viewer id}.{expiry ms}.{HMAC-SHA256}` over page, viewer and expiry,
/// keyed with the viewer's own secret: removing the viewer ends it.
pub fn viewer_cookie_value(secret: &str, page_id: Id, viewer: Id, expires: Timestamp) -> String {
    let tag = mac(secret, page_id, expires.millis())
        .map(|mut m| {
            m.update(format!(".{viewer}").as_bytes());
            hex::encode(m.finalize().into_bytes())
        })
        .unwrap_or_default();
    format!("{viewer}.{}.{tag}", expires.millis())
}

/// The viewer this request is signed in as on a private page, by cookie
/// or token, if any (not on a public page, where nobody needs to be).
pub fn viewer_of(d: &PageData, v: &Visitor) -> Option<Id> {
    signed_in_viewer(d, v).or_else(|| {
        (!d.page.is_public && d.access.viewers)
            .then(|| v.token.as_deref().and_then(|t| token_viewer(d, t)))
            .flatten()
    })
}

/// The viewer whose cookie this browser carries (a token does not count:
/// it may sit in someone's feed reader).
pub fn signed_in_viewer(d: &PageData, v: &Visitor) -> Option<Id> {
    if d.page.is_public || !d.access.viewers {
        return None;
    }
    let name = viewer_cookie_name(d.page.id);
    crate::session::cookies(&v.headers)
        .filter(|c| c.name() == name)
        .find_map(|c| viewer_in(d, c.value()))
}

/// A fresh viewer secret: 256 random bits, as hex.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    hex::encode(bytes)
}

/// The secret of a viewer of the page, for making their token.
pub fn viewer_secret(d: &PageData, viewer: Id) -> Option<&str> {
    secret_of(d, viewer)
}

fn viewer_valid(d: &PageData, value: &str) -> bool {
    viewer_in(d, value).is_some()
}

/// The viewer a cookie value names, when it is theirs and current.
fn viewer_in(d: &PageData, value: &str) -> Option<Id> {
    let mut parts = value.splitn(3, '.');
    let (viewer, expires, tag) = (parts.next()?, parts.next()?, parts.next()?);
    let (viewer, expires, tag) = (
        viewer.parse::<Id>().ok()?,
        expires.parse::<i64>().ok()?,
        hex::decode(tag).ok()?,
    );
    let secret = secret_of(d, viewer)?;
    let good = expires > Timestamp::now().millis()
        && mac(secret, d.page.id, expires).is_some_and(|mut m| {
            m.update(format!(".{viewer}").as_bytes());
            m.verify_slice(&tag).is_ok()
        });
    good.then_some(viewer)
}

fn secret_of(d: &PageData, viewer: Id) -> Option<&str> {
    d.viewer_keys
        .iter()
        .find(|k| k.id == viewer && upstate_store::viewers::usable(&k.secret))
        .map(|k| k.secret.as_str())
}

fn feed_mac(secret: &str, page_id: Id, viewer: Id) -> Option<Hmac<Sha256>> {
    let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).ok()?;
    m.update(format!("feed.{page_id}.{viewer}").as_bytes());
    Some(m)
}

/// A viewer's token for the page's feeds, calendar, JSON and embeds (apps
/// that cannot carry the cookie): `{viewer id}.{HMAC}` keyed with their
/// secret, so a new secret or the viewer's removal revokes it.
pub fn viewer_token(secret: &str, page_id: Id, viewer: Id) -> String {
    let tag = feed_mac(secret, page_id, viewer)
        .map(|m| hex::encode(m.finalize().into_bytes()))
        .unwrap_or_default();
    format!("{viewer}.{tag}")
}

fn token_viewer(d: &PageData, token: &str) -> Option<Id> {
    let (viewer, tag) = token.split_once('.')?;
    let (viewer, tag) = (viewer.parse::<Id>().ok()?, hex::decode(tag).ok()?);
    let secret = secret_of(d, viewer)?;
    feed_mac(secret, d.page.id, viewer)?
        .verify_slice(&tag)
        .is_ok()
        .then_some(viewer)
}

/// The Set-Cookie header that signs a viewer in to a page for a week.
pub fn set_viewer_cookie(page_id: Id, viewer: Id, secret: &str, secure: bool) -> HeaderValue {
    let expires = Timestamp::now().plus_millis(LIFETIME_SECS * 1000);
    let value = viewer_cookie_value(secret, page_id, viewer, expires);
    let max_age = cookie::time::Duration::seconds(LIFETIME_SECS);
    crate::session::cookie_header(viewer_cookie_name(page_id), value, secure, max_age)
}

/// The Set-Cookie header opening a page for a week: HttpOnly (scripts
/// never see it), SameSite=Lax, Secure unless serving plain http on loopback.
pub fn set_cookie(page_id: Id, hash: &str, secure: bool) -> (HeaderValue, Timestamp) {
    let expires = Timestamp::now().plus_millis(LIFETIME_SECS * 1000);
    let value = cookie_value(hash, page_id, expires);
    let max_age = cookie::time::Duration::seconds(LIFETIME_SECS);
    (
        crate::session::cookie_header(cookie_name(page_id), value, secure, max_age),
        expires,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_open_only_their_page_until_expiry_and_only_with_that_hash() {
        let later = Timestamp::now().plus_millis(60_000);
        let v = cookie_value("$argon2id$abc", 7, later);
        assert!(valid("$argon2id$abc", 7, &v));
        assert!(!valid("$argon2id$abd", 7, &v), "another password's hash");
        assert!(!valid("$argon2id$abc", 8, &v), "another page");
        let past = cookie_value("$argon2id$abc", 7, Timestamp::now().plus_millis(-1));
        assert!(!valid("$argon2id$abc", 7, &past), "expired");
        let forged = format!(
            "{}.{}",
            later.plus_millis(1).millis(),
            v.split_once('.').map(|x| x.1).unwrap_or("")
        );
        assert!(!valid("$argon2id$abc", 7, &forged), "expiry moved");
        assert!(!valid("$argon2id$abc", 7, "garbage"));
    }
}
