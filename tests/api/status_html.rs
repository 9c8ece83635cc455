//! The public status page in HTML, over HTTP: sections, languages, detail
//! and history pages, custom domains, the live event stream.

use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

on_both_backends!(page_renders_every_section_escaped_and_light);
on_both_backends!(page_speaks_the_visitors_language);
on_both_backends!(incident_maintenance_and_history_pages);
on_both_backends!(a_busy_month_is_shown_in_parts);
on_both_backends!(a_large_page_folds_its_groups);
on_both_backends!(custom_domains_and_the_default_page);
on_both_backends!(event_stream_reports_a_change_within_a_second);
on_both_backends!(a_server_stopping_ends_only_its_own_event_streams);

pub struct Html {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Html {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub async fn fetch(s: &Server, path: &str, headers: &[(&str, &str)]) -> Html {
    let mut req = reqwest::Client::new().get(format!("{}{path}", s.base));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("request");
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    Html {
        status,
        headers,
        text: r.text().await.expect("body"),
    }
}

/// A page with something in every section; returns (page id, ids).
pub async fn seeded(s: &Server) -> (i64, Value) {
    let p = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Acme", "slug": "acme", "description": "Acme's services", "timeZone": "Asia/Tokyo",
                   "logoUrl": "https://cdn.example.com/acme.png", "accentColor": "#aa3300", "uptimeDays": 30}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let g = s.group(p, "Core services").await;
    let api = s
        .post(
            "/api/v1/components",
            json!({"name": "Public API", "statusPageId": p, "groupId": g, "description": "REST and GraphQL"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let web = s
        .post(
            "/api/v1/components",
            json!({"name": "Website", "statusPageId": p, "status": "degraded"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Errors <script>alert(1)</script>", "statusPageId": p, "impact": "major",
                   "message": "We are looking into elevated errors", "componentIds": [api]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Fix deployed, watching", "status": "monitoring"}),
    )
    .await
    .data(201);
    let m = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Database upgrade", "description": "Postgres 17", "statusPageId": p,
                   "scheduledStartTime": "2099-03-01T02:00:00.000Z", "scheduledEndTime": "2099-03-01T04:00:00.000Z", "componentIds": [web]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    (
        p,
        json!({"group": g, "api": api, "web": web, "incident": inc, "maintenance": m}),
    )
}

/// Adds a quick link through the admin application routes.
pub async fn quick_link(s: &Server, page: i64, label: &str, url: &str) -> Value {
    s.db.user("links@example.com", "admin");
    let b = Browser::signed_in(s, "links@example.com").await;
    let (status, body, _) = b
        .send(
            Method::POST,
            "/api/quicklinks",
            Some(json!({"statusPageId": page, "label": label, "url": url})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    body["data"].clone()
}

/// A body's size as it goes over the wire: the brotli bytes a browser receives.
async fn compressed_size(s: &Server, path: &str) -> usize {
    let url = format!("{}{path}", s.base);
    let r = reqwest::Client::new()
        .get(url)
        .header("accept-encoding", "br")
        .send()
        .await
        .expect("request");
    assert_eq!(r.headers()["content-encoding"], "br");
    r.bytes().await.expect("body").len()
}

async fn page_renders_every_section_escaped_and_light(b: Backend) {
    let s = Server::start(b).await;
    let (p, ids) = seeded(&s).await;
    quick_link(&s, p, "Support desk", "https://support.example.com/").await;

    let r = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
    assert!(
        r.header("content-security-policy")
            .contains("script-src 'self'")
    );
    assert!(r.header("etag").starts_with('"'));
    let h = &r.text;
    // Banner: the worst of components and open incidents (major impact → partial outage), in words.
    assert!(
        h.contains(r#"class="banner s-partial""#) && h.contains("Partial System Outage"),
        "banner"
    );
    // Logo, accent colour, description, title.
    assert!(h.contains(r#"<img src="https://cdn.example.com/acme.png" alt="Acme""#));
    assert!(h.contains("--accent:#aa3300") && h.contains(r#"<p class="desc">Acme's services</p>"#));
    assert!(h.contains("<title>Acme Status</title>"));
    assert!(
        h.contains(r#"<link rel="icon" href="/assets/favicon.svg">"#),
        "the default icon"
    );
    // Times: in the page's zone and relative (the script keeps the latter current).
    assert!(h.contains(r#"<span class="rel" data-at=""#) && h.contains("(just now)"));
    // The incident, escaped, with its timeline (newest first) and affected component.
    assert!(
        h.contains("Errors &lt;script&gt;alert(1)&lt;/script&gt;")
            && !h.contains("<script>alert(1)")
    );
    let (newer, older) = (
        h.find("Fix deployed, watching").unwrap(),
        h.find("We are looking into elevated").unwrap(),
    );
    assert!(newer < older, "newest update first");
    assert!(h.contains("Major impact") && h.contains("Affected: Public API"));
    // Maintenance, in the page's zone (Tokyo, UTC+9).
    assert!(
        h.contains("Database upgrade") && h.contains("2099-03-01 11:00 JST"),
        "maintenance in Asia/Tokyo"
    );
    // Components in their group (collapsible), with status words and symbols.
    assert!(h.contains(r#"<details class="group" open"#) && h.contains("Core services"));
    assert!(h.contains("Public API") && h.contains("REST and GraphQL"));
    assert!(h.contains(r#"data-status="degraded"><span class="sym" aria-hidden="true">!</span> Degraded Performance"#));
    // Uptime bars: uptimeDays cells per component, each focusable with its tooltip text.
    assert_eq!(h.matches(r#"<li class="cell "#).count(), 2 * 30);
    assert_eq!(
        h.matches(r#"tabindex="0"><span class="tip">"#).count(),
        2 * 30
    );
    assert!(
        h.contains("Errors &lt;script&gt;alert(1)&lt;/script&gt;</span>"),
        "today's tooltip names the incident"
    );
    // Quick links, feeds, history, languages.
    assert!(
        h.contains(r#"<a href="https://support.example.com/" rel="noopener">Support desk</a>"#)
    );
    assert!(
        h.contains(r#"href="/s/acme/history""#) && h.contains(r#"href="/api/feed/rss?page=acme""#)
    );
    assert!(h.contains(r#"href="/api/calendar?page=acme""#) && h.contains(r#"hreflang="ja""#));
    assert!(h.contains(&format!(r#"data-incident="{}""#, ids["incident"])));
    // Nothing from elsewhere but the operator's logo: no external scripts, styles or fonts.
    for tag in [
        "<script src=\"http",
        "<link rel=\"stylesheet\" href=\"http",
        "@import",
        "fonts.googleapis",
    ] {
        assert!(!h.contains(tag), "external {tag}");
    }
    // Light: the page and its assets well under 100 KB over the wire.
    let css = h
        .split(r#"<link rel="stylesheet" href=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let js = h
        .split(r#"<script src=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let total = compressed_size(&s, "/s/acme").await
        + compressed_size(&s, &css).await
        + compressed_size(&s, &js).await;
    assert!(total < 100_000, "{total} bytes");
    let asset = fetch(&s, &css, &[]).await;
    assert_eq!(asset.header("content-type"), "text/css; charset=utf-8");
    assert_eq!(
        asset.header("cache-control"),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(fetch(&s, "/assets/nope.css", &[]).await.status, 404);

    // A write shows at once (the snapshot is rebuilt), and 304 for an unchanged page.
    let etag = r.header("etag").to_string();
    let again = fetch(&s, "/s/acme", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, 304);
    s.patch(
        &format!("/api/v1/components/{}/status", ids["web"]),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let after = fetch(&s, "/s/acme", &[("if-none-match", &etag)]).await;
    assert_eq!(after.status, 200);
    assert!(after.text.contains("Major System Outage"));

    // The page's own favicon replaces the default one.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"faviconUrl": "https://cdn.example.com/icon.png"}),
    )
    .await
    .data(200);
    let h = fetch(&s, "/s/acme", &[]).await.text;
    assert!(h.contains(r#"<link rel="icon" href="https://cdn.example.com/icon.png">"#));

    // Group order is respected; without showUptime there are no bars.
    let edge = s.group(p, "Edge network").await;
    s.post(
        "/api/v1/components",
        json!({"name": "CDN", "statusPageId": p, "groupId": edge}),
    )
    .await
    .data(201);
    let h = fetch(&s, "/s/acme", &[]).await.text;
    assert!(h.find("Core services").unwrap() < h.find("Edge network").unwrap());
    s.patch(
        &format!("/api/v1/component-groups/{edge}"),
        json!({"order": 0}),
    )
    .await
    .data(200);
    s.patch(
        &format!("/api/v1/component-groups/{}", ids["group"]),
        json!({"order": 1}),
    )
    .await
    .data(200);
    let h = fetch(&s, "/s/acme", &[]).await.text;
    assert!(
        h.find("Edge network").unwrap() < h.find("Core services").unwrap(),
        "groups by their order"
    );
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"showUptime": false}),
    )
    .await
    .data(200);
    let h = fetch(&s, "/s/acme", &[]).await.text;
    assert!(!h.contains(r#"class="bar""#) && h.contains("CDN"));

    // Unknown and private pages are not shown. Browsers get a page saying so
    // in their language; other clients the problem document.
    let nope = fetch(&s, "/s/nope", &[]).await;
    assert_eq!(
        (nope.status, nope.header("content-type")),
        (404, "application/problem+json")
    );
    let browser = [
        ("accept", "text/html,application/xhtml+xml;q=0.9"),
        ("accept-language", "de"),
    ];
    let nope = fetch(&s, "/s/nope", &browser).await;
    assert_eq!(
        (nope.status, nope.header("content-type")),
        (404, "text/html; charset=utf-8")
    );
    assert!(
        nope.text.contains("Unter dieser Adresse gibt es nichts.")
            && nope.text.contains("no public status page")
    );
    let bad = fetch(&s, "/s/acme/history?month=13", &browser).await;
    assert!(
        bad.status == 422
            && bad.text.contains("Diese Adresse ist ungültig.")
            && bad.text.contains("month: must be")
    );
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    let hidden = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(hidden.status, 404);
    assert!(!hidden.text.contains("Public API"));
}

async fn page_speaks_the_visitors_language(b: Backend) {
    let s = Server::start(b).await;
    seeded(&s).await;
    let de = fetch(&s, "/s/acme?lang=de", &[]).await;
    assert!(
        de.text.contains(r#"<html lang="de">"#) && de.text.contains("Teilweiser Systemausfall")
    );
    assert!(de.text.contains("Aktuelle Störungen") && de.text.contains("Eingeschränkte Leistung"));
    let ja = fetch(
        &s,
        "/s/acme",
        &[("accept-language", "ja-JP,ja;q=0.9,en;q=0.5")],
    )
    .await;
    assert!(
        ja.text.contains(r#"<html lang="ja">"#)
            && ja.text.contains("一部のシステムで障害が発生しています")
    );
    assert_eq!(ja.header("vary"), "Accept-Encoding, Accept-Language");
    for (lang, word) in [
        ("fr", "Composants"),
        ("es", "Componentes"),
        ("en", "Components"),
    ] {
        let r = fetch(&s, &format!("/s/acme?lang={lang}"), &[]).await;
        assert!(r.text.contains(word), "{lang}");
    }
    // An unknown language falls back to English rather than failing.
    let xx = fetch(&s, "/s/acme?lang=xx", &[("accept-language", "tlh")]).await;
    assert!(xx.status == 200 && xx.text.contains(r#"<html lang="en">"#));
}

async fn incident_maintenance_and_history_pages(b: Backend) {
    let s = Server::start(b).await;
    let (_, ids) = seeded(&s).await;
    let inc = ids["incident"].as_i64().unwrap();
    let r = fetch(&s, &format!("/s/acme/incidents/{inc}"), &[]).await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("Fix deployed, watching") && r.text.contains(r#"href="/s/acme""#));
    let m = ids["maintenance"].as_i64().unwrap();
    let r = fetch(&s, &format!("/s/acme/maintenance/{m}"), &[]).await;
    assert!(r.status == 200 && r.text.contains("Postgres 17") && r.text.contains("Scheduled"));

    // Another page's incident is not found through this page; neither is a made-up one.
    let other = s.page("other").await;
    let foreign = s.incident(other, "Elsewhere").await["id"].as_i64().unwrap();
    assert_eq!(
        fetch(&s, &format!("/s/acme/incidents/{foreign}"), &[])
            .await
            .status,
        404
    );
    assert_eq!(fetch(&s, "/s/acme/incidents/999999", &[]).await.status, 404);
    let bad = fetch(&s, "/s/acme/incidents/abc", &[]).await;
    assert_eq!(
        (bad.status, bad.header("content-type")),
        (404, "application/problem+json")
    );
    assert_eq!(fetch(&s, "/s/acme/nothing/1", &[]).await.status, 404);

    // History: this month lists the incident and the resolved one; pagination links.
    s.post(
        &format!("/api/v1/incidents/{inc}/resolve"),
        json!({"message": "All good"}),
    )
    .await
    .data(200);
    let now =
        time::OffsetDateTime::now_utc().to_offset(time::UtcOffset::from_hms(9, 0, 0).unwrap());
    let month = format!("{:04}-{:02}", now.year(), u8::from(now.month()));
    for path in [
        "/s/acme/history".to_string(),
        format!("/s/acme/history?month={month}"),
    ] {
        let r = fetch(&s, &path, &[]).await;
        assert_eq!(r.status, 200, "{path}");
        assert!(
            r.text.contains(&format!(r#"data-incident="{inc}""#)) && r.text.contains("Resolved"),
            "{path}"
        );
        assert!(
            !r.text.contains(r#"rel="next""#),
            "no months after the current one"
        );
    }
    let r = fetch(&s, "/s/acme/history?month=2099-01", &[]).await;
    assert_eq!(r.status, 404, "a future month");
    let r = fetch(&s, "/s/acme/history?month=2026-13", &[]).await;
    assert_eq!(r.status, 422);
    let body: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(body["errors"][0]["field"], "month");
    // Maintenance of the month it starts in.
    let r = fetch(&s, "/s/acme/history?month=2026-10", &[]).await;
    assert!(r.status == 200 && !r.text.contains(&format!(r#"data-incident="{inc}""#)));
    assert!(r.text.contains("Nothing was reported this month."));
    assert!(
        r.text
            .contains(r#"href="/s/acme/history?month=2026-10&amp;lang=de""#),
        "language links keep the month"
    );
}

/// A month's history shows at most 50 incidents a part, newest first, with
/// a link to the part before; a part past the end is not found, and a part
/// that is not a number from 1 is refused with the field named.
async fn a_busy_month_is_shown_in_parts(b: Backend) {
    let s = Server::start(b).await;
    let (p, _) = seeded(&s).await;
    let mut made = Vec::new();
    for n in 0..52 {
        made.push(
            s.incident(p, &format!("Busy {n}")).await["id"]
                .as_i64()
                .unwrap(),
        );
    }
    let shown = |html: &str| -> Vec<i64> {
        html.split(r#"data-incident=""#)
            .skip(1)
            .filter_map(|t| t.split('"').next()?.parse().ok())
            .collect()
    };
    let first = fetch(&s, "/s/acme/history", &[]).await;
    assert_eq!(first.status, 200);
    let ids = shown(&first.text);
    // The seeded incident of this month is older than the 52.
    let newest: Vec<i64> = made.iter().rev().take(50).copied().collect();
    assert_eq!(ids, newest, "the newest 50, newest first");
    let link = first
        .text
        .split(r#"<a rel="next" href=""#)
        .nth(1)
        .and_then(|t| t.split('"').next())
        .expect("a link to the earlier part")
        .replace("&amp;", "&");
    assert!(link.ends_with("&p=2"), "{link}");
    assert!(first.text.contains("Earlier this month"));
    let second = fetch(&s, &link, &[]).await;
    assert_eq!(second.status, 200);
    let rest = shown(&second.text);
    assert_eq!(&rest[..2], &[made[1], made[0]], "the two older ones follow");
    assert!(rest.len() <= 50 && !rest.iter().any(|i| ids.contains(i)));
    assert!(
        second.text.contains("Later this month") && !second.text.contains("Earlier this month")
    );
    let past_end = link.replace("p=2", "p=3");
    assert_eq!(fetch(&s, &past_end, &[]).await.status, 404);
    for bad in ["0", "abc", "-1", "10001"] {
        let r = fetch(&s, &format!("/s/acme/history?p={bad}"), &[]).await;
        assert_eq!(r.status, 422, "p={bad}");
        let body: Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(body["errors"][0]["field"], "p", "p={bad}");
    }
}

/// Above 100 components a page shows each group (and more than 100
/// ungrouped components) as one row with one bar, its members that are not
/// operational under it, and a link to the members in full, 100 a part.
async fn a_large_page_folds_its_groups(b: Backend) {
    // 121 components are more writes than a key may make in a minute.
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_API_RATE_PER_MINUTE", "0"),
            ("UPSTATE_API_RATE_PER_HOUR", "0"),
        ],
    )
    .await;
    let p = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Acme", "slug": "acme", "uptimeDays": 30}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let g = s.group(p, "Edge").await;
    let mut edge = Vec::new();
    for n in 0..20 {
        let r = s
            .post(
                "/api/v1/components",
                json!({"name": format!("Edge {n}"), "statusPageId": p, "groupId": g}),
            )
            .await;
        edge.push(r.data(201)["id"].as_i64().unwrap());
    }
    let mut regions = Vec::new();
    for n in 0..101 {
        regions.push(s.component(p, &format!("Region {n}")).await);
    }
    s.patch(
        &format!("/api/v1/components/{}", edge[3]),
        json!({"status": "partial_outage"}),
    )
    .await
    .data(200);
    let rows = |html: &str| html.matches(r#"<li class="comp" data-component=""#).count();
    let cells = |html: &str| html.matches(r#"<li class="cell "#).count();
    let main = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(main.status, 200);
    assert_eq!(rows(&main.text), 0, "no component in full on the main page");
    assert_eq!(main.text.matches(r#"class="comp group-row""#).count(), 2);
    assert_eq!(cells(&main.text), 2 * 30, "one bar per folded row");
    assert!(
        main.text
            .contains(&format!(r#"href="/s/acme/components?group={g}""#))
    );
    assert!(
        main.text
            .contains(r#"href="/s/acme/components?group=none""#)
    );
    assert!(main.text.contains("Other components") && main.text.contains("101 components"));
    // The member that is not operational is named, with its status.
    let brief = format!(r#"<li class="comp brief" data-component="{}""#, edge[3]);
    assert!(main.text.contains(&brief));
    assert_eq!(main.text.matches(r#"class="comp brief""#).count(), 1);

    let group = fetch(&s, &format!("/s/acme/components?group={g}"), &[]).await;
    assert_eq!((group.status, rows(&group.text)), (200, 20));
    assert_eq!(cells(&group.text), 20 * 30);
    assert!(group.text.contains("<h2>Edge") && !group.text.contains(r#"rel="next""#));
    let other = fetch(&s, "/s/acme/components?group=none", &[]).await;
    assert_eq!((other.status, rows(&other.text)), (200, 100));
    assert!(
        other
            .text
            .contains(r#"href="/s/acme/components?group=none&amp;p=2""#)
    );
    let rest = fetch(&s, "/s/acme/components?group=none&p=2", &[]).await;
    assert_eq!((rest.status, rows(&rest.text)), (200, 1));
    assert!(rest.text.contains("Region 100") && rest.text.contains("Previous components"));
    // Every component, in the page's order: the group's first.
    let all = fetch(&s, "/s/acme/components", &[]).await;
    assert_eq!((all.status, rows(&all.text)), (200, 100));
    let first = all.text.find("Edge 0").unwrap();
    assert!(first < all.text.find("Region 0").unwrap());
    let all2 = fetch(&s, "/s/acme/components?p=2", &[]).await;
    assert_eq!((all2.status, rows(&all2.text)), (200, 21));

    assert_eq!(fetch(&s, "/s/acme/components?p=3", &[]).await.status, 404);
    assert_eq!(
        fetch(&s, "/s/acme/components?group=999999", &[])
            .await
            .status,
        404
    );
    for (q, field) in [
        ("group=abc", "group"),
        ("p=0", "p"),
        ("group=none&p=x", "p"),
    ] {
        let r = fetch(&s, &format!("/s/acme/components?{q}"), &[]).await;
        assert_eq!(r.status, 422, "{q}");
        let body: Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(body["errors"][0]["field"], field, "{q}");
    }

    // At 100 components, every one in full again, groups open.
    for id in &regions[80..] {
        assert_eq!(
            s.delete(&format!("/api/v1/components/{id}")).await.status,
            200
        );
    }
    let main = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(rows(&main.text), 100);
    assert!(
        !main.text.contains("group-row") && main.text.contains("<details class=\"group\" open")
    );
}

async fn custom_domains_and_the_default_page(b: Backend) {
    let mut s = Server::process(b).await;
    let (p, _) = seeded(&s).await;
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"customDomain": "status.acme.test"}),
    )
    .await
    .data(200);
    let r = fetch(&s, "/", &[("host", "status.acme.test")]).await;
    assert!(r.status == 200 && r.text.contains("<title>Acme Status</title>"));
    let r = fetch(&s, "/", &[("host", "STATUS.ACME.TEST:443")]).await;
    assert_eq!(r.status, 200, "host matching ignores case and port");
    let r = fetch(&s, "/api/v2/summary.json", &[("host", "status.acme.test")]).await;
    let body: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(body["page"]["url"], "https://status.acme.test");
    assert_eq!(body["status"]["indicator"], "major");
    let r = fetch(
        &s,
        "/api/v2/scheduled-maintenances/upcoming.json",
        &[("host", "status.acme.test")],
    )
    .await;
    let body: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(
        body["scheduled_maintenances"][0]["name"],
        "Database upgrade"
    );
    // Another host: nothing there, clearly.
    let r = fetch(&s, "/", &[("host", "other.test")]).await;
    assert_eq!(r.status, 404);
    assert!(r.text.contains("/s/{slug}"));
    assert_eq!(
        fetch(&s, "/api/v2/status.json", &[("host", "other.test")])
            .await
            .status,
        404
    );
    // Moving the domain moves what the host serves, at once.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"customDomain": null}),
    )
    .await
    .data(200);
    assert_eq!(
        fetch(&s, "/", &[("host", "status.acme.test")]).await.status,
        404
    );

    // A default page answers every other host.
    s.restart(&[("UPSTATE_DEFAULT_PAGE", "acme")]);
    let r = fetch(&s, "/", &[]).await;
    assert!(r.status == 200 && r.text.contains("Acme"));
    let st = s
        .send(Method::GET, "/api/v1/status", None, None)
        .await
        .data(200);
    assert_eq!(st["page"], "acme");
    assert_eq!(st["status"], "partial_outage");
}

/// The data of the next server-sent `status` event (skipping `change`
/// events), or None when the time is up.
pub async fn next_event<B: AsRef<[u8]>>(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<B>> + Unpin),
    buf: &mut String,
    deadline: Instant,
) -> Option<Value> {
    loop {
        let (name, data) = next_sse(stream, buf, deadline).await?;
        if name == "status" {
            return Some(data);
        }
        assert_eq!(name, "change", "{data}");
    }
}

/// The name and data of the next server-sent event, or None when the time is up.
pub async fn next_sse<B: AsRef<[u8]>>(
    stream: &mut (impl futures_util::Stream<Item = reqwest::Result<B>> + Unpin),
    buf: &mut String,
    deadline: Instant,
) -> Option<(String, Value)> {
    loop {
        if let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                let name = event
                    .lines()
                    .find_map(|l| l.strip_prefix("event: "))
                    .unwrap_or("message");
                return Some((name.to_string(), serde_json::from_str(data).ok()?));
            }
            continue;
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        match tokio::time::timeout(left, stream.next()).await {
            Ok(Some(Ok(chunk))) => buf.push_str(&String::from_utf8_lossy(chunk.as_ref())),
            _ => return None,
        }
    }
}

/// A page's event stream, opened, with its first event read (within 5 s).
pub async fn open_events(
    base: &str,
) -> (
    impl futures_util::Stream<Item = reqwest::Result<axum::body::Bytes>> + Unpin + use<>,
    String,
    Value,
) {
    let r = reqwest::get(format!("{base}/api/public/status/acme/events"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut stream = r.bytes_stream();
    let mut buf = String::new();
    let first = next_event(
        &mut stream,
        &mut buf,
        Instant::now() + Duration::from_secs(5),
    )
    .await
    .expect("first event");
    (stream, buf, first)
}

async fn event_stream_reports_a_change_within_a_second(b: Backend) {
    let s = Server::process(b).await;
    let (_, ids) = seeded(&s).await;
    let (mut stream, mut buf, first) = open_events(&s.base).await;
    assert_eq!(first["status"], "partial_outage");

    let changed = Instant::now();
    s.patch(
        &format!("/api/v1/components/{}/status", ids["api"]),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    // What changed comes first, read from the outbox; then the page's status.
    // (A `status` event may come first: the notification listener
    // connecting after start-up counts as "anything may have changed".)
    let change = loop {
        let (name, data) = next_sse(&mut stream, &mut buf, changed + Duration::from_secs(1))
            .await
            .expect("an event within 1 s");
        if name == "change" {
            break data;
        }
        assert_eq!(name, "status", "{data}");
    };
    assert_eq!(change["kind"], "component.status_changed", "{change}");
    assert_eq!(change["component"], ids["api"]);
    assert_eq!(change["to"], "major_outage");
    let next = next_event(&mut stream, &mut buf, changed + Duration::from_secs(1))
        .await
        .expect("a status event within 1 s");
    assert_eq!(next["status"], "major_outage");
    assert_eq!(next["statusLabel"], "Major System Outage");
    assert_ne!(next["version"], first["version"]);

    // Another page's change is not this page's event.
    let other = s.page("other").await;
    s.component(other, "Elsewhere").await;
    let quiet = next_event(
        &mut stream,
        &mut buf,
        Instant::now() + Duration::from_millis(500),
    )
    .await;
    assert!(quiet.is_none(), "{quiet:?}");
    s.send(Method::GET, "/api/public/status/nope/events", None, None)
        .await
        .problem(404);

    // Shutting down ends open streams at once instead of waiting on them.
    let mut s = s;
    let stopping = Instant::now();
    assert!(s.stop(), "clean exit with a stream open");
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "took {:?}",
        stopping.elapsed()
    );
    let rest = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(_)) = stream.next().await {}
    })
    .await;
    assert!(rest.is_ok(), "the stream ended");
}

/// Servers sharing a process (as the tests' do) stop on their own: one
/// shutting down ends its own event streams, never another's.
async fn a_server_stopping_ends_only_its_own_event_streams(b: Backend) {
    let s = Server::start(b).await;
    let (_, ids) = seeded(&s).await;
    let (mut stream, mut buf, _) = open_events(&s.base).await;
    let other = Server::start(b).await;
    let gone = format!("{}/api/health", other.base);
    drop(other);
    // Until the other server has stopped for good (its socket refuses):
    // its shutdown has run by then, whatever it ends.
    let deadline = Instant::now() + Duration::from_secs(10);
    while reqwest::get(&gone).await.is_ok() {
        assert!(Instant::now() < deadline, "the other server never stopped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let changed = Instant::now();
    s.patch(
        &format!("/api/v1/components/{}/status", ids["api"]),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let seen = next_sse(&mut stream, &mut buf, changed + Duration::from_secs(2)).await;
    assert!(
        seen.is_some(),
        "this server's stream still tells its changes"
    );
}
