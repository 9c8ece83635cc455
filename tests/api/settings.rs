//! `/api/settings` and `/api/features`: what an admin changes reaches every
//! public route and page at once; a switch that is off takes its feature
//! away (404) and the links to it; refusals change nothing.

use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    settings_change_and_are_checked,
    feature_switches_take_features_away
);

/// The status (headers only: the event stream never ends) and, for
/// finite answers, the body of a visitor's GET.
async fn visit(s: &Server, path: &str, accept: &str) -> (u16, String) {
    let res = reqwest::Client::new()
        .get(format!("{}{path}", s.base))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    if path.ends_with("/events") {
        return (status, String::new());
    }
    (status, res.text().await.unwrap())
}

async fn settings_change_and_are_checked(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PASSWORD);
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let ad = Browser::signed_in(&s, "ad@example.com").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    s.page("alpha").await;

    let (status, first, _) = ed.send(Method::GET, "/api/settings", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        first["data"],
        json!({"siteName": "Upstate", "defaultPage": null, "defaultLanguage": null, "moderateComments": true, "maintenanceReminders": "24h, 1h", "deliveryLogDays": 30})
    );
    // Without a default page, a browser at / is sent to the interface.
    let res = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{}/", s.base))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 303);

    // Refusals: an editor; bad values beside each field; unknown fields; a
    // page that does not exist. Nothing changes.
    let (status, _, _) = ed
        .send(Method::PUT, "/api/settings", Some(json!({"siteName": "X"})))
        .await;
    assert_eq!(status, 403);
    let (status, p, _) = ad
        .send(
            Method::PUT,
            "/api/settings",
            Some(json!({"siteName": " ", "defaultPage": "Not a slug", "defaultLanguage": "tlh"})),
        )
        .await;
    assert_eq!(status, 422, "{p}");
    let mut fields: Vec<&str> = p["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    fields.sort_unstable();
    assert_eq!(fields, ["defaultLanguage", "defaultPage", "siteName"]);
    let (status, p, _) = ad
        .send(
            Method::PUT,
            "/api/settings",
            Some(json!({"defaultPage": "nowhere"})),
        )
        .await;
    assert_eq!(
        (status, &p["errors"][0]["field"]),
        (422, &json!("defaultPage"))
    );
    let (status, _, _) = ad
        .send(Method::PUT, "/api/settings", Some(json!({"theme": "dark"})))
        .await;
    assert_eq!(status, 422, "unknown settings are refused, not ignored");
    let (_, still, _) = ad.send(Method::GET, "/api/settings", None).await;
    assert_eq!(still, first, "refusals changed nothing");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'settings.update'")
            .await,
        [0]
    );

    // Accepted: the default page is served at /, in the default language
    // for a browser that asks for none we speak.
    let (status, saved, _) = ad
        .send(
            Method::PUT,
            "/api/settings",
            Some(
                json!({"siteName": "Acme status", "defaultPage": "alpha", "defaultLanguage": "de"}),
            ),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["data"]["defaultPage"], "alpha");
    let (status, html) = visit(&s, "/", "text/html").await;
    assert_eq!(status, 200);
    assert!(html.contains("<html lang=\"de\""), "{html}");
    let res = reqwest::Client::new()
        .get(format!("{}/s/alpha", s.base))
        .header("accept-language", "ja")
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    assert!(
        html.contains("<html lang=\"ja\""),
        "a language the visitor asks for wins"
    );
    // A key with the admin scope may script it; null clears.
    let admin_key = s.db.create_key("admin");
    let r = s
        .send(
            Method::PUT,
            "/api/settings",
            Some(&admin_key),
            Some(json!({"defaultLanguage": null})),
        )
        .await;
    assert_eq!(r.data(200)["defaultLanguage"], Value::Null);
    assert_eq!(r.data(200)["siteName"], "Acme status", "the rest is kept");
    let (_, html) = visit(&s, "/s/alpha", "text/html").await;
    assert!(html.contains("<html lang=\"en\""));
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'settings.update'")
            .await,
        [2]
    );
    assert_eq!(
        s.db.texts("SELECT kind FROM outbox WHERE kind = 'settings.changed'")
            .await
            .len(),
        2
    );
}

async fn feature_switches_take_features_away(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PASSWORD);
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let ad = Browser::signed_in(&s, "ad@example.com").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let page = s.page("alpha").await;
    let incident = s.incident(page, "Database slow").await["id"]
        .as_i64()
        .unwrap();
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &format!("/api/incidents/{incident}/rca"),
            Some(json!({"body": "## What happened\n\nA disk filled up.", "published": true})),
        )
        .await;
    assert_eq!(status, 200);

    let routes = [
        ("feeds", "/api/feed/rss?page=alpha"),
        ("calendar", "/api/calendar?page=alpha"),
        ("badges", "/api/badge?page=alpha"),
        ("widget", "/api/widget?page=alpha"),
        ("liveUpdates", "/api/public/status/alpha/events"),
        ("history", "/s/alpha/history"),
    ];
    let links = [
        "/api/feed/rss",
        "/api/calendar",
        "/s/alpha/history",
        "data-events",
    ];
    let (_, all, _) = ed.send(Method::GET, "/api/features", None).await;
    for (name, path) in routes {
        assert_eq!(all["data"][name], true, "{all}");
        assert_eq!(visit(&s, path, "*/*").await.0, 200, "{path}");
    }
    let (_, html) = visit(&s, "/s/alpha", "text/html").await;
    for link in links {
        assert!(html.contains(link), "{link} is offered while on");
    }
    let incident_page = format!("/s/alpha/incidents/{incident}");
    assert!(
        visit(&s, &incident_page, "text/html")
            .await
            .1
            .contains("A disk filled up")
    );

    // Refusals change nothing.
    let (status, _, _) = ed
        .send(Method::PUT, "/api/features", Some(json!({"feeds": false})))
        .await;
    assert_eq!(status, 403);
    for (bad, field) in [
        (json!({"feedz": false}), "feedz"),
        (json!({"badges": "no"}), "badges"),
        (json!({}), "body"),
    ] {
        let (status, p, _) = ad.send(Method::PUT, "/api/features", Some(bad)).await;
        assert_eq!(
            (status, &p["errors"][0]["field"]),
            (422, &json!(field)),
            "{p}"
        );
    }
    let (status, _, _) = ad
        .send(Method::PUT, "/api/features", Some(json!([1])))
        .await;
    assert_eq!(status, 422);
    let (_, still, _) = ed.send(Method::GET, "/api/features", None).await;
    assert_eq!(still, all, "refusals changed nothing");

    // Off: every route answers 404 with a clear problem, the page drops the
    // links, and the published postmortem is no longer shown.
    let off: serde_json::Map<String, Value> = routes
        .iter()
        .map(|(n, _)| (n.to_string(), json!(false)))
        .chain([("postmortems".to_string(), json!(false))])
        .collect();
    let (status, saved, _) = ad
        .send(Method::PUT, "/api/features", Some(Value::Object(off)))
        .await;
    assert_eq!(status, 200, "{saved}");
    for (_, path) in routes {
        let r = s.get(path).await;
        let p = r.problem(404);
        assert!(
            p["detail"].as_str().unwrap().contains("turned off"),
            "{path}: {p}"
        );
    }
    let (_, html) = visit(&s, "/s/alpha", "text/html").await;
    for link in links {
        assert!(!html.contains(link), "{link} is gone while off");
    }
    assert!(
        !visit(&s, &incident_page, "text/html")
            .await
            .1
            .contains("A disk filled up")
    );

    // On again, one switch at a time; the others stay as they were.
    let (_, back, _) = ad
        .send(Method::PUT, "/api/features", Some(json!({"feeds": true})))
        .await;
    assert_eq!(
        (&back["data"]["feeds"], &back["data"]["badges"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(visit(&s, "/api/feed/rss?page=alpha", "*/*").await.0, 200);
    assert_eq!(visit(&s, "/api/badge?page=alpha", "*/*").await.0, 404);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'features.update'")
            .await,
        [2]
    );
}
