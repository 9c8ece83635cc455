//! Private pages open to viewers: invited by email or allowed by domain,
//! they sign in with a mailed link (single use, 15 minutes on the server's
//! clock, a few per address) and read the page with a cookie that ends
//! when they are removed.

use crate::on_both_backends;
use crate::smtp::{Mail, SmtpSink, at_least};
use crate::status_html::fetch;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(viewers_sign_in_with_a_mailed_link_and_read_the_private_page);
on_both_backends!(viewer_settings_refuse_bad_input_and_change_nothing);
on_both_backends!(the_answer_does_not_wait_for_the_mail);

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

pub(crate) async fn ask(s: &Server, email: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/api/viewer-sign-in", s.base))
        .json(&json!({"slug": "acme", "email": email}))
        .send()
        .await
        .expect("request");
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

/// The sign-in links mailed to `to` once there are at least `n` (the mail
/// goes out after the answer), oldest first.
pub(crate) async fn links(mail: &Mail, to: &str, n: usize) -> Vec<String> {
    at_least(n, Duration::from_secs(30), async || {
        links_to(mail, to).await
    })
    .await
}

/// The sign-in links mailed to `to` so far, oldest first.
pub(crate) async fn links_to(mail: &Mail, to: &str) -> Vec<String> {
    mail.got()
        .await
        .iter()
        .filter(|m| m["rcpt_tos"].to_string().contains(to))
        .filter_map(|m| {
            let text = m["parts"]["text/plain"].as_str()?;
            let at = text.find("/api/viewer-sign-in?token=")?;
            let start = text[..at].rfind("http")?;
            Some(text[start..].split_whitespace().next()?.to_string())
        })
        .collect()
}

/// A private page "acme" with one component; its id.
pub(crate) async fn private_page(s: &Server) -> i64 {
    let p = s.page("acme").await;
    s.component(p, "Partner API").await;
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    p
}

/// An operator removes a viewer.
async fn remove(s: &Server, page: i64, viewer: i64) {
    s.send(
        Method::DELETE,
        &format!("/api/v1/statuspages/{page}/viewers/{viewer}"),
        Some(&s.key),
        None,
    )
    .await
    .data(200);
}

/// Takes a link as the confirm page's button does: (status, location, cookie).
pub(crate) async fn confirm(s: &Server, link: &str) -> (u16, String, Option<String>) {
    let token = link
        .split("token=")
        .nth(1)
        .and_then(|t| t.split('&').next())
        .unwrap_or("");
    let r = no_redirects()
        .post(format!(
            "{}/api/viewer-sign-in/confirm?token={token}",
            s.base
        ))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("lang=en")
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
        header("set-cookie").map(|c| c.split(';').next().unwrap_or("").to_string()),
    )
}

async fn viewers_sign_in_with_a_mailed_link_and_read_the_private_page(b: Backend) {
    let mail = Mail::new();
    let s = mail.server(b).await;
    let p = private_page(&s).await;
    let access = format!("/api/v1/statuspages/{p}/access");
    let set = s
        .send(
            Method::PUT,
            &access,
            Some(&s.key),
            Some(json!({"viewers": true, "viewerDomains": ["@Example.com"]})),
        )
        .await
        .data(200);
    assert_eq!(set["viewers"], true);
    assert_eq!(set["viewerDomains"], json!(["example.com"]));
    assert_eq!(set["allowedNetworks"], json!([]));
    // The page's snapshot is read before anyone is invited: an invitation
    // must reach it.
    assert_eq!(fetch(&s, "/s/acme", &[]).await.status, 401);
    let ann = s
        .post(
            &format!("/api/v1/statuspages/{p}/viewers"),
            json!({"email": "Ann@Partner.test"}),
        )
        .await
        .data(201);
    assert_eq!(ann["email"], "ann@partner.test");
    assert_eq!(ann["invited"], true);
    assert_eq!(ann["signedInAt"], Value::Null);

    // Without a cookie: the sign-in form, never the content.
    let gate = fetch(&s, "/s/acme", &[]).await;
    assert_eq!(gate.status, 401);
    assert!(gate.text.contains(r#"action="/api/viewer-sign-in""#));
    assert!(!gate.text.contains("Partner API"));
    assert!(
        !gate.text.contains("verify-page-password"),
        "no password to ask for"
    );
    let json = s
        .send(Method::GET, "/api/public/status/acme", None, None)
        .await;
    json.problem(401);
    assert!(json.body.to_string().contains("/api/viewer-sign-in"));

    // Everyone gets the same answer; only viewers get mail.
    for who in ["stranger@else.test", "ann@partner.test", "bob@example.com"] {
        let (status, body) = ask(&s, who).await;
        assert_eq!(status, 202, "{who}: {body}");
        assert!(
            body["data"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("If this address")
        );
    }
    // Mailed after the answers, in the order asked: by the time the last
    // two are in, one to the stranger would be too.
    let got = mail.wait_for(2, Duration::from_secs(30)).await;
    assert!(links_to(&mail, "stranger@else.test").await.is_empty());
    assert_eq!(got.len(), 2, "{got:?}");
    let sign_in = &got[0];
    assert!(
        sign_in["headers"]["subject"]
            .as_str()
            .unwrap_or("")
            .contains("Sign in to Page acme"),
        "{sign_in}"
    );
    let link = links(&mail, "ann@partner.test", 1).await.remove(0);
    assert!(link.starts_with(&s.base), "{link}");

    // Opening the link (as a mail scanner would) uses nothing up.
    for _ in 0..2 {
        let page = fetch(&s, &link.replace(&s.base, ""), &[]).await;
        assert_eq!(page.status, 200);
        assert!(
            page.text
                .contains(r#"action="/api/viewer-sign-in/confirm?token="#)
        );
        assert_eq!(page.header("cache-control"), "no-store");
    }
    // The button signs in and goes to the page.
    let (status, location, cookie) = confirm(&s, &link).await;
    assert_eq!((status, location.as_str()), (303, "/s/acme?lang=en"));
    let cookie = cookie.expect("the viewer's cookie");
    assert!(
        cookie.starts_with(&format!("upstate_viewer_{p}=")),
        "{cookie}"
    );
    let page = fetch(&s, "/s/acme", &[("cookie", &cookie)]).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Partner API"));
    assert_eq!(page.header("cache-control"), "private, no-cache");
    for path in [
        "/api/public/status/acme",
        "/s/acme/api/v2/summary.json",
        "/api/badge?page=acme",
    ] {
        assert_eq!(
            fetch(&s, path, &[("cookie", &cookie)]).await.status,
            200,
            "{path}"
        );
    }
    // Once only.
    assert_eq!(confirm(&s, &link).await.0, 410);
    let used = fetch(&s, &link.replace(&s.base, ""), &[("accept", "text/html")]).await;
    assert_eq!(used.status, 410);
    assert!(used.text.contains("used already or has expired"));

    // A link older than 15 minutes (on the server's clock) opens nothing.
    let bobs = links(&mail, "bob@example.com", 1).await.remove(0);
    s.advance(Duration::from_secs(16 * 60));
    assert_eq!(confirm(&s, &bobs).await.0, 410);
    // A fresh one does, and makes bob a viewer by his domain.
    ask(&s, "bob@example.com").await;
    let bobs = links(&mail, "bob@example.com", 2)
        .await
        .pop()
        .expect("a new link");
    let (status, _, bob_cookie) = confirm(&s, &bobs).await;
    assert_eq!(status, 303);
    assert!(bob_cookie.is_some());
    let list = s
        .get(&format!("/api/v1/statuspages/{p}/viewers"))
        .await
        .data(200);
    let listed: Vec<(String, bool, bool)> = list
        .as_array()
        .expect("viewers")
        .iter()
        .map(|v| {
            (
                v["email"].as_str().unwrap_or("").to_string(),
                v["invited"].as_bool().unwrap_or(true),
                !v["signedInAt"].is_null(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            ("ann@partner.test".into(), true, true),
            ("bob@example.com".into(), false, true)
        ]
    );

    // Three links to one address in 15 minutes, then nothing more.
    let before = links_to(&mail, "ann@partner.test").await.len();
    for _ in 0..4 {
        assert_eq!(ask(&s, "ann@partner.test").await.0, 202);
    }
    // One more to bob: once his is in, a fourth to her would be too.
    let bobs = links_to(&mail, "bob@example.com").await.len();
    assert_eq!(ask(&s, "bob@example.com").await.0, 202);
    links(&mail, "bob@example.com", bobs + 1).await;
    assert_eq!(links_to(&mail, "ann@partner.test").await.len(), before + 3);

    // Removed: her cookie stops opening the page at once.
    remove(&s, p, ann["id"].as_i64().expect("id")).await;
    assert_eq!(
        fetch(&s, "/s/acme", &[("cookie", &cookie)]).await.status,
        401
    );
    assert_eq!(
        fetch(
            &s,
            "/s/acme",
            &[("cookie", bob_cookie.as_deref().unwrap_or(""))]
        )
        .await
        .status,
        200
    );
    let audit = s
        .get("/api/audit-events?targetType=statuspage&limit=50")
        .await
        .data(200)
        .to_string();
    for action in [
        "statuspage.access",
        "statuspage.viewer_add",
        "statuspage.viewer_sign_in",
        "statuspage.viewer_remove",
    ] {
        assert!(audit.contains(action), "{action}");
    }

    // Viewers off: a private page without a password is closed to all.
    s.send(
        Method::PUT,
        &access,
        Some(&s.key),
        Some(json!({"viewers": false})),
    )
    .await
    .data(200);
    assert_eq!(
        fetch(
            &s,
            "/s/acme",
            &[("cookie", bob_cookie.as_deref().unwrap_or(""))]
        )
        .await
        .status,
        404
    );
    let (status, _) = ask(&s, "bob@example.com").await;
    assert_eq!(status, 404);
}

async fn viewer_settings_refuse_bad_input_and_change_nothing(b: Backend) {
    let mail = Mail::new();
    let s = mail.server(b).await;
    let p = s.page("acme").await;
    let access = format!("/api/v1/statuspages/{p}/access");
    let viewers = format!("/api/v1/statuspages/{p}/viewers");
    for bad in [
        json!({}),
        json!({"viewerDomains": ["not a domain"]}),
        json!({"viewerDomains": ["example.com", "x@y"]}),
    ] {
        let r = s
            .send(Method::PUT, &access, Some(&s.key), Some(bad.clone()))
            .await;
        r.problem(422);
        assert!(
            r.body.to_string().contains("viewerDomains") || bad == json!({}),
            "{bad}"
        );
    }
    s.send(
        Method::PUT,
        &access,
        Some(&s.key),
        Some(json!({"viewers": "yes"})),
    )
    .await
    .problem(422);
    let now = s.get(&access).await.data(200);
    assert_eq!(
        now,
        json!({"allowedNetworks": [], "viewers": false, "viewerDomains": [], "viewerSso": false})
    );
    for bad in [json!({}), json!({"email": "nobody"}), json!({"email": 7})] {
        s.send(Method::POST, &viewers, Some(&s.key), Some(bad))
            .await
            .problem(422);
    }
    s.post(&viewers, json!({"email": "ann@partner.test"}))
        .await
        .data(201);
    s.send(
        Method::POST,
        &viewers,
        Some(&s.key),
        Some(json!({"email": "ANN@partner.test"})),
    )
    .await
    .problem(409);
    assert_eq!(
        s.get(&viewers).await.data(200).as_array().map(Vec::len),
        Some(1)
    );
    let read = s.db.create_key("read");
    s.send(Method::GET, &viewers, Some(&read), None)
        .await
        .data(200);
    let refusals = [
        (
            Method::POST,
            viewers.clone(),
            Some(json!({"email": "c@d.test"})),
            403,
            &read,
        ),
        (
            Method::DELETE,
            format!("{viewers}/999999"),
            None,
            404,
            &s.key,
        ),
        (Method::DELETE, format!("{viewers}/abc"), None, 404, &s.key),
        (
            Method::GET,
            "/api/v1/statuspages/999999/viewers".to_string(),
            None,
            404,
            &s.key,
        ),
    ];
    for (method, path, body, status, key) in refusals {
        s.send(method, &path, Some(key), body).await.problem(status);
    }
    // Asking for a link: bad input is a clear 422; a page without viewers a 404.
    let (status, body) = ask(&s, "not an email").await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = ask(&s, "ann@partner.test").await;
    assert_eq!(status, 404, "viewers do not open this page");
    assert!(mail.got().await.is_empty());
}

on_both_backends!(browser: viewers_are_managed_and_sign_in_in_chromium);

async fn viewers_are_managed_and_sign_in_in_chromium(b: Backend) {
    use crate::admin_ui::{check, fill, no_axe_violations, path, press, shot, text};
    use crate::browser::{Driver, browser_available};
    if !browser_available("viewers_are_managed_and_sign_in_in_chromium") {
        return;
    }
    let mail = Mail::new();
    let s = mail.server(b).await;
    s.db.user_with("ed@example.com", "editor", crate::support::PASSWORD);
    let p = private_page(&s).await;

    // The operator turns viewers on and invites one.
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    fill(&d, "Email", "ed@example.com").await;
    fill(&d, "Password", crate::support::PASSWORD).await;
    press(&d, "Sign in").await;
    assert_eq!(path(&d).await, "/admin");
    let screen = format!("{}/admin/pages/{p}", s.base);
    d.c().goto(&screen).await.unwrap();
    check(&d, "Viewers can sign in").await;
    fill(&d, "Allowed email domains", "example.com").await;
    press(&d, "Save viewers").await;
    assert!(text(&d, "[role=status]").await.contains("Viewers saved"));
    fill(&d, "Invite by email", "not-an-email").await;
    d.js("document.querySelector('#f-email').type = 'text'")
        .await;
    press(&d, "Invite viewer").await;
    assert!(
        d.c()
            .source()
            .await
            .unwrap()
            .contains("must be an email address"),
        "the error shows beside the field"
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{p}/viewers"))
            .await
            .data(200),
        json!([]),
        "nothing stored"
    );
    fill(&d, "Invite by email", "ann@partner.test").await;
    press(&d, "Invite viewer").await;
    assert!(text(&d, "#viewers").await.contains("ann@partner.test"));
    assert_eq!(path(&d).await, format!("/admin/pages/{p}"));
    d.js("document.getElementById('h-viewers').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "page-viewers")).await;
    no_axe_violations(&d, "page screen with viewers").await;
    d.quit().await;

    // The viewer asks for a link on the page, and signs in with it.
    let v = Driver::start(&[]).await;
    v.c().set_window_size(1280, 900).await.unwrap();
    v.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    assert!(!v.c().source().await.unwrap().contains("Partner API"));
    fill(&v, "Email", "ann@partner.test").await;
    press(&v, "Email me a sign-in link").await;
    assert!(
        text(&v, "#gate-sent")
            .await
            .contains("sign-in link is on its way")
    );
    v.screenshot(&shot(b, "viewer-gate")).await;
    no_axe_violations(&v, "viewer sign-in form").await;
    let link = links(&mail, "ann@partner.test", 1).await.remove(0);
    v.c().goto(&link).await.unwrap();
    v.screenshot(&shot(b, "viewer-confirm")).await;
    press(&v, "Sign in").await;
    assert!(path(&v).await.starts_with("/s/acme"));
    assert!(v.c().source().await.unwrap().contains("Partner API"));
    v.screenshot(&shot(b, "viewer-signed-in")).await;
    // Her links for apps, from the page's footer.
    press(&v, "Feeds for your apps").await;
    let links = text(&v, ".viewer-links").await;
    assert!(links.contains("token="), "{links}");
    v.screenshot(&shot(b, "viewer-links")).await;
    no_axe_violations(&v, "a viewer's links").await;
    press(&v, "Reset my links").await;
    assert!(
        text(&v, "#links-reset")
            .await
            .contains("old ones no longer open")
    );
    assert_ne!(text(&v, ".viewer-links").await, links, "new tokens");
    // Signing out: this browser is back at the gate.
    press(&v, "Sign out").await;
    assert!(path(&v).await.starts_with("/s/acme"));
    let gate = v.c().source().await.unwrap();
    assert!(!gate.contains("Partner API") && gate.contains("/api/viewer-sign-in"));
    v.quit().await;
}

on_both_backends!(a_viewers_token_reads_feeds_until_revoked_and_subscriptions_go_with_the_viewer);

async fn a_viewers_token_reads_feeds_until_revoked_and_subscriptions_go_with_the_viewer(
    b: Backend,
) {
    let mail = Mail::new();
    let s = mail.server(b).await;
    s.features(json!({"feeds": true, "calendar": true})).await;
    let p = private_page(&s).await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"viewers": true})),
    )
    .await
    .data(200);
    let ann = s
        .post(
            &format!("/api/v1/statuspages/{p}/viewers"),
            json!({"email": "ann@partner.test"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .expect("id");
    ask(&s, "ann@partner.test").await;
    let link = links(&mail, "ann@partner.test", 1).await.remove(0);
    let (_, _, cookie) = confirm(&s, &link).await;
    let cookie = cookie.expect("cookie");

    // Her links page: every feed with her token. Without her cookie: 401.
    assert_eq!(
        fetch(&s, "/api/viewer-links?page=acme", &[]).await.status,
        401
    );
    let page = fetch(&s, "/api/viewer-links?page=acme", &[("cookie", &cookie)]).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.header("cache-control"), "no-store");
    let token = page
        .text
        .split("token=")
        .nth(1)
        .and_then(|t| t.split(['<', '&', '"']).next())
        .expect("a token")
        .to_string();
    let feeds = [
        format!("/api/feed/rss?page=acme&token={token}"),
        format!("/api/calendar?page=acme&token={token}"),
        format!("/api/public/status/acme?token={token}"),
        format!("/s/acme/api/v2/summary.json?token={token}"),
        format!("/api/badge?page=acme&token={token}"),
    ];
    for path in &feeds {
        let r = fetch(&s, path, &[]).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("cache-control"), "private, no-cache", "{path}");
    }
    assert!(fetch(&s, &feeds[0], &[]).await.text.contains("<rss"));
    // A forged token, or one of another viewer's id, reads nothing.
    let forged = format!(
        "{}.{}",
        ann + 1,
        token.split_once('.').map(|x| x.1).unwrap_or("")
    );
    for bad in ["nonsense", &forged, &format!("{ann}.00")] {
        assert_eq!(
            fetch(&s, &format!("/api/public/status/acme?token={bad}"), &[])
                .await
                .status,
            401,
            "{bad}"
        );
    }

    // She subscribes (a webhook) while signed in: it goes with her.
    let sub = reqwest::Client::new()
        .post(format!("{}/api/subscribers", s.base))
        .header("cookie", &cookie)
        .json(&json!({"slug": "acme", "kind": "webhook", "target": "https://hooks.partner.test/acme"}))
        .send()
        .await
        .expect("subscribe");
    assert_eq!(sub.status().as_u16(), 202);
    // Without being a viewer, nobody subscribes to the page.
    let stranger = reqwest::Client::new()
        .post(format!("{}/api/subscribers", s.base))
        .json(&json!({"slug": "acme", "kind": "webhook", "target": "https://evil.test/x"}))
        .send()
        .await
        .expect("subscribe");
    assert_eq!(stranger.status().as_u16(), 401);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers WHERE viewer_id IS NOT NULL")
            .await,
        vec![1]
    );

    // She resets her links: the old token stops, her browser stays in.
    let reset = no_redirects()
        .post(format!("{}/api/viewer-links/reset?page=acme", s.base))
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("lang=en")
        .send()
        .await
        .expect("reset");
    assert_eq!(reset.status().as_u16(), 303);
    let fresh = reset
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a new cookie")
        .to_string();
    assert_eq!(fetch(&s, &feeds[2], &[]).await.status, 401, "old token");
    assert_eq!(
        fetch(&s, "/s/acme", &[("cookie", &cookie)]).await.status,
        401,
        "old cookie"
    );
    let again = fetch(
        &s,
        "/api/viewer-links?page=acme&reset=1",
        &[("cookie", &fresh)],
    )
    .await;
    assert!(again.text.contains("Your links were reset"));
    let new_token = again
        .text
        .split("token=")
        .nth(1)
        .and_then(|t| t.split(['<', '&', '"']).next())
        .expect("a token")
        .to_string();
    assert_ne!(new_token, token);
    let with_new = format!("/api/public/status/acme?token={new_token}");
    assert_eq!(fetch(&s, &with_new, &[]).await.status, 200);

    // The operator revokes: token and cookie stop; removal takes her subscription.
    s.send(
        Method::POST,
        &format!("/api/v1/statuspages/{p}/viewers/{ann}/reset"),
        Some(&s.key),
        None,
    )
    .await
    .data(200);
    assert_eq!(fetch(&s, &with_new, &[]).await.status, 401);
    assert_eq!(
        fetch(&s, "/s/acme", &[("cookie", &fresh)]).await.status,
        401
    );
    remove(&s, p, ann).await;
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        vec![0]
    );
    let audit = s
        .get("/api/audit-events?targetType=statuspage&limit=50")
        .await
        .data(200)
        .to_string();
    assert!(audit.contains("statuspage.viewer_reset"));
}

/// How long the answer takes must not tell a viewer's address from a
/// stranger's: a relay that takes seconds to accept a message holds up
/// neither answer, and the link still arrives.
async fn the_answer_does_not_wait_for_the_mail(b: Backend) {
    let slow = Duration::from_secs(6);
    let Some(sink) = SmtpSink::answering_after("the_answer_does_not_wait_for_the_mail", slow)
    else {
        return;
    };
    let s = sink.server(b).await;
    let p = private_page(&s).await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"viewers": true, "viewerDomains": ["example.com"]})),
    )
    .await
    .data(200);
    for who in ["bob@example.com", "stranger@else.test"] {
        let asked = std::time::Instant::now();
        let (status, body) = ask(&s, who).await;
        assert_eq!(status, 202, "{who}: {body}");
        assert!(
            asked.elapsed() < slow / 2,
            "{who}: answered after {:?}",
            asked.elapsed()
        );
    }
    let got = sink.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got[0]["rcpt_tos"], json!(["bob@example.com"]), "{got:?}");
    assert!(
        got[0]["parts"]["text/plain"]
            .as_str()
            .unwrap_or("")
            .contains("/api/viewer-sign-in?token="),
        "{got:?}"
    );
}
