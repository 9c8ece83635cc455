//! The page's stylesheet, script and default icon, compiled into the binary
//! and served with a content hash in their URL, so browsers keep them for a
//! year and a new release is fetched at once.

use crate::snapshot::Body;
use std::sync::LazyLock;

pub const FAVICON_URL: &str = "/assets/favicon.svg";

pub struct Asset {
    pub body: Body,
    /// The versioned URL pages link to.
    pub url: String,
}

fn asset(name: &str, bytes: &[u8], content_type: &'static str) -> Asset {
    let body = Body::typed(bytes.to_vec(), content_type);
    let url = format!("/assets/{name}?v={}", body.hash());
    Asset { body, url }
}

/// What keeps a page's event stream open, put in front of both scripts that
/// need it: one copy in the source, no extra request for either.
const LIVE_JS: &[u8] = include_bytes!("../../assets/live.js");

pub static CSS: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "status.css",
        include_bytes!("../../assets/status.css"),
        "text/css; charset=utf-8",
    )
});
pub static JS: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "status.js",
        &[LIVE_JS, include_bytes!("../../assets/status.js")].concat(),
        "text/javascript; charset=utf-8",
    )
});
/// The service worker of web push, served at `/sw.js` (its scope must
/// cover the pages, so it lives at the root, not under `/assets`).
pub static SERVICE_WORKER: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "sw.js",
        include_bytes!("../../assets/sw.js"),
        "text/javascript; charset=utf-8",
    )
});
pub static WIDGET_JS: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "widget.js",
        &[LIVE_JS, include_bytes!("../../assets/widget.js")].concat(),
        "text/javascript; charset=utf-8",
    )
});
pub static FAVICON: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "favicon.svg",
        include_bytes!("../../assets/favicon.svg"),
        "image/svg+xml",
    )
});

pub static ADMIN_CSS: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "admin.css",
        include_bytes!("../../assets/admin.css"),
        "text/css; charset=utf-8",
    )
});
pub static ADMIN_JS: LazyLock<Asset> = LazyLock::new(|| {
    asset(
        "admin.js",
        include_bytes!("../../assets/admin.js"),
        "text/javascript; charset=utf-8",
    )
});

pub fn css_url() -> &'static str {
    &CSS.url
}

pub fn js_url() -> &'static str {
    &JS.url
}

/// The asset with this file name.
pub fn named(name: &str) -> Option<&'static Asset> {
    match name {
        "status.css" => Some(&CSS),
        "status.js" => Some(&JS),
        "widget.js" => Some(&WIDGET_JS),
        "favicon.svg" => Some(&FAVICON),
        "admin.css" => Some(&ADMIN_CSS),
        "admin.js" => Some(&ADMIN_JS),
        _ => None,
    }
}
