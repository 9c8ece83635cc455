//! Secrets at rest: every stored secret the service must read back (TOTP
//! seeds, channel signing secrets and bot tokens, the VAPID private key,
//! monitor header values, the bucket's secret key) is sealed with the
//! server key (AES-256-GCM) before it is written and opened after it is
//! read, so a copied database file or dump gives none of them away. Secrets
//! only ever compared (passwords, API keys, sessions, recovery codes) are
//! hashed instead and never pass here.
//!
//! A sealed value reads `sealed:v1:<key id>:<base64 of nonce and
//! ciphertext>`; the key id (the first bytes of the key's SHA-256) names
//! which key of the ring opens it, so a ring holding the current key and the
//! previous ones reads everything while `settle` re-seals what the current
//! key did not seal. Each secret's kind is bound in as associated data: a
//! sealed TOTP seed copied into a channel's secret column does not open.
//! A value without the prefix is a secret written before sealing existed;
//! it opens as itself and `settle` seals it.

use crate::error::{StoreError, StoreResult};
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::RwLock;

const PREFIX: &str = "sealed:v1:";

/// What a sealed value is, bound into its seal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Totp,
    Channel,
    Vapid,
    MonitorHeader,
    Bucket,
    /// The identity provider's client secret (single sign-on).
    Sso,
    /// The row that proves which key seals this database's secrets.
    Check,
}

impl Purpose {
    fn aad(self) -> &'static [u8] {
        match self {
            Purpose::Totp => b"upstate totp",
            Purpose::Channel => b"upstate channel",
            Purpose::Vapid => b"upstate vapid",
            Purpose::MonitorHeader => b"upstate monitor header",
            Purpose::Bucket => b"upstate bucket",
            Purpose::Sso => b"upstate sso",
            Purpose::Check => b"upstate check",
        }
    }
}

/// A 256-bit server key.
#[derive(Clone)]
pub struct ServerKey([u8; 32]);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerKey({})", self.id())
    }
}

impl ServerKey {
    /// A fresh random key.
    pub fn generate() -> ServerKey {
        ServerKey(rand::random())
    }

    /// A key as written in a key file or in `UPSTATE_SECRET_KEY`: 32 bytes
    /// in base64 (standard or URL-safe, padded or not).
    pub fn parse(text: &str) -> Result<ServerKey, String> {
        let text = text.trim();
        let engines = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        let bytes = engines
            .iter()
            .find_map(|e| e.decode(text).ok())
            .ok_or("a server key is 32 bytes in base64 (`upstate rotate-key` prints one)")?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| format!("a server key is 32 bytes, this one is {}", b.len()))?;
        Ok(ServerKey(key))
    }

    /// The key as `parse` reads it.
    pub fn encoded(&self) -> String {
        STANDARD.encode(self.0)
    }

    /// What names this key in sealed values: 8 hex digits of its SHA-256
    /// (it tells keys apart, and reveals nothing of the key).
    pub fn id(&self) -> String {
        hex::encode(&Sha256::digest(self.0)[..4])
    }

    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(&self.0.into())
    }
}

/// Where the ring's keys come from: given by configuration, or a key file
/// (read again when a value names a key the ring lacks, so an instance
/// follows `upstate rotate-key` run beside it).
#[derive(Debug, Default)]
pub struct Keyring {
    /// The current key first, then older ones that still open values.
    keys: RwLock<Vec<ServerKey>>,
    file: Option<PathBuf>,
}

impl Keyring {
    /// A ring of `keys` (the current one first).
    pub fn new(keys: Vec<ServerKey>, file: Option<PathBuf>) -> Keyring {
        Keyring {
            keys: RwLock::new(keys),
            file,
        }
    }

    /// The keys a key file holds: one per line, the current one first.
    pub fn read_file(path: &std::path::Path) -> Result<Vec<ServerKey>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the server key {}: {e}", path.display()))?;
        let keys = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(ServerKey::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if keys.is_empty() {
            return Err(format!("{} holds no key", path.display()));
        }
        Ok(keys)
    }

    fn keys(&self) -> Vec<ServerKey> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Reads the key file again, if the ring has one.
    pub fn reload(&self) -> bool {
        let Some(file) = &self.file else {
            return false;
        };
        match Self::read_file(file) {
            Ok(keys) => {
                *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keys;
                true
            }
            Err(e) => {
                tracing::warn!("{e}");
                false
            }
        }
    }

    /// The id of the key that seals, if the ring has one.
    pub fn current_id(&self) -> Option<String> {
        self.keys().first().map(ServerKey::id)
    }

    /// `plain`, sealed with the current key.
    pub fn seal(&self, purpose: Purpose, plain: &str) -> StoreResult<String> {
        // The file may have been rotated since it was read: seal with what
        // is current now (writes of secrets are rare, the read is small).
        if self.file.is_some() {
            self.reload();
        }
        let key = self
            .keys()
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::Config("no server key to seal a secret with".into()))?;
        let nonce: [u8; 12] = rand::random();
        let sealed = key
            .cipher()
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plain.as_bytes(),
                    aad: purpose.aad(),
                },
            )
            .map_err(|_| StoreError::Config("cannot seal a secret".into()))?;
        let mut body = nonce.to_vec();
        body.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}:{}", key.id(), STANDARD.encode(body)))
    }

    /// The secret `stored` holds: opened if sealed, itself if it was stored
    /// before sealing existed.
    pub fn open(&self, purpose: Purpose, stored: &str) -> StoreResult<String> {
        let Some((id, body)) = stored.strip_prefix(PREFIX).and_then(|s| s.split_once(':')) else {
            return Ok(stored.to_string());
        };
        let key = match self.key(id) {
            Some(k) => k,
            None if self.reload() => self.key(id).ok_or_else(|| unknown(id))?,
            None => return Err(unknown(id)),
        };
        let bytes = STANDARD
            .decode(body)
            .map_err(|_| StoreError::Config("a sealed secret is damaged".into()))?;

        let damaged = || StoreError::Config("a sealed secret is damaged".into());
        let (nonce, sealed) = bytes.split_at_checked(12).ok_or_else(damaged)?;
        let nonce: [u8; 12] = nonce.try_into().map_err(|_| damaged())?;
        let plain = key
            .cipher()
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: sealed,
                    aad: purpose.aad(),
                },
            )
            .map_err(|_| {
                StoreError::Config(format!("a sealed secret does not open with key {id}"))
            })?;
        String::from_utf8(plain)
            .map_err(|_| StoreError::Config("a sealed secret is not text".into()))
    }

    /// `open`, for a column that may be empty.
    pub fn open_opt(
        &self,
        purpose: Purpose,
        stored: Option<String>,
    ) -> StoreResult<Option<String>> {
        stored.map(|s| self.open(purpose, &s)).transpose()
    }

    /// `seal`, for a column that may be empty.
    pub fn seal_opt(&self, purpose: Purpose, plain: Option<&str>) -> StoreResult<Option<String>> {
        plain.map(|s| self.seal(purpose, s)).transpose()
    }

    /// Whether `stored` is sealed with the current key (nothing to redo).
    pub fn is_current(&self, stored: &str) -> bool {
        let current = self.current_id();
        key_id(stored).is_some_and(|id| current.as_deref() == Some(id))
    }

    fn key(&self, id: &str) -> Option<ServerKey> {
        self.keys().into_iter().find(|k| k.id() == id)
    }
}

/// The id of the key that sealed `stored`, if it is sealed.
pub fn key_id(stored: &str) -> Option<&str> {
    stored
        .strip_prefix(PREFIX)
        .and_then(|s| s.split_once(':'))
        .map(|(id, _)| id)
}

fn unknown(id: &str) -> StoreError {
    StoreError::Config(format!(
        "a secret is sealed with server key {id}, which this instance does not have \
         (give it the key the database was sealed with: docs/operations.md, \"Secrets at rest\")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(e: StoreError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }

    #[test]
    fn a_sealed_secret_opens_with_its_key_and_purpose_only() -> std::io::Result<()> {
        let (a, b) = (ServerKey::generate(), ServerKey::generate());
        let ring = Keyring::new(vec![a.clone()], None);
        let sealed = ring.seal(Purpose::Totp, "JBSWY3DPEHPK3PXP").map_err(fail)?;
        assert!(sealed.starts_with(&format!("sealed:v1:{}:", a.id())));
        assert!(!sealed.contains("JBSWY3DPEHPK3PXP"));
        assert_eq!(
            ring.open(Purpose::Totp, &sealed).map_err(fail)?,
            "JBSWY3DPEHPK3PXP"
        );
        assert!(ring.open(Purpose::Channel, &sealed).is_err());
        assert!(
            Keyring::new(vec![b.clone()], None)
                .open(Purpose::Totp, &sealed)
                .is_err()
        );
        // The previous key still opens what it sealed; only the current seals.
        let rotated = Keyring::new(vec![b, a], None);
        assert_eq!(
            rotated.open(Purpose::Totp, &sealed).map_err(fail)?,
            "JBSWY3DPEHPK3PXP"
        );
        assert!(!rotated.is_current(&sealed));
        assert!(rotated.is_current(&rotated.seal(Purpose::Totp, "x").map_err(fail)?));
        // Written before sealing: itself.
        assert_eq!(
            ring.open(Purpose::Totp, "whsec_abc").map_err(fail)?,
            "whsec_abc"
        );
        Ok(())
    }

    #[test]
    fn keys_read_back_as_written() -> std::io::Result<()> {
        let k = ServerKey::generate();
        let again = ServerKey::parse(&k.encoded()).map_err(std::io::Error::other)?;
        assert_eq!(k.id(), again.id());
        assert!(ServerKey::parse("short").is_err());
        assert!(ServerKey::parse(&STANDARD.encode([1u8; 16])).is_err());
        Ok(())
    }
}
