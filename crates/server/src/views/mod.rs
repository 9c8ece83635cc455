//! The public status page as server-rendered HTML (maud templates, escaped by
//! construction). Everything works without JavaScript; `assets/status.js`
//! only adds live updates, ageing relative times and arrow keys on the
//! uptime bars. No external fonts, scripts or stylesheets: two small assets
//! served by this binary.

pub mod admin;
pub mod assets;
pub mod chart;
mod detail;
mod gate;
mod notice;
mod page;
mod refusal;

pub use detail::{Parts, history, incident, maintenance};
pub use gate::{confirm_sign_in, gate, viewer_links};
pub use notice::notice_page;
pub use page::{CHART_MS, Members, components_part, status_page};

use crate::i18n::{LANGS, Lang};
use jiff::tz::TimeZone;
use maud::{DOCTYPE, Markup, html};
use upstate_core::{ComponentStatus, Timestamp};
use upstate_store::public::PageData;

/// What every template needs: the page, the language, the clock and the zone.
pub struct View<'a> {
    pub d: &'a PageData,
    pub lang: Lang,
    pub now: Timestamp,
    pub tz: TimeZone,
    /// The snapshot version rendered, which live updates compare against.
    pub version: u64,
    /// This page's own URL (without `lang`), for the language links.
    pub here: String,
    /// The visitor chose the language with `?lang=`: links to the page's
    /// other pages keep it (their browser may prefer another).
    pub explicit_lang: bool,
    /// Rendered for the static copy, as of this time: it says so, and
    /// offers nothing that needs the live service (forms, live updates).
    pub copy: Option<Timestamp>,
}

impl<'a> View<'a> {
    /// `now` is the clock's (tests move it), not the wall's.
    pub fn new(
        d: &'a PageData,
        lang: Lang,
        version: u64,
        here: String,
        now: Timestamp,
    ) -> View<'a> {
        let tz = TimeZone::get(&d.page.time_zone).unwrap_or(TimeZone::UTC);
        View {
            d,
            lang,
            now,
            tz,
            version,
            here,
            explicit_lang: false,
            copy: None,
        }
    }

    /// The same view, for the static copy made at `as_of` (None: live).
    pub fn copied_at(mut self, as_of: Option<Timestamp>) -> View<'a> {
        self.copy = as_of;
        self
    }

    /// The same view, its links keeping `?lang=` when `explicit`.
    pub fn keeping_lang(mut self, explicit: bool) -> View<'a> {
        self.explicit_lang = explicit;
        self
    }

    /// This page in another language.
    fn in_lang(&self, l: Lang) -> String {
        let sep = if self.here.contains('?') { '&' } else { '?' };
        format!("{}{sep}lang={}", self.here, l.code())
    }

    pub fn t(&self, key: &'static str) -> &'static str {
        self.lang.t(key)
    }

    /// Where this page lives (`/s/{slug}`); custom domains serve the same bodies.
    pub fn base(&self) -> String {
        format!("/s/{}", self.d.page.slug)
    }

    /// A link to `path` under the page that keeps an explicit `?lang=`.
    pub fn href(&self, path: &str) -> String {
        if self.explicit_lang {
            let sep = if path.contains('?') { '&' } else { '?' };
            format!("{}{path}{sep}lang={}", self.base(), self.lang.code())
        } else {
            format!("{}{path}", self.base())
        }
    }

    pub fn zoned(&self, at: Timestamp) -> Option<jiff::Zoned> {
        jiff::Timestamp::from_millisecond(at.millis())
            .ok()
            .map(|t| t.to_zoned(self.tz.clone()))
    }

    pub fn zoned_now(&self) -> jiff::Zoned {
        self.zoned(self.now)
            .unwrap_or_else(|| jiff::Timestamp::now().to_zoned(self.tz.clone()))
    }

    /// An instant in the page's zone, e.g. `2026-11-22 14:05 CET`.
    pub fn absolute(&self, at: Timestamp) -> String {
        self.zoned(at)
            .map(|z| z.strftime("%Y-%m-%d %H:%M %Z").to_string())
            .unwrap_or_else(|| at.to_rfc3339())
    }

    /// `{month name} {year}` of a `YYYY-MM` month.
    pub fn month_title(&self, year: i16, month: i8) -> String {
        let name = self.lang.t(MONTH_KEYS[(month.clamp(1, 12) - 1) as usize]);
        if self.lang == Lang::Ja {
            format!("{year}年{name}")
        } else {
            format!("{name} {year}")
        }
    }

    /// A day as people write it in this language ("November 24, 2026",
    /// "24. November 2026", "2026年11月24日").
    pub fn day_title(&self, date: jiff::civil::Date) -> String {
        let month = self
            .lang
            .t(MONTH_KEYS[(date.month().clamp(1, 12) - 1) as usize]);
        self.t("date.day")
            .replace("{month}", month)
            .replace("{day}", &date.day().to_string())
            .replace("{year}", &date.year().to_string())
    }

    /// A span of time in its two largest units ("2 h 5 min", "3 d 4 h");
    /// under a minute counts as one.
    pub fn duration(&self, ms: i64) -> String {
        self.lang.duration(ms)
    }

    /// "5 min ago", "in 2 h", from the dictionaries.
    pub fn relative(&self, at: Timestamp) -> String {
        let diff = (self.now.millis() - at.millis()) / 60_000;
        let (past, m) = (diff >= 0, diff.abs());
        let (key, n) = match m {
            0 => return self.t("rel.now").to_string(),
            1..=59 => (
                if past {
                    "rel.minutes_ago"
                } else {
                    "rel.in_minutes"
                },
                m,
            ),
            60..=2879 => (
                if past {
                    "rel.hours_ago"
                } else {
                    "rel.in_hours"
                },
                m / 60,
            ),
            _ => (if past { "rel.days_ago" } else { "rel.in_days" }, m / 1440),
        };
        self.lang.tn(key, n)
    }

    /// An instant as the page shows it: absolute in the page's zone, then
    /// relative (kept current by the script).
    pub fn when(&self, at: Timestamp) -> Markup {
        html! {
            time datetime=(at.to_rfc3339()) { (self.absolute(at)) }
            " "
            span.rel data-at=(at.to_rfc3339()) { "(" (self.relative(at)) ")" }
        }
    }
}

const MONTH_KEYS: [&str; 12] = [
    "month.1", "month.2", "month.3", "month.4", "month.5", "month.6", "month.7", "month.8",
    "month.9", "month.10", "month.11", "month.12",
];

/// The CSS class of a status: colour is never the only signal, each use also
/// prints the status's name and a distinct symbol.
pub fn status_class(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "s-ok",
        ComponentStatus::Degraded => "s-degraded",
        ComponentStatus::PartialOutage => "s-partial",
        ComponentStatus::MajorOutage => "s-major",
        ComponentStatus::Maintenance => "s-maint",
    }
}

pub fn status_symbol(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "✓",
        ComponentStatus::Degraded => "!",
        ComponentStatus::PartialOutage => "◐",
        ComponentStatus::MajorOutage => "✕",
        ComponentStatus::Maintenance => "⚙",
    }
}

pub fn status_key(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "status.operational",
        ComponentStatus::Degraded => "status.degraded",
        ComponentStatus::PartialOutage => "status.partial_outage",
        ComponentStatus::MajorOutage => "status.major_outage",
        ComponentStatus::Maintenance => "status.maintenance",
    }
}

pub fn overall_key(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "overall.operational",
        ComponentStatus::Degraded => "overall.degraded",
        ComponentStatus::PartialOutage => "overall.partial_outage",
        ComponentStatus::MajorOutage => "overall.major_outage",
        ComponentStatus::Maintenance => "overall.maintenance",
    }
}

/// A status as a badge: symbol (hidden from screen readers) and name.
pub fn status_badge(v: &View, s: ComponentStatus) -> Markup {
    html! {
        span class={ "st " (status_class(s)) } data-status=(s.as_str()) {
            span.sym aria-hidden="true" { (status_symbol(s)) } " " (v.t(status_key(s)))
        }
    }
}

/// A short fingerprint of `text`, so a changed stylesheet gets a new URL
/// (and old copies in caches stop mattering).
fn content_hash(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The document around every public page: head, header, footer.
pub fn layout(v: &View, title: &str, main: Markup) -> String {
    document(v, title, main, true)
}

/// The footer's links: only to the features this install offers.
fn footer_links<'a>(v: &'a View) -> Vec<(String, &'a str)> {
    let f = &v.d.features;
    let slug = &v.d.page.slug;
    let mut links = Vec::new();
    if f.history {
        links.push((v.href("/history"), v.t("nav.history")));
    }
    if f.feeds {
        links.push((format!("/api/feed/rss?page={slug}"), v.t("nav.rss")));
        links.push((
            format!("/api/feed/rss?format=atom&page={slug}"),
            v.t("nav.atom"),
        ));
    }
    if f.calendar {
        links.push((format!("/api/calendar?page={slug}"), v.t("nav.calendar")));
    }
    // A viewer's apps need links with their own key (the cookie stays in
    // the browser).
    if v.d.access.viewers && !v.d.page.is_public {
        links.push((
            format!("/api/viewer-links?page={slug}"),
            v.t("nav.viewer_links"),
        ));
    }
    links
}

/// `content` false: the bare frame of the password gate, which shows the
/// page's name and nothing else of it (no description, logo or feed links).
fn document(v: &View, title: &str, main: Markup, content: bool) -> String {
    let p = &v.d.page;
    let slug = &p.slug;
    let doc = html! {
        (DOCTYPE)
        html lang=(v.lang.code()) dir=[v.lang.rtl_dir()] {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) }
                @if content && !p.description.is_empty() { meta name="description" content=(p.description); }
                link rel="icon" href=(p.favicon_url.as_deref().unwrap_or(assets::FAVICON_URL));
                @if content {
                    // A private page's manifest needs the page cookie, which
                    // manifest fetches only send when asked to.
                    link rel="manifest" href={ "/api/manifest?page=" (slug) }
                        crossorigin=[v.d.gated().then_some("use-credentials")];
                    @if v.d.features.feeds {
                        link rel="alternate" type="application/rss+xml" title=(v.t("nav.rss")) href={ "/api/feed/rss?page=" (slug) };
                        link rel="alternate" type="application/atom+xml" title=(v.t("nav.atom")) href={ "/api/feed/rss?format=atom&page=" (slug) };
                    }
                }
                link rel="stylesheet" href=(assets::css_url());
                meta name="theme-color" content=(p.accent_color);
                style { ":root{--accent:" (p.accent_color) "}" }
                // Last, so the operator's rules win over ours.
                @if content && !p.custom_css.is_empty() {
                    link rel="stylesheet" href={ (v.base()) "/custom.css?v=" (content_hash(&p.custom_css)) };
                }
                script src=(assets::js_url()) defer {}
            }
            body data-events=[(content && v.d.features.live_updates && v.copy.is_none()).then(|| format!("/api/public/status/{slug}/events"))] {
                a.skip href="#main" { (v.t("nav.skip")) }
                header.top {
                    @if let Some(as_of) = v.copy {
                        p.copy-note role="note" {
                            (v.t("copy.as_of").replace("{time}", &v.absolute(as_of)))
                        }
                    }
                    @if let Some(img) = p.header_image_url.as_ref().filter(|_| content) {
                        img.hero src=(img) alt="";
                    }
                    div.wrap {
                        // The page's name is the document's one heading of
                        // the first rank (every section below is an h2).
                        h1.brand-h {
                            a.brand href=(v.href("")) {
                                @if let Some(logo) = p.logo_url.as_ref().filter(|_| content) {
                                    img src=(logo) alt=(p.name) height="40";
                                } @else {
                                    span.name { (p.name) }
                                }
                            }
                        }
                        @if content && !p.description.is_empty() { p.desc { (p.description) } }
                    }
                }
                main #main .wrap { (main) }
                footer.wrap {
                    @let links = footer_links(v);
                    @if content && !links.is_empty() { p {
                        @for (i, (href, label)) in links.iter().enumerate() {
                            @if i > 0 { " · " }
                            a href=(href) { (label) }
                        }
                    } }
                    nav aria-label=(v.t("nav.language")) {
                        ul.langs {
                            @for l in LANGS {
                                li {
                                    a href=(v.in_lang(l)) lang=(l.code()) hreflang=(l.code())
                                        aria-current=[(l == v.lang).then_some("true")] { (l.name()) }
                                }
                            }
                        }
                    }
                    p.powered { (v.t("footer.powered")) }
                }
            }
        }
    };
    doc.into_string()
}

/// What a person sees when an HTML route fails: the error in their language,
/// with the technical detail below it. No page data: the page may not exist.
pub fn error_page(lang: Lang, status: u16, detail: &str) -> String {
    let key = match status {
        404 => "error.not_found",
        400 | 422 => "error.invalid",
        403 => "error.forbidden",
        410 => "viewer.expired",
        _ => "error.other",
    };
    html! {
        (DOCTYPE)
        html lang=(lang.code()) dir=[lang.rtl_dir()] {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (status) " · " (lang.t(key)) }
                link rel="icon" href=(assets::FAVICON_URL);
                link rel="stylesheet" href=(assets::css_url());
            }
            body {
                main #main .wrap {
                    h1 { (lang.t(key)) }
                    p.meta { (status) " · " (detail) }
                }
            }
        }
    }
    .into_string()
}

/// Markdown written by operators, as HTML safe to put in a page: rendered
/// by pulldown-cmark, then cleaned by ammonia (no scripts, no event
/// handlers, no styles; links get `rel="noopener noreferrer"`). HTML typed
/// into the text is shown as the text it is: `point DNS to <your-lb-host>`
/// keeps its words, and `<script>` is visible, never run.
pub fn markdown(text: &str) -> maud::PreEscaped<String> {
    maud::PreEscaped(upstate_core::markdown::to_html(text))
}

/// A timeline message's Markdown: as `markdown`, but a line break the
/// operator typed stays a line break (status updates are written as lines,
/// not as paragraphs).
pub fn message_markdown(text: &str) -> maud::PreEscaped<String> {
    maud::PreEscaped(upstate_core::markdown::lines_to_html(text))
}
