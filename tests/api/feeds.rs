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
        .post("/api/v1/maintenance", json!({"title": "DB upgrade", "statusPageId": p, "scheduledStartTime": "2099-03-01T02:00:00.000Z", "scheduledEndTime": "2099-03-01T04:00:00.000Z"}))
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
    let bytes = r.bytes().await.unwrap();
    let channel = rss::Channel::read_from(&bytes[..]).expect("valid RSS 2.0");
    // The feed names itself, as validators and some readers want.
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains(r#"href="https://status.example.com/api/feed/rss?page=acme""#)
            && text.contains(r#"rel="self""#),
        "{text}"
    );
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
    // The timeline is HTML: a paragraph per update, the message as text.
    let text = item.description().unwrap();
    assert!(
        text.contains("<strong>resolved</strong></small></p><p>Fixed</p>")
            && text.contains("<p>Looking &lt;into&gt; it &amp; more</p>"),
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
    assert!(window.title().unwrap().contains("2099-03-01T02:00:00.000Z"));
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
    assert!(
        feed.links().iter().any(|l| l.rel() == "self"
            && l.href() == "https://status.example.com/api/feed/rss?page=acme&format=atom"),
        "{:?}",
        feed.links()
    );
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
            .contains("<strong>cancelled</strong></small></p><p>Postponed to April</p>")
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

on_both_backends!(typed_markup_stays_text_in_every_output);

/// What operators type is text everywhere Upstate puts it: markup in a
/// message is shown, never run (a `<script>` arrives as words) and never
/// lost (`<your-lb-host>` keeps its words). Each output is read by a real
/// parser: feedparser for RSS and Atom, an iCalendar parser, XML for the
/// badge, JSON for the APIs.
async fn typed_markup_stays_text_in_every_output(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let evil_name = "Web <img src=x onerror=alert(1)>";
    let c = s.component(p, evil_name).await;
    let title = "DNS <b>change</b> & \"quotes\"";
    let message = "point DNS to <your-lb-host>\n<script>alert(1)</script> ]]> end";
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": title, "statusPageId": p, "impact": "major",
                   "message": message, "componentIds": [c]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let window = "Patch <script>alert(2)</script>";
    s.post(
        "/api/v1/maintenance",
        json!({"title": window, "description": "<i>careful</i>", "statusPageId": p,
               "componentIds": [c], "scheduledStartTime": "2099-03-01T02:00:00.000Z",
               "scheduledEndTime": "2099-03-01T04:00:00.000Z"}),
    )
    .await
    .data(201);

    // Feeds, as a reader shows them.
    for format in ["rss", "atom"] {
        let body = reqwest::get(format!("{}/api/feed/rss?page=acme&format={format}", s.base))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let Some(feed) = crate::support::consumer(
            "typed_markup_stays_text_in_every_output",
            "read_feed.py",
            &body,
        ) else {
            return;
        };
        assert_eq!(feed["bozo"], false, "{format}: {feed}");
        let entries = feed["entries"].as_array().unwrap();
        let incident = entries
            .iter()
            .find(|e| e["title"].as_str().unwrap().starts_with("DNS"))
            .unwrap_or_else(|| panic!("{format}: {feed}"));
        assert!(
            incident["title"].as_str().unwrap().starts_with(title),
            "{format}: {incident}"
        );
        let text = incident["text"].as_str().unwrap();
        assert!(
            text.contains("point DNS to <your-lb-host>")
                && text.contains("<script>alert(1)</script> ]]> end"),
            "{format}: a reader shows the words: {incident}"
        );
        let tags: Vec<&str> = incident["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(
            !tags.contains(&"script") && !tags.contains(&"your-lb-host"),
            "{format}: {tags:?}"
        );
        let maintenance = entries
            .iter()
            .find(|e| e["title"].as_str().unwrap().contains("Patch"))
            .unwrap();
        assert!(
            maintenance["title"]
                .as_str()
                .unwrap()
                .contains("Patch <script>alert(2)</script>"),
            "{maintenance}"
        );
        if format == "atom" {
            assert_eq!(feed["author"], "Page acme", "RFC 4287 wants an author");
        }
    }

    // Pages: escaped once, so the browser shows the characters.
    for path in [
        "/s/acme".to_string(),
        format!("/s/acme/incidents/{inc}"),
        "/s/acme/history".to_string(),
        "/api/widget?page=acme".to_string(),
    ] {
        let html = reqwest::get(format!("{}{path}", s.base))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for raw in ["<script>alert", "<img src=x", "<your-lb-host>", "<b>change"] {
            assert!(!html.contains(raw), "{path} carries {raw} as markup");
        }
        if path != "/api/widget?page=acme" {
            assert!(
                html.contains("DNS &lt;b&gt;change&lt;/b&gt; &amp; &quot;quotes&quot;"),
                "{path}: the title as text"
            );
        }
    }
    let page = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("point DNS to &lt;your-lb-host&gt;"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("Web &lt;img src=x onerror=alert(1)&gt;"));

    // The badge is XML with the name as text.
    let svg = reqwest::get(format!("{}/api/badge?page=acme&component={c}", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!svg.contains("<img"), "{svg}");
    assert!(svg.contains("&lt;img src=x onerror=alert(1)&gt;"), "{svg}");

    // The calendar is not HTML: the title exactly as typed.
    let ics = reqwest::get(format!("{}/api/calendar?page=acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let cal: icalendar::Calendar = ics.parse().expect("valid iCalendar");
    use icalendar::Component;
    let summaries: Vec<String> = cal
        .components
        .iter()
        .filter_map(|c| match c {
            icalendar::CalendarComponent::Event(e) => e.get_summary().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(summaries, vec![window.to_string()]);

    // JSON carries the text as typed.
    let v: serde_json::Value = reqwest::get(format!("{}/api/public/status/acme", s.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["activeIncidents"][0]["title"], title, "{v}");
    assert_eq!(v["components"][0]["name"], evil_name, "{v}");
}
