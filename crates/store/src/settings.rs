//! Install-wide settings and feature switches, one JSON document each in the
//! `settings` table. Saving either records `settings.changed`, which makes
//! every page's snapshot stale on every instance (the switches change what
//! pages show).

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::sealed::{Keyring, Purpose};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use upstate_core::FieldErrors;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::settings::{Features, Settings};
use upstate_core::sso::SsoSettings;
use upstate_core::static_copy::{ExportSettings, ExportStatus};

/// The stored document `name`, or its default when never saved. A document
/// that no longer reads (hand-edited) is an error, not silently the default:
/// a feature an operator turned off must not come back on.
async fn load<T: DeserializeOwned + Default>(db: &Db, name: &str) -> StoreResult<T> {
    let raw: Option<String> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT value FROM settings WHERE name = $1"
    )
    .bind(name)
    .fetch_optional(c)
    .await?);
    match raw {
        None => Ok(T::default()),
        Some(raw) => serde_json::from_str(&raw)
            .map_err(|e| StoreError::Config(format!("stored {name} do not read: {e}"))),
    }
}

pub async fn settings(db: &Db) -> StoreResult<Settings> {
    load(db, Settings::NAME).await
}

pub async fn features(db: &Db) -> StoreResult<Features> {
    load(db, Features::NAME).await
}

/// A stored document: its row name, audit action, and the page it names
/// (which must exist when it is saved).
trait Document: Serialize + DeserializeOwned + Default + Clone {
    const NAME: &'static str;
    const ACTION: Action;
    fn page(&self) -> Option<&str> {
        None
    }
    /// What the audit log keeps of it.
    fn audited(&self) -> serde_json::Value {
        json!(self)
    }
    /// Seals (`open`: opens) the secrets it holds, for the row.
    fn seal(&mut self, _keys: &Keyring) -> StoreResult<()> {
        Ok(())
    }
    fn open(&mut self, _keys: &Keyring) -> StoreResult<()> {
        Ok(())
    }
}

impl Document for Settings {
    const NAME: &'static str = "settings";
    const ACTION: Action = Action::SettingsUpdate;
    fn page(&self) -> Option<&str> {
        self.default_page.as_deref()
    }
}

impl Document for Features {
    const NAME: &'static str = "features";
    const ACTION: Action = Action::FeaturesUpdate;
}

impl Document for ExportSettings {
    const NAME: &'static str = "export";
    const ACTION: Action = Action::ExportSettingsUpdate;
    /// Everything but the bucket's secret.
    fn audited(&self) -> serde_json::Value {
        let mut v = json!(self);
        if let Some(s3) = v.get_mut("s3").and_then(|s| s.as_object_mut()) {
            s3.remove("secretAccessKey");
        }
        v
    }
    fn seal(&mut self, keys: &Keyring) -> StoreResult<()> {
        if let Some(s3) = &mut self.s3 {
            s3.secret_access_key = keys.seal(Purpose::Bucket, &s3.secret_access_key)?;
        }
        Ok(())
    }
    fn open(&mut self, keys: &Keyring) -> StoreResult<()> {
        if let Some(s3) = &mut self.s3 {
            s3.secret_access_key = keys.open(Purpose::Bucket, &s3.secret_access_key)?;
        }
        Ok(())
    }
}

impl Document for SsoSettings {
    const NAME: &'static str = "sso";
    const ACTION: Action = Action::SsoSettingsUpdate;
    /// Everything but the client secret, of which only whether it is set.
    fn audited(&self) -> serde_json::Value {
        let mut v = json!(self);
        if let Some(o) = v.as_object_mut() {
            o.remove("clientSecret");
            o.insert(
                "clientSecretSet".into(),
                json!(!self.client_secret.is_empty()),
            );
        }
        v
    }
    fn seal(&mut self, keys: &Keyring) -> StoreResult<()> {
        if !self.client_secret.is_empty() {
            self.client_secret = keys.seal(Purpose::Sso, &self.client_secret)?;
        }
        Ok(())
    }
    fn open(&mut self, keys: &Keyring) -> StoreResult<()> {
        if !self.client_secret.is_empty() {
            self.client_secret = keys.open(Purpose::Sso, &self.client_secret)?;
        }
        Ok(())
    }
}

/// Changes a document by `f` in one transaction that holds it (row lock on
/// PostgreSQL, the write lock on SQLite), so two operators switching
/// different features at once both keep their change.
async fn change<T: Document>(
    db: &Db,
    ctx: &AuditCtx,
    f: impl FnOnce(T) -> Result<T, FieldErrors>,
) -> StoreResult<T> {
    let name = T::NAME;
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    // The row must exist to be locked.
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO settings (name, value, updated_at) VALUES ($1, '{}', $2) ON CONFLICT (name) DO NOTHING"
    )
    .bind(name)
    .bind(now)
    .execute(c)
    .await?
    .rows_affected()
    });
    let raw: String = locked!(
        &mut tx,
        "SELECT value FROM settings WHERE name = $1",
        |c, q| sqlx::query_scalar(q).bind(name).fetch_one(c).await?
    );
    let mut current: T = serde_json::from_str(&raw)
        .map_err(|e| StoreError::Config(format!("stored {name} do not read: {e}")))?;
    current.open(&tx.keys)?;
    let before = current.audited();
    let next = f(current).map_err(StoreError::Invalid)?;
    if let Some(slug) = next.page() {
        let found: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
            "SELECT id FROM status_pages WHERE slug = $1"
        )
        .bind(slug)
        .fetch_optional(c)
        .await?);
        if found.is_none() {
            return Err(StoreError::invalid_ref(
                "defaultPage",
                format!("no page has the slug {slug:?}"),
            ));
        }
    }
    let mut kept = next.clone();
    kept.seal(&tx.keys)?;
    let text = serde_json::to_string(&kept)
        .map_err(|e| StoreError::Config(format!("unserializable {name}: {e}")))?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE settings SET value = $2, updated_at = $3 WHERE name = $1"
    )
    .bind(name)
    .bind(&text)
    .bind(now)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            T::ACTION,
            name,
            None,
            json!({ "before": before, "after": next.audited() }),
        )
        .await?;
    tx.record(Event::SettingsChanged).await?;
    tx.commit(audited).await?;
    Ok(next)
}

/// Changes the settings; a default page must name an existing page.
pub async fn change_settings(
    db: &Db,
    ctx: &AuditCtx,
    f: impl FnOnce(Settings) -> Result<Settings, FieldErrors>,
) -> StoreResult<Settings> {
    change(db, ctx, f).await
}

pub async fn change_features(
    db: &Db,
    ctx: &AuditCtx,
    f: impl FnOnce(Features) -> Result<Features, FieldErrors>,
) -> StoreResult<Features> {
    change(db, ctx, f).await
}

pub async fn export_settings(db: &Db) -> StoreResult<ExportSettings> {
    let mut kept: ExportSettings = load(db, ExportSettings::NAME).await?;
    kept.open(&db.keys)?;
    Ok(kept)
}

/// Changes where the static copy is published; the change wakes every
/// instance's publisher (`settings.changed`).
pub async fn change_export_settings(
    db: &Db,
    ctx: &AuditCtx,
    f: impl FnOnce(ExportSettings) -> Result<ExportSettings, FieldErrors>,
) -> StoreResult<ExportSettings> {
    change(db, ctx, f).await
}

/// Single sign-on's settings, the client secret opened.
pub async fn sso_settings(db: &Db) -> StoreResult<SsoSettings> {
    let mut kept: SsoSettings = load(db, SsoSettings::NAME).await?;
    kept.open(&db.keys)?;
    Ok(kept)
}

pub async fn change_sso_settings(
    db: &Db,
    ctx: &AuditCtx,
    f: impl FnOnce(SsoSettings) -> Result<SsoSettings, FieldErrors>,
) -> StoreResult<SsoSettings> {
    change(db, ctx, f).await
}

const EXPORT_STATUS: &str = "export_status";

pub async fn export_status(db: &Db) -> StoreResult<ExportStatus> {
    load(db, EXPORT_STATUS).await
}

/// Records how a publish went: the service's own record, not an operator's
/// change, so neither audited nor announced.
pub async fn record_export_status(db: &Db, status: &ExportStatus) -> StoreResult<()> {
    let text = serde_json::to_string(status)
        .map_err(|e| StoreError::Config(format!("unserializable export status: {e}")))?;
    let now = db.clock.now().millis();
    on_db!(db, |c| sqlx::query(
        "INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
    )
    .bind(EXPORT_STATUS)
    .bind(&text)
    .bind(now)
    .execute(c)
    .await?
    .rows_affected());
    Ok(())
}
