//! Monitors against real local targets (an HTTP receiver, a TCP listener,
//! a service calling its heartbeat URL): a target going down and up moves
//! its component (history, audit by `monitor`, the outbox event), within
//! the retries; an operator's hand wins until given back; maintenance
//! suppresses; bad monitors are refused and nothing is stored. In-process
//! with the harness's clock, and one test of the real binary's own loop.

use crate::dns_server::DnsServer;
use crate::harness::TestApp;
use crate::on_both_backends;
use crate::receiver::{Plan, Receiver};
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::time::Duration;

on_both_backends!(
    an_http_monitor_moves_its_component_down_and_back,
    an_operators_hand_and_maintenance_hold_the_component,
    tcp_and_heartbeat_monitors,
    dns_monitors_compare_the_answer,
    https_monitors_watch_the_certificate,
    a_monitor_opens_and_resolves_its_incident,
    bad_monitors_are_refused_and_nothing_is_stored,
    the_server_runs_its_monitors_on_its_own,
    header_values_are_write_only,
    the_monitor_screens_show_a_bounded_number,
);

/// With more monitors than a screen shows, the monitors screen pages them
/// (the failing first, each page its own strips) and the dashboard shows the
/// first failing ones with a link to all of them: a screen costs the same
/// with a thousand monitors as with fifty.
async fn the_monitor_screens_show_a_bounded_number(b: Backend) {
    let rx = Receiver::start().await;
    rx.otherwise(Plan::Status(503));
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let mut failing = Vec::new();
    for n in 0..65 {
        let c = app.component(&page, &format!("Service {n:02}")).await;
        // Twelve fail; the rest are paused.
        let body = if n < 12 {
            json!({"componentId": c, "target": format!("{}/s{n}", rx.base), "retries": 0})
        } else {
            json!({"componentId": c, "target": format!("{}/s{n}", rx.base), "enabled": false})
        };
        let m = monitor(&app, body).await;
        if n < 12 {
            failing.push(m["id"].clone());
        }
    }
    app.advance_to_next_check(STEP).await;
    app.run_monitors().await;
    // What twelve monitors going down tell the team is tested elsewhere.
    app.leave_pending();
    for id in &failing {
        let state = app
            .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
            .await["state"]
            .clone();
        assert_eq!(state, "down", "monitor {id}");
    }
    // The API pages them by id, following nextCursor to the end.
    let mut seen = Vec::new();
    let mut path = "/api/monitors?limit=25".to_string();
    loop {
        let (status, page) = app.send(Method::GET, &path, None).await;
        assert_eq!(status, 200, "{path}: {page}");
        let items = page["data"].as_array().unwrap();
        assert!(items.len() <= 25);
        seen.extend(items.iter().map(|m| m["id"].as_i64().unwrap()));
        match page["nextCursor"].as_str() {
            Some(c) => path = format!("/api/monitors?limit=25&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 65, "each once");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "by id: {seen:?}");
    let (_, whole) = app.send(Method::GET, "/api/monitors", None).await;
    assert_eq!(
        whole["data"].as_array().unwrap().len(),
        65,
        "100 unless asked"
    );
    assert_eq!(whole["nextCursor"], Value::Null);
    for (q, field) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=many", "limit"),
        ("cursor=abc", "cursor"),
        ("cursor=", "cursor"),
    ] {
        let (status, body) = app
            .send(Method::GET, &format!("/api/monitors?{q}"), None)
            .await;
        assert_eq!(status, 422, "{q}: {body}");
        assert_eq!(body["errors"][0]["field"], field, "{q}: {body}");
    }

    app.test_db
        .user_with("ops@example.com", "owner", crate::support::PASSWORD);
    let login = reqwest::Client::new()
        .post(format!("{}/api/auth/login", app.base))
        .json(&json!({"email": "ops@example.com", "password": crate::support::PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let screen = |path: String| {
        let cookie = cookie.clone();
        let url = format!("{}{path}", app.base);
        async move {
            let r = reqwest::Client::new()
                .get(url)
                .header("cookie", cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.text().await.unwrap()
        }
    };
    // Each row's "Open" button.
    let rows = |html: &str| {
        html.matches("class=\"button secondary\" href=\"/admin/monitors/")
            .count()
    };

    let first = screen("/admin/monitors".into()).await;
    assert_eq!(rows(&first), 50, "one page of fifty");
    assert!(first.contains("rel=\"next\""), "a next page");
    assert!(!first.contains("rel=\"prev\""));
    // The failing come first: all twelve are on the first page.
    for n in 0..12 {
        assert!(
            first.contains(&format!("Service {n:02}")),
            "Service {n:02} on page 1"
        );
    }
    let second = screen("/admin/monitors?p=2".into()).await;
    assert_eq!(rows(&second), 15, "the rest");
    assert!(second.contains("rel=\"prev\"") && !second.contains("rel=\"next\""));
    // A search pages within what it finds, and keeps itself in the links.
    let paused = screen("/admin/monitors?state=paused".into()).await;
    assert_eq!(rows(&paused), 50);
    assert!(paused.contains("href=\"/admin/monitors?state=paused&amp;p=2\""));
    let rest = screen("/admin/monitors?state=paused&p=2".into()).await;
    assert_eq!(rows(&rest), 3, "53 paused in all");
    let past = screen("/admin/monitors?p=9".into()).await;
    assert_eq!(rows(&past), 0, "past the end: nothing, and no error");
    // Not a page number: the first page.
    assert_eq!(rows(&screen("/admin/monitors?p=x".into()).await), 50);

    let dashboard = screen("/admin".into()).await;
    assert!(
        dashboard.contains("12 failing"),
        "every failing one counted"
    );
    assert_eq!(
        dashboard.matches("href=\"/admin/monitors/").count(),
        10,
        "the first ten shown"
    );
    assert!(dashboard.contains("href=\"/admin/monitors?state=failing\""));
}

/// A monitor's request header values (credentials, mostly) are never
/// audited nor returned: readers see a hint, and sending the hint back keeps
/// the value; the check still sends the real one.
async fn header_values_are_write_only(b: Backend) {
    let rx = Receiver::start().await;
    let app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let secret = "Bearer s3cr3t-token-0123456789-c3t";
    let m = monitor(
        &app,
        json!({"componentId": api, "target": format!("{}/health", rx.base),
               "headers": [{"name": "Authorization", "value": secret}, {"name": "X-Short", "value": "abc"}]}),
    )
    .await;
    let hints = json!([{"name": "Authorization", "value": "Bearer …c3t"}, {"name": "X-Short", "value": "…"}]);
    assert_eq!(m["headers"], hints);
    let id = m["id"].clone();
    let read = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(read["headers"], hints);
    let details = app.details(&api).await;
    assert_eq!(details["monitor"]["headers"], hints);
    // Sending the hints back (as the admin form does) keeps the values.
    let changed = app
        .data(
            Method::PUT,
            &format!("/api/monitors/{id}"),
            Some(json!({"headers": hints, "intervalSeconds": 60})),
            200,
        )
        .await;
    assert_eq!(changed["headers"], hints);
    assert_eq!(app.run_monitors().await, 1);
    let got = rx.got();
    assert_eq!(
        got[0].header("authorization"),
        secret,
        "the check sends the value"
    );
    assert_eq!(got[0].header("x-short"), "abc");
    // A new value replaces it.
    app.data(
        Method::PUT,
        &format!("/api/monitors/{id}"),
        Some(json!({"headers": [{"name": "Authorization", "value": "Bearer rotated-0123456789-xyz"}]})),
        200,
    )
    .await;
    let stored = app.test_db.texts("SELECT config FROM monitors").await;
    assert!(
        !stored[0].contains("rotated-0123456789-xyz") && !stored[0].contains("s3cr3t"),
        "sealed: {stored:?}"
    );
    // Changed, it is due at once.
    assert_eq!(app.run_monitors().await, 1);
    assert_eq!(
        rx.got()
            .last()
            .map(|g| g.header("authorization").to_string()),
        Some("Bearer rotated-0123456789-xyz".to_string()),
        "the check sends the new value"
    );
    let audit = app
        .test_db
        .texts("SELECT summary FROM audit_events WHERE action LIKE 'monitor.%'")
        .await
        .join("\n");
    assert!(audit.contains("…c3t") && audit.contains("…xyz"), "{audit}");
    assert!(
        !audit.contains("s3cr3t")
            && !audit.contains("rotated-0123456789")
            && !audit.contains("\"abc\""),
        "no header value in the audit log: {audit}"
    );
}

const STEP: Duration = Duration::from_secs(30);

async fn status_of(app: &TestApp, component: &Value) -> Value {
    app.data(
        Method::GET,
        &format!("/api/v1/components/{component}"),
        None,
        200,
    )
    .await["status"]
        .clone()
}

async fn monitor(app: &TestApp, body: Value) -> Value {
    app.data(Method::POST, "/api/monitors", Some(body), 201)
        .await
}

/// One round of due checks after `advance`; the monitor's state after it.
async fn tick(app: &mut TestApp, advance: Duration, id: &Value) -> Value {
    app.advance_to_next_check(advance).await;
    assert!(app.run_monitors().await >= 1, "a check was due");
    app.data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await["state"]
        .clone()
}

async fn an_http_monitor_moves_its_component_down_and_back(b: Backend) {
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let m = monitor(
        &app,
        json!({"componentId": api, "kind": "http", "target": format!("{}/health", rx.base),
               "intervalSeconds": 30, "retries": 1, "headers": [{"name": "X-Probe", "value": "upstate"}]}),
    )
    .await;
    assert_eq!(m["state"], "unknown");
    assert_eq!(m["method"], "GET");
    let id = m["id"].clone();

    assert_eq!(app.run_monitors().await, 1, "the first check runs at once");
    assert_eq!(app.run_monitors().await, 0, "and not again before its time");
    let got = rx.got();
    assert_eq!(got[0].path, "/health");
    assert_eq!(got[0].header("x-probe"), "upstate");
    assert_eq!(status_of(&app, &api).await, "operational");

    rx.otherwise(Plan::Status(503));
    assert_eq!(
        tick(&mut app, STEP, &id).await,
        "up",
        "one failure is tolerated"
    );
    assert_eq!(status_of(&app, &api).await, "operational");
    assert_eq!(tick(&mut app, STEP, &id).await, "down");
    assert_eq!(status_of(&app, &api).await, "major_outage");

    rx.otherwise(Plan::Status(200));
    assert_eq!(
        tick(&mut app, STEP, &id).await,
        "up",
        "one success recovers"
    );
    assert_eq!(status_of(&app, &api).await, "operational");

    let checks = app
        .data(
            Method::GET,
            &format!("/api/monitors/{id}/checks"),
            None,
            200,
        )
        .await;
    let oks: Vec<bool> = checks
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ok"].as_bool().unwrap())
        .collect();
    assert_eq!(oks, [true, false, false, true], "newest first");
    assert_eq!(checks[1]["statusCode"], 503);
    assert_eq!(checks[1]["error"], "answered HTTP 503 (expected 200-299)");
    assert!(checks[0]["latencyMs"].is_i64());

    // The component's history, the audit log and the outbox saw each move.
    let history = app
        .test_db
        .texts(&format!(
            "SELECT status FROM component_status_history WHERE component_id = {api} ORDER BY id"
        ))
        .await;
    assert_eq!(history, ["operational", "major_outage", "operational"]);
    let audited = app
        .test_db
        .texts("SELECT actor_label || ' ' || action FROM audit_events WHERE action = 'monitor.status' ORDER BY id")
        .await;
    assert_eq!(
        audited,
        ["monitor monitor.status", "monitor monitor.status"]
    );
    let events = app
        .test_db
        .texts("SELECT kind FROM outbox WHERE kind = 'component.status_changed' ORDER BY id")
        .await;
    assert_eq!(events.len(), 2, "subscribers hear of both moves");

    // A keyword the answer lacks is a failure, said in words.
    app.data(
        Method::PUT,
        &format!("/api/monitors/{id}"),
        Some(json!({"keyword": "all good", "retries": 0})),
        200,
    )
    .await;
    assert_eq!(tick(&mut app, Duration::ZERO, &id).await, "down");
    let last = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(
        last["lastError"],
        "the answer does not contain \"all good\""
    );

    // Test now: a real check, recorded nowhere.
    let before = app
        .test_db
        .integers("SELECT COUNT(*) FROM monitor_checks")
        .await;
    let tried = app
        .data(Method::POST, &format!("/api/monitors/{id}/test"), None, 200)
        .await;
    assert_eq!(tried["ok"], false);
    assert_eq!(tried["statusCode"], 200);
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_checks")
            .await,
        before
    );

    // Raw checks are kept a day, minute sums two: the hourly prune drops
    // older ones; hour and day sums stay.
    app.advance(Duration::from_secs(20 * 3_600));
    assert!(app.run_monitors().await >= 1);
    app.run_jobs().await;
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_checks")
            .await,
        [before[0] + 1],
        "none is old enough yet"
    );
    app.advance(Duration::from_secs(5 * 3_600));
    app.run_jobs().await;
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_checks")
            .await,
        [1],
        "only the check of 5 hours ago is left"
    );
    app.advance(Duration::from_secs(2 * 86_400));
    app.run_jobs().await;
    let sums = |span: i64| format!("SELECT COUNT(*) FROM monitor_stats WHERE span_ms = {span}");
    assert_eq!(
        app.test_db.integers(&sums(60_000)).await,
        [0],
        "minutes gone"
    );
    assert!(
        app.test_db.integers(&sums(3_600_000)).await[0] >= 2,
        "hours kept"
    );
    assert!(
        app.test_db.integers(&sums(86_400_000)).await[0] >= 1,
        "days kept"
    );
}

async fn an_operators_hand_and_maintenance_hold_the_component(b: Backend) {
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let id = monitor(
        &app,
        json!({"componentId": api, "target": format!("{}/h", rx.base), "intervalSeconds": 30, "retries": 0}),
    )
    .await["id"]
        .clone();
    app.run_monitors().await;

    // An operator says degraded: the monitor keeps checking, the component
    // stays as set until they hand it back.
    app.data(
        Method::PATCH,
        &format!("/api/v1/components/{api}"),
        Some(json!({"status": "degraded"})),
        200,
    )
    .await;
    let m = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(m["manual"], true);
    assert_eq!(tick(&mut app, STEP, &id).await, "up");
    assert_eq!(status_of(&app, &api).await, "degraded");
    let back = app
        .data(
            Method::PUT,
            &format!("/api/monitors/{id}"),
            Some(json!({"manual": false})),
            200,
        )
        .await;
    assert_eq!(back["manual"], false);
    assert_eq!(
        status_of(&app, &api).await,
        "operational",
        "handed back, it follows its monitor at once"
    );

    // Under maintenance, failures move nothing; after it, the truth shows.
    let w = app
        .data(
            Method::POST,
            "/api/v1/maintenance",
            Some(
                json!({"title": "Upgrade", "statusPageId": page, "componentIds": [api],
                "scheduledStartTime": crate::support::at_offset_ms(60_000),
                "scheduledEndTime": crate::support::at_offset_ms(3_600_000)}),
            ),
            201,
        )
        .await["id"]
        .clone();
    app.data(
        Method::POST,
        &format!("/api/v1/maintenance/{w}/start"),
        None,
        200,
    )
    .await;
    assert_eq!(status_of(&app, &api).await, "maintenance");
    rx.otherwise(Plan::Status(500));
    assert_eq!(tick(&mut app, STEP, &id).await, "down");
    assert_eq!(status_of(&app, &api).await, "maintenance", "suppressed");
    app.data(
        Method::POST,
        &format!("/api/v1/maintenance/{w}/complete"),
        None,
        200,
    )
    .await;
    assert_eq!(tick(&mut app, STEP, &id).await, "down");
    assert_eq!(status_of(&app, &api).await, "major_outage");
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

async fn tcp_and_heartbeat_monitors(b: Backend) {
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let db = app.component(&page, "Database").await;
    let jobs = app.component(&page, "Nightly jobs").await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = monitor(
        &app,
        json!({"componentId": db, "kind": "tcp", "target": format!("127.0.0.1:{port}"),
               "intervalSeconds": 30, "retries": 0, "timeoutMs": 2000}),
    )
    .await["id"]
        .clone();
    assert_eq!(app.run_monitors().await, 1);
    assert_eq!(status_of(&app, &db).await, "operational");
    drop(listener);
    assert_eq!(tick(&mut app, STEP, &tcp).await, "down");
    assert_eq!(status_of(&app, &db).await, "major_outage");
    let last = app
        .data(Method::GET, &format!("/api/monitors/{tcp}"), None, 200)
        .await;
    assert!(
        last["lastError"]
            .as_str()
            .unwrap()
            .starts_with("could not connect to 127.0.0.1:"),
        "{last}"
    );

    // A heartbeat: the service calls in; silence longer than the interval
    // is a failure.
    let hb = monitor(
        &app,
        json!({"componentId": jobs, "kind": "heartbeat", "intervalSeconds": 60, "retries": 0}),
    )
    .await;
    let url = hb["heartbeatUrl"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&app.base) && url.contains("/api/heartbeat/"),
        "{url}"
    );
    assert_eq!(
        app.run_monitors().await,
        0,
        "no check is due before the interval"
    );
    let beat = reqwest::get(&url).await.unwrap();
    assert_eq!(beat.status(), 200);
    let said: Value = beat.json().await.unwrap();
    assert_eq!(said["data"]["state"], "up");
    assert_eq!(status_of(&app, &jobs).await, "operational");
    assert_eq!(
        tick(&mut app, Duration::from_secs(61), &hb["id"]).await,
        "down"
    );
    assert_eq!(status_of(&app, &jobs).await, "major_outage");
    let posted = reqwest::Client::new()
        .post(&url)
        .body("anything")
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 200);
    assert_eq!(status_of(&app, &jobs).await, "operational");
    let unknown = reqwest::get(format!("{}/api/heartbeat/nope", app.base))
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

async fn dns_monitors_compare_the_answer(b: Backend) {
    let dns = DnsServer::start("api.acme.test", Ipv4Addr::new(192, 0, 2, 10)).await;
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let m = monitor(
        &app,
        json!({"componentId": api, "kind": "dns", "target": "api.acme.test",
               "dnsServer": dns.addr.to_string(), "dnsRecordType": "a",
               "dnsExpected": "192.0.2.10", "intervalSeconds": 30, "retries": 0, "timeoutMs": 2000}),
    )
    .await;
    assert_eq!(m["dnsRecordType"], "A", "record types are upper case");
    let id = m["id"].clone();
    assert_eq!(app.run_monitors().await, 1);
    assert!(dns.queries() >= 1, "the check asked our server");
    let now = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(now["state"], "up", "{now}");
    assert_eq!(status_of(&app, &api).await, "operational");

    // The name moves elsewhere: the answer no longer matches.
    dns.answer(Some(Ipv4Addr::new(192, 0, 2, 99)));
    assert_eq!(tick(&mut app, STEP, &id).await, "down");
    assert_eq!(status_of(&app, &api).await, "major_outage");
    let last = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    let error = last["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("192.0.2.99") && error.contains("expected 192.0.2.10"),
        "{last}"
    );

    // Gone altogether, then back.
    dns.answer(None);
    assert_eq!(tick(&mut app, STEP, &id).await, "down");
    dns.answer(Some(Ipv4Addr::new(192, 0, 2, 10)));
    assert_eq!(tick(&mut app, STEP, &id).await, "up");
    assert_eq!(status_of(&app, &api).await, "operational");

    // Any answer will do without an expected one.
    app.data(
        Method::PUT,
        &format!("/api/monitors/{id}"),
        Some(json!({"dnsExpected": ""})),
        200,
    )
    .await;
    dns.answer(Some(Ipv4Addr::new(198, 51, 100, 7)));
    assert_eq!(tick(&mut app, STEP, &id).await, "up");
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

/// A self-signed certificate for 127.0.0.1 valid for `days`, and an HTTPS
/// server (Python's ssl) presenting it; (its base URL, the server process).
fn https_target(dir: &std::path::Path, days: u32) -> (String, std::process::Child) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args([
            "-nodes",
            "-days",
            &days.to_string(),
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{made:?}");
    let root = crate::support::root();
    let mut child =
        std::process::Command::new(crate::support::peers().join("consumers/venv/bin/python"))
            .arg(root.join("tests/consumers/https_target.py"))
            .arg(&cert)
            .arg(&key)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("port");
    (format!("https://127.0.0.1:{}", line.trim()), child)
}

async fn https_monitors_watch_the_certificate(b: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let (base, mut server) = https_target(dir.path(), 5);
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let m = monitor(
        &app,
        json!({"componentId": api, "target": format!("{base}/health"),
               "intervalSeconds": 30, "retries": 0}),
    )
    .await;
    assert_eq!(
        (m["verifyTls"].clone(), m["certExpiryDays"].clone()),
        (json!(true), json!(14))
    );
    let id = m["id"].clone();

    // Nobody vouches for a self-signed certificate.
    assert_eq!(app.run_monitors().await, 1);
    let last = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(last["state"], "down", "{last}");
    assert!(
        last["lastError"]
            .as_str()
            .unwrap_or_default()
            .contains("certificate"),
        "{last}"
    );

    // Its own authority, by the operator's choice: up, but 5 days from
    // expiry is inside the 14-day warning, so degraded.
    app.data(
        Method::PUT,
        &format!("/api/monitors/{id}"),
        Some(json!({"verifyTls": false})),
        200,
    )
    .await;
    assert_eq!(tick(&mut app, STEP, &id).await, "degraded");
    assert_eq!(status_of(&app, &api).await, "degraded");
    let last = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    let expires = upstate_core::Timestamp::parse(last["certExpiresAt"].as_str().unwrap()).unwrap();
    let days = (expires.millis() - upstate_core::Timestamp::now().millis()) as f64 / 86_400_000.0;
    assert!((4.9..5.1).contains(&days), "expires in {days} days: {last}");
    assert!(
        last["lastError"]
            .as_str()
            .unwrap_or_default()
            .contains("certificate expires in"),
        "{last}"
    );
    let details = app.details(&api).await;
    assert_eq!(details["monitor"]["certExpiresAt"], last["certExpiresAt"]);

    // A shorter warning: the certificate is fine for now.
    app.data(
        Method::PUT,
        &format!("/api/monitors/{id}"),
        Some(json!({"certExpiryDays": 3})),
        200,
    )
    .await;
    assert_eq!(tick(&mut app, STEP, &id).await, "up");
    assert_eq!(status_of(&app, &api).await, "operational");
    let _ = server.kill();
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

async fn bad_monitors_are_refused_and_nothing_is_stored(b: Backend) {
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let cases = [
        (json!({"target": "https://example.com"}), "componentId"),
        (json!({"componentId": api}), "target"),
        (
            json!({"componentId": api, "target": "ftp://example.com"}),
            "target",
        ),
        // Malformed URLs are refused when written, not stored to fail every check.
        (
            json!({"componentId": api, "target": "http://127.0.0.1:70000/"}),
            "target",
        ),
        (
            json!({"componentId": api, "target": "http://example.com:abc/"}),
            "target",
        ),
        (
            json!({"componentId": api, "target": "https://[::1/"}),
            "target",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "intervalSeconds": 1}),
            "intervalSeconds",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "timeoutMs": 120000}),
            "timeoutMs",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "retries": 11}),
            "retries",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "expectedStatus": "2xx"}),
            "expectedStatus",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "method": "BREW"}),
            "method",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "headers": [{"name": "X Y", "value": "1"}]}),
            "headers",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "headers": [{"name": "X", "value": "a\r\nInjected: 1"}]}),
            "headers",
        ),
        (
            json!({"componentId": api, "kind": "tcp", "target": "no-port"}),
            "target",
        ),
        (
            json!({"componentId": api, "kind": "heartbeat", "target": "https://example.com"}),
            "target",
        ),
        (
            json!({"componentId": api, "kind": "ping", "target": "x"}),
            "kind",
        ),
        (
            json!({"componentId": api, "kind": "dns", "target": "bad name!"}),
            "target",
        ),
        (
            json!({"componentId": api, "kind": "dns", "target": "a.example", "dnsRecordType": "SRVX"}),
            "dnsRecordType",
        ),
        (
            json!({"componentId": api, "kind": "dns", "target": "a.example", "dnsServer": "resolver.example"}),
            "dnsServer",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "certExpiryDays": 400}),
            "certExpiryDays",
        ),
        (
            json!({"componentId": 999_999, "target": "https://example.com"}),
            "componentId",
        ),
        (
            json!({"componentId": api, "target": "https://example.com", "surprise": 1}),
            "surprise",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = app
            .send(Method::POST, "/api/monitors", Some(body.clone()))
            .await;
        assert!(status == 422 || status == 400, "{body}: {status} {answer}");
        let fields: Vec<&str> = answer["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|x| x["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            fields.contains(&field) || answer.to_string().contains(field),
            "{body}: {answer}"
        );
    }
    assert_eq!(
        app.test_db.integers("SELECT COUNT(*) FROM monitors").await,
        [0]
    );

    // One monitor per component; a stranger may not touch them.
    let m = monitor(
        &app,
        json!({"componentId": api, "target": "http://169.254.169.254/latest/meta-data"}),
    )
    .await;
    let (status, _) = app
        .send(
            Method::POST,
            "/api/monitors",
            Some(json!({"componentId": api, "target": "https://example.com"})),
        )
        .await;
    assert_eq!(status, 409);
    let stranger = reqwest::Client::new()
        .delete(format!("{}/api/monitors/{}", app.base, m["id"]))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 401);

    // The metadata address is refused by the outgoing rule, in words, and
    // nothing was requested.
    let tried = app
        .data(
            Method::POST,
            &format!("/api/monitors/{}/test", m["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(tried["ok"], false);
    assert!(
        tried["error"].as_str().unwrap().contains("refused"),
        "{tried}"
    );
    app.advance(STEP);
    app.run_monitors().await;
    assert_eq!(
        status_of(&app, &api).await,
        "operational",
        "one failure is tolerated"
    );

    let (status, _) = app
        .send(
            Method::PUT,
            &format!("/api/monitors/{}", m["id"]),
            Some(json!({"intervalSeconds": 0})),
        )
        .await;
    assert_eq!(status, 422);
    app.data(
        Method::DELETE,
        &format!("/api/monitors/{}", m["id"]),
        None,
        200,
    )
    .await;
    assert_eq!(
        app.test_db.integers("SELECT COUNT(*) FROM monitors").await,
        [0]
    );
    let actions = app
        .test_db
        .texts("SELECT action FROM audit_events WHERE action LIKE 'monitor.%' ORDER BY id")
        .await;
    assert_eq!(actions, ["monitor.create", "monitor.delete"]);
}

/// The real binary runs its monitors without being asked: a failing
/// target moves the component within moments of the monitor's creation.
async fn the_server_runs_its_monitors_on_its_own(b: Backend) {
    let rx = Receiver::start().await;
    rx.otherwise(Plan::Status(500));
    let s = Server::start_with(b, &[("UPSTATE_MONITOR_ALLOW", "127.0.0.1")]).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.post(
        "/api/monitors",
        json!({"componentId": api, "target": format!("{}/h", rx.base), "retries": 0}),
    )
    .await
    .data(201);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let c = s.get(&format!("/api/v1/components/{api}")).await.data(200);
        if c["status"] == "major_outage" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the component never moved: {c}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!rx.got().is_empty());
}

async fn a_monitor_opens_and_resolves_its_incident(b: Backend) {
    let rx = Receiver::start().await;
    rx.otherwise(Plan::Status(500));
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let id = monitor(
        &app,
        json!({"componentId": api, "target": format!("{}/h", rx.base), "retries": 0, "openIncident": true, "intervalSeconds": 30}),
    )
    .await["id"]
        .clone();
    app.run_monitors().await;
    assert_eq!(status_of(&app, &api).await, "major_outage");
    let incidents = app.data(Method::GET, "/api/v1/incidents", None, 200).await;
    assert_eq!(incidents.as_array().unwrap().len(), 1);
    let inc = &incidents[0];
    assert_eq!(inc["title"], "API is down");
    assert_eq!(inc["status"], "investigating");
    assert_eq!(inc["impact"], "major");
    assert!(
        !inc.to_string().contains("127.0.0.1"),
        "the target stays off the public page: {inc}"
    );
    let m = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert_eq!(m["incidentId"], inc["id"]);

    // Still down: no second incident. Recovered: resolved, in words.
    tick(&mut app, STEP, &id).await;
    assert_eq!(
        app.data(Method::GET, "/api/v1/incidents", None, 200)
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
    rx.otherwise(Plan::Status(200));
    assert_eq!(tick(&mut app, STEP, &id).await, "up");
    let resolved = app
        .data(
            Method::GET,
            &format!("/api/v1/incidents/{}", inc["id"]),
            None,
            200,
        )
        .await;
    assert_eq!(resolved["status"], "resolved");
    assert!(
        resolved
            .to_string()
            .contains("API answers our checks again."),
        "{resolved}"
    );
    let m = app
        .data(Method::GET, &format!("/api/monitors/{id}"), None, 200)
        .await;
    assert!(m["incidentId"].is_null());
    let opened_by = app
        .test_db
        .texts("SELECT actor_label || ' ' || action FROM audit_events WHERE action LIKE 'incident.%' ORDER BY id")
        .await;
    assert_eq!(
        opened_by,
        ["monitor incident.create", "monitor incident.resolve"]
    );
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}
