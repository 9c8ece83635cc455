//! The server key that seals stored secrets (`upstate_store::sealed`): read
//! from configuration or from `secret.key` in the data directory (made on
//! first start, mode 0600), checked against the database, and rotated by
//! `upstate rotate-key` (docs/operations.md, "Secrets at rest").

use crate::config::KeySource;
use anyhow::{Context, bail};
use std::io::Write;
use std::path::Path;
use upstate_store::Db;
use upstate_store::sealed::{Keyring, ServerKey};
use upstate_store::server_key::{Settled, record_rotation, sealed_with, settle};

/// `db` with its keys: the configured ones, or the key file's (made now if
/// the database has sealed nothing yet). Every secret not sealed with the
/// current key is sealed with it before the service starts.
pub async fn unlock(source: &KeySource, db: Db) -> anyhow::Result<(Db, Settled)> {
    let ring = match source {
        KeySource::Given(keys) => Keyring::new(keys.clone(), None),
        KeySource::File(path) => {
            if !path.exists() {
                if let Some(id) = sealed_with(&db).await? {
                    bail!(
                        "{} is missing, and this database's secrets are sealed with server key {id}: \
                         copy secret.key from the instance that made it, or give that key as \
                         UPSTATE_SECRET_KEY (docs/operations.md, \"Secrets at rest\")",
                        path.display()
                    );
                }
                write_keys(path, &[ServerKey::generate()])?;
                tracing::info!("made a new server key in {}", path.display());
            }
            warn_if_readable(path);
            let keys = Keyring::read_file(path).map_err(anyhow::Error::msg)?;
            Keyring::new(keys, Some(path.to_path_buf()))
        }
    };
    let db = db.with_keys(ring);
    let settled = settle(&db).await.context("the server key")?;
    if settled.resealed > 0 {
        tracing::info!(
            resealed = settled.resealed,
            key = %settled.key_id,
            "sealed stored secrets with the current server key"
        );
    }
    // Everything is sealed with the current key now: a key file keeps no
    // older key (one that leaked must stop opening anything).
    if let KeySource::File(path) = source {
        let keys = Keyring::read_file(path).map_err(anyhow::Error::msg)?;
        if keys.len() > 1 && keys[0].id() == settled.key_id {
            write_keys(path, &keys[..1])?;
        }
    }
    Ok((db, settled))
}

/// What `upstate rotate-key` did.
pub struct Rotated {
    pub from: String,
    pub settled: Settled,
    pub file: std::path::PathBuf,
}

/// Makes a new key, re-seals every secret with it in one transaction and
/// keeps only it in the key file; audited. A key given by configuration is
/// rotated by configuration instead (the error says how).
pub async fn rotate(source: &KeySource, db: Db) -> anyhow::Result<Rotated> {
    let KeySource::File(path) = source else {
        bail!(
            "the server key is given by secret_key (UPSTATE_SECRET_KEY): rotate it there. Set \
             UPSTATE_SECRET_KEY to a new key (such as {}) and UPSTATE_SECRET_KEY_PREVIOUS to the \
             old one on every instance; each re-seals the secrets when it starts \
             (docs/operations.md, \"Secrets at rest\")",
            ServerKey::generate().encoded()
        );
    };
    let (db, before) = unlock(source, db).await?;
    let old = Keyring::read_file(path).map_err(anyhow::Error::msg)?;
    // Both keys stay in the file until every secret is sealed with the new
    // one: a crash in between leaves nothing that does not open.
    let mut keys = vec![ServerKey::generate()];
    keys.extend(old);
    write_keys(path, &keys)?;
    db.keys().reload();
    let settled = settle(&db).await.context("re-sealing the secrets")?;
    write_keys(path, &keys[..1])?;
    let ctx = upstate_store::AuditCtx::of(upstate_core::audit::Actor::cli());
    record_rotation(&db, &ctx, &before.key_id, &settled).await?;
    db.close().await;
    Ok(Rotated {
        from: before.key_id,
        settled,
        file: path.to_path_buf(),
    })
}

/// Writes `keys` (the current one first) to `path` with mode 0600, through
/// a temporary file renamed over it, so the file is never half-written.
fn write_keys(path: &Path, keys: &[ServerKey]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension("key.new");
    let mut text = String::from(
        "# Upstate's server key: it seals the secrets stored in the database.\n\
         # Keep it secret and back it up with the database; without it they are lost.\n",
    );
    for k in keys {
        text.push_str(&k.encoded());
        text.push('\n');
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// A key file others may read is logged (not refused: the operator may
/// have reasons, such as a group the service runs in).
fn warn_if_readable(path: &Path) {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                "{} can be read by others (mode {:o}): chmod 600 it",
                path.display(),
                mode & 0o777
            );
        }
    }
}
