use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    role_matrix,
    step_up_guards_sensitive_actions,
    last_owner_and_ranks,
    user_actions
);

async fn role_matrix(b: Backend) {
    let s = Server::start(b).await;
    let all = [
        "PAGES_READ",
        "INCIDENTS_WRITE",
        "PAGES_WRITE",
        "ROLES_VIEW",
        "AUDIT_VIEW",
        "KEYS_MANAGE",
        "USERS_MANAGE",
        "SETTINGS_WRITE",
    ];
    // The documented table (docs/security.md): every role against every permission.
    let table: [(&str, &[&str]); 4] = [
        ("owner", &all),
        ("admin", &all),
        ("editor", &["PAGES_READ", "INCIDENTS_WRITE", "PAGES_WRITE"]),
        ("viewer", &["PAGES_READ"]),
    ];
    for (role, granted) in table {
        s.db.user(&format!("{role}@example.com"), role);
        let who = Browser::signed_in(&s, &format!("{role}@example.com")).await;
        let (_, perms, _) = who.send(Method::GET, "/api/auth/permissions", None).await;
        assert_eq!(perms["data"]["role"], role);
        let listed: Vec<&str> = perms["data"]["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        for p in all {
            assert_eq!(listed.contains(&p), granted.contains(&p), "{role} / {p}");
        }
        // And the routes enforce what the list says.
        let may = |p: &str| if granted.contains(&p) { 200 } else { 403 };
        for (path, p) in [
            ("/api/admin/roles", "ROLES_VIEW"),
            ("/api/admin/users", "USERS_MANAGE"),
            ("/api/audit-events", "AUDIT_VIEW"),
            ("/api/api-keys", "KEYS_MANAGE"),
            ("/api/statuspages", "PAGES_READ"),
        ] {
            assert_eq!(
                who.send(Method::GET, path, None).await.0,
                may(p),
                "{role} GET {path}"
            );
        }
        let (status, _, _) = who
            .send(
                Method::POST,
                "/api/statuspages",
                Some(json!({"name": "P", "slug": format!("p-{role}")})),
            )
            .await;
        assert_eq!(
            status,
            if granted.contains(&"PAGES_WRITE") {
                201
            } else {
                403
            },
            "{role} creates a page"
        );
    }
}

async fn step_up_guards_sensitive_actions(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let ed = s.db.user("ed@example.com", "editor");
    let mut o = Browser::signed_in(&s, "owner@example.com").await;
    let path = format!("/api/admin/users/{ed}");
    let (status, body, _) = o
        .send(Method::PATCH, &path, Some(json!({"role": "admin"})))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("step-up"));
    // Renaming is not sensitive.
    assert_eq!(
        o.send(Method::PATCH, &path, Some(json!({"name": "Ed"})))
            .await
            .0,
        200
    );

    let (_, created, _) = o.send(Method::POST, "/api/admin/step-up", None).await;
    let token = created["data"]["token"].as_str().unwrap().to_string();
    let (_, st, _) = o
        .send(Method::GET, &format!("/api/admin/step-up/{token}"), None)
        .await;
    assert_eq!(
        (st["data"]["verified"].clone(), st["data"]["active"].clone()),
        (json!(false), json!(false))
    );
    o.step_up = Some(token.clone());
    assert_eq!(
        o.send(Method::PATCH, &path, Some(json!({"role": "admin"})))
            .await
            .0,
        403,
        "unverified"
    );
    let (status, _, _) = o
        .send(
            Method::POST,
            "/api/admin/step-up/verify-password",
            Some(json!({"token": token, "password": "wrong wrong wrong"})),
        )
        .await;
    assert_eq!(status, 422);
    let (status, _, _) = o
        .send(
            Method::POST,
            "/api/admin/step-up/verify-password",
            Some(json!({"token": token, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _, _) = o
        .send(
            Method::POST,
            "/api/admin/step-up/verify-password",
            Some(json!({"token": token, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 409, "verified once");
    assert_eq!(
        o.send(Method::GET, "/api/admin/step-up", None).await.1["data"]["method"],
        "password"
    );

    // Another session of the same user cannot borrow it.
    let mut other = Browser::signed_in(&s, "owner@example.com").await;
    other.step_up = Some(token.clone());
    assert_eq!(
        other
            .send(Method::PATCH, &path, Some(json!({"role": "admin"})))
            .await
            .0,
        403
    );
    let (status, user, _) = o
        .send(Method::PATCH, &path, Some(json!({"role": "admin"})))
        .await;
    assert_eq!(
        (status, user["data"]["role"].clone()),
        (200, json!("admin"))
    );

    // A step-up verified more than five minutes ago has expired.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    s.db.execute(&format!(
        "UPDATE step_ups SET verified_at = {}",
        now - 6 * 60_000
    ))
    .await;
    assert_eq!(
        o.send(Method::PATCH, &path, Some(json!({"role": "editor"})))
            .await
            .0,
        403
    );
    // And a TOTP code works as the proof too, for users with two-factor.
    let (_, setup, _) = o.send(Method::POST, "/api/auth/2fa/setup", None).await;
    let secret = setup["data"]["secret"].as_str().unwrap().to_string();
    let code = |at: u64| {
        let bytes = totp_rs::Secret::Encoded(secret.clone()).to_bytes().unwrap();
        totp_rs::TOTP::new(totp_rs::Algorithm::SHA1, 6, 1, 30, bytes, None, "x".into())
            .unwrap()
            .generate(at)
    };
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(
        o.send(
            Method::POST,
            "/api/auth/2fa/verify-setup",
            Some(json!({"code": code(t)}))
        )
        .await
        .0,
        200
    );
    let (_, created, _) = o.send(Method::POST, "/api/admin/step-up", None).await;
    let token = created["data"]["token"].as_str().unwrap().to_string();
    let (status, body, _) = o
        .send(
            Method::POST,
            "/api/admin/step-up/verify-totp",
            Some(json!({"token": token, "code": code(t + 30)})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["method"], "totp");
    o.step_up = Some(token);
    assert_eq!(
        o.send(Method::PATCH, &path, Some(json!({"role": "editor"})))
            .await
            .0,
        200
    );
}

async fn last_owner_and_ranks(b: Backend) {
    let s = Server::start(b).await;
    let owner = s.db.user("owner@example.com", "owner");
    s.db.user("admin@example.com", "admin");
    let mut o = Browser::signed_in(&s, "owner@example.com").await;
    o.step_up().await;
    let (status, body, _) = o
        .send(
            Method::PATCH,
            &format!("/api/admin/users/{owner}"),
            Some(json!({"role": "admin"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("last owner"));
    assert_eq!(
        o.send(Method::DELETE, &format!("/api/admin/users/{owner}"), None)
            .await
            .0,
        409
    );

    let mut a = Browser::signed_in(&s, "admin@example.com").await;
    a.step_up().await;
    assert_eq!(
        a.send(
            Method::PATCH,
            &format!("/api/admin/users/{owner}"),
            Some(json!({"name": "x"}))
        )
        .await
        .0,
        403,
        "owners rank above admins"
    );
    assert_eq!(
        a.send(Method::DELETE, &format!("/api/admin/users/{owner}"), None)
            .await
            .0,
        403
    );
    let (status, _, _) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "o2@example.com", "name": "O2", "role": "owner", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 403, "no granting above your own role");
    let (status, ed, _) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "Ed@Example.com", "name": "Ed", "role": "editor", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(ed["data"]["email"], "ed@example.com");
    assert_eq!(
        a.send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "ed@example.com", "name": "Ed", "role": "editor", "password": PASSWORD}))
        )
        .await
        .0,
        409
    );
    let (status, bad, _) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "nope", "name": "", "role": "god", "password": "short"})),
        )
        .await;
    assert_eq!(status, 422);
    let mut fields: Vec<&str> = bad["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(fields, ["email", "name", "password", "role"]);

    // With a second owner, the first may step down.
    let (status, second, _) = o
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "o2@example.com", "name": "O2", "role": "owner", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(
        o.send(
            Method::PATCH,
            &format!("/api/admin/users/{owner}"),
            Some(json!({"role": "admin"}))
        )
        .await
        .0,
        200
    );
    assert_eq!(
        o.send(Method::GET, "/api/admin/users", None).await.1["data"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let _ = second;
}

async fn user_actions(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let v = s.db.user("v@example.com", "viewer");
    let mut o = Browser::signed_in(&s, "owner@example.com").await;
    let victim = Browser::signed_in(&s, "v@example.com").await;
    let (status, body, _) = o
        .send(
            Method::POST,
            &format!("/api/admin/users/{v}/actions"),
            Some(json!({"action": "revoke-sessions"})),
        )
        .await;
    assert_eq!(
        (status, body["data"]["sessionsEnded"].clone()),
        (200, json!(1))
    );
    assert_eq!(victim.send(Method::GET, "/api/auth/me", None).await.0, 401);
    assert_eq!(
        o.send(
            Method::POST,
            &format!("/api/admin/users/{v}/actions"),
            Some(json!({"action": "explode"}))
        )
        .await
        .0,
        422
    );
    assert_eq!(
        o.send(
            Method::POST,
            &format!("/api/admin/users/{v}/reset-password"),
            None
        )
        .await
        .0,
        403,
        "needs a step-up"
    );
    o.step_up().await;
    let (status, body, _) = o
        .send(
            Method::POST,
            &format!("/api/admin/users/{v}/reset-password"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let temporary = body["data"]["temporaryPassword"]
        .as_str()
        .unwrap()
        .to_string();
    let r = reqwest::Client::new()
        .post(format!("{}/api/auth/login", s.base))
        .json(&json!({"email": "v@example.com", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the old password is gone");
    Browser::login(&s, "v@example.com", &temporary)
        .await
        .ok()
        .unwrap();
    let (status, _, _) = o
        .send(
            Method::POST,
            &format!("/api/admin/users/{v}/reset-2fa"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        o.send(
            Method::POST,
            &format!("/api/admin/users/{v}/revoke-sessions"),
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        o.send(Method::DELETE, &format!("/api/admin/users/{v}"), None)
            .await
            .0,
        204
    );
    assert_eq!(
        o.send(Method::GET, &format!("/api/admin/users/{v}"), None)
            .await
            .0,
        404
    );
}
