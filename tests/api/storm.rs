//! The worst day: many writers at once, slow and hostile clients. Each test
//! is one of the outside probes that once broke Upstate, kept so it stays
//! fixed (issue 24).

use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

on_both_backends!(
    eight_writers_moving_the_same_components_get_no_server_error,
    slow_and_greedy_clients_cannot_starve_the_server,
    clients_that_never_read_lose_their_connections,
    an_http2_client_is_told_to_speak_http1,
    hostile_requests_get_clear_answers_before_the_database
);

/// Incidents created, updated and resolved while they and plain status
/// changes move the same components in opposite orders, eight at a time:
/// on PostgreSQL this once deadlocked (39 of 103 writes answered 500).
async fn eight_writers_moving_the_same_components_get_no_server_error(b: Backend) {
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_API_RATE_PER_MINUTE", "0"),
            ("UPSTATE_API_RATE_PER_HOUR", "0"),
        ],
    )
    .await;
    let page = s.page("acme").await;
    let a = s.component(page, "API").await;
    let c = s.component(page, "Database").await;
    let base = s.base.clone();
    let key = s.key.clone();
    let mut writers = Vec::new();
    for w in 0..8 {
        let (base, key) = (base.clone(), key.clone());
        writers.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let send = |m: Method, path: String, body: Value| {
                http.request(m, format!("{base}{path}"))
                    .bearer_auth(&key)
                    .json(&body)
                    .send()
            };
            // Half the writers name the components one way round, half the other.
            let (first, second) = if w % 2 == 0 { (a, c) } else { (c, a) };
            let mut answers = Vec::new();
            for round in 0..6 {
                let r = send(
                    Method::POST,
                    "/api/v1/incidents".into(),
                    json!({"title": format!("w{w} r{round}"), "statusPageId": page, "message": "Looking",
                           "componentStatuses": [{"componentId": first, "status": "major_outage"},
                                                 {"componentId": second, "status": "degraded"}]}),
                )
                .await
                .unwrap();
                let status = r.status().as_u16();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                answers.push(status);
                let Some(id) = body["data"]["id"].as_i64() else {
                    continue;
                };
                for (m, path, body) in [
                    (
                        Method::PATCH,
                        format!("/api/v1/components/{second}/status"),
                        json!({"status": "partial_outage"}),
                    ),
                    (
                        Method::PATCH,
                        format!("/api/v1/incidents/{id}"),
                        json!({"status": "identified", "componentStatuses": [
                            {"componentId": second, "status": "major_outage"},
                            {"componentId": first, "status": "degraded"}]}),
                    ),
                    (
                        Method::POST,
                        format!("/api/v1/incidents/{id}/updates"),
                        json!({"message": "Fix deployed", "status": "monitoring"}),
                    ),
                    (
                        Method::PATCH,
                        format!("/api/v1/components/{first}/status"),
                        json!({"status": "operational"}),
                    ),
                    (
                        Method::POST,
                        format!("/api/v1/incidents/{id}/resolve"),
                        json!({"message": "Fixed", "componentStatuses": [
                            {"componentId": first, "status": "operational"},
                            {"componentId": second, "status": "operational"}]}),
                    ),
                ] {
                    answers.push(send(m, path, body).await.unwrap().status().as_u16());
                }
            }
            answers
        }));
    }
    let mut all = Vec::new();
    for w in writers {
        all.extend(w.await.unwrap());
    }
    let failed: Vec<&u16> = all.iter().filter(|s| !(200..300).contains(*s)).collect();
    assert_eq!(all.len(), 8 * 6 * 6, "every write was answered: {failed:?}");
    assert!(failed.is_empty(), "refused or failed writes: {failed:?}");
    let incidents = s.get("/api/v1/incidents?limit=100").await.data(200);
    assert_eq!(incidents.as_array().map(Vec::len), Some(48), "all stored");
    let audit = s.post_empty("/api/audit-events/verify").await.data(200);
    assert_eq!(audit["intact"], true, "{audit}");
    assert!(
        !s.log().contains("deadlock"),
        "no deadlock met: {}",
        s.log()
    );
}

/// A raw connection from a chosen loopback source address.
fn connect_from(source: [u8; 4], to: &str) -> TcpStream {
    let to: SocketAddr = to.trim_start_matches("http://").parse().unwrap();
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
    socket.connect(&to.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// Reads until the server closes or `limit` passes; returns what came and
/// whether the connection ended.
fn read_until_closed(c: &mut TcpStream, limit: Duration) -> (String, bool) {
    c.set_read_timeout(Some(limit)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match c.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    (String::from_utf8_lossy(&out).into_owned(), closed)
}

fn health_from(source: [u8; 4], base: &str) -> u16 {
    let mut c = connect_from(source, base);
    c.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let (text, _) = read_until_closed(&mut c, Duration::from_secs(5));
    text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// Clients that send whole requests (eight large answers pipelined) and
/// never read: two addresses cannot take every slot (each holds at most a
/// quarter of them), a third is served meanwhile, and their connections are
/// closed once a write has waited the write timeout, freeing their share.
async fn clients_that_never_read_lose_their_connections(b: Backend) {
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_MAX_CONNECTIONS", "50"),
            ("UPSTATE_WRITE_TIMEOUT_SECS", "2"),
        ],
    )
    .await;
    let base = s.base.clone();
    let result = tokio::task::spawn_blocking(move || {
        let to: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
        // Kept open, never read (those over the share are answered 429
        // and closed by the server).
        let mut held = Vec::new();
        for source in [[127, 0, 0, 17], [127, 0, 0, 18]] {
            for _ in 0..30 {
                let socket =
                    socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
                        .unwrap();
                // A small window: the server's writes fill it at once.
                socket.set_recv_buffer_size(4096).unwrap();
                socket.bind(&SocketAddr::from((source, 0)).into()).unwrap();
                socket.connect(&to.into()).unwrap();
                let mut c: TcpStream = socket.into();
                let ask = "GET /api/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(8);
                let _ = c.write_all(ask.as_bytes());
                held.push(c);
            }
        }
        std::thread::sleep(Duration::from_millis(300));
        // A third address is served at once, every time.
        for _ in 0..15 {
            let started = Instant::now();
            assert_eq!(health_from([127, 0, 0, 19], &base), 200);
            assert!(started.elapsed() < Duration::from_secs(2));
        }
        // A reader at a held address is over its share while the writes wait…
        let mut over = 0;
        for _ in 0..3 {
            if health_from([127, 0, 0, 17], &base) == 429 {
                over += 1;
            }
        }
        assert!(over > 0, "the held address is at its share");
        // …and served once they have waited the write timeout.
        let deadline = Instant::now() + Duration::from_secs(15);
        while health_from([127, 0, 0, 17], &base) != 200 {
            assert!(
                Instant::now() < deadline,
                "the stuck writes still hold the slots"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        drop(held);
    })
    .await;
    assert!(result.is_ok(), "{result:?}");
}

/// A client speaking HTTP/2 with prior knowledge gets an answer in its own
/// protocol (SETTINGS, then GOAWAY with HTTP_1_1_REQUIRED) instead of a
/// silent close; curl, a real one, then asks again over HTTP/1.1 or says
/// why.
async fn an_http2_client_is_told_to_speak_http1(b: Backend) {
    let s = Server::start(b).await;
    let base = s.base.clone();
    let got = tokio::task::spawn_blocking(move || {
        let mut c = connect_from([127, 0, 0, 21], &base);
        // The preface and an empty SETTINGS frame, as a client sends them.
        c.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
            .unwrap();
        let mut out = Vec::new();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = c.read_to_end(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(got.len() >= 26, "{got:?}");
    assert_eq!(got[3], 0x4, "a SETTINGS frame first: {got:?}");
    let away = &got[9..26];
    assert_eq!(away[3], 0x7, "then GOAWAY: {got:?}");
    assert_eq!(&away[13..17], &[0, 0, 0, 0xd], "HTTP_1_1_REQUIRED: {got:?}");
    // curl with prior knowledge: an answer either way, never silence.
    let out = std::process::Command::new("curl")
        .args([
            "-v",
            "--http2-prior-knowledge",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
        ])
        .arg(format!("{}/api/health", s.base))
        .output()
        .expect("curl");
    let said = format!(
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Debian's curl 7.88 reports the GOAWAY and its code (13 is
    // HTTP_1_1_REQUIRED); a newer one asks again over HTTP/1.1.
    assert!(
        said.starts_with("200") || (said.contains("GOAWAY") && said.contains("error=13")),
        "{said}"
    );
}

/// Half-sent requests, a client opening more connections than its share,
/// a body that never comes and one declared too large: each is cut off on
/// its own, and everyone else is served meanwhile.
async fn slow_and_greedy_clients_cannot_starve_the_server(b: Backend) {
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_MAX_CONNECTIONS_PER_CLIENT", "40"),
            ("UPSTATE_HEADER_TIMEOUT_SECS", "2"),
            ("UPSTATE_BODY_TIMEOUT_SECS", "2"),
        ],
    )
    .await;
    let base = s.base.clone();
    let greedy = [127, 0, 0, 7];
    let result = tokio::task::spawn_blocking(move || {
        // Forty half-sent requests: the client's whole share.
        let mut held: Vec<TcpStream> = (0..40)
            .map(|_| {
                let mut c = connect_from(greedy, &base);
                c.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    .unwrap();
                c
            })
            .collect();
        // The forty-first is refused at once, with a reason.
        let mut extra = connect_from(greedy, &base);
        let (text, closed) = read_until_closed(&mut extra, Duration::from_secs(5));
        assert!(text.starts_with("HTTP/1.1 429"), "{text}");
        assert!(
            text.contains("application/problem+json") && closed,
            "{text}"
        );
        // Everyone else is served meanwhile.
        let started = Instant::now();
        assert_eq!(health_from([127, 0, 0, 8], &base), 200);
        assert!(started.elapsed() < Duration::from_secs(2));
        // The half-sent requests are cut off after the header timeout.
        let started = Instant::now();
        for c in &mut held {
            let (_, closed) = read_until_closed(c, Duration::from_secs(8));
            assert!(closed, "a half-sent request is closed");
        }
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        held.clear();
        // Its share is free again.
        assert_eq!(health_from(greedy, &base), 200);

        // A declared body over the limit: 413 before a byte of it is read.
        let mut c = connect_from([127, 0, 0, 9], &base);
        c.write_all(
            b"POST /api/v1/statuspages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 104857600\r\n\r\n{",
        )
        .unwrap();
        let started = Instant::now();
        let (text, _) = read_until_closed(&mut c, Duration::from_secs(5));
        assert!(text.starts_with("HTTP/1.1 413"), "{text}");
        assert!(
            text.contains("urn:upstate:problem:payload-too-large"),
            "{text}"
        );
        assert!(started.elapsed() < Duration::from_secs(1));

        // A body that stops coming: 408 after the body timeout.
        let mut c = connect_from([127, 0, 0, 9], &base);
        c.write_all(
            b"POST /api/v1/statuspages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 100\r\n\r\n{\"name\":",
        )
        .unwrap();
        let (text, closed) = read_until_closed(&mut c, Duration::from_secs(6));
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
        assert!(closed, "the connection is closed after a 408");

        // An idle keep-alive connection is closed after the same timeout.
        let mut c = connect_from([127, 0, 0, 9], &base);
        c.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let started = Instant::now();
        let (text, closed) = read_until_closed(&mut c, Duration::from_secs(8));
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(closed && started.elapsed() < Duration::from_secs(6));
    })
    .await;
    if let Err(e) = result {
        panic!("{e}; log:\n{}", s.log());
    }
    assert_eq!(
        s.get("/api/v1/statuspages").await.data(200),
        json!([]),
        "nothing half-sent was stored"
    );
}

/// Sends raw bytes and reads the whole answer.
fn raw(base: &str, request: &[u8]) -> (u16, String, Value) {
    let mut c = connect_from([127, 0, 0, 1], base);
    c.write_all(request).unwrap();
    let (text, _) = read_until_closed(&mut c, Duration::from_secs(5));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (
        status,
        head.to_ascii_lowercase(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// What fuzzing and hostile clients sent: each gets a clear problem, the
/// same on both databases, and nothing is stored or changed.
async fn hostile_requests_get_clear_answers_before_the_database(b: Backend) {
    let s = Server::process(b).await;
    let page = s.page("acme").await;
    s.component(page, "API").await;
    let before = s.snapshot().await;
    // NUL bytes: not found in a path, refused in a query, on every kind of route.
    for path in [
        "/s/a%00b",
        "/s/acme%00/history",
        "/api/v1/public/acme%00",
        "/api/subscribers/verify/tok%00en",
        "/api/heartbeat/a%00b",
    ] {
        let r = s.send(Method::GET, path, None, None).await;
        assert_eq!(r.status, 404, "{path}: {:?}", r.body);
        assert_eq!(r.header("content-type"), Some("application/problem+json"));
    }
    for path in [
        "/api/v2/summary.json?page=a%00",
        "/api/feed/rss?page=ac%00me",
        "/api/audit-events?action=x%00",
        "/api/subscribers?search=%00",
    ] {
        let r = s.get(path).await;
        assert_eq!(r.status, 400, "{path}: {:?}", r.body);
        assert!(
            r.body["detail"].as_str().unwrap().contains("NUL"),
            "{:?}",
            r.body
        );
    }
    // A NUL inside a JSON string is named as the field it is in.
    s.send_raw(
        Method::POST,
        "/api/v1/statuspages",
        Some("application/json"),
        br#"{"name":"a\u0000b","slug":"nul"}"#.to_vec(),
    )
    .await
    .invalid_fields(&["name"]);
    // Trailing bytes after the document, and nesting without end, are not JSON we take.
    for body in [
        br#"{"name":"x","slug":"trailing"} zz"#.to_vec(),
        format!(
            r#"{{"name":"x","slug":"deep","extra":{}{}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        )
        .into_bytes(),
        format!(
            r#"{{"name":"x","slug":"deep2","extra":{}1{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        )
        .into_bytes(),
    ] {
        let r = s
            .send_raw(
                Method::POST,
                "/api/v1/statuspages",
                Some("application/json"),
                body,
            )
            .await;
        assert!(
            r.problem(400)["detail"].as_str().unwrap().contains("JSON"),
            "{:?}",
            r.body
        );
    }
    // Settings: an array is no settings document.
    let settings = s.get("/api/settings").await.data(200);
    s.send_raw(
        Method::PUT,
        "/api/settings",
        Some("application/json"),
        br#"["Renamed", "x"]"#.to_vec(),
    )
    .await
    .invalid_fields(&["body"]);
    s.send(Method::PUT, "/api/settings", Some(&s.key), Some(json!({})))
        .await
        .invalid_fields(&["body"]);
    assert_eq!(s.get("/api/settings").await.data(200), settings);
    // Invalid UTF-8 in a path: a problem, not text/plain.
    let r = s.send(Method::GET, "/s/%ff", None, None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.header("content-type"), Some("application/problem+json"));
    // HTTP/1.1 without Host is malformed; HTTP/1.0 without it is fine.
    let (status, head, body) = raw(
        &s.base,
        b"GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 400, "{head}");
    assert!(body["detail"].as_str().unwrap().contains("Host"), "{body}");
    let (status, head, _) = raw(&s.base, b"GET /api/health HTTP/1.0\r\n\r\n");
    assert_eq!(status, 200, "{head}");
    // A header block over the documented 400 KiB, in two headers: 431.
    let (status, head, _) = raw(
        &s.base,
        format!(
            "GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: {}\r\nX-B: {}\r\n\r\n",
            "a".repeat(250_000),
            "b".repeat(250_000)
        )
        .as_bytes(),
    );
    assert_eq!(status, 431, "{head}");
    assert_eq!(s.snapshot().await, before, "nothing was stored or changed");
    // An integer written with a zero fraction is the integer it is (as
    // JSON Schema has it).
    let r = s
        .post(
            "/api/v1/components",
            json!({"name": "Float id", "statusPageId": (page as f64)}),
        )
        .await;
    assert_eq!(r.data(201)["statusPageId"], json!(page));
    let r = s
        .post(
            "/api/v1/components",
            json!({"name": "Fraction", "statusPageId": (page as f64) + 0.5}),
        )
        .await;
    r.invalid_fields(&["statusPageId"]);
    // Link and heartbeat tokens are throttled per client like every
    // anonymous route: guessing costs the guesser, not us.
    for (path, budget) in [
        ("/api/subscribers/verify?token=guess", 60),
        ("/api/heartbeat/guess", 600),
    ] {
        let mut statuses = Vec::new();
        for _ in 0..=budget {
            statuses.push(s.send(Method::GET, path, None, None).await.status);
        }
        assert!(
            statuses[..budget]
                .iter()
                .all(|s| (400..500).contains(s) && *s != 429),
            "{path}: {statuses:?}"
        );
        assert_eq!(statuses[budget], 429, "{path}");
    }
    assert!(!s.log().contains("ERROR"), "no server error: {}", s.log());
}
