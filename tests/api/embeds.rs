//! Calendar, badges, widget, manifest, `/api/v1/status` and translation,
//! read back with real parsers where there are some.

use crate::on_both_backends;
use crate::status_html::{fetch, seeded};
use crate::support::{Backend, Server};
use icalendar::{Calendar, CalendarComponent, Component, EventStatus};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(calendar_holds_every_window_with_stable_uids);
on_both_backends!(a_bare_cr_in_a_description_adds_no_calendar_line);
on_both_backends!(badges_in_every_style_and_as_shields_json);
on_both_backends!(widget_manifest_and_overall_status);
on_both_backends!(translation_uses_the_dictionaries_and_says_what_it_lacks);

fn events(text: &str) -> Vec<icalendar::Event> {
    let cal: Calendar = text.parse().expect("valid iCalendar");
    cal.components
        .into_iter()
        .filter_map(|c| match c {
            CalendarComponent::Event(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// A carriage return alone ends a line for iCalendar readers: in a
/// description it is stored as a line end, which the calendar escapes, so
/// no line of the text becomes a line of the calendar.
async fn a_bare_cr_in_a_description_adds_no_calendar_line(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let made = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Network work", "statusPageId": p,
                   "description": "line1\rEND:VEVENT\rBEGIN:VEVENT\rSUMMARY:Injected\r\nlast",
                   "scheduledStartTime": "2099-04-01T00:00:00.000Z",
                   "scheduledEndTime": "2099-04-01T01:30:00.000Z"}),
        )
        .await
        .data(201);
    assert_eq!(
        made["description"],
        "line1\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:Injected\nlast"
    );
    let text = fetch(&s, "/api/calendar?page=acme", &[]).await.text;
    let lines: Vec<&str> = text.split(['\r', '\n']).collect();
    assert_eq!(
        lines.iter().filter(|l| **l == "BEGIN:VEVENT").count(),
        1,
        "{text}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("SUMMARY:Injected")),
        "{text}"
    );
    let evs = events(&text);
    assert_eq!(evs.len(), 1, "{text}");
    assert_eq!(
        evs[0].get_description(),
        Some("line1\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:Injected\nlast")
    );
    // A title is one line: a CR in it is refused, and nothing is stored.
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Two\rlines", "statusPageId": p,
               "scheduledStartTime": "2099-04-01T00:00:00.000Z",
               "scheduledEndTime": "2099-04-01T01:30:00.000Z"}),
    )
    .await
    .problem(422);
    assert_eq!(
        events(&fetch(&s, "/api/calendar?page=acme", &[]).await.text).len(),
        1
    );
}

async fn calendar_holds_every_window_with_stable_uids(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_PUBLIC_URL", "https://status.example.com")]).await;
    let (p, ids) = seeded(&s).await;
    let web = ids["web"].as_i64().unwrap();
    let api = ids["api"].as_i64().unwrap();
    let other = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Network work", "statusPageId": p, "componentIds": [api],
            "scheduledStartTime": "2099-04-01T00:00:00.000Z", "scheduledEndTime": "2099-04-01T01:30:00.000Z"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let first = ids["maintenance"].as_i64().unwrap();

    let r = fetch(&s, "/api/calendar?page=acme", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "text/calendar; charset=utf-8");
    let evs = events(&r.text);
    assert_eq!(evs.len(), 2);
    let db = evs
        .iter()
        .find(|e| e.get_summary() == Some("Database upgrade"))
        .expect("the upgrade");
    assert_eq!(
        db.get_uid(),
        Some(format!("maintenance-{first}@status.example.com").as_str())
    );
    assert_eq!(db.property_value("DTSTART"), Some("20990301T020000Z"));
    assert_eq!(db.property_value("DTEND"), Some("20990301T040000Z"));
    assert_eq!(db.get_status(), Some(EventStatus::Confirmed));
    assert!(
        db.get_description().unwrap().contains("Postgres 17")
            && db.get_description().unwrap().contains("Website")
    );
    assert_eq!(
        db.get_url(),
        Some(format!("https://status.example.com/s/acme/maintenance/{first}").as_str())
    );

    // Cancelling keeps the event (same UID) and marks it cancelled, with a higher sequence.
    s.post(
        &format!("/api/v1/maintenance/{other}/cancel"),
        json!({"message": "Postponed"}),
    )
    .await
    .data(200);
    let evs = events(&fetch(&s, "/api/calendar?page=acme", &[]).await.text);
    let cancelled = evs
        .iter()
        .find(|e| e.get_summary() == Some("Network work"))
        .expect("still listed");
    assert_eq!(
        cancelled.get_uid(),
        Some(format!("maintenance-{other}@status.example.com").as_str())
    );
    assert_eq!(cancelled.get_status(), Some(EventStatus::Cancelled));
    assert!(cancelled.get_sequence().unwrap_or(0) >= 1);

    // One component's windows only.
    let evs = events(
        &fetch(&s, &format!("/api/calendar?page=acme&component={web}"), &[])
            .await
            .text,
    );
    assert_eq!(
        evs.iter()
            .map(|e| e.get_summary().unwrap())
            .collect::<Vec<_>>(),
        ["Database upgrade"]
    );

    // Bad input: clear problems.
    s.send(Method::GET, "/api/calendar", None, None)
        .await
        .invalid_fields(&["page"]);
    s.send(
        Method::GET,
        "/api/calendar?page=acme&component=x",
        None,
        None,
    )
    .await
    .invalid_fields(&["component"]);
    let foreign = s.component(s.page("other").await, "Elsewhere").await;
    s.send(
        Method::GET,
        &format!("/api/calendar?page=acme&component={foreign}"),
        None,
        None,
    )
    .await
    .invalid_fields(&["component"]);
    s.send(Method::GET, "/api/calendar?page=nope", None, None)
        .await
        .problem(404);

    // A page without maintenance: an empty calendar that still says whose
    // it is and who wrote it.
    let text = reqwest::get(format!("{}/api/calendar?page=other", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let cal: Calendar = text.parse().expect("valid iCalendar");
    assert!(events(&text).is_empty());
    assert_eq!(
        cal.property_value("X-WR-CALNAME"),
        Some("Page other maintenance")
    );
    let prodid = cal.property_value("PRODID").unwrap_or_default();
    assert!(prodid.starts_with("-//Upstate//Upstate "), "{prodid}");
}

async fn badges_in_every_style_and_as_shields_json(b: Backend) {
    let s = Server::start(b).await;
    let (_, ids) = seeded(&s).await;
    let r = fetch(&s, "/api/badge?page=acme", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "image/svg+xml");
    assert!(
        r.text.starts_with("<svg")
            && r.text.contains("partial outage")
            && r.text.contains("status")
    );
    assert!(
        r.text.contains(r#"aria-label="status: partial outage""#),
        "accessible name"
    );
    let mut seen = std::collections::HashSet::new();
    for style in ["flat", "flat-square", "plastic", "for-the-badge"] {
        let r = fetch(
            &s,
            &format!("/api/badge?page=acme&style={style}&label=Acme%20API"),
            &[],
        )
        .await;
        assert_eq!(r.status, 200, "{style}");
        assert!(
            r.text.contains("Acme API") || r.text.contains("ACME API"),
            "{style}: label"
        );
        assert!(
            seen.insert(r.text.clone()),
            "{style} looks like another style"
        );
    }
    let for_the_badge = fetch(&s, "/api/badge?page=acme&style=for-the-badge", &[])
        .await
        .text;
    assert!(
        for_the_badge.contains("PARTIAL OUTAGE"),
        "for-the-badge is upper case"
    );

    // One component's status, labelled with its name; shields.io endpoint JSON.
    let web = ids["web"].as_i64().unwrap();
    let r = s
        .send(
            Method::GET,
            &format!("/api/badge?page=acme&component={web}&format=shields"),
            None,
            None,
        )
        .await;
    assert_eq!(
        r.body,
        json!({"schemaVersion": 1, "label": "Website", "message": "degraded performance", "color": "yellow"})
    );
    let r = s
        .send(
            Method::GET,
            "/api/badge?page=acme&format=shields&label=up",
            None,
            None,
        )
        .await;
    assert_eq!(r.body["message"], "partial outage");
    assert_eq!(r.body["color"], "orange");

    // Labels are escaped in SVG.
    let r = fetch(&s, "/api/badge?page=acme&label=%3Cb%3Ex%3C%2Fb%3E", &[]).await;
    assert!(!r.text.contains("<b>x</b>") && r.text.contains("&lt;b&gt;"));

    s.send(Method::GET, "/api/badge?page=acme&style=neon", None, None)
        .await
        .invalid_fields(&["style"]);
    let long = "x".repeat(65);
    s.send(
        Method::GET,
        &format!("/api/badge?page=acme&label={long}"),
        None,
        None,
    )
    .await
    .invalid_fields(&["label"]);
    s.send(Method::GET, "/api/badge?page=acme&format=png", None, None)
        .await
        .invalid_fields(&["format"]);
    s.send(
        Method::GET,
        "/api/badge?page=acme&component=999999",
        None,
        None,
    )
    .await
    .invalid_fields(&["component"]);
    s.send(Method::GET, "/api/badge?page=nope", None, None)
        .await
        .problem(404);
}

async fn widget_manifest_and_overall_status(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_PUBLIC_URL", "https://status.example.com")]).await;
    seeded(&s).await;
    let r = fetch(&s, "/api/widget?page=acme", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), "text/html; charset=utf-8");
    assert!(
        r.header("content-security-policy")
            .contains("frame-ancestors *"),
        "any site may frame it"
    );
    assert!(
        r.text.contains("Partial System Outage")
            && r.text
                .contains(r#"href="https://status.example.com/s/acme""#)
    );
    assert!(
        r.text.contains(r#"<script src="/assets/widget.js?v="#),
        "only its own script"
    );
    assert!(
        !r.text.contains("http-equiv=\"refresh\""),
        "no timed reloads (WCAG 2.2.1)"
    );
    assert!(
        r.header("content-security-policy")
            .contains("script-src 'self'")
    );
    let de = fetch(&s, "/api/widget?page=acme&lang=de", &[]).await;
    assert!(de.text.contains("Teilweiser Systemausfall"));
    let js = fetch(&s, "/api/widget?page=acme&format=js", &[]).await;
    assert_eq!(js.header("content-type"), "text/javascript; charset=utf-8");
    assert!(
        js.text
            .contains(r#""https://status.example.com/api/widget?page=acme&lang=en""#)
    );
    assert!(
        js.text.contains("createElement(\"iframe\")") && js.text.contains("document.currentScript")
    );
    s.send(Method::GET, "/api/widget?page=acme&format=xml", None, None)
        .await
        .invalid_fields(&["format"]);

    let r = fetch(&s, "/api/manifest?page=acme", &[]).await;
    assert_eq!(r.header("content-type"), "application/manifest+json");
    let m: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(m["name"], "Acme Status");
    assert_eq!(m["start_url"], "/s/acme");
    assert_eq!(m["display"], "standalone");
    assert_eq!(m["theme_color"], "#aa3300");
    assert_eq!(m["icons"][0]["src"], "/assets/favicon.svg");
    s.send(Method::GET, "/api/manifest", None, None)
        .await
        .invalid_fields(&["page"]);

    let st = s
        .send(Method::GET, "/api/v1/status?page=acme", None, None)
        .await
        .data(200);
    assert_eq!(st["status"], "partial_outage");
    assert_eq!(st["statusLabel"], "Partial System Outage");
    // No page named and no default page configured: a clear 422.
    s.send(Method::GET, "/api/v1/status", None, None)
        .await
        .invalid_fields(&["page"]);
    s.send(Method::GET, "/api/v1/status?page=nope", None, None)
        .await
        .problem(404);
}

async fn translation_uses_the_dictionaries_and_says_what_it_lacks(b: Backend) {
    let s = Server::start(b).await;
    let r = s
        .send(
            Method::POST,
            "/api/translate",
            None,
            Some(json!({"to": "fr", "texts": ["status.major_outage", "all systems operational", "Behoben", "Hello world"]})),
        )
        .await;
    let d = r.data(200);
    assert_eq!(d["to"], "fr");
    let t = d["translations"].as_array().unwrap();
    assert_eq!(t[0]["text"], "Panne majeure");
    assert_eq!(t[1]["text"], "Tous les systèmes sont opérationnels");
    assert_eq!(t[1]["key"], "overall.operational");
    assert_eq!(t[2]["text"], "Résolu", "a German phrase to French");
    assert_eq!(t[3], json!({"input": "Hello world", "found": false}));
    assert_eq!(d["missing"], json!(["Hello world"]));

    for (body, field) in [
        (json!({"texts": ["status.degraded"]}), "to"),
        (json!({"to": "it", "texts": ["status.degraded"]}), "to"),
        (json!({"to": "de"}), "texts"),
        (json!({"to": "de", "texts": []}), "texts"),
        (json!({"to": "de", "texts": ["  "]}), "texts[0]"),
    ] {
        s.send(Method::POST, "/api/translate", None, Some(body))
            .await
            .invalid_fields(&[field]);
    }
    let r = s
        .send_raw(
            Method::POST,
            "/api/translate",
            Some("application/json"),
            b"{not json".to_vec(),
        )
        .await;
    r.problem(400);
}
