use crate::on_both_backends;
use crate::support::{Backend, Server};
use serde_json::{Value, json};

on_both_backends!(
    two_factor_setup_sign_in_and_replay,
    recovery_codes_and_disabling
);

const PW: &str = "correct horse battery";

pub(crate) fn code(secret: &str, at: u64) -> String {
    let bytes = totp_rs::Secret::Encoded(secret.to_string())
        .to_bytes()
        .unwrap();
    totp_rs::TOTP::new(totp_rs::Algorithm::SHA1, 6, 1, 30, bytes, None, "x".into())
        .unwrap()
        .generate(at)
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

struct Client {
    base: String,
    cookie: Option<String>,
    csrf: Option<String>,
}

impl Client {
    async fn send(
        &mut self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = reqwest::Client::new().request(method, format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            req = req.header("cookie", c);
        }
        if let Some(t) = &self.csrf {
            req = req.header("x-csrf-token", t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        if let Some(set) = r.headers().get("set-cookie") {
            self.cookie = Some(set.to_str().unwrap().split(';').next().unwrap().to_string());
        }
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        if let Some(t) = body["data"]["csrfToken"].as_str() {
            self.csrf = Some(t.to_string());
        }
        (status, body)
    }

    async fn post(&mut self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&mut self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }
}

async fn signed_in(s: &Server, email: &str) -> Client {
    let mut c = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    let (status, _) = c
        .post("/api/auth/login", json!({"email": email, "password": PW}))
        .await;
    assert_eq!(status, 200);
    c
}

/// Turns two-factor on for a signed-in client; returns (secret, recovery codes).
async fn enable(c: &mut Client) -> (String, Vec<String>) {
    let (status, setup) = c.post("/api/auth/2fa/setup", json!({})).await;
    assert_eq!(status, 200, "{setup}");
    let secret = setup["data"]["secret"].as_str().unwrap().to_string();
    let (status, codes) = c
        .post(
            "/api/auth/2fa/verify-setup",
            json!({"code": code(&secret, now())}),
        )
        .await;
    assert_eq!(status, 200, "{codes}");
    let codes = codes["data"]["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    (secret, codes)
}

async fn two_factor_setup_sign_in_and_replay(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("t@example.com", "editor");
    let mut c = signed_in(&s, "t@example.com").await;
    assert_eq!(
        c.get("/api/auth/2fa/status").await.1["data"],
        json!({"enabled": false, "recoveryCodesLeft": 0})
    );
    let (status, body) = c
        .post("/api/auth/2fa/verify-setup", json!({"code": "123456"}))
        .await;
    assert_eq!(status, 409, "no setup started: {body}");

    let (status, setup) = c.post("/api/auth/2fa/setup", json!({})).await;
    assert_eq!(status, 200);
    let secret = setup["data"]["secret"].as_str().unwrap().to_string();
    let url = setup["data"]["otpauthUrl"].as_str().unwrap();
    assert!(
        url.starts_with("otpauth://totp/Upstate:t%40example.com?")
            && url.contains(&format!("secret={secret}")),
        "{url}"
    );
    assert!(setup["data"]["qrSvg"].as_str().unwrap().contains("<svg"));
    let wrong = if code(&secret, now()) == "000000" {
        "111111"
    } else {
        "000000"
    };
    let (status, body) = c
        .post("/api/auth/2fa/verify-setup", json!({"code": wrong}))
        .await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("code"))
    );
    assert_eq!(
        c.get("/api/auth/2fa/status").await.1["data"]["enabled"],
        false,
        "a wrong code turns nothing on"
    );
    let setup_code = code(&secret, now());
    let (status, codes) = c
        .post("/api/auth/2fa/verify-setup", json!({"code": setup_code}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(codes["data"]["recoveryCodes"].as_array().unwrap().len(), 10);
    assert_eq!(
        c.get("/api/auth/2fa/status").await.1["data"],
        json!({"enabled": true, "recoveryCodesLeft": 10})
    );
    assert_eq!(
        c.post("/api/auth/2fa/setup", json!({})).await.0,
        409,
        "on already"
    );

    // Signing in now takes two steps; the half-done session opens nothing.
    let mut fresh = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    let (status, body) = fresh
        .post(
            "/api/auth/login",
            json!({"email": "t@example.com", "password": PW}),
        )
        .await;
    assert_eq!(
        (status, body["data"].clone()),
        (200, json!({"twoFactorRequired": true}))
    );
    assert_eq!(fresh.get("/api/auth/me").await.0, 401);
    // The code used for the setup is spent; the next step's (within the drift) is not.
    let (status, _) = fresh
        .post("/api/auth/verify-2fa", json!({"code": setup_code}))
        .await;
    assert_eq!(status, 422, "a code is good once");
    let next = code(&secret, now() + 30);
    let (status, body) = fresh
        .post("/api/auth/verify-2fa", json!({"code": next}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["user"]["totpEnabled"], true);
    assert_eq!(fresh.get("/api/auth/me").await.0, 200);
    // Replaying that code on another sign-in fails.
    let mut again = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    again
        .post(
            "/api/auth/login",
            json!({"email": "t@example.com", "password": PW}),
        )
        .await;
    assert_eq!(
        again
            .post("/api/auth/verify-2fa", json!({"code": next}))
            .await
            .0,
        422
    );
    // Without a pending sign-in there is nothing to verify.
    let mut nobody = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    assert_eq!(
        nobody
            .post("/api/auth/verify-2fa", json!({"code": next}))
            .await
            .0,
        401
    );
}

async fn recovery_codes_and_disabling(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("r@example.com", "editor");
    let mut c = signed_in(&s, "r@example.com").await;
    let (_secret, codes) = enable(&mut c).await;

    let mut other = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    other
        .post(
            "/api/auth/login",
            json!({"email": "r@example.com", "password": PW}),
        )
        .await;
    // A code and a recovery code at once: refused beside the second, and
    // neither is spent (the recovery code still signs in next).
    let (status, body) = other
        .post(
            "/api/auth/verify-2fa",
            json!({"code": "123456", "recoveryCode": codes[0]}),
        )
        .await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("recoveryCode")),
        "{body}"
    );
    let (status, _) = other
        .post("/api/auth/verify-2fa", json!({"recoveryCode": codes[0]}))
        .await;
    assert_eq!(status, 200);
    let mut third = Client {
        base: s.base.clone(),
        cookie: None,
        csrf: None,
    };
    third
        .post(
            "/api/auth/login",
            json!({"email": "r@example.com", "password": PW}),
        )
        .await;
    assert_eq!(
        third
            .post("/api/auth/verify-2fa", json!({"recoveryCode": codes[0]}))
            .await
            .0,
        422,
        "recovery codes are single-use"
    );
    assert_eq!(
        c.get("/api/auth/2fa/status").await.1["data"]["recoveryCodesLeft"],
        9
    );

    let (status, body) = c
        .post(
            "/api/auth/2fa/regenerate-codes",
            json!({"password": "not my password"}),
        )
        .await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("password"))
    );
    // Both proofs at once: the document allows one of them (oneOf), and
    // the server does not guess which counts.
    let (status, body) = c
        .post(
            "/api/auth/2fa/regenerate-codes",
            json!({"password": PW, "code": "123456"}),
        )
        .await;
    assert_eq!(
        (status, body["errors"][0]["field"].as_str()),
        (422, Some("code")),
        "{body}"
    );
    assert!(body.to_string().contains("not both"), "{body}");
    let (status, fresh_codes) = c
        .post("/api/auth/2fa/regenerate-codes", json!({"password": PW}))
        .await;
    assert_eq!(status, 200);
    let fresh_codes: Vec<String> = fresh_codes["data"]["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(fresh_codes.len(), 10);
    assert!(fresh_codes.iter().all(|c| !codes.contains(c)));
    assert_eq!(
        third
            .post("/api/auth/verify-2fa", json!({"recoveryCode": codes[1]}))
            .await
            .0,
        422,
        "old codes are void"
    );
    assert_eq!(
        third
            .post(
                "/api/auth/verify-2fa",
                json!({"recoveryCode": fresh_codes[1]})
            )
            .await
            .0,
        200
    );

    assert_eq!(c.post("/api/auth/2fa/disable", json!({})).await.0, 422);
    assert_eq!(
        c.post(
            "/api/auth/2fa/disable",
            json!({"password": "wrong one entirely"})
        )
        .await
        .0,
        422
    );
    assert_eq!(
        c.post("/api/auth/2fa/disable", json!({"password": PW}))
            .await
            .0,
        204
    );
    assert_eq!(
        c.get("/api/auth/2fa/status").await.1["data"],
        json!({"enabled": false, "recoveryCodesLeft": 0})
    );
    let plain = signed_in(&s, "r@example.com").await;
    assert!(plain.csrf.is_some(), "one step again");
    // Without the CSRF token the state-changing 2FA routes refuse.
    let mut no_csrf = Client {
        base: s.base.clone(),
        cookie: c.cookie.clone(),
        csrf: None,
    };
    assert_eq!(no_csrf.post("/api/auth/2fa/setup", json!({})).await.0, 403);
}
