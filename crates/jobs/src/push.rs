//! Web push (RFC 8030) messages to visitors' browsers: the payload
//! encrypted to the subscription's keys per RFC 8291 (aes128gcm) and
//! signed with the install's VAPID key (RFC 8292), both by the `web-push`
//! crate; the request goes out through our SSRF-guarded client like every
//! other message.

use crate::messages::Request;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use upstate_core::notify::Notice;
use upstate_store::{Db, StoreResult, push};
use web_push::{
    ContentEncoding, SubscriptionInfo, Urgency, VapidSignatureBuilder, WebPushMessageBuilder,
};

/// How long a push service keeps a message for an offline browser.
const TTL_SECS: u32 = 24 * 3_600;
/// Push services take 4 KB encrypted; the text is cut well below.
const TEXT_MAX: usize = 1_500;

/// A fresh P-256 key pair as (private, public) base64url: 32 random bytes
/// are a valid scalar all but never; a rare invalid one is drawn again.
fn make_pair() -> Result<(String, String), String> {
    for _ in 0..16 {
        let secret: [u8; 32] = rand::random();
        let private = URL_SAFE_NO_PAD.encode(secret);
        if let Ok(builder) = VapidSignatureBuilder::from_base64_no_sub(&private) {
            return Ok((private, URL_SAFE_NO_PAD.encode(builder.get_public_key())));
        }
    }
    Err("could not make a VAPID key".into())
}

/// The install's VAPID key pair, made and stored on first use.
pub async fn vapid_keys(db: &Db) -> StoreResult<(String, String)> {
    if let Some(pair) = push::vapid(db).await? {
        return Ok(pair);
    }
    let (private, public) = make_pair().map_err(upstate_store::StoreError::Config)?;
    push::keep_vapid(db, &private, &public).await
}

/// Header names as push services expect them (`http` gives them lowercase
/// and borrowed; ours are static).
fn header_name(lower: &str) -> Option<&'static str> {
    Some(match lower {
        "ttl" => "TTL",
        "urgency" => "Urgency",
        "topic" => "Topic",
        "content-encoding" => "Content-Encoding",
        "content-type" => "Content-Type",
        "authorization" => "Authorization",
        "crypto-key" => "Crypto-Key",
        "encryption" => "Encryption",
        _ => return None,
    })
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
    let info = SubscriptionInfo::new(endpoint, p256dh, auth);
    let mut signer = VapidSignatureBuilder::from_base64(private_key, &info)
        .map_err(|e| format!("VAPID key: {e}"))?;
    signer.add_claim("sub", subject);
    // RFC 8292's audience is the endpoint's origin, port included; the
    // crate's default drops a non-default port.
    let origin = url::Url::parse(endpoint)
        .map_err(|e| format!("bad endpoint: {e}"))?
        .origin()
        .ascii_serialization();
    signer.add_claim("aud", origin.as_str());
    let signature = signer
        .build()
        .map_err(|e| format!("VAPID signature: {e}"))?;
    let payload = serde_json::to_vec(&serde_json::json!({
        "id": id,
        "title": notice.title,
        "body": cut(&notice.text, TEXT_MAX),
        "url": notice.url,
        "page": notice.page_name,
        "kind": notice.kind,
    }))
    .map_err(|e| e.to_string())?;
    let mut builder = WebPushMessageBuilder::new(&info);
    builder.set_payload(ContentEncoding::Aes128Gcm, &payload);
    builder.set_ttl(TTL_SECS);
    builder.set_urgency(Urgency::High);
    builder.set_vapid_signature(signature);
    let message = builder
        .build()
        .map_err(|e| format!("the subscription's keys do not work: {e}"))?;
    let req = web_push::request_builder::build_request::<Vec<u8>>(message);
    let headers = req
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            let name = header_name(name.as_str())?;
            Some((name, value.to_str().ok()?.to_string()))
        })
        .collect();
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
