//! Every HTML response carries the same security headers, whichever route
//! makes it (security_headers.rs): CSP, nosniff, a referrer policy, and frame
//! protection except for the widget, which is made to be framed.

use crate::on_both_backends;
use crate::support::{Backend, Server};

on_both_backends!(
    every_html_response_carries_the_security_headers,
    https_installs_send_hsts_and_secure_cookies
);

/// Reached over https (the public URL says so, as in the README's recipe
/// of instances on loopback behind a TLS proxy): every answer carries
/// `Strict-Transport-Security`, and every cookie (the form bridge's flash,
/// the session, a private page's pass) is `Secure`; over plain http none.
async fn https_installs_send_hsts_and_secure_cookies(b: Backend) {
    let form = "email=a%40b.example&password=wrong-password-here&_back=/admin/login";
    for (url, secure) in [
        ("https://status.example.com", true),
        ("http://127.0.0.1:9", false),
        ("", false),
    ] {
        let mut env = vec![];
        if !url.is_empty() {
            env.push(("UPSTATE_PUBLIC_URL", url));
        }
        let s = Server::start_with(b, &env).await;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        for path in ["/api/health", "/api/public/status/none"] {
            let r = http.get(format!("{}{path}", s.base)).send().await.unwrap();
            assert_eq!(
                r.headers()
                    .get("strict-transport-security")
                    .map(|v| v.to_str().unwrap().to_string()),
                secure.then(|| "max-age=31536000".to_string()),
                "{path}"
            );
        }
        let r = http
            .post(format!("{}/api/auth/login", s.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(cookie.starts_with("upstate_flash="), "{cookie}");
        assert_eq!(cookie.ends_with("; Secure"), secure, "{cookie}");

        let page = s.page("hidden").await;
        s.make_private(page, "open sesame").await;
        let r = http
            .post(format!("{}/api/verify-page-password", s.base))
            .json(&serde_json::json!({"slug": "hidden", "password": "open sesame"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
        assert_eq!(cookie.contains("; Secure"), secure, "{url}: {cookie}");
        s.db.user("owner@example.com", "owner");
        let r = http
            .post(format!("{}/api/auth/login", s.base))
            .json(&serde_json::json!({"email": "owner@example.com",
                                      "password": crate::support::PASSWORD}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{url}");
        let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
        assert_eq!(cookie.contains("; Secure"), secure, "{url}: {cookie}");
    }
}

async fn get_html(s: &Server, path: &str) -> (u16, reqwest::header::HeaderMap) {
    let r = reqwest::Client::new()
        .get(format!("{}{path}", s.base))
        .header("accept", "text/html,application/xhtml+xml")
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.headers().clone())
}

async fn every_html_response_carries_the_security_headers(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let incident = s.incident(p, "Slow").await;
    let private = s.page("hidden").await;
    s.make_private(private, "open sesame").await;
    let pages = [
        ("/s/acme".to_string(), 200, true),
        ("/s/acme/history".to_string(), 200, true),
        (format!("/s/acme/incidents/{}", incident["id"]), 200, true),
        ("/s/nothing-here".to_string(), 404, true),
        ("/s/hidden".to_string(), 401, true),
        ("/api/docs/".to_string(), 200, true),
        ("/api/widget?page=acme".to_string(), 200, false),
    ];
    for (path, status, deny_frames) in pages {
        let (got, h) = get_html(&s, &path).await;
        assert_eq!(got, status, "{path}");
        let header = |name: &str| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        assert!(
            header("content-type").starts_with("text/html"),
            "{path}: {}",
            header("content-type")
        );
        assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
        assert_eq!(
            header("referrer-policy"),
            "strict-origin-when-cross-origin",
            "{path}"
        );
        let csp = header("content-security-policy");
        assert!(
            csp.contains("default-src 'none'") && csp.contains("base-uri 'none'"),
            "{path}: {csp}"
        );
        if deny_frames {
            assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
            assert_eq!(header("x-frame-options"), "DENY", "{path}");
        } else {
            assert!(csp.contains("frame-ancestors *"), "{path}: {csp}");
            assert!(
                h.get("x-frame-options").is_none(),
                "{path}: the widget is made to be framed"
            );
        }
    }
    // The reference sends nothing to an outside validator.
    let init = s
        .send(
            reqwest::Method::GET,
            "/api/docs/swagger-initializer.js",
            None,
            None,
        )
        .await;
    let init = init.body.as_str().unwrap_or_default().to_string();
    assert!(
        init.contains("\"validatorUrl\": \"none\"") || init.contains("\"validatorUrl\":\"none\""),
        "{init}"
    );
}
