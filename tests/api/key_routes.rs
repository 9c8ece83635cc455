use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(users_manage_their_own_keys);

async fn users_manage_their_own_keys(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("admin@example.com", "admin");
    s.db.user("other@example.com", "admin");
    s.db.user("ed@example.com", "editor");
    let mut a = Browser::signed_in(&s, "admin@example.com").await;

    let (status, created, headers) = a
        .send(
            Method::POST,
            "/api/api-keys",
            Some(json!({"name": "deploy", "scopes": ["read", "write"], "expiresInDays": 30})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["cache-control"], "no-store");
    let secret = created["data"]["secret"].as_str().unwrap().to_string();
    let id = created["data"]["id"].as_i64().unwrap();
    assert_eq!(created["data"]["scopes"], json!(["read", "write"]));
    assert!(created["data"]["expiresAt"].is_string());
    // The key works, and its use is recorded.
    assert_eq!(
        s.send(
            Method::POST,
            "/api/v1/statuspages",
            Some(&secret),
            Some(json!({"name": "K", "slug": "k"}))
        )
        .await
        .status,
        201
    );
    assert_eq!(
        s.send(Method::DELETE, "/api/v1/statuspages/1", Some(&secret), None)
            .await
            .status,
        403,
        "no admin scope"
    );
    let (_, listed, _) = a.send(Method::GET, "/api/api-keys", None).await;
    let mine = &listed["data"][0];
    assert_eq!(mine["id"], id);
    assert!(
        mine.get("secret").is_none() && !listed.to_string().contains(&secret),
        "secrets are shown once"
    );
    let mut used = false;
    for _ in 0..30 {
        let (_, l, _) = a.send(Method::GET, "/api/api-keys", None).await;
        if l["data"][0]["lastUsedAt"].is_string() {
            used = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(used, "keys record when they were last used");

    // Bad input is refused with every bad field named.
    let (status, bad, _) = a
        .send(
            Method::POST,
            "/api/api-keys",
            Some(json!({"name": "", "scopes": "read,root", "expiresInDays": 0})),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(bad["errors"].as_array().unwrap().len(), 3);
    // A scope named twice, in either spelling: refused, nothing made.
    let keys_before = a.send(Method::GET, "/api/api-keys", None).await.1["data"]
        .as_array()
        .map(Vec::len);
    for scopes in [json!(["read", "read"]), json!("write,read,write")] {
        let (status, bad, _) = a
            .send(
                Method::POST,
                "/api/api-keys",
                Some(json!({"name": "twice", "scopes": scopes})),
            )
            .await;
        assert_eq!(status, 422, "{bad}");
        assert_eq!(bad["errors"][0]["field"], "scopes", "{bad}");
        assert!(
            bad["errors"][0]["message"]
                .as_str()
                .unwrap_or("")
                .contains("twice")
        );
    }
    assert_eq!(
        a.send(Method::GET, "/api/api-keys", None).await.1["data"]
            .as_array()
            .map(Vec::len),
        keys_before
    );
    // The admin scope needs a step-up, on creation and when raised to.
    assert_eq!(
        a.send(
            Method::POST,
            "/api/api-keys",
            Some(json!({"name": "root", "scopes": "admin"}))
        )
        .await
        .0,
        403
    );
    assert_eq!(
        a.send(
            Method::PATCH,
            &format!("/api/api-keys/{id}"),
            Some(json!({"scopes": ["admin"]}))
        )
        .await
        .0,
        403
    );
    let (_, su, _) = a.send(Method::POST, "/api/admin/step-up", None).await;
    let token = su["data"]["token"].as_str().unwrap().to_string();
    a.send(
        Method::POST,
        "/api/admin/step-up/verify-password",
        Some(json!({"token": token, "password": PASSWORD})),
    )
    .await;
    a.step_up = Some(token);
    let (status, root, _) = a
        .send(
            Method::POST,
            "/api/api-keys",
            Some(json!({"name": "root", "scopes": "admin"})),
        )
        .await;
    assert_eq!(status, 201);
    let root_secret = root["data"]["secret"].as_str().unwrap().to_string();
    let (status, renamed, _) = a
        .send(
            Method::PATCH,
            &format!("/api/api-keys/{id}"),
            Some(json!({"name": "deploy bot", "scopes": ["read"]})),
        )
        .await;
    assert_eq!(
        (
            status,
            renamed["data"]["name"].clone(),
            renamed["data"]["scopes"].clone()
        ),
        (200, json!("deploy bot"), json!(["read"]))
    );
    assert_eq!(
        s.send(
            Method::POST,
            "/api/v1/statuspages",
            Some(&secret),
            Some(json!({"name": "K2", "slug": "k2"}))
        )
        .await
        .status,
        403,
        "scopes changed"
    );

    // Someone else's keys are invisible; editors may not manage keys at all.
    let o = Browser::signed_in(&s, "other@example.com").await;
    assert_eq!(
        o.send(Method::DELETE, &format!("/api/api-keys/{id}"), None)
            .await
            .0,
        404
    );
    assert_eq!(
        o.send(Method::GET, "/api/api-keys", None).await.1["data"],
        json!([])
    );
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    assert_eq!(ed.send(Method::GET, "/api/api-keys", None).await.0, 403);

    let (status, revoked, _) = a
        .send(Method::DELETE, &format!("/api/api-keys/{id}"), None)
        .await;
    assert_eq!(status, 200);
    assert!(revoked["data"]["revokedAt"].is_string());
    assert_eq!(
        s.send(Method::GET, "/api/v1/statuspages", Some(&secret), None)
            .await
            .status,
        401
    );
    let (_, all, _) = a.send(Method::DELETE, "/api/api-keys", None).await;
    assert_eq!(all["data"]["revoked"], 1, "only the live one was left");
    assert_eq!(
        s.send(Method::GET, "/api/v1/statuspages", Some(&root_secret), None)
            .await
            .status,
        401
    );
    for m in [Method::GET, Method::POST, Method::DELETE] {
        s.send(m, "/api/api-keys", None, Some(json!({})))
            .await
            .problem(401);
    }
}
