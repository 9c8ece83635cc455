//! Audience groups: each viewer sees the shared components and those of
//! their groups, in HTML, JSON, feeds and the mail their subscriptions
//! get; nothing else, nowhere.

use crate::on_both_backends;
use crate::smtp::Mail;
use crate::status_html::fetch;
use crate::support::{Backend, Server};
use crate::viewers::{ask, confirm, links, links_to, private_page};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(two_audiences_see_their_own_components_everywhere);
on_both_backends!(audience_groups_refuse_bad_input_and_change_nothing);
on_both_backends!(browser: audience_groups_are_made_in_the_page_screen);
on_both_backends!(a_public_page_shows_everyone_its_shared_components_only);

const WAIT: Duration = Duration::from_secs(20);

/// Signs `email` in as a viewer of "acme": their cookie.
async fn sign_in(s: &Server, mail: &Mail, email: &str) -> String {
    let before = links_to(mail, email).await.len();
    assert_eq!(ask(s, email).await.0, 202);
    let link = links(mail, email, before + 1)
        .await
        .pop()
        .expect("a sign-in link");
    let (status, _, cookie) = confirm(s, &link).await;
    assert_eq!(status, 303);
    cookie.expect("the viewer's cookie")
}

/// Subscribes the signed-in viewer by email and confirms it.
async fn subscribe(s: &Server, mail: &Mail, cookie: &str, email: &str) {
    let before = mail.got().await.len();
    let r = reqwest::Client::new()
        .post(format!("{}/api/subscribers", s.base))
        .header("cookie", cookie)
        .json(&json!({"slug": "acme", "kind": "email", "target": email}))
        .send()
        .await
        .expect("subscribe");
    assert_eq!(r.status().as_u16(), 202);
    let got = mail.wait_for(before + 1, WAIT).await;
    let text = got[before]["parts"]["text/plain"]
        .as_str()
        .unwrap_or("")
        .replace("\r\n", "\n");
    let at = text
        .find("/api/subscribers/verify?token=")
        .expect("a confirm link");
    let start = text[..at].rfind("http").expect("absolute");
    let link: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    assert_eq!(fetch(s, &link.replace(&s.base, ""), &[]).await.status, 200);
}

/// The text of the incident mails sent to `to`.
async fn notices_to(mail: &Mail, to: &str) -> Vec<String> {
    mail.got()
        .await
        .iter()
        .filter(|m| m["rcpt_tos"].to_string().contains(to))
        .filter(|m| {
            m["headers"]["subject"]
                .as_str()
                .is_some_and(|s| s.contains("incident"))
        })
        .map(|m| m["parts"]["text/plain"].as_str().unwrap_or("").to_string())
        .collect()
}

async fn two_audiences_see_their_own_components_everywhere(b: Backend) {
    let mail = Mail::new();
    let s = mail.server(b).await;
    s.features(json!({"feeds": true, "calendar": true})).await;
    let p = private_page(&s).await; // "Partner API": shared
    let acme_db = s.component(p, "Acme Database").await;
    let globex_db = s.component(p, "Globex Database").await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"viewers": true, "viewerDomains": ["globex.test"]})),
    )
    .await
    .data(200);
    s.post(
        &format!("/api/v1/statuspages/{p}/viewers"),
        json!({"email": "ann@acme.test"}),
    )
    .await
    .data(201);
    let groups = format!("/api/v1/statuspages/{p}/audiences");
    let acme = s
        .post(
            &groups,
            json!({"name": "Acme", "componentIds": [acme_db], "emails": ["Ann@Acme.test"]}),
        )
        .await
        .data(201);
    assert_eq!(acme["emails"], json!(["ann@acme.test"]));
    assert_eq!(acme["componentIds"], json!([acme_db]));
    s.post(
        &groups,
        json!({"name": "Globex", "componentIds": [globex_db], "emailDomains": ["@globex.test"]}),
    )
    .await
    .data(201);
    let listed = s.get(&groups).await.data(200);
    let names: Vec<&str> = listed
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(names, ["Acme", "Globex"]);

    let ann = sign_in(&s, &mail, "ann@acme.test").await;
    let bob = sign_in(&s, &mail, "bob@globex.test").await;
    subscribe(&s, &mail, &ann, "ann@acme.test").await;
    subscribe(&s, &mail, &bob, "bob@globex.test").await;
    // Bob reads the feeds with his token, as a feed reader would.
    let links = fetch(&s, "/api/viewer-links?page=acme", &[("cookie", &bob)]).await;
    let token = links
        .text
        .split("token=")
        .nth(1)
        .and_then(|t| t.split(['<', '&', '"']).next())
        .expect("a token")
        .to_string();

    // An incident about Acme's database only, and one about both.
    s.post(
        "/api/v1/incidents",
        json!({"title": "Acme replica lag", "statusPageId": p, "impact": "minor",
               "componentIds": [acme_db], "message": "Replication is behind.",
               "componentStatuses": [{"componentId": acme_db, "status": "degraded"}]}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/incidents",
        json!({"title": "Storage array failure", "statusPageId": p, "impact": "major",
               "componentIds": [acme_db, globex_db], "message": "Both databases are down.",
               "componentStatuses": [{"componentId": acme_db, "status": "major_outage"},
                                     {"componentId": globex_db, "status": "major_outage"}]}),
    )
    .await
    .data(201);

    // HTML and JSON: each their own components, and the shared one.
    for (who, cookie, mine, theirs, own_incident) in [
        ("ann", &ann, "Acme Database", "Globex Database", true),
        ("bob", &bob, "Globex Database", "Acme Database", false),
    ] {
        for path in [
            "/s/acme",
            "/api/public/status/acme",
            "/s/acme/api/v2/summary.json",
        ] {
            let r = fetch(&s, path, &[("cookie", cookie)]).await;
            assert_eq!(r.status, 200, "{who} {path}");
            assert!(r.text.contains("Partner API"), "{who} {path}: shared");
            assert!(r.text.contains(mine), "{who} {path}: own");
            assert!(!r.text.contains(theirs), "{who} {path}: {theirs} shows");
            assert!(r.text.contains("Storage array failure"), "{who} {path}");
            assert_eq!(
                r.text.contains("Acme replica lag"),
                own_incident,
                "{who} {path}: an incident about hidden components only"
            );
        }
    }
    let json: Value = serde_json::from_str(
        &fetch(&s, "/api/public/status/acme", &[("cookie", &bob)])
            .await
            .text,
    )
    .unwrap_or_default();
    assert!(!json.to_string().contains(&format!(":{acme_db},")));
    for path in [
        format!("/api/feed/rss?page=acme&token={token}"),
        format!("/api/feed/rss?page=acme&format=atom&token={token}"),
        format!("/api/calendar?page=acme&token={token}"),
    ] {
        let r = fetch(&s, &path, &[]).await;
        assert_eq!(r.status, 200, "{path}");
        assert!(!r.text.contains("Acme replica lag"), "{path}");
        assert!(!r.text.contains("Acme Database"), "{path}");
    }
    let rss = fetch(&s, &format!("/api/feed/rss?page=acme&token={token}"), &[]).await;
    let channel = rss::Channel::read_from(rss.text.as_bytes()).expect("valid RSS 2.0");
    let titles: Vec<String> = channel
        .items()
        .iter()
        .filter_map(|i| i.title().map(str::to_string))
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("Storage array failure")),
        "{titles:?}"
    );

    // Mail: Ann hears of both incidents, Bob of the one he can see, and
    // his message names only his database.
    // Each is mailed on its own: wait for all three, then for nothing
    // more to be due, before counting.
    let deadline = std::time::Instant::now() + WAIT;
    while (notices_to(&mail, "ann@acme.test").await.len() < 2
        || notices_to(&mail, "bob@globex.test").await.is_empty())
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.quiet().await;
    let anns = notices_to(&mail, "ann@acme.test").await;
    assert_eq!(anns.len(), 2, "{anns:?}");
    let bobs = notices_to(&mail, "bob@globex.test").await;
    assert_eq!(bobs.len(), 1, "{bobs:?}");
    assert!(bobs[0].contains("Storage array failure"), "{}", bobs[0]);
    assert!(bobs[0].contains("Globex Database"), "{}", bobs[0]);
    assert!(!bobs[0].contains("Acme"), "{}", bobs[0]);
    assert!(anns.iter().all(|m| !m.contains("Globex")), "{anns:?}");

    // Bob's live stream: a change of Acme's database (hidden from him)
    // sends him nothing, not even a new version; a change of the shared
    // component does.
    let r = reqwest::Client::new()
        .get(format!("{}/api/public/status/acme/events", s.base))
        .header("cookie", &bob)
        .send()
        .await
        .expect("stream");
    assert_eq!(r.status(), 200);
    let mut stream = r.bytes_stream();
    let mut buf = String::new();
    let soon = || std::time::Instant::now() + Duration::from_secs(5);
    let (name, first) = crate::status_html::next_sse(&mut stream, &mut buf, soon())
        .await
        .expect("the first event");
    assert_eq!(name, "status");
    s.patch(
        &format!("/api/v1/components/{acme_db}/status"),
        json!({"status": "operational"}),
    )
    .await
    .data(200);
    let shared =
        s.db.integers("SELECT id FROM components WHERE name = 'Partner API'")
            .await[0];
    s.patch(
        &format!("/api/v1/components/{shared}/status"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    let mut heard = Vec::new();
    while let Some((name, data)) = crate::status_html::next_sse(&mut stream, &mut buf, soon()).await
    {
        let done = name == "status";
        heard.push((name, data));
        if done {
            break;
        }
    }
    assert!(
        !heard.iter().any(|(_, d)| d["component"] == acme_db),
        "{heard:?}"
    );
    assert_eq!(
        heard.len(),
        2,
        "the shared change and one status: {heard:?}"
    );
    assert_eq!(heard[0].1["kind"], "component.status_changed", "{heard:?}");
    assert_eq!(heard[0].1["component"], shared, "{heard:?}");
    assert!(
        heard[1].1["version"].as_u64() > first["version"].as_u64(),
        "{heard:?}"
    );

    // A group removed: its component is shared again.
    s.send(
        Method::DELETE,
        &format!("{groups}/{}", acme["id"]),
        Some(&s.key),
        None,
    )
    .await
    .data(200);
    let r = fetch(&s, "/s/acme", &[("cookie", &bob)]).await;
    assert!(r.text.contains("Acme Database") && r.text.contains("Acme replica lag"));
    let audit = s
        .get("/api/audit-events?targetType=statuspage&limit=100")
        .await
        .data(200)
        .to_string();
    for action in ["statuspage.audience_create", "statuspage.audience_delete"] {
        assert!(audit.contains(action), "{action}");
    }
}

async fn audience_groups_refuse_bad_input_and_change_nothing(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let mine = s.component(p, "API").await;
    let other = s.page("other").await;
    let foreign = s.component(other, "Elsewhere").await;
    let groups = format!("/api/v1/statuspages/{p}/audiences");
    let good = s
        .post(&groups, json!({"name": "Acme", "componentIds": [mine]}))
        .await
        .data(201);
    let id = good["id"].as_i64().expect("id");
    let audits = || async {
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action LIKE 'statuspage.audience%'")
            .await
    };
    let before = audits().await;
    for (body, fields) in [
        (json!({"componentIds": [mine]}), vec!["name"]),
        (json!({"name": ""}), vec!["name"]),
        (
            json!({"name": "X", "componentIds": [0]}),
            vec!["componentIds"],
        ),
        (
            json!({"name": "X", "componentIds": [foreign]}),
            vec!["componentIds"],
        ),
        (json!({"name": "X", "emails": ["nope"]}), vec!["emails"]),
        (
            json!({"name": "X", "emailDomains": ["not a domain"]}),
            vec!["emailDomains"],
        ),
    ] {
        s.post(&groups, body.clone()).await.invalid_fields(&fields);
    }
    let put = format!("{groups}/{id}");
    for (body, fields) in [
        (json!({}), vec!["body"]),
        (json!({"componentIds": [foreign]}), vec!["componentIds"]),
        (json!({"emails": ["a@b.test", "bad"]}), vec!["emails"]),
    ] {
        s.send(Method::PUT, &put, Some(&s.key), Some(body))
            .await
            .invalid_fields(&fields);
    }
    s.post(&groups, json!({"name": "Acme"})).await.problem(409);
    s.post("/api/v1/statuspages/999999/audiences", json!({"name": "X"}))
        .await
        .problem(404);
    s.send(
        Method::PUT,
        &format!("{groups}/{}", id + 100),
        Some(&s.key),
        Some(json!({"name": "Y"})),
    )
    .await
    .problem(404);
    s.send(
        Method::DELETE,
        &format!("/api/v1/statuspages/{other}/audiences/{id}"),
        Some(&s.key),
        None,
    )
    .await
    .problem(404);
    let read = s
        .send(
            Method::POST,
            &groups,
            Some(&s.db.create_key("read")),
            Some(json!({"name": "Z"})),
        )
        .await;
    read.problem(403);
    assert_eq!(
        s.get(&groups).await.data(200),
        json!([good]),
        "nothing changed"
    );
    assert_eq!(audits().await, before, "nothing audited");
}

async fn audience_groups_are_made_in_the_page_screen(b: Backend) {
    use crate::admin_ui::{fill, no_axe_violations, path, press, shot, text};
    use crate::browser::browser_available;
    if !browser_available("audience_groups_are_made_in_the_page_screen") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", crate::admin_ui::PW);
    let p = private_page(&s).await;
    let db = s.component(p, "Acme Database").await;
    let d = crate::admin_ui::browser_of(&s, "ed@example.com").await;
    assert_eq!(path(&d).await, "/admin");
    d.c()
        .goto(&format!("{}/admin/pages/{p}", s.base))
        .await
        .unwrap();
    fill(&d, "Audience name", "Acme").await;
    d.js(&format!(
        "document.querySelector('form [name=\"componentIds[]:int\"][value=\"{db}\"]').click()"
    ))
    .await;
    fill(&d, "Viewer email domains", "not a domain").await;
    press(&d, "Add audience").await;
    assert!(
        d.c()
            .source()
            .await
            .unwrap()
            .contains("not an email domain"),
        "the error shows beside the field"
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{p}/audiences"))
            .await
            .data(200),
        json!([]),
        "nothing stored"
    );
    fill(&d, "Viewer email domains", "acme.test").await;
    press(&d, "Add audience").await;
    assert!(text(&d, "[role=status]").await.contains("Audience added"));
    let stored = s
        .get(&format!("/api/v1/statuspages/{p}/audiences"))
        .await
        .data(200);
    assert_eq!(stored[0]["componentIds"], json!([db]), "{stored}");
    assert_eq!(stored[0]["emailDomains"], json!(["acme.test"]));
    assert!(text(&d, "details.audience summary").await.contains("Acme"));
    d.js("document.querySelector('details.audience').open = true; document.getElementById('h-audiences').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "page-audiences")).await;
    no_axe_violations(&d, "page screen with audiences").await;
    d.quit().await;
}

/// On a public page nobody signs in: a component in an audience is shown
/// to no visitor, nor in the metrics, and the page's answers stay out of
/// shared caches.
async fn a_public_page_shows_everyone_its_shared_components_only(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let everyone = s.component(p, "Everyone API").await;
    let hidden = s.component(p, "Customer Vault").await;
    let before = fetch(&s, "/s/acme", &[]).await;
    assert!(before.text.contains("Customer Vault"));
    s.post(
        &format!("/api/v1/statuspages/{p}/audiences"),
        json!({"name": "Vault customers", "componentIds": [hidden], "emailDomains": ["vault.test"]}),
    )
    .await
    .data(201);
    for path in [
        "/s/acme",
        "/api/public/status/acme",
        "/s/acme/api/v2/summary.json",
        "/api/metrics",
    ] {
        let r = fetch(&s, path, &[]).await;
        assert_eq!(r.status, 200, "{path}");
        assert!(!r.text.contains("Customer Vault"), "{path}");
        assert!(r.text.contains("Everyone API"), "{path}");
    }
    assert_eq!(
        fetch(&s, "/s/acme", &[]).await.header("cache-control"),
        "private, no-cache"
    );

    // Comments: an incident only about the hidden component is no one's
    // to read or comment on here (as if there were none); a shared one is.
    s.features(json!({"comments": true})).await;
    let about = |title: &'static str, component: i64| {
        let s = &s;
        async move {
            s.post(
                "/api/v1/incidents",
                json!({"title": title, "statusPageId": p, "message": "Looking", "componentIds": [component]}),
            )
            .await
            .data(201)["id"]
                .as_i64()
                .expect("incident id")
        }
    };
    // The notice preview counts whom the fan-out would tell: a subscriber
    // who is no viewer hears of the shared component, not of the hidden one.
    s.post(
        "/api/subscribers",
        json!({"statusPageId": p, "kind": "webhook", "target": "https://hooks.example.com/acme"}),
    )
    .await
    .data(201);
    for (component, told) in [(everyone, 1), (hidden, 0)] {
        let preview = s
            .post(
                "/api/incidents/notice-preview",
                json!({"statusPageId": p, "title": "Down", "componentIds": [component]}),
            )
            .await
            .data(200);
        assert_eq!(preview["subscribers"], told, "{preview}");
    }
    let vault = about("Vault sealed", hidden).await;
    let shared = s.incident(p, "Slow everywhere").await["id"]
        .as_i64()
        .expect("incident id");
    for path in [
        format!("/api/comments?incidentId={vault}"),
        format!("/s/acme/incidents/{vault}"),
    ] {
        assert_eq!(fetch(&s, &path, &[]).await.status, 404, "{path}");
    }
    let refused = s
        .send(
            Method::POST,
            "/api/comments",
            None,
            Some(json!({"incidentId": vault, "body": "what vault?"})),
        )
        .await;
    assert_eq!(
        refused.problem(404)["detail"],
        format!("no incident {vault}")
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM comments").await[0],
        0,
        "nothing stored"
    );
    let taken = s
        .send(
            Method::POST,
            "/api/comments",
            None,
            Some(json!({"incidentId": shared, "body": "slow here too"})),
        )
        .await;
    assert_eq!(taken.status, 202, "{}", taken.body);
}
