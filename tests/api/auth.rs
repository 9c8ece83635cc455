use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    missing_and_invalid_keys,
    scopes_by_method,
    revoked_and_expired_keys
);

async fn missing_and_invalid_keys(b: Backend) {
    let s = Server::start(b).await;
    s.page("p").await;
    let before = s.snapshot().await;
    let none = s.send(Method::GET, "/api/v1/statuspages", None, None).await;
    none.problem(401);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(
        none.header("x-ratelimit-remaining").is_some(),
        "401s carry rate-limit headers too"
    );
    s.send(
        Method::POST,
        "/api/v1/statuspages",
        Some("upk_not-a-real-key"),
        Some(json!({"name": "x", "slug": "x"})),
    )
    .await
    .problem(401);
    // A scheme other than Bearer is not a key.
    let basic = reqwest::Client::new()
        .get(format!("{}/api/v1/statuspages", s.base))
        .header("authorization", format!("Basic {}", s.key))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status().as_u16(), 401);
    assert_eq!(s.snapshot().await, before);
}

async fn scopes_by_method(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    // (scopes, may read, may write, may delete)
    let table = [
        ("read", true, false, false),
        ("read:*", true, false, false),
        ("write", true, true, false),
        ("write:*", true, true, false),
        ("read,write", true, true, false),
        ("admin", true, true, true),
    ];
    for (n, (scopes, read, write, delete)) in table.into_iter().enumerate() {
        let key = s.db.create_key(scopes);
        let victim = s.component(p, &format!("victim {n}")).await;
        let expect = |allowed: bool| if allowed { 200 } else { 403 };
        let r = s
            .send(Method::GET, "/api/v1/statuspages", Some(&key), None)
            .await;
        assert_eq!(r.status, expect(read), "{scopes} GET");
        let r = s
            .send(
                Method::GET,
                &format!("/api/v1/components/{victim}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(r.status, expect(read), "{scopes} GET one");
        let r = s
            .send(
                Method::POST,
                "/api/v1/components",
                Some(&key),
                Some(json!({"name": "new", "statusPageId": p})),
            )
            .await;
        assert_eq!(r.status, if write { 201 } else { 403 }, "{scopes} POST");
        let r = s
            .send(
                Method::PATCH,
                &format!("/api/v1/components/{victim}"),
                Some(&key),
                Some(json!({"name": "renamed"})),
            )
            .await;
        assert_eq!(r.status, expect(write), "{scopes} PATCH");
        let r = s
            .send(
                Method::DELETE,
                &format!("/api/v1/components/{victim}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(r.status, expect(delete), "{scopes} DELETE");
        if !delete {
            assert!(r.problem(403)["detail"].as_str().unwrap().contains("admin"));
            assert_eq!(
                s.get(&format!("/api/v1/components/{victim}")).await.status,
                200,
                "refused delete kept the component"
            );
        }
    }
}

async fn revoked_and_expired_keys(b: Backend) {
    let s = Server::start(b).await;
    let key = s.db.create_key("admin");
    assert_eq!(
        s.send(Method::GET, "/api/v1/statuspages", Some(&key), None)
            .await
            .status,
        200
    );
    let (_, list, _) = s.db.cli(&["api-key", "list"]);
    let id = list
        .lines()
        .rfind(|l| l.contains("active"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let (ok, out, _) = s.db.cli(&["api-key", "revoke", &id]);
    assert!(ok && out.contains("Revoked"), "{out}");
    let r = s
        .send(Method::GET, "/api/v1/statuspages", Some(&key), None)
        .await;
    assert!(
        r.problem(401)["detail"]
            .as_str()
            .unwrap()
            .contains("revoked")
    );

    let expiring = s.db.create_key("admin");
    assert_eq!(
        s.send(Method::GET, "/api/v1/statuspages", Some(&expiring), None)
            .await
            .status,
        200
    );
    // Time passes: the key's expiry is now behind us.
    s.db.execute("UPDATE api_keys SET expires_at = 1000 WHERE revoked_at IS NULL AND id > 1")
        .await;
    let r = s
        .send(Method::GET, "/api/v1/statuspages", Some(&expiring), None)
        .await;
    assert!(
        r.problem(401)["detail"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
    assert_eq!(
        s.get("/api/v1/statuspages").await.status,
        200,
        "the first key is untouched"
    );
}
