//! TOTP (RFC 6238) with the parameters every authenticator app supports:
//! SHA-1, 6 digits, 30-second steps, one step of clock drift either way.
//! Which step a code matched is returned, so the caller can refuse any code
//! from a step already used (no replay within the drift window).

use totp_rs::{Algorithm, Secret, TOTP};

pub const ISSUER: &str = "Upstate";
const STEP: u64 = 30;

/// A new random 160-bit secret, base32 as authenticator apps show it.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 20];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    Secret::Raw(bytes.to_vec()).to_encoded().to_string()
}

fn totp(secret_b32: &str, account: &str) -> Option<TOTP> {
    let bytes = Secret::Encoded(secret_b32.to_string()).to_bytes().ok()?;
    TOTP::new(Algorithm::SHA1, 6, 1, STEP, bytes, Some(ISSUER.to_string()), account.to_string()).ok()
}

/// The `otpauth://` URI to put in a QR code.
pub fn uri(secret_b32: &str, account: &str) -> Option<String> {
    totp(secret_b32, account).map(|t| t.get_url())
}

/// The URI as an SVG QR code.
pub fn qr_svg(uri: &str) -> Option<String> {
    let code = qrcode::QrCode::new(uri.as_bytes()).ok()?;
    Some(code.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).build())
}

/// The time step a code is valid for now (current step, or one either side).
pub fn matching_step(secret_b32: &str, code: &str, now_secs: u64) -> Option<i64> {
    let t = totp(secret_b32, "user")?;
    let code = code.trim();
    let now_step = now_secs / STEP;
    [now_step.saturating_sub(1), now_step, now_step + 1]
        .into_iter()
        .find(|step| t.generate(step * STEP) == code)
        .map(|s| s as i64)
}

/// Ten one-time recovery codes of 64 random bits each, `xxxx-xxxx-xxxx-xxxx`.
pub fn recovery_codes() -> Vec<String> {
    (0..10)
        .map(|_| {
            let mut b = [0u8; 8];
            rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
            let h = hex::encode(b);
            format!("{}-{}-{}-{}", &h[0..4], &h[4..8], &h[8..12], &h[12..16])
        })
        .collect()
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
