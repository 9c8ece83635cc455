use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    signed_in_users_manage_pages_by_permission,
    keys_and_people_share_one_handler_and_one_permission_check
);

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

/// `/api/statuspages` and `/api/v1/statuspages` are one handler behind one
/// `Caller`: keys have the permissions of the role that may create them
/// (read: viewer, write: editor, admin: admin), people their role's.
async fn keys_and_people_share_one_handler_and_one_permission_check(b: Backend) {
    let s = Server::start(b).await;
    let read = s.db.create_key("read");
    let write = s.db.create_key("write");
    let body = || Some(json!({"name": "Acme", "slug": "acme"}));

    let r = s
        .send(Method::POST, "/api/statuspages", Some(&read), body())
        .await;
    r.problem(403);
    let r = s
        .send(Method::POST, "/api/statuspages", Some(&write), body())
        .await;
    let id = r.data(201)["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/statuspages/{id}").as_str())
    );
    let r = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Beta", "slug": "beta"}),
        )
        .await;
    let beta = r.data(201)["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/statuspages/{beta}").as_str())
    );
    let listed = s
        .send(Method::GET, "/api/statuspages", Some(&read), None)
        .await
        .data(200);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let r = s
        .send(Method::GET, "/api/statuspages", Some("not-a-key"), None)
        .await;
    r.problem(401);

    // Deleting is sensitive: an admin key, or a person's step-up.
    let path = format!("/api/statuspages/{id}");
    s.send(Method::DELETE, &path, Some(&write), None)
        .await
        .problem(403);
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{id}")).await.status,
        200,
        "still there"
    );
    s.send(Method::DELETE, &path, Some(&s.key), None)
        .await
        .data(200);
    let audit = s
        .get("/api/audit-events?action=statuspage.delete")
        .await
        .data(200);
    assert_eq!(audit[0]["actor"]["kind"], "key", "{audit}");

    // The management API stays keyed: a session cookie does not open it.
    s.db.user("ed@example.com", "editor");
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let v1 = format!("/api/v1/statuspages/{beta}");
    assert_eq!(ed.send(Method::GET, &v1, None).await.0, 401);
    let (status, page, _) = ed
        .send(
            Method::PATCH,
            &format!("/api/statuspages/{beta}"),
            Some(json!({"name": "Beta 2"})),
        )
        .await;
    assert_eq!(
        (status, page["data"]["name"].clone()),
        (200, json!("Beta 2"))
    );

    // The roles route is key-protected as the seed marks it: an admin key opens it.
    assert_eq!(
        s.get("/api/admin/roles")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        4
    );
    s.send(Method::GET, "/api/admin/roles", Some(&write), None)
        .await
        .problem(403);
    assert_eq!(
        ed.send(Method::GET, "/api/admin/roles", None).await.0,
        403,
        "editors lack ROLES_VIEW"
    );
}
