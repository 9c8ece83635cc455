//! The guard of every secret check (docs/security.md, "Guessing"): each route
//! that accepts a secret locks after a few wrong guesses, refuses even the
//! right answer while locked, names in Retry-After when it accepts again, and
//! writes every failure and lock to the audit log without the guess.

use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use crate::two_factor::code;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

on_both_backends!(
    every_route_that_accepts_a_secret_is_guarded,
    a_pending_sign_in_dies_of_wrong_codes_and_a_password_does_not_wash_them_away,
    a_step_up_dies_of_wrong_proofs,
    a_lock_on_one_account_leaves_the_others_behind_the_address_alone,
    retry_after_names_the_latest_lock,
);

/// Body fields that carry a secret someone could guess.
const SECRET_FIELDS: [&str; 5] = [
    "password",
    "currentPassword",
    "code",
    "recoveryCode",
    "token",
];

/// Routes whose secret fields set a secret instead of checking one.
const SETS_A_SECRET: [&str; 5] = [
    "POST /api/admin/users",
    "POST /api/notifications",
    "PUT /api/notifications/{id}",
    "PUT /api/v1/statuspages/{id}/password",
    "PUT /api/statuspages/{id}/password",
];

/// Asserts a 429 problem with a Retry-After in whole seconds; returns it.
#[track_caller]
fn locked(status: u16, body: &Value, headers: &HeaderMap) -> u64 {
    assert_eq!(status, 429, "expected a lock; body: {body}");
    assert_eq!(body["status"], 429);
    assert_eq!(body["type"], "urn:upstate:problem:rate-limited");
    let secs = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let secs = secs.expect("Retry-After in seconds");
    assert!((1..=900).contains(&secs), "Retry-After {secs}");
    secs
}

/// Lets `secs` pass on the server's clock (the lock-outs read it).
fn wait(s: &Server, secs: u64) {
    s.advance(Duration::from_secs(secs));
}

/// Believes loopback's `X-Forwarded-For` (the tests speak for many addresses).
fn trust_loopback(c: &mut upstate::config::Config) {
    c.server.trusted_proxies = vec!["127.0.0.1/32".parse().expect("range")];
}

/// A JSON POST without a session; returns (status, body, headers).
async fn post(
    s: &Server,
    path: &str,
    body: Value,
    extra: &[(&str, &str)],
) -> (u16, Value, HeaderMap) {
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", s.base))
        .json(&body);
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    (status, r.json().await.unwrap_or(Value::Null), headers)
}

async fn as_browser(b: &Browser, path: &str, body: Value) -> (u16, Value, HeaderMap) {
    b.send(Method::POST, path, Some(body)).await
}

/// A six-digit code that is none of the secret's codes of the drift window.
fn wrong_code(s: &Server, secret: &str) -> String {
    let now = s.unix_secs();
    let valid: Vec<String> = [now - 30, now, now + 30]
        .iter()
        .map(|t| code(secret, *t))
        .collect();
    (0..)
        .map(|n| format!("{n:06}"))
        .find(|c| !valid.contains(c))
        .unwrap()
}

/// Turns two-factor on for a signed-in browser; returns (secret, recovery codes).
async fn enable_2fa(s: &Server, b: &Browser) -> (String, Vec<String>) {
    let (status, setup, _) = b.send(Method::POST, "/api/auth/2fa/setup", None).await;
    assert_eq!(status, 200, "{setup}");
    let secret = setup["data"]["secret"].as_str().unwrap().to_string();
    let (status, codes, _) = as_browser(
        b,
        "/api/auth/2fa/verify-setup",
        json!({"code": code(&secret, s.unix_secs())}),
    )
    .await;
    assert_eq!(status, 200, "{codes}");
    let codes = codes["data"]["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().into())
        .collect();
    (secret, codes)
}

/// A user with two-factor on, and a second-factor code valid now that no
/// earlier request has used (the next time step, within the drift window).
async fn two_factor_user(s: &Server, email: &str) -> (Browser, String, Vec<String>) {
    s.db.user(email, "owner");
    let b = Browser::signed_in(s, email).await;
    let (secret, codes) = enable_2fa(s, &b).await;
    (b, secret, codes)
}

/// The routes of the OpenAPI document whose JSON body carries a secret field.
async fn secret_routes(s: &Server) -> BTreeSet<String> {
    let doc = s
        .send(Method::GET, "/api/openapi.json", None, None)
        .await
        .body;
    let schemas = doc["components"]["schemas"].clone();
    let props = |schema: &Value| -> Vec<String> {
        let resolved = match schema["$ref"].as_str() {
            Some(r) => schemas[r.rsplit('/').next().unwrap()].clone(),
            None => schema.clone(),
        };
        // A body by kind is a oneOf of variants: any variant's fields count.
        let variants = resolved["oneOf"].as_array().cloned().unwrap_or_default();
        std::iter::once(&resolved)
            .chain(variants.iter())
            .filter_map(|v| v["properties"].as_object())
            .flat_map(|o| o.keys().cloned())
            .collect()
    };
    let mut found = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let Some(content) = op["requestBody"]["content"].as_object() else {
                continue;
            };
            for media in content.values() {
                if props(&media["schema"])
                    .iter()
                    .any(|p| SECRET_FIELDS.contains(&p.as_str()))
                {
                    found.insert(format!("{} {path}", method.to_uppercase()));
                }
            }
        }
    }
    found
}

async fn every_route_that_accepts_a_secret_is_guarded(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    let mut walked = BTreeSet::new();
    let mut guesses: Vec<String> = Vec::new();

    // The setup link (before any user exists): 3 wrong tokens, then locked.
    let token = s.setup_token().await;
    let setup = |t: &str| json!({"token": t, "email": "owner@example.com", "name": "Olga", "password": PASSWORD});
    for i in 0..3 {
        let guess = format!("{i}{}", "feedface".repeat(8))[..64].to_string();
        assert_eq!(
            post(&s, "/api/auth/setup", setup(&guess), &[]).await.0,
            409,
            "wrong token {i}"
        );
        guesses.push(guess);
    }
    let (status, body, headers) = post(&s, "/api/auth/setup", setup(&token), &[]).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        post(&s, "/api/auth/setup", setup(&token), &[]).await.0,
        201,
        "accepted once the lock ends"
    );
    walked.insert("POST /api/auth/setup");

    // Sign-in.
    s.db.user("login@example.com", "viewer");
    let login = |pw: &str| json!({"email": "login@example.com", "password": pw});
    for i in 0..3 {
        let guess = format!("wrong sign-in {i}");
        assert_eq!(post(&s, "/api/auth/login", login(&guess), &[]).await.0, 401);
        guesses.push(guess);
    }
    let (status, body, headers) = post(&s, "/api/auth/login", login(PASSWORD), &[]).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        post(&s, "/api/auth/login", login(PASSWORD), &[]).await.0,
        200
    );
    walked.insert("POST /api/auth/login");

    // Password change: the current password is guessed.
    s.db.user("change@example.com", "viewer");
    let me = Browser::signed_in(&s, "change@example.com").await;
    let change = |pw: &str| json!({"currentPassword": pw, "newPassword": "a brand new passphrase"});
    for i in 0..3 {
        let guess = format!("wrong current {i}");
        let (status, body, _) = as_browser(&me, "/api/auth/change-password", change(&guess)).await;
        assert_eq!(
            (status, body["errors"][0]["field"].as_str()),
            (422, Some("currentPassword"))
        );
        guesses.push(guess);
    }
    let (status, body, headers) =
        as_browser(&me, "/api/auth/change-password", change(PASSWORD)).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        as_browser(&me, "/api/auth/change-password", change(PASSWORD))
            .await
            .0,
        204
    );
    walked.insert("POST /api/auth/change-password");

    // Two-factor setup: codes of the new secret.
    s.db.user("setup2fa@example.com", "viewer");
    let me = Browser::signed_in(&s, "setup2fa@example.com").await;
    let (_, started, _) = me.send(Method::POST, "/api/auth/2fa/setup", None).await;
    let secret = started["data"]["secret"].as_str().unwrap().to_string();
    for _ in 0..3 {
        let guess = wrong_code(&s, &secret);
        assert_eq!(
            as_browser(&me, "/api/auth/2fa/verify-setup", json!({"code": guess}))
                .await
                .0,
            422
        );
    }
    let right = json!({"code": code(&secret, s.unix_secs())});
    let (status, body, headers) = as_browser(&me, "/api/auth/2fa/verify-setup", right).await;
    wait(&s, locked(status, &body, &headers));
    let right = json!({"code": code(&secret, s.unix_secs())});
    assert_eq!(
        as_browser(&me, "/api/auth/2fa/verify-setup", right).await.0,
        200
    );
    walked.insert("POST /api/auth/2fa/verify-setup");

    // Turning two-factor off: the password as proof.
    let (me, _, _) = two_factor_user(&s, "disable@example.com").await;
    for i in 0..3 {
        let guess = format!("wrong proof {i}");
        assert_eq!(
            as_browser(&me, "/api/auth/2fa/disable", json!({"password": guess}))
                .await
                .0,
            422
        );
        guesses.push(guess);
    }
    let (status, body, headers) =
        as_browser(&me, "/api/auth/2fa/disable", json!({"password": PASSWORD})).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        as_browser(&me, "/api/auth/2fa/disable", json!({"password": PASSWORD}))
            .await
            .0,
        204
    );
    walked.insert("POST /api/auth/2fa/disable");

    // New recovery codes: a current code as proof.
    let (me, secret, _) = two_factor_user(&s, "regen@example.com").await;
    for _ in 0..3 {
        let guess = wrong_code(&s, &secret);
        assert_eq!(
            as_browser(
                &me,
                "/api/auth/2fa/regenerate-codes",
                json!({"code": guess})
            )
            .await
            .0,
            422
        );
    }
    let next = || json!({"code": code(&secret, s.unix_secs() + 30)});
    let (status, body, headers) = as_browser(&me, "/api/auth/2fa/regenerate-codes", next()).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        as_browser(&me, "/api/auth/2fa/regenerate-codes", next())
            .await
            .0,
        200
    );
    walked.insert("POST /api/auth/2fa/regenerate-codes");

    // The second step of a sign-in.
    let (_, secret, recovery) = two_factor_user(&s, "second@example.com").await;
    let pending = Browser::login(&s, "second@example.com", PASSWORD)
        .await
        .ok()
        .unwrap();
    for _ in 0..3 {
        let guess = wrong_code(&s, &secret);
        assert_eq!(
            as_browser(&pending, "/api/auth/verify-2fa", json!({"code": guess}))
                .await
                .0,
            422
        );
    }
    let right = json!({"recoveryCode": recovery[0]});
    let (status, body, headers) = as_browser(&pending, "/api/auth/verify-2fa", right.clone()).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        as_browser(&pending, "/api/auth/verify-2fa", right).await.0,
        200
    );
    walked.insert("POST /api/auth/verify-2fa");

    // Step-up by password, and by code.
    s.db.user("stepup@example.com", "owner");
    let me = Browser::signed_in(&s, "stepup@example.com").await;
    let new_step_up = async |b: &Browser| {
        let (status, created, _) = b.send(Method::POST, "/api/admin/step-up", None).await;
        assert_eq!(status, 201);
        created["data"]["token"].as_str().unwrap().to_string()
    };
    let t = new_step_up(&me).await;
    for (i, expected) in [422, 422, 409].into_iter().enumerate() {
        let guess = format!("wrong step-up {i}");
        let proof = json!({"token": t, "password": guess});
        assert_eq!(
            as_browser(&me, "/api/admin/step-up/verify-password", proof)
                .await
                .0,
            expected,
            "proof {i}"
        );
        guesses.push(guess);
    }
    let right = |t: &str| json!({"token": t, "password": PASSWORD});
    let (status, body, headers) =
        as_browser(&me, "/api/admin/step-up/verify-password", right(&t)).await;
    wait(&s, locked(status, &body, &headers));
    let t = new_step_up(&me).await;
    assert_eq!(
        as_browser(&me, "/api/admin/step-up/verify-password", right(&t))
            .await
            .0,
        200
    );
    walked.insert("POST /api/admin/step-up/verify-password");

    let (me, secret, _) = two_factor_user(&s, "stepup-totp@example.com").await;
    let t = new_step_up(&me).await;
    for (i, expected) in [422, 422, 409].into_iter().enumerate() {
        let proof = json!({"token": t, "code": wrong_code(&s, &secret)});
        assert_eq!(
            as_browser(&me, "/api/admin/step-up/verify-totp", proof)
                .await
                .0,
            expected,
            "proof {i}"
        );
    }
    let next = |t: &str| json!({"token": t, "code": code(&secret, s.unix_secs() + 30)});
    let (status, body, headers) = as_browser(&me, "/api/admin/step-up/verify-totp", next(&t)).await;
    wait(&s, locked(status, &body, &headers));
    let t = new_step_up(&me).await;
    assert_eq!(
        as_browser(&me, "/api/admin/step-up/verify-totp", next(&t))
            .await
            .0,
        200
    );
    walked.insert("POST /api/admin/step-up/verify-totp");

    // A private page's password: visitors get 10 free mistakes.
    let page = s.page("hidden").await;
    s.make_private(page, "open sesame").await;
    let visit = |pw: &str| json!({"slug": "hidden", "password": pw});
    for i in 0..10 {
        let guess = format!("wrong page password {i}");
        assert_eq!(
            post(&s, "/api/verify-page-password", visit(&guess), &[])
                .await
                .0,
            401
        );
        guesses.push(guess);
    }
    let (status, body, headers) =
        post(&s, "/api/verify-page-password", visit("open sesame"), &[]).await;
    wait(&s, locked(status, &body, &headers));
    assert_eq!(
        post(&s, "/api/verify-page-password", visit("open sesame"), &[])
            .await
            .0,
        200
    );
    walked.insert("POST /api/verify-page-password");

    // Every route of the document that takes a secret was walked here, so a
    // new one cannot go unguarded without failing this test.
    let documented = secret_routes(&s).await;
    let expected: BTreeSet<String> = walked
        .iter()
        .map(|r| r.to_string())
        .chain(SETS_A_SECRET.iter().map(|r| r.to_string()))
        .collect();
    assert_eq!(
        documented, expected,
        "secret-taking routes of the OpenAPI document vs. the ones walked here"
    );

    // The audit log has every route's failures, with the address, never a guess.
    let events = s
        .get("/api/audit-events?action=auth.failure&limit=500")
        .await
        .data(200);
    let events = events.as_array().unwrap().clone();
    let routes: BTreeSet<&str> = events
        .iter()
        .filter_map(|e| e["summary"]["route"].as_str())
        .collect();
    for route in &walked {
        let path = route.split(' ').nth(1).unwrap();
        assert!(
            routes.contains(path),
            "no audited failure for {route}: {routes:?}"
        );
    }
    assert!(
        events.iter().all(|e| e["clientAddr"] == "127.0.0.1"),
        "{events:?}"
    );
    let locks = s
        .get("/api/audit-events?action=auth.lockout&limit=500")
        .await
        .data(200);
    let scopes: BTreeSet<&str> = locks
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["summary"]["scope"].as_str())
        .collect();
    assert!(scopes.contains("account+address"), "{scopes:?}");
    let all = s.get("/api/audit-events/export?format=json").await;
    assert_eq!(all.status, 200);
    let all = all.body.to_string();
    for guess in &guesses {
        assert!(
            !all.contains(guess.as_str()),
            "the audit log holds a guessed secret: {guess}"
        );
    }
}

async fn a_pending_sign_in_dies_of_wrong_codes_and_a_password_does_not_wash_them_away(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    let (_, secret, recovery) = two_factor_user(&s, "pending@example.com").await;
    let pending = Browser::login(&s, "pending@example.com", PASSWORD)
        .await
        .ok()
        .unwrap();
    let guess = async || {
        as_browser(
            &pending,
            "/api/auth/verify-2fa",
            json!({"code": wrong_code(&s, &secret)}),
        )
        .await
        .0
    };
    // Two free failures, then each waits out its lock (1 s after the third, 2 s after the fourth).
    let mut answers = vec![guess().await, guess().await, guess().await];
    wait(&s, 1);
    answers.push(guess().await);
    wait(&s, 2);
    answers.push(guess().await);
    assert_eq!(
        answers,
        [422, 422, 422, 422, 401],
        "the fifth wrong code ends the pending sign-in"
    );
    let right = json!({"recoveryCode": recovery[0]});
    let (status, body, _) = as_browser(&pending, "/api/auth/verify-2fa", right.clone()).await;
    assert_eq!(status, 401, "the pending sign-in is gone: {body}");

    // The password again opens a new pending sign-in, but the second step's
    // failures are not forgotten: it is still locked.
    let again = Browser::login(&s, "pending@example.com", PASSWORD)
        .await
        .ok()
        .unwrap();
    let (status, body, headers) = as_browser(&again, "/api/auth/verify-2fa", right.clone()).await;
    wait(&s, locked(status, &body, &headers));
    let (status, body, _) = as_browser(&again, "/api/auth/verify-2fa", right).await;
    assert_eq!(status, 200, "{body}");

    let events = s
        .get("/api/audit-events?action=auth.failure&limit=100")
        .await
        .data(200);
    let ended = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["summary"]["ended"] == "pending sign-in");
    assert_eq!(ended.count(), 1, "{events}");
}

async fn a_step_up_dies_of_wrong_proofs(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    s.db.user("admin@example.com", "owner");
    let me = Browser::signed_in(&s, "admin@example.com").await;
    let (_, created, _) = me.send(Method::POST, "/api/admin/step-up", None).await;
    let token = created["data"]["token"].as_str().unwrap().to_string();
    for i in 0..2 {
        let proof = json!({"token": token, "password": format!("nope {i}")});
        assert_eq!(
            as_browser(&me, "/api/admin/step-up/verify-password", proof)
                .await
                .0,
            422
        );
    }
    let proof = json!({"token": token, "password": "nope 3"});
    let (status, body, _) = as_browser(&me, "/api/admin/step-up/verify-password", proof).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("start a new one"),
        "{body}"
    );
    let (status, state, _) = me
        .send(Method::GET, &format!("/api/admin/step-up/{token}"), None)
        .await;
    assert_eq!(status, 404, "the ended step-up is gone: {state}");
    wait(&s, 1);
    let proof = json!({"token": token, "password": PASSWORD});
    let (status, _, _) = as_browser(&me, "/api/admin/step-up/verify-password", proof).await;
    assert_eq!(status, 409, "the right password cannot revive it");
}

async fn a_lock_on_one_account_leaves_the_others_behind_the_address_alone(b: Backend) {
    let s = Server::in_process(b, |_| {}).await;
    s.db.user("victim@example.com", "viewer");
    s.db.user("colleague@example.com", "viewer");
    let login = |email: &str, pw: &str| json!({"email": email, "password": pw});
    for i in 0..3 {
        let wrong = login("victim@example.com", &format!("guess {i}"));
        assert_eq!(post(&s, "/api/auth/login", wrong, &[]).await.0, 401);
    }
    let (status, body, headers) = post(
        &s,
        "/api/auth/login",
        login("victim@example.com", PASSWORD),
        &[],
    )
    .await;
    locked(status, &body, &headers);
    // Same address, another account: not locked.
    let (status, body, _) = post(
        &s,
        "/api/auth/login",
        login("colleague@example.com", PASSWORD),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // An address that floods many accounts is locked for all of them.
    let s = Server::in_process(b, trust_loopback).await;
    s.db.user("someone@example.com", "viewer");
    let flood = [("x-forwarded-for", "198.51.100.9")];
    for i in 0..50 {
        let wrong = login(&format!("nobody{i}@example.com"), "guess");
        assert_eq!(
            post(&s, "/api/auth/login", wrong, &flood).await.0,
            401,
            "attempt {i}"
        );
    }
    let (status, body, headers) = post(
        &s,
        "/api/auth/login",
        login("someone@example.com", PASSWORD),
        &flood,
    )
    .await;
    locked(status, &body, &headers);
    let elsewhere = [("x-forwarded-for", "198.51.100.10")];
    let (status, _, _) = post(
        &s,
        "/api/auth/login",
        login("someone@example.com", PASSWORD),
        &elsewhere,
    )
    .await;
    assert_eq!(status, 200, "the flood's lock is on its address only");
}

async fn retry_after_names_the_latest_lock(b: Backend) {
    let s = Server::in_process(b, trust_loopback).await;
    s.db.user("target@example.com", "viewer");
    let from = |ip: &'static str| [("x-forwarded-for", ip)];
    let wrong = json!({"email": "target@example.com", "password": "guess"});
    let right = json!({"email": "target@example.com", "password": PASSWORD});
    // One address earns a growing lock on the account from there (1 s, 2 s, 4 s) ...
    for i in 0..5 {
        let (status, body, headers) =
            post(&s, "/api/auth/login", wrong.clone(), &from("203.0.113.1")).await;
        assert_eq!(status, 401, "attempt {i}: {body}");
        assert!(headers.get("retry-after").is_none());
        if i >= 2 {
            wait(&s, 1u64 << (i - 2));
        }
    }
    let (status, body, _) = post(&s, "/api/auth/login", wrong.clone(), &from("203.0.113.1")).await;
    assert_eq!(status, 401, "{body}");
    // ... now 8 s long, while other addresses bring the account as a whole to
    // its lock, which is short (1 s).
    for ip in ["203.0.113.2", "203.0.113.3"] {
        for _ in 0..2 {
            assert_eq!(
                post(&s, "/api/auth/login", wrong.clone(), &from(ip))
                    .await
                    .0,
                401
            );
        }
    }
    let (status, body, headers) =
        post(&s, "/api/auth/login", right.clone(), &from("203.0.113.1")).await;
    let secs = locked(status, &body, &headers);
    assert!(
        secs >= 7,
        "Retry-After names the latest lock (8 s), not the first to end: {secs}"
    );
    wait(&s, secs);
    let (status, body, _) = post(&s, "/api/auth/login", right, &from("203.0.113.1")).await;
    assert_eq!(
        status, 200,
        "a client that obeys Retry-After is let in: {body}"
    );
}
