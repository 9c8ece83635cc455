use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(signed_in_users_manage_pages_by_permission);

async fn signed_in_users_manage_pages_by_permission(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("ed@example.com", "editor");
    s.db.user("v@example.com", "viewer");
    let mut ed = Browser::signed_in(&s, "ed@example.com").await;
    let v = Browser::signed_in(&s, "v@example.com").await;

    let (status, page, _) = ed
        .send(
            Method::POST,
            "/api/statuspages",
            Some(json!({"name": "Acme", "slug": "acme"})),
        )
        .await;
    assert_eq!(status, 201);
    let id = page["data"]["id"].as_i64().unwrap();
    let path = format!("/api/statuspages/{id}");
    assert_eq!(page["data"]["components"], json!([]), "the v1 detail view");
    assert_eq!(
        v.send(
            Method::POST,
            "/api/statuspages",
            Some(json!({"name": "X", "slug": "x"}))
        )
        .await
        .0,
        403
    );
    let (status, list, _) = v.send(Method::GET, "/api/statuspages", None).await;
    assert_eq!(
        (status, list["data"][0]["slug"].clone()),
        (200, json!("acme")),
        "viewers read"
    );
    assert_eq!(v.send(Method::GET, &path, None).await.0, 200);
    let (status, put, _) = ed
        .send(Method::PUT, &path, Some(json!({"name": "Acme Cloud"})))
        .await;
    assert_eq!(
        (
            status,
            put["data"]["name"].clone(),
            put["data"]["slug"].clone()
        ),
        (200, json!("Acme Cloud"), json!("acme"))
    );
    assert_eq!(
        v.send(Method::PUT, &path, Some(json!({"name": "no"})))
            .await
            .0,
        403
    );
    let (status, bad, _) = ed
        .send(
            Method::POST,
            "/api/statuspages",
            Some(json!({"name": "", "slug": "Bad"})),
        )
        .await;
    assert_eq!((status, bad["errors"].as_array().unwrap().len()), (422, 2));

    // Deleting a page takes a fresh step-up, and the CSRF token.
    let (status, body, _) = ed.send(Method::DELETE, &path, None).await;
    assert_eq!(status, 403, "{body}");
    ed.step_up().await;
    let no_csrf = Browser {
        csrf: String::new(),
        ..ed.clone()
    };
    assert_eq!(no_csrf.send(Method::DELETE, &path, None).await.0, 403);
    assert_eq!(ed.send(Method::DELETE, &path, None).await.0, 200);
    assert_eq!(ed.send(Method::GET, &path, None).await.0, 404);
    let audit = s.get("/api/audit-events?targetType=statuspage").await.body;
    let deletion = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "statuspage.delete")
        .unwrap()
        .clone();
    assert_eq!(deletion["actor"]["label"], "ed@example.com");
    s.send(Method::GET, "/api/statuspages", None, None)
        .await
        .problem(401);
}
