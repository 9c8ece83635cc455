//! Postmortems (`/api/incidents/{id}/rca`, `/rca/generate`): drafted from
//! the incident's record, edited, published onto the incident's public page
//! as sanitized HTML; drafts stay private; refusals change nothing.

use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(draft_edit_publish_and_show);

async fn public_incident(s: &Server, id: i64) -> String {
    reqwest::get(format!("{}/s/acme/incidents/{id}", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

async fn draft_edit_publish_and_show(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let p = s.page("acme").await;
    let c = s.component(p, "Checkout").await;
    let body = json!({"title": "Payments failing", "statusPageId": p, "impact": "major",
                      "componentIds": [c], "message": "Looking into failed payments"});
    let id = s.post("/api/v1/incidents", body).await.data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{id}/resolve"),
        json!({"message": "Provider fixed"}),
    )
    .await
    .data(200);
    let rca = format!("/api/incidents/{id}/rca");

    let (status, _, _) = ed.send(Method::GET, &rca, None).await;
    assert_eq!(status, 404, "none yet");
    let (status, draft, _) = ed
        .send(Method::POST, &format!("{rca}/generate"), None)
        .await;
    assert_eq!(status, 200, "{draft}");
    let text = draft["data"]["body"].as_str().unwrap().to_string();
    for part in [
        "# Postmortem: Payments failing",
        "Affected components: Checkout",
        "Looking into failed payments",
        "Provider fixed",
        "## Root cause",
    ] {
        assert!(text.contains(part), "{part} missing from:\n{text}");
    }
    assert_eq!(draft["data"]["published"], false);
    assert!(
        !public_incident(&s, id).await.contains("Root cause"),
        "a draft is private"
    );

    // Refusals: a viewer, an empty body, a body of the wrong type.
    let (status, _, _) = vi
        .send(
            Method::PUT,
            &rca,
            Some(json!({"body": "x", "published": true})),
        )
        .await;
    assert_eq!(status, 403);
    let (status, problem, _) = ed
        .send(Method::PUT, &rca, Some(json!({"body": "  "})))
        .await;
    assert_eq!(
        (status, &problem["errors"][0]["field"]),
        (422, &json!("body"))
    );
    let (status, _, _) = ed.send(Method::PUT, &rca, Some(json!({"body": 5}))).await;
    assert_eq!(status, 422);
    let (_, still, _) = vi.send(Method::GET, &rca, None).await;
    assert_eq!(still["data"]["body"], text, "nothing changed");

    // Published, with a script someone pasted: shown, and harmless.
    let edited = format!(
        "{text}\n\n## Lessons\n\nWe add **retries**.\n\n<script>alert(1)</script><img src=x onerror=alert(2)>"
    );
    let (status, saved, _) = ed
        .send(
            Method::PUT,
            &rca,
            Some(json!({"body": edited, "published": true})),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert!(saved["data"]["publishedAt"].is_string());
    let html = public_incident(&s, id).await;
    assert!(html.contains("<h2 id=\"pm-h\">Postmortem</h2>"), "{html}");
    assert!(html.contains("<strong>retries</strong>"));
    assert!(!html.contains("<script>alert"), "scripts are not run");
    assert!(
        !html.contains("<img"),
        "typed markup is shown as text, never an element"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    let (status, _, _) = ed
        .send(Method::POST, &format!("{rca}/generate"), None)
        .await;
    assert_eq!(
        status, 409,
        "a published postmortem is not replaced by a draft"
    );
    // Feeds carry it as an entry of its own, linked to the incident.
    let feed = |format: &'static str| {
        let url = format!("{}/api/feed/rss?page=acme&format={format}", s.base);
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    for f in ["rss", "atom"] {
        let xml = feed(f).await;
        assert!(xml.contains("Postmortem: "), "{f}: {xml}");
        assert!(
            xml.contains(&format!("/s/acme/incidents/{id}#postmortem")),
            "{f}: {xml}"
        );
        // Rendered as on the page: HTML inside CDATA (RSS), escaped (Atom).
        let rendered = if f == "rss" {
            "We add <strong>retries</strong>"
        } else {
            "We add &lt;strong&gt;retries&lt;/strong&gt;"
        };
        assert!(xml.contains(rendered), "{f}: {xml}");
    }
    let events =
        s.db.texts("SELECT kind FROM outbox WHERE kind = 'postmortem.published'")
            .await;
    assert_eq!(events.len(), 1);
    let audited =
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'postmortem.update'")
            .await;
    assert_eq!(
        audited,
        [2],
        "the draft and the publication; refusals are not there"
    );

    // Unpublished again: gone from the public page.
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &rca,
            Some(json!({"body": "Short again", "published": false})),
        )
        .await;
    assert_eq!(status, 200);
    assert!(!public_incident(&s, id).await.contains("pm-h"));
    assert!(
        !feed("atom").await.contains("#postmortem"),
        "and from the feeds"
    );
    let (status, _, _) = ed
        .send(Method::GET, "/api/incidents/999999/rca", None)
        .await;
    assert_eq!(status, 404);
}
