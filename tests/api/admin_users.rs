use crate::on_both_backends;
use crate::support::{BIN, Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

on_both_backends!(role_matrix, step_up_guards_sensitive_actions, last_owner_and_ranks, user_actions);

const PW: &str = "correct horse battery";

fn add_user(s: &Server, email: &str, role: &str) -> i64 {
    let mut child = Command::new(BIN)
        .args(["user", "create", "--email", email, "--name", "N", "--role", role, "--password-stdin"])
        .env("UPSTATE_DATABASE_URL", &s.db.url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{PW}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[derive(Clone)]
struct Who {
    base: String,
    cookie: String,
    csrf: String,
    step_up: Option<String>,
}

impl Who {
    async fn login(s: &Server, email: &str, password: &str) -> Who {
        let r = reqwest::Client::new()
            .post(format!("{}/api/auth/login", s.base))
            .json(&json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "login {email}");
        let cookie = r.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
        let csrf = r.json::<Value>().await.unwrap()["data"]["csrfToken"].as_str().unwrap().to_string();
        Who { base: s.base.clone(), cookie, csrf, step_up: None }
    }

    async fn send(&self, m: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = reqwest::Client::new()
            .request(m, format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf);
        if let Some(t) = &self.step_up {
            req = req.header("x-step-up-token", t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Creates and verifies a step-up by password.
    async fn step_up(&mut self) {
        let (status, created) = self.send(Method::POST, "/api/admin/step-up", None).await;
        assert_eq!(status, 201);
        let token = created["data"]["token"].as_str().unwrap().to_string();
        let (status, body) = self
            .send(Method::POST, "/api/admin/step-up/verify-password", Some(json!({"token": token, "password": PW})))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["active"], true);
        self.step_up = Some(token);
    }
}

async fn role_matrix(b: Backend) {
    let s = Server::start(b).await;
    let table = [("owner", true), ("admin", true), ("editor", false), ("viewer", false)];
    for (role, privileged) in table {
        add_user(&s, &format!("{role}@example.com"), role);
        let who = Who::login(&s, &format!("{role}@example.com"), PW).await;
        let expect = if privileged { 200 } else { 403 };
        for path in ["/api/admin/roles", "/api/admin/users", "/api/audit-events"] {
            assert_eq!(who.send(Method::GET, path, None).await.0, expect, "{role} GET {path}");
        }
        let (_, perms) = who.send(Method::GET, "/api/auth/permissions", None).await;
        let listed: Vec<&str> =
            perms["data"]["permissions"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        assert_eq!(listed.contains(&"USERS_MANAGE"), privileged, "{role}");
        assert_eq!(listed.contains(&"INCIDENTS_WRITE"), role != "viewer", "{role}");
        assert!(listed.contains(&"PAGES_READ"));
    }
}

async fn step_up_guards_sensitive_actions(b: Backend) {
    let s = Server::start(b).await;
    add_user(&s, "owner@example.com", "owner");
    let ed = add_user(&s, "ed@example.com", "editor");
    let mut o = Who::login(&s, "owner@example.com", PW).await;
    let path = format!("/api/admin/users/{ed}");
    let (status, body) = o.send(Method::PATCH, &path, Some(json!({"role": "admin"}))).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("step-up"));
    // Renaming is not sensitive.
    assert_eq!(o.send(Method::PATCH, &path, Some(json!({"name": "Ed"}))).await.0, 200);

    let (_, created) = o.send(Method::POST, "/api/admin/step-up", None).await;
    let token = created["data"]["token"].as_str().unwrap().to_string();
    let (_, st) = o.send(Method::GET, &format!("/api/admin/step-up/{token}"), None).await;
    assert_eq!((st["data"]["verified"].clone(), st["data"]["active"].clone()), (json!(false), json!(false)));
    o.step_up = Some(token.clone());
    assert_eq!(o.send(Method::PATCH, &path, Some(json!({"role": "admin"}))).await.0, 403, "unverified");
    let (status, _) = o
        .send(
            Method::POST,
            "/api/admin/step-up/verify-password",
            Some(json!({"token": token, "password": "wrong wrong wrong"})),
        )
        .await;
    assert_eq!(status, 422);
    let (status, _) =
        o.send(Method::POST, "/api/admin/step-up/verify-password", Some(json!({"token": token, "password": PW}))).await;
    assert_eq!(status, 200);
    let (status, _) =
        o.send(Method::POST, "/api/admin/step-up/verify-password", Some(json!({"token": token, "password": PW}))).await;
    assert_eq!(status, 409, "verified once");
    assert_eq!(o.send(Method::GET, "/api/admin/step-up", None).await.1["data"]["method"], "password");

    // Another session of the same user cannot borrow it.
    let mut other = Who::login(&s, "owner@example.com", PW).await;
    other.step_up = Some(token.clone());
    assert_eq!(other.send(Method::PATCH, &path, Some(json!({"role": "admin"}))).await.0, 403);
    let (status, user) = o.send(Method::PATCH, &path, Some(json!({"role": "admin"}))).await;
    assert_eq!((status, user["data"]["role"].clone()), (200, json!("admin")));

    // A step-up verified more than five minutes ago has expired.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    s.db.execute(&format!("UPDATE step_ups SET verified_at = {}", now - 6 * 60_000)).await;
    assert_eq!(o.send(Method::PATCH, &path, Some(json!({"role": "editor"}))).await.0, 403);
    // And a TOTP code works as the proof too, for users with two-factor.
    let (_, setup) = o.send(Method::POST, "/api/auth/2fa/setup", None).await;
    let secret = setup["data"]["secret"].as_str().unwrap().to_string();
    let code = |at: u64| {
        let bytes = totp_rs::Secret::Encoded(secret.clone()).to_bytes().unwrap();
        totp_rs::TOTP::new(totp_rs::Algorithm::SHA1, 6, 1, 30, bytes, None, "x".into()).unwrap().generate(at)
    };
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(o.send(Method::POST, "/api/auth/2fa/verify-setup", Some(json!({"code": code(t)}))).await.0, 200);
    let (_, created) = o.send(Method::POST, "/api/admin/step-up", None).await;
    let token = created["data"]["token"].as_str().unwrap().to_string();
    let (status, body) = o
        .send(Method::POST, "/api/admin/step-up/verify-totp", Some(json!({"token": token, "code": code(t + 30)})))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["method"], "totp");
    o.step_up = Some(token);
    assert_eq!(o.send(Method::PATCH, &path, Some(json!({"role": "editor"}))).await.0, 200);
}

async fn last_owner_and_ranks(b: Backend) {
    let s = Server::start(b).await;
    let owner = add_user(&s, "owner@example.com", "owner");
    add_user(&s, "admin@example.com", "admin");
    let mut o = Who::login(&s, "owner@example.com", PW).await;
    o.step_up().await;
    let (status, body) =
        o.send(Method::PATCH, &format!("/api/admin/users/{owner}"), Some(json!({"role": "admin"}))).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("last owner"));
    assert_eq!(o.send(Method::DELETE, &format!("/api/admin/users/{owner}"), None).await.0, 409);

    let mut a = Who::login(&s, "admin@example.com", PW).await;
    a.step_up().await;
    assert_eq!(
        a.send(Method::PATCH, &format!("/api/admin/users/{owner}"), Some(json!({"name": "x"}))).await.0,
        403,
        "owners rank above admins"
    );
    assert_eq!(a.send(Method::DELETE, &format!("/api/admin/users/{owner}"), None).await.0, 403);
    let (status, _) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "o2@example.com", "name": "O2", "role": "owner", "password": PW})),
        )
        .await;
    assert_eq!(status, 403, "no granting above your own role");
    let (status, ed) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "Ed@Example.com", "name": "Ed", "role": "editor", "password": PW})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(ed["data"]["email"], "ed@example.com");
    assert_eq!(
        a.send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "ed@example.com", "name": "Ed", "role": "editor", "password": PW}))
        )
        .await
        .0,
        409
    );
    let (status, bad) = a
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "nope", "name": "", "role": "god", "password": "short"})),
        )
        .await;
    assert_eq!(status, 422);
    let mut fields: Vec<&str> =
        bad["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["email", "name", "password", "role"]);

    // With a second owner, the first may step down.
    let (status, second) = o
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "o2@example.com", "name": "O2", "role": "owner", "password": PW})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(
        o.send(Method::PATCH, &format!("/api/admin/users/{owner}"), Some(json!({"role": "admin"}))).await.0,
        200
    );
    assert_eq!(o.send(Method::GET, "/api/admin/users", None).await.1["data"].as_array().unwrap().len(), 4);
    let _ = second;
}

async fn user_actions(b: Backend) {
    let s = Server::start(b).await;
    add_user(&s, "owner@example.com", "owner");
    let v = add_user(&s, "v@example.com", "viewer");
    let mut o = Who::login(&s, "owner@example.com", PW).await;
    let victim = Who::login(&s, "v@example.com", PW).await;
    let (status, body) = o
        .send(Method::POST, &format!("/api/admin/users/{v}/actions"), Some(json!({"action": "revoke-sessions"})))
        .await;
    assert_eq!((status, body["data"]["sessionsEnded"].clone()), (200, json!(1)));
    assert_eq!(victim.send(Method::GET, "/api/auth/me", None).await.0, 401);
    assert_eq!(
        o.send(Method::POST, &format!("/api/admin/users/{v}/actions"), Some(json!({"action": "explode"}))).await.0,
        422
    );
    assert_eq!(
        o.send(Method::POST, &format!("/api/admin/users/{v}/reset-password"), None).await.0,
        403,
        "needs a step-up"
    );
    o.step_up().await;
    let (status, body) = o.send(Method::POST, &format!("/api/admin/users/{v}/reset-password"), None).await;
    assert_eq!(status, 200);
    let temporary = body["data"]["temporaryPassword"].as_str().unwrap().to_string();
    let r = reqwest::Client::new()
        .post(format!("{}/api/auth/login", s.base))
        .json(&json!({"email": "v@example.com", "password": PW}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "the old password is gone");
    Who::login(&s, "v@example.com", &temporary).await;
    let (status, _) = o.send(Method::POST, &format!("/api/admin/users/{v}/reset-2fa"), None).await;
    assert_eq!(status, 200);
    assert_eq!(o.send(Method::POST, &format!("/api/admin/users/{v}/revoke-sessions"), None).await.0, 200);
    assert_eq!(o.send(Method::DELETE, &format!("/api/admin/users/{v}"), None).await.0, 204);
    assert_eq!(o.send(Method::GET, &format!("/api/admin/users/{v}"), None).await.0, 404);
}
