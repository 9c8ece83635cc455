use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(
    per_key_minute_limit,
    hourly_limit,
    requests_without_a_valid_key_are_limited_by_address
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
