use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(rss_and_atom_feeds_parse_and_hold_everything);

async fn rss_and_atom_feeds_parse_and_hold_everything(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_PUBLIC_URL", "https://status.example.com/")]).await;
    let p = s.page("acme").await;
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": p, "impact": "major", "message": "Looking <into> it & more"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/resolve"),
        json!({"message": "Fixed"}),
    )
    .await
    .data(200);
    let m = s
        .post("/api/v1/maintenance", json!({"title": "DB upgrade", "statusPageId": p, "scheduledStartTime": "2099-03-01T02:00:00Z", "scheduledEndTime": "2099-03-01T04:00:00Z"}))
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();

    let r = reqwest::get(format!("{}/api/feed/rss?page=acme", s.base))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "application/rss+xml; charset=utf-8"
    );
    assert!(r.headers().contains_key("etag"));
    let channel = rss::Channel::read_from(&r.bytes().await.unwrap()[..]).expect("valid RSS 2.0");
    assert_eq!(channel.title(), "Page acme status");
    assert_eq!(channel.link(), "https://status.example.com/s/acme");
    assert_eq!(channel.items().len(), 2);
    let item = channel
        .items()
        .iter()
        .find(|i| i.title().unwrap().starts_with("API errors"))
        .unwrap();
    assert_eq!(
        item.link(),
        Some(format!("https://status.example.com/s/acme/incidents/{inc}").as_str())
    );
    let text = item.description().unwrap();
    assert!(
        text.contains("[resolved] Fixed") && text.contains("Looking <into> it & more"),
        "{text}"
    );
    let pub_date = time::OffsetDateTime::parse(
        item.pub_date().unwrap(),
        &time::format_description::well_known::Rfc2822,
    )
    .unwrap();
    assert!(
        (time::OffsetDateTime::now_utc() - pub_date)
            .whole_minutes()
            .abs()
            < 5,
        "the latest update's time"
    );
    let window = channel
        .items()
        .iter()
        .find(|i| i.title().unwrap().contains("DB upgrade"))
        .unwrap();
    assert!(window.title().unwrap().contains("2099-03-01T02:00:00Z"));
    assert_eq!(
        window.guid().unwrap().value(),
        format!("https://status.example.com/s/acme/maintenance/{m}")
    );

    let r = reqwest::get(format!("{}/api/feed/rss?page=acme&format=atom", s.base))
        .await
        .unwrap();
    assert_eq!(
        r.headers()["content-type"],
        "application/atom+xml; charset=utf-8"
    );
    let feed =
        atom_syndication::Feed::read_from(&r.bytes().await.unwrap()[..]).expect("valid Atom");
    assert_eq!(feed.entries().len(), 2);
    assert!(
        feed.entries()
            .iter()
            .any(|e| e.title().as_str().starts_with("API errors"))
    );

    // A finished window stays in the feed, its end in its timeline.
    s.post(
        &format!("/api/v1/maintenance/{m}/cancel"),
        json!({"message": "Postponed to April"}),
    )
    .await
    .data(200);
    let body = reqwest::get(format!("{}/api/feed/rss?page=acme", s.base))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let channel = rss::Channel::read_from(&body[..]).unwrap();
    let window = channel
        .items()
        .iter()
        .find(|i| i.title().unwrap().contains("DB upgrade"))
        .expect("still listed");
    assert!(window.title().unwrap().contains("cancelled"));
    assert!(
        window
            .description()
            .unwrap()
            .contains("[cancelled] Postponed to April")
    );

    // Fresh after a write; clear errors for bad queries; private pages stay private.
    s.post(
        "/api/v1/incidents",
        json!({"title": "New one", "statusPageId": p}),
    )
    .await
    .data(201);
    let body = reqwest::get(format!("{}/api/feed/rss?page=acme", s.base))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(rss::Channel::read_from(&body[..]).unwrap().items().len(), 3);
    s.send(Method::GET, "/api/feed/rss", None, None)
        .await
        .invalid_fields(&["page"]);
    s.send(
        Method::GET,
        "/api/feed/rss?page=acme&format=json",
        None,
        None,
    )
    .await
    .invalid_fields(&["format"]);
    s.send(Method::GET, "/api/feed/rss?page=nope", None, None)
        .await
        .problem(404);
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    s.send(Method::GET, "/api/feed/rss?page=acme", None, None)
        .await
        .problem(404);
}
