use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    malformed_bodies,
    unknown_routes_and_methods,
    every_mistyped_field_is_reported,
    requests_too_big_for_http_get_problems
);

async fn malformed_bodies(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let before = s.snapshot().await;
    let json_ct = Some("application/json");
    for body in [
        &b"{\"name\": "[..],
        b"{name: 'x'}",
        b"not json at all",
        b"{\"name\": \"x\",}",
    ] {
        let r = s
            .send_raw(Method::POST, "/api/v1/statuspages", json_ct, body.to_vec())
            .await;
        assert!(
            r.problem(400)["detail"].as_str().unwrap().contains("JSON"),
            "{r:?}",
            r = r.body
        );
    }
    s.send_raw(Method::POST, "/api/v1/statuspages", json_ct, vec![])
        .await
        .problem(400);
    s.send_raw(
        Method::POST,
        "/api/v1/statuspages",
        json_ct,
        b"[1, 2]".to_vec(),
    )
    .await
    .invalid_fields(&["body"]);
    s.send_raw(
        Method::POST,
        "/api/v1/statuspages",
        json_ct,
        b"\"a string\"".to_vec(),
    )
    .await
    .invalid_fields(&["body"]);
    s.send_raw(
        Method::POST,
        "/api/v1/statuspages",
        Some("text/plain"),
        br#"{"name":"x","slug":"x"}"#.to_vec(),
    )
    .await
    .problem(415);
    s.send_raw(
        Method::POST,
        "/api/v1/statuspages",
        None,
        br#"{"name":"x","slug":"x"}"#.to_vec(),
    )
    .await
    .problem(415);
    // A structured-syntax JSON type is JSON too.
    s.send_raw(
        Method::POST,
        "/api/v1/components",
        Some("application/merge-patch+json; charset=utf-8"),
        serde_json::to_vec(&json!({"name": "ok", "statusPageId": p})).unwrap(),
    )
    .await
    .data(201);
    let huge = serde_json::to_vec(
        &json!({"name": "big", "slug": "big", "description": "x".repeat(1_100_000)}),
    )
    .unwrap();
    s.send_raw(Method::POST, "/api/v1/statuspages", json_ct, huge)
        .await
        .problem(413);
    let mut after = s.snapshot().await;
    // Only the one valid component was added.
    let comps = after["components"].as_array_mut().unwrap();
    assert_eq!(comps.len(), 1);
    comps.clear();
    after["pages"][0]["components"] = json!([]);
    assert_eq!(after, before);
}

async fn unknown_routes_and_methods(b: Backend) {
    let s = Server::start(b).await;
    let r = s.get("/api/v1/nothing-here").await;
    r.problem(404);
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    s.get("/nope").await.problem(404);
    s.send(Method::GET, "/api/v1/nothing-here", None, None)
        .await
        .problem(404);
    s.send(
        Method::PUT,
        "/api/v1/statuspages",
        Some(&s.key),
        Some(json!({})),
    )
    .await
    .problem(405);
    s.send(Method::DELETE, "/api/v1/incidents", Some(&s.key), None)
        .await
        .problem(405);
    s.send(
        Method::GET,
        "/api/v1/incidents/1/resolve",
        Some(&s.key),
        None,
    )
    .await
    .problem(405);
    s.get("/api/v1/statuspages/not-a-number").await.problem(404);
    s.get("/api/v1/statuspages/0").await.problem(404);
    let health = s.send(Method::GET, "/api/health", None, None).await;
    assert_eq!(health.status, 200);
    assert_eq!(health.body["database"], "ok");
}

async fn every_mistyped_field_is_reported(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let before = s.snapshot().await;
    let body = json!({"title": 5, "status": "investigating", "impact": true, "statusPageId": "one",
                      "message": ["x"], "componentIds": [1, "two"]});
    let r = s.post("/api/v1/incidents", body).await;
    r.invalid_fields(&[
        "title",
        "impact",
        "statusPageId",
        "message",
        "componentIds[1]",
    ]);
    for e in r.body["errors"].as_array().unwrap() {
        assert!(
            e["message"].as_str().unwrap().contains("invalid"),
            "a message for people: {e}"
        );
    }
    // A type error beside a good field names only the bad one.
    let r = s
        .post(
            "/api/v1/components",
            json!({"name": "ok", "statusPageId": p, "groupId": "g"}),
        )
        .await;
    r.invalid_fields(&["groupId"]);
    assert_eq!(s.snapshot().await, before, "nothing was stored");
}

/// Sends raw bytes and reads the whole answer (the server closes after these).
fn raw(base: &str, request: &[u8]) -> (u16, String, serde_json::Value) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    // The server may answer and close before reading all of a huge request.
    let _ = c.write_all(request);
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (
        status,
        head.to_ascii_lowercase(),
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

async fn requests_too_big_for_http_get_problems(b: Backend) {
    let s = Server::start(b).await;
    let long_url = format!(
        "GET /api/public/status/x?{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    let many_headers = format!(
        "GET /api/health HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..120)
            .map(|i| format!("X-H{i}: v\r\n"))
            .collect::<String>()
    );
    let huge_header = format!(
        "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(500_000)
    );
    let cases = [
        (long_url, 414),
        (many_headers, 431),
        (huge_header, 431),
        ("NOT HTTP AT ALL\r\n\r\n".into(), 400),
    ];
    for (request, status) in cases {
        let (got, head, body) = raw(&s.base, request.as_bytes());
        assert_eq!(got, status, "{head}");
        assert!(
            head.contains("content-type: application/problem+json"),
            "{head}"
        );
        assert_eq!(body["status"], json!(status), "{body}");
        assert!(
            body["type"]
                .as_str()
                .unwrap()
                .starts_with("urn:upstate:problem:"),
            "{body}"
        );
        assert!(!body["detail"].as_str().unwrap().is_empty());
    }
    // The server goes on serving.
    assert_eq!(
        s.send(Method::GET, "/api/health", None, None).await.status,
        200
    );
}
