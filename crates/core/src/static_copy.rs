//! Where the static copy of the public pages is published while the service
//! runs (`GET/PUT /api/export-settings`), and how the last publish went.
//!
//! A directory target is a folder under the configured copy root, never an
//! arbitrary path: whoever holds an admin key must not be able to make the
//! server write (or remove) files elsewhere on its machine. A bucket's
//! secret is never shown again once saved; leaving it out keeps it.

use crate::Timestamp;
use crate::validate::FieldErrors;
use serde::{Deserialize, Serialize};

/// The stored settings (the `export` settings document).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExportSettings {
    pub enabled: bool,
    /// A folder under the copy root (`static_copy_root`), `/`-separated.
    pub directory: Option<String>,
    pub s3: Option<S3Target>,
}

/// An S3-compatible bucket (AWS, MinIO, R2, Ceph, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct S3Target {
    /// None: AWS itself; else the service's URL (`http://minio:9000`).
    pub endpoint: Option<String>,
    pub bucket: String,
    /// Prepended to every key (`status/`), or empty.
    pub prefix: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
}

/// `PUT /api/export-settings`: the whole setting.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportInput {
    /// Publish after every change.
    pub enabled: bool,
    /// A folder under the copy root, such as `status` (null: none).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::export_folder))]
    pub directory: Option<String>,
    /// A bucket to publish to (null: none).
    #[serde(default)]
    pub s3: Option<S3Input>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct S3Input {
    /// The S3-compatible service's URL; leave out for AWS.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url))]
    pub endpoint: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::bucket))]
    pub bucket: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::key_prefix))]
    pub prefix: Option<String>,
    /// Default `us-east-1`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub region: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub access_key_id: String,
    /// Leave out to keep the saved secret of the same access key.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::credential))]
    pub secret_access_key: Option<String>,
}

const TEXT_MAX: usize = 256;

impl ExportInput {
    /// The settings this input makes, keeping `current`'s secret where the
    /// input leaves it out for the same access key.
    pub fn apply(self, current: &ExportSettings) -> Result<ExportSettings, FieldErrors> {
        let mut e = FieldErrors::new();
        let directory = match self.directory.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(d) => e.check("directory", folder(d)),
        };
        let s3 = self.s3.and_then(|s| s.target(current.s3.as_ref(), &mut e));
        if self.enabled && directory.is_none() && s3.is_none() && e.is_empty() {
            e.push(
                "enabled",
                "name a directory or a bucket to publish to, or leave publishing off",
            );
        }
        e.into_result()?;
        Ok(ExportSettings {
            enabled: self.enabled,
            directory,
            s3,
        })
    }
}

impl S3Input {
    fn target(self, current: Option<&S3Target>, e: &mut FieldErrors) -> Option<S3Target> {
        let endpoint = match self.endpoint.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(u) => e.check("s3.endpoint", crate::validate::url(u)),
        };
        let bucket = e.check("s3.bucket", bucket(&self.bucket));
        let prefix = e.check("s3.prefix", prefix(self.prefix.as_deref().unwrap_or("")));
        let region = e.check(
            "s3.region",
            plain(
                "a region such as us-east-1",
                self.region.as_deref().unwrap_or("us-east-1"),
            ),
        );
        let key = e.check(
            "s3.accessKeyId",
            plain("the access key's id", &self.access_key_id),
        );
        let secret = match self.secret_access_key {
            Some(s) => e.check("s3.secretAccessKey", plain("the secret access key", &s)),
            None => match current.filter(|c| Some(&c.access_key_id) == key.as_ref()) {
                Some(c) => Some(c.secret_access_key.clone()),
                None => {
                    e.push("s3.secretAccessKey", "is required with a new access key");
                    None
                }
            },
        };
        Some(S3Target {
            endpoint,
            bucket: bucket?,
            prefix: prefix?,
            region: region?,
            access_key_id: key?,
            secret_access_key: secret?,
        })
    }
}

/// A relative folder: names separated by `/`, none of them `.` or `..`.
fn folder(raw: &str) -> Result<String, String> {
    let d = raw.trim_matches('/');
    let ok = !raw.starts_with('/')
        && d.len() <= TEXT_MAX
        && !d.is_empty()
        && d.split('/').all(|p| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        });
    if ok {
        Ok(d.to_string())
    } else {
        Err("must be a folder under the copy root, such as status or sites/status (letters, digits, - _ . and /; no ..)".into())
    }
}

/// S3's bucket naming rules: 3–63 of a–z, 0–9, `.` and `-`, starting and
/// ending with a letter or digit.
fn bucket(raw: &str) -> Result<String, String> {
    let b = raw.trim();
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if (3..=63).contains(&b.len())
        && b.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && edge(b.chars().next())
        && edge(b.chars().last())
    {
        Ok(b.to_string())
    } else {
        Err("must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens".into())
    }
}

/// A key prefix: ends with `/` when not empty, never starts with one.
fn prefix(raw: &str) -> Result<String, String> {
    let p = raw.trim().trim_matches('/');
    if p.is_empty() {
        return Ok(String::new());
    }
    folder(p)
        .map(|p| format!("{p}/"))
        .map_err(|_| "must be a key prefix such as status/ (letters, digits, - _ . and /)".into())
}

/// A one-line value of at most 256 characters.
fn plain(what: &str, raw: &str) -> Result<String, String> {
    let s = raw.trim();
    if s.is_empty() || s.len() > TEXT_MAX || s.chars().any(char::is_control) {
        Err(format!(
            "must be {what} (one line, at most {TEXT_MAX} characters)"
        ))
    } else {
        Ok(s.to_string())
    }
}

/// How publishing went (the `export_status` document; no audit: it is the
/// service's own record, written after every attempt).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default)]
pub struct ExportStatus {
    /// When the last publish finished without error.
    pub last_published_at: Option<Timestamp>,
    /// When the last attempt ended, whatever its outcome.
    pub last_attempt_at: Option<Timestamp>,
    /// The last attempt's error; null once an attempt succeeds.
    pub last_error: Option<String>,
    /// Files in the last published copy.
    pub files: usize,
    /// Of those, written (changed) by the last publish.
    pub written: usize,
    /// Removed by the last publish (pages gone or made private).
    pub removed: usize,
}

/// What `GET/PUT /api/export-settings` answer: the settings without the
/// secret, and the last publish.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportView {
    pub enabled: bool,
    pub directory: Option<String>,
    pub s3: Option<S3View>,
    pub status: ExportStatus,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct S3View {
    pub endpoint: Option<String>,
    pub bucket: String,
    pub prefix: String,
    pub region: String,
    pub access_key_id: String,
    /// Always true: a saved bucket has its secret, which is never shown.
    pub secret_access_key_set: bool,
}

impl ExportSettings {
    pub fn view(&self, status: ExportStatus) -> ExportView {
        ExportView {
            enabled: self.enabled,
            directory: self.directory.clone(),
            s3: self.s3.as_ref().map(|s| S3View {
                endpoint: s.endpoint.clone(),
                bucket: s.bucket.clone(),
                prefix: s.prefix.clone(),
                region: s.region.clone(),
                access_key_id: s.access_key_id.clone(),
                secret_access_key_set: true,
            }),
            status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> ExportInput {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn fields(r: Result<ExportSettings, FieldErrors>) -> Vec<String> {
        match r {
            Ok(s) => panic!("accepted {s:?}"),
            Err(e) => e.0.into_iter().map(|f| f.field).collect(),
        }
    }

    #[test]
    fn targets_are_checked_and_the_secret_kept_for_the_same_key() {
        let cur = ExportSettings::default();
        assert_eq!(
            fields(input(json!({"enabled": true})).apply(&cur)),
            ["enabled"]
        );
        for bad in ["/etc", "../up", "a/../b", "with space", "a//b"] {
            assert_eq!(
                fields(input(json!({"enabled": false, "directory": bad})).apply(&cur)),
                ["directory"],
                "{bad}"
            );
        }
        let saved = input(json!({"enabled": true, "directory": "status/", "s3": {
            "endpoint": "http://127.0.0.1:9000", "bucket": "status-copy", "prefix": "/pages",
            "accessKeyId": "AKIA1", "secretAccessKey": "s3cret"}}))
        .apply(&cur)
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(saved.directory.as_deref(), Some("status"));
        let s3 = saved.s3.clone().unwrap_or_else(|| panic!("a bucket"));
        assert_eq!(
            (s3.prefix.as_str(), s3.region.as_str()),
            ("pages/", "us-east-1")
        );
        let again = input(
            json!({"enabled": true, "s3": {"bucket": "status-copy", "accessKeyId": "AKIA1"}}),
        )
        .apply(&saved)
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            again.s3.map(|s| s.secret_access_key).as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            fields(
                input(
                    json!({"enabled": true, "s3": {"bucket": "Bad_Bucket", "accessKeyId": "AKIA2"}})
                )
                .apply(&saved)
            ),
            ["s3.bucket", "s3.secretAccessKey"]
        );
    }
}
