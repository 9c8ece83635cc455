use crate::on_both_backends;
use crate::support::{BIN, Backend, Browser, Server, setup_token_in};
use reqwest::Method;
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

on_both_backends!(
    first_owner_from_the_setup_link,
    cli_users_sign_in_with_sessions_and_roles,
    csrf_guards_session_writes,
    password_change_ends_other_sessions,
    sign_in_is_throttled_without_telling_who_exists,
    sessions_expire_idle_and_absolute
);

const PW: &str = "correct horse battery";

async fn call(
    s: &Server,
    b: &Browser,
    method: Method,
    path: &str,
    csrf: bool,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method, format!("{}{path}", s.base))
        .header("cookie", &b.cookie);
    if csrf {
        req = req.header("x-csrf-token", &b.csrf);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn first_owner_from_the_setup_link(b: Backend) {
    let mut s = Server::process(b).await;
    let token = s.setup_token().await;
    let send = async |body: Value| {
        s.send(Method::POST, "/api/auth/setup", None, Some(body))
            .await
    };
    send(json!({"token": "0".repeat(64), "email": "o@example.com", "name": "O", "password": PW}))
        .await
        .problem(409);
    send(json!({"token": token, "email": "not-an-email", "name": "", "password": "short"}))
        .await
        .invalid_fields(&["email", "name", "password"]);
    let r =
        send(json!({"token": token, "email": "Owner@Example.com", "name": "Olga", "password": PW}))
            .await;
    let owner = r.data(201);
    assert_eq!(owner["email"], "owner@example.com");
    assert_eq!(owner["role"], "owner");
    assert!(owner.get("passwordHash").is_none());
    send(json!({"token": token, "email": "second@example.com", "name": "S", "password": PW}))
        .await
        .problem(409);
    assert!(Browser::login(&s, "owner@example.com", PW).await.is_ok());
    // With a user in place, a restart logs no new link (the link is
    // logged before the line saying where the server listens, for which
    // `restart` waits).
    assert!(s.stop());
    std::fs::write(s.db.dir.path().join("server.log"), "").unwrap();
    s.restart(&[]);
    assert!(setup_token_in(&s.log()).is_none());
}

async fn cli_users_sign_in_with_sessions_and_roles(b: Backend) {
    let s = Server::start(b).await;
    assert!(s.db.add_user("owner@example.com", "owner", PW).0);
    s.db.user_with("ed@example.com", "editor", PW);
    for (email, role, pw) in [
        ("x@example.com", "emperor", PW),
        ("y@example.com", "viewer", "short"),
        ("bad", "viewer", PW),
        ("ed@example.com", "viewer", PW),
    ] {
        let (ok, _, err) = s.db.add_user(email, role, pw);
        assert!(!ok && err.contains("error"), "{email} {role}: {err}");
    }
    let out = Command::new(BIN)
        .args([
            "user",
            "create",
            "--email",
            "z@example.com",
            "--name",
            "Z",
            "--role",
            "viewer",
        ])
        .env("UPSTATE_DATABASE_URL", &s.db.url)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the password only comes on stdin");

    let raw = reqwest::Client::new()
        .post(format!("{}/api/auth/login", s.base))
        .json(&json!({"email": "ED@example.com", "password": PW}))
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 200);
    let cookie = raw.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with("upstate_session=")
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Lax")
            && cookie.contains("Path=/"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("Secure"),
        "plain http on loopback: not Secure"
    );

    let ed = Browser::login(&s, "ed@example.com", PW).await.ok().unwrap();
    let ed2 = Browser::login(&s, "ed@example.com", PW).await.ok().unwrap();
    assert_ne!(ed.cookie, ed2.cookie, "every sign-in gets a new session id");
    let (status, me) = call(&s, &ed, Method::GET, "/api/auth/me", false, None).await;
    assert_eq!(status, 200);
    assert_eq!(me["data"]["email"], "ed@example.com");
    assert!(me["data"]["lastLoginAt"].is_string());
    assert_eq!(
        call(&s, &ed2, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        200,
        "both sessions live"
    );
    let (_, perms) = call(&s, &ed, Method::GET, "/api/auth/permissions", false, None).await;
    assert_eq!(
        perms["data"],
        json!({"role": "editor", "permissions": ["PAGES_READ", "INCIDENTS_WRITE", "PAGES_WRITE"]})
    );
    let (status, body) = call(&s, &ed, Method::GET, "/api/admin/roles", false, None).await;
    assert_eq!(status, 403, "editors lack ROLES_VIEW: {body}");
    let owner = Browser::login(&s, "owner@example.com", PW)
        .await
        .ok()
        .unwrap();
    let (status, roles) = call(&s, &owner, Method::GET, "/api/admin/roles", false, None).await;
    assert_eq!(status, 200);
    assert_eq!(roles["data"].as_array().unwrap().len(), 4);
    assert_eq!(
        roles["data"][3],
        json!({"role": "viewer", "permissions": ["PAGES_READ"]})
    );
    assert_eq!(owner.user["role"], "owner");

    for path in [
        "/api/auth/me",
        "/api/auth/permissions",
        "/api/csrf",
        "/api/admin/roles",
    ] {
        s.send(Method::GET, path, None, None).await.problem(401);
    }
    let bogus = Browser {
        cookie: format!("upstate_session={}", "f".repeat(64)),
        csrf: String::new(),
        ..ed.clone()
    };
    assert_eq!(
        call(&s, &bogus, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        401
    );

    // Sign-ins and user creation are in the audit log, by their actors.
    let audit = s
        .get("/api/audit-events?targetType=user&limit=100")
        .await
        .body;
    let actions: Vec<(String, String)> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().into(),
                e["actor"]["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(actions.contains(&("user.create".into(), "cli".into())));
    assert!(actions.contains(&("user.login".into(), "user".into())));
}

async fn csrf_guards_session_writes(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("v@example.com", "viewer", PW);
    let v = Browser::login(&s, "v@example.com", PW).await.ok().unwrap();
    let (status, body) = call(&s, &v, Method::GET, "/api/csrf", false, None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["csrfToken"], v.csrf.as_str());
    let (status, body) = call(&s, &v, Method::POST, "/api/auth/logout", false, None).await;
    assert_eq!(status, 403, "{body}");
    let wrong = Browser {
        csrf: "0".repeat(64),
        ..v.clone()
    };
    assert_eq!(
        call(&s, &wrong, Method::POST, "/api/auth/logout", true, None)
            .await
            .0,
        403
    );
    assert_eq!(
        call(&s, &v, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        200,
        "refused logout changed nothing"
    );
    let r = reqwest::Client::new()
        .post(format!("{}/api/auth/logout", s.base))
        .header("cookie", &v.cookie)
        .header("x-csrf-token", &v.csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert!(
        r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0"),
        "the cookie is cleared"
    );
    assert_eq!(
        call(&s, &v, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        401
    );
}

async fn password_change_ends_other_sessions(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("a@example.com", "admin", PW);
    let here = Browser::login(&s, "a@example.com", PW).await.ok().unwrap();
    let elsewhere = Browser::login(&s, "a@example.com", PW).await.ok().unwrap();
    let change = async |body: Value| {
        call(
            &s,
            &here,
            Method::POST,
            "/api/auth/change-password",
            true,
            Some(body),
        )
        .await
    };
    let (status, body) = change(
        json!({"currentPassword": "not it at all", "newPassword": "another fine passphrase"}),
    )
    .await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("currentPassword"))
    );
    let (status, body) = change(json!({"currentPassword": PW, "newPassword": "short"})).await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("newPassword"))
    );
    assert_eq!(
        call(&s, &elsewhere, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        200,
        "refusals change nothing"
    );
    assert_eq!(
        change(json!({"currentPassword": PW, "newPassword": "another fine passphrase"}))
            .await
            .0,
        204
    );
    assert_eq!(
        call(&s, &elsewhere, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        401,
        "other sessions end"
    );
    assert_eq!(
        call(&s, &here, Method::GET, "/api/auth/me", false, None)
            .await
            .0,
        200,
        "this one stays"
    );
    assert!(Browser::login(&s, "a@example.com", PW).await.is_err());
    assert!(
        Browser::login(&s, "a@example.com", "another fine passphrase")
            .await
            .is_ok()
    );
    let (status, _) = call(
        &s,
        &here,
        Method::POST,
        "/api/auth/change-password",
        false,
        Some(json!({"currentPassword": "x", "newPassword": "y"})),
    )
    .await;
    assert_eq!(status, 403, "CSRF first");
}

async fn sign_in_is_throttled_without_telling_who_exists(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    s.db.user_with("real@example.com", "viewer", PW);
    let attempt = async |email: &str, pw: &str| {
        let r = reqwest::Client::new()
            .post(format!("{}/api/auth/login", s.base))
            .json(&json!({"email": email, "password": pw}))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let retry = r
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        (status, retry, r.json::<Value>().await.unwrap())
    };
    let (s1, _, wrong_pw) = attempt("real@example.com", "wrong password here").await;
    let (s2, _, unknown) = attempt("ghost@example.com", "wrong password here").await;
    assert_eq!((s1, s2), (401, 401));
    assert_eq!(
        wrong_pw["detail"], unknown["detail"],
        "the answer never tells whether an email exists"
    );
    attempt("real@example.com", "wrong password here").await;
    attempt("real@example.com", "wrong password here").await;
    // Locked now: even the right password waits.
    let (status, retry, _) = attempt("real@example.com", PW).await;
    assert_eq!(status, 429);
    assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
    s.advance(Duration::from_millis(4_200));
    let (status, _, _) = attempt("real@example.com", PW).await;
    assert_eq!(status, 200, "the lock is temporary");
    let (status, _, _) = attempt("real@example.com", "wrong password here").await;
    assert_eq!(status, 401, "success cleared the count");
    s.send(
        Method::POST,
        "/api/auth/login",
        None,
        Some(json!({"email": "real@example.com"})),
    )
    .await
    .invalid_fields(&["password"]);
    s.send(Method::POST, "/api/auth/login", None, Some(json!({})))
        .await
        .invalid_fields(&["email", "password"]);
}

async fn sessions_expire_idle_and_absolute(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    s.db.user_with("e@example.com", "viewer", PW);
    let me = async |b: &Browser| {
        call(&s, b, Method::GET, "/api/auth/me", false, None)
            .await
            .0
    };
    let idle = Browser::login(&s, "e@example.com", PW).await.ok().unwrap();
    let old = Browser::login(&s, "e@example.com", PW).await.ok().unwrap();
    let minute = Duration::from_secs(60);
    s.advance(29 * minute);
    assert_eq!(me(&idle).await, 200, "29 minutes idle is not yet too long");
    assert_eq!(me(&old).await, 200);
    s.advance(20 * minute);
    assert_eq!(me(&old).await, 200);
    s.advance(11 * minute);
    assert_eq!(me(&idle).await, 401, "31 minutes idle");
    // Used every 20 minutes, a session still ends 12 hours after sign-in.
    let mut lived = 60 * minute;
    let live = Browser::login(&s, "e@example.com", PW).await.ok().unwrap();
    while lived < 12 * 60 * minute - 20 * minute {
        assert_eq!(
            me(&old).await,
            200,
            "{} min after sign-in",
            lived.as_secs() / 60
        );
        s.advance(20 * minute);
        lived += 20 * minute;
        assert_eq!(me(&live).await, 200);
    }
    s.advance(12 * 60 * minute - lived);
    assert_eq!(me(&old).await, 401, "12 hours in all");
    assert_eq!(me(&live).await, 200, "a later sign-in lives on");
}
