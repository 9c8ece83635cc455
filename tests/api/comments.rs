//! Visitors' comments on incidents: off until switched on, held for
//! moderation, shown escaped once approved, limited per client, refused
//! with a clear error (and nothing stored) for every kind of bad input.

use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    comments_are_moderated_escaped_and_limited,
    bad_comments_are_refused_and_nothing_is_stored,
);

async fn visitor(s: &Server, body: Value) -> crate::support::Resp {
    s.send(Method::POST, "/api/comments", None, Some(body))
        .await
}

async fn page_html(s: &Server, path: &str) -> String {
    let r = s.send(Method::GET, path, None, None).await;
    assert_eq!(r.status, 200, "{path}");
    r.body.as_str().unwrap_or_default().to_string()
}

async fn count(s: &Server) -> i64 {
    s.db.integers("SELECT COUNT(*) FROM comments").await[0]
}

async fn comments_are_moderated_escaped_and_limited(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let incident = s.incident(page, "Checkout errors").await["id"]
        .as_i64()
        .unwrap();
    let html_path = format!("/s/acme/incidents/{incident}");
    let shown = format!("/api/comments?incidentId={incident}");
    let hostile =
        "<script>alert(1)</script> still broken for us in Frankfurt\npoint DNS to <your-lb-host>";

    // Off by default: the routes do not exist for visitors, the page has no form.
    assert_eq!(s.send(Method::GET, &shown, None, None).await.status, 404);
    let off = visitor(&s, json!({"incidentId": incident, "body": "hello"})).await;
    assert_eq!(
        off.problem(404)["detail"],
        "comments are turned off on this install"
    );
    assert!(!page_html(&s, &html_path).await.contains("id=\"comments\""));
    assert_eq!(count(&s).await, 0);

    s.features(json!({"comments": true})).await;
    assert!(
        page_html(&s, &html_path)
            .await
            .contains("action=\"/api/comments?lang=en\"")
    );

    // Held for moderation: accepted, not shown.
    let sent = visitor(
        &s,
        json!({"incidentId": incident, "author": "Ann", "body": hostile}),
    )
    .await;
    assert_eq!(sent.data(202)["status"], "pending");
    assert_eq!(
        s.send(Method::GET, &shown, None, None).await.data(200),
        json!([])
    );
    assert!(!page_html(&s, &html_path).await.contains("Frankfurt"));

    let queue = s.get("/api/comments/admin").await.data(200);
    assert_eq!(queue.as_array().unwrap().len(), 1);
    assert_eq!(queue[0]["incidentTitle"], "Checkout errors");
    assert_eq!(queue[0]["body"], hostile);
    assert_eq!(queue[0]["status"], "pending");
    let id = queue[0]["id"].as_i64().unwrap();

    // A read-only key may not moderate.
    let reader = s.db.create_key("read");
    let refused = s
        .send(
            Method::PATCH,
            &format!("/api/comments/admin/{id}"),
            Some(&reader),
            Some(json!({"status": "approved"})),
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    // Approved: on the page at once (the page's cached HTML is rebuilt),
    // as text, never as markup.
    let approved = s
        .patch(
            &format!("/api/comments/admin/{id}"),
            json!({"status": "approved"}),
        )
        .await
        .data(200);
    assert_eq!(approved["status"], "approved");
    assert!(approved["moderatedAt"].is_string());
    let public = s.send(Method::GET, &shown, None, None).await.data(200);
    assert_eq!(
        public,
        json!([{"id": id, "incidentId": incident, "author": "Ann", "body": hostile, "createdAt": approved["createdAt"]}])
    );
    let html = page_html(&s, &html_path).await;
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; still broken for us in Frankfurt"),
        "escaped text"
    );
    assert!(html.contains("&lt;your-lb-host&gt;"));
    assert!(!html.contains("<script>alert(1)"), "never markup");
    assert_eq!(
        s.get("/api/comments/admin").await.data(200),
        json!([]),
        "the queue is empty"
    );
    assert_eq!(
        s.get("/api/comments/admin?status=approved").await.data(200)[0]["id"],
        id
    );

    // Rejected: gone from the page again.
    s.patch(
        &format!("/api/comments/admin/{id}"),
        json!({"status": "rejected"}),
    )
    .await
    .data(200);
    assert_eq!(
        s.send(Method::GET, &shown, None, None).await.data(200),
        json!([])
    );
    assert!(!page_html(&s, &html_path).await.contains("Frankfurt"));
    let actions =
        s.db.texts("SELECT action FROM audit_events WHERE action LIKE 'comment.%' ORDER BY seq")
            .await;
    assert_eq!(
        actions,
        ["comment.create", "comment.moderate", "comment.moderate"]
    );

    // Without moderation a comment shows at once.
    s.send(
        Method::PUT,
        "/api/settings",
        Some(&s.key),
        Some(json!({"moderateComments": false})),
    )
    .await
    .data(200);
    let direct = visitor(&s, json!({"incidentId": incident, "body": "Back for us."})).await;
    assert_eq!(direct.data(202)["status"], "approved");
    let public = s.send(Method::GET, &shown, None, None).await.data(200);
    assert_eq!(public[0]["body"], "Back for us.");
    assert_eq!(public[0]["author"], "");
    assert!(page_html(&s, &html_path).await.contains("Back for us."));

    // Deleted for good; a second delete finds nothing.
    let direct_id = public[0]["id"].as_i64().unwrap();
    s.delete(&format!("/api/comments/admin/{direct_id}"))
        .await
        .data(200);
    assert_eq!(
        s.delete(&format!("/api/comments/admin/{direct_id}"))
            .await
            .status,
        404
    );
    assert!(!page_html(&s, &html_path).await.contains("Back for us."));

    // Three a minute per client address: the fourth is refused, not stored.
    let before = count(&s).await;
    assert_eq!(
        visitor(&s, json!({"incidentId": incident, "body": "third"}))
            .await
            .status,
        202
    );
    let limited = visitor(&s, json!({"incidentId": incident, "body": "fourth"})).await;
    assert_eq!(limited.status, 429, "{}", limited.body);
    assert!(limited.header("retry-after").is_some());
    assert_eq!(count(&s).await, before + 1);

    // A person's form gets a page back.
    s.features(json!({"comments": false})).await;
    assert_eq!(s.send(Method::GET, &shown, None, None).await.status, 404);
    assert!(!page_html(&s, &html_path).await.contains("id=\"comments\""));
}

async fn bad_comments_are_refused_and_nothing_is_stored(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let incident = s.incident(page, "Checkout errors").await["id"]
        .as_i64()
        .unwrap();
    let private = s.page("inside").await;
    let hidden = s.incident(private, "Internal only").await["id"]
        .as_i64()
        .unwrap();
    s.make_private(private, "let me in please").await;
    s.features(json!({"comments": true})).await;

    let cases: Vec<(Value, u16, &[&str])> = vec![
        (json!({"incidentId": incident}), 422, &["body"]),
        (
            json!({"incidentId": incident, "body": "   "}),
            422,
            &["body"],
        ),
        (
            json!({"incidentId": incident, "body": "x".repeat(1001)}),
            422,
            &["body"],
        ),
        (
            json!({"incidentId": incident, "body": "bell \u{7}"}),
            422,
            &["body"],
        ),
        (
            json!({"incidentId": incident, "body": "ok", "author": "a\nb"}),
            422,
            &["author"],
        ),
        (
            json!({"incidentId": incident, "body": "ok", "author": "x".repeat(61)}),
            422,
            &["author"],
        ),
        (json!({"body": "ok"}), 422, &["incidentId"]),
        (
            json!({"incidentId": incident, "body": "ok", "email": "a@b.c"}),
            422,
            &["email"],
        ),
        (
            json!({"incidentId": "one", "body": "ok"}),
            422,
            &["incidentId"],
        ),
    ];
    for (body, status, fields) in cases {
        let r = visitor(&s, body.clone()).await;
        assert_eq!(r.status, status, "{body}: {}", r.body);
        assert_eq!(
            r.header("content-type"),
            Some("application/problem+json"),
            "{body}"
        );
        if !fields.is_empty() {
            r.invalid_fields(fields);
        }
    }
    let unknown = visitor(&s, json!({"incidentId": 999_999, "body": "ok"})).await;
    assert_eq!(unknown.problem(404)["detail"], "no incident 999999");
    let gated = visitor(&s, json!({"incidentId": hidden, "body": "ok"})).await;
    assert_eq!(
        gated.status, 401,
        "a private page's incident: {}",
        gated.body
    );
    assert_eq!(
        s.send(
            Method::GET,
            &format!("/api/comments?incidentId={hidden}"),
            None,
            None
        )
        .await
        .status,
        401
    );
    let q = s.send(Method::GET, "/api/comments", None, None).await;
    q.invalid_fields(&["incidentId"]);
    let q = s
        .send(Method::GET, "/api/comments?incidentId=abc", None, None)
        .await;
    q.invalid_fields(&["incidentId"]);
    let q = s.get("/api/comments/admin?status=spam").await;
    q.invalid_fields(&["status"]);
    // No sign-in, no queue.
    assert_eq!(
        s.send(Method::GET, "/api/comments/admin", None, None)
            .await
            .status,
        401
    );
    assert_eq!(count(&s).await, 0, "nothing stored");

    // A decision that is no status, or of no comment, changes nothing.
    visitor(&s, json!({"incidentId": incident, "body": "ok"}))
        .await
        .data(202);
    let id = s.get("/api/comments/admin").await.data(200)[0]["id"]
        .as_i64()
        .unwrap();
    for body in [
        json!({"status": "spam"}),
        json!({}),
        json!({"status": "approved", "x": 1}),
    ] {
        let r = s
            .patch(&format!("/api/comments/admin/{id}"), body.clone())
            .await;
        assert!(matches!(r.status, 400 | 422), "{body}: {}", r.body);
    }
    assert_eq!(
        s.patch("/api/comments/admin/424242", json!({"status": "approved"}))
            .await
            .status,
        404
    );
    let after = s.get("/api/comments/admin?status=all").await.data(200);
    assert_eq!(after.as_array().unwrap().len(), 1);
    assert_eq!(after[0]["status"], "pending", "unchanged");
    assert!(after[0]["moderatedAt"].is_null());
}
