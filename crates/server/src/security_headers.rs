//! The headers every HTML response carries, whichever route makes it: a
//! Content-Security-Policy of its kind, `nosniff`, a referrer policy, and
//! frame protection unless the page is made to be framed (the widget).
//! Keeping them in one place is what makes "every HTML response" true: the
//! status page, its error and password pages, the widget and the API
//! reference all call `html`.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

/// The status page and its error and password pages: no scripts, styles or
/// frames from anywhere else; images (the page's logo) may come from
/// anywhere. Inline style is allowed for the accent colour.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src * data:; \
                            connect-src 'self'; manifest-src 'self'; form-action 'self'; base-uri 'none'; \
                            frame-ancestors 'none'";

/// The widget: made to be framed by any site; only its own script runs.
pub const WIDGET_CSP: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; \
     form-action 'none'; frame-ancestors *";

/// The API reference (Swagger UI): its own scripts and styles (it sets
/// inline styles), icons as data URLs, requests to this server only, so the
/// document is never sent to an outside validator.
pub const DOCS_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                            img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; \
                            base-uri 'none'; frame-ancestors 'none'";

/// The admin interface: only its own stylesheet and script, forms only to
/// this server, never framed.
pub const ADMIN_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                             connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Sets the security headers of an HTML response under `csp`.
pub fn html(h: &mut HeaderMap, csp: &'static str) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    );
    if csp.contains("frame-ancestors 'none'") {
        // For browsers older than CSP level 2.
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
}

/// For routers whose responses we do not build ourselves (Swagger UI):
/// HTML gets the reference's headers, everything else `nosniff`.
pub async fn docs(mut res: Response) -> Response {
    let is_html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/html"));
    let h = res.headers_mut();
    if is_html {
        html(h, DOCS_CSP);
    } else {
        h.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
    }
    res
}
