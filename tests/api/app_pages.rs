use crate::on_both_backends;
use crate::support::{BIN, Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

on_both_backends!(signed_in_users_manage_pages_by_permission);

const PW: &str = "correct horse battery";

fn add_user(s: &Server, email: &str, role: &str) {
    let mut child = Command::new(BIN)
        .args(["user", "create", "--email", email, "--name", "N", "--role", role, "--password-stdin"])
        .env("UPSTATE_DATABASE_URL", &s.db.url)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{PW}\n").as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

async fn session(s: &Server, email: &str) -> (String, String) {
    let r = reqwest::Client::new()
        .post(format!("{}/api/auth/login", s.base))
        .json(&json!({"email": email, "password": PW}))
        .send()
        .await
        .unwrap();
    let cookie = r.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string();
    (cookie, r.json::<Value>().await.unwrap()["data"]["csrfToken"].as_str().unwrap().to_string())
}

async fn send(
    s: &Server,
    who: &(String, String),
    m: Method,
    path: &str,
    step_up: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(m, format!("{}{path}", s.base))
        .header("cookie", &who.0)
        .header("x-csrf-token", &who.1);
    if let Some(t) = step_up {
        req = req.header("x-step-up-token", t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn signed_in_users_manage_pages_by_permission(b: Backend) {
    let s = Server::start(b).await;
    add_user(&s, "ed@example.com", "editor");
    add_user(&s, "v@example.com", "viewer");
    let ed = session(&s, "ed@example.com").await;
    let v = session(&s, "v@example.com").await;

    let (status, page) =
        send(&s, &ed, Method::POST, "/api/statuspages", None, Some(json!({"name": "Acme", "slug": "acme"}))).await;
    assert_eq!(status, 201);
    let id = page["data"]["id"].as_i64().unwrap();
    assert_eq!(page["data"]["components"], json!([]), "the v1 detail view");
    assert_eq!(
        send(&s, &v, Method::POST, "/api/statuspages", None, Some(json!({"name": "X", "slug": "x"}))).await.0,
        403
    );
    let (status, list) = send(&s, &v, Method::GET, "/api/statuspages", None, None).await;
    assert_eq!((status, list["data"][0]["slug"].clone()), (200, json!("acme")), "viewers read");
    assert_eq!(send(&s, &v, Method::GET, &format!("/api/statuspages/{id}"), None, None).await.0, 200);
    let (status, put) =
        send(&s, &ed, Method::PUT, &format!("/api/statuspages/{id}"), None, Some(json!({"name": "Acme Cloud"}))).await;
    assert_eq!(
        (status, put["data"]["name"].clone(), put["data"]["slug"].clone()),
        (200, json!("Acme Cloud"), json!("acme"))
    );
    assert_eq!(
        send(&s, &v, Method::PUT, &format!("/api/statuspages/{id}"), None, Some(json!({"name": "no"}))).await.0,
        403
    );
    let (status, bad) =
        send(&s, &ed, Method::POST, "/api/statuspages", None, Some(json!({"name": "", "slug": "Bad"}))).await;
    assert_eq!((status, bad["errors"].as_array().unwrap().len()), (422, 2));

    // Deleting a page takes a fresh step-up.
    let (status, body) = send(&s, &ed, Method::DELETE, &format!("/api/statuspages/{id}"), None, None).await;
    assert_eq!(status, 403, "{body}");
    let (_, su) = send(&s, &ed, Method::POST, "/api/admin/step-up", None, None).await;
    let token = su["data"]["token"].as_str().unwrap().to_string();
    send(
        &s,
        &ed,
        Method::POST,
        "/api/admin/step-up/verify-password",
        None,
        Some(json!({"token": token, "password": PW})),
    )
    .await;
    let no_csrf = (ed.0.clone(), String::new());
    assert_eq!(send(&s, &no_csrf, Method::DELETE, &format!("/api/statuspages/{id}"), Some(&token), None).await.0, 403);
    assert_eq!(send(&s, &ed, Method::DELETE, &format!("/api/statuspages/{id}"), Some(&token), None).await.0, 200);
    assert_eq!(send(&s, &ed, Method::GET, &format!("/api/statuspages/{id}"), None, None).await.0, 404);
    let audit = s.get("/api/audit-events?targetType=statuspage").await.body;
    let deletion =
        audit["data"].as_array().unwrap().iter().find(|e| e["action"] == "statuspage.delete").unwrap().clone();
    assert_eq!(deletion["actor"]["label"], "ed@example.com");
    s.send(Method::GET, "/api/statuspages", None, None).await.problem(401);
}
