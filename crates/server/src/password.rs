//! Password hashing: Argon2id with the argon2 crate's defaults (m = 19 MiB,
//! t = 2, p = 1: OWASP's recommended minimum), a random salt per hash, PHC
//! string format. Hashing takes tens of milliseconds of CPU, so it runs on
//! the blocking pool, never on the request threads. Checking a password is
//! the guard's (`crate::guard`), which counts failures.

use crate::error::ApiError;
use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, SaltString};
use rand::RngCore;

fn salt() -> Result<SaltString, argon2::password_hash::Error> {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    SaltString::encode_b64(&bytes)
}

pub async fn hash(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || hash_blocking(&password))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(ApiError::Internal)
}

/// For the command line, which has no runtime of its own to spare.
pub fn hash_blocking(password: &str) -> Result<String, String> {
    let salt = salt().map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}
