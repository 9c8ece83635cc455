//! Web push end to end: a "browser" (tests/consumers/push_receiver.py, with
//! its own P-256 keys) subscribes to a page; an incident reaches its
//! endpoint as a push service would receive it; the receiver checks the
//! VAPID signature and decrypts the payload with PyPI http_ece (RFC 8291).
//! An endpoint the push service says is gone (410) is dropped; bad
//! subscriptions are refused with nothing stored.

use crate::harness::TestApp;
use crate::on_both_backends;
use crate::support::{Backend, peers, peers_available, root};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

on_both_backends!(
    a_push_reaches_the_browser_encrypted_and_signed,
    bad_push_subscriptions_are_refused,
);

struct Browser {
    child: Child,
    base: String,
    p256dh: String,
    auth: String,
    got: Receiver<Value>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn start(test: &str) -> Option<Browser> {
        let python = peers().join("consumers/venv/bin/python");
        if !peers_available(test, std::slice::from_ref(&python)) {
            return None;
        }
        let mut child = Command::new(python)
            .arg(root().join("tests/consumers/push_receiver.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the push receiver");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let hello = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the receiver started");
        Some(Browser {
            child,
            base: hello["base"].as_str().unwrap().to_string(),
            p256dh: hello["p256dh"].as_str().unwrap().to_string(),
            auth: hello["auth"].as_str().unwrap().to_string(),
            got: rx,
        })
    }

    fn subscription(&self, path: &str) -> Value {
        json!({"endpoint": format!("{}{path}", self.base), "expirationTime": null,
               "keys": {"p256dh": self.p256dh, "auth": self.auth}})
    }

    fn next(&self) -> Value {
        self.got
            .recv_timeout(Duration::from_secs(15))
            .expect("a push arrived")
    }
}

/// A visitor's request: no key.
async fn visitor(app: &TestApp, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = reqwest::Client::new().request(method, format!("{}{path}", app.base));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

async fn a_push_reaches_the_browser_encrypted_and_signed(b: Backend) {
    let Some(browser) = Browser::start("a_push_reaches_the_browser_encrypted_and_signed") else {
        return;
    };
    let app = TestApp::spawn(b).await;
    let page = app.page("acme").await;

    // The key browsers subscribe with: made once, the same every time.
    let (status, first) = visitor(&app, Method::GET, "/api/push/subscribe", None).await;
    assert_eq!(status, 200);
    let key = first["data"]["publicKey"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 87, "65 bytes, base64url: {key}");
    let (_, again) = visitor(&app, Method::GET, "/api/push/subscribe", None).await;
    assert_eq!(again["data"]["publicKey"], key.as_str());

    let (status, body) = visitor(
        &app,
        Method::POST,
        "/api/push/subscribe",
        Some(json!({"slug": "acme", "subscription": browser.subscription("/push/one")})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let endpoint = format!("{}/push/one", browser.base);
    let (_, mine) = visitor(
        &app,
        Method::GET,
        &format!("/api/push/subscribe?endpoint={}", urlencode(&endpoint)),
        None,
    )
    .await;
    assert_eq!(mine["data"]["subscribedPageIds"], json!([page]));

    app.data(
        Method::POST,
        "/api/v1/incidents",
        Some(json!({"title": "Checkout <errors>", "statusPageId": page, "impact": "major", "message": "We are looking into it."})),
        201,
    )
    .await;
    app.run_jobs().await;
    app.send_deliveries().await;
    let got = browser.next();
    assert!(got.get("error").is_none(), "{got}");
    assert_eq!(got["path"], "/push/one");
    assert_eq!(got["headers"]["content-encoding"], "aes128gcm");
    assert_eq!(got["headers"]["ttl"], "86400");
    assert_eq!(
        got["vapid"]["ok"], true,
        "signed for this push service: {got}"
    );
    assert_eq!(got["vapid"]["key"], key.as_str(), "by the install's key");
    assert_eq!(got["vapid"]["claims"]["sub"], format!("{}/", app.base));
    let payload = &got["payload"];
    assert_eq!(payload["title"], "New incident: Checkout <errors>");
    assert_eq!(payload["body"], "We are looking into it.");
    assert!(
        payload["url"]
            .as_str()
            .unwrap()
            .ends_with("/s/acme/incidents/1"),
        "{payload}"
    );
    assert!(payload["id"].as_str().unwrap().starts_with("msg_"));
    let log = app.data(Method::GET, "/api/subscribers", None, 200).await;
    assert_eq!(log[0]["kind"], "push");
    let id = log[0]["id"].as_i64().unwrap();
    let sent = app
        .data(
            Method::GET,
            &format!("/api/subscribers/{id}/deliveries"),
            None,
            200,
        )
        .await;
    assert_eq!(sent[0]["status"], "delivered");
    assert_eq!(sent[0]["responseStatus"], 201);

    // A subscription the push service says is gone is given up and dropped.
    visitor(
        &app,
        Method::POST,
        "/api/push/subscribe",
        Some(json!({"statusPageId": page, "subscription": browser.subscription("/push/gone")})),
    )
    .await;
    app.data(
        Method::POST,
        "/api/v1/incidents/1/updates",
        Some(json!({"status": "identified", "message": "Found it."})),
        201,
    )
    .await;
    app.run_jobs().await;
    app.send_deliveries().await;
    let mut paths = vec![
        browser.next()["path"].as_str().unwrap().to_string(),
        browser.next()["path"].as_str().unwrap().to_string(),
    ];
    paths.sort();
    assert_eq!(paths, ["/push/gone", "/push/one"]);
    let left: Vec<String> = app
        .data(Method::GET, "/api/subscribers", None, 200)
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["target"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        left,
        std::slice::from_ref(&endpoint),
        "the gone endpoint was dropped"
    );

    // The browser turns notifications off.
    let (status, body) = visitor(
        &app,
        Method::DELETE,
        "/api/push/subscribe",
        Some(json!({"endpoint": endpoint})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["removed"], 1);
    assert_eq!(
        app.data(Method::GET, "/api/subscribers", None, 200).await,
        json!([])
    );
    let (status, _) = visitor(
        &app,
        Method::DELETE,
        "/api/push/subscribe",
        Some(json!({"endpoint": endpoint})),
    )
    .await;
    assert_eq!(status, 404);
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn bad_push_subscriptions_are_refused(b: Backend) {
    let app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let other = app.page("other").await;
    let foreign = app.component(&other, "API").await;
    let p256dh = format!("BA{}", "A".repeat(85));
    let good = |endpoint: &str, p: &str, a: &str| json!({"endpoint": endpoint, "keys": {"p256dh": p, "auth": a}});
    let auth = "AAAAAAAAAAAAAAAAAAAAAA";
    let cases = [
        (
            json!({"subscription": good("https://push.example/x", &p256dh, auth)}),
            "statusPageId",
        ),
        (json!({"statusPageId": page}), "subscription.endpoint"),
        (
            json!({"statusPageId": page, "subscription": good("not a url", &p256dh, auth)}),
            "subscription.endpoint",
        ),
        (
            json!({"statusPageId": page, "subscription": good("https://push.example/x", "short", auth)}),
            "subscription.keys.p256dh",
        ),
        (
            json!({"statusPageId": page, "subscription": good("https://push.example/x", &p256dh, "!!")}),
            "subscription.keys.auth",
        ),
        (
            json!({"statusPageId": page, "subscription": {"endpoint": "https://push.example/x"}}),
            "subscription.keys.p256dh",
        ),
        (
            json!({"statusPageId": 999, "subscription": good("https://push.example/x", &p256dh, auth)}),
            "statusPageId",
        ),
        (
            json!({"statusPageId": page, "componentIds": [foreign], "subscription": good("https://push.example/x", &p256dh, auth)}),
            "componentIds",
        ),
        (
            json!({"statusPageId": page, "extra": 1, "subscription": good("https://push.example/x", &p256dh, auth)}),
            "extra",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = visitor(
            &app,
            Method::POST,
            "/api/push/subscribe",
            Some(body.clone()),
        )
        .await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert!(
            answer["errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["field"] == field),
            "{body}: {answer}"
        );
    }
    let (status, answer) =
        visitor(&app, Method::DELETE, "/api/push/subscribe", Some(json!({}))).await;
    assert_eq!(status, 422, "{answer}");
    // An endpoint that is no URL names no browser, as the document says:
    // refused by name, to look up or to end.
    let (status, answer) = visitor(
        &app,
        Method::GET,
        "/api/push/subscribe?endpoint=not-a-url",
        None,
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["errors"][0]["field"], "endpoint", "{answer}");
    let (status, answer) = visitor(
        &app,
        Method::DELETE,
        "/api/push/subscribe",
        Some(json!({"endpoint": "not a url"})),
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["errors"][0]["field"], "endpoint", "{answer}");
    assert_eq!(
        app.data(Method::GET, "/api/subscribers", None, 200).await,
        json!([]),
        "nothing stored"
    );
    // Team channels cannot be push.
    let (status, answer) = app
        .send(
            Method::POST,
            "/api/notifications",
            Some(json!({"name": "x", "kind": "push", "target": "https://push.example/x"})),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
}
