//! Private pages behind a password, and quick links.

use crate::on_both_backends;
use crate::status_html::{fetch, quick_link, seeded};
use crate::support::{Backend, Browser, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(password_gate_opens_page_json_and_feeds_only_with_the_cookie);
on_both_backends!(wrong_passwords_are_throttled);
on_both_backends!(quick_links_are_managed_and_shown);
on_both_backends!(an_open_stream_ends_when_the_page_closes_to_its_visitor);

/// A visitor's event stream opened while the page was public ends once the
/// page asks for a password: the stream asks the gate again at every
/// change, and tells a visitor without the cookie nothing more.
async fn an_open_stream_ends_when_the_page_closes_to_its_visitor(b: Backend) {
    use futures_util::StreamExt;
    use std::time::Duration;
    let s = Server::start(b).await;
    let (p, _) = seeded(&s).await;
    s.set_page_password(p, "open sesame").await;
    let (mut stream, _, first) = crate::status_html::open_events(&s.base).await;
    assert!(first["version"].is_u64(), "{first}");
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    let rest = tokio::time::timeout(Duration::from_secs(5), async {
        let mut said = String::new();
        while let Some(Ok(chunk)) = stream.next().await {
            said.push_str(&String::from_utf8_lossy(&chunk));
        }
        said
    })
    .await
    .expect("the stream ended");
    assert!(!rest.contains("event:"), "told after it closed: {rest}");
    s.send(Method::GET, "/api/public/status/acme/events", None, None)
        .await
        .problem(401);
}

async fn verify(s: &Server, body: serde_json::Value) -> (u16, serde_json::Value, Option<String>) {
    let r = reqwest::Client::new()
        .post(format!("{}/api/verify-page-password", s.base))
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, r.json().await.unwrap_or_default(), cookie)
}

/// The form post a browser without JavaScript makes; returns (status, location, set-cookie).
async fn form_post(s: &Server, form: &str) -> (u16, String, Option<String>) {
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{}/api/verify-page-password", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.to_string())
        .send()
        .await
        .expect("request");
    let header = |n: &str| {
        r.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    (
        r.status().as_u16(),
        header("location").unwrap_or_default(),
        header("set-cookie"),
    )
}

async fn password_gate_opens_page_json_and_feeds_only_with_the_cookie(b: Backend) {
    let s = Server::start(b).await;
    let (p, _) = seeded(&s).await;
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    // Private without a password: closed to everyone.
    assert_eq!(fetch(&s, "/s/acme", &[]).await.status, 404);

    // Bad passwords are refused and nothing is set.
    for bad in [
        json!({}),
        json!({"password": "short"}),
        json!({"password": "x".repeat(129)}),
    ] {
        s.send(
            Method::PUT,
            &format!("/api/v1/statuspages/{p}/password"),
            Some(&s.key),
            Some(bad),
        )
        .await
        .invalid_fields(&["password"]);
    }
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{p}")).await.data(200)["passwordProtected"],
        false
    );
    let set = s.set_page_password(p, "open sesame").await;
    assert_eq!(set["passwordProtected"], true);
    assert!(
        !set.to_string().contains("argon2"),
        "the hash never leaves the server"
    );

    // Without the cookie: the form, never the content.
    let gate = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(gate.status, 401);
    assert_eq!(gate.header("content-type"), "text/html; charset=utf-8");
    assert!(
        gate.text
            .contains(r#"<form method="post" action="/api/verify-page-password">"#)
    );
    assert!(
        gate.text.contains(r#"type="password""#)
            && gate.text.contains("This status page is private")
    );
    for secret in [
        "Public API",
        "Database upgrade",
        "Errors",
        "Acme's services",
        "acme.png",
        "/api/feed/rss",
    ] {
        assert!(!gate.text.contains(secret), "the gate shows {secret}");
    }
    assert_eq!(gate.header("cache-control"), "no-store");
    for path in [
        "/api/public/status/acme",
        "/api/v1/public/acme",
        "/api/feed/rss?page=acme",
        "/s/acme/api/v2/summary.json",
        "/api/calendar?page=acme",
        "/api/public/status/acme/events",
    ] {
        let r = s.send(Method::GET, path, None, None).await;
        r.problem(401);
        assert!(!r.body.to_string().contains("Public API"), "{path}");
    }
    let inc_page = fetch(&s, "/s/acme/history", &[]).await;
    assert_eq!(inc_page.status, 401, "every page of it is gated");

    // Wrong password: 401 (JSON) or back to the form with a message (HTML form).
    let (status, body, cookie) =
        verify(&s, json!({"slug": "acme", "password": "open sesame!"})).await;
    assert_eq!((status, cookie), (401, None));
    assert_eq!(body["status"], 401);
    let (status, location, cookie) =
        form_post(&s, "slug=acme&password=nope&next=%2Fs%2Facme&lang=de").await;
    assert_eq!(
        (status, location.as_str(), cookie),
        (303, "/s/acme?lang=de&error=wrong", None)
    );
    let wrong = fetch(&s, "/s/acme?lang=de&error=wrong", &[]).await;
    assert!(
        wrong.text.contains("Das Passwort ist nicht richtig.")
            && wrong.text.contains(r#"role="alert""#)
    );
    // Bad requests: clear problems.
    let (status, body, _) = verify(&s, json!({"slug": "acme"})).await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("password"))
    );
    let (status, _, _) = verify(&s, json!({"slug": "nope", "password": "whatever1"})).await;
    assert_eq!(status, 404);
    // The form cannot send a visitor elsewhere.
    let (_, location, _) = form_post(
        &s,
        "slug=acme&password=nope&next=https%3A%2F%2Fevil.test%2F",
    )
    .await;
    assert!(
        location.starts_with("/?") || location.starts_with("/s/acme"),
        "{location}"
    );

    // The right password: a signed HttpOnly cookie that opens page, JSON and feeds.
    let (status, location, cookie) = form_post(
        &s,
        "slug=acme&password=open+sesame&next=%2Fs%2Facme%2Fhistory",
    )
    .await;
    assert_eq!((status, location.as_str()), (303, "/s/acme/history"));
    let cookie = cookie.expect("cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/")
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let page = fetch(&s, "/s/acme", &[("cookie", &pair)]).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Public API"));
    assert_eq!(
        page.header("cache-control"),
        "private, no-cache",
        "kept out of shared caches"
    );
    for path in [
        "/api/public/status/acme",
        "/api/feed/rss?page=acme",
        "/s/acme/api/v2/summary.json",
        "/api/badge?page=acme",
    ] {
        let r = fetch(&s, path, &[("cookie", &pair)]).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("cache-control"), "private, no-cache", "{path}");
    }
    // A forged or altered cookie opens nothing.
    let (name, value) = pair.split_once('=').unwrap();
    let (expires, mac) = value.split_once('.').unwrap();
    let later: i64 = expires.parse::<i64>().unwrap() + 86_400_000;
    let forged = format!("{name}={later}.{mac}");
    assert_eq!(
        fetch(&s, "/s/acme", &[("cookie", &forged)]).await.status,
        401
    );
    let (status, body, json_cookie) =
        verify(&s, json!({"slug": "acme", "password": "open sesame"})).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["slug"], "acme");
    assert!(json_cookie.is_some());

    // A new password ends the old cookies; removing it closes the page.
    s.set_page_password(p, "new secret").await;
    assert_eq!(fetch(&s, "/s/acme", &[("cookie", &pair)]).await.status, 401);
    let removed = s
        .send(
            Method::DELETE,
            &format!("/api/v1/statuspages/{p}/password"),
            Some(&s.key),
            None,
        )
        .await
        .data(200);
    assert_eq!(removed["passwordProtected"], false);
    assert_eq!(fetch(&s, "/s/acme", &[]).await.status, 404);
    // Both changes are in the audit log, without the password or its hash.
    let audit = s
        .get("/api/audit-events?targetType=statuspage")
        .await
        .data(200)
        .to_string();
    assert!(
        audit.contains("statuspage.password_set") && audit.contains("statuspage.password_remove")
    );
    assert!(!audit.contains("open sesame") && !audit.contains("argon2"));
    // A public page needs no password: it has none to check.
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": true}),
    )
    .await
    .data(200);
    assert_eq!(fetch(&s, "/s/acme", &[]).await.status, 200);
}

async fn wrong_passwords_are_throttled(b: Backend) {
    let s = Server::start(b).await;
    let (p, _) = seeded(&s).await;
    s.make_private(p, "open sesame").await;
    for i in 0..10 {
        let (status, _, _) = verify(
            &s,
            json!({"slug": "acme", "password": format!("guess {i}")}),
        )
        .await;
        assert_eq!(status, 401, "attempt {i}");
    }
    // The 11th attempt in a minute is refused before any checking, even with the right password.
    let (status, body, cookie) =
        verify(&s, json!({"slug": "acme", "password": "open sesame"})).await;
    assert_eq!((status, cookie), (429, None));
    assert_eq!(body["status"], 429);
    let (status, location, _) =
        form_post(&s, "slug=acme&password=open+sesame&next=%2Fs%2Facme").await;
    assert_eq!(
        (status, location.as_str()),
        (303, "/s/acme?error=throttled")
    );
    assert!(
        fetch(&s, "/s/acme?error=throttled", &[])
            .await
            .text
            .contains("Too many attempts")
    );
}

async fn quick_links_are_managed_and_shown(b: Backend) {
    let s = Server::start(b).await;
    let (p, _) = seeded(&s).await;
    let docs = quick_link(&s, p, "Documentation", "https://docs.example.com").await;
    assert_eq!(docs["order"], 0);
    let b2 = Browser::signed_in(&s, "links@example.com").await;
    let (status, help, _) = b2
        .send(
            Method::POST,
            "/api/quicklinks",
            Some(json!({"statusPageId": p, "label": "Help", "url": "https://help.example.com"})),
        )
        .await;
    assert_eq!(status, 201);
    let help = help["data"].clone();
    assert_eq!(help["order"], 1);

    // Bad input: clear errors, nothing stored.
    for (body, fields) in [
        (
            json!({"label": "x", "url": "https://x.test"}),
            vec!["statusPageId"],
        ),
        (
            json!({"statusPageId": p, "label": "", "url": "javascript:alert(1)"}),
            vec!["label", "url"],
        ),
        (
            json!({"statusPageId": p, "label": "x".repeat(101), "url": "https://x.test"}),
            vec!["label"],
        ),
        (
            json!({"statusPageId": 999999, "label": "x", "url": "https://x.test"}),
            vec!["statusPageId"],
        ),
    ] {
        let (status, problem, _) = b2.send(Method::POST, "/api/quicklinks", Some(body)).await;
        assert_eq!(status, 422, "{problem}");
        let mut got: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, fields);
    }
    let (_, list, _) = b2
        .send(
            Method::GET,
            &format!("/api/quicklinks?statusPageId={p}"),
            None,
        )
        .await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);

    // Changes show on the page at once, in order.
    let (status, moved, _) = b2
        .send(
            Method::PUT,
            &format!("/api/quicklinks/{}", help["id"]),
            Some(json!({"label": "Get help"})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(moved["data"]["label"], "Get help");
    let (status, _, _) = b2
        .send(
            Method::PUT,
            &format!("/api/quicklinks/{}", docs["id"]),
            Some(json!({"order": 5})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _, _) = b2
        .send(
            Method::PUT,
            &format!("/api/quicklinks/{}", docs["id"]),
            Some(json!({"order": -1})),
        )
        .await;
    assert_eq!(status, 422);
    let (status, _, _) = b2
        .send(
            Method::PUT,
            &format!("/api/quicklinks/{}", help["id"]),
            Some(json!({"statusPageId": 5})),
        )
        .await;
    assert_eq!(status, 422);
    let page = fetch(&s, "/s/acme", &[]).await.text;
    let (a, d) = (
        page.find("Get help").unwrap(),
        page.find("Documentation").unwrap(),
    );
    assert!(a < d, "ordered by `order`");
    let (status, _, _) = b2
        .send(
            Method::DELETE,
            &format!("/api/quicklinks/{}", docs["id"]),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert!(
        !fetch(&s, "/s/acme", &[])
            .await
            .text
            .contains("Documentation")
    );
    let (status, _, _) = b2
        .send(
            Method::GET,
            &format!("/api/quicklinks/{}", docs["id"]),
            None,
        )
        .await;
    assert_eq!(status, 404);

    // Reading needs a session; a viewer may read but not change.
    assert_eq!(
        s.send(Method::GET, "/api/quicklinks", None, None)
            .await
            .status,
        401
    );
    s.db.user("viewer@example.com", "viewer");
    let viewer = Browser::signed_in(&s, "viewer@example.com").await;
    assert_eq!(
        viewer.send(Method::GET, "/api/quicklinks", None).await.0,
        200
    );
    let (status, _, _) = viewer
        .send(
            Method::POST,
            "/api/quicklinks",
            Some(json!({"statusPageId": p, "label": "x", "url": "https://x.test"})),
        )
        .await;
    assert_eq!(status, 403);
}
