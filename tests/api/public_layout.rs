//! The public page as a visitor meets it, in Chromium: a page with three
//! groups, ten components, open and resolved incidents and maintenance
//! running and planned. What a visitor asks first ("is my thing working?")
//! is answered near the top; the last two weeks read day by day; every
//! state is screenshotted (`target/screenshots/public/layout-*`) and
//! checked by axe-core.

use crate::browser::{Driver, browser_available, report};
use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::json;

on_both_backends!(browser: the_page_answers_first_questions_first);

const DAY_MS: i64 = 86_400_000;

/// Three groups of three and one component alone; ids by name.
async fn components(s: &Server, p: i64) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for (group, names) in [
        ("Web", ["Website", "Dashboard", "CDN"]),
        ("API", ["REST API", "GraphQL", "Webhooks"]),
        ("Data", ["Database", "Search", "Backups"]),
    ] {
        let g = s.group(p, group).await;
        for name in names {
            let c = s.component(p, name).await;
            s.patch(&format!("/api/v1/components/{c}"), json!({"groupId": g}))
                .await
                .data(200);
            out.push((name.to_string(), c));
        }
    }
    out.push(("Email".into(), s.component(p, "Email").await));
    out
}

fn id(all: &[(String, i64)], name: &str) -> i64 {
    all.iter().find(|(n, _)| n == name).unwrap().1
}

async fn shoot(s: &Server, d: &Driver, state: &str, width: u32, b: Backend) {
    let backend = match b {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let height = d
        .js("return document.documentElement.scrollHeight")
        .await
        .as_u64()
        .unwrap_or(1200) as u32;
    d.c()
        .set_window_size(width, height.min(4000))
        .await
        .unwrap();
    let violations = d.axe().await;
    assert!(
        violations.is_empty(),
        "axe ({state}): {}",
        report(&violations)
    );
    d.screenshot(&format!("public/layout-{state}-{backend}"))
        .await;
    let _ = s;
}

async fn the_page_answers_first_questions_first(b: Backend) {
    if !browser_available("the_page_answers_first_questions_first") {
        return;
    }
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let all = components(&s, p).await;
    let page = format!("{}/s/acme", s.base);

    // All operational, a quiet fortnight.
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c().goto(&page).await.unwrap();
    assert_eq!(
        d.js("return document.querySelectorAll('.past .day').length")
            .await,
        14
    );
    assert_eq!(
        d.js("return [...document.querySelectorAll('.past .day > .meta')].filter(e => e.textContent === 'No incidents reported.').length").await,
        14
    );
    // A row is one line on a wide screen: name, bar, percentage, status.
    let spread = d
        .js("const r = document.querySelector('.comp'); \
             const mid = e => { const b = r.querySelector(e).getBoundingClientRect(); return b.top + b.height / 2; }; \
             const m = ['.cname', '.bar', '.pct', '.st'].map(mid); \
             return Math.max(...m) - Math.min(...m);")
        .await
        .as_f64()
        .unwrap();
    assert!(spread < 12.0, "one line: centres {spread} px apart");
    shoot(&s, &d, "operational", 1280, b).await;
    d.c().set_window_size(390, 900).await.unwrap();
    let wider = d
        .js("return document.documentElement.scrollWidth > window.innerWidth")
        .await;
    assert_eq!(wider, false, "nothing wider than a phone");
    shoot(&s, &d, "operational-phone", 390, b).await;

    // Maintenance running and planned, nothing else.
    let running = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Backup storage migration", "statusPageId": p,
                   "componentIds": [id(&all, "Backups")],
                   "scheduledStartTime": at_offset_ms(-30 * 60_000),
                   "scheduledEndTime": at_offset_ms(90 * 60_000)}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/maintenance/{running}/start"),
        json!({"message": "Migration started."}),
    )
    .await
    .data(200);
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Database upgrade to PostgreSQL 17", "statusPageId": p,
               "componentIds": [id(&all, "Database")],
               "scheduledStartTime": at_offset_ms(3 * DAY_MS),
               "scheduledEndTime": at_offset_ms(3 * DAY_MS + 7_200_000)}),
    )
    .await
    .data(201);

    // Maintenance only: the banner says so in its own colour, the window
    // shows with its affected component, and no incident section appears.
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c().goto(&page).await.unwrap();
    d.c().refresh().await.unwrap();
    let seen = d
        .js("return [document.querySelector('.banner').dataset.status, \
                    document.querySelectorAll('[data-maintenance]').length, \
                    document.querySelectorAll('.card[data-incident]').length, \
                    document.querySelector('[data-component] .st[data-status=maintenance]') !== null]")
        .await;
    assert_eq!(seen, json!(["maintenance", 2, 0, true]));
    shoot(&s, &d, "maintenance", 1280, b).await;

    // Then five resolved incidents over the fortnight and two open.
    let mut resolved = Vec::new();
    for (n, (days_ago, impact, name)) in [
        (1, "minor", "Search"),
        (2, "major", "REST API"),
        (4, "critical", "Database"),
        (7, "minor", "CDN"),
        (12, "major", "Webhooks"),
    ]
    .into_iter()
    .enumerate()
    {
        let inc = s
            .post(
                "/api/v1/incidents",
                json!({"title": format!("Incident {n}: slow {name}"), "statusPageId": p, "impact": impact,
                       "message": "We are looking into it.", "componentIds": [id(&all, name)]}),
            )
            .await
            .data(201)["id"]
            .as_i64()
            .unwrap();
        s.post(
            &format!("/api/v1/incidents/{inc}/resolve"),
            json!({"message": "Fixed: traffic moved to the other region."}),
        )
        .await
        .data(200);
        resolved.push((inc, days_ago));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for (inc, days_ago) in &resolved {
        let began = now - days_ago * DAY_MS;
        s.db.execute(&format!(
            "UPDATE incidents SET created_at = {began}, resolved_at = {} WHERE id = {inc}",
            began + 95 * 60_000
        ))
        .await;
        s.db.execute(&format!(
            "UPDATE incident_updates SET created_at = {began} WHERE incident_id = {inc} AND status <> 'resolved'"
        ))
        .await;
        s.db.execute(&format!(
            "UPDATE incident_updates SET created_at = {} WHERE incident_id = {inc} AND status = 'resolved'",
            began + 95 * 60_000
        ))
        .await;
    }
    let major = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Checkout fails for some customers", "statusPageId": p, "impact": "major",
                   "message": "We are investigating failed payments.",
                   "componentIds": [id(&all, "Website"), id(&all, "REST API")],
                   "componentStatuses": [{"componentId": id(&all, "REST API"), "status": "major_outage"},
                                         {"componentId": id(&all, "Website"), "status": "partial_outage"}]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    for (status, message) in [
        (
            "identified",
            "A database failover left the payment service on a read-only replica.",
        ),
        (
            "monitoring",
            "Writes are back; we are watching the error rate.",
        ),
    ] {
        s.post(
            &format!("/api/v1/incidents/{major}/updates"),
            json!({"status": status, "message": message}),
        )
        .await
        .data(201);
    }
    s.post(
        "/api/v1/incidents",
        json!({"title": "Delayed search indexing", "statusPageId": p, "impact": "minor",
               "message": "New documents take up to 10 minutes to appear in search.",
               "componentIds": [id(&all, "Search")]}),
    )
    .await
    .data(201);
    d.c().set_window_size(1280, 900).await.unwrap();
    // Another URL than the first visit's, which the browser may keep for 30 s.
    d.c().goto(&format!("{page}?lang=en")).await.unwrap();
    // Components come right after the open incidents, before maintenance
    // and the past, and start within the first screen.
    let order = d
        .js("return [...document.querySelectorAll('#live > section h2')].map(h => h.id)")
        .await;
    assert_eq!(
        order,
        json!(["inc-h", "cmp-h", "mnt-h", "past-h"]),
        "section order"
    );
    let top = d
        .js("return document.querySelector('.panel').getBoundingClientRect().top")
        .await
        .as_f64()
        .unwrap();
    assert!(top < 900.0, "components start {top} px down");
    // The open incident shows its latest update; the rest wait behind a
    // details element that opens without script.
    let card = format!("[data-incident='{major}']");
    let latest = d
        .js(&format!(
            "return document.querySelector(\"{card} .latest\").textContent"
        ))
        .await;
    assert!(
        latest.as_str().unwrap().contains("Writes are back"),
        "{latest}"
    );
    assert_eq!(
        d.js(&format!(
            "return document.querySelector(\"{card} details.more-updates\").open"
        ))
        .await,
        false
    );
    assert_eq!(
        d.js(&format!(
            "return document.querySelector(\"{card} details.more-updates summary\").textContent"
        ))
        .await,
        "All updates (3)"
    );
    assert!(
        d.js(&format!(
            "return document.querySelector(\"{card} .meta\").textContent"
        ))
        .await
        .as_str()
        .unwrap()
        .contains("Ongoing for")
    );
    // The past fortnight: each resolved incident on its day, with how long it lasted.
    let past = d
        .js("return document.querySelector('.past').textContent")
        .await;
    let past = past.as_str().unwrap();
    for n in 0..5 {
        assert!(past.contains(&format!("Incident {n}: slow")), "{past}");
    }
    assert!(past.contains("Lasted 1 h 35 min"), "{past}");
    assert!(past.contains("Fixed: traffic moved"), "{past}");
    assert_eq!(
        d.js("return [...document.querySelectorAll('.past .day > .meta')].filter(e => e.textContent === 'No incidents reported.').length").await,
        14 - 6,
        "quiet days: 14 less the five past days and today"
    );
    assert_eq!(
        d.js("return document.querySelector('.past .more a').getAttribute('href')")
            .await,
        "/s/acme/history?lang=en",
        "the chosen language goes along"
    );
    shoot(&s, &d, "busy", 1280, b).await;
    // Everything on, the page with its stylesheet and script as a browser
    // receives them (brotli) stays under 100 KB.
    let client = reqwest::Client::new();
    let html = client
        .get(&page)
        .header("accept-encoding", "br")
        .send()
        .await
        .unwrap();
    assert_eq!(html.headers()["content-encoding"], "br");
    let mut weight = html.bytes().await.unwrap().len();
    let plain = reqwest::get(&page).await.unwrap().text().await.unwrap();
    for asset in ["/assets/status.css?v=", "/assets/status.js?v="] {
        let at = plain.find(asset).expect("the page links its assets");
        let url: String = plain[at..].chars().take_while(|c| *c != '"').collect();
        let r = client
            .get(format!("{}{url}", s.base))
            .header("accept-encoding", "br")
            .send()
            .await
            .unwrap();
        weight += r.bytes().await.unwrap().len();
    }
    assert!(weight < 100 * 1024, "{weight} bytes over the wire");
    d.c().set_window_size(390, 900).await.unwrap();
    assert_eq!(
        d.js("return document.documentElement.scrollWidth > window.innerWidth")
            .await,
        false,
        "nothing wider than a phone"
    );
    shoot(&s, &d, "busy-phone", 390, b).await;

    // Right to left (Arabic): the page mirrors, its edges follow.
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c().goto(&format!("{page}?lang=ar")).await.unwrap();
    assert_eq!(d.js("return document.documentElement.dir").await, "rtl");
    assert_eq!(
        d.js("return document.querySelector('.banner .label').textContent")
            .await,
        "انقطاع كبير في النظام"
    );
    assert_eq!(
        d.js(&format!(
            "return getComputedStyle(document.querySelector(\"{card}\")).borderRightWidth"
        ))
        .await,
        "6px",
        "the impact edge is at the start of the line: the right"
    );
    assert_eq!(
        d.js("return getComputedStyle(document.querySelector('.past .more .arr')).transform")
            .await,
        "matrix(-1, 0, 0, 1, 0, 0)",
        "arrows point the way the text runs"
    );
    shoot(&s, &d, "busy-rtl", 1280, b).await;

    // The month's history: each incident in its impact's colour, with its
    // duration and what it touched; paging keeps a chosen language.
    d.c().set_window_size(1280, 900).await.unwrap();
    // The month of the incident four days ago (in the first days of a
    // month, the current one would hold none of the resolved ones).
    let then = time::OffsetDateTime::from_unix_timestamp((now - 4 * DAY_MS) / 1000).unwrap();
    let month = format!("{:04}-{:02}", then.year(), u8::from(then.month()));
    d.c()
        .goto(&format!("{page}/history?month={month}&lang=de"))
        .await
        .unwrap();
    let items = d
        .js("return [...document.querySelectorAll('.history .past-item[data-incident]')].map(e => e.textContent)")
        .await;
    let items = items.as_array().unwrap();
    assert!(items.len() >= 2, "{items:?}");
    assert!(
        items
            .iter()
            .any(|t| t.as_str().unwrap().contains("Dauer: 1 Std. 35 Min.")),
        "{items:?}"
    );
    assert!(
        items
            .iter()
            .any(|t| t.as_str().unwrap().contains("Betroffen: Database")),
        "{items:?}"
    );
    let prev = d
        .js("return document.querySelector('a[rel=prev]')?.getAttribute('href') ?? ''")
        .await;
    let back = d
        .js("return document.querySelector('main p a').getAttribute('href')")
        .await;
    assert_eq!(back, "/s/acme?lang=de", "the way back keeps the language");
    if !prev.as_str().unwrap().is_empty() {
        assert!(prev.as_str().unwrap().ends_with("&lang=de"), "{prev}");
    }
    shoot(&s, &d, "history-de", 1280, b).await;

    // A resolved incident's page: no alarm colour, and how long it lasted.
    let (first, _) = resolved[0];
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c()
        .goto(&format!("{page}/incidents/{first}"))
        .await
        .unwrap();
    assert_eq!(
        d.js("return getComputedStyle(document.querySelector('.card.resolved')).borderLeftWidth")
            .await,
        "1px"
    );
    assert!(
        d.js("return document.querySelector('.card .meta').textContent")
            .await
            .as_str()
            .unwrap()
            .contains("Lasted 1 h 35 min")
    );
    shoot(&s, &d, "resolved-incident", 1280, b).await;
    d.quit().await;

    // Dark, as the visitor's system prefers.
    let dark = Driver::start(&["--blink-settings=preferredColorScheme=0"]).await;
    dark.c().set_window_size(1280, 900).await.unwrap();
    dark.c().goto(&page).await.unwrap();
    shoot(&s, &dark, "busy-dark", 1280, b).await;
    dark.quit().await;
}

on_both_backends!(browser: operators_theme_the_page_without_code);

/// A header image and the operator's own CSS: the stylesheet is a file of
/// its own (typed markup in it never reaches the page, the page's headers
/// stay as they are), it restyles the page in a real browser, and bad
/// values are refused with nothing changed.
async fn operators_theme_the_page_without_code(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    s.component(p, "API").await;
    let css = ".banner { border-radius: 0 } :root { --accent: #7c3aed } </style><script>alert(1)</script>";
    // An image the test can reach: Upstate's own icon.
    let image = format!("{}/assets/favicon.svg", s.base);
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"headerImageUrl": image, "customCss": css}),
    )
    .await
    .data(200);
    let page = reqwest::get(format!("{}/s/acme", s.base)).await.unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.starts_with("default-src 'none'; script-src 'self'"),
        "{csp}"
    );
    let html = page.text().await.unwrap();
    assert!(
        html.contains(&format!(r#"<img class="hero" src="{image}" alt="">"#)),
        "{html}"
    );
    assert!(
        !html.contains("alert(1)"),
        "the stylesheet stays out of the page"
    );
    let at = html
        .find("/s/acme/custom.css?v=")
        .expect("the page links its stylesheet");
    let href: String = html[at..].chars().take_while(|c| *c != '"').collect();
    let sheet = reqwest::get(format!("{}{href}", s.base)).await.unwrap();
    assert_eq!(sheet.status(), 200);
    assert_eq!(sheet.headers()["content-type"], "text/css; charset=utf-8");
    assert_eq!(sheet.text().await.unwrap(), css);

    // Refusals name the field; nothing changes.
    for (body, field) in [
        (json!({"customCss": "a{}".repeat(7_000)}), "customCss"),
        (json!({"customCss": "a{}\u{0}"}), "customCss"),
        (
            json!({"headerImageUrl": "javascript:alert(1)"}),
            "headerImageUrl",
        ),
    ] {
        s.send(
            reqwest::Method::PATCH,
            &format!("/api/v1/statuspages/{p}"),
            Some(&s.key),
            Some(body),
        )
        .await
        .invalid_fields(&[field]);
    }
    let kept = s.get(&format!("/api/v1/statuspages/{p}")).await.data(200);
    assert_eq!(kept["customCss"], css);
    assert_eq!(kept["headerImageUrl"], image);

    // In a browser the page wears it.
    if browser_available("operators_theme_the_page_without_code") {
        let d = Driver::start(&[]).await;
        d.c().set_window_size(1280, 900).await.unwrap();
        d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
        let radius = d
            .until(
                "return getComputedStyle(document.querySelector('.banner')).borderTopLeftRadius === '0px'",
                crate::browser::STEP_WITHIN,
            )
            .await;
        assert!(radius.is_some(), "the operator's CSS applies");
        assert_eq!(
            d.js("return getComputedStyle(document.querySelector('header.top')).borderTopColor")
                .await,
            "rgb(124, 58, 237)"
        );
        shoot(&s, &d, "themed", 1280, b).await;
        d.quit().await;
    }

    // Emptied: no stylesheet link, no image.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"headerImageUrl": null, "customCss": ""}),
    )
    .await
    .data(200);
    let html = reqwest::get(format!("{}/s/acme?lang=en", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!html.contains("custom.css") && !html.contains("class=\"hero\""));
}
