//! TOTP (RFC 6238) with the parameters every authenticator app supports:
//! SHA-1, 6 digits, 30-second steps, one step of clock drift either way.
//! Codes are checked only by the guard (`crate::guard`), which counts failures.

use totp_rs::{Algorithm, Secret, TOTP};

pub const ISSUER: &str = "Upstate";
pub const STEP: u64 = 30;

/// A new random 160-bit secret, base32 as authenticator apps show it.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 20];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    Secret::Raw(bytes.to_vec()).to_encoded().to_string()
}

/// The generator of a secret's codes.
pub fn generator(secret_b32: &str) -> Option<TOTP> {
    totp(secret_b32, "user")
}

fn totp(secret_b32: &str, account: &str) -> Option<TOTP> {
    let bytes = Secret::Encoded(secret_b32.to_string()).to_bytes().ok()?;
    TOTP::new(
        Algorithm::SHA1,
        6,
        1,
        STEP,
        bytes,
        Some(ISSUER.to_string()),
        account.to_string(),
    )
    .ok()
}

/// The `otpauth://` URI to put in a QR code.
pub fn uri(secret_b32: &str, account: &str) -> Option<String> {
    totp(secret_b32, account).map(|t| t.get_url())
}

/// The URI as an SVG QR code.
pub fn qr_svg(uri: &str) -> Option<String> {
    let code = qrcode::QrCode::new(uri.as_bytes()).ok()?;
    Some(
        code.render::<qrcode::render::svg::Color>()
            .min_dimensions(200, 200)
            .build(),
    )
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
