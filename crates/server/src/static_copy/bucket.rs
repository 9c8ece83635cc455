//! A copy kept in an S3-compatible bucket (object_store): each file is an
//! object with its content type, written only when its bytes changed. What
//! was written, with each file's SHA-256, is kept in `{prefix}.upstate-copy`,
//! which says what changed without reading every object back and which
//! objects an earlier copy left that this one no longer has (removed; no
//! other object in the bucket is touched). The list is written last, so a
//! publish cut short is finished by the next one.

use super::{CopiedFile, DirReport};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{Attribute, Attributes, ObjectStore, ObjectStoreExt, PutOptions, PutPayload};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;
use upstate_core::static_copy::S3Target;

const MANIFEST: &str = ".upstate-copy";

fn store(t: &S3Target) -> Result<AmazonS3, String> {
    let mut b = AmazonS3Builder::new()
        .with_bucket_name(&t.bucket)
        .with_region(&t.region)
        .with_access_key_id(&t.access_key_id)
        .with_secret_access_key(&t.secret_access_key)
        // Our own loop retries a failed publish; a request here gives up
        // soon, so a dead bucket is reported (and shutdown not held up).
        .with_retry(object_store::RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(30),
            ..Default::default()
        })
        .with_client_options(
            object_store::ClientOptions::new()
                .with_timeout(Duration::from_secs(30))
                .with_connect_timeout(Duration::from_secs(5)),
        );
    if let Some(endpoint) = &t.endpoint {
        // Self-hosted services (MinIO, Ceph) answer at one host, the
        // bucket in the path.
        b = b
            .with_endpoint(endpoint)
            .with_allow_http(endpoint.starts_with("http://"))
            .with_virtual_hosted_style_request(false);
    }
    b.build().map_err(|e| format!("the bucket's settings: {e}"))
}

fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Makes the bucket hold exactly `files` under the target's prefix. A
/// self-hosted endpoint keeps `outgoing_allow` as a webhook does: a
/// private or loopback address is refused unless the operator allowed it.
pub async fn write_bucket(
    t: &S3Target,
    files: &[CopiedFile],
    guard: &upstate_jobs::outgoing::Guard,
) -> Result<DirReport, String> {
    if let Some(endpoint) = &t.endpoint {
        guard.check_resolved(endpoint).await?;
    }
    let s3 = store(t)?;
    let at = |p: &str| Path::from(format!("{}{p}", t.prefix));
    let manifest = at(MANIFEST);
    let before: BTreeMap<String, String> = match s3.get(&manifest).await {
        Ok(got) => String::from_utf8_lossy(
            &got.bytes()
                .await
                .map_err(|e| format!("reading {manifest}: {e}"))?,
        )
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, h)| (p.to_string(), h.to_string()))
        .collect(),
        Err(object_store::Error::NotFound { .. }) => BTreeMap::new(),
        Err(e) => return Err(format!("reading {manifest}: {e}")),
    };
    let mut report = DirReport::default();
    let mut now = BTreeMap::new();
    for f in files {
        let h = hash(&f.bytes);
        if before.get(&f.path) == Some(&h) {
            report.unchanged += 1;
        } else {
            let mut attributes = Attributes::new();
            attributes.insert(Attribute::ContentType, f.content_type.clone().into());
            let opts = PutOptions {
                attributes,
                ..Default::default()
            };
            s3.put_opts(&at(&f.path), PutPayload::from(f.bytes.clone()), opts)
                .await
                .map_err(|e| format!("writing {}: {e}", f.path))?;
            report.written += 1;
        }
        now.insert(f.path.clone(), h);
    }
    for old in before.keys().filter(|p| !now.contains_key(*p)) {
        match s3.delete(&at(old)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => report.removed += 1,
            Err(e) => return Err(format!("removing {old}: {e}")),
        }
    }
    let list: String = now.iter().map(|(p, h)| format!("{p}\t{h}\n")).collect();
    s3.put(&manifest, PutPayload::from(list.into_bytes()))
        .await
        .map_err(|e| format!("writing {manifest}: {e}"))?;
    Ok(report)
}
