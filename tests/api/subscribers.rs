//! Visitors' subscriptions: email with double opt-in (the mail kept by the
//! in-process server and read by a MIME parser; `notifications.rs` proves
//! the SMTP wire), component choices, one-click unsubscribe (RFC 8058), webhook
//! subscribers, what operators see and do, and every bad input refused with
//! nothing stored.

use crate::browser::STEP_WITHIN;
use crate::on_both_backends;
use crate::receiver::Receiver;
use crate::smtp::Mail;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    email_subscribers_confirm_then_hear_and_leave_with_one_click,
    webhook_subscribers_operators_and_bad_input,
    a_confirmation_link_expires_after_a_day,
    the_opt_in_and_its_pages_speak_the_visitors_language,
    incident_followers_are_let_go_a_week_after_the_end,
    a_change_reaches_those_subscribed_when_it_committed
);
on_both_backends!(browser: visitors_subscribe_from_the_page_in_chromium, visitors_follow_one_incident_from_its_page);

const WAIT: Duration = Duration::from_secs(15);

/// A visitor's request: no key, no session.
async fn visitor(s: &Server, body: Value) -> crate::support::Resp {
    s.send(Method::POST, "/api/subscribers", None, Some(body))
        .await
}

fn link(text: &str, path: &str) -> String {
    let start = text.find("http").expect("a link");
    let url: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    assert!(url.contains(path), "{url}");
    url
}

async fn email_subscribers_confirm_then_hear_and_leave_with_one_click(b: Backend) {
    let sink = Mail::new();
    let s = sink.server(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let web = s.component(page, "Website").await;

    let asked = visitor(
        &s,
        json!({"slug": "acme", "target": "Reader@Example.com", "componentIds": [api]}),
    )
    .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    let said = asked.body.clone();
    let confirm = &sink.wait_for(1, WAIT).await[0];
    assert_eq!(confirm["rcpt_tos"], json!(["reader@example.com"]));
    assert_eq!(
        confirm["headers"]["subject"],
        "[Page acme] Confirm your subscription to Page acme"
    );
    let text = confirm["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let verify = link(
        &text[text.find("Confirm:").unwrap()..],
        "/api/subscribers/verify?token=",
    );

    // Unconfirmed: told nothing. Asking again sends no second mail, and
    // the answer is the same as for any other address.
    s.post(
        "/api/v1/incidents",
        json!({"title": "API errors", "statusPageId": page, "impact": "major", "message": "Looking", "componentIds": [api]}),
    )
    .await
    .data(201);
    let again = visitor(
        &s,
        json!({"slug": "acme", "target": "reader@example.com", "componentIds": [api]}),
    )
    .await;
    assert_eq!((again.status, &again.body), (202, &said));
    let other = visitor(
        &s,
        json!({"slug": "acme", "target": "someone.else@example.com"}),
    )
    .await;
    assert_eq!(
        (other.status, &other.body),
        (202, &said),
        "no answer tells who is subscribed"
    );
    sink.wait_for(2, WAIT).await;
    s.quiet().await;
    let to_reader = |m: &Vec<Value>| {
        m.iter()
            .filter(|m| m["rcpt_tos"] == json!(["reader@example.com"]))
            .count()
    };
    assert_eq!(
        to_reader(&sink.got().await),
        1,
        "only the confirmation reached the unconfirmed reader"
    );

    // The link confirms once; a browser gets a page.
    let client = reqwest::Client::new();
    let opened = client
        .get(&verify)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);
    assert!(
        opened
            .text()
            .await
            .unwrap()
            .contains("Subscription confirmed")
    );
    let reused = client
        .get(&verify)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(reused.status(), 404);
    assert!(reused.text().await.unwrap().contains("does not work"));

    let inc = s.get("/api/v1/incidents").await.data(200)[0]["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Found it", "status": "identified"}),
    )
    .await
    .data(201);
    let mails = sink.wait_for(3, WAIT).await;
    let update = mails
        .iter()
        .rev()
        .find(|m| m["rcpt_tos"] == json!(["reader@example.com"]))
        .unwrap();
    let h = &update["headers"];
    assert_eq!(h["subject"], "[Page acme] Identified: API errors");
    assert_eq!(h["list-unsubscribe-post"], "List-Unsubscribe=One-Click");
    let leave = h["list-unsubscribe"]
        .as_str()
        .unwrap()
        .trim_matches(['<', '>'])
        .to_string();
    assert!(
        leave.contains("/api/subscribers/unsubscribe?token="),
        "{leave}"
    );
    assert!(
        update["parts"]["text/plain"]
            .as_str()
            .unwrap()
            .contains("Found it")
    );

    // A change of the website alone is not what the reader chose.
    s.post(
        "/api/v1/incidents",
        json!({"title": "Slow pages", "statusPageId": page, "impact": "minor", "message": "Hm", "componentIds": [web]}),
    )
    .await
    .data(201);
    s.quiet().await;
    assert_eq!(
        to_reader(&sink.got().await),
        2,
        "confirmation and the API update only"
    );

    s.get("/api/subscribers?statusPageId=abc")
        .await
        .invalid_fields(&["statusPageId"]);
    let subs = s.get("/api/subscribers?q=reader").await.data(200);
    assert_eq!(subs.as_array().unwrap().len(), 1, "{subs}");
    assert_eq!(subs[0]["verified"], true);
    assert_eq!(subs[0]["componentIds"], json!([api]));
    assert_eq!(subs[0]["target"], "reader@example.com");
    let id = subs[0]["id"].as_i64().unwrap();
    let sent = s
        .get(&format!("/api/subscribers/{id}/deliveries"))
        .await
        .data(200);
    let kinds: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["incident.updated", "confirm"]);
    assert!(
        sent.as_array()
            .unwrap()
            .iter()
            .all(|d| d["status"] == "delivered")
    );

    // The message's manage link: the reader sees their choice and widens
    // it to the whole page; a component of no page is refused, unchanged.
    let text = update["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let manage = link(
        &text[text.find("Choose what you hear of:").unwrap()..],
        "/api/subscribers/manage?token=",
    );
    let page_html = client
        .get(&manage)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page_html.contains("Your subscription") && page_html.contains("reader@example.com"),
        "{page_html}"
    );
    assert!(
        page_html.contains(&format!("value=\"{api}\" checked")),
        "the chosen box is ticked"
    );
    let own: Value = client
        .get(&manage)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(own["data"]["componentIds"], json!([api]));
    assert_eq!(own["data"]["components"].as_array().unwrap().len(), 2);
    let bad = client
        .post(&manage)
        .json(&json!({"componentIds": [999_999]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let changed: Value = client
        .post(&manage)
        .json(&json!({"componentIds": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        changed["data"]["componentIds"],
        json!([]),
        "now the whole page"
    );
    let wrong = client
        .get(format!("{}/api/subscribers/manage?token=nope", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 404);

    // Opening the unsubscribe link changes nothing; the one-click POST does.
    let shown = client.get(&leave).send().await.unwrap();
    assert_eq!(shown.status(), 200);
    assert!(shown.text().await.unwrap().contains("Unsubscribe"));
    assert_eq!(
        s.get("/api/subscribers?q=reader")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let one_click = client
        .post(&leave)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(one_click.status(), 200);
    assert_eq!(
        s.get("/api/subscribers?q=reader").await.data(200),
        json!([])
    );
    let twice = client.post(&leave).send().await.unwrap();
    assert_eq!(twice.status(), 404);
}

async fn webhook_subscribers_operators_and_bad_input(b: Backend) {
    let rx = Receiver::start().await;
    let s = Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    let page = s.page("acme").await;
    let other = s.page("other").await;
    let api = s.component(page, "API").await;
    let elsewhere = s.component(other, "Elsewhere").await;

    // Without mail, the page offers webhooks and chats, not email.
    let html = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(r#"id="subscribe""#), "the form shows");
    for kind in ["webhook", "slack", "discord", "teams"] {
        assert!(html.contains(&format!(r#"value="{kind}""#)), "{kind}");
    }
    assert!(
        !html.contains(r#"value="email""#),
        "no email without a mailer"
    );

    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"slug": "acme"}), vec!["target"]),
        (json!({"target": "a@example.com"}), vec!["statusPageId"]),
        (
            json!({"slug": "acme", "kind": "telegram", "target": "-1"}),
            vec!["kind"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": "ftp://x"}),
            vec!["target"],
        ),
        (
            json!({"slug": "acme", "target": "not an address"}),
            vec!["target"],
        ),
        (
            json!({"slug": "nope", "kind": "webhook", "target": "https://x.example"}),
            vec!["statusPageId"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": "https://x.example", "componentIds": [elsewhere]}),
            vec!["componentIds"],
        ),
        (
            json!({"slug": "acme", "target": "a@example.com"}),
            vec!["kind"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": "https://x.example", "skipConfirmation": true}),
            vec!["skipConfirmation"],
        ),
    ];
    for (body, fields) in cases {
        visitor(&s, body.clone()).await.invalid_fields(&fields);
    }
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        [0],
        "nothing was stored"
    );

    let hook = format!("{}/visitor", rx.base);
    let r = visitor(
        &s,
        json!({"slug": "acme", "kind": "webhook", "target": hook, "componentIds": [api]}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    s.post(
        "/api/v1/incidents",
        json!({"title": "API errors", "statusPageId": page, "impact": "major", "message": "Looking", "componentIds": [api]}),
    )
    .await
    .data(201);
    let got = rx.wait_for(1, WAIT).await;
    assert_eq!(got[0].path, "/visitor");
    assert!(got[0].header("webhook-id").starts_with("msg_"));
    assert_eq!(
        got[0].header("webhook-signature"),
        "",
        "a visitor's webhook has no secret to sign with"
    );
    assert_eq!(got[0].json()["type"], "incident.created");

    // Operators: a key adds one (201, audited), lists, removes (audited).
    let added = s
        .post(
            "/api/subscribers",
            json!({"statusPageId": page, "kind": "slack", "target": format!("{}/slack", rx.base)}),
        )
        .await
        .data(201);
    assert_eq!(added["verified"], true);
    let all = s
        .get(&format!("/api/subscribers?statusPageId={page}"))
        .await
        .data(200);
    assert_eq!(all.as_array().unwrap().len(), 2);
    let id = added["id"].as_i64().unwrap();
    let gone = s.delete(&format!("/api/subscribers/{id}")).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    s.delete(&format!("/api/subscribers/{id}"))
        .await
        .problem(404);
    let actions =
        s.db.texts("SELECT action FROM audit_events WHERE action LIKE 'subscriber.%' ORDER BY seq")
            .await;
    assert_eq!(actions, ["subscriber.create", "subscriber.delete"]);
    // Readers may not see subscribers (personal data); a wrong key is refused, not a visitor.
    let reader = s.db.create_key("read");
    s.send(Method::GET, "/api/subscribers", Some(&reader), None)
        .await
        .problem(403);
    s.send(
        Method::POST,
        "/api/subscribers",
        Some("not-a-key"),
        Some(json!({"slug": "acme"})),
    )
    .await
    .problem(401);

    // Import: one bad row refuses the file, naming its line; nothing stored.
    let before = s.db.integers("SELECT COUNT(*) FROM subscribers").await;
    let bad = s
        .post(
            "/api/subscribers/import",
            json!({"statusPageId": page, "csv": "target,kind\nhttps://a.example/h,webhook\nftp://nope,webhook\n"}),
        )
        .await;
    bad.invalid_fields(&["csv"]);
    assert!(
        bad.body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("line 3"),
        "{}",
        bad.body
    );
    s.post(
        "/api/subscribers/import",
        json!({"statusPageId": page, "csv": "name\nx\n"}),
    )
    .await
    .invalid_fields(&["csv"]);
    s.post(
        "/api/subscribers/import",
        json!({"statusPageId": page, "csv": "email\na@example.com\n"}),
    )
    .await
    .invalid_fields(&["csv"]);
    let foreign = s
        .post(
        "/api/subscribers/import",
        json!({"statusPageId": page, "csv": format!("target,kind,componentIds\nhttps://a.example/h,webhook,{api}\nhttps://b.example/h,webhook,{elsewhere}\n")}),
    )
    .await;
    foreign.invalid_fields(&["csv"]);
    assert_eq!(
        foreign.body["errors"][0]["message"],
        format!("row 2: {elsewhere} is no component of this page"),
        "the row and the component are named"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        before
    );
    let csv = format!(
        "target,kind,componentIds\nhttps://a.example/h,webhook,{api}\nhttps://b.example/h,slack,\n"
    );
    let done = s
        .post(
            "/api/subscribers/import",
            json!({"statusPageId": page, "csv": csv}),
        )
        .await
        .data(200);
    assert_eq!(done, json!({"imported": 2, "unchanged": 0}));
    let again = s
        .post(
            "/api/subscribers/import",
            json!({"statusPageId": page, "csv": csv}),
        )
        .await
        .data(200);
    assert_eq!(again, json!({"imported": 0, "unchanged": 2}));
    let imports =
        s.db.texts("SELECT summary FROM audit_events WHERE action = 'subscriber.import'")
            .await;
    assert_eq!(imports.len(), 2);

    // A client address that keeps asking is stopped.
    let mut last = 0;
    for i in 0..8 {
        last = visitor(
            &s,
            json!({"slug": "acme", "kind": "webhook", "target": format!("https://x{i}.example")}),
        )
        .await
        .status;
    }
    assert_eq!(last, 429, "sign-ups are limited per client address");
}

/// A visitor in Chromium: the page's form (no script needed), the page
/// that says what happens next, the confirmation mail, the link that
/// turns it on. Screenshots in `target/screenshots/public/`.
async fn visitors_subscribe_from_the_page_in_chromium(b: Backend) {
    use crate::browser::{Driver, browser_available};
    use fantoccini::Locator;
    if !browser_available("visitors_subscribe_from_the_page_in_chromium") {
        return;
    }
    let sink = Mail::new();
    let s = sink.server(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.component(page, "Website").await;
    let name = if b == Backend::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    let form = d
        .c()
        .find(Locator::Css("#subscribe"))
        .await
        .expect("the subscribe form");
    form.find(Locator::Css("summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    form.find(Locator::Css(&format!("input[value='{api}']")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    d.c()
        .find(Locator::Id("sub-email"))
        .await
        .unwrap()
        .send_keys("visitor@example.com")
        .await
        .unwrap();
    // Browser notifications are offered where push exists: the button is
    // shown and the service worker registers at the root.
    let registered = d
        .until(
            "return !document.getElementById('push').hidden",
            STEP_WITHIN,
        )
        .await;
    assert!(registered.is_some(), "the push offer shows");
    let scope = d
        .js("return navigator.serviceWorker.ready.then(r => r.scope)")
        .await;
    assert_eq!(
        scope,
        json!(format!("{}/", s.base)),
        "the worker covers the pages"
    );
    d.screenshot(&format!("public/subscribe-{name}")).await;
    assert!(d.axe().await.is_empty(), "the form passes axe");
    let shown = submit_and_see(&d, "Check your inbox").await;
    assert!(shown.is_some(), "the visitor is told to check their inbox");
    d.screenshot(&format!("public/subscribe-sent-{name}")).await;

    let mail = &sink.wait_for(1, WAIT).await[0];
    let text = mail["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let verify = link(
        &text[text.find("Confirm:").unwrap()..],
        "/api/subscribers/verify?token=",
    );
    d.c().goto(&verify).await.unwrap();
    let h1 = d
        .c()
        .find(Locator::Css("h1"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(h1, "Subscription confirmed");
    d.screenshot(&format!("public/subscribe-confirmed-{name}"))
        .await;
    let subs = s.get("/api/subscribers?q=visitor").await.data(200);
    assert_eq!(subs[0]["target"], "visitor@example.com");
    assert_eq!(subs[0]["verified"], true);
    assert_eq!(
        subs[0]["componentIds"],
        json!([api]),
        "the ticked component was kept"
    );

    // A chat instead: the field becomes a URL field labelled so, and the
    // subscription starts at once.
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    d.c()
        .find(Locator::Css("#subscribe input[value='slack']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let field = d
        .js("return [document.getElementById('sub-email').type, document.getElementById('sub-label').textContent]")
        .await;
    assert_eq!(field, json!(["url", "Webhook URL"]));
    d.c()
        .find(Locator::Id("sub-email"))
        .await
        .unwrap()
        .send_keys("https://hooks.slack.com/services/T0/B0/secret")
        .await
        .unwrap();
    d.screenshot(&format!("public/subscribe-chat-{name}")).await;
    let shown = submit_and_see(&d, "Subscribed").await;
    assert!(shown.is_some(), "the chat subscription starts at once");
    let subs = s.get("/api/subscribers").await.data(200);
    let chat = subs
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "slack")
        .expect("the Slack subscriber");
    assert_eq!(chat["verified"], true);
    d.quit().await;
}

/// Sends the page's subscribe form; whether the answer's heading is `h1`
/// within ten seconds.
async fn submit_and_see(d: &crate::browser::Driver, h1: &str) -> Option<Duration> {
    d.c()
        .find(fantoccini::Locator::Css("#subscribe button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    d.until(
        &format!(
            "return !!document.querySelector('h1') && document.querySelector('h1').textContent === '{h1}'"
        ),
        STEP_WITHIN,
    )
    .await
}

/// In-process, with the test's clock: the opt-in link stops working after
/// 24 hours, and the mail the harness's sender makes is kept to be read.
async fn a_confirmation_link_expires_after_a_day(b: Backend) {
    use crate::harness::TestApp;
    let sink = Mail::new();
    let mut app = TestApp::spawn_with(b, {
        let mut delivery = upstate_jobs::DeliverySettings::default();
        sink.keep(&mut delivery);
        delivery
    })
    .await;
    app.data(
        Method::POST,
        "/api/v1/statuspages",
        Some(json!({"name": "Acme", "slug": "acme"})),
        201,
    )
    .await;
    let http = reqwest::Client::new();
    let asked = http
        .post(format!("{}/api/subscribers", app.base))
        .json(&json!({"slug": "acme", "target": "late@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(asked.status(), 202);
    assert_eq!(
        app.send_deliveries().await,
        1,
        "the confirmation is a delivery"
    );
    let mail = &sink.wait_for(1, WAIT).await[0];
    let text = mail["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let verify = link(
        &text[text.find("Confirm:").unwrap()..],
        "/api/subscribers/verify?token=",
    );
    let token = verify.rsplit("token=").next().unwrap().to_string();
    // A day and a minute later (the test's clock) the link no longer works.
    app.advance(Duration::from_secs(24 * 3600 + 60));
    let late = upstate_store::subscribers::verify(&app.db, &token, app.now()).await;
    assert!(
        matches!(late, Err(upstate_store::StoreError::NotFound(what)) if what.contains("expired")),
        "{late:?}"
    );
    // The route reads the same clock: the link a visitor opens is expired.
    let opened = http.get(&verify).send().await.unwrap();
    assert_eq!(opened.status(), 404);
    let subs = app.data(Method::GET, "/api/subscribers", None, 200).await;
    assert_eq!(subs[0]["verified"], false, "nothing changed");
}

/// A page a visitor opens from a message or a form: status and body.
async fn opened(
    client: &reqwest::Client,
    url: &str,
    accept_language: Option<&str>,
) -> (u16, String) {
    let mut req = client.get(url).header("accept", "text/html");
    if let Some(l) = accept_language {
        req = req.header("accept-language", l);
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The opt-in mail is written in the language the page was read in when
/// the visitor subscribed (French here, the install's being German); the
/// pages behind its links and the answers to the page's forms speak the
/// visitor's (`?lang=`, then the browser's, then the install's); JSON
/// stays English.
async fn the_opt_in_and_its_pages_speak_the_visitors_language(b: Backend) {
    let sink = Mail::new();
    let s = sink.server(b).await;
    s.send(
        Method::PUT,
        "/api/settings",
        Some(&s.key),
        Some(json!({"defaultLanguage": "de"})),
    )
    .await
    .data(200);
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.component(page, "Website").await;
    let base = s.base.clone();
    let client = reqwest::Client::new();

    // The page's form, answered in the language the page was shown in.
    let answer = client
        .post(format!("{base}/api/subscribers?lang=fr"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("slug=acme&kind=email&target=leser%40example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body = answer.text().await.unwrap();
    assert!(body.contains(r#"<html lang="fr">"#), "{body}");
    assert!(
        body.contains("Consultez votre boîte de réception"),
        "{body}"
    );
    assert!(body.contains("/s/acme?lang=fr"), "{body}");

    // A refused form: the heading in the page's language, nothing stored.
    let refused = client
        .post(format!("{base}/api/subscribers?lang=es"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("slug=acme&kind=email&target=not+an+address")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(
        body.contains("Eso no funcionó") && body.contains(r#"lang="es""#),
        "{body}"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
        [1],
        "only the first address is stored"
    );

    // The opt-in mail: French, as the page was read (not German, the
    // install's language).
    let mail = &sink.wait_for(1, WAIT).await[0];
    assert_eq!(
        mail["headers"]["subject"],
        "[Page acme] Confirmez votre abonnement à Page acme"
    );
    let text = mail["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    assert!(text.contains("dans les 24 heures"), "{text}");
    let verify = link(
        &text[text.find("Confirmer").expect("the French link label")..],
        "/api/subscribers/verify?token=",
    );

    // Behind the links: the browser's language, else the install's.
    let (status, body) = opened(&client, &verify, Some("fr-CH, fr;q=0.9")).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("Abonnement confirmé") && body.contains(r#"lang="fr""#),
        "{body}"
    );
    let (status, body) = opened(&client, &verify, None).await;
    assert_eq!(status, 404);
    assert!(
        body.contains("Dieser Link funktioniert nicht") && body.contains(r#"lang="de""#),
        "{body}"
    );

    let token = s.db.texts("SELECT token FROM subscribers").await.remove(0);
    let manage = format!("{base}/api/subscribers/manage?token={token}");
    let (status, body) = opened(&client, &manage, Some("es")).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("Su suscripción") && body.contains("Avisarme sobre"),
        "{body}"
    );
    assert!(
        body.contains("&amp;lang=es"),
        "its forms keep the language: {body}"
    );
    let saved = client
        .post(format!("{manage}&lang=es"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("componentIds%5B%5D=&componentIds%5B%5D={api}"))
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200);
    assert!(
        saved
            .text()
            .await
            .unwrap()
            .contains("Su elección se ha guardado")
    );
    let own = s
        .send(
            Method::GET,
            &format!("/api/subscribers/manage?token={token}"),
            None,
            None,
        )
        .await
        .data(200);
    assert_eq!(
        own["componentIds"],
        json!([api]),
        "JSON clients read the choice"
    );

    let (status, body) = opened(
        &client,
        &format!("{base}/api/subscribers/unsubscribe?token={token}&lang=ja"),
        Some("fr"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("停止しますか"), "{body}");
    assert!(body.contains(r#"lang="ja""#), "{body}");
    let left = client
        .post(format!(
            "{base}/api/subscribers/unsubscribe?token={token}&lang=ja"
        ))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(left.status(), 200);
    assert!(left.text().await.unwrap().contains("購読を解除しました"));
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM subscribers").await, [0]);
}

/// Webhook subscriptions' received types, by path.
fn types_at(rx: &Receiver, path: &str) -> Vec<String> {
    rx.got()
        .iter()
        .filter(|g| g.path == path)
        .map(|g| g.json()["type"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A visitor follows one open incident from its page: they hear of its
/// updates and resolution and of nothing else on the page; the page shows
/// each affected component with the worst status it had; the form goes
/// once the incident is resolved; bad requests store nothing.
async fn visitors_follow_one_incident_from_its_page(b: Backend) {
    use crate::browser::{Driver, browser_available};
    use fantoccini::Locator;
    let sink = Mail::new();
    let rx = Receiver::start().await;
    let s = Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
        sink.keep(&mut c.delivery);
    })
    .await;
    let page = s.page("acme").await;
    let other = s.page("other").await;
    let api = s.component(page, "API").await;
    let db = s.component(page, "Database").await;
    let web = s.component(page, "Website").await;
    let id_of = |v: Value| v["id"].as_i64().unwrap();
    let outage = id_of(s.post("/api/v1/incidents", json!({"title": "API down", "statusPageId": page, "impact": "major",
        "message": "Looking", "componentStatuses": [{"componentId": api, "status": "major_outage"}]})).await.data(201));
    s.post(
        &format!("/api/v1/incidents/{outage}/updates"),
        json!({"message": "The database is slow too", "status": "identified",
               "componentStatuses": [{"componentId": db, "status": "degraded"}]}),
    )
    .await
    .data(201);
    let slow = id_of(
        s.post(
            "/api/v1/incidents",
            json!({"title": "Website slow", "statusPageId": page, "impact": "minor",
        "message": "Looking", "componentIds": [web]}),
        )
        .await
        .data(201),
    );
    let old = id_of(
        s.post(
            "/api/v1/incidents",
            json!({"title": "Old", "statusPageId": page, "status": "resolved"}),
        )
        .await
        .data(201),
    );
    let elsewhere = id_of(s.incident(other, "Elsewhere").await);

    let hook = |p: &str| format!("{}/{p}", rx.base);
    let bad: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": elsewhere}),
            vec!["incidentId"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": old}),
            vec!["incidentId"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": 0}),
            vec!["incidentId"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": 99999}),
            vec!["incidentId"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": outage, "componentIds": [api]}),
            vec!["componentIds"],
        ),
        (
            json!({"slug": "acme", "kind": "webhook", "target": hook("f"), "incidentId": "one"}),
            vec!["incidentId"],
        ),
    ];
    for (body, fields) in bad {
        visitor(&s, body).await.invalid_fields(&fields);
    }
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM subscribers").await, [0]);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscriber_incidents")
            .await,
        [0],
        "nothing was stored"
    );

    // A follower of the outage and a subscriber of the whole page.
    let r = visitor(
        &s,
        json!({"slug": "acme", "kind": "webhook", "target": hook("follower"), "incidentId": outage}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let r = visitor(
        &s,
        json!({"slug": "acme", "kind": "webhook", "target": hook("everything")}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    s.post(
        &format!("/api/v1/incidents/{slow}/updates"),
        json!({"message": "Still slow", "status": "monitoring"}),
    )
    .await
    .data(201);
    s.post(
        &format!("/api/v1/incidents/{outage}/updates"),
        json!({"message": "Fix on its way", "status": "monitoring"}),
    )
    .await
    .data(201);
    s.post(
        &format!("/api/v1/incidents/{outage}/resolve"),
        json!({"message": "Fixed", "componentStatuses": [
            {"componentId": api, "status": "operational"},
            {"componentId": db, "status": "operational"}]}),
    )
    .await
    .data(200);
    // The page subscriber hears of all three (the components' return is
    // told within the resolution); the follower of the outage's two.
    rx.wait_for(5, WAIT).await;
    s.quiet().await;
    // Each message is a delivery of its own, sent side by side: they may
    // arrive in either order (each carries its time).
    let mut followed = types_at(&rx, "/follower");
    followed.sort();
    assert_eq!(followed, ["incident.resolved", "incident.updated"]);
    for g in rx.got().iter().filter(|g| g.path == "/follower") {
        assert_eq!(
            g.json()["data"]["subject"]["id"],
            json!(outage),
            "only the outage"
        );
    }
    let mut everything = types_at(&rx, "/everything");
    everything.sort();
    assert_eq!(
        everything,
        ["incident.resolved", "incident.updated", "incident.updated"]
    );
    let subs = s.get("/api/subscribers").await.data(200);
    let follower = subs
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == hook("follower"))
        .expect("the follower");
    assert_eq!(follower["scope"], "incidents");
    assert_eq!(follower["incidentIds"], json!([outage]));
    assert_eq!(follower["componentIds"], json!([]));

    // Resolved: the page shows what each component went through, and no
    // form (a follower of a resolved incident would hear nothing).
    let name = if b == Backend::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    let html = reqwest::get(format!("{}/s/acme/incidents/{outage}", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!html.contains(r#"id="subscribe""#), "no form once resolved");
    let row = |c: i64| {
        let at = html
            .find(&format!(r#"<li data-component="{c}">"#))
            .unwrap_or_else(|| panic!("component {c} is listed: {html}"));
        html[at..at + html[at..].find("</li>").unwrap()].to_string()
    };
    assert!(
        row(api).contains(r#"data-status="major_outage""#),
        "{}",
        row(api)
    );
    assert!(row(db).contains(r#"data-status="degraded""#), "{}", row(db));
    assert!(!html.contains(&format!(r#"<li data-component="{web}">"#)));

    if !browser_available("visitors_follow_one_incident_from_its_page") {
        return;
    }
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    d.c()
        .goto(&format!("{}/s/acme/incidents/{outage}", s.base))
        .await
        .unwrap();
    d.screenshot(&format!("public/incident-affected-{name}"))
        .await;
    assert!(d.axe().await.is_empty(), "the resolved incident passes axe");

    // The open incident offers the form, without a component choice.
    d.c()
        .goto(&format!("{}/s/acme/incidents/{slow}", s.base))
        .await
        .unwrap();
    let form = d
        .c()
        .find(Locator::Css("#subscribe"))
        .await
        .expect("the follow form");
    assert_eq!(
        form.find(Locator::Css("h2"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "Get updates on this incident"
    );
    assert!(
        form.find(Locator::Css("details")).await.is_err(),
        "no component choice"
    );
    d.c()
        .find(Locator::Id("sub-email"))
        .await
        .unwrap()
        .send_keys("reader@example.com")
        .await
        .unwrap();
    d.screenshot(&format!("public/incident-follow-{name}"))
        .await;
    assert!(d.axe().await.is_empty(), "the follow form passes axe");
    assert!(submit_and_see(&d, "Check your inbox").await.is_some());
    let back = d
        .js("return document.querySelector('main a').getAttribute('href')")
        .await;
    assert_eq!(
        back,
        json!(format!("/s/acme/incidents/{slow}?lang=en")),
        "the way back is to the incident"
    );
    let mail = &sink.wait_for(1, WAIT).await[0];
    let text = mail["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    assert!(
        text.contains("the incident “Website slow” on Page acme"),
        "the confirmation says what it is for: {text}"
    );
    let verify = link(
        &text[text.find("Confirm:").unwrap()..],
        "/api/subscribers/verify?token=",
    );
    d.c().goto(&verify).await.unwrap();
    d.quit().await;
    // Confirmed: the next update of that incident reaches the reader by
    // mail, and a change of another component does not.
    s.patch(
        &format!("/api/v1/components/{api}/status"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    s.post(
        &format!("/api/v1/incidents/{slow}/updates"),
        json!({"message": "Caches warmed", "status": "monitoring"}),
    )
    .await
    .data(201);
    let got = sink.wait_for(2, WAIT).await;
    s.quiet().await;
    let to_reader: Vec<String> = sink
        .got()
        .await
        .iter()
        .skip(1)
        .filter(|m| m["rcpt_tos"] == json!(["reader@example.com"]))
        .map(|m| m["headers"]["subject"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(to_reader.len(), 1, "{got:?}");
    assert!(to_reader[0].contains("Website slow"), "{to_reader:?}");

    // Its "choose what you hear of" link says what is followed; choosing
    // there makes the reader a page subscriber.
    let update = sink
        .got()
        .await
        .into_iter()
        .rfind(|m| m["rcpt_tos"] == json!(["reader@example.com"]))
        .unwrap();
    let text = update["parts"]["text/plain"]
        .as_str()
        .unwrap()
        .replace("\r\n", "\n");
    let manage = link(
        text.lines()
            .find(|l| l.contains("/api/subscribers/manage"))
            .expect("the manage link"),
        "/api/subscribers/manage?token=",
    );
    let own: Value = reqwest::get(&manage).await.unwrap().json().await.unwrap();
    assert_eq!(own["data"]["following"], json!(["Website slow"]));
    let (_, page_html) = opened(&reqwest::Client::new(), &manage, None).await;
    assert!(
        page_html.contains("You hear only of Website slow."),
        "{page_html}"
    );
    let chose = reqwest::Client::new()
        .post(&manage)
        .json(&json!({"componentIds": [web]}))
        .send()
        .await
        .unwrap();
    assert_eq!(chose.status(), 200);
    let reader = s.get("/api/subscribers?q=reader").await.data(200);
    assert_eq!(reader[0]["scope"], "page");
    assert_eq!(reader[0]["componentIds"], json!([web]));

    // Operators see what the webhook follower follows.
    s.db.user("ops@example.com", "admin");
    let ops = crate::support::Browser::signed_in(&s, "ops@example.com").await;
    let screen = ops.screen(&format!("/admin/incidents/{outage}")).await;
    assert!(screen.contains("1 visitor follows it"), "{screen}");
    let admin = ops.screen("/admin/subscribers").await;
    assert!(
        admin.contains(&format!(
            r#"follows <a href="/admin/incidents/{outage}">incident #{outage}</a>"#
        )),
        "{admin}"
    );
}

/// In-process, with the test's clock: a week after the last incident it
/// follows is resolved, an incident follower is let go by the hourly
/// prune; one still following an open incident stays, and so does every
/// page subscriber. Deleting an incident never makes its followers hear
/// of the whole page.
async fn incident_followers_are_let_go_a_week_after_the_end(b: Backend) {
    use crate::harness::TestApp;
    const DAY: Duration = Duration::from_secs(86_400);
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let open = |title: &str| json!({"title": title, "statusPageId": page, "impact": "minor", "message": "Looking"});
    let a = app
        .data(Method::POST, "/api/v1/incidents", Some(open("A")), 201)
        .await["id"]
        .clone();
    let b_ = app
        .data(Method::POST, "/api/v1/incidents", Some(open("B")), 201)
        .await["id"]
        .clone();
    // Their openings are told before anyone subscribes.
    app.run_jobs().await;
    let subscribe = |target: &str, incident: Option<&Value>| {
        let mut body = json!({"statusPageId": page, "kind": "webhook", "target": format!("https://{target}.example/hook")});
        if let Some(i) = incident {
            body["incidentId"] = i.clone();
        }
        body
    };
    for (target, incident) in [
        ("only-a", Some(&a)),
        ("a-and-b", Some(&a)),
        ("a-and-b", Some(&b_)),
        ("page", None),
    ] {
        app.data(
            Method::POST,
            "/api/subscribers",
            Some(subscribe(target, incident)),
            201,
        )
        .await;
    }
    let remaining = |app: &TestApp| {
        let db = app.db.clone();
        async move {
            let list = upstate_store::subscribers::list(&db, None, None, 100)
                .await
                .unwrap();
            let mut t: Vec<String> = list.into_iter().map(|s| s.target).collect();
            t.sort();
            t
        }
    };
    let all = remaining(&app).await;
    assert_eq!(all.len(), 3, "{all:?}");
    app.data(
        Method::POST,
        &format!("/api/v1/incidents/{a}/resolve"),
        Some(json!({"message": "Fixed"})),
        200,
    )
    .await;
    app.advance(6 * DAY);
    app.run_jobs().await;
    assert_eq!(remaining(&app).await, all, "kept within the week");
    app.advance(2 * DAY);
    app.run_jobs().await;
    assert_eq!(
        remaining(&app).await,
        ["https://a-and-b.example/hook", "https://page.example/hook"],
        "the follower of A alone is let go"
    );

    // B deleted: its follower hears of nothing, not of the whole page.
    app.data(
        Method::DELETE,
        &format!("/api/v1/incidents/{b_}"),
        None,
        200,
    )
    .await;
    let list = app
        .data(Method::GET, "/api/subscribers?q=a-and-b", None, 200)
        .await;
    assert_eq!(list[0]["scope"], "incidents");
    assert_eq!(list[0]["incidentIds"], json!([a]), "B's row went with it");
    app.data(Method::POST, "/api/v1/incidents", Some(open("C")), 201)
        .await;
    app.run_jobs().await;
    let deliveries = |q: &'static str| {
        let app = &app;
        async move {
            let id = app
                .data(Method::GET, &format!("/api/subscribers?q={q}"), None, 200)
                .await[0]["id"]
                .clone();
            app.data(
                Method::GET,
                &format!("/api/subscribers/{id}/deliveries"),
                None,
                200,
            )
            .await
        }
    };
    let titles = |v: Value| {
        let mut t: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["title"].as_str().unwrap_or("").to_string())
            .collect();
        t.sort();
        t
    };
    assert_eq!(
        titles(deliveries("page").await),
        ["New incident: C", "Resolved: A"],
        "the page subscriber hears of everything since it subscribed"
    );
    assert_eq!(
        titles(deliveries("a-and-b").await),
        ["Resolved: A"],
        "C is not told to B's follower"
    );
    // Who was chosen is the question; the example.com hooks are never sent to.
    app.leave_pending();
}

/// Recipients are chosen as of the commit, not as of the fan-out: an
/// address subscribed a moment after a change (before the job fanned it
/// out) is not told of that change, only of the next.
async fn a_change_reaches_those_subscribed_when_it_committed(b: Backend) {
    use crate::harness::TestApp;
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let subscribe = |who: &str| json!({"statusPageId": page, "kind": "webhook", "target": format!("https://{who}.example/hook")});
    app.data(
        Method::POST,
        "/api/subscribers",
        Some(subscribe("early")),
        201,
    )
    .await;
    let incident = app
        .data(
            Method::POST,
            "/api/v1/incidents",
            Some(json!({"title": "Down", "statusPageId": page, "message": "Looking"})),
            201,
        )
        .await["id"]
        .clone();
    // Subscribed after the commit, before the fan-out ran.
    app.data(
        Method::POST,
        "/api/subscribers",
        Some(subscribe("late")),
        201,
    )
    .await;
    app.run_jobs().await;
    let told = |kind: &str| {
        format!(
            "SELECT s.target FROM deliveries d JOIN subscribers s ON s.id = d.subscriber_id \
             JOIN outbox o ON o.id = d.event_id WHERE o.kind = '{kind}' ORDER BY s.target"
        )
    };
    assert_eq!(
        app.test_db.texts(&told("incident.created")).await,
        ["https://early.example/hook"]
    );
    app.data(
        Method::POST,
        &format!("/api/v1/incidents/{incident}/resolve"),
        Some(json!({"message": "Fixed"})),
        200,
    )
    .await;
    app.run_jobs().await;
    assert_eq!(
        app.test_db.texts(&told("incident.resolved")).await,
        ["https://early.example/hook", "https://late.example/hook"]
    );
    // The hooks are example.com addresses: who the fan-out chose is what
    // this test asks, not the sending (notifications.rs sends).
    app.leave_pending();
}
