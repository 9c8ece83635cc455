//! Public pages served from memory.
//!
//! A snapshot holds everything one public page shows, loaded once, plus the
//! serialized bodies of its routes (built on first use, compressed on first
//! use per encoding, each with a strong ETag). It is valid while its page's
//! version (see `upstate_store::changes`) is the one it was built at; the first
//! read after a change rebuilds it, one builder per page at a time, so a burst
//! of visitors after an incident costs one load, not thousands.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::http::HeaderValue;
use dashmap::DashMap;
use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OnceCell};
use upstate_core::Id;
use upstate_core::settings::Settings;
use upstate_core::uptime::StatusChange;
use upstate_store::public::{self, PageData};
use upstate_store::{Db, StoreError};

/// Uptime bodies and HTML pages move with the clock (today's share grows,
/// "5 min ago" ages), so they are rebuilt after this long even when nothing
/// was written.
const TIMED_TTL: Duration = Duration::from_secs(30);
/// The longest uptime history a page can ask for, in days (plus today).
const HISTORY_DAYS: i64 = 366;
const BUILD_LOCKS: usize = 64;
/// How long a page's rebuild may take while its last snapshot can stand in
/// (a database going away in that instant must not hold visitors).
const REBUILD_WITHIN: Duration = Duration::from_secs(2);

/// A page's history is read whole again after this long, so what it holds
/// stays the last year's (a part read keeps older changes it had).
const HISTORY_WHOLE_AFTER_MS: i64 = 3_600_000;
/// More components than this to read again: the whole page is read.
const HISTORY_PART_MAX: usize = 200;

/// A page's status changes as one snapshot read them.
pub struct History {
    /// By component, then time.
    pub changes: Vec<StatusChange>,
    /// The components read, sorted (none: a view's, read whole again).
    components: Vec<Id>,
    /// `Changes::history_seq` before the read.
    mark: u64,
    /// When the page's history was last read whole (zero: never, for a
    /// view's): parts read since carry it on.
    whole_at: upstate_core::Timestamp,
}

impl Default for History {
    fn default() -> History {
        History {
            changes: Vec::new(),
            components: Vec::new(),
            mark: 0,
            whole_at: upstate_core::Timestamp::from_millis(0),
        }
    }
}

/// One serialized response body and its compressed forms.
pub struct Body {
    pub json: Bytes,
    /// `application/json` for the API; feeds and calendars have their own.
    pub content_type: &'static str,
    hash: String,
    /// The ETag header of each encoding, built once (identity, gzip, brotli).
    etags: [HeaderValue; 3],
    gzip: OnceLock<Bytes>,
    brotli: OnceLock<Bytes>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

impl Body {
    pub fn new(json: Vec<u8>) -> Body {
        let mut h = DefaultHasher::new();
        json.hash(&mut h);
        let hash = format!("{:016x}", h.finish());
        let tag = |suffix: &str| {
            HeaderValue::from_str(&format!("\"{hash}{suffix}\""))
                .unwrap_or(HeaderValue::from_static("\"0\""))
        };
        let etags = [tag(""), tag("-gz"), tag("-br")];
        Body {
            etags,
            hash,
            json: Bytes::from(json),
            content_type: "application/json",
            gzip: OnceLock::new(),
            brotli: OnceLock::new(),
        }
    }

    /// A body of another type (a feed, a calendar).
    pub fn typed(bytes: Vec<u8>, content_type: &'static str) -> Body {
        Body {
            content_type,
            ..Body::new(bytes)
        }
    }

    pub fn from_value<T: serde::Serialize>(value: &T) -> Result<Body, ApiError> {
        serde_json::to_vec(value)
            .map(Body::new)
            .map_err(|e| ApiError::Internal(e.to_string()))
    }

    /// A short hash of the bytes, for versioned asset URLs.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// A strong validator per representation: the encodings differ in bytes.
    pub fn etag(&self, enc: Encoding) -> &HeaderValue {
        match enc {
            Encoding::Identity => &self.etags[0],
            Encoding::Gzip => &self.etags[1],
            Encoding::Brotli => &self.etags[2],
        }
    }

    /// Whether an `If-None-Match` value names this body in any encoding.
    pub fn matches(&self, if_none_match: &str) -> bool {
        if_none_match
            .split(',')
            .map(str::trim)
            .map(|t| t.trim_start_matches("W/"))
            .any(|tag| {
                tag == "*"
                    || tag
                        .trim_matches('"')
                        .split('-')
                        .next()
                        .is_some_and(|h| h == self.hash)
            })
    }

    pub fn bytes(&self, enc: Encoding) -> Bytes {
        match enc {
            Encoding::Identity => self.json.clone(),
            Encoding::Gzip => self.gzip.get_or_init(|| gzip(&self.json)).clone(),
            Encoding::Brotli => self
                .brotli
                .get_or_init(|| brotli_compress(&self.json))
                .clone(),
        }
    }
}

fn gzip(data: &[u8]) -> Bytes {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = enc.write_all(data);
    Bytes::from(enc.finish().unwrap_or_default())
}

/// Bodies above this are compressed at a lower brotli quality: a status
/// page of a thousand components with 90 days of bars is 14 MB of HTML,
/// which quality 9 took 0.53 s over, every time the page changed (quality
/// 5: 0.12 s, for 445 KB instead of 358 KB; bench/growth.sh). A page of
/// ordinary size keeps quality 9.
const BROTLI_FAST_ABOVE: usize = 512 * 1024;

fn brotli_compress(data: &[u8]) -> Bytes {
    let mut out = Vec::new();
    {
        let quality = if data.len() > BROTLI_FAST_ABOVE { 5 } else { 9 };
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, quality, 22);
        let _ = w.write_all(data);
    }
    Bytes::from(out)
}

/// Everything one public page shows, at one version.
pub struct Snapshot {
    pub page_id: Id,
    /// The page version it was built at (live updates compare it).
    pub version: u64,
    pub data: PageData,
    bodies: DashMap<String, Arc<Body>>,
    history: OnceCell<Arc<History>>,
    /// The history an earlier snapshot of the page read last: what this one
    /// reads again only in part (the components a commit wrote history of
    /// since), and what the page shows when the database is away before
    /// this one read its own (stale beats down).
    earlier_history: Option<Arc<History>>,
    timed: DashMap<String, (Instant, Arc<Body>)>,
    /// One rebuild of a clock-dependent body at a time: when one expires
    /// under load, the other requests wait for it instead of each building
    /// (and compressing) their own copy.
    rebuilding: Mutex<()>,
    /// The components this view leaves out (an audience's view of the
    /// page; empty for the page itself).
    pub hidden: BTreeSet<Id>,
    /// The page as each audience sees it, made from this one on first use
    /// and gone with it when the page changes.
    views: DashMap<String, Arc<Snapshot>>,
}

impl Snapshot {
    fn new(
        page_id: Id,
        version: u64,
        data: PageData,
        hidden: BTreeSet<Id>,
        earlier_history: Option<Arc<History>>,
    ) -> Snapshot {
        Snapshot {
            page_id,
            version,
            data,
            bodies: DashMap::new(),
            history: OnceCell::new(),
            earlier_history,
            timed: DashMap::new(),
            rebuilding: Mutex::new(()),
            hidden,
            views: DashMap::new(),
        }
    }

    /// The page without the `hidden` components, kept under `key` (the
    /// audience groups it is for) while this snapshot lives. Nothing
    /// hidden: this snapshot itself.
    pub fn seen_without(self: &Arc<Self>, key: &str, hidden: BTreeSet<Id>) -> Arc<Snapshot> {
        if hidden.is_empty() {
            return self.clone();
        }
        if let Some(v) = self.views.get(key) {
            return v.clone();
        }
        let data = self.data.seen_without(&hidden);
        // A view's history is read whole: it keeps no marks of its own.
        let earlier = self.last_history().map(|h| {
            Arc::new(History {
                changes: h
                    .changes
                    .iter()
                    .filter(|c| !hidden.contains(&c.component_id))
                    .cloned()
                    .collect(),
                ..History::default()
            })
        });
        let view = Arc::new(Snapshot::new(
            self.page_id,
            self.version,
            data,
            hidden,
            earlier,
        ));
        self.views.insert(key.to_string(), view.clone());
        view
    }

    /// The body cached under `key`, built by `make` on first use.
    pub fn body(
        &self,
        key: &str,
        make: impl FnOnce(&PageData) -> Result<Body, ApiError>,
    ) -> Result<Arc<Body>, ApiError> {
        if let Some(b) = self.bodies.get(key) {
            return Ok(b.clone());
        }
        let body = Arc::new(make(&self.data)?);
        self.bodies.insert(key.to_string(), body.clone());
        Ok(body)
    }

    /// The clock-dependent body under `key`, if built less than the TTL ago.
    pub fn timed(&self, key: &str) -> Option<Arc<Body>> {
        self.timed
            .get(key)
            .filter(|e| e.0.elapsed() < TIMED_TTL)
            .map(|e| e.1.clone())
    }

    /// Keeps a clock-dependent body for the TTL.
    fn keep_timed(&self, key: String, body: Body) -> Arc<Body> {
        let body = Arc::new(body);
        self.timed.insert(key, (Instant::now(), body.clone()));
        body
    }

    /// The clock-dependent body under `key`, built by `make` when missing
    /// or older than the TTL, by one request at a time (None: `make` found
    /// nothing to show, which is not kept).
    pub async fn timed_or<F, Fut>(
        &self,
        key: String,
        make: F,
    ) -> Result<Option<Arc<Body>>, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Option<Body>, ApiError>>,
    {
        if let Some(hit) = self.timed(&key) {
            return Ok(Some(hit));
        }
        let _one = self.rebuilding.lock().await;
        if let Some(hit) = self.timed(&key) {
            return Ok(Some(hit));
        }
        Ok(make().await?.map(|b| self.keep_timed(key, b)))
    }

    /// The page's component status changes of the last year, read once per
    /// snapshot: of the components a commit wrote history of since the
    /// earlier snapshot read it (and those new on the page), the rest
    /// carried over; all of it when that is unknown or an hour old. While the
    /// database is away, the one an earlier snapshot read, if any.
    pub async fn history(&self, db: &Db) -> Result<&[StatusChange], ApiError> {
        if let Some(h) = self.history.get() {
            return Ok(&h.changes);
        }
        if !db.reachable()
            && let Some(h) = &self.earlier_history
        {
            return Ok(&h.changes);
        }
        let loaded = self
            .history
            .get_or_try_init(|| async { self.read_history(db).await.map(Arc::new) })
            .await;
        match (loaded, &self.earlier_history) {
            (Ok(h), _) => Ok(&h.changes),
            (Err(_), Some(h)) => Ok(&h.changes),
            (Err(e), None) => Err(e),
        }
    }

    async fn read_history(&self, db: &Db) -> Result<History, ApiError> {
        let now = db.clock.now();
        let since = now.plus_millis(-HISTORY_DAYS * 86_400_000);
        let mut components: Vec<Id> = self
            .data
            .components
            .iter()
            .map(|c| c.id)
            .filter(|id| !self.hidden.contains(id))
            .collect();
        components.sort_unstable();
        // Before the rows: a commit in between is read again next time.
        let mark = db.changes.history_seq();
        let part = self.earlier_history.as_ref().and_then(|h| {
            let fresh = h.whole_at > now.plus_millis(-HISTORY_WHOLE_AFTER_MS);
            let mut again = db
                .changes
                .history_touched(self.page_id, &components, h.mark)
                .filter(|_| fresh && self.hidden.is_empty())?;
            again.extend(
                components
                    .iter()
                    .filter(|c| h.components.binary_search(c).is_err()),
            );
            again.sort_unstable();
            again.dedup();
            (again.len() <= HISTORY_PART_MAX).then_some((h, again))
        });
        let (changes, whole_at) = match part {
            Some((earlier, again)) => {
                let mut changes: Vec<StatusChange> = earlier
                    .changes
                    .iter()
                    .filter(|c| {
                        components.binary_search(&c.component_id).is_ok()
                            && again.binary_search(&c.component_id).is_err()
                    })
                    .copied()
                    .collect();
                changes.extend(public::status_history_of(db, &again, since).await?);
                // By component, each one's in the order read.
                changes.sort_by_key(|c| c.component_id);
                (changes, earlier.whole_at)
            }
            None => {
                let mut h = public::status_history(db, self.page_id, since).await?;
                h.retain(|c| !self.hidden.contains(&c.component_id));
                (h, now)
            }
        };
        Ok(History {
            changes,
            components,
            mark,
            whole_at,
        })
    }

    /// The history this snapshot read, else the one it was given.
    fn last_history(&self) -> Option<Arc<History>> {
        self.history
            .get()
            .cloned()
            .or_else(|| self.earlier_history.clone())
    }

    /// The uptime body for `days`, rebuilt when older than the TTL.
    pub async fn uptime_body(
        &self,
        db: &Db,
        days: u32,
        make: impl FnOnce(&PageData, &[StatusChange]) -> Result<Body, ApiError>,
    ) -> Result<Arc<Body>, ApiError> {
        let built = self
            .timed_or(format!("uptime:{days}"), || async {
                Ok(Some(make(&self.data, self.history(db).await?)?))
            })
            .await?;
        built.ok_or_else(|| ApiError::NotFound("uptime".into()))
    }
}

pub struct Snapshots {
    db: Db,
    by_slug: DashMap<String, Arc<Snapshot>>,
    /// Host name → slug of the page with that custom domain (or none), at
    /// the global version it was looked up.
    by_host: DashMap<String, (u64, Option<String>)>,
    /// The install's settings, at the global version they were read.
    settings: std::sync::RwLock<Option<(u64, Arc<Settings>)>>,
    builders: Vec<Mutex<()>>,
    /// Snapshots built from the database since start (`/api/metrics`).
    pub builds: std::sync::atomic::AtomicU64,
}

/// What the snapshot cache holds right now.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CacheFigures {
    /// Pages with a snapshot in memory.
    pub pages: usize,
    /// Rendered bodies kept (JSON, HTML, feeds … per page and language).
    pub bodies: usize,
    /// Their size, uncompressed.
    pub bytes: usize,
    /// Host names remembered for custom domains.
    pub hosts: usize,
}

impl Snapshots {
    /// The cache's figures, for operators.
    pub fn figures(&self) -> CacheFigures {
        let mut f = CacheFigures {
            pages: self.by_slug.len(),
            bodies: 0,
            bytes: 0,
            hosts: self.by_host.len(),
        };
        for snap in self.by_slug.iter() {
            for b in snap.bodies.iter() {
                f.bodies += 1;
                f.bytes += b.bytes(Encoding::Identity).len();
            }
            for t in snap.timed.iter() {
                f.bodies += 1;
                f.bytes += t.1.bytes(Encoding::Identity).len();
            }
        }
        f
    }

    /// Forgets every snapshot; each page is rebuilt from the database on its
    /// next read. Nothing is lost: the cache only mirrors the database.
    pub fn drop_all(&self) {
        self.by_slug.clear();
        self.by_host.clear();
        if let Ok(mut held) = self.settings.write() {
            *held = None;
        }
    }

    pub fn new(db: Db) -> Snapshots {
        Snapshots {
            db,
            by_slug: DashMap::new(),
            by_host: DashMap::new(),
            settings: std::sync::RwLock::new(None),
            builders: (0..BUILD_LOCKS).map(|_| Mutex::new(())).collect(),
            builds: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn fresh(&self, slug: &str) -> Option<Arc<Snapshot>> {
        let s = self.by_slug.get(slug)?;
        // A scheduled window's end passing changes what is upcoming without
        // a write: the snapshot is stale from that moment.
        let lapsed = s.data.lapses_at.is_some_and(|t| self.db.clock.now() >= t);
        (!lapsed && self.db.changes.page_version(s.page_id) == s.version).then(|| s.clone())
    }

    /// The install's settings, read again only after a change.
    pub async fn settings(&self) -> Result<Arc<Settings>, StoreError> {
        let version = self.db.changes.global_version();
        if let Ok(held) = self.settings.read()
            && let Some((v, s)) = held.as_ref()
            && (*v == version || !self.db.reachable())
        {
            return Ok(s.clone());
        }
        let s = match upstate_store::settings::settings(&self.db).await {
            Ok(s) => Arc::new(s),
            Err(e) => {
                // The database went away: the settings held are still the
                // best answer (stale beats down).
                if let Ok(held) = self.settings.read()
                    && let Some((_, s)) = held.as_ref()
                {
                    tracing::debug!(error = %e, "settings served as last read");
                    return Ok(s.clone());
                }
                return Err(e);
            }
        };
        if let Ok(mut held) = self.settings.write() {
            *held = Some((version, s.clone()));
        }
        Ok(s)
    }

    /// The slug of the page whose custom domain is `host` (a Host header,
    /// port and case ignored), cached until any page changes.
    pub async fn slug_for_host(&self, host: &str) -> Result<Option<String>, StoreError> {
        let host = host
            .rsplit_once(':')
            .filter(|(_, port)| port.parse::<u16>().is_ok())
            .map_or(host, |(h, _)| h);
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let version = self.db.changes.global_version();
        if let Some(hit) = self
            .by_host
            .get(&host)
            .filter(|e| e.0 == version || !self.db.reachable())
        {
            return Ok(hit.1.clone());
        }
        if self.by_host.len() > 10_000 {
            // Hosts are visitor input: bound what they can make us remember.
            self.by_host.clear();
        }
        let slug = match public::slug_by_domain(&self.db, &host).await {
            Ok(slug) => slug,
            Err(e) => match self.by_host.get(&host) {
                Some(held) => {
                    tracing::debug!(error = %e, "custom domain served as last read");
                    return Ok(held.1.clone());
                }
                None => return Err(e),
            },
        };
        self.by_host.insert(host, (version, slug.clone()));
        Ok(slug)
    }

    /// The page with this slug; None for unknown pages and private ones
    /// without a password (callers check the password gate).
    pub async fn get(&self, slug: &str) -> Result<Option<Arc<Snapshot>>, StoreError> {
        if let Some(s) = self.fresh(slug) {
            return Ok(Some(s));
        }
        let held = self.by_slug.get(slug).map(|s| s.clone());
        // Known to be away: no attempt that could only wait and fail.
        if !self.db.reachable() && held.is_some() {
            return Ok(held);
        }
        let built = match held {
            Some(_) => tokio::time::timeout(REBUILD_WITHIN, self.build(slug))
                .await
                .unwrap_or_else(|_| {
                    Err(StoreError::Config(
                        "the page's rebuild did not finish in time".into(),
                    ))
                }),
            None => self.build(slug).await,
        };
        match built {
            Ok(s) => Ok(s),
            // The database went away (or failed otherwise): visitors get the
            // page as it was last read, which is what the static copy would
            // show them too, rather than an error. The next read tries again.
            Err(e) => match held {
                Some(held) => {
                    if e.is_unavailable() {
                        // Known now, before the next probe: the readers
                        // queued behind this one get the page at once.
                        self.db.mark_unreachable();
                    }
                    tracing::debug!(error = %e, slug, "page served from its last snapshot");
                    Ok(Some(held))
                }
                None => Err(e),
            },
        }
    }

    async fn build(&self, slug: &str) -> Result<Option<Arc<Snapshot>>, StoreError> {
        let mut h = DefaultHasher::new();
        slug.hash(&mut h);
        let _building = self.builders[(h.finish() as usize) % BUILD_LOCKS]
            .lock()
            .await;
        if let Some(s) = self.fresh(slug) {
            return Ok(Some(s));
        }
        // The database went away while this reader waited for the builder.
        if !self.db.reachable()
            && let Some(held) = self.by_slug.get(slug).map(|s| s.clone())
        {
            return Ok(Some(held));
        }
        let Some(page_id) = public::page_id_by_slug(&self.db, slug).await? else {
            self.by_slug.remove(slug);
            return Ok(None);
        };
        // Read the version before the data: a write landing in between makes
        // the snapshot stale at once instead of hiding the write.
        let version = self.db.changes.page_version(page_id);
        let data = match public::load(&self.db, page_id).await? {
            Some(d) if d.visible() && d.page.slug == slug => d,
            _ => {
                self.by_slug.remove(slug);
                return Ok(None);
            }
        };
        self.builds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let earlier = self.by_slug.get(slug).and_then(|s| s.last_history());
        let snap = Arc::new(Snapshot::new(
            page_id,
            version,
            data,
            BTreeSet::new(),
            earlier,
        ));
        self.by_slug.insert(slug.to_string(), snap.clone());
        Ok(Some(snap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_differ_by_encoding_and_match_any() {
        let b = Body::new(b"{\"a\":1}".to_vec());
        let (plain, gz) = (b.etag(Encoding::Identity), b.etag(Encoding::Gzip));
        assert_ne!(plain, gz);
        let (plain, gz) = (plain.to_str().unwrap_or(""), gz.to_str().unwrap_or(""));
        assert!(b.matches(plain) && b.matches(gz) && b.matches("\"x\", *"));
        assert!(!b.matches("\"0000000000000000\""));
        let zipped = b.bytes(Encoding::Gzip);
        let mut d = flate2::read::GzDecoder::new(&zipped[..]);
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut d, &mut s);
        assert_eq!(s, "{\"a\":1}");
    }
}
