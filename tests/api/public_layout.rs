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

on_both_backends!(the_page_answers_first_questions_first);

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

    // Five resolved incidents over the fortnight, two open, maintenance
    // running and planned.
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

    // The month's history: each incident in its impact's colour, with its
    // duration and what it touched; paging keeps a chosen language.
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c()
        .goto(&format!("{page}/history?lang=de"))
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
