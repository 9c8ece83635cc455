//! Single sign-on for the team, end to end: Chromium signs in at a real
//! OpenID provider (npm's oidc-provider, started by the test with the
//! accounts the test writes) and comes back signed in to `/admin`, with the
//! role its groups give. Changed groups change the role at the next
//! sign-in; removed ones refuse it; other domains are refused; "single
//! sign-on only" leaves passwords to owners; a step-up is proven at the
//! provider; answers not started in this browser are refused.

use crate::admin_ui::{fill, no_axe_violations, path, press, shot, text};
use crate::browser::{Driver, browser_available};
use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD as PW, Server, peers, peers_available, root};
use fantoccini::Locator;
use reqwest::Method;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

on_both_backends!(browser: team_signs_in_through_the_provider);
on_both_backends!(browser: viewers_of_a_private_page_sign_in_through_the_provider);
on_both_backends!(bad_sso_settings_and_forged_answers_are_refused);
on_both_backends!(the_provider_can_come_from_configuration);
on_both_backends!(browser: a_page_can_give_its_viewers_a_provider_of_its_own);

fn modules() -> PathBuf {
    peers().join("browser-test/node_modules")
}

/// The provider: its process (killed when dropped) and the accounts file.
struct Provider {
    child: Child,
    issuer: String,
    accounts: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    fn accounts(&self, accounts: &Value) {
        std::fs::write(&self.accounts, accounts.to_string()).expect("accounts file");
    }
}

/// Starts oidc-provider for `s`, or says the test skipped (see
/// `peers_available`) when Node's module is not installed.
async fn provider(test: &str, s: &Server, accounts: &Value) -> Option<Provider> {
    if !peers_available(test, &[modules().join("oidc-provider/package.json")]) {
        return None;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("accounts.json");
    std::fs::write(&file, accounts.to_string()).expect("accounts file");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        l.local_addr().expect("address").port()
    };
    let mut child = Command::new("node")
        .arg(root().join("tests/api/oidc/provider.mjs"))
        .arg(port.to_string())
        .arg(format!("{}/api/auth/sso/callback", s.base))
        .arg(&file)
        .arg(modules())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs");
    // Read to the end, not only to "ready": a closed pipe would end the
    // provider at its next notice.
    let stdout = child.stdout.take().expect("stdout");
    let (tell, ready) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut tell = Some(tell);
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if line == "ready"
                && let Some(t) = tell.take()
            {
                let _ = t.send(());
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .expect("the provider starts within 30 s")
        .expect("the provider said it is ready");
    Some(Provider {
        child,
        issuer: format!("http://127.0.0.1:{port}"),
        accounts: file,
        _dir: dir,
    })
}

fn accounts(alice_groups: &[&str]) -> Value {
    json!({
        "alice": {"email": "alice@example.com", "email_verified": true, "name": "Alice Ops", "groups": alice_groups},
        "mallory": {"email": "mallory@evil.test", "email_verified": true, "name": "Mallory", "groups": ["ops-admins"]},
        "carol": {"email": "carol@example.com", "email_verified": true, "name": "Carol", "groups": ["ops"]},
    })
}

fn settings(issuer: &str) -> Value {
    json!({
        "enabled": true, "issuer": issuer, "clientId": "upstate", "clientSecret": "upstate-secret",
        "buttonLabel": "Sign in with Example SSO", "allowedDomains": ["example.com"],
        "adminGroups": ["ops-admins"], "editorGroups": ["ops"]
    })
}

/// A server that may reach the provider on loopback.
async fn server(b: Backend) -> Server {
    Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await
}

/// Signs in at the provider's development screens, if it asks: the login
/// screen (any password) and the consent screen.
async fn at_provider(d: &Driver, login: &str) {
    for _ in 0..2 {
        let url = d.c().current_url().await.unwrap();
        if !url.path().starts_with("/interaction/") {
            return;
        }
        if let Ok(field) = d.c().find(Locator::Css("input[name=login]")).await {
            field.send_keys(login).await.unwrap();
            let pw = d
                .c()
                .find(Locator::Css("input[name=password]"))
                .await
                .unwrap();
            pw.send_keys("anything").await.unwrap();
        }
        d.js("window.__before = true").await;
        let Ok(submit) = d.c().find(Locator::Css("button[type=submit]")).await else {
            panic!(
                "no button at the provider: {}",
                d.c().source().await.unwrap()
            );
        };
        submit.click().await.unwrap();
        let loaded = d
            .until(
                "return window.__before === undefined && document.readyState === 'complete'",
                crate::browser::STEP_WITHIN,
            )
            .await;
        assert!(loaded.is_some(), "the provider's screen led nowhere");
    }
}

/// Presses the sign-in screen's single sign-on button and goes through the
/// provider as `login`.
async fn sso_sign_in(d: &Driver, s: &Server, login: &str) {
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    press(d, "Sign in with Example SSO").await;
    at_provider(d, login).await;
}

/// Who the browser is signed in as, asked from inside it.
async fn me(d: &Driver) -> Value {
    d.js("return fetch('/api/auth/me').then(r => r.ok ? r.json().then(b => b.data) : null)")
        .await
}

async fn sign_out(d: &Driver) {
    d.c().delete_all_cookies().await.unwrap();
}

async fn team_signs_in_through_the_provider(b: Backend) {
    let test = "team_signs_in_through_the_provider";
    if !browser_available(test) {
        return;
    }
    let s = server(b).await;
    let Some(op) = provider(test, &s, &accounts(&["ops-admins"])).await else {
        return;
    };
    let saved = s
        .put("/api/sso-settings", settings(&op.issuer))
        .await
        .data(200);
    assert_eq!(saved["clientSecretSet"], json!(true));
    assert!(
        !saved.to_string().contains("upstate-secret"),
        "the secret never comes back"
    );
    assert_eq!(
        saved["redirectUri"],
        json!(format!("{}/api/auth/sso/callback", s.base))
    );
    let checked = s.post_empty("/api/sso-settings/check").await.data(200);
    assert_eq!(
        checked["authorizationEndpoint"],
        json!(format!("{}/auth", op.issuer))
    );

    // The first sign-in makes the account, with the role of the groups.
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    d.screenshot(&shot(b, "sso-sign-in")).await;
    no_axe_violations(&d, "sign-in with single sign-on").await;
    sso_sign_in(&d, &s, "alice").await;
    assert_eq!(path(&d).await, "/admin", "back signed in");
    let alice = me(&d).await;
    assert_eq!(alice["email"], json!("alice@example.com"));
    assert_eq!(alice["name"], json!("Alice Ops"));
    assert_eq!(alice["role"], json!("admin"));
    assert_eq!(alice["sso"], json!(true));
    let created = s
        .get("/api/audit-events?action=user.create&limit=10")
        .await
        .data(200);
    assert!(
        created.to_string().contains("\"via\":\"sso\""),
        "the account's making is audited as single sign-on's: {created}"
    );

    // The settings screen shows what is set, and the address to register.
    d.c()
        .goto(&format!("{}/admin/settings#sso", s.base))
        .await
        .unwrap();
    let redirect = d
        .js("return document.getElementById('sso-redirect').value")
        .await;
    assert_eq!(redirect, json!(format!("{}/api/auth/sso/callback", s.base)));
    d.js("document.getElementById('sso').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "sso-settings")).await;
    no_axe_violations(&d, "settings with single sign-on").await;

    // A sensitive change asks to confirm at the provider first: refused
    // beside the field until then, nothing deleted.
    let page = s
        .post(
            "/api/statuspages",
            json!({"name": "Doomed", "slug": "doomed"}),
        )
        .await
        .data(201);
    let screen = format!("{}/admin/pages/{}", s.base, page["id"]);
    d.c().goto(&screen).await.unwrap();
    d.js("window.confirm = () => true").await;
    press(&d, "Delete page").await;
    let said = text(&d, "#su-page").await;
    assert!(said.contains("confirm at your identity provider"), "{said}");
    let at = format!("/api/statuspages/{}", page["id"]);
    s.get(&at).await.data(200);
    // The provider asks again (prompt=login, max_age=0) and sends the
    // person back to the screen, confirmed for 5 minutes.
    press(&d, "Confirm at your identity provider to delete Doomed").await;
    assert!(
        d.c().find(Locator::Css("input[name=login]")).await.is_ok(),
        "the provider asks again"
    );
    at_provider(&d, "alice").await;
    assert_eq!(
        path(&d).await,
        format!("/admin/pages/{}", page["id"]),
        "back at the screen"
    );
    assert!(text(&d, "#su-page").await.contains("Confirmed"));
    d.screenshot(&shot(b, "sso-step-up-confirmed")).await;
    d.js("window.confirm = () => true").await;
    press(&d, "Delete page").await;
    assert_eq!(path(&d).await, "/admin/pages");
    s.get(&at).await.problem(404);
    // The account keeps no password here; the team list says how alice
    // signs in.
    d.c()
        .goto(&format!("{}/admin/account", s.base))
        .await
        .unwrap();
    assert!(
        text(&d, "main")
            .await
            .contains("identity provider (single sign-on)")
    );
    d.c()
        .goto(&format!("{}/admin/users", s.base))
        .await
        .unwrap();
    assert!(text(&d, "main").await.contains("admin · single sign-on"));
    let latest = d
        .js("return fetch('/api/admin/step-up').then(r => r.json()).then(b => b.data)")
        .await;
    assert_eq!(latest["active"], json!(true), "{latest}");
    assert_eq!(latest["method"], json!("sso"));
    // Signing out takes the confirmation with it.
    assert!(d.c().get_named_cookie("upstate_step_up").await.is_ok());
    press(&d, "Sign out").await;
    assert!(
        d.c().get_named_cookie("upstate_step_up").await.is_err(),
        "the step-up's cookie is cleared"
    );

    // The groups changed at the provider: the role follows at the next sign-in.
    op.accounts(&accounts(&["ops"]));
    sign_out(&d).await;
    sso_sign_in(&d, &s, "alice").await;
    assert_eq!(me(&d).await["role"], json!("editor"));

    // Removed from every group: refused, and told why.
    op.accounts(&accounts(&["sales"]));
    sign_out(&d).await;
    sso_sign_in(&d, &s, "alice").await;
    assert_eq!(path(&d).await, "/admin/login");
    let said = text(&d, "[role=alert]").await;
    assert!(said.contains("no role here any more"), "{said}");
    assert!(me(&d).await.is_null());

    // Another email domain: refused, no account made. (A browser of its
    // own: the provider remembers alice in this one.)
    let other = Driver::start(&[]).await;
    sso_sign_in(&other, &s, "mallory").await;
    assert_eq!(path(&other).await, "/admin/login");
    let said = text(&other, "[role=alert]").await;
    assert!(said.contains("evil.test may not sign in"), "{said}");
    other.quit().await;
    let made = s
        .get("/api/audit-events?action=user.create&limit=10")
        .await
        .data(200);
    assert!(
        !made.to_string().contains("mallory"),
        "no account for mallory"
    );
    let refusals = s
        .get("/api/audit-events?action=auth.failure&limit=10")
        .await
        .data(200)
        .to_string();
    assert!(
        refusals.contains("no role here any more"),
        "alice's refusal is audited: {refusals}"
    );

    // An account an admin made with a password of their choosing: signing
    // in through the provider links it, opens the screens at once (no
    // password to change first) and retires that password and the session
    // it opened.
    s.db.user("admin@example.com", "admin");
    let lead = Browser::signed_in(&s, "admin@example.com").await;
    let given = "a password the admin chose";
    let (status, made, _) = lead
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "carol@example.com", "name": "Carol", "role": "editor", "password": given})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["data"]["mustChangePassword"], json!(true));
    let before = Browser::login(&s, "carol@example.com", given)
        .await
        .expect("the given password signs in");
    sign_out(&d).await;
    sso_sign_in(&d, &s, "carol").await;
    assert_eq!(path(&d).await, "/admin", "no password to change first");
    let carol = me(&d).await;
    assert_eq!(carol["mustChangePassword"], json!(false), "{carol}");
    assert_eq!(carol["sso"], json!(true), "{carol}");
    let (status, _, _) = before.send(Method::GET, "/api/auth/me", None).await;
    assert_eq!(status, 401, "the session the given password opened is gone");
    let refused = Browser::login(&s, "carol@example.com", given)
        .await
        .err()
        .expect("the given password opens nothing now");
    assert_eq!(refused.status(), 401);

    // Single sign-on only: an admin's right password opens nothing, an
    // owner's still does (the way back in).
    s.db.user("owner@example.com", "owner");
    let mut only = settings(&op.issuer);
    only["ssoOnly"] = json!(true);
    s.put("/api/sso-settings", only).await.data(200);
    let refused = Browser::login(&s, "admin@example.com", PW)
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.status(), 403);
    assert!(Browser::login(&s, "owner@example.com", PW).await.is_ok());
    sign_out(&d).await;
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    assert!(
        text(&d, "details.break-glass summary")
            .await
            .contains("Owner's password"),
        "passwords fold away behind the owner's way in"
    );
    d.screenshot(&shot(b, "sso-only-sign-in")).await;
    d.c()
        .find(Locator::Css("details.break-glass summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    fill(&d, "Email", "admin@example.com").await;
    fill(&d, "Password", PW).await;
    press(&d, "Sign in").await;
    assert!(
        text(&d, "[role=alert]")
            .await
            .contains("single sign-on only"),
        "the refusal is said on the screen"
    );
    d.quit().await;
}

async fn bad_sso_settings_and_forged_answers_are_refused(b: Backend) {
    let s = server(b).await;
    let before = s.get("/api/sso-settings").await.data(200);
    assert_eq!(before["enabled"], json!(false));
    assert_eq!(before["clientSecretSet"], json!(false));
    for (body, fields) in [
        (
            json!({"enabled": true, "issuer": "not a url", "clientId": "up state", "allowedDomains": ["no domain"], "defaultRole": "owner"}),
            vec!["issuer", "clientId", "allowedDomains", "defaultRole"],
        ),
        (
            json!({"enabled": true}),
            vec!["issuer", "clientId", "clientSecret", "defaultRole"],
        ),
        (json!({"enabled": false, "ssoOnly": true}), vec!["ssoOnly"]),
        (
            json!({"enabled": true, "issuer": "https://id.example.com", "clientId": "c", "clientSecret": "s"}),
            vec!["defaultRole"],
        ),
        (json!({"enabled": true, "nonsense": 1}), vec!["nonsense"]),
    ] {
        s.put("/api/sso-settings", body)
            .await
            .invalid_fields(&fields);
    }
    assert_eq!(
        s.get("/api/sso-settings").await.data(200),
        before,
        "nothing stored"
    );
    s.post_empty("/api/sso-settings/check").await.problem(409);
    // A read-only key may not see or change it.
    let reader = s.db.create_key("read");
    let r = s
        .send(Method::GET, "/api/sso-settings", Some(&reader), None)
        .await;
    r.problem(403);

    // Not set up: the way out goes back to the sign-in screen.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = client
        .get(format!("{}/api/auth/sso", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/admin/login");

    // Each way out is throttled per address: the 31st in a minute is told
    // to wait, on the sign-in screen.
    let mut last = None;
    for _ in 0..31 {
        last = Some(
            client
                .get(format!("{}/api/auth/sso", s.base))
                .send()
                .await
                .unwrap(),
        );
    }
    let last = last.unwrap();
    let flash = crate::support::set_cookie(last.headers(), "upstate_flash")
        .and_then(|c| c.split(';').next().map(str::to_string))
        .expect("a message for the sign-in screen");
    let shown = client
        .get(format!("{}/admin/login", s.base))
        .header("cookie", flash)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        shown.contains("too many sign-ins from your address"),
        "{shown}"
    );

    // An answer this browser did not ask for signs no one in.
    let unreachable = "https://id.example.com";
    let mut set = settings(unreachable);
    set["issuer"] = json!(unreachable);
    s.put("/api/sso-settings", set).await.data(200);
    for query in [
        "code=abc&state=forged",
        "code=abc",
        "error=access_denied&state=x",
    ] {
        let r = client
            .get(format!("{}/api/auth/sso/callback?{query}", s.base))
            .header("cookie", "upstate_sso=other")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "{query}");
        assert_eq!(r.headers()["location"], "/admin/login");
        assert!(
            r.headers()
                .get_all("set-cookie")
                .iter()
                .all(|c| !c.to_str().unwrap().starts_with("upstate_session=")),
            "no session from {query}"
        );
    }
    // A provider on a private address is held to outgoing_allow.
    let plain = Server::start(b).await;
    let mut local = settings("http://127.0.0.1:9");
    local["issuer"] = json!("http://127.0.0.1:9");
    plain.put("/api/sso-settings", local).await.data(200);
    let r = plain.post_empty("/api/sso-settings/check").await;
    let detail = r.problem(422)["errors"][0]["message"].to_string();
    assert!(detail.contains("outgoing_allow"), "{detail}");
}

/// The provider named in configuration (environment here): it takes the
/// saved one's place, its fields are refused by the route, its secret never
/// enters the database; a partial configuration stops start-up.
async fn the_provider_can_come_from_configuration(b: Backend) {
    let db = crate::support::TestDb::new(b).await;
    let out = Command::new(crate::support::BIN)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("UPSTATE_DATABASE_URL", &db.url)
        .env("UPSTATE_SSO_ISSUER", "https://id.example.com")
        .current_dir(db.dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("go together"), "{err}");
    drop(db);

    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_SSO_ISSUER", "https://id.example.com/realms/ops/"),
            ("UPSTATE_SSO_CLIENT_ID", "upstate"),
            ("UPSTATE_SSO_CLIENT_SECRET", "from-the-environment"),
        ],
    )
    .await;
    let shown = s.get("/api/sso-settings").await.data(200);
    assert_eq!(shown["fromConfiguration"], json!(true));
    assert_eq!(shown["issuer"], json!("https://id.example.com/realms/ops"));
    assert_eq!(shown["clientSecretSet"], json!(true));
    s.put(
        "/api/sso-settings",
        json!({"enabled": true, "issuer": "https://other.example.com", "clientSecret": "x", "defaultRole": "viewer"}),
    )
    .await
    .invalid_fields(&["issuer", "clientSecret"]);
    let saved = s
        .put(
            "/api/sso-settings",
            json!({"enabled": true, "defaultRole": "viewer", "allowedDomains": ["example.com"]}),
        )
        .await
        .data(200);
    assert_eq!(saved["enabled"], json!(true));
    assert_eq!(saved["clientId"], json!("upstate"));
    let stored = s
        .db
        .integers("SELECT COUNT(*) FROM settings WHERE name = 'sso' AND value LIKE '%clientSecret\":\"\"%'")
        .await;
    assert_eq!(stored, vec![1], "the configured secret is not stored");
    let stored_issuer =
        s.db.integers(
            "SELECT COUNT(*) FROM settings WHERE name = 'sso' AND value LIKE '%id.example.com%'",
        )
        .await;
    assert_eq!(stored_issuer, vec![0], "nor the configured issuer");
    // The sign-in screen offers it.
    let page = reqwest::get(format!("{}/admin/login", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("href=\"/api/auth/sso\""), "{page}");
}

/// A private page's viewers sign in through the same provider when the
/// page allows it: an invited address comes in, another is sent back to
/// the gate with the reason, and nothing opens while it is off.
async fn viewers_of_a_private_page_sign_in_through_the_provider(b: Backend) {
    let test = "viewers_of_a_private_page_sign_in_through_the_provider";
    if !browser_available(test) {
        return;
    }
    let s = server(b).await;
    let Some(op) = provider(test, &s, &accounts(&[])).await else {
        return;
    };
    s.put("/api/sso-settings", settings(&op.issuer))
        .await
        .data(200);
    let p = crate::viewers::private_page(&s).await;
    let access = format!("/api/v1/statuspages/{p}/access");
    s.send(
        Method::PUT,
        &access,
        Some(&s.key),
        Some(json!({"viewers": true})),
    )
    .await
    .data(200);
    // Off: the gate offers no such button, and the route is not there.
    let gate = crate::status_html::fetch(&s, "/s/acme", &[]).await;
    assert!(!gate.text.contains("/api/auth/sso/viewer"));
    assert_eq!(
        crate::status_html::fetch(&s, "/api/auth/sso/viewer?page=acme", &[])
            .await
            .status,
        404
    );
    let on = s
        .send(
            Method::PUT,
            &access,
            Some(&s.key),
            Some(json!({"viewerSso": true})),
        )
        .await
        .data(200);
    assert_eq!(on["viewerSso"], true);
    s.post(
        &format!("/api/v1/statuspages/{p}/viewers"),
        json!({"email": "alice@example.com"}),
    )
    .await
    .data(201);

    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    assert!(!d.c().source().await.unwrap().contains("Partner API"));
    d.screenshot(&shot(b, "viewer-gate-sso")).await;
    no_axe_violations(&d, "viewer gate with single sign-on").await;
    press(&d, "Sign in with Example SSO").await;
    at_provider(&d, "alice").await;
    assert_eq!(path(&d).await, "/s/acme");
    assert!(d.c().source().await.unwrap().contains("Partner API"));
    d.quit().await;
    let viewers = s
        .get(&format!("/api/v1/statuspages/{p}/viewers"))
        .await
        .data(200);
    assert!(!viewers[0]["signedInAt"].is_null(), "{viewers}");

    // Someone the page does not know: back at the gate, with the reason.
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 900).await.unwrap();
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    press(&d, "Sign in with Example SSO").await;
    at_provider(&d, "mallory").await;
    let source = d.c().source().await.unwrap();
    assert!(source.contains("may not read this page"), "{source}");
    assert!(!source.contains("Partner API"));
    d.screenshot(&shot(b, "viewer-sso-refused")).await;
    d.quit().await;
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{p}/viewers"))
            .await
            .data(200)
            .as_array()
            .map(Vec::len),
        Some(1),
        "nobody was made a viewer"
    );
}

/// A page whose viewers sign in through a provider of its own (a
/// customer's tenant), with no team provider set up: bad settings are
/// refused by field and store nothing; set in the page screen, the gate
/// offers its button; with "let in everyone", a verified stranger comes
/// in and an unverified one does not; without it, only invited emails do;
/// removed, the gate offers no provider again. The secret is never shown
/// nor audited.
async fn a_page_can_give_its_viewers_a_provider_of_its_own(b: Backend) {
    use crate::admin_ui::{PW as ADMIN_PW, browser_of};
    let test = "a_page_can_give_its_viewers_a_provider_of_its_own";
    if !browser_available(test) {
        return;
    }
    let s = server(b).await;
    let tenant = json!({
        "carol": {"email": "carol@customer.test", "email_verified": true, "name": "Carol"},
        "erin": {"email": "erin@customer.test", "email_verified": false, "name": "Erin"},
        "frank": {"email": "frank@customer.test", "email_verified": true, "name": "Frank"},
    });
    let Some(op) = provider(test, &s, &tenant).await else {
        return;
    };
    let p = crate::viewers::private_page(&s).await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{p}/access"),
        Some(&s.key),
        Some(json!({"viewers": true, "viewerSso": true})),
    )
    .await
    .data(200);
    let own = format!("/api/v1/statuspages/{p}/viewer-provider");
    s.get(&own).await.problem(404);
    for (bad, field) in [
        (
            json!({"issuer": "customer", "clientId": "upstate", "clientSecret": "x"}),
            "issuer",
        ),
        (
            json!({"issuer": op.issuer, "clientId": "up state", "clientSecret": "x"}),
            "clientId",
        ),
        (
            json!({"issuer": op.issuer, "clientId": "upstate"}),
            "clientSecret",
        ),
    ] {
        let r = s.send(Method::PUT, &own, Some(&s.key), Some(bad)).await;
        let e = r.problem(422);
        assert_eq!(e["errors"][0]["field"], field, "{e}");
    }
    s.send(
        Method::PUT,
        &own,
        Some(&s.key),
        Some(json!({"issuer": op.issuer})),
    )
    .await
    .problem(422);
    s.send(
        Method::PUT,
        "/api/v1/statuspages/999999/viewer-provider",
        Some(&s.key),
        Some(json!({"issuer": op.issuer, "clientId": "upstate", "clientSecret": "upstate-secret"})),
    )
    .await
    .problem(404);
    s.get(&own).await.problem(404);

    // Set in the page screen, as an operator would.
    s.db.user_with("ed@example.com", "editor", ADMIN_PW);
    let d = browser_of(&s, "ed@example.com").await;
    d.c()
        .goto(&format!("{}/admin/pages/{p}", s.base))
        .await
        .unwrap();
    fill(&d, "Provider issuer URL", &op.issuer).await;
    fill(&d, "Provider client id", "up state").await;
    fill(&d, "Provider client secret", "upstate-secret").await;
    press(&d, "Save provider").await;
    let source = d.c().source().await.unwrap();
    assert!(
        source.contains("without spaces"),
        "the error shows beside the field"
    );
    s.get(&own).await.problem(404);
    fill(&d, "Provider issuer URL", &op.issuer).await;
    fill(&d, "Provider client id", "upstate").await;
    fill(&d, "Provider client secret", "upstate-secret").await;
    fill(&d, "Provider button label", "Sign in with Customer SSO").await;
    d.js("document.querySelector('input[type=checkbox][name=\"admitAll:bool\"]').click()")
        .await;
    press(&d, "Save provider").await;
    assert!(
        text(&d, "[role=status]")
            .await
            .contains("identity provider saved")
    );
    assert!(
        text(&d, "#viewer-provider")
            .await
            .contains("Everyone it signs in")
    );
    d.js("document.getElementById('h-viewer-provider').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "viewer-provider")).await;
    no_axe_violations(&d, "page screen with a viewer provider").await;
    d.quit().await;
    let saved = s.get(&own).await.data(200);
    assert_eq!(saved["issuer"], op.issuer.as_str());
    assert_eq!(saved["clientSecretSet"], true);
    assert_eq!(saved["admitAll"], true);
    assert!(
        saved["redirectUri"]
            .as_str()
            .unwrap()
            .ends_with("/api/auth/sso/callback")
    );
    assert!(!saved.to_string().contains("upstate-secret"), "{saved}");
    let audit = s
        .get("/api/audit-events?action=statuspage.viewer_provider")
        .await
        .body;
    assert!(
        audit.to_string().contains("Sign in with Customer SSO"),
        "{audit}"
    );
    assert!(!audit.to_string().contains("upstate-secret"), "{audit}");

    // Everyone the tenant vouches for, with a verified email.
    let through = |login: &'static str| {
        let base = s.base.clone();
        async move {
            let d = Driver::start(&[]).await;
            d.c().set_window_size(1280, 900).await.unwrap();
            d.c().goto(&format!("{base}/s/acme")).await.unwrap();
            press(&d, "Sign in with Customer SSO").await;
            at_provider(&d, login).await;
            let source = d.c().source().await.unwrap();
            (d, source)
        }
    };
    let (d, source) = through("carol").await;
    assert!(source.contains("Partner API"), "carol is in: {source}");
    d.quit().await;
    let (d, source) = through("erin").await;
    assert!(source.contains("may not read this page"), "{source}");
    assert!(!source.contains("Partner API"));
    d.quit().await;

    // Only invited emails and domains, the secret kept for the same client.
    s.send(
        Method::PUT,
        &own,
        Some(&s.key),
        Some(json!({"issuer": op.issuer, "clientId": "upstate", "buttonLabel": "Sign in with Customer SSO"})),
    )
    .await
    .data(200);
    let (d, source) = through("frank").await;
    assert!(source.contains("may not read this page"), "{source}");
    d.quit().await;
    let viewers = s
        .get(&format!("/api/v1/statuspages/{p}/viewers"))
        .await
        .data(200);
    let emails: Vec<&str> = viewers
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["email"].as_str())
        .collect();
    assert_eq!(emails, ["carol@customer.test"], "{viewers}");

    // Removed: no team provider either, so the gate offers none.
    let gone = s.send(Method::DELETE, &own, Some(&s.key), None).await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(gone.body["message"], "Viewer provider deleted");
    s.get(&own).await.problem(404);
    s.send(Method::DELETE, &own, Some(&s.key), None)
        .await
        .problem(404);
    let gate = crate::status_html::fetch(&s, "/s/acme", &[]).await;
    assert!(!gate.text.contains("Customer SSO"));
}
