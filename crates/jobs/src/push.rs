//! Web push (RFC 8030) messages to visitors' browsers: the payload
//! encrypted to the subscription's keys per RFC 8291 (aes128gcm) by the
//! `web-push-native` crate (RustCrypto: no OpenSSL to build or ship), and
//! signed with the install's VAPID key (RFC 8292) through the JWT crate it
//! carries; the request goes out through our SSRF-guarded client like every
//! other message.

use crate::messages::Request;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::time::Duration;
use upstate_core::notify::Notice;
use upstate_store::{Db, StoreResult, push};
use web_push_native::jwt_simple::algorithms::{
    ECDSAP256KeyPairLike, ECDSAP256PublicKeyLike, ES256KeyPair,
};
use web_push_native::jwt_simple::claims::Claims;
use web_push_native::{Auth, WebPushBuilder, p256};

/// How long a push service keeps a message for an offline browser.
const TTL_SECS: u64 = 24 * 3_600;
/// How long a VAPID signature holds (RFC 8292: at most a day).
const VAPID_HOURS: u64 = 12;
/// Push services take 4 KB encrypted; the text is cut well below.
const TEXT_MAX: usize = 1_500;

/// A fresh P-256 key pair as (private, public) base64url: the raw scalar,
/// and the uncompressed point browsers take as `applicationServerKey`.
fn make_pair() -> Result<(String, String), String> {
    let pair = ES256KeyPair::generate();
    let public = pair.public_key().public_key().to_bytes_uncompressed();
    Ok((
        URL_SAFE_NO_PAD.encode(pair.to_bytes()),
        URL_SAFE_NO_PAD.encode(public),
    ))
}

/// A key as browsers hand it out: base64url, padded or not.
fn decode(field: &str, value: &str) -> Result<Vec<u8>, String> {
    URL_SAFE_NO_PAD
        .decode(value.trim_end_matches('='))
        .map_err(|_| format!("the subscription's {field} is not base64url"))
}

/// The install's VAPID key pair, made and stored on first use.
pub async fn vapid_keys(db: &Db) -> StoreResult<(String, String)> {
    if let Some(pair) = push::vapid(db).await? {
        return Ok(pair);
    }
    let (private, public) = make_pair().map_err(upstate_store::StoreError::Config)?;
    push::keep_vapid(db, &private, &public).await
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The encrypted, signed request telling `notice` to one browser.
/// `subject` is the VAPID contact (a mailto: or https: URL).
pub fn request(
    endpoint: &str,
    (p256dh, auth): (&str, &str),
    private_key: &str,
    subject: &str,
    notice: &Notice,
    id: &str,
) -> Result<Request, String> {
    let uri: http::Uri = endpoint.parse().map_err(|e| format!("bad endpoint: {e}"))?;
    let browser = p256::PublicKey::from_sec1_bytes(&decode("p256dh", p256dh)?)
        .map_err(|_| "the subscription's p256dh is no P-256 point".to_string())?;
    let secret: [u8; 16] = decode("auth", auth)?
        .try_into()
        .map_err(|_| "the subscription's auth secret is not 16 bytes".to_string())?;
    let key = ES256KeyPair::from_bytes(&decode("VAPID key", private_key)?)
        .map_err(|e| format!("VAPID key: {e}"))?;
    // RFC 8292's audience is the endpoint's origin, port included (the
    // crate's own signer drops a non-default port), so we sign it here.
    let origin = url::Url::parse(endpoint)
        .map_err(|e| format!("bad endpoint: {e}"))?
        .origin()
        .ascii_serialization();
    let claims = Claims::create(web_push_native::jwt_simple::prelude::Duration::from_hours(
        VAPID_HOURS,
    ))
    .with_audience(origin)
    .with_subject(subject);
    let token = key
        .sign(claims)
        .map_err(|e| format!("VAPID signature: {e}"))?;
    let vapid_public =
        URL_SAFE_NO_PAD.encode(key.public_key().public_key().to_bytes_uncompressed());
    let payload = serde_json::to_vec(&serde_json::json!({
        "id": id,
        "title": notice.title,
        "body": cut(&notice.text, TEXT_MAX),
        "url": notice.url,
        "page": notice.page_name,
        "kind": notice.kind,
    }))
    .map_err(|e| e.to_string())?;
    let req = WebPushBuilder::new(uri, browser, Auth::from(secret))
        .with_valid_duration(Duration::from_secs(TTL_SECS))
        .build(payload)
        .map_err(|e| format!("the subscription's keys do not work: {e}"))?;
    let mut headers: Vec<(&'static str, String)> = vec![
        (
            "Authorization",
            format!("vapid t={token}, k={vapid_public}"),
        ),
        ("Urgency", "high".into()),
    ];
    for name in ["TTL", "Content-Encoding", "Content-Type"] {
        if let Some(v) = req.headers().get(name).and_then(|v| v.to_str().ok()) {
            headers.push((name, v.to_string()));
        }
    }
    Ok(Request {
        url: endpoint.to_string(),
        headers,
        body: req.into_body(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_keys_are_p256_points() -> Result<(), String> {
        let (private, public) = make_pair()?;
        let raw = URL_SAFE_NO_PAD.decode(&public).map_err(|e| e.to_string())?;
        assert_eq!(raw.len(), 65);
        assert_eq!(raw[0], 4, "uncompressed");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(private)
                .map_err(|e| e.to_string())?
                .len(),
            32
        );
        Ok(())
    }
}
