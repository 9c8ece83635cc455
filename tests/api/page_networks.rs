//! Pages held to some networks (their IP allowlist): every format answers
//! only clients from those networks, as trusted proxies report them; such
//! pages stay out of the static copy, the metrics and shared caches.

use crate::on_both_backends;
use crate::status_html::{fetch, seeded};
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(a_page_held_to_networks_answers_only_them);
on_both_backends!(bad_networks_are_refused_and_change_nothing);
on_both_backends!(outside_the_networks_no_password_is_tried_and_no_link_taken);

/// Believes loopback's `X-Forwarded-For`: the test speaks for many addresses.
async fn behind_a_proxy(b: Backend) -> Server {
    Server::in_process(b, |c| {
        c.server.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await
}

async fn from(s: &Server, path: &str, ip: &str) -> crate::status_html::Html {
    fetch(
        s,
        path,
        &[("x-forwarded-for", ip), ("accept", "application/json")],
    )
    .await
}

/// A visitor's subscription, from `ip`.
async fn subscribe(s: &Server, ip: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/api/subscribers", s.base))
        .header("x-forwarded-for", ip)
        .json(
            &json!({"slug": "acme", "kind": "webhook", "target": "https://hooks.example.com/acme"}),
        )
        .send()
        .await
        .expect("request");
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

const INSIDE: &str = "203.0.113.9";
const OUTSIDE: &str = "198.51.100.7";

async fn a_page_held_to_networks_answers_only_them(b: Backend) {
    let s = behind_a_proxy(b).await;
    s.features(json!({"feeds": true, "calendar": true, "history": true}))
        .await;
    let (p, _) = seeded(&s).await;
    s.page("open").await;
    let nets = s
        .send(
            Method::PUT,
            &format!("/api/v1/statuspages/{p}/access"),
            Some(&s.key),
            Some(json!({"allowedNetworks": ["203.0.113.0/24", "2001:db8::1", "203.0.113.0/24"]})),
        )
        .await
        .data(200);
    assert_eq!(
        nets["allowedNetworks"],
        json!(["203.0.113.0/24", "2001:db8::1/128"]),
        "normalised, once each"
    );
    let read = s
        .get(&format!("/api/v1/statuspages/{p}/access"))
        .await
        .data(200);
    assert_eq!(read, nets);

    let paths = [
        "/s/acme",
        "/s/acme/history",
        "/api/public/status/acme",
        "/api/v1/public/acme",
        "/api/feed/rss?page=acme",
        "/api/calendar?page=acme",
        "/s/acme/api/v2/summary.json",
        "/api/badge?page=acme",
    ];
    for path in paths {
        let inside = from(&s, path, INSIDE).await;
        assert_eq!(inside.status, 200, "{path} from inside");
        assert_eq!(
            inside.header("cache-control"),
            "private, no-cache",
            "{path}: kept out of shared caches"
        );
        let outside = from(&s, path, OUTSIDE).await;
        assert_eq!(outside.status, 403, "{path} from outside");
        assert!(
            outside.text.contains("only to some networks") && outside.text.contains(OUTSIDE),
            "{path}: {}",
            outside.text
        );
        assert!(!outside.text.contains("Public API"), "{path} leaks");
    }
    // A browser outside gets a page saying so, never the content.
    let html = fetch(
        &s,
        "/s/acme",
        &[("x-forwarded-for", OUTSIDE), ("accept", "text/html")],
    )
    .await;
    assert_eq!(html.status, 403);
    assert!(html.header("content-type").starts_with("text/html"));
    assert!(html.text.contains("only to some networks") && !html.text.contains("Public API"));
    // The socket peer counts when no proxy forwarded: loopback is outside.
    assert_eq!(fetch(&s, "/api/public/status/acme", &[]).await.status, 403);
    // The other page is open to all.
    assert_eq!(
        from(&s, "/api/public/status/open", OUTSIDE).await.status,
        200
    );

    // Subscribing is reading: refused outside, nothing stored.
    let (status, body) = subscribe(&s, OUTSIDE).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        vec![0]
    );
    let (status, body) = subscribe(&s, INSIDE).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        vec![1]
    );

    // Out of the metrics anyone can scrape.
    let metrics = fetch(&s, "/api/metrics", &[]).await.text;
    assert!(metrics.contains(r#"page="open""#), "{metrics}");
    assert!(!metrics.contains(r#"page="acme""#), "{metrics}");

    // Out of the static copy: it is for everyone.
    // In the test's own directory: both backends' runs share a process.
    let out = s.db.dir.path().join("static-copy");
    let (ok, said, err) = s.db.cli(&[
        "export-static",
        "--out",
        out.to_str().expect("path"),
        "--public-url",
        &s.base,
    ]);
    assert!(ok, "{said}{err}");
    assert!(out.join("s/open.html").exists(), "{said}");
    assert!(
        !out.join("s/acme.html").exists() && !out.join("s/acme").exists(),
        "the held page was copied"
    );
    assert!(!out.join("api/public/status/acme.json").exists());

    // The change is audited with the lists before and after.
    let audit = s
        .get("/api/audit-events?targetType=statuspage")
        .await
        .data(200)
        .to_string();
    assert!(
        audit.contains("statuspage.access") && audit.contains("203.0.113.0/24"),
        "{audit}"
    );

    // An empty list opens the page to every network again.
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"allowedNetworks": []})),
    )
    .await
    .data(200);
    let open = from(&s, "/api/public/status/acme", OUTSIDE).await;
    assert_eq!(open.status, 200);
    assert_ne!(open.header("cache-control"), "private, no-cache");
}

/// `POST` to `path` from `ip`: (status, body, set-cookie).
async fn post_from(s: &Server, path: &str, ip: &str, body: Value) -> (u16, String, Option<String>) {
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(format!("{}{path}", s.base))
        .header("x-forwarded-for", ip)
        .json(&body)
        .send()
        .await
        .expect("request");
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (
        r.status().as_u16(),
        r.text().await.unwrap_or_default(),
        cookie,
    )
}

/// Outside the networks every route of a private page answers 403 before
/// it checks anything: a password (right or wrong) is not tried, so the
/// internet gets no oracle, and a sign-in link is neither shown nor taken
/// (it still works from inside).
async fn outside_the_networks_no_password_is_tried_and_no_link_taken(b: Backend) {
    let mail = crate::smtp::Mail::new();
    let s = Server::in_process(b, |c| {
        mail.keep(&mut c.delivery);
        c.server.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    let p = crate::viewers::private_page(&s).await;
    s.set_page_password(p, "open sesame").await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"viewers": true, "viewerDomains": ["example.com"],
                    "allowedNetworks": ["203.0.113.0/24"]})),
    )
    .await
    .data(200);

    let verify = "/api/verify-page-password";
    for password in ["open sesame", "a wrong guess"] {
        let (status, body, cookie) = post_from(
            &s,
            verify,
            OUTSIDE,
            json!({"slug": "acme", "password": password}),
        )
        .await;
        assert_eq!(status, 403, "{password}: {body}");
        assert!(body.contains("only to some networks"), "{body}");
        assert_eq!(cookie, None, "{password}");
    }
    let (status, _, cookie) = post_from(
        &s,
        verify,
        INSIDE,
        json!({"slug": "acme", "password": "a wrong guess"}),
    )
    .await;
    assert_eq!((status, cookie), (401, None));
    let (status, body, cookie) = post_from(
        &s,
        verify,
        INSIDE,
        json!({"slug": "acme", "password": "open sesame"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(cookie.is_some_and(|c| c.starts_with(&format!("upstate_page_{p}="))));

    // A link asked for from inside, opened from outside.
    let (status, body, _) = post_from(
        &s,
        "/api/viewer-sign-in",
        INSIDE,
        json!({"slug": "acme", "email": "bob@example.com"}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let link = crate::viewers::links(&mail, "bob@example.com", 1).await[0].clone();
    let token = link.split("token=").nth(1).expect("a token").to_string();
    let shown = from(&s, &format!("/api/viewer-sign-in?token={token}"), OUTSIDE).await;
    assert_eq!(shown.status, 403, "{}", shown.text);
    assert!(!shown.text.contains("Partner API"));
    let confirm = format!("/api/viewer-sign-in/confirm?token={token}");
    let (status, body, cookie) = post_from(&s, &confirm, OUTSIDE, json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(cookie, None);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM page_viewers WHERE signed_in_at IS NOT NULL")
            .await,
        vec![0],
        "nobody signed in"
    );
    // The link was not used up: from inside it signs Bob in.
    let (status, _, cookie) = post_from(&s, &confirm, INSIDE, json!({})).await;
    assert_eq!(status, 303);
    assert!(cookie.is_some_and(|c| c.starts_with(&format!("upstate_viewer_{p}="))));
}

async fn bad_networks_are_refused_and_change_nothing(b: Backend) {
    let s = behind_a_proxy(b).await;
    let p = s.page("acme").await;
    let path = format!("/api/v1/statuspages/{p}/access");
    s.send(
        Method::PUT,
        &path,
        Some(&s.key),
        Some(json!({"allowedNetworks": ["10.0.0.0/8"]})),
    )
    .await
    .data(200);
    let many: Vec<String> = (0..101).map(|i| format!("10.{i}.0.0/16")).collect();
    s.send(Method::PUT, &path, Some(&s.key), Some(json!({})))
        .await
        .invalid_fields(&["body"]);
    for bad in [
        json!({"allowedNetworks": ["office"]}),
        json!({"allowedNetworks": ["10.0.0.0/33", "192.0.2.1"]}),
        json!({"allowedNetworks": many}),
    ] {
        s.send(Method::PUT, &path, Some(&s.key), Some(bad.clone()))
            .await
            .invalid_fields(&["allowedNetworks"]);
    }
    s.send(
        Method::PUT,
        &path,
        Some(&s.key),
        Some(json!({"allowedNetworks": "10.0.0.0/8"})),
    )
    .await
    .problem(422);
    assert_eq!(
        s.get(&path).await.data(200)["allowedNetworks"],
        json!(["10.0.0.0/8"]),
        "nothing changed"
    );
    // Reading keys read, never change; no page, no access.
    let read = s.db.create_key("read");
    s.send(Method::GET, &path, Some(&read), None)
        .await
        .data(200);
    s.send(
        Method::PUT,
        &path,
        Some(&read),
        Some(json!({"allowedNetworks": []})),
    )
    .await
    .problem(403);
    s.send(
        Method::GET,
        "/api/v1/statuspages/999999/access",
        Some(&s.key),
        None,
    )
    .await
    .problem(404);
    s.send(
        Method::PUT,
        "/api/v1/statuspages/999999/access",
        Some(&s.key),
        Some(json!({"allowedNetworks": []})),
    )
    .await
    .problem(404);
    assert_eq!(
        s.get(&path).await.data(200)["allowedNetworks"],
        json!(["10.0.0.0/8"])
    );
}

on_both_backends!(browser: networks_are_set_on_the_page_screen_in_chromium);

async fn networks_are_set_on_the_page_screen_in_chromium(b: Backend) {
    use crate::admin_ui::{fill, no_axe_violations, press, shot, signed_in_browser, text};
    if !crate::browser::browser_available("networks_are_set_on_the_page_screen_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ed@example.com", "editor").await;
    let p = s.page("acme").await;
    let screen = format!("{}/admin/pages/{p}", s.base);
    d.c().goto(&screen).await.unwrap();
    let yours = text(&d, "#your-address").await;
    assert!(yours.contains("127.0.0.1"), "{yours}");

    // A bad entry: the message beside the list, nothing stored.
    fill(&d, "Allowed networks", "203.0.113.0/24\noffice").await;
    press(&d, "Save networks").await;
    let html = d.c().source().await.unwrap();
    assert!(
        html.contains("&quot;office&quot; is not an address or a CIDR network")
            || html.contains("\"office\" is not an address or a CIDR network"),
        "the error shows beside the field"
    );
    let access = format!("/api/v1/statuspages/{p}/access");
    assert_eq!(s.get(&access).await.data(200)["allowedNetworks"], json!([]));

    // The office and this machine: saved, and the page opens from here.
    fill(&d, "Allowed networks", "203.0.113.0/24\n127.0.0.1").await;
    press(&d, "Save networks").await;
    assert!(text(&d, "[role=status]").await.contains("Networks saved"));
    assert_eq!(
        s.get(&access).await.data(200)["allowedNetworks"],
        json!(["203.0.113.0/24", "127.0.0.1/32"])
    );
    assert!(!text(&d, "#your-address").await.contains("not in the list"));
    d.js("document.getElementById('h-networks').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "page-networks")).await;
    no_axe_violations(&d, "page screen with networks").await;
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    assert!(d.c().source().await.unwrap().contains("acme"));

    // Only the office: this machine is told so, on the screen and the page.
    d.c().goto(&screen).await.unwrap();
    fill(&d, "Allowed networks", "203.0.113.0/24").await;
    press(&d, "Save networks").await;
    assert!(text(&d, "#your-address").await.contains("not in the list"));
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    let refused = d.c().source().await.unwrap();
    assert!(
        refused.contains("not open to your network") && refused.contains("only to some networks"),
        "{refused}"
    );
    d.screenshot(&shot(b, "page-networks-refused")).await;
    d.quit().await;
}
