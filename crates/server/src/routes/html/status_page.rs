//! The status page in HTML: `/s/{slug}`, its incidents, maintenance windows
//! and monthly history, `/` for custom domains (or the default page), and the
//! page's static assets. Bodies come from the page snapshot, per language,
//! rebuilt at most every 30 s (relative times age) or at once on a change.
//! These are pages for people, not API operations, so they are not in the
//! OpenAPI document.

use crate::accept::weighted;
use crate::error::ApiError;
use crate::i18n::{Lang, Negotiate};
use crate::page_gate;
use crate::page_gate::Gate;
use crate::public_reads::{host_slug, limit_route, offered, serve, serve_page, visible_page};
use crate::security_headers;
use crate::snapshot::{Body, Snapshot};
use crate::state::AppState;
use crate::static_copy::StaticCopy;
use crate::views::{self, Members, View, assets};
use crate::visitor::Visitor;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use jiff::civil::Date;
use serde::Deserialize;
use upstate_core::{Id, Timestamp};
use upstate_store::public as store_public;

pub fn router(state: &AppState) -> Router<AppState> {
    let per_minute = state.settings.public_limits.page;
    Router::new()
        .route("/", limit_route(state, get(root), per_minute, "/"))
        .route(
            "/s/{slug}",
            limit_route(state, get(page), per_minute, "/s/{slug}"),
        )
        .route(
            "/s/{slug}/{kind}/{id}",
            limit_route(state, get(item), per_minute, "/s/{slug}/{kind}/{id}"),
        )
        .route(
            "/s/{slug}/history",
            limit_route(state, get(listing), per_minute, "/s/{slug}/history"),
        )
        .route(
            "/s/{slug}/components",
            limit_route(state, get(listing), per_minute, "/s/{slug}/components"),
        )
        .route(
            "/s/{slug}/custom.css",
            limit_route(state, get(custom_css), per_minute, "/s/{slug}/custom.css"),
        )
        .route("/assets/{name}", get(asset))
        .route("/sw.js", get(service_worker))
}

#[derive(Deserialize, Default)]
pub struct PageQuery {
    lang: Option<String>,
    /// Set by the password form's redirect after a failed attempt, or the
    /// viewer sign-in's after a stale link.
    error: Option<String>,
    /// Set by the viewer sign-in form's redirect: a link was asked for.
    sent: Option<String>,
    month: Option<String>,
    /// Which part of a month's history, or of the components (from 1).
    p: Option<String>,
    /// Which components: a group's id, or `none` for those in no group.
    group: Option<String>,
}

async fn root(
    State(state): State<AppState>,
    headers: Visitor,
    q: Query<PageQuery>,
    uri: Uri,
    copy: Option<Extension<StaticCopy>>,
) -> Response {
    match host_slug(&state, &headers).await {
        Ok(Some(slug)) => page(State(state), Path(slug), headers, q, uri, copy).await,
        // No page here: a person in a browser is most likely the operator
        // of a new install, who runs it from /admin.
        Ok(None)
            if weighted(&headers, header::ACCEPT).any(|(t, q)| t == "text/html" && q > 0.0) =>
        {
            axum::response::Redirect::to("/admin").into_response()
        }
        Ok(None) => {
            let e = ApiError::NotFound(
                "no status page is served at this host; pages live at /s/{slug}".into(),
            );
            fail(&headers, e)
        }
        Err(e) => fail(&headers, e),
    }
}

/// What an HTML route shows.
enum Kind {
    Page,
    Incident(Id),
    Maintenance(Id),
    /// A month (or the current one) and which part of it, from 0.
    History(Option<(i16, i8)>, i64),
    /// Components in full, a part (from 0) at a time.
    Components(Members, usize),
}

impl Kind {
    /// The page's canonical URL (the same body serves `/` on a custom domain).
    fn path(&self, slug: &str) -> String {
        match self {
            Kind::Page => format!("/s/{slug}"),
            Kind::Incident(id) => format!("/s/{slug}/incidents/{id}"),
            Kind::Maintenance(id) => format!("/s/{slug}/maintenance/{id}"),
            Kind::Components(which, part) => {
                let mut query = vec![which.query()];
                if *part > 0 {
                    query.push(format!("p={}", part + 1));
                }
                query.retain(|q| !q.is_empty());
                match query.is_empty() {
                    true => format!("/s/{slug}/components"),
                    false => format!("/s/{slug}/components?{}", query.join("&")),
                }
            }
            Kind::History(month, part) => {
                let mut query: Vec<String> = Vec::new();
                if let Some((y, m)) = month {
                    query.push(format!("month={y:04}-{m:02}"));
                }
                if *part > 0 {
                    query.push(format!("p={}", part + 1));
                }
                match query.is_empty() {
                    true => format!("/s/{slug}/history"),
                    false => format!("/s/{slug}/history?{}", query.join("&")),
                }
            }
        }
    }

    fn key(&self) -> String {
        match self {
            Kind::Page => "page".into(),
            Kind::Incident(id) => format!("incident:{id}"),
            Kind::Maintenance(id) => format!("maintenance:{id}"),
            Kind::History(None, part) => format!("history:{part}"),
            Kind::History(Some((y, m)), part) => format!("history:{y}-{m}:{part}"),
            Kind::Components(which, part) => format!("components:{}:{part}", which.query()),
        }
    }
}

async fn page(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
    Query(q): Query<PageQuery>,
    uri: Uri,
    copy: Option<Extension<StaticCopy>>,
) -> Response {
    render(&state, &slug, &headers, &q, &uri, Kind::Page, as_of(copy)).await
}

/// `/s/{slug}/incidents/{id}` and `/s/{slug}/maintenance/{id}`.
/// The page's own stylesheet (`customCss`), a file of its own so nothing in
/// it can reach the page's HTML or headers; behind the page's password like
/// the page.
async fn custom_css(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
) -> Response {
    let snap = match visible_page(&state, &slug).await {
        Ok(s) => s,
        Err(e) => return fail(&headers, e),
    };
    match page_gate::check(&snap.data, &headers) {
        Gate::Open => {}
        Gate::Locked => {
            return fail(
                &headers,
                ApiError::NotFound(format!("no public status page {slug:?}")),
            );
        }
        gate @ Gate::Network => {
            let refused = page_gate::refusal(gate, &snap.data, &headers);
            return fail(&headers, refused.unwrap_or(ApiError::Forbidden(slug)));
        }
    }
    match snap.body("custom.css", |d| {
        Ok(Body::typed(
            d.page.custom_css.clone().into_bytes(),
            "text/css; charset=utf-8",
        ))
    }) {
        Ok(body) => serve_page(&snap, &headers, &body),
        Err(e) => fail(&headers, e),
    }
}

async fn item(
    State(state): State<AppState>,
    Path((slug, kind, id)): Path<(String, String, String)>,
    headers: Visitor,
    Query(q): Query<PageQuery>,
    uri: Uri,
    copy: Option<Extension<StaticCopy>>,
) -> Response {
    let kind = match (kind.as_str(), id.parse::<Id>()) {
        ("incidents", Ok(id)) => Kind::Incident(id),
        ("maintenance", Ok(id)) => Kind::Maintenance(id),
        _ => {
            return fail(
                &headers,
                ApiError::NotFound(format!("nothing at {}", uri.path())),
            );
        }
    };
    render(&state, &slug, &headers, &q, &uri, kind, as_of(copy)).await
}

fn as_of(copy: Option<Extension<StaticCopy>>) -> Option<Timestamp> {
    copy.map(|Extension(c)| c.as_of)
}

/// `/s/{slug}/history` and `/s/{slug}/components`: pages chosen by their
/// query string, refused with the field named when it does not parse.
async fn listing(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    headers: Visitor,
    Query(q): Query<PageQuery>,
    uri: Uri,
    copy: Option<Extension<StaticCopy>>,
) -> Response {
    let kind = match uri.path().ends_with("/components") {
        true => components_kind(&q),
        false => history_kind(&q),
    };
    match kind {
        Ok(kind) => render(&state, &slug, &headers, &q, &uri, kind, as_of(copy)).await,
        Err(e) => fail(&headers, e),
    }
}

/// `?month=` and `?p=` of the history.
fn history_kind(q: &PageQuery) -> Result<Kind, ApiError> {
    let month = match q.month.as_deref().map(parse_month) {
        None => None,
        Some(Some(m)) => Some(m),
        Some(None) => {
            return Err(ApiError::validation(
                "month",
                "must be a month as YYYY-MM, from 2000-01",
            ));
        }
    };
    Ok(Kind::History(month, part_of(q)?))
}

/// `?group=` (an id, or `none`) and `?p=` of the components' parts, where
/// a folded group leads.
fn components_kind(q: &PageQuery) -> Result<Kind, ApiError> {
    let which = match q.group.as_deref() {
        None => Members::All,
        Some("none") => Members::Ungrouped,
        Some(id) => Members::Group(
            id.parse::<Id>()
                .map_err(|_| ApiError::validation("group", "must be a group's id, or none"))?,
        ),
    };
    Ok(Kind::Components(which, part_of(q)? as usize))
}

/// `?p=` from 1 as a part from 0.
fn part_of(q: &PageQuery) -> Result<i64, ApiError> {
    match q.p.as_deref().map(str::parse::<i64>) {
        None => Ok(0),
        Some(Ok(p)) if (1..=MAX_PART).contains(&p) => Ok(p - 1),
        Some(_) => Err(ApiError::validation(
            "p",
            format!("must be a whole number from 1 to {MAX_PART}"),
        )),
    }
}

/// The HTML of `kind`, or None when there is no such thing to show.
async fn build(
    state: &AppState,
    v: &View<'_>,
    snap: &Snapshot,
    kind: &Kind,
) -> Result<Option<String>, ApiError> {
    let d = &snap.data;
    Ok(match *kind {
        Kind::Page => Some(views::status_page(
            v,
            snap.history(&state.db).await?,
            &charts(state, v, snap).await?,
            state.sender.has_mailer(),
        )),
        Kind::Components(which, part) => views::components_part(
            v,
            snap.history(&state.db).await?,
            &charts(state, v, snap).await?,
            which,
            part,
        ),
        Kind::Incident(id) => {
            let found = match d.incidents.iter().find(|i| i.id == id) {
                Some(i) => Some(i.clone()),
                None => store_public::incident(&state.db, snap.page_id, id)
                    .await?
                    .and_then(|i| store_public::shown_without(i, &snap.hidden)),
            };
            match found {
                Some(i) => {
                    let comments = if d.features.comments {
                        Some(upstate_store::comments::shown(&state.db, id).await?)
                    } else {
                        None
                    };
                    Some(views::incident(
                        v,
                        &i,
                        snap.history(&state.db).await?,
                        comments.as_deref(),
                        state.sender.has_mailer(),
                    ))
                }
                None => None,
            }
        }
        Kind::Maintenance(id) => match d
            .maintenance
            .iter()
            .chain(&d.past_maintenance)
            .find(|m| m.id == id)
        {
            Some(m) => Some(views::maintenance(v, m)),
            None => store_public::maintenance(&state.db, snap.page_id, id)
                .await?
                .and_then(|m| store_public::shown_without(m, &snap.hidden))
                .map(|m| views::maintenance(v, &m)),
        },
        Kind::History(month, part) => month_history(state, v, snap, month, part).await?,
    })
}

/// Measurements move with every check: read with the page's timed body
/// (rebuilt at most every 30 s), not kept in the snapshot.
async fn charts(
    state: &AppState,
    v: &View<'_>,
    snap: &Snapshot,
) -> Result<Vec<(Id, upstate_store::monitor_stats::Series)>, ApiError> {
    if !snap.data.page.show_response_times {
        return Ok(Vec::new());
    }
    let since = v.now.plus_millis(-views::CHART_MS);
    Ok(upstate_store::monitor_stats::page_hours(&state.db, snap.page_id, since).await?)
}

async fn month_history(
    state: &AppState,
    v: &View<'_>,
    snap: &Snapshot,
    month: Option<(i16, i8)>,
    part: i64,
) -> Result<Option<String>, ApiError> {
    let today = v.zoned_now().date();
    let current = (today.year(), today.month());
    let month = month.unwrap_or(current);
    if month > current {
        return Ok(None);
    }
    let start = |(y, m): (i16, i8)| -> Result<Timestamp, ApiError> {
        let date = Date::new(y, m, 1).map_err(|e| ApiError::Internal(e.to_string()))?;
        let z = date
            .to_zoned(v.tz.clone())
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(Timestamp::from_millis(z.timestamp().as_millisecond()))
    };
    let mut h = store_public::history(
        &state.db,
        snap.page_id,
        (start(month)?, start(month_after(month))?),
        part,
    )
    .await?;
    if part > 0 && h.incidents.is_empty() && h.maintenance.is_empty() {
        return Ok(None);
    }
    h.incidents = store_public::keep_shown(h.incidents, &snap.hidden);
    h.maintenance = store_public::keep_shown(h.maintenance, &snap.hidden);
    let fmt = |(y, m): (i16, i8)| format!("{y:04}-{m:02}");
    let created = v
        .zoned(snap.data.page.created_at)
        .map(|z| (z.year(), z.month()))
        .unwrap_or(month);
    let prev = (month > created).then(|| fmt(month_before(month)));
    let next = (month < current).then(|| fmt(month_after(month)));
    let parts = views::Parts {
        month: fmt(month),
        part,
        more: h.more,
    };
    Ok(Some(views::history(v, month, &h, prev, next, &parts)))
}

/// The furthest part of a month's history asked for: a bound on what a
/// query string can make the server skip over.
const MAX_PART: i64 = 10_000;

/// `YYYY-MM` → (year, month).
fn parse_month(s: &str) -> Option<(i16, i8)> {
    let (y, m) = s.split_once('-')?;
    let (y, m) = (y.parse::<i16>().ok()?, m.parse::<i8>().ok()?);
    ((2000..=9998).contains(&y) && (1..=12).contains(&m) && s.len() == 7).then_some((y, m))
}

fn month_after((y, m): (i16, i8)) -> (i16, i8) {
    if m == 12 { (y + 1, 1) } else { (y, m + 1) }
}

fn month_before((y, m): (i16, i8)) -> (i16, i8) {
    if m == 1 { (y - 1, 12) } else { (y, m - 1) }
}

/// The common path of every HTML page: find the page, choose the language,
/// show the password form to visitors without the page's cookie, else serve
/// the cached body or build it.
async fn render(
    state: &AppState,
    slug: &str,
    headers: &Visitor,
    q: &PageQuery,
    uri: &Uri,
    kind: Kind,
    copy: Option<Timestamp>,
) -> Response {
    let snap = match visible_page(state, slug).await {
        Ok(s) => s,
        Err(e) => return fail(headers, e),
    };
    if matches!(kind, Kind::History(..))
        && let Err(e) = offered(snap.data.features.history, "history pages")
    {
        return fail(headers, e);
    }
    let lang = Lang::negotiate_or(
        q.lang.as_deref(),
        headers,
        snap.data.settings.default_language.as_deref(),
    );
    let gate = page_gate::check(&snap.data, headers);
    if let (Gate::Network, Some(refused)) = (gate, page_gate::refusal(gate, &snap.data, headers)) {
        return fail(headers, refused);
    }
    if gate == Gate::Locked {
        let error = match q.error.as_deref() {
            Some("throttled") => Some("password.throttled"),
            Some("expired") => Some("viewer.expired"),
            Some("sso") => Some("viewer.sso_refused"),
            Some(_) => Some("password.wrong"),
            None => None,
        };
        let next = uri.path_and_query().map_or("/", |p| p.as_str());
        // Read only for a page whose viewers may use it (not from memory:
        // the gate is never cached, and this is one small row).
        let sso = if snap.data.access.viewers && snap.data.access.viewer_sso {
            crate::sso::provider_for(state, Some(snap.page_id))
                .await
                .ok()
                .and_then(|(s, _)| s.offered_label())
        } else {
            None
        };
        let body = views::gate(
            &View::new(
                &snap.data,
                lang,
                snap.version,
                kind.path(slug),
                state.db.clock.now(),
            ),
            next,
            error,
            q.sent.is_some(),
            sso.as_deref(),
        );
        let mut res = (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            body,
        )
            .into_response();
        html_headers(&mut res);
        res.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return res;
    }
    let snap = crate::public_reads::seen_by(&snap, headers);
    // Links keep an explicit `?lang=`, so such a body is cached apart.
    let explicit = q.lang.as_deref().and_then(Lang::parse) == Some(lang);
    let key = format!("html:{}:{}:{}", kind.key(), lang.code(), u8::from(explicit));
    let make = || async {
        let view = View::new(
            &snap.data,
            lang,
            snap.version,
            kind.path(slug),
            state.db.clock.now(),
        )
        .keeping_lang(explicit)
        .copied_at(copy);
        Ok(build(state, &view, &snap, &kind)
            .await?
            .map(|html| Body::typed(html.into_bytes(), "text/html; charset=utf-8")))
    };
    // A copy's body is made once for the copy, never kept for visitors.
    let built = match copy {
        Some(_) => make().await.map(|b| b.map(std::sync::Arc::new)),
        None => snap.timed_or(key, make).await,
    };
    let body = match built {
        Ok(Some(body)) => body,
        Ok(None) => {
            return fail(
                headers,
                ApiError::NotFound(format!("nothing at {}", uri.path())),
            );
        }
        Err(e) => return fail(headers, e),
    };
    let mut res = serve_page(&snap, headers, &body);
    html_headers(&mut res);
    res
}

/// An error of an HTML route: a page for browsers (which ask for
/// `text/html`), the problem+json document for everything else.
fn fail(headers: &HeaderMap, e: ApiError) -> Response {
    let wants_html = weighted(headers, header::ACCEPT).any(|(t, q)| t == "text/html" && q > 0.0);
    if !wants_html {
        return e.into_response();
    }
    let (status, detail) = e.for_people();
    let lang = Lang::negotiate(None, headers);
    let body = views::error_page(lang, status.as_u16(), &detail);
    let mut res = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response();
    html_headers(&mut res);
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn html_headers(res: &mut Response) {
    let h = res.headers_mut();
    security_headers::html(h, security_headers::PAGE_CSP);
    let vary = match h.get(header::VARY).and_then(|v| v.to_str().ok()) {
        Some(v) if v.contains("Cookie") => "Accept-Encoding, Accept-Language, Cookie",
        _ => "Accept-Encoding, Accept-Language",
    };
    h.insert(header::VARY, HeaderValue::from_static(vary));
}

/// Revalidated on every registration check, so a new release's worker
/// replaces the old one.
async fn service_worker(headers: Visitor) -> Response {
    let mut res = serve(&headers, &assets::SERVICE_WORKER.body);
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("service-worker-allowed", HeaderValue::from_static("/"));
    res
}

async fn asset(Path(name): Path<String>, headers: Visitor, uri: Uri) -> Response {
    let Some(a) = assets::named(&name) else {
        return ApiError::NotFound(format!("no asset {name:?}")).into_response();
    };
    let mut res = serve(&headers, &a.body);
    // Only the URL with the current hash is immutable; others may change.
    if uri.query().is_some_and(|q| a.url.ends_with(q)) {
        res.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_parse_strictly_and_roll_over() {
        assert_eq!(parse_month("2026-11"), Some((2026, 11)));
        for bad in ["2026-13", "2026-1", "26-01", "1999-12", "2026-00", "x"] {
            assert_eq!(parse_month(bad), None, "{bad}");
        }
        assert_eq!(month_after((2026, 12)), (2027, 1));
        assert_eq!(month_before((2026, 1)), (2025, 12));
    }
}
