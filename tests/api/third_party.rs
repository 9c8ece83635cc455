//! Third-party components: one Upstate follows another's page (its
//! Statuspage-compatible summary.json, one component of it, or its feed),
//! mirrors the vendor's moves, keeps a person's move until the vendor
//! says something new, tells subscribers only when asked, and marks the
//! component on its public page. Every bad follow is refused with
//! nothing stored, and a vendor that cannot be read moves nothing.

use crate::admin_ui::{PW, browser_of, fill, no_axe_violations, press, shot, text};
use crate::browser::browser_available;
use crate::on_both_backends;
use crate::support::{Backend, Server, free_port};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

on_both_backends!(
    one_upstate_mirrors_a_component_of_another,
    a_feed_of_another_upstate_moves_a_component,
    bad_follows_are_refused_and_unreadable_vendors_move_nothing,
    an_unchanged_vendor_is_asked_with_its_etag_and_answers_304,
    after_our_window_the_vendors_state_holds
);
on_both_backends!(browser: following_a_vendor_in_chromium);

/// A vendor of its own: a real HTTP server that serves `summary` with the
/// ETag `"v1"`, answers 304 to a request that sends it back, and keeps
/// each request's If-None-Match.
async fn etag_vendor(summary: &'static str) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&head).to_string();
            let sent = text.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("if-none-match")
                    .then(|| value.trim().to_string())
            });
            let answer = if sent.as_deref() == Some("\"v1\"") {
                "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n".to_string()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"v1\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{summary}",
                    summary.len()
                )
            };
            log.lock().expect("log").push(sent);
            let _ = conn.write_all(answer.as_bytes()).await;
        }
    });
    (base, seen)
}

async fn an_unchanged_vendor_is_asked_with_its_etag_and_answers_304(b: Backend) {
    let (vendor, seen) = etag_vendor(
        r#"{"page":{"id":"v","name":"Acme Cloud","url":"https://status.acme.test"},
            "status":{"indicator":"major","description":"Partial System Outage"},
            "components":[{"id":"k1","name":"Compute","status":"partial_outage"}]}"#,
    )
    .await;
    let s = follower(b).await;
    let page = s.page("ours").await;
    let c = s.component(page, "Compute").await;
    let id = follow(
        &s,
        json!({"componentId": c, "url": vendor, "vendorComponent": "k1"}),
    )
    .await;
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "partial_outage", "{f}");
    assert_eq!(f["vendorName"], "Acme Cloud");
    assert_eq!(s.component_status(c).await, "partial_outage");
    // A person says more than the vendor does; the unchanged vendor (304)
    // leaves that standing.
    set_status(&s, c, "major_outage").await;
    let f = poll(&s, id).await;
    assert_eq!(f["lastError"], Value::Null, "{f}");
    assert_eq!(f["vendorStatus"], "partial_outage");
    assert_eq!(s.component_status(c).await, "major_outage");
    assert_eq!(
        seen.lock().expect("log").clone(),
        [None, Some("\"v1\"".to_string())],
        "the first poll sends no validator, the second sends the vendor's ETag back"
    );
    // The mark links to the page the vendor's answer names.
    let list = s.get("/api/public/status/ours/components").await;
    assert_eq!(
        list.body["components"][0]["thirdParty"],
        json!({"vendor": "Acme Cloud", "url": "https://status.acme.test"})
    );
}

/// The follower: allowed to reach the vendor on the loopback address, as
/// an install is told with `outgoing_allow`.
async fn follower(b: Backend) -> Server {
    Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await
}

async fn follow(s: &Server, body: Value) -> i64 {
    s.post("/api/third-party", body).await.data(201)["id"]
        .as_i64()
        .expect("id")
}

async fn poll(s: &Server, id: i64) -> Value {
    s.post_empty(&format!("/api/third-party/{id}/poll"))
        .await
        .data(200)
}

async fn set_status(s: &Server, component: i64, status: &str) {
    s.patch(
        &format!("/api/v1/components/{component}"),
        json!({ "status": status }),
    )
    .await
    .data(200);
}

/// The vendor goes down during our own maintenance of the mirror: the
/// window holds the component, and when it ends the component reads what
/// the vendor says now (an outage), not operational; the vendor's answer
/// being unchanged since does not leave it there.
async fn after_our_window_the_vendors_state_holds(b: Backend) {
    let vendor = Server::start(b).await;
    let vp = vendor.page("vendor").await;
    let vapi = vendor.component(vp, "API").await;
    let s = follower(b).await;
    let page = s.page("ours").await;
    let mirror = s.component(page, "Vendor API").await;
    let id = follow(
        &s,
        json!({"componentId": mirror, "kind": "statuspage", "url": format!("{}/s/vendor", vendor.base),
               "vendorComponent": "API"}),
    )
    .await;
    poll(&s, id).await;
    let window = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Our side", "statusPageId": page, "componentIds": [mirror],
                   "scheduledStartTime": "2030-05-01T00:00:00.000Z",
                   "scheduledEndTime": "2030-05-01T04:00:00.000Z"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .expect("id");
    s.post_empty(&format!("/api/v1/maintenance/{window}/start"))
        .await
        .data(200);
    set_status(&vendor, vapi, "major_outage").await;
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "major_outage", "{f}");
    assert_eq!(
        s.component_status(mirror).await,
        "maintenance",
        "our window holds it"
    );
    s.post(
        &format!("/api/v1/maintenance/{window}/complete"),
        json!({"message": "Done on our side"}),
    )
    .await
    .data(200);
    assert_eq!(
        s.component_status(mirror).await,
        "major_outage",
        "the vendor still reports an outage"
    );
    poll(&s, id).await;
    assert_eq!(s.component_status(mirror).await, "major_outage");
    set_status(&vendor, vapi, "operational").await;
    poll(&s, id).await;
    assert_eq!(s.component_status(mirror).await, "operational");
}

async fn one_upstate_mirrors_a_component_of_another(b: Backend) {
    let vendor = Server::start(b).await;
    let vp = vendor.page("vendor").await;
    let vapi = vendor.component(vp, "API").await;
    vendor.component(vp, "Dashboard").await;

    let rx = crate::receiver::Receiver::start().await;
    let s = follower(b).await;
    let page = s.page("ours").await;
    let mirror = s.component(page, "Vendor API").await;
    s.hook_and_subscriber(page, &rx.base).await;

    let id = follow(
        &s,
        json!({"componentId": mirror, "kind": "statuspage", "url": format!("{}/s/vendor", vendor.base),
               "vendorComponent": "API"}),
    )
    .await;
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "operational", "{f}");
    assert_eq!(f["lastError"], Value::Null, "{f}");
    let offered: Vec<&str> = f["vendorComponents"]
        .as_array()
        .expect("vendor components")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(offered, ["API", "Dashboard"]);
    assert_eq!(s.component_status(mirror).await, "operational");

    // The vendor's API goes down: the mirror follows at the next poll.
    set_status(&vendor, vapi, "major_outage").await;
    poll(&s, id).await;
    assert_eq!(s.component_status(mirror).await, "major_outage");
    assert_eq!(
        s.db.texts("SELECT action FROM audit_events WHERE action LIKE 'third_party.%' ORDER BY id")
            .await,
        ["third_party.create", "third_party.status"]
    );
    // The team's channel hears of it; subscribers do not (not asked).
    let got = rx.wait_for(1, Duration::from_secs(20)).await;
    assert!(got.iter().all(|m| m.path == "/hook"), "{got:?}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM deliveries WHERE subscriber_id IS NOT NULL")
            .await,
        [0],
        "subscribers hear nothing of a vendor's move unless asked"
    );

    // The vendor's answer carries an ETag; the next poll sends it back,
    // and an unchanged vendor leaves a person's move standing.
    assert!(
        s.db.texts("SELECT COALESCE(etag, '') FROM third_party")
            .await[0]
            .len()
            > 2,
        "the validator is kept"
    );
    set_status(&s, mirror, "degraded").await;
    let f = poll(&s, id).await;
    assert_eq!(f["lastError"], Value::Null, "{f}");
    assert_eq!(s.component_status(mirror).await, "degraded");

    // Visitors see whose status it is, with the vendor's link.
    let list = s.get("/api/public/status/ours/components").await;
    assert_eq!(list.status, 200);
    let c = &list.body["components"][0];
    assert_eq!(c["thirdParty"]["vendor"], "Page vendor", "{c}");
    assert!(
        c["thirdParty"]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&vendor.base)),
        "{c}"
    );
    // The summary's components say so too (docs/third-party.md).
    let summary = s.get("/api/public/status/ours").await;
    assert_eq!(summary.status, 200);
    assert_eq!(
        summary.body["components"][0]["thirdParty"], c["thirdParty"],
        "{}",
        summary.body
    );
    let html = reqwest::get(format!("{}/s/ours", s.base))
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(html.contains("class=\"third\""), "the page marks it");

    // A follow stays with its component: a change naming one is refused,
    // and nothing of it is kept.
    let moved = s
        .patch(
            &format!("/api/third-party/{id}"),
            json!({"componentId": mirror, "notify": true}),
        )
        .await;
    assert!(
        moved.problem(422).to_string().contains("componentId"),
        "{}",
        moved.body
    );
    assert_eq!(
        s.get(&format!("/api/third-party/{id}")).await.data(200)["notify"],
        false
    );
    // Asked to, subscribers hear of the vendor's next move.
    s.patch(&format!("/api/third-party/{id}"), json!({"notify": true}))
        .await
        .data(200);
    set_status(&vendor, vapi, "operational").await;
    poll(&s, id).await;
    assert_eq!(s.component_status(mirror).await, "operational");
    let got = rx.wait_for(3, Duration::from_secs(20)).await;
    assert!(
        got.iter().any(|m| m.path == "/subscriber"),
        "the subscriber is told: {got:?}"
    );

    // The whole page, polled by the loop without anyone asking.
    let whole = s.component(page, "Vendor").await;
    let wid = follow(
        &s,
        json!({"componentId": whole, "url": format!("{}/s/vendor/api/v2/summary.json", vendor.base)}),
    )
    .await;
    set_status(&vendor, vapi, "partial_outage").await;
    s.eventually(Duration::from_secs(20), || async {
        s.get(&format!("/api/third-party/{wid}")).await.data(200)["vendorStatus"]
            == "partial_outage"
    })
    .await;
    assert_eq!(s.component_status(whole).await, "partial_outage");

    // Stopped, the component keeps its status and is the team's again.
    s.delete(&format!("/api/third-party/{wid}")).await.data(200);
    set_status(&vendor, vapi, "operational").await;
    s.get(&format!("/api/third-party/{wid}")).await.problem(404);
    assert_eq!(s.component_status(whole).await, "partial_outage");
}

async fn a_feed_of_another_upstate_moves_a_component(b: Backend) {
    let vendor = Server::start(b).await;
    let vp = vendor.page("vendor").await;
    let vapi = vendor.component(vp, "API").await;
    let s = follower(b).await;
    let page = s.page("ours").await;
    let mirror = s.component(page, "Vendor").await;
    let id = follow(
        &s,
        json!({"componentId": mirror, "kind": "feed", "feedStatus": "partial_outage",
               "url": format!("{}/api/feed/rss?page=vendor", vendor.base)}),
    )
    .await;
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "operational", "an empty feed: {f}");

    let incident = vendor
        .post(
            "/api/v1/incidents",
            json!({"title": "Errors on the API", "statusPageId": vp, "status": "investigating",
                   "impact": "major", "message": "We are looking into it.", "componentIds": [vapi]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .expect("incident id");
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "partial_outage", "{f}");
    assert_eq!(s.component_status(mirror).await, "partial_outage");

    // The same feed as Atom reads alike.
    s.patch(
        &format!("/api/third-party/{id}"),
        json!({"url": format!("{}/api/feed/rss?page=vendor&format=atom", vendor.base)}),
    )
    .await
    .data(200);
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "partial_outage", "{f}");

    vendor
        .post(
            &format!("/api/v1/incidents/{incident}/updates"),
            json!({"status": "resolved", "message": "Fixed."}),
        )
        .await
        .data(201);
    let f = poll(&s, id).await;
    assert_eq!(f["vendorStatus"], "operational", "{f}");
    assert_eq!(s.component_status(mirror).await, "operational");
}

async fn bad_follows_are_refused_and_unreadable_vendors_move_nothing(b: Backend) {
    let s = follower(b).await;
    let page = s.page("ours").await;
    let c = s.component(page, "Vendor").await;
    let watched = s.component(page, "Watched").await;
    s.post(
        "/api/monitors",
        json!({"componentId": watched, "kind": "tcp", "target": "127.0.0.1:9"}),
    )
    .await
    .data(201);

    let missing = s.post("/api/third-party", json!({})).await;
    missing.invalid_fields(&["body"]);
    assert!(
        missing.body.to_string().contains("componentId"),
        "{}",
        missing.body
    );
    s.post("/api/third-party", json!({"componentId": c, "url": ""}))
        .await
        .invalid_fields(&["url"]);
    s.post(
        "/api/third-party",
        json!({"componentId": c, "url": "ftp://vendor.example", "intervalSeconds": 5,
               "kind": "feed", "vendorComponent": "API", "feedStatus": "operational", "link": "nope"}),
    )
    .await
    .invalid_fields(&["intervalSeconds", "url", "link", "vendorComponent", "feedStatus"]);
    s.post(
        "/api/third-party",
        json!({"componentId": c, "url": "https://vendor.example", "kind": "rumour"}),
    )
    .await
    .invalid_fields(&["kind"]);
    s.post(
        "/api/third-party",
        json!({"componentId": 999_999, "url": "https://vendor.example"}),
    )
    .await
    .invalid_fields(&["componentId"]);
    let refused = s
        .post(
            "/api/third-party",
            json!({"componentId": watched, "url": "https://vendor.example"}),
        )
        .await;
    let conflict = refused.problem(409);
    assert!(
        conflict["detail"]
            .as_str()
            .is_some_and(|d| d.contains("monitor"))
    );
    let reader = s.db.create_key("read");
    s.send(
        reqwest::Method::POST,
        "/api/third-party",
        Some(&reader),
        Some(json!({"componentId": c, "url": "https://vendor.example"})),
    )
    .await
    .problem(403);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM third_party").await,
        [0],
        "nothing stored"
    );

    // A vendor nobody answers for: the poll says why, the component stays.
    let closed = free_port();
    let id = follow(
        &s,
        json!({"componentId": c, "url": format!("http://127.0.0.1:{closed}/status")}),
    )
    .await;
    s.post(
        "/api/third-party",
        json!({"componentId": c, "url": "https://vendor.example"}),
    )
    .await
    .problem(409);
    s.post(
        "/api/monitors",
        json!({"componentId": c, "kind": "tcp", "target": "127.0.0.1:9"}),
    )
    .await
    .problem(409);
    set_status(&s, c, "degraded").await;
    let f = poll(&s, id).await;
    assert!(
        f["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("connect")),
        "{f}"
    );
    assert_eq!(f["vendorStatus"], Value::Null);
    assert_eq!(s.component_status(c).await, "degraded");
    s.patch(
        &format!("/api/third-party/{id}"),
        json!({"componentId": watched}),
    )
    .await
    .invalid_fields(&["componentId"]);
    s.patch(
        &format!("/api/third-party/{id}"),
        json!({"intervalSeconds": 0}),
    )
    .await
    .invalid_fields(&["intervalSeconds"]);
    s.get("/api/third-party/999999").await.problem(404);

    // A vendor that answers something else than a feed.
    s.patch(
        &format!("/api/third-party/{id}"),
        json!({"kind": "feed", "url": format!("{}/s/ours/api/v2/summary.json", s.base)}),
    )
    .await
    .data(200);
    let f = poll(&s, id).await;
    assert!(
        f["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("no RSS or Atom feed")),
        "{f}"
    );
    // A component the vendor does not have: the error lists what it has.
    s.patch(
        &format!("/api/third-party/{id}"),
        json!({"kind": "statuspage", "url": format!("{}/s/ours", s.base), "vendorComponent": "Billing"}),
    )
    .await
    .data(200);
    let f = poll(&s, id).await;
    assert!(
        f["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("Billing") && e.contains("Watched")),
        "{f}"
    );
    assert_eq!(s.component_status(c).await, "degraded");

    // An install not allowed to reach private addresses refuses them.
    let guarded = Server::start(b).await;
    let gp = guarded.page("g").await;
    let gc = guarded.component(gp, "Vendor").await;
    let gid = follow(
        &guarded,
        json!({"componentId": gc, "url": format!("{}/s/ours", s.base)}),
    )
    .await;
    let f = poll(&guarded, gid).await;
    assert!(
        f["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("outgoing_allow")),
        "{f}"
    );
}

async fn following_a_vendor_in_chromium(b: Backend) {
    if !browser_available("following_a_vendor_in_chromium") {
        return;
    }
    let vendor = Server::start(b).await;
    let vp = vendor.page("vendor").await;
    let vapi = vendor.component(vp, "API").await;
    vendor.component(vp, "Dashboard").await;
    set_status(&vendor, vapi, "partial_outage").await;

    let s = follower(b).await;
    s.db.user_with("ad@example.com", "admin", PW);
    let page = s.page("acme").await;
    let mirror = s.component(page, "Cloud API").await;
    let d = browser_of(&s, "ad@example.com").await;
    d.c()
        .goto(&format!("{}/admin/components/{mirror}", s.base))
        .await
        .expect("component screen");
    assert_eq!(text(&d, "#h-vendor").await, "Third-party status");

    // A bad address is refused beside the field.
    d.js("document.querySelector('#f-url').type = 'text'").await;
    fill(&d, "Address", "ftp://vendor.example").await;
    press(&d, "Follow vendor").await;
    assert!(
        text(&d, "#f-url-error").await.contains("http"),
        "the address is refused beside it"
    );
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM third_party").await, [0]);

    fill(&d, "Address", &format!("{}/s/vendor", vendor.base)).await;
    press(&d, "Follow vendor").await;
    assert!(
        text(&d, "[role=status]")
            .await
            .contains("Following the vendor")
    );
    press(&d, "Poll now").await;
    assert!(text(&d, "#h-vendor + p").await.contains("Partial outage"));

    // Once read, the vendor's components are offered: mirror one.
    d.js("document.querySelector('#h-vendor ~ details').open = true")
        .await;
    d.c()
        .find(fantoccini::Locator::Css("#f-vendorComponent"))
        .await
        .expect("vendor component choice")
        .select_by_label("Dashboard")
        .await
        .expect("choose");
    press(&d, "Save").await;
    press(&d, "Poll now").await;
    assert!(text(&d, "#h-vendor + p").await.contains("Dashboard"));
    assert_eq!(s.component_status(mirror).await, "operational");
    no_axe_violations(&d, "component screen with a vendor").await;
    d.screenshot(&shot(b, "third-party-component")).await;

    // Monitors lists it beside the monitors, and offers it no monitor.
    d.c()
        .goto(&format!("{}/admin/monitors", s.base))
        .await
        .expect("monitors screen");
    assert!(text(&d, "#h-vendors + p + ul").await.contains("Cloud API"));
    let offered = d
        .js("return [...document.querySelectorAll('select[name^=componentId] option')].map(o => o.value)")
        .await;
    assert!(
        !offered
            .as_array()
            .is_some_and(|o| o.iter().any(|v| v == &Value::String(mirror.to_string()))),
        "a followed component is not offered a monitor: {offered}"
    );

    set_status(&vendor, vapi, "operational").await;
    d.c()
        .goto(&format!("{}/s/acme", s.base))
        .await
        .expect("public page");
    assert!(text(&d, ".comp .third").await.contains("vendor"));
    d.screenshot(&shot(b, "third-party-public")).await;
}
