//! The checks themselves, private to the guard so that no route can compare
//! a secret without counting the failure.

/// Verifies against a stored Argon2 hash; with no hash (unknown account) it
/// verifies against a fixed one, so the answer takes as long either way.
pub(super) async fn password(candidate: String, stored: Option<String>) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let stored = stored.unwrap_or_else(|| DUMMY.clone());
        let ok = PasswordHash::new(&stored).is_ok_and(|h| {
            argon2::Argon2::default()
                .verify_password(candidate.as_bytes(), &h)
                .is_ok()
        });
        ok && known
    })
    .await
    .unwrap_or(false)
}

/// An Argon2id hash of a random string nobody knows, made once.
static DUMMY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    crate::password::hash_blocking(&upstate_store::users::token()).unwrap_or_default()
});

/// The time step a TOTP code is valid for now (current step, or one either side).
pub(super) fn totp_step(secret_b32: &str, code: &str, now_secs: u64) -> Option<i64> {
    let t = crate::totp::generator(secret_b32)?;
    let code = code.trim();
    let now_step = now_secs / crate::totp::STEP;
    [now_step.saturating_sub(1), now_step, now_step + 1]
        .into_iter()
        .find(|step| t.generate(step * crate::totp::STEP) == code)
        .map(|s| s as i64)
}
