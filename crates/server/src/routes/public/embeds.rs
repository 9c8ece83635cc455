//! What other sites and apps embed or subscribe to: the maintenance calendar
//! (iCalendar), status badges (SVG in the shields.io look, or shields.io's
//! endpoint JSON), the widget (an iframe-able fragment and the script that
//! places it), the web app manifest, and `GET /api/v1/status`. All served
//! from the page snapshot, on the public stack, rate limited per address.

use crate::error::ApiError;
use crate::extract::QueryParams;
use crate::i18n::{Lang, Negotiate};
use crate::openapi::{BadQuery, PublicErrors};
use crate::public_reads::host_slug;
use crate::public_reads::{limited, offered, page, public, queried_page, serve_page};
use crate::respond::Data;
use crate::security_headers;
use crate::snapshot::{Body, Snapshot};
use crate::state::AppState;
use crate::views::{assets, overall_key, status_class, status_symbol};
use crate::visitor::Visitor;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use icalendar::{Calendar, Component as _, Event, EventLike, EventStatus};
use serde::Serialize;
use shields::BadgeStyle;
use shields::builder::Badge;
use upstate_core::public::{overall_status, status_label};
use upstate_core::{ComponentStatus, FieldErrors, Id, Maintenance, MaintenanceStatus, Timestamp};
use upstate_store::public::PageData;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    let per_minute = state.settings.public_limits.page;
    OpenApiRouter::new()
        .routes(limited(state, routes!(calendar), per_minute))
        .routes(limited(
            state,
            routes!(badge),
            state.settings.public_limits.summary,
        ))
        .routes(limited(state, routes!(widget), per_minute))
        .routes(limited(state, routes!(manifest), per_minute))
        .routes(limited(
            state,
            routes!(v1_status),
            state.settings.public_limits.summary,
        ))
}

/// The page's component `id` from the `component` parameter, if given; a
/// component of another page is reported like an unknown one.
fn component_of(snap: &Snapshot, q: &QueryParams) -> Result<Option<Id>, ApiError> {
    let mut e = FieldErrors::new();
    let id = q.id("component", &mut e);
    e.into_result()?;
    match id {
        Some(id) if !snap.data.components.iter().any(|c| c.id == id) => Err(ApiError::validation(
            "component",
            format!("no component {id} on this page"),
        )),
        other => Ok(other),
    }
}

fn utc(at: Timestamp) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(at.millis()).unwrap_or_default()
}

/// Every maintenance window of the page (upcoming, ongoing and those of the
/// last year), optionally only those affecting one component.
fn ics(d: &PageData, component: Option<Id>, base: &str) -> Body {
    let host = base
        .split("://")
        .nth(1)
        .unwrap_or(base)
        .split(['/', ':'])
        .next()
        .unwrap_or("upstate");
    let mut cal = Calendar::empty();
    cal.append_property(icalendar::Property::new("VERSION", "2.0"));
    cal.append_property(icalendar::Property::new("PRODID", PRODID));
    cal.append_property(icalendar::Property::new("CALSCALE", "GREGORIAN"));
    cal.name(&format!("{} maintenance", d.page.name));
    cal.description(&format!("Scheduled maintenance of {}", d.page.name));
    cal.timezone(d.page.time_zone.as_str());
    let windows = d.maintenance.iter().chain(&d.past_maintenance);
    for m in windows.filter(|m| component.is_none_or(|c| m.affected_components.contains(&c))) {
        cal.push(event(d, m, base, host));
    }
    Body::typed(
        cal.done().to_string().into_bytes(),
        "text/calendar; charset=utf-8",
    )
}

/// Who wrote the calendar (RFC 5545 3.7.3), in the usual FPI form.
const PRODID: &str = concat!("-//Upstate//Upstate ", env!("CARGO_PKG_VERSION"), "//EN");

fn event(d: &PageData, m: &Maintenance, base: &str, host: &str) -> Event {
    let changed = m
        .updates
        .first()
        .map(|u| u.created_at)
        .unwrap_or(m.created_at);
    let affected: Vec<&str> = d
        .components
        .iter()
        .filter(|c| m.affected_components.contains(&c.id))
        .map(|c| c.name.as_str())
        .collect();
    // Stored before the rule folded bare CRs (or by an older import): a CR
    // the calendar writer leaves as it is would end the line there.
    let mut text = upstate_core::validate::one_line_end(&m.description);
    if !affected.is_empty() {
        text = format!("{text}\n\nAffected: {}", affected.join(", "))
            .trim()
            .to_string();
    }
    Event::new()
        // Stable across rebuilds: calendar apps update the event in place.
        .uid(&format!("maintenance-{}@{host}", m.id))
        .summary(&upstate_core::validate::one_line_end(&m.title))
        .description(&text)
        .starts(utc(m.scheduled_start_time))
        .ends(utc(m.scheduled_end_time))
        .timestamp(utc(changed))
        .last_modified(utc(changed))
        .sequence(m.updates.len() as u32)
        .url(&format!("{base}/s/{}/maintenance/{}", d.page.slug, m.id))
        .status(if m.status == MaintenanceStatus::Cancelled {
            EventStatus::Cancelled
        } else {
            EventStatus::Confirmed
        })
        .done()
}

#[utoipa::path(get, path = "/api/calendar", tag = "feeds", operation_id = "calendar",
    summary = "A page's maintenance windows as iCalendar (RFC 5545); cancelled ones marked CANCELLED",
    params(("page" = String, Query, description = "The page's slug"), ("component" = Option<i64>, Query, description = "Only windows affecting this component")),
    responses((status = 200, description = "text/calendar", content_type = "text/calendar"), PublicErrors, BadQuery))]
async fn calendar(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let snap = queried_page(&state, &q, &headers, FieldErrors::new()).await?;
            offered(snap.data.features.calendar, "calendars")?;
            let component = component_of(&snap, &q)?;
            let key = format!("ics:{}", component.unwrap_or(0));
            let body = snap.body(&key, |d| Ok(ics(d, component, &state.settings.public_url)))?;
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

/// The status a badge or widget shows: one component's, or the page's.
fn shown_status(d: &PageData, component: Option<Id>) -> ComponentStatus {
    match component.and_then(|id| d.components.iter().find(|c| c.id == id)) {
        Some(c) => c.status,
        None => overall_status(&d.components, &d.incidents),
    }
}

/// shields.io's words and named colours for each status.
fn badge_words(s: ComponentStatus) -> (&'static str, &'static str) {
    match s {
        ComponentStatus::Operational => ("operational", "brightgreen"),
        ComponentStatus::Degraded => ("degraded performance", "yellow"),
        ComponentStatus::PartialOutage => ("partial outage", "orange"),
        ComponentStatus::MajorOutage => ("major outage", "red"),
        ComponentStatus::Maintenance => ("under maintenance", "blue"),
    }
}

/// shields.io's endpoint badge schema (https://shields.io/badges/endpoint-badge).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ShieldsEndpoint {
    schema_version: u8,
    label: String,
    message: &'static str,
    color: &'static str,
}

const LABEL_MAX: usize = 64;

#[utoipa::path(get, path = "/api/badge", tag = "feeds", operation_id = "badge",
    summary = "An SVG status badge (shields.io look), or shields.io endpoint JSON with format=shields",
    params(("page" = String, Query, description = "The page's slug"), ("component" = Option<i64>, Query, description = "A component's status instead of the page's"),
        ("style" = Option<String>, Query, description = "flat (default), flat-square, plastic or for-the-badge"),
        ("label" = Option<String>, Query, description = "The left-hand text (default: status, or the component's name)"),
        ("format" = Option<String>, Query, description = "svg (default) or shields")),
    responses((status = 200, description = "An SVG badge (the default), or with format=shields the shields.io endpoint JSON",
        content(("image/svg+xml"), (ShieldsEndpoint = "application/json"))), PublicErrors, BadQuery))]
async fn badge(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let mut e = FieldErrors::new();
            let style = q.one_of(
                "style",
                &["flat", "flat-square", "plastic", "for-the-badge"],
                &mut e,
            );
            let format = q.one_of("format", &["svg", "shields"], &mut e);
            let label = q.get("label").map(str::to_string);
            if label
                .as_ref()
                .is_some_and(|l| l.chars().count() > LABEL_MAX || l.chars().any(char::is_control))
            {
                e.push(
                    "label",
                    format!("must be at most {LABEL_MAX} printable characters"),
                );
            }
            let snap = queried_page(&state, &q, &headers, e).await?;
            offered(snap.data.features.badges, "badges")?;
            let component = component_of(&snap, &q)?;
            let d = &snap.data;
            let label = label.unwrap_or_else(|| {
                component
                    .and_then(|id| d.components.iter().find(|c| c.id == id))
                    .map_or("status".to_string(), |c| c.name.clone())
            });
            let (message, color) = badge_words(shown_status(d, component));
            // Built per request: labels are visitor input, so nothing is
            // cached per label (rendering a badge takes microseconds).
            let body = if format == "shields" {
                Body::from_value(&ShieldsEndpoint {
                    schema_version: 1,
                    label,
                    message,
                    color,
                })?
            } else {
                let style = match style {
                    "flat-square" => BadgeStyle::FlatSquare,
                    "plastic" => BadgeStyle::Plastic,
                    "for-the-badge" => BadgeStyle::ForTheBadge,
                    _ => BadgeStyle::Flat,
                };
                let svg = Badge::style(style)
                    .label(&label)
                    .message(message)
                    .message_color(color)
                    .build();
                Body::typed(svg.into_bytes(), "image/svg+xml")
            };
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

/// The widget: a one-line status for an iframe (no script inside), or with
/// `format=js` the script that puts that iframe where it is included.
fn widget_html(d: &PageData, lang: Lang, base: &str, theme: &str) -> String {
    let s = overall_status(&d.components, &d.incidents);
    let page_url = format!("{base}/s/{}", d.page.slug);
    // What the script needs to show any status in this language.
    let table = |f: &dyn Fn(ComponentStatus) -> &'static str| {
        let map: serde_json::Map<String, serde_json::Value> = ComponentStatus::ALL
            .iter()
            .map(|&st| (st.as_str().to_string(), f(st).into()))
            .collect();
        serde_json::Value::Object(map).to_string()
    };
    maud::html! {
        (maud::DOCTYPE)
        html lang=(lang.code()) dir=[lang.rtl_dir()] class=(theme) {
            head {
                meta charset="utf-8";
                meta name="color-scheme" content=(match theme { "light" => "light", "dark" => "dark", _ => "light dark" });
                title { (d.page.name) " " (lang.t("page.status")) }
                style { (WIDGET_CSS) }
                script src=(assets::WIDGET_JS.url) defer {}
            }
            body {
                // The document's one heading: the page and how it is.
                h1 {
                a class={ "w " (status_class(s)) } href=(page_url) target="_blank" rel="noopener" data-status=(s.as_str())
                    data-events={ "/api/public/status/" (d.page.slug) "/events" }
                    data-labels=(table(&|st| lang.t(overall_key(st))))
                    data-symbols=(table(&status_symbol)) data-classes=(table(&status_class)) {
                    span.dot aria-hidden="true" { (status_symbol(s)) }
                    span { strong { (d.page.name) } ": " span.label { (lang.t(overall_key(s))) } }
                }
                }
            }
        }
    }
    .into_string()
}

const WIDGET_CSS: &str = "body{margin:0;font:14px/1.4 system-ui,sans-serif}h1{margin:0;font:inherit}\
.w{display:flex;gap:.5em;align-items:center;padding:.5em .75em;border:1px solid #d0d7de;border-radius:8px;\
color:#1f2328;background:#fff;text-decoration:none}.w:focus-visible{outline:3px solid #0550ae}\
.dot{display:inline-flex;flex:none;width:1.4em;height:1.4em;border-radius:50%;color:#fff;justify-content:center;align-items:center;font-weight:700}\
.s-ok .dot{background:#1a7f37}.s-degraded .dot{background:#9a6700}.s-partial .dot{background:#bc4c00}\
.s-major .dot{background:#cf222e}.s-maint .dot{background:#0969da}\
.dark .w{background:#0d1117;color:#e6edf3;border-color:#30363d}\
@media (prefers-color-scheme:dark){.auto .w{background:#0d1117;color:#e6edf3;border-color:#30363d}}";

/// The embedding script (`assets/embed.js`), called with this page's
/// widget URL and title (JSON, so no page name can break out of the string).
fn widget_js(d: &PageData, lang: Lang, base: &str) -> String {
    let cfg = serde_json::json!({
        "src": format!("{base}/api/widget?page={}&lang={}", d.page.slug, lang.code()),
        "title": format!("{} {}", d.page.name, lang.t("page.status")),
    });
    format!("{}({cfg});\n", EMBED_JS.trim_end())
}

const EMBED_JS: &str = include_str!("../../../assets/embed.js");

#[utoipa::path(get, path = "/api/widget", tag = "feeds", operation_id = "widget",
    summary = "An embeddable status widget: an iframe-able HTML fragment, or with format=js the script that embeds it",
    params(("page" = String, Query, description = "The page's slug"), ("format" = Option<String>, Query, description = "html (default) or js"),
        ("lang" = Option<String>, Query, description = "en, de, fr, es, ja or ar (default: Accept-Language)"),
        ("theme" = Option<String>, Query, description = "auto (default: the visitor's preference), light or dark (the embedding script passes the host page's)")),
    responses((status = 200, description = "The widget: an HTML fragment, or with format=js a script that writes it",
        content(("text/html"), ("text/javascript"))), PublicErrors, BadQuery))]
async fn widget(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let mut e = FieldErrors::new();
            let format = q.one_of("format", &["html", "js"], &mut e);
            let theme = q.one_of("theme", &["auto", "light", "dark"], &mut e);
            let snap = queried_page(&state, &q, &headers, e).await?;
            offered(snap.data.features.widget, "widgets")?;
            let lang = Lang::negotiate_or(
                q.get("lang"),
                &headers,
                snap.data.settings.default_language.as_deref(),
            );
            let base = &state.settings.public_url;
            let key = format!("widget:{format}:{}:{theme}", lang.code());
            let body = snap.body(&key, |d| {
                Ok(if format == "js" {
                    Body::typed(
                        widget_js(d, lang, base).into_bytes(),
                        "text/javascript; charset=utf-8",
                    )
                } else {
                    Body::typed(
                        widget_html(d, lang, base, theme).into_bytes(),
                        "text/html; charset=utf-8",
                    )
                })
            })?;
            let mut res = serve_page(&snap, &headers, &body);
            let h = res.headers_mut();
            h.insert(
                header::VARY,
                HeaderValue::from_static("Accept-Encoding, Accept-Language"),
            );
            if format == "html" {
                security_headers::html(h, security_headers::WIDGET_CSP);
            }
            Ok::<_, ApiError>(res)
        }
        .await,
    )
}

#[derive(Serialize, utoipa::ToSchema)]
struct ManifestIcon {
    src: String,
    sizes: &'static str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
}

/// A W3C web app manifest, so the page can be installed to a home screen.
#[derive(Serialize, utoipa::ToSchema)]
struct Manifest {
    name: String,
    short_name: String,
    description: String,
    start_url: String,
    scope: String,
    display: &'static str,
    theme_color: String,
    background_color: &'static str,
    icons: Vec<ManifestIcon>,
}

fn manifest_of(d: &PageData) -> Manifest {
    let p = &d.page;
    let icon = match &p.favicon_url {
        Some(url) => ManifestIcon {
            src: url.clone(),
            sizes: "any",
            kind: None,
        },
        None => ManifestIcon {
            src: assets::FAVICON_URL.to_string(),
            sizes: "any",
            kind: Some("image/svg+xml"),
        },
    };
    Manifest {
        name: format!("{} Status", p.name),
        short_name: p.name.chars().take(12).collect(),
        description: p.description.clone(),
        start_url: format!("/s/{}", p.slug),
        scope: format!("/s/{}", p.slug),
        display: "standalone",
        theme_color: p.accent_color.clone(),
        background_color: "#ffffff",
        icons: vec![icon],
    }
}

#[utoipa::path(get, path = "/api/manifest", tag = "feeds", operation_id = "manifest",
    summary = "The page's web app manifest", params(("page" = String, Query, description = "The page's slug")),
    responses((status = 200, body = Manifest, content_type = "application/manifest+json"), PublicErrors, BadQuery))]
async fn manifest(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let snap = queried_page(&state, &q, &headers, FieldErrors::new()).await?;
            let body = snap.body("manifest", |d| {
                let json = serde_json::to_vec(&manifest_of(d))
                    .map_err(|e| ApiError::Internal(e.to_string()))?;
                Ok(Body::typed(json, "application/manifest+json"))
            })?;
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct OverallStatus {
    page: String,
    status: ComponentStatus,
    status_label: &'static str,
    last_updated: Timestamp,
}

#[utoipa::path(get, path = "/api/v1/status", tag = "public", operation_id = "v1Status",
    summary = "The overall status of a page: ?page=, else the host's page (custom domain), else the default page",
    params(("page" = Option<String>, Query, description = "The page's slug")),
    responses((status = 200, body = Data<OverallStatus>), PublicErrors, BadQuery))]
async fn v1_status(State(state): State<AppState>, q: QueryParams, headers: Visitor) -> Response {
    public(
        async {
            let slug = match q.get("page") {
                Some(s) => s.to_string(),
                None => host_slug(&state, &headers).await?.ok_or_else(|| {
                    ApiError::validation(
                        "page",
                        "is required: no default page is configured (UPSTATE_DEFAULT_PAGE)",
                    )
                })?,
            };
            let snap = page(&state, &slug, &headers).await?;
            let body = snap.body("v1-status", |d| {
                let status = overall_status(&d.components, &d.incidents);
                Body::from_value(&Data {
                    data: OverallStatus {
                        page: d.page.slug.clone(),
                        status,
                        status_label: status_label(status),
                        last_updated: d.updated_at,
                    },
                })
            })?;
            Ok::<_, ApiError>(serve_page(&snap, &headers, &body))
        }
        .await,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::status_key;

    #[test]
    fn every_status_has_badge_words_and_a_ui_key() {
        for &s in ComponentStatus::ALL {
            let (message, color) = badge_words(s);
            assert!(!message.is_empty() && !color.is_empty());
            assert!(status_key(s).starts_with("status."));
        }
    }
}
