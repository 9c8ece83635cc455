//! The static copy: everything a visitor or an integration reads of the
//! public pages, as files a static host can serve while the service (or
//! its database) is down.
//!
//! Each file is the live route's own answer, asked of the router in this
//! process: nothing is rendered twice, so the copy cannot drift from the
//! page. Requests carry `StaticCopy`, which the HTML routes read to say
//! "as of" and to leave out what needs the live service (forms, live
//! updates), and which the per-address limits let through. From a few
//! seeds per page, every same-site link of every copied HTML page is
//! followed, so each link in the copy leads to a file of the copy.
//!
//! Static hosts ignore query strings, so a URL with one becomes a path:
//! `/s/acme?lang=de` is `s/acme/lang=de.html`, and the copy's links are
//! rewritten to those names (docs/operations.md has the layout).

mod bucket;
mod dir;
pub mod publish;

pub use bucket::write_bucket;
pub use dir::{DirReport, write_dir};

use crate::app::App;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode, header};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use tower::ServiceExt;
use upstate_core::Timestamp;
use upstate_store::Db;

/// Marks a request as made for the copy (a request extension: no header a
/// client sends can set it).
#[derive(Debug, Clone, Copy)]
pub struct StaticCopy {
    pub as_of: Timestamp,
}

/// One file of the copy.
#[derive(Debug, Clone, PartialEq)]
pub struct CopiedFile {
    /// Relative to the copy's root, `/`-separated.
    pub path: String,
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// A made copy, and the links it could not follow (with their status).
#[derive(Debug, Default)]
pub struct Copy {
    pub files: Vec<CopiedFile>,
    pub skipped: Vec<(String, u16)>,
}

/// More URLs than any install's pages have: a bound, not a budget.
const MAX_URLS: usize = 50_000;
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Statuspage's public API (`/api/v2/…`), which integrations poll.
const STATUSPAGE_FILES: [&str; 8] = [
    "summary.json",
    "status.json",
    "components.json",
    "incidents.json",
    "incidents/unresolved.json",
    "scheduled-maintenances.json",
    "scheduled-maintenances/upcoming.json",
    "scheduled-maintenances/active.json",
];

/// What each public page's copy starts from; the HTML's links lead on to
/// its other pages, languages, feeds, calendar, manifest and assets.
fn seeds(slug: &str) -> Vec<String> {
    let mut urls = vec![format!("/s/{slug}")];
    for tail in ["", "/components", "/incidents", "/maintenance", "/uptime"] {
        urls.push(format!("/api/public/status/{slug}{tail}"));
    }
    urls.push(format!("/api/v1/public/{slug}"));
    urls.push(format!("/api/v1/status?page={slug}"));
    for file in STATUSPAGE_FILES {
        urls.push(format!("/s/{slug}/api/v2/{file}"));
    }
    urls.push(format!("/api/badge?page={slug}"));
    urls.push(format!("/api/badge?format=shields&page={slug}"));
    urls.push(format!("/api/widget?page={slug}"));
    urls.push(format!("/api/widget?format=js&page={slug}"));
    urls
}

/// The copy of every public page (not private, not behind a password), as
/// `app` answers now.
pub async fn render(app: &App, db: &Db, as_of: Timestamp) -> Result<Copy, String> {
    let pages = upstate_store::pages::list(db)
        .await
        .map_err(|e| e.to_string())?;
    let mut queue: VecDeque<String> = VecDeque::new();
    // The default page's answers at the site's root, where it has one
    // (without one they are not copied, and that is no miss).
    let mut optional = BTreeSet::from(["/".to_string()]);
    for file in STATUSPAGE_FILES {
        optional.insert(format!("/api/v2/{file}"));
    }
    queue.extend(optional.iter().cloned());
    // Pages held to some networks stay out: the copy is for everyone.
    let restricted = upstate_store::access::restricted(db)
        .await
        .map_err(|e| e.to_string())?;
    let mut skipped = Vec::new();
    for p in pages
        .iter()
        .filter(|p| p.is_public && !restricted.contains(&p.id))
    {
        // A slug stored before the rules held at every door (an old
        // import) would name files outside the copy: that page stays out,
        // said in the skipped list, and the others are copied.
        if upstate_core::validate::slug(&p.slug).is_err() {
            skipped.push((format!("/s/{}", p.slug), 0));
            continue;
        }
        queue.extend(seeds(&p.slug));
    }
    let mut seen: BTreeSet<String> = queue.iter().cloned().collect();
    // URL → (content type, body), in the order found.
    let mut got: BTreeMap<String, (String, Vec<u8>)> = BTreeMap::new();
    while let Some(url) = queue.pop_front() {
        // One URL that cannot be asked (0 in the skipped list) never stops
        // the copy of the rest.
        let (status, content_type, bytes) = match fetch(app, &url, as_of).await {
            Ok(got) => got,
            Err(e) => {
                tracing::warn!(url, error = %e, "static copy: left out");
                skipped.push((url, 0));
                continue;
            }
        };
        if status != StatusCode::OK {
            if !optional.contains(&url) {
                skipped.push((url, status.as_u16()));
            }
            continue;
        }
        if is_html(&content_type) {
            for link in links(&String::from_utf8_lossy(&bytes)) {
                if seen.len() < MAX_URLS && seen.insert(link.clone()) {
                    queue.push_back(link);
                }
            }
        }
        got.insert(url, (content_type, bytes));
    }
    // Every copied URL's file name, then the HTML's links rewritten to them.
    let names: BTreeMap<&str, String> = got
        .iter()
        .map(|(url, (ct, _))| (url.as_str(), file_path(url, ct)))
        .collect();
    let mut files: Vec<CopiedFile> = got
        .iter()
        .map(|(url, (ct, bytes))| CopiedFile {
            path: names[url.as_str()].clone(),
            content_type: ct.clone(),
            bytes: if is_html(ct) {
                rewrite(&String::from_utf8_lossy(bytes), &names).into_bytes()
            } else {
                bytes.clone()
            },
        })
        .collect();
    // Two URLs may share a file (`/assets/x.css?v=1` and `?v=2`): the last wins.
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|later, earlier| later.path == earlier.path);
    Ok(Copy { files, skipped })
}

async fn fetch(
    app: &App,
    url: &str,
    as_of: Timestamp,
) -> Result<(StatusCode, String, Vec<u8>), String> {
    let mut req = Request::get(url)
        .body(Body::empty())
        .map_err(|e| format!("{url}: {e}"))?;
    req.extensions_mut().insert(StaticCopy { as_of });
    req.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 0))));
    let res = app
        .clone()
        .oneshot(req)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = res.status();
    let content_type = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_string();
    let bytes = axum::body::to_bytes(res.into_body(), MAX_BODY)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    Ok((status, content_type, bytes.to_vec()))
}

fn is_html(content_type: &str) -> bool {
    content_type.starts_with("text/html")
}

/// The file a URL's answer is kept in. A path with an extension keeps it
/// (its query only versions it: `/assets/status.css?v=…`); others get the
/// extension of their type, their query (sorted) becoming the last segment.
pub fn file_path(url: &str, content_type: &str) -> String {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let path = path.trim_matches('/');
    let last = path.rsplit('/').next().unwrap_or("");
    if last.contains('.') {
        return path.to_string();
    }
    let ext = extension(content_type);
    let stem = if path.is_empty() { "index" } else { path };
    let mut params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    if params.is_empty() {
        return format!("{stem}.{ext}");
    }
    params.sort_unstable();
    format!("{stem}/{}.{ext}", params.join("&"))
}

fn extension(content_type: &str) -> &'static str {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "text/html" => "html",
        "application/json" | "application/problem+json" => "json",
        "application/manifest+json" => "webmanifest",
        "application/rss+xml" => "rss",
        "application/atom+xml" => "atom",
        "text/calendar" => "ics",
        "image/svg+xml" => "svg",
        "text/javascript" | "application/javascript" => "js",
        "text/css" => "css",
        "image/png" => "png",
        "text/plain" => "txt",
        _ => "bin",
    }
}

/// The attribute values that may hold a same-site link.
const ATTRS: [&str; 2] = [" href=\"", " src=\""];

/// Same-site links (`/…`, not `//host`) of an HTML page, without their
/// fragment, as the browser would ask for them.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ATTRS {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            let Some(end) = rest.find('"') else { break };
            if let Some(url) = same_site(&rest[..end]) {
                out.push(url);
            }
            rest = &rest[end..];
        }
    }
    out
}

/// The URL an attribute value leads to on this site, unescaped (maud
/// escapes `&` as `&amp;`), without its fragment.
fn same_site(value: &str) -> Option<String> {
    if !value.starts_with('/') || value.starts_with("//") {
        return None;
    }
    let url = value.replace("&amp;", "&");
    let url = url.split('#').next().unwrap_or("");
    (!url.is_empty()).then(|| url.to_string())
}

/// `html` with each link to a copied URL pointing at its file instead.
fn rewrite(html: &str, names: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    loop {
        let next = ATTRS
            .iter()
            .filter_map(|a| rest.find(a).map(|at| (at, a.len())))
            .min();
        let Some((at, len)) = next else { break };
        out.push_str(&rest[..at + len]);
        rest = &rest[at + len..];
        let Some(end) = rest.find('"') else { break };
        let value = &rest[..end];
        let fragment = value.find('#').map(|i| &value[i..]).unwrap_or("");
        match same_site(value).and_then(|url| names.get(url.as_str())) {
            Some(file) => {
                out.push('/');
                out.push_str(&file.replace('&', "&amp;"));
                out.push_str(fragment);
            }
            None => out.push_str(value),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_become_files_a_static_host_serves() {
        let html = "text/html; charset=utf-8";
        assert_eq!(file_path("/", html), "index.html");
        assert_eq!(file_path("/s/acme", html), "s/acme.html");
        assert_eq!(file_path("/s/acme?lang=de", html), "s/acme/lang=de.html");
        assert_eq!(
            file_path("/s/acme/history?month=2026-10&lang=de", html),
            "s/acme/history/lang=de&month=2026-10.html"
        );
        assert_eq!(
            file_path("/api/public/status/acme", "application/json"),
            "api/public/status/acme.json"
        );
        assert_eq!(
            file_path("/s/acme/api/v2/summary.json", "application/json"),
            "s/acme/api/v2/summary.json"
        );
        assert_eq!(
            file_path("/assets/status.css?v=12", "text/css"),
            "assets/status.css"
        );
        assert_eq!(
            file_path(
                "/api/feed/rss?page=acme&format=atom",
                "application/atom+xml"
            ),
            "api/feed/rss/format=atom&page=acme.atom"
        );
    }

    #[test]
    fn links_are_found_and_rewritten_with_their_fragment() {
        let page = r#"<a href="/s/acme?lang=de">de</a> <a href="https://x.example/">x</a>
            <a href="//cdn.example/a.js">c</a> <link href="/api/feed/rss?format=atom&amp;page=acme">
            <a href="/s/acme/incidents/3#update-1">i</a> <img src="/missing">"#;
        assert_eq!(
            links(page),
            vec![
                "/s/acme?lang=de",
                "/api/feed/rss?format=atom&page=acme",
                "/s/acme/incidents/3",
                "/missing"
            ]
        );
        let names: BTreeMap<&str, String> = [
            ("/s/acme?lang=de", "s/acme/lang=de.html".to_string()),
            (
                "/api/feed/rss?format=atom&page=acme",
                "api/feed/rss/format=atom&page=acme.atom".to_string(),
            ),
            ("/s/acme/incidents/3", "s/acme/incidents/3.html".to_string()),
        ]
        .into_iter()
        .collect();
        let out = rewrite(page, &names);
        assert!(out.contains(r#"href="/s/acme/lang=de.html""#), "{out}");
        assert!(
            out.contains(r#"href="/api/feed/rss/format=atom&amp;page=acme.atom""#),
            "{out}"
        );
        assert!(
            out.contains(r#"href="/s/acme/incidents/3.html#update-1""#),
            "{out}"
        );
        assert!(out.contains(r#"href="https://x.example/""#), "{out}");
        assert!(out.contains(r#"src="/missing""#), "{out}");
    }
}
