use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    per_key_minute_limit,
    hourly_limit,
    requests_without_a_valid_key_are_limited_by_address,
    development_mode_resets_every_limit
);

async fn per_key_minute_limit(b: Backend) {
    let s = Server::start(b).await;
    let other = s.db.create_key("admin");
    for n in 1..=100u32 {
        let r = s.get("/api/v1/statuspages").await;
        assert_eq!(r.status, 200, "request {n}");
        assert_eq!(r.header("x-ratelimit-limit"), Some("100"));
        assert_eq!(
            r.header("x-ratelimit-remaining"),
            Some((100 - n).to_string().as_str())
        );
        let reset: u64 = r.header("x-ratelimit-reset").unwrap().parse().unwrap();
        assert!((1..=60).contains(&reset));
    }
    let r = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "late", "slug": "late"}),
        )
        .await;
    r.problem(429);
    let retry: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    // Another key is not affected, and the refused write was not applied.
    let r = s
        .send(Method::GET, "/api/v1/statuspages", Some(&other), None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ratelimit-remaining"), Some("99"));
    assert_eq!(r.body["data"], json!([]));
}

async fn hourly_limit(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_API_RATE_PER_HOUR", "5")]).await;
    for n in 1..=5 {
        let r = s.get("/api/v1/statuspages").await;
        assert_eq!(r.status, 200, "request {n}");
        assert_eq!(
            r.header("x-ratelimit-limit"),
            Some("5"),
            "the tighter window is reported"
        );
    }
    let r = s.get("/api/v1/statuspages").await;
    r.problem(429);
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!(
        retry > 60 && retry <= 3600,
        "an hourly refusal waits for the hour window: {retry}"
    );
}

async fn requests_without_a_valid_key_are_limited_by_address(b: Backend) {
    let s = Server::start_with(b, &[("UPSTATE_API_RATE_PER_MINUTE", "3")]).await;
    for _ in 0..3 {
        s.send(Method::GET, "/api/v1/statuspages", Some("upk_guess"), None)
            .await
            .problem(401);
    }
    s.send(Method::GET, "/api/v1/statuspages", Some("upk_guess"), None)
        .await
        .problem(429);
    // A valid key has its own quota.
    assert_eq!(s.get("/api/v1/statuspages").await.status, 200);
}

/// `POST /api/admin/reset-rate-limits`: absent in production; with `--dev`
/// it empties the key, public-route and failed-secret limits, for admins.
async fn development_mode_resets_every_limit(b: Backend) {
    let s = Server::start(b).await;
    let r = s.post_empty("/api/admin/reset-rate-limits").await;
    assert!(
        r.problem(404)["detail"].as_str().unwrap().contains("--dev"),
        "not in production, not even for an admin key"
    );
    drop(s);

    let env = [
        ("UPSTATE_DEV", "true"),
        ("UPSTATE_API_RATE_PER_MINUTE", "3"),
        ("UPSTATE_PUBLIC_RATE_SUMMARY", "2"),
    ];
    let s = Server::start_with(b, &env).await;
    s.db.user_with("ad@example.com", "admin", PASSWORD);
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let ad = Browser::signed_in(&s, "ad@example.com").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let page = s.page("alpha").await;
    assert!(page > 0);
    // Use up the key's minute (the page above took one request) and the
    // summary's per-address limit, and lock the editor's sign-in.
    while s.get("/api/v1/statuspages").await.status != 429 {}
    let summary = format!("{}/api/public/status/alpha", s.base);
    let mut last = 0;
    for _ in 0..3 {
        last = reqwest::get(&summary).await.unwrap().status().as_u16();
    }
    assert_eq!(last, 429);
    for _ in 0..6 {
        let _ = Browser::login(&s, "ed@example.com", "wrong password!").await;
    }
    let locked = Browser::login(&s, "ed@example.com", PASSWORD).await;
    assert_eq!(locked.err().map(|r| r.status().as_u16()), Some(429));

    let (status, _, _) = ed
        .send(Method::POST, "/api/admin/reset-rate-limits", None)
        .await;
    assert_eq!(status, 403, "an editor may not");
    let screen = ad.screen("/admin/system").await;
    assert!(
        screen.contains("Reset rate limits"),
        "the System screen offers it in development mode"
    );
    assert_eq!(
        s.get("/api/v1/statuspages").await.status,
        429,
        "still limited"
    );
    let (status, body, _) = ad
        .send(Method::POST, "/api/admin/reset-rate-limits", None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["data"]["failureCountersCleared"].as_u64().unwrap() >= 1,
        "{body}"
    );
    assert!(
        body["data"]["limitersCleared"].as_u64().unwrap() >= 2,
        "{body}"
    );
    assert_eq!(s.get("/api/v1/statuspages").await.status, 200);
    assert_eq!(reqwest::get(&summary).await.unwrap().status(), 200);
    assert!(
        Browser::login(&s, "ed@example.com", PASSWORD).await.is_ok(),
        "the lock is gone"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'rate_limits.reset'")
            .await,
        [1]
    );
}
