//! Notification channels of the team: a change reaches every channel whose
//! filters it passes, once, signed (webhooks, checked with the Standard
//! Webhooks reference library), in each chat's own format; failures are
//! retried with backoff and given up with their reason; targets on private
//! addresses are refused unless allowed; bad input stores nothing.

use crate::harness::TestApp;
use crate::on_both_backends;
use crate::receiver::{Plan, Receiver};
use crate::support::{Backend, Running, Server, peers, peers_available, root, spawn};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    a_webhook_with_a_bad_certificate_fails_as_a_warning,
    a_webhook_hears_each_incident_change_once_signed_with_its_secret,
    chat_channels_get_their_own_format_and_filters_choose_what_arrives,
    failed_deliveries_are_retried_with_the_same_id_then_given_up,
    a_dead_senders_lease_runs_out_and_another_sender_delivers,
    private_targets_are_refused_unless_allowed_even_by_redirect,
    bad_channels_are_refused_and_nothing_is_stored,
    email_channels_send_real_mail_through_smtp,
    the_delivery_log_is_pruned_by_age_but_pending_deliveries_stay,
);

const WAIT: Duration = Duration::from_secs(15);

/// Verifies a received webhook with the reference library; returns its payload.
fn verified(secret: &str, got: &crate::receiver::Got) -> Option<Value> {
    let python = peers().join("consumers/venv/bin/python");
    if !peers_available("webhook signature check", std::slice::from_ref(&python)) {
        return None;
    }
    let headers: serde_json::Map<String, Value> =
        ["webhook-id", "webhook-timestamp", "webhook-signature"]
            .iter()
            .map(|h| (h.to_string(), json!(got.header(h))))
            .collect();
    let input = json!({ "headers": headers, "body": String::from_utf8_lossy(&got.body) });
    let mut child = std::process::Command::new(python)
        .arg(root().join("tests/consumers/verify_webhook.py"))
        .arg(secret)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the verifier");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the reference library refused the signature: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// A channel's log once no delivery in it waits any more (a message can
/// reach its receiver a moment before the sender writes down the answer).
async fn settled_log(s: &Server, id: i64) -> Value {
    for _ in 0..100 {
        let log = s
            .get(&format!("/api/notifications/{id}/deliveries"))
            .await
            .data(200);
        if log
            .as_array()
            .is_some_and(|l| l.iter().all(|d| d["status"] != "pending"))
        {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("deliveries of channel {id} still pending")
}

fn allow_local() -> [(&'static str, &'static str); 1] {
    [("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]
}

async fn a_webhook_hears_each_incident_change_once_signed_with_its_secret(b: Backend) {
    let rx = Receiver::start().await;
    let s = Server::start_with(b, &allow_local()).await;
    let made = s
        .post(
            "/api/notifications",
            json!({"name": "Ops hook", "kind": "webhook", "target": format!("{}/hook", rx.base)}),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let channel = made.body["data"].clone();
    let id = channel["id"].as_i64().unwrap();
    let secret = channel["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{secret}");
    // Shown once: reads give only a hint.
    let shown = s.get(&format!("/api/notifications/{id}")).await.data(200);
    assert!(shown.get("secret").is_none(), "{shown}");
    assert_eq!(
        shown["secretHint"],
        json!(format!("…{}", &secret[secret.len() - 4..]))
    );
    let audit =
        s.db.texts("SELECT summary FROM audit_events WHERE action = 'notification.create'")
            .await;
    assert_eq!(audit.len(), 1);
    assert!(
        !audit[0].contains(&secret[6..]),
        "the audit log never holds the secret"
    );

    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": page, "impact": "major",
                   "message": "Looking into <errors> & timeouts", "componentIds": [api],
                   "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
        )
        .await
        .data(201);
    let got = rx.wait_for(1, WAIT).await;
    let first = &got[0];
    assert_eq!(first.path, "/hook");
    assert_eq!(first.header("content-type"), "application/json");
    assert!(first.header("webhook-id").starts_with("msg_"));
    let body = first.json();
    assert_eq!(body["type"], "incident.created");
    assert_eq!(body["data"]["title"], "New incident: API errors");
    assert_eq!(body["data"]["text"], "Looking into <errors> & timeouts");
    assert_eq!(
        body["data"]["subject"],
        json!({"type": "incident", "id": inc["id"], "status": "investigating", "impact": "major"})
    );
    assert_eq!(
        body["data"]["components"],
        json!([{"id": api, "name": "API", "status": "major_outage"}])
    );
    assert!(
        body["data"]["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/s/acme/incidents/{}", inc["id"]))
    );
    if let Some(payload) = verified(&secret, first) {
        assert_eq!(payload, body);
    }

    s.post(
        &format!("/api/v1/incidents/{}/updates", inc["id"]),
        json!({"message": "Found the bad deploy", "status": "identified"}),
    )
    .await
    .data(201);
    let got = rx.wait_for(2, WAIT).await;
    let second = got[1].json();
    assert_eq!(second["type"], "incident.updated");
    assert_eq!(second["data"]["title"], "Identified: API errors");
    assert_eq!(second["data"]["text"], "Found the bad deploy");
    assert_ne!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    // The component moved with the incident: no message of its own.
    s.quiet().await;
    assert_eq!(rx.got().len(), 2, "one message per change: {:?}", rx.got());

    let log = settled_log(&s, id).await;
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["kind"], "incident.updated");
    assert_eq!(log[0]["title"], "Identified: API errors");
    for d in log {
        assert_eq!(d["status"], "delivered");
        assert_eq!(d["responseStatus"], 200);
        assert_eq!(d["attempts"], 1);
        assert_eq!(d["responseBody"], "ok");
    }
    let ids: Vec<String> = got
        .iter()
        .map(|g| g.header("webhook-id").to_string())
        .collect();
    assert_eq!(ids[1], format!("msg_{}", log[0]["id"]));

    // Rotating makes a new secret, shown once; later messages use it.
    let rotated = s
        .send(
            Method::PUT,
            &format!("/api/notifications/{id}"),
            Some(&s.key),
            Some(json!({"rotateSecret": true})),
        )
        .await
        .data(200);
    let secret2 = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(secret2, secret);
    let test = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(test["status"], "delivered", "{test}");
    assert_eq!(test["kind"], "test");
    let got = rx.wait_for(3, WAIT).await;
    assert_eq!(got[2].json()["type"], "test");
    if let Some(payload) = verified(&secret2, &got[2]) {
        assert_eq!(payload["data"]["title"], "Test message for Ops hook");
    }
}

/// A webhook behind a certificate that does not verify (openssl's own
/// TLS server with a self-signed one): the message fails with the reason,
/// and the server's log says so as a warning; no line of it reads as an
/// error of the server's (the TLS verifier's own ERROR stays out).
async fn a_webhook_with_a_bad_certificate_fails_as_a_warning(b: Backend) {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().expect("dir");
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=elsewhere.test", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = crate::support::free_port();
    let tls = Command::new("openssl")
        .args([
            "s_server",
            "-quiet",
            "-www",
            "-accept",
            &port.to_string(),
            "-cert",
        ])
        .arg(&cert)
        .arg("-key")
        .arg(&key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl s_server");
    let _tls = Running(tls);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "openssl s_server did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let s = Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    let id = s
        .post(
            "/api/notifications",
            json!({"name": "Bad certificate", "kind": "webhook",
                   "target": format!("https://127.0.0.1:{port}/hook")}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .expect("id");
    let test = s.post_empty(&format!("/api/notifications/{id}/test")).await;
    assert_ne!(test.body["data"]["status"], "delivered", "{}", test.body);
    assert!(
        test.body.to_string().contains("certificate"),
        "the reason is given: {}",
        test.body
    );
    let log = s.log();
    assert!(!log.contains(" ERROR "), "{log}");
}

async fn chat_channels_get_their_own_format_and_filters_choose_what_arrives(b: Backend) {
    let rx = Receiver::start().await;
    let telegram_api = format!("{}/telegram", rx.base);
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_OUTGOING_ALLOW", "127.0.0.1"),
            ("UPSTATE_TELEGRAM_API_URL", telegram_api.as_str()),
        ],
    )
    .await;
    let acme = s.page("acme").await;
    let other = s.page("other").await;
    let api = s.component(acme, "API").await;
    let web = s.component(acme, "Website").await;
    let make = |body: Value| {
        let s = &s;
        async move {
            s.post("/api/notifications", body).await.data(201)["id"]
                .as_i64()
                .unwrap()
        }
    };
    make(json!({"name": "Slack", "kind": "slack", "target": format!("{}/slack", rx.base), "pageIds": [acme]})).await;
    make(json!({"name": "Discord resolved", "kind": "discord", "target": format!("{}/discord", rx.base),
                "eventKinds": ["incident.resolved"]}))
    .await;
    make(json!({"name": "Teams other page", "kind": "teams", "target": format!("{}/teams", rx.base), "pageIds": [other]})).await;
    make(json!({"name": "Telegram website", "kind": "telegram", "target": "-1001234", "token": "123456:ABC-def",
                "componentIds": [web]}))
    .await;

    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": acme, "impact": "minor", "message": "Slow answers",
                   "componentIds": [api]}),
        )
        .await
        .data(201);
    let got = rx.wait_for(1, WAIT).await;
    s.quiet().await;
    let got_paths: Vec<String> = rx.got().iter().map(|g| g.path.clone()).collect();
    assert_eq!(
        got_paths,
        ["/slack"],
        "only the page's Slack channel hears a new API incident"
    );
    let slack = got[0].json();
    assert_eq!(slack["text"], "Page acme: New incident: API errors");
    let section = slack["blocks"][0]["text"]["text"].as_str().unwrap();
    assert!(section.contains("Slow answers"), "{section}");

    // A status change of the website alone reaches Slack and Telegram.
    s.patch(
        &format!("/api/v1/components/{web}"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    let got = rx.wait_for(3, WAIT).await;
    let tg = got
        .iter()
        .find(|g| g.path.starts_with("/telegram"))
        .expect("telegram message");
    assert_eq!(tg.path, "/telegram/bot123456:ABC-def/sendMessage");
    let tg = tg.json();
    assert_eq!(tg["chat_id"], -1001234);
    assert_eq!(tg["parse_mode"], "HTML");
    assert!(
        tg["text"]
            .as_str()
            .unwrap()
            .contains("<b>Website is degraded performance</b>"),
        "{tg}"
    );

    s.post(
        &format!("/api/v1/incidents/{}/resolve", inc["id"]),
        json!({"message": "Fixed"}),
    )
    .await
    .data(200);
    let got = rx.wait_for(5, WAIT).await;
    let discord = got
        .iter()
        .find(|g| g.path == "/discord")
        .expect("discord message")
        .json();
    assert_eq!(discord["embeds"][0]["title"], "Resolved: API errors");
    assert_eq!(discord["embeds"][0]["description"], "Fixed");
    assert_eq!(discord["allowed_mentions"]["parse"], json!([]));
    s.quiet().await;
    assert!(
        rx.got().iter().all(|g| g.path != "/teams"),
        "the other page's channel heard nothing"
    );

    // Teams: its test message is an Adaptive Card.
    let teams = s.get("/api/notifications").await.data(200);
    let teams_id = teams
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "teams")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    let t = s
        .post_empty(&format!("/api/notifications/{teams_id}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "delivered");
    let card = rx
        .got()
        .into_iter()
        .find(|g| g.path == "/teams")
        .expect("teams test")
        .json();
    assert_eq!(
        card["attachments"][0]["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(
        card["attachments"][0]["content"]["body"][0]["text"],
        "Test message for Teams other page"
    );
}

/// A webhook channel to `url` and a page, made through the harness.
async fn hook_and_page(app: &TestApp, url: String) -> (Value, Value) {
    let channel = app
        .data(
            Method::POST,
            "/api/notifications",
            Some(json!({"name": "Hook", "kind": "webhook", "target": url})),
            201,
        )
        .await;
    let page = app
        .data(
            Method::POST,
            "/api/v1/statuspages",
            Some(json!({"name": "Acme", "slug": "acme"})),
            201,
        )
        .await;
    (channel, page)
}

/// Opens an incident on `page` through the harness.
async fn open_incident(app: &TestApp, page: &Value, title: &str) {
    app.data(
        Method::POST,
        "/api/v1/incidents",
        Some(json!({"title": title, "statusPageId": page["id"], "impact": "major", "message": title})),
        201,
    )
    .await;
}

/// In-process: the test moves the clock and runs the sender itself.
async fn failed_deliveries_are_retried_with_the_same_id_then_given_up(b: Backend) {
    let rx = Receiver::start().await;
    let app = TestApp::spawn_with(
        b,
        upstate_jobs::DeliverySettings {
            give_up_after: Duration::from_secs(120),
            ..Default::default()
        },
    )
    .await;
    let (ch, page) = hook_and_page(&app, format!("{}/flaky", rx.base)).await;
    rx.plan([Plan::Status(500), Plan::Status(503)]);
    open_incident(&app, &page, "Down").await;
    assert_eq!(
        app.send_deliveries().await,
        0,
        "nothing is due before the fan-out job ran"
    );
    assert!(app.run_jobs().await >= 1);
    assert_eq!(app.send_deliveries().await, 1);
    let log_path = format!("/api/notifications/{}/deliveries", ch["id"]);
    let d = &app.data(Method::GET, &log_path, None, 200).await[0];
    assert_eq!(d["status"], "pending");
    assert_eq!(d["attempts"], 1);
    assert_eq!(d["responseStatus"], 500);
    assert_eq!(d["lastError"], "the receiver answered HTTP 500");
    assert!(d["nextAttemptAt"].is_string());
    // Not yet due: nothing is sent.
    assert_eq!(app.send_deliveries().await, 0);
    let mut app = app;
    app.advance(Duration::from_secs(13));
    assert_eq!(app.send_deliveries().await, 1);
    app.advance(Duration::from_secs(25));
    assert_eq!(app.send_deliveries().await, 1);
    let d = &app.data(Method::GET, &log_path, None, 200).await[0];
    assert_eq!(d["status"], "delivered", "{d}");
    assert_eq!(d["attempts"], 3);
    assert!(d["nextAttemptAt"].is_null());
    let got = rx.got();
    assert_eq!(got.len(), 3);
    assert!(
        got.iter()
            .all(|g| g.header("webhook-id") == got[0].header("webhook-id")),
        "every retry carries the same id, for the receiver to dedupe on"
    );

    // A receiver that never recovers: given up once the give-up time passes.
    rx.otherwise(Plan::Status(500));
    open_incident(&app, &page, "Again").await;
    app.run_jobs().await;
    for _ in 0..8 {
        app.send_deliveries().await;
        app.advance(Duration::from_secs(50));
    }
    let d = &app.data(Method::GET, &log_path, None, 200).await[0];
    assert_eq!(d["status"], "given_up", "{d}");
    assert_eq!(d["lastError"], "the receiver answered HTTP 500");
    assert!(d["finishedAt"].is_string());
    let attempts = d["attempts"].as_i64().unwrap();
    assert!(
        (3..=5).contains(&attempts),
        "backoff spaced the attempts: {attempts}"
    );
    let given_up = app
        .data(
            Method::GET,
            &format!("{log_path}?status=given_up"),
            None,
            200,
        )
        .await;
    assert_eq!(given_up.as_array().unwrap().len(), 1);
}

async fn a_dead_senders_lease_runs_out_and_another_sender_delivers(b: Backend) {
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn(b).await;
    let (_, page) = hook_and_page(&app, format!("{}/h", rx.base)).await;
    open_incident(&app, &page, "Down").await;
    app.run_jobs().await;
    // A sender leases the delivery and dies before it settles.
    let leased = upstate_store::deliveries::lease(&app.db, app.now(), 60_000, 10)
        .await
        .unwrap();
    assert_eq!(leased.len(), 1);
    assert_eq!(
        app.send_deliveries().await,
        0,
        "a live lease keeps others off"
    );
    app.advance(Duration::from_secs(61));
    assert_eq!(app.send_deliveries().await, 1);
    assert_eq!(rx.got().len(), 1);
    // The dead sender's late settle changes nothing: the lease is not its.
    let late = upstate_store::deliveries::Attempt {
        error: Some("late".into()),
        ..Default::default()
    };
    upstate_store::deliveries::settle(&app.db, &leased[0], &late, app.now(), None)
        .await
        .unwrap();
    let log = app
        .data(Method::GET, "/api/notifications/1/deliveries", None, 200)
        .await;
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(log[0]["attempts"], 2);
}

async fn private_targets_are_refused_unless_allowed_even_by_redirect(b: Backend) {
    let rx = Receiver::start().await;
    // No allow-list: the receiver on 127.0.0.1 is out of reach.
    let s = Server::process(b).await;
    let id = s
        .post(
            "/api/notifications",
            json!({"name": "Internal", "kind": "webhook", "target": format!("{}/x", rx.base)}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let t = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "given_up");
    let why = t["lastError"].as_str().unwrap();
    assert!(
        why.contains("refused: 127.0.0.1 is a private, loopback"),
        "{why}"
    );
    // A name that resolves to loopback is refused after resolution.
    let port = rx.base.rsplit(':').next().unwrap();
    let by_name = s
        .post(
            "/api/notifications",
            json!({"name": "By name", "kind": "slack", "target": format!("http://localhost:{port}/x")}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let t = s
        .post_empty(&format!("/api/notifications/{by_name}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "given_up");
    assert!(t["lastError"].as_str().unwrap().contains("refused"), "{t}");
    assert!(rx.got().is_empty(), "nothing reached the private receiver");

    // Allowed 127.0.0.1, but a redirect to the metadata address is refused.
    let mut s = s;
    s.restart(&allow_local());
    rx.plan([Plan::Redirect(
        "http://169.254.169.254/latest/meta-data/".into(),
    )]);
    let t = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "given_up");
    let why = t["lastError"].as_str().unwrap();
    assert!(why.contains("169.254.169.254"), "{why}");
    assert_eq!(rx.got().len(), 1, "the first hop was allowed");
    let ok = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(ok["status"], "delivered", "{ok}");
    let log = settled_log(&s, id).await;
    let statuses: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["delivered", "given_up", "given_up"]);
}

async fn bad_channels_are_refused_and_nothing_is_stored(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["kind", "name", "target"]),
        (
            json!({"name": "x", "kind": "pager", "target": "https://x.example"}),
            vec!["kind"],
        ),
        (
            json!({"name": " ", "kind": "webhook", "target": "ftp://x"}),
            vec!["name", "target"],
        ),
        (
            json!({"name": "x", "kind": "telegram", "target": "not a chat"}),
            vec!["target", "token"],
        ),
        (
            json!({"name": "x", "kind": "slack", "target": "https://x.example", "token": "t"}),
            vec!["token"],
        ),
        (
            json!({"name": "x", "kind": "webhook", "target": "https://x.example", "eventKinds": ["incident.exploded"]}),
            vec!["eventKinds"],
        ),
        (
            json!({"name": "x", "kind": "webhook", "target": "https://x.example", "pageIds": [page + 100]}),
            vec!["pageIds"],
        ),
        (
            json!({"name": "x", "kind": "email", "target": "ops@example.com"}),
            vec!["kind"],
        ),
    ];
    for (body, fields) in cases {
        s.post("/api/notifications", body.clone())
            .await
            .invalid_fields(&fields);
    }
    let unknown = s
        .post(
            "/api/notifications",
            json!({"name": "x", "kind": "webhook", "target": "https://x.example", "colour": 1}),
        )
        .await;
    unknown.problem(422);
    assert_eq!(
        s.get("/api/notifications").await.data(200),
        json!([]),
        "nothing was stored"
    );
    assert!(
        s.db.texts("SELECT action FROM audit_events WHERE action LIKE 'notification.%'")
            .await
            .is_empty(),
        "nothing was audited"
    );

    let id = s
        .post(
            "/api/notifications",
            json!({"name": "Hook", "kind": "webhook", "target": "https://x.example/h"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let put = |body: Value| {
        let s = &s;
        async move {
            s.send(
                Method::PUT,
                &format!("/api/notifications/{id}"),
                Some(&s.key),
                Some(body),
            )
            .await
        }
    };
    put(json!({"kind": "slack"}))
        .await
        .invalid_fields(&["kind"]);
    put(json!({})).await.invalid_fields(&["body"]);
    put(json!({"target": "nope"}))
        .await
        .invalid_fields(&["target"]);
    let before = s.get(&format!("/api/notifications/{id}")).await.data(200);
    assert_eq!(before["target"], "https://x.example/h");
    let changed =
        put(json!({"name": "Renamed", "enabled": false, "eventKinds": ["incident.created"]}))
            .await
            .data(200);
    assert_eq!(changed["name"], "Renamed");
    assert_eq!(changed["enabled"], false);
    assert!(changed.get("secret").is_none(), "no rotation, no secret");
    s.get("/api/notifications/999").await.problem(404);
    s.post_empty("/api/notifications/999/test")
        .await
        .problem(404);
    s.get("/api/notifications/999/deliveries")
        .await
        .problem(404);
    s.get(&format!("/api/notifications/{id}/deliveries?status=lost"))
        .await
        .invalid_fields(&["status"]);
    // Editors may not see channels: they hold secrets.
    let editor = s.db.create_key("write");
    let r = s
        .send(Method::GET, "/api/notifications", Some(&editor), None)
        .await;
    r.problem(403);
    let gone = s.delete(&format!("/api/notifications/{id}")).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    s.get(&format!("/api/notifications/{id}"))
        .await
        .problem(404);
    let actions = s
        .db
        .texts("SELECT action FROM audit_events WHERE action LIKE 'notification.%' ORDER BY seq")
        .await;
    assert_eq!(
        actions,
        [
            "notification.create",
            "notification.update",
            "notification.delete"
        ]
    );
}

/// Three instances on one PostgreSQL database, changes written through each:
/// every change reaches the channel exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn several_instances_deliver_each_change_once() {
    let rx = Receiver::start().await;
    let a = Server::start_with(Backend::Postgres, &allow_local()).await;
    let (b, b_base) = spawn(&a.db, &allow_local());
    let (c, c_base) = spawn(&a.db, &allow_local());
    let _others = (Running(b), Running(c));
    a.post(
        "/api/notifications",
        json!({"name": "Hook", "kind": "webhook", "target": format!("{}/h", rx.base)}),
    )
    .await
    .data(201);
    let page = a.page("acme").await;
    let client = reqwest::Client::new();
    let bases = [a.base.clone(), b_base, c_base];
    for i in 0..12 {
        let r = client
            .post(format!("{}/api/v1/incidents", bases[i % 3]))
            .bearer_auth(&a.key)
            .json(&json!({"title": format!("Incident {i}"), "statusPageId": page, "impact": "minor", "message": "x"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    rx.wait_for(12, Duration::from_secs(40)).await;
    // Nothing left for any instance to send: what arrived is all there is.
    a.quiet().await;
    let got = rx.got();
    let mut titles: Vec<String> = got
        .iter()
        .map(|g| g.json()["data"]["title"].as_str().unwrap().to_string())
        .collect();
    titles.sort();
    titles.dedup();
    assert_eq!(titles.len(), 12, "every change arrived");
    assert_eq!(got.len(), 12, "and none twice: {titles:?}");
}

/// Email channels: real SMTP to aiosmtpd, read back through Python's email
/// parser: headers, plain and HTML parts, the stable Message-ID.
async fn email_channels_send_real_mail_through_smtp(b: Backend) {
    let Some(sink) = crate::smtp::SmtpSink::start("email_channels_send_real_mail_through_smtp")
    else {
        return;
    };
    // smtp_url without smtp_from stops start-up with a message saying so.
    let db = crate::support::TestDb::new(b).await;
    let out = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("UPSTATE_DATABASE_URL", &db.url)
        .env("UPSTATE_SMTP_URL", sink.url())
        .current_dir(db.dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("smtp_from"), "{err}");
    drop(db);

    let s = sink.server(b).await;
    let id = s
        .post(
            "/api/notifications",
            json!({"name": "Ops mail", "kind": "email", "target": "ops@example.com"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.post(
        "/api/v1/incidents",
        json!({"title": "API errors", "statusPageId": page, "impact": "major", "componentIds": [api],
               "message": "Looking into <errors> & timeouts\nsince 10:02",
               "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
    )
    .await
    .data(201);
    let mail = &sink.wait_for(1, WAIT).await[0];
    assert_eq!(mail["rcpt_tos"], json!(["ops@example.com"]));
    assert_eq!(mail["mail_from"], "status@example.com");
    let h = &mail["headers"];
    assert_eq!(h["subject"], "[Page acme] New incident: API errors");
    assert_eq!(h["from"], "Page acme <status@example.com>");
    assert_eq!(h["to"], "ops@example.com");
    assert!(h["date"].as_str().is_some_and(|d| !d.is_empty()), "{h}");
    let log = settled_log(&s, id).await;
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(log[0]["responseStatus"], 250);
    assert_eq!(
        h["message-id"],
        json!(format!("<upstate.msg_{}@example.com>", log[0]["id"]))
    );
    // Mail lines end in CRLF on the wire.
    let text = mail["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    assert!(
        text.contains("Looking into <errors> & timeouts\nsince 10:02"),
        "{text}"
    );
    assert!(text.contains("- API: Major outage"), "{text}");
    assert!(text.contains("/s/acme/incidents/"), "{text}");
    let html = mail["parts"]["text/html"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    assert!(
        html.contains("Looking into &lt;errors&gt; &amp; timeouts<br>since 10:02"),
        "{html}"
    );
    assert!(
        !html.contains("<errors>"),
        "the operator's text is escaped in HTML"
    );

    // The test message goes the same way and shows the relay's answer.
    let t = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "delivered", "{t}");
    assert_eq!(t["responseStatus"], 250);
    assert!(
        t["responseBody"].as_str().unwrap().contains("accepted"),
        "{t}"
    );
    let mails = sink.wait_for(2, WAIT).await;
    assert_eq!(
        mails[1]["headers"]["subject"],
        "[Page acme] Test message for Ops mail"
    );

    // The relay restarts: the connection kept from the sends above is
    // found gone before use, and the next message goes at once on a new one.
    let sink = sink.restart("email_channels_send_real_mail_through_smtp");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t = s
        .post_empty(&format!("/api/notifications/{id}/test"))
        .await
        .data(200);
    assert_eq!(t["status"], "delivered", "{t}");
    assert_eq!(sink.wait_for(1, WAIT).await.len(), 1);

    // A relay that is gone: the delivery waits to be retried, with the reason.
    drop(sink);
    s.patch(
        &format!("/api/v1/components/{api}"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    let mut pending = Value::Null;
    for _ in 0..100 {
        let log = s
            .get(&format!(
                "/api/notifications/{id}/deliveries?status=pending"
            ))
            .await
            .data(200);
        if let Some(d) = log
            .as_array()
            .and_then(|l| l.first())
            .filter(|d| d["lastError"].is_string())
        {
            pending = d.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        pending["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("mail server")),
        "a failed send waits for its retry with the reason: {pending}"
    );
}

/// The delivery log keeps a finished delivery for the install's
/// `deliveryLogDays`; the hourly prune then deletes it and the outbox events
/// no delivery needs any more. A delivery still being tried stays, however
/// old, and so does the event it is written from.
async fn the_delivery_log_is_pruned_by_age_but_pending_deliveries_stay(b: Backend) {
    const DAY: Duration = Duration::from_secs(86_400);
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn_with(
        b,
        upstate_jobs::DeliverySettings {
            give_up_after: Duration::from_secs(400 * 86_400),
            ..Default::default()
        },
    )
    .await;
    let days = |n: i64| json!({ "deliveryLogDays": n });
    app.data(Method::PUT, "/api/settings", Some(days(7)), 200)
        .await;
    for bad in [
        json!(0),
        json!(3_651),
        json!(-3),
        json!("a week"),
        json!(1.5),
    ] {
        let (status, body) = app
            .send(
                Method::PUT,
                "/api/settings",
                Some(json!({ "deliveryLogDays": bad })),
            )
            .await;
        assert!(status == 422 || status == 400, "{bad}: {status} {body}");
        assert_eq!(
            body["errors"][0]["field"], "deliveryLogDays",
            "{bad}: {body}"
        );
    }
    let settings = app.data(Method::GET, "/api/settings", None, 200).await;
    assert_eq!(settings["deliveryLogDays"], 7, "refusals changed nothing");

    let (ch, page) = hook_and_page(&app, format!("{}/h", rx.base)).await;
    let log_path = format!("/api/notifications/{}/deliveries", ch["id"]);
    open_incident(&app, &page, "Old").await;
    app.run_jobs().await;
    assert_eq!(app.send_deliveries().await, 1);
    rx.otherwise(Plan::Status(500));
    open_incident(&app, &page, "Still trying").await;
    app.run_jobs().await;
    assert_eq!(app.send_deliveries().await, 1);
    assert_eq!(log(&app, &log_path).await, ["pending", "delivered"]);
    assert!(
        unreferenced(&app).await[0] > 0,
        "pages and channels made events too"
    );

    // Younger than the setting: kept.
    app.advance(6 * DAY);
    app.run_jobs().await;
    assert_eq!(log(&app, &log_path).await, ["pending", "delivered"]);

    // Older: the finished delivery and the events nobody needs are gone;
    // the pending delivery and its event stay.
    app.advance(2 * DAY);
    let ran = app.now().millis();
    app.run_jobs().await;
    let done = app.now().millis();
    assert_eq!(log(&app, &log_path).await, ["pending"]);
    assert_eq!(unreferenced(&app).await, [0]);
    assert!(
        outbox(&app).await[0] >= 1,
        "the pending delivery's event stays"
    );
    let job = upstate_store::jobs::by_key(&app.db, "prune").await.unwrap();
    let (next, _, _) = job.expect("the prune job stays");
    assert!(
        (ran + 3_600_000..=done + 3_600_000).contains(&next.millis()),
        "it runs again in an hour"
    );

    // Once it is delivered and old, it goes too.
    rx.otherwise(Plan::Status(200));
    app.advance(DAY);
    assert_eq!(app.send_deliveries().await, 1);
    assert_eq!(log(&app, &log_path).await, ["delivered"]);
    app.advance(8 * DAY);
    app.run_jobs().await;
    assert_eq!(log(&app, &log_path).await, Vec::<String>::new());
    assert_eq!(outbox(&app).await, [0]);
}

/// The statuses in a channel's delivery log, newest first.
async fn log(app: &TestApp, path: &str) -> Vec<String> {
    app.data(Method::GET, path, None, 200)
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap().to_string())
        .collect()
}

async fn outbox(app: &TestApp) -> Vec<i64> {
    app.test_db.integers("SELECT COUNT(*) FROM outbox").await
}

/// Outbox events no delivery refers to.
async fn unreferenced(app: &TestApp) -> Vec<i64> {
    app.test_db
        .integers(
            "SELECT COUNT(*) FROM outbox WHERE id NOT IN \
             (SELECT event_id FROM deliveries WHERE event_id IS NOT NULL)",
        )
        .await
}
