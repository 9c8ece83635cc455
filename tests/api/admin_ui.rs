//! The admin interface in Chromium, driven as a person would: controls
//! found by their labels, forms submitted without any script of ours
//! needed. First run: the setup link, the owner, sign-in, the dashboard,
//! an incident reported and seen on the public page, sign-out. Screenshots
//! land in `target/screenshots/admin/`.

use crate::browser::STEP_WITHIN;
use crate::browser::{Driver, browser_available};
use crate::on_both_backends;
use crate::support::{Backend, Server};
use fantoccini::Locator;
use fantoccini::elements::Element;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

on_both_backends!(
    forms_work_without_a_browser,
    incident_routes_serve_people_by_role
);
on_both_backends!(browser: first_run_to_a_reported_incident_in_chromium, operator_screens_in_chromium, two_factor_in_chromium, team_screens_in_chromium, templates_in_chromium, sensitive_actions_ask_for_step_up_in_chromium, every_screen_fits_a_phone_and_stays_small, notification_channels_in_chromium, comments_in_chromium, monitors_in_chromium, a_new_page_slug_follows_its_name_in_chromium);

pub(crate) const PW: &str = "correct horse battery staple";

/// The browser's session cookie, for requests made beside it.
async fn admin_cookie(d: &Driver) -> String {
    let c = d.c().get_named_cookie("upstate_session").await.unwrap();
    format!("upstate_session={}", c.value())
}

/// Where a screenshot of this run goes: `admin/{name}-{backend}`.
pub(crate) fn shot(b: Backend, name: &str) -> String {
    let backend = if b == Backend::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    format!("admin/{name}-{backend}")
}

/// A server with `email` (role `role`) signed in to `/admin` in Chromium at
/// desktop size.
pub(crate) async fn signed_in_browser(b: Backend, email: &str, role: &str) -> (Server, Driver) {
    signed_in_browser_with(b, email, role, &[]).await
}

/// `signed_in_browser` with a server started with `env`.
pub(crate) async fn signed_in_browser_with(
    b: Backend,
    email: &str,
    role: &str,
    env: &[(&str, &str)],
) -> (Server, Driver) {
    let s = if env.is_empty() {
        Server::start(b).await
    } else {
        Server::start_with(b, env).await
    };
    s.db.user_with(email, role, PW);
    let d = browser_of(&s, email).await;
    (s, d)
}

/// Chromium at desktop size with `email` (an existing user) signed in.
pub(crate) async fn browser_of(s: &Server, email: &str) -> Driver {
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, s, email).await;
    d
}

/// The control a label names.
pub(crate) async fn field(d: &Driver, label: &str) -> Element {
    let xpath = format!("//*[@id=//label[normalize-space()='{label}']/@for]");
    d.c()
        .find(Locator::XPath(&xpath))
        .await
        .unwrap_or_else(|_| panic!("no control labelled {label:?}"))
}

/// The control with this id (where labels repeat across forms).
pub(crate) async fn field_by_id(d: &Driver, id: &str) -> Element {
    d.c()
        .find(Locator::Id(id))
        .await
        .unwrap_or_else(|_| panic!("no control #{id}"))
}

/// What the control a label names holds now.
pub(crate) async fn value(d: &Driver, label: &str) -> String {
    field(d, label)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

pub(crate) async fn fill(d: &Driver, label: &str, text: &str) {
    let f = field(d, label).await;
    f.clear().await.unwrap();
    f.send_keys(text).await.unwrap();
    // A Markdown field's live preview grows below it when the server
    // answers: wait for it, or a click that follows may land where a button
    // was before the layout moved (and press nothing).
    let last: String = text
        .split_whitespace()
        .last()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let id = f.attr("id").await.unwrap().unwrap_or_default();
    if !last.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        let settled = format!(
            "var a = document.getElementById('{id}'); \
             if (!a || !a.hasAttribute('data-preview')) return true; \
             var b = a.closest('.field') && a.closest('.field').querySelector('.preview-body'); \
             return !!b && b.textContent.indexOf('{last}') >= 0;"
        );
        d.until(&settled, STEP_WITHIN).await;
    }
}

/// Clicks a button or link and waits for the next page to load.
pub(crate) async fn press(d: &Driver, button: &str) {
    let xpath = format!(
        "//button[normalize-space()='{button}'] | //a[normalize-space()='{button}'] | //summary[normalize-space()='{button}']"
    );
    press_found(d, Locator::XPath(&xpath), button).await;
}

/// Clicks what `at` finds (`what`, for the failure) and waits until the
/// page it leads to has loaded.
///
/// A click lands where the element is when it is sent: if the page moved
/// it meanwhile (a preview the server answers grows above it), it presses
/// whatever is there now. So the element says when it got the click, and
/// a click it did not get, on a page that stayed, is sent again.
pub(crate) async fn press_found(d: &Driver, at: Locator<'_>, what: &str) {
    d.js("window.__before = true").await;
    for attempt in 1.. {
        let target = d
            .c()
            .find(at)
            .await
            .unwrap_or_else(|_| panic!("no {what:?} to press"));
        let arg = serde_json::to_value(&target).expect("an element as an argument");
        d.c()
            .execute(
                "window.__pressed = false; \
                 arguments[0].addEventListener('click', () => { window.__pressed = true }, {once: true, capture: true})",
                vec![arg],
            )
            .await
            .unwrap();
        target.click().await.unwrap();
        let missed = d
            .c()
            .execute(
                "return window.__before === true && window.__pressed === false",
                vec![],
            )
            .await
            .is_ok_and(|v| v == serde_json::json!(true));
        if !missed {
            break;
        }
        assert!(attempt < 5, "{what:?} never got the click");
    }
    let loaded = d
        .until(
            "return window.__before === undefined && document.readyState === 'complete'",
            // A step on a loaded machine; a page that never comes fails.
            crate::browser::STEP_WITHIN,
        )
        .await;
    assert!(loaded.is_some(), "{what:?} led to no new page");
}

/// The recovery codes the account screen shows (once, after they are made).
async fn shown_codes(d: &Driver) -> Vec<String> {
    d.js("return [...document.querySelectorAll('ul.codes code')].map(c => c.textContent)")
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// Presses the button whose `aria-label` is `label` and waits for the
/// next page.
pub(crate) async fn press_labelled(d: &Driver, label: &str) {
    let css = format!("button[aria-label=\"{label}\"]");
    press_found(d, Locator::Css(&css), label).await;
}

/// Presses a button whose accessible name contains `name` (icon buttons).
pub(crate) async fn press_named(d: &Driver, name: &str) {
    let xpath = format!("//button[contains(normalize-space(), '{name}')]");
    press_found(d, Locator::XPath(&xpath), name).await;
}

pub(crate) async fn click(d: &Driver, button: &str) {
    let xpath = format!(
        "//button[normalize-space()='{button}'] | //a[normalize-space()='{button}'] | //summary[normalize-space()='{button}']"
    );
    d.c()
        .find(Locator::XPath(&xpath))
        .await
        .unwrap_or_else(|_| panic!("no button {button:?}"))
        .click()
        .await
        .unwrap();
}

pub(crate) async fn path(d: &Driver) -> String {
    let url = d.c().current_url().await.unwrap();
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

pub(crate) async fn text(d: &Driver, css: &str) -> String {
    match d.c().find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap(),
        Err(_) => {
            let url = d.c().current_url().await.map(|u| u.to_string());
            let body = d.js("return document.body.innerText").await;
            panic!("{css} missing at {url:?}: {body}")
        }
    }
}

pub(crate) async fn no_axe_violations(d: &Driver, page: &str) {
    let v = d.axe().await;
    assert!(
        v.is_empty(),
        "{page}: {}",
        serde_json::to_string_pretty(&v).unwrap()
    );
}

async fn first_run_to_a_reported_incident_in_chromium(b: Backend) {
    if !browser_available("first_run_to_a_reported_incident_in_chromium") {
        return;
    }
    let s = Server::process(b).await;
    let token = s.setup_token().await;
    assert!(
        s.log().contains(&format!("/admin/setup?token={token}")),
        "the log line is a link to open"
    );
    let shot = |n: &str| shot(b, n);
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 900).await.unwrap();

    // The root of a fresh install leads to setup, which asks for the link.
    d.c().goto(&s.base).await.unwrap();
    assert_eq!(path(&d).await, "/admin/setup");
    assert_eq!(text(&d, "h1").await, "Open the setup link");

    // The link's page: a refusal is shown beside the field, what was typed stays.
    d.c()
        .goto(&format!("{}/admin/setup?token={token}", s.base))
        .await
        .unwrap();
    assert_eq!(text(&d, "h1").await, "Welcome to Upstate");
    no_axe_violations(&d, "setup").await;
    fill(&d, "Your name", "Olga Owner").await;
    fill(&d, "Email", "olga@example.com").await;
    fill(&d, "Password", "short").await;
    d.screenshot(&shot("setup")).await;
    press(&d, "Create owner").await;
    assert!(path(&d).await.starts_with("/admin/setup?token="));
    assert!(text(&d, "#f-password-error").await.contains("12"));
    assert_eq!(
        field(&d, "Email")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("olga@example.com")
    );
    assert_eq!(
        field(&d, "Password")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some(""),
        "a password is never sent back"
    );
    d.screenshot(&shot("setup-refused")).await;
    let users = s.db.integers("SELECT COUNT(*) FROM users").await;
    assert_eq!(users, [0], "nothing stored on refusal");
    fill(&d, "Password", PW).await;
    press(&d, "Create owner").await;
    assert_eq!(path(&d).await, "/admin/login", "{}", text(&d, "main").await);
    assert!(
        text(&d, ".alert.notice")
            .await
            .contains("owner account exists")
    );

    // Setup is gone for good.
    let gone = reqwest::get(format!("{}/admin/setup?token={token}", s.base))
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);

    // Sign-in: a wrong password is refused in words, the right one gets in.
    fill(&d, "Email", "olga@example.com").await;
    fill(&d, "Password", "not the password at all").await;
    press(&d, "Sign in").await;
    assert_eq!(path(&d).await, "/admin/login");
    assert!(text(&d, ".alert.error").await.contains("wrong"));
    no_axe_violations(&d, "login").await;
    d.screenshot(&shot("login")).await;
    fill(&d, "Password", PW).await;
    press(&d, "Sign in").await;
    assert_eq!(path(&d).await, "/admin");
    assert_eq!(text(&d, "h1").await, "Dashboard");
    assert!(text(&d, "#h-pages + p").await.contains("No status page"));

    // A page with a component; the dashboard shows it with its status.
    let p = s.page("acme").await;
    let c = s.component(p, "API").await;
    d.c().refresh().await.unwrap();
    assert!(
        text(&d, "section[aria-labelledby=h-pages]")
            .await
            .contains("acme")
    );

    // Report an incident from the dashboard.
    press(&d, "Report an incident").await;
    assert_eq!(path(&d).await, "/admin/incidents/new");
    no_axe_violations(&d, "incident form").await;
    // The browser itself asks for the title: nothing is sent. Its `invalid`
    // event is the sign it stopped the submission, and the mark it leaves
    // on the window is still there, so no other page was loaded.
    d.js("document.querySelector('#f-title').addEventListener('invalid', () => { window.__refused = true; })")
        .await;
    click(&d, "Report incident").await;
    let refused = d
        .until("return window.__refused === true", STEP_WITHIN)
        .await;
    assert!(
        refused.is_some(),
        "the browser refused the form without a title"
    );
    assert_eq!(path(&d).await, "/admin/incidents/new");
    assert_eq!(
        d.js("return document.querySelector('#f-title').validity.valueMissing")
            .await,
        true
    );
    fill(&d, "Title", "Checkout is slow").await;
    field(&d, "API is affected").await.click().await.unwrap();
    field(&d, "Impact")
        .await
        .select_by_value("major")
        .await
        .unwrap();
    fill(&d, "Message", "We are looking into **slow** checkouts.").await;
    d.screenshot(&shot("incident-new")).await;
    press(&d, "Report incident").await;
    assert!(path(&d).await.starts_with("/admin/incidents/"));
    assert_eq!(text(&d, "h1").await, "Checkout is slow");
    assert!(
        text(&d, ".alert.notice")
            .await
            .contains("Incident reported")
    );
    press(&d, "Dashboard").await;
    assert!(
        text(&d, "section[aria-labelledby=h-incidents]")
            .await
            .contains("Checkout is slow")
    );
    no_axe_violations(&d, "dashboard").await;
    d.screenshot(&shot("dashboard")).await;
    let list = s.get("/api/v1/incidents").await.data(200);
    assert_eq!(list[0]["title"], "Checkout is slow");
    assert_eq!(list[0]["impact"], "major");
    assert_eq!(list[0]["affectedComponents"], json!([c]));
    let audit = s.get("/api/v1/incidents").await;
    assert_eq!(audit.status, 200);
    let by =
        s.db.texts("SELECT actor_label FROM audit_events WHERE action = 'incident.create'")
            .await;
    assert_eq!(by, ["olga@example.com"], "the person is the audit actor");

    // Visitors see it.
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    assert!(text(&d, "body").await.contains("Checkout is slow"));

    // A private page's status shows too (the public cache does not hold it).
    let hidden = s.page("internal").await;
    let down = s.component(hidden, "VPN").await;
    s.patch(
        &format!("/api/v1/components/{down}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    s.make_private(hidden, "a private page password").await;
    d.c().goto(&format!("{}/admin", s.base)).await.unwrap();
    let pages_card = text(&d, "section[aria-labelledby=h-pages]").await;
    assert!(pages_card.contains("Major System Outage"), "{pages_card}");

    // Sign out.
    d.c().goto(&format!("{}/admin", s.base)).await.unwrap();
    press(&d, "Sign out").await;
    assert_eq!(path(&d).await, "/admin/login");
    d.c().goto(&format!("{}/admin", s.base)).await.unwrap();
    assert_eq!(path(&d).await, "/admin/login", "signed out for real");
    let errors = d.console_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    d.quit().await;
}

/// The same forms posted as a browser without scripts would: the bridge
/// answers 303s, keeps the cookie of a sign-in, refuses a missing CSRF
/// token, and never follows a `_next` off the site.
async fn forms_work_without_a_browser(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PW);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let post = async |path: &str, form: &[(&str, &str)], cookie: Option<&str>| {
        let mut req = http
            .post(format!("{}{path}", s.base))
            .header("accept", "text/html")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(form)
                    .finish(),
            );
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        req.send().await.unwrap()
    };
    let r = post(
        "/api/auth/login",
        &[
            ("_back", "/admin/login"),
            ("_next", "https://evil.example/"),
            ("email", "ed@example.com"),
            ("password", PW),
        ],
        None,
    )
    .await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/admin", "never off the site");
    let session = crate::support::set_cookie(r.headers(), "upstate_session")
        .expect("the sign-in's cookie comes through")
        .split(';')
        .next()
        .unwrap()
        .to_string();

    // Without the CSRF token: refused, back to the form with the reason.
    let p = s.page("acme").await;
    let page = p.to_string();
    let form = [
        ("_back", "/admin/incidents/new"),
        ("_next", "/admin"),
        ("statusPageId:int", page.as_str()),
        ("title", "Down"),
        ("status", "investigating"),
        ("impact", "minor"),
        ("message", "m"),
    ];
    let r = post("/api/incidents", &form, Some(&session)).await;
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/admin/incidents/new");
    let flash = crate::support::set_cookie(r.headers(), "upstate_flash")
        .expect("the refusal travels in a flash cookie");
    assert!(flash.contains("Path=/admin") && flash.contains("HttpOnly"));
    let shown = http
        .get(format!("{}/admin/incidents/new", s.base))
        .header(
            "cookie",
            format!("{session}; {}", flash.split(';').next().unwrap()),
        )
        .send()
        .await
        .unwrap();
    let html = shown.text().await.unwrap();
    assert!(html.contains("X-CSRF-Token"), "the reason is shown");
    assert!(html.contains("value=\"Down\""), "what was typed is kept");
    assert_eq!(
        s.get("/api/v1/incidents").await.data(200),
        json!([]),
        "nothing stored on refusal"
    );

    // With it, a bad field comes back beside the field.
    let me = http
        .get(format!("{}/api/csrf", s.base))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let csrf = me["data"]["csrfToken"].as_str().expect("csrf").to_string();
    let mut bad = form.to_vec();
    bad.retain(|(k, _)| *k != "title");
    bad.push(("_csrf", &csrf));
    let r = post("/api/incidents", &bad, Some(&session)).await;
    assert_eq!(r.headers()["location"], "/admin/incidents/new");
    let mut good = form.to_vec();
    good.push(("_csrf", &csrf));
    good.push(("_done", "Incident reported."));
    let r = post("/api/incidents", &good, Some(&session)).await;
    assert_eq!(r.headers()["location"], "/admin");
    let list = s.get("/api/v1/incidents").await.data(200);
    assert_eq!(list[0]["title"], "Down");
    assert_eq!(list.as_array().map(Vec::len), Some(1));

    // The same route still answers JSON to scripts.
    let r = s
        .send(
            Method::POST,
            "/api/incidents",
            None,
            Some(json!({"title": "X"})),
        )
        .await;
    assert_eq!(r.status, 401, "no session, no key: {:?}", r.body);
}

/// `/api/incidents` is the v1 handler for signed-in people: every role
/// reads, editors and up write, a viewer's attempt changes nothing, and the
/// person is the audit actor.
async fn incident_routes_serve_people_by_role(b: Backend) {
    use crate::support::{Browser, PASSWORD};
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let p = s.page("acme").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let body = json!({"title": "Down", "statusPageId": p, "message": "Looking"});
    let (status, created, headers) = ed
        .send(Method::POST, "/api/incidents", Some(body.clone()))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["data"]["id"].as_i64().unwrap();
    assert_eq!(headers["location"], format!("/api/incidents/{id}"));
    let (status, problem, _) = vi.send(Method::POST, "/api/incidents", Some(body)).await;
    assert_eq!(status, 403, "{problem}");
    let (status, _, _) = vi
        .send(Method::POST, &format!("/api/incidents/{id}/resolve"), None)
        .await;
    assert_eq!(status, 403);
    let (status, seen, _) = vi
        .send(Method::GET, &format!("/api/incidents/{id}"), None)
        .await;
    assert_eq!(
        (status, &seen["data"]["status"]),
        (200, &json!("investigating"))
    );
    let (status, list, _) = vi.send(Method::GET, "/api/incidents", None).await;
    assert_eq!(
        (status, list["data"].as_array().map(Vec::len)),
        (200, Some(1))
    );
    let (status, resolved, _) = ed
        .send(
            Method::POST,
            &format!("/api/incidents/{id}/resolve"),
            Some(json!({"message": "Fixed"})),
        )
        .await;
    assert_eq!(
        (status, &resolved["data"]["status"]),
        (200, &json!("resolved"))
    );
    let actors = s
        .db
        .texts("SELECT actor_label FROM audit_events WHERE target_type = 'incident' ORDER BY seq")
        .await;
    assert_eq!(actors, ["ed@example.com", "ed@example.com"]);
    let (status, _, _) = Browser {
        csrf: "wrong".into(),
        ..ed
    }
    .send(Method::DELETE, &format!("/api/incidents/{id}"), None)
    .await;
    assert_eq!(status, 403, "a wrong CSRF token is refused");
    assert_eq!(s.get(&format!("/api/v1/incidents/{id}")).await.status, 200);
}

pub(crate) async fn sign_in(d: &Driver, s: &Server, email: &str) {
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    fill(d, "Email", email).await;
    fill(d, "Password", PW).await;
    press(d, "Sign in").await;
    assert_eq!(path(d).await, "/admin");
}

pub(crate) async fn check(d: &Driver, label: &str) {
    d.c()
        .find(Locator::XPath(&format!(
            "//label[contains(normalize-space(), '{label}')]/input"
        )))
        .await
        .unwrap_or_else(|_| panic!("no checkbox {label:?}"))
        .click()
        .await
        .unwrap();
}

/// An operator's day in the interface: a page with a group and components,
/// a status set in one click, an incident updated and resolved, a
/// maintenance window scheduled, started and completed; every screen
/// axe-clean and photographed.
async fn operator_screens_in_chromium(b: Backend) {
    if !browser_available("operator_screens_in_chromium") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PW);
    let shot = |n: &str| shot(b, n);
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, &s, "ed@example.com").await;

    // A page: a bad slug is refused beside the field, then it is created.
    press(&d, "Status pages").await;
    assert_eq!(text(&d, "h1").await, "Status pages");
    fill(&d, "Name", "Acme").await;
    fill(&d, "Slug", "Not A Slug").await;
    press(&d, "Create page").await;
    assert_eq!(path(&d).await, "/admin/pages");
    assert!(text(&d, "#f-slug-error").await.contains("lowercase"));
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );
    fill(&d, "Slug", "acme").await;
    press(&d, "Create page").await;
    let page_path = path(&d).await;
    assert!(page_path.starts_with("/admin/pages/"), "{page_path}");
    assert!(text(&d, ".alert.notice").await.contains("Page created"));

    // A group and two components, one in it.
    fill(&d, "Group name", "Backend").await;
    press(&d, "Add group").await;
    fill(&d, "Component name", "API").await;
    field(&d, "Group")
        .await
        .select_by_label("Backend")
        .await
        .unwrap();
    press(&d, "Add component").await;
    fill(&d, "Component name", "Website").await;
    press(&d, "Add component").await;
    assert!(
        text(&d, "section[aria-labelledby=h-components]")
            .await
            .contains("BACKEND")
    );
    let comps = s.get("/api/v1/components").await.data(200);
    let api = comps
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "API")
        .expect("API stored")
        .clone();
    assert!(api["groupId"].is_i64(), "{api}");

    // Order by keyboard: a second group moved up, Website moved into it.
    fill(&d, "Group name", "Frontend").await;
    press(&d, "Add group").await;
    press_named(&d, "Move up group Frontend").await;
    assert!(text(&d, ".alert.notice").await.contains("Order saved"));
    let groups = s.get("/api/v1/component-groups").await.data(200);
    assert_eq!(groups[0]["name"], "Frontend", "{groups}");
    field(&d, "Group of Website")
        .await
        .select_by_label("Frontend")
        .await
        .unwrap();
    press_named(&d, "Move Website to this group").await;
    let web = s.get("/api/v1/components").await.data(200);
    let web = web
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Website")
        .unwrap()
        .clone();
    assert_eq!(web["groupId"], groups[0]["id"]);
    // And by dragging (our script; the events a mouse drag fires): API
    // dropped into Frontend above Website.
    let drag = r#"window.__before = true;
        const api = [...document.querySelectorAll('li[data-component]')].find(li => li.textContent.includes('API'));
        const target = document.querySelector('ul[data-group="GROUP"]');
        const box = target.querySelector('li').getBoundingClientRect();
        const dt = new DataTransfer();
        api.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: dt}));
        target.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: dt, clientY: box.top + 1}));
        target.dispatchEvent(new DragEvent('drop', {bubbles: true, cancelable: true, dataTransfer: dt}));"#;
    d.js(&drag.replace("GROUP", &groups[0]["id"].to_string()))
        .await;
    assert!(
        d.until(
            "return window.__before === undefined && document.readyState === 'complete'",
            STEP_WITHIN
        )
        .await
        .is_some(),
        "the drop saved the layout"
    );
    let order: Vec<(String, serde_json::Value)> = s
        .get("/api/v1/components")
        .await
        .data(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["groupId"].clone(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("API".to_string(), groups[0]["id"].clone()),
            ("Website".to_string(), groups[0]["id"].clone())
        ]
    );

    // One click sets a status.
    press_labelled(&d, "Set API to Major outage").await;
    assert_eq!(
        d.js("return document.querySelector('button[aria-label=\"Set API to Major outage\"]').getAttribute('aria-pressed')")
            .await,
        "true",
        "the pressed button is the current status"
    );
    assert!(text(&d, ".alert.notice").await.contains("Status set"));
    assert_eq!(
        s.component_status(api["id"].as_i64().unwrap()).await,
        "major_outage"
    );
    no_axe_violations(&d, "page screen").await;
    d.screenshot(&shot("page")).await;

    // A quick link: a bad address refused beside the field, a good one shown
    // on the public page.
    fill(&d, "Link label", "Support").await;
    d.js("document.getElementById('f-link-url').type = 'text'")
        .await;
    fill(&d, "Link address", "javascript:alert(1)").await;
    press(&d, "Add link").await;
    assert!(text(&d, "#f-link-url-error").await.contains("http"));
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM quick_links").await, [0]);
    fill(&d, "Link label", "Support").await;
    fill(&d, "Link address", "https://support.example.com/").await;
    press(&d, "Add link").await;
    assert!(
        text(&d, "section[aria-labelledby=h-links]")
            .await
            .contains("support.example.com")
    );
    let public = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(public.contains("https://support.example.com/"));

    // Settings: a bad colour is refused, nothing changes.
    fill(&d, "Accent colour", "blue").await;
    press(&d, "Save settings").await;
    assert!(text(&d, "#f-accentColor-error").await.contains("hex"));
    let stored = s.get("/api/v1/statuspages").await.data(200);
    assert_ne!(stored[0]["accentColor"], "blue");
    // A pale accent is accepted but its low contrast is pointed out.
    fill(&d, "Accent colour", "#ffdd00").await;
    press(&d, "Save settings").await;
    assert!(
        text(&d, "#f-accentColor-hint")
            .await
            .contains("Low contrast"),
        "{}",
        text(&d, "#f-accentColor-hint").await
    );
    fill(&d, "Accent colour", "#aa3300").await;
    let icon = format!(
        "{}{}",
        s.base,
        d.js("return document.querySelector('link[rel=icon]').getAttribute('href')")
            .await
            .as_str()
            .unwrap()
    );
    fill(&d, "Favicon URL", &icon).await;
    fill(&d, "Time zone", "Europe/Berlin").await;
    press(&d, "Save settings").await;
    assert!(text(&d, ".alert.notice").await.contains("Settings saved"));
    assert!(text(&d, "#f-accentColor-hint").await.contains("readable"));
    let stored = s.get("/api/v1/statuspages").await.data(200);
    let detail = s
        .get(&format!("/api/v1/statuspages/{}", stored[0]["id"]))
        .await
        .data(200);
    assert_eq!(detail["faviconUrl"], icon.as_str());
    // Renames in place: a component and a group.
    click(&d, "Edit Website").await;
    fill(&d, "Description of Website", "The marketing site").await;
    press(&d, "Save Website").await;
    assert!(text(&d, ".alert.notice").await.contains("Component saved"));
    fill(&d, "Name of group Frontend", "Web").await;
    press(&d, "Rename group Frontend").await;
    assert!(text(&d, ".alert.notice").await.contains("Group renamed"));
    let groups = s.get("/api/v1/component-groups").await.data(200);
    assert!(groups.to_string().contains("\"Web\""), "{groups}");
    // A visitor password: too short refused beside the field, then set.
    fill(&d, "New visitor password", "abc").await;
    press(&d, "Set password").await;
    assert!(text(&d, "#f-page-password-error").await.len() > 5);
    fill(&d, "New visitor password", "a visitor secret").await;
    press(&d, "Set password").await;
    assert!(
        text(&d, ".alert.notice")
            .await
            .contains("Visitor password set")
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages WHERE password_hash IS NOT NULL")
            .await,
        [1]
    );

    // Days of past incidents: out of range refused beside the field and
    // nothing saved, then set.
    fill(&d, "Days of past incidents", "91").await;
    press(&d, "Save settings").await;
    assert!(
        text(&d, "#f-pastIncidentDays-error")
            .await
            .contains("between 0"),
        "{}",
        text(&d, "main").await
    );
    assert_eq!(
        s.db.integers("SELECT CAST(past_incident_days AS BIGINT) FROM status_pages")
            .await,
        [14]
    );
    fill(&d, "Days of past incidents", "7").await;
    fill(&d, "Custom CSS", ".banner { border-radius: 0 }").await;
    press(&d, "Save settings").await;
    assert_eq!(
        s.db.texts("SELECT custom_css FROM status_pages").await,
        [".banner { border-radius: 0 }"]
    );
    assert!(text(&d, ".alert.notice").await.contains("Settings saved"));
    assert_eq!(
        s.db.integers("SELECT CAST(past_incident_days AS BIGINT) FROM status_pages")
            .await,
        [7]
    );
    // Where the page is read and how to embed it, ready to copy.
    let share = text(&d, "dl.share").await;
    for wanted in [
        format!("{}/s/acme", s.base),
        format!("{}/api/feed/rss?page=acme", s.base),
        format!("{}/api/widget?page=acme&format=js", s.base),
        format!("<statuspage-widget src=\"{}/s/acme?page=acme\">", s.base),
    ] {
        assert!(share.contains(&wanted), "{wanted} in {share}");
    }
    d.js("document.getElementById('h-share').scrollIntoView()")
        .await;
    d.screenshot(&shot("page-share")).await;

    // An incident: reported, updated, resolved, from its own screen.
    press(&d, "Incidents").await;
    press(&d, "Report an incident").await;
    fill(&d, "Title", "Errors on the API").await;
    // The status each affected component goes to, picked beside it.
    field(&d, "Status of API")
        .await
        .select_by_value("major_outage")
        .await
        .unwrap();
    fill(&d, "Message", "Investigating **now**.").await;
    // The live preview shows what the public page will.
    let previewed = d
        .until(
            "const b = document.querySelector('.preview-body strong'); return b && b.textContent === 'now'",
            crate::browser::STEP_WITHIN,
        )
        .await;
    assert!(previewed.is_some(), "the Markdown is previewed");
    no_axe_violations(&d, "report an incident").await;
    d.screenshot(&shot("incident-compose")).await;
    press(&d, "Report incident").await;
    assert!(path(&d).await.starts_with("/admin/incidents/"));
    assert_eq!(text(&d, "h1").await, "Errors on the API");
    let api_status = async || {
        let all = s.get("/api/v1/components").await.data(200);
        all.as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "API")
            .map(|c| c["status"].clone())
            .unwrap()
    };
    assert_eq!(api_status().await, "major_outage");
    assert!(text(&d, "p.muted").await.contains("affects API"));
    check(&d, "Identified").await;
    fill(&d, "Message", "A bad deploy; rolling back.").await;
    field(&d, "Status of API")
        .await
        .select_by_value("partial_outage")
        .await
        .unwrap();
    press(&d, "Post update").await;
    assert!(text(&d, "ol.timeline").await.contains("rolling back"));
    assert_eq!(api_status().await, "partial_outage");
    // A typo corrected in place.
    d.c()
        .find(Locator::XPath(
            "(//ol[contains(@class, 'timeline')]//details/summary)[1]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let corrected = d
        .c()
        .find(Locator::Css("ol.timeline details[open] textarea"))
        .await
        .unwrap();
    corrected.clear().await.unwrap();
    corrected
        .send_keys("A bad deploy; rolled back at 14:05.")
        .await
        .unwrap();
    press(&d, "Save correction").await;
    assert!(text(&d, ".alert.notice").await.contains("corrected"));
    click(&d, "Edit title and impact").await;
    fill(&d, "Incident title", "Errors on the public API").await;
    field(&d, "Incident impact")
        .await
        .select_by_value("major")
        .await
        .unwrap();
    press(&d, "Save title and impact").await;
    assert_eq!(text(&d, "h1").await, "Errors on the public API");
    assert_eq!(
        s.get("/api/v1/incidents").await.data(200)[0]["impact"],
        "major"
    );
    assert!(
        text(&d, "ol.timeline")
            .await
            .contains("rolled back at 14:05")
    );
    no_axe_violations(&d, "incident").await;
    d.screenshot(&shot("incident")).await;
    // Resolving asks for the words visitors will read, prefilled.
    click(&d, "Resolve").await;
    let prefilled = value(&d, "Resolution message").await;
    assert_eq!(prefilled, "This incident has been resolved.");
    d.screenshot(&shot("incident-resolve")).await;
    fill(&d, "Resolution message", "The **rollback** fixed it.").await;
    press(&d, "Resolve incident").await;
    assert!(text(&d, ".alert.notice").await.contains("resolved"));
    // The timeline shows it as visitors will (Markdown rendered), and
    // keeps the source behind Edit.
    let timeline = text(&d, "ol.timeline").await;
    assert!(
        timeline.contains("The rollback fixed it."),
        "the resolution is in the timeline: {timeline}"
    );
    assert_eq!(
        d.js("return document.querySelector('ol.timeline .msg strong').textContent")
            .await,
        "rollback"
    );
    assert_eq!(
        d.js("return [...document.querySelectorAll('ol.timeline textarea')].some(t => t.value === 'The **rollback** fixed it.')")
            .await,
        json!(true),
        "the source stays behind Edit"
    );
    assert_eq!(
        api_status().await,
        "operational",
        "resolving returns what it affected to operational"
    );
    let inc = s.get("/api/v1/incidents").await.data(200);
    assert_eq!(inc[0]["status"], "resolved");
    assert_eq!(inc[0]["updates"].as_array().map(Vec::len), Some(3));
    // Its postmortem: drafted from the record, published, seen by visitors.
    press(&d, "Generate a draft").await;
    let drafted = value(&d, "Postmortem text").await;
    assert!(
        drafted.starts_with("# Postmortem: Errors on the public API"),
        "{drafted}"
    );
    check(&d, "Published on the public page").await;
    press(&d, "Save postmortem").await;
    assert!(text(&d, ".alert.notice").await.contains("Postmortem saved"));
    no_axe_violations(&d, "incident with postmortem").await;
    let incident_admin = path(&d).await;
    let id = incident_admin.rsplit('/').next().unwrap().to_string();
    d.c()
        .goto(&format!("{}/s/acme/incidents/{id}", s.base))
        .await
        .unwrap();
    assert!(text(&d, "#pm-h").await.contains("Postmortem"));
    assert!(text(&d, ".postmortem").await.contains("Root cause"));
    d.screenshot(&shot("public-postmortem")).await;
    d.c()
        .goto(&format!("{}{incident_admin}", s.base))
        .await
        .unwrap();
    press(&d, "Incidents").await;
    assert!(
        text(&d, "section[aria-labelledby=h-found]")
            .await
            .contains("Errors on the public API")
    );
    no_axe_violations(&d, "incidents").await;

    // Maintenance: scheduled, started, completed.
    press(&d, "Maintenance").await;
    fill(&d, "Title", "Database upgrade").await;
    // Markdown, with the live preview incident messages have.
    fill(&d, "Description", "Upgrading the **primary database**.").await;
    assert_eq!(
        d.js("return document.querySelector('#f-description').closest('.field').querySelector('.preview-body strong').textContent")
            .await,
        "primary database"
    );
    let start = "2030-01-02T03:04";
    d.js(&format!(
        "document.getElementById('f-scheduledStartTime').value = '{start}';
         document.getElementById('f-scheduledEndTime').value = '2030-01-02T05:04';"
    ))
    .await;
    check(&d, "Website").await;
    press(&d, "Schedule").await;
    assert!(
        text(&d, ".alert.notice").await.contains("scheduled"),
        "{}",
        text(&d, "main").await
    );
    let m = s.get("/api/v1/maintenance").await.data(200);
    assert_eq!(
        m[0]["scheduledStartTime"], "2030-01-02T02:04:00.000Z",
        "entered in the page's time zone (Berlin, UTC+1 in winter)"
    );
    // Visitors read the description rendered, not its asterisks.
    let public = reqwest::get(format!("{}/s/acme", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        public.contains("<strong>primary database</strong>") && !public.contains("**primary"),
        "the public page renders the description"
    );
    assert!(
        text(&d, "section[aria-labelledby=h-windows]")
            .await
            .contains("2030-01-02 03:04 CET"),
        "shown in the page's time zone"
    );
    // Edited: a later end, in the same zone.
    click(&d, "Edit Database upgrade").await;
    let end = field(&d, "Ends (Database upgrade)").await;
    assert_eq!(
        end.prop("value").await.unwrap().as_deref(),
        Some("2030-01-02T05:04")
    );
    d.js(&format!(
        "document.getElementById('m{}-end').value = '2030-01-02T06:30';",
        m[0]["id"]
    ))
    .await;
    press(&d, "Save changes to Database upgrade").await;
    assert!(text(&d, ".alert.notice").await.contains("changed"));
    let m = s.get("/api/v1/maintenance").await.data(200);
    assert_eq!(m[0]["scheduledEndTime"], "2030-01-02T05:30:00.000Z");
    no_axe_violations(&d, "maintenance").await;
    d.screenshot(&shot("maintenance")).await;
    press(&d, "Start").await;
    assert!(text(&d, ".alert.notice").await.contains("started"));
    press(&d, "Complete").await;
    let m = s.get("/api/v1/maintenance").await.data(200);
    assert_eq!(m[0]["status"], "completed");
    let errors = d.console_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    d.quit().await;
}

/// Two-factor from the interface: set up with the QR page's key, recovery
/// codes shown once, then a sign-in that asks for the second factor.
async fn two_factor_in_chromium(b: Backend) {
    if !browser_available("two_factor_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    press(&d, "Test User").await;
    assert_eq!(text(&d, "h1").await, "Your account");
    press(&d, "Set up two-factor").await;
    let secret = text(&d, "#totp-secret").await;
    assert!(
        d.c().find(Locator::Css(".qr svg")).await.is_ok(),
        "the QR code is drawn"
    );
    fill(&d, "Code from the app", "000000").await;
    press(&d, "Turn on two-factor").await;
    assert!(
        text(&d, "#f-setup-code-error")
            .await
            .contains("not the current code")
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    fill(
        &d,
        "Code from the app",
        &crate::two_factor::code(&secret, now),
    )
    .await;
    press(&d, "Turn on two-factor").await;
    assert!(
        text(&d, ".alert.notice")
            .await
            .contains("Two-factor authentication is on")
    );
    let codes = shown_codes(&d).await;
    assert_eq!(codes.len(), 10, "{codes:?}");
    no_axe_violations(&d, "account").await;
    d.screenshot(&shot(b, "account")).await;
    d.c().refresh().await.unwrap();
    assert!(
        d.c().find(Locator::Css("ul.codes")).await.is_err(),
        "recovery codes are shown once"
    );

    // Signing in now asks for the second factor; a recovery code works.
    press(&d, "Sign out").await;
    fill(&d, "Email", "ad@example.com").await;
    fill(&d, "Password", PW).await;
    press(&d, "Sign in").await;
    assert_eq!(path(&d).await, "/admin/login/code");
    no_axe_violations(&d, "second factor").await;
    fill(&d, "Code", "wrong-code").await;
    press(&d, "Verify").await;
    assert_eq!(path(&d).await, "/admin/login/code");
    assert!(
        d.c()
            .find(Locator::Css(".alert.error, .field .error"))
            .await
            .is_ok()
    );
    fill(&d, "Code", "").await;
    d.c()
        .find(Locator::Css("details summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    fill(&d, "Recovery code", &codes[0]).await;
    press(&d, "Verify").await;
    assert_eq!(path(&d).await, "/admin", "{}", text(&d, "main").await);

    // A sensitive action confirmed inline with a code from the app (the
    // next step's: the setup's code is spent).
    let page = s.page("doomed").await;
    d.c()
        .goto(&format!("{}/admin/pages/{page}", s.base))
        .await
        .unwrap();
    let next = crate::two_factor::code(&secret, crate::two_factor::now() + 30);
    confirm_with(&d, "su-page", &next).await;
    assert_eq!(path(&d).await, "/admin/pages", "{}", text(&d, "main").await);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );
    let method =
        s.db.texts("SELECT method FROM step_ups WHERE verified_at IS NOT NULL")
            .await;
    assert_eq!(method, ["totp"]);

    // New recovery codes and turning it off, from the account screen: a
    // wrong password refused beside its own field, nothing changed.
    press(&d, "Test User").await;
    click(&d, "New recovery codes").await;
    field_by_id(&d, "regen-password")
        .await
        .send_keys("not my password")
        .await
        .unwrap();
    press(&d, "Make new recovery codes").await;
    assert!(
        text(&d, "#regen-password-error").await.contains("is wrong"),
        "the refusal is beside the field"
    );
    assert_eq!(
        d.js("return document.getElementById('off-password').getAttribute('aria-invalid')")
            .await,
        serde_json::Value::Null,
        "the other form's password is not marked"
    );
    no_axe_violations(&d, "account, refused new codes").await;
    field_by_id(&d, "regen-password")
        .await
        .send_keys(PW)
        .await
        .unwrap();
    press(&d, "Make new recovery codes").await;
    assert!(
        text(&d, "[role=status]")
            .await
            .contains("New recovery codes made")
    );
    let fresh = shown_codes(&d).await;
    assert_eq!(fresh.len(), 10);
    assert!(fresh.iter().all(|c| !codes.contains(c)), "all new");
    d.screenshot(&shot(b, "account-new-codes")).await;
    click(&d, "Turn two-factor off").await;
    field_by_id(&d, "off-password")
        .await
        .send_keys(PW)
        .await
        .unwrap();
    d.js("window.confirm = () => true").await;
    press_found(&d, Locator::Css("button.danger"), "Turn two-factor off").await;
    assert!(
        text(&d, "[role=status]")
            .await
            .contains("Two-factor authentication is off")
    );
    assert!(text(&d, "#h-2fa + p").await.starts_with("Off."));
    d.quit().await;
}

/// Keys, users and the audit log from the interface: a key's secret shown
/// once and working, then revoked; a user added (a short password refused
/// beside the field); the chain verified; screens a role does not open.
async fn team_screens_in_chromium(b: Backend) {
    if !browser_available("team_screens_in_chromium") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PW);
    s.db.user_with("ed@example.com", "editor", PW);
    let shot = |n: &str| shot(b, n);
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, &s, "ad@example.com").await;

    press(&d, "API keys").await;
    fill(&d, "Key name", "deploy pipeline").await;
    check(&d, "write: reads and changes content").await;
    press(&d, "Create key").await;
    let secret = text(&d, "#new-secret").await;
    assert!(secret.len() > 20, "{secret}");
    assert!(
        d.c()
            .find(Locator::Css("button[data-copy]:not([hidden])"))
            .await
            .is_ok(),
        "the copy button shows with our script"
    );
    no_axe_violations(&d, "keys").await;
    d.screenshot(&shot("keys")).await;
    let http = reqwest::Client::new();
    let with_key = async |key: &str| {
        http.get(format!("{}/api/v1/statuspages", s.base))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(with_key(&secret).await, 200, "the shown secret works");
    d.c().refresh().await.unwrap();
    assert!(
        d.c().find(Locator::Css("#new-secret")).await.is_err(),
        "shown once"
    );
    d.js("window.confirm = () => true").await;
    press(&d, "Revoke deploy pipeline").await;
    assert!(text(&d, ".alert.notice").await.contains("revoked"));
    assert_eq!(with_key(&secret).await, 401, "revoked at once");

    press(&d, "Users").await;
    fill(&d, "Name", "Nora New").await;
    fill(&d, "Email", "nora@example.com").await;
    fill(&d, "First password", "short").await;
    press(&d, "Add user").await;
    assert!(text(&d, "#f-password-error").await.contains("12"));
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM users WHERE email = 'nora@example.com'")
            .await,
        [0]
    );
    fill(&d, "First password", "a long enough first password").await;
    press(&d, "Add user").await;
    assert!(
        text(&d, "section[aria-labelledby=h-users]")
            .await
            .contains("nora@example.com")
    );
    no_axe_violations(&d, "users").await;
    d.screenshot(&shot("users")).await;

    press(&d, "Audit log").await;
    press(&d, "Verify the chain").await;
    assert!(
        text(&d, ".alert.notice").await.contains("intact"),
        "{}",
        text(&d, "main").await
    );
    fill(&d, "Action", "api_key.create").await;
    press(&d, "Filter").await;
    let actions: Vec<String> = d
        .js("return [...document.querySelectorAll('table.events td code')].map(c => c.textContent)")
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let stored =
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'api_key.create'")
            .await;
    assert_eq!(
        actions.len() as i64,
        stored[0],
        "every such event is listed"
    );
    assert!(actions.iter().all(|a| a == "api_key.create"), "{actions:?}");
    // More filters: who acted, on what, since when; the exports follow them.
    fill(&d, "Action", "").await;
    field(&d, "Who")
        .await
        .select_by_value("user")
        .await
        .unwrap();
    fill(&d, "Target", "user").await;
    press(&d, "Filter").await;
    let kinds = d
        .js("return [...document.querySelectorAll('table.events tbody tr td:nth-child(2) .muted')].map(c => c.textContent)")
        .await;
    let kinds = kinds.as_array().unwrap();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| k == "user"),
        "{kinds:?}"
    );
    let href = d
        .js("return [...document.querySelectorAll('a.button')].find(a => a.textContent === 'Export CSV').getAttribute('href')")
        .await;
    let href = href.as_str().unwrap().to_string();
    assert!(
        href.contains("actorKind=user") && href.contains("targetType=user"),
        "{href}"
    );
    let csv = http
        .get(format!("{}{href}", s.base))
        .header("cookie", &admin_cookie(&d).await)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    no_axe_violations(&d, "audit").await;
    d.screenshot(&shot("audit")).await;
    press(&d, "System").await;
    let backend = if b == Backend::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    assert!(
        text(&d, "section[aria-labelledby=h-sys]")
            .await
            .contains(backend)
    );
    press(&d, "Drop the cache").await;
    assert!(text(&d, ".alert.notice").await.contains("Cache dropped"));
    no_axe_violations(&d, "system").await;
    d.screenshot(&shot("system")).await;

    // Settings: a refusal beside its field, then the name heads the
    // interface, the chosen page is served at /, and a feature turned off
    // is gone from the public side.
    s.page("alpha").await;
    press(&d, "Settings").await;
    fill(&d, "Name of this install", " ").await;
    press(&d, "Save settings").await;
    assert!(text(&d, "#f-siteName-error").await.contains("empty"));
    fill(&d, "Name of this install", "Acme status").await;
    field(&d, "Page served at /")
        .await
        .select_by_value("alpha")
        .await
        .unwrap();
    press(&d, "Save settings").await;
    assert!(text(&d, ".alert.notice").await.contains("Settings saved"));
    assert!(text(&d, "a.brand").await.contains("Acme status"));
    let home = http.get(format!("{}/", s.base)).send().await.unwrap();
    assert!(
        home.text().await.unwrap().contains("alpha"),
        "/ serves the default page"
    );
    field(&d, "RSS and Atom feeds").await.click().await.unwrap();
    press(&d, "Save features").await;
    assert!(text(&d, ".alert.notice").await.contains("Features saved"));
    let feed = http
        .get(format!("{}/api/feed/rss?page=alpha", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(feed.status(), 404, "feeds are off");
    assert_eq!(
        d.js("return document.getElementById('feat-feeds').checked")
            .await,
        json!(false)
    );
    assert_eq!(
        d.js("return document.getElementById('feat-badges').checked")
            .await,
        json!(true),
        "the other switches kept their state"
    );
    no_axe_violations(&d, "settings").await;
    d.screenshot(&shot("settings")).await;
    d.quit().await;

    // An editor's role does not open these two screens.
    let ed = crate::support::Browser::login(&s, "ed@example.com", PW)
        .await
        .unwrap_or_else(|_| panic!("editor signs in"));
    for screen in [
        "/admin/users",
        "/admin/audit",
        "/admin/system",
        "/admin/settings",
    ] {
        let r = http
            .get(format!("{}{screen}", s.base))
            .header("cookie", &ed.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{screen}");
        assert!(r.text().await.unwrap().contains("Not for your role"));
    }
}

/// A template written ahead of time fills the incident form when picked.
async fn templates_in_chromium(b: Backend) {
    if !browser_available("templates_in_chromium") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PW);
    s.page("acme").await;
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, &s, "ed@example.com").await;
    d.c()
        .goto(&format!("{}/admin/templates", s.base))
        .await
        .unwrap();
    fill(&d, "Template name", "Database degraded").await;
    fill(&d, "Incident title", "Slow database").await;
    field(&d, "Impact")
        .await
        .select_by_value("major")
        .await
        .unwrap();
    fill(&d, "First message", "Queries are slow; we are on it.").await;
    press(&d, "Save template").await;
    assert!(text(&d, ".alert.notice").await.contains("Template saved"));
    no_axe_violations(&d, "templates").await;
    press(&d, "Report with it: Database degraded").await;
    assert_eq!(value(&d, "Title").await, "Slow database");
    assert_eq!(
        value(&d, "Message").await,
        "Queries are slow; we are on it."
    );
    assert_eq!(value(&d, "Impact").await, "major");
    no_axe_violations(&d, "incident form from a template").await;
    d.screenshot(&shot(b, "incident-from-template")).await;
    press(&d, "Report incident").await;
    let list = s.get("/api/v1/incidents").await.data(200);
    assert_eq!(
        (&list[0]["title"], &list[0]["impact"]),
        (&json!("Slow database"), &json!("major"))
    );
    d.quit().await;
}

/// Types `proof` into the step-up field `id` and presses its form's button.
async fn confirm_with(d: &Driver, id: &str, proof: &str) {
    let input = d
        .c()
        .find(Locator::Css(&format!("#{id}")))
        .await
        .unwrap_or_else(|_| panic!("no step-up field #{id}"));
    input.clear().await.unwrap();
    input.send_keys(proof).await.unwrap();
    d.js("window.__before = true; window.confirm = () => true")
        .await;
    d.c()
        .find(Locator::XPath(&format!(
            "//input[@id='{id}']/ancestor::form//button[@type='submit']"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let loaded = d
        .until(
            "return window.__before === undefined && document.readyState === 'complete'",
            STEP_WITHIN,
        )
        .await;
    assert!(loaded.is_some(), "#{id}'s form led to no new page");
}

/// Deleting a page, changing a role, removing a user and creating an admin
/// key each ask for the password (or a 2FA code) inline; a wrong or missing
/// proof is refused beside its field and changes nothing.
async fn sensitive_actions_ask_for_step_up_in_chromium(b: Backend) {
    if !browser_available("sensitive_actions_ask_for_step_up_in_chromium") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PW);
    let ed = s.db.user("ed@example.com", "editor");
    let page = s.page("doomed").await;
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, &s, "ad@example.com").await;

    d.c()
        .goto(&format!("{}/admin/pages/{page}", s.base))
        .await
        .unwrap();
    confirm_with(&d, "su-page", "not my password").await;
    assert_eq!(path(&d).await, format!("/admin/pages/{page}"));
    assert!(
        text(&d, "#su-page-note").await.contains("wrong"),
        "{}",
        text(&d, "main").await
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [1],
        "a wrong proof deletes nothing"
    );
    no_axe_violations(&d, "page with a refused step-up").await;
    d.screenshot(&shot(b, "step-up-refused")).await;
    confirm_with(&d, "su-page", PW).await;
    assert_eq!(path(&d).await, "/admin/pages");
    assert!(text(&d, ".alert.notice").await.contains("Page deleted"));
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );

    // A role change and a removal, each confirmed.
    press(&d, "Users").await;
    d.c()
        .find(Locator::XPath(
            "//summary[contains(normalize-space(), 'Manage')][ancestor::li//*[contains(text(), 'ed@example.com')]]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    d.c()
        .find(Locator::Css(&format!("#role-{ed}")))
        .await
        .unwrap()
        .select_by_value("admin")
        .await
        .unwrap();
    confirm_with(&d, &format!("su-role-{ed}"), "wrong guess").await;
    assert!(
        text(&d, &format!("#su-role-{ed}-note"))
            .await
            .contains("wrong"),
        "the message is beside this user's field, its panel open"
    );
    no_axe_violations(&d, "users with a refused step-up").await;
    d.screenshot(&shot(b, "users-step-up")).await;
    assert_eq!(
        s.db.texts(&format!("SELECT role FROM users WHERE id = {ed}"))
            .await,
        ["editor"]
    );
    d.c()
        .find(Locator::Css(&format!("#role-{ed}")))
        .await
        .unwrap()
        .select_by_value("admin")
        .await
        .unwrap();
    confirm_with(&d, &format!("su-role-{ed}"), PW).await;
    assert!(text(&d, ".alert.notice").await.contains("Role changed"));
    assert_eq!(
        s.db.texts(&format!("SELECT role FROM users WHERE id = {ed}"))
            .await,
        ["admin"]
    );
    d.js("document.querySelectorAll('details.manage').forEach(e => e.open = true)")
        .await;
    confirm_with(&d, &format!("su-remove-{ed}"), PW).await;
    assert!(text(&d, ".alert.notice").await.contains("User removed"));
    assert_eq!(
        s.db.integers(&format!("SELECT COUNT(*) FROM users WHERE id = {ed}"))
            .await,
        [0]
    );

    // An admin key: without the proof it is asked for beside the field.
    press(&d, "API keys").await;
    fill(&d, "Key name", "break glass").await;
    check(&d, "admin: everything").await;
    press(&d, "Create key").await;
    assert!(
        text(&d, "#su-key-note")
            .await
            .contains("Enter your password"),
        "{}",
        text(&d, "main").await
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM api_keys WHERE name = 'break glass'")
            .await,
        [0]
    );
    fill(&d, "Key name", "break glass").await;
    check(&d, "admin: everything").await;
    confirm_with(&d, "su-key", PW).await;
    assert!(text(&d, "#new-secret").await.len() > 20);
    let steps =
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'user.step_up'")
            .await;
    assert_eq!(steps, [4], "each confirmed action was one verified step-up");
    d.quit().await;
}

/// Every admin screen at a phone's width (390 px): nothing wider than the
/// screen, every screen shot; and each screen with its stylesheet, script
/// and icon under 100 KB (measured uncompressed, so over the wire is less).
async fn every_screen_fits_a_phone_and_stays_small(b: Backend) {
    if !browser_available("every_screen_fits_a_phone_and_stays_small") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PW);
    let page = s.page("acme").await;
    let c = s.component(page, "API").await;
    let g = s.group(page, "Data stores with a long group name").await;
    let db = s
        .component(page, "Primary database cluster in Frankfurt")
        .await;
    s.patch(&format!("/api/v1/components/{db}"), json!({"groupId": g}))
        .await
        .data(200);
    s.patch(
        &format!("/api/v1/components/{db}/status"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    let incident = s.incident(page, "Slow answers").await["id"]
        .as_i64()
        .unwrap();
    let window = json!({"title": "Database upgrade", "statusPageId": page, "componentIds": [c],
        "scheduledStartTime": crate::support::at_offset_ms(3_600_000),
        "scheduledEndTime": crate::support::at_offset_ms(7_200_000)});
    s.post("/api/v1/maintenance", window).await.data(201);
    let channel = s
        .post(
            "/api/notifications",
            json!({"name": "On-call Slack", "kind": "slack", "target": "https://hooks.slack.com/services/T0/B0/x"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let subscriber = s
        .post(
            "/api/subscribers",
            json!({"statusPageId": page, "kind": "webhook", "target": "https://hooks.example.com/status"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let monitor = s
        .post(
            "/api/monitors",
            json!({"componentId": c, "target": "https://api.example.com/health"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let integration = s
        .post(
            "/api/integrations",
            json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page,
                   "rules": [{"when": "severity=\"critical\"", "componentIds": [c], "status": "major_outage"}]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let screens = [
        ("dashboard", "/admin".to_string()),
        ("integrations", "/admin/integrations".to_string()),
        ("integration", format!("/admin/integrations/{integration}")),
        ("monitors", "/admin/monitors".to_string()),
        ("monitor", format!("/admin/monitors/{monitor}")),
        ("pages", "/admin/pages".to_string()),
        ("page", format!("/admin/pages/{page}")),
        ("component", format!("/admin/components/{c}")),
        ("incidents", "/admin/incidents".to_string()),
        ("incident-new", "/admin/incidents/new".to_string()),
        ("incident", format!("/admin/incidents/{incident}")),
        ("templates", "/admin/templates".to_string()),
        ("maintenance", "/admin/maintenance".to_string()),
        ("account", "/admin/account".to_string()),
        ("keys", "/admin/keys".to_string()),
        ("users", "/admin/users".to_string()),
        ("audit", "/admin/audit".to_string()),
        ("settings", "/admin/settings".to_string()),
        ("system", "/admin/system".to_string()),
        ("notifications", "/admin/notifications".to_string()),
        ("channel", format!("/admin/notifications/{channel}")),
        ("subscribers", "/admin/subscribers".to_string()),
        ("comments", "/admin/comments?status=all".to_string()),
        (
            "subscriber",
            format!("/admin/subscribers?open={subscriber}"),
        ),
    ];
    let ad = crate::support::Browser::login(&s, "ad@example.com", PW)
        .await
        .unwrap_or_else(|_| panic!("admin signs in"));
    let http = reqwest::Client::new();
    let fetch = async |path: &str| -> Vec<u8> {
        let r = http
            .get(format!("{}{path}", s.base))
            .header("cookie", &ad.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        r.bytes().await.unwrap().to_vec()
    };
    for (name, path) in &screens {
        let html = String::from_utf8(fetch(path).await).unwrap();
        let mut total = html.len();
        // Everything the screen loads: our stylesheet, script and icon.
        for attr in ["href=\"/assets/", "src=\"/assets/"] {
            for part in html.split(attr).skip(1) {
                let asset = part.split('"').next().unwrap();
                total += fetch(&format!("/assets/{asset}")).await.len();
            }
        }
        assert!(
            total < 100 * 1024,
            "{name}: {total} bytes with its assets, over 100 KB"
        );
        eprintln!("{name}: {total} bytes with its assets");
    }

    let d = Driver::start(&[]).await;
    // The select of a status must show its whole text, on a desktop as on
    // a phone (the current status stands beside the component's name).
    let selects_whole = "var bad = []; var ctx = document.createElement('canvas').getContext('2d'); \
        document.querySelectorAll('table.moves select').forEach(function (s) { \
          ctx.font = getComputedStyle(s).font; \
          var w = ctx.measureText(s.options[s.selectedIndex].text).width; \
          if (w + 36 > s.clientWidth) bad.push(s.options[s.selectedIndex].text + ' (' + Math.round(w) + ' px in ' + ctx.font + ') in ' + s.clientWidth + ' px'); }); \
        return [document.querySelectorAll('table.moves select').length, bad];";
    d.c().set_window_size(1280, 900).await.unwrap();
    sign_in(&d, &s, "ad@example.com").await;
    for path in [
        "/admin/incidents/new".to_string(),
        format!("/admin/incidents/{incident}"),
    ] {
        d.c().goto(&format!("{}{path}", s.base)).await.unwrap();
        let r = d.js(selects_whole).await;
        assert!(
            r[0].as_i64().unwrap() >= 2 && r[1] == json!([]),
            "{path} on a desktop: {r}"
        );
    }
    let sections = text(&d, "table.moves").await;
    assert!(
        sections.find("DATA STORES WITH A LONG GROUP NAME").unwrap()
            < sections.find("Primary database").unwrap()
            && sections.find("Primary database").unwrap()
                < sections.find("NOT IN A GROUP").unwrap()
            && sections.find("NOT IN A GROUP").unwrap() < sections.find("API").unwrap(),
        "components grouped as on the page: {sections}"
    );
    d.c().set_window_size(360, 800).await.unwrap();
    for (name, path) in &screens {
        d.c().goto(&format!("{}{path}", s.base)).await.unwrap();
        let overflow = d
            .js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            .await
            .as_i64()
            .unwrap();
        d.screenshot(&shot(b, &format!("phone-{name}"))).await;
        no_axe_violations(&d, name).await;
        let top = d
            .js("return document.querySelector('main').getBoundingClientRect().top")
            .await
            .as_f64()
            .unwrap();
        assert!(
            top < 100.0,
            "{name}: the menu is folded, content starts at {top} px"
        );
        if name.starts_with("incident") {
            let r = d.js(selects_whole).await;
            assert!(r[1] == json!([]), "{name} on a phone: {r}");
        }
        let wide = d.js("return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth).map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 8)").await;
        assert!(
            overflow <= 0,
            "{name} is {overflow} px wider than a phone: {wide}"
        );
    }
    // The folded menu opens with one press and leads on.
    d.c().goto(&format!("{}/admin", s.base)).await.unwrap();
    click(&d, "Menu").await;
    d.screenshot(&shot(b, "phone-menu-open")).await;
    press(&d, "Maintenance").await;
    assert_eq!(path(&d).await, "/admin/maintenance");
    d.quit().await;
}

/// Notification channels from the browser: a webhook added (its secret
/// shown once), a test message and the receiver's answer, a real delivery
/// in the log, a bad target refused beside its field, and deletion.
async fn notification_channels_in_chromium(b: Backend) {
    if !browser_available("notification_channels_in_chromium") {
        return;
    }
    let rx = crate::receiver::Receiver::start().await;
    let s = Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    s.db.user_with("ad@example.com", "admin", PW);
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    sign_in(&d, &s, "ad@example.com").await;

    press(&d, "Notifications").await;
    assert_eq!(text(&d, "h1").await, "Notifications");
    d.screenshot(&shot(b, "notifications-empty")).await;
    // The form asks for what the chosen kind needs.
    let token_shown = "return !document.getElementById('f-token').closest('.field').hidden";
    assert_eq!(d.js(token_shown).await, false, "no bot token for a webhook");
    field(&d, "Kind")
        .await
        .select_by_value("telegram")
        .await
        .unwrap();
    assert_eq!(
        d.js(token_shown).await,
        true,
        "Telegram asks for its bot token"
    );
    assert!(text(&d, "#f-target-hint").await.contains("chat's id"));
    field(&d, "Kind")
        .await
        .select_by_value("webhook")
        .await
        .unwrap();
    assert_eq!(d.js(token_shown).await, false);
    // A target that is no URL is refused beside its field; nothing stored.
    fill(&d, "Name", "Status webhook").await;
    fill(&d, "Webhook URL", "not a url").await;
    press(&d, "Add channel").await;
    assert_eq!(path(&d).await, "/admin/notifications");
    assert!(
        text(&d, "#f-target-error").await.contains("http"),
        "error beside the field"
    );
    assert_eq!(s.get("/api/notifications").await.data(200), json!([]));
    assert_eq!(
        field(&d, "Name")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("Status webhook")
    );

    fill(&d, "Webhook URL", &format!("{}/hook", rx.base)).await;
    check(&d, "Incident opened").await;
    check(&d, "Incident resolved").await;
    press(&d, "Add channel").await;
    let here = path(&d).await;
    assert!(here.starts_with("/admin/notifications/"), "{here}");
    let secret = text(&d, "#new-secret").await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    d.screenshot(&shot(b, "notification-channel-new")).await;
    no_axe_violations(&d, "channel").await;
    // Shown once: the next visit shows only its last characters.
    d.c().goto(&format!("{}{here}", s.base)).await.unwrap();
    assert!(d.c().find(Locator::Css("#new-secret")).await.is_err());

    press(&d, "Send a test message").await;
    let result = text(&d, "#test-result").await;
    assert!(
        result.contains("Test delivered") && result.contains("HTTP 200"),
        "{result}"
    );
    assert_eq!(rx.got().len(), 1);

    s.post(
        "/api/v1/incidents",
        json!({"title": "API errors", "statusPageId": page, "impact": "major", "message": "Looking",
               "componentIds": [api]}),
    )
    .await
    .data(201);
    rx.wait_for(2, crate::browser::STEP_WITHIN).await;
    // Updates were not ticked: this one is not sent.
    let inc = s.get("/api/v1/incidents").await.data(200)[0]["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Still looking"}),
    )
    .await
    .data(201);
    s.quiet().await;
    assert_eq!(rx.got().len(), 2, "an update is not among the ticked kinds");
    d.c().set_window_size(1280, 1500).await.unwrap();
    d.c().goto(&format!("{}{here}", s.base)).await.unwrap();
    let log = text(&d, "section[aria-labelledby=h-log]").await;
    assert!(
        log.contains("Incident opened") && log.contains("New incident: API errors"),
        "{log}"
    );
    assert!(
        log.contains("Delivered") && log.contains("HTTP 200"),
        "{log}"
    );
    d.screenshot(&shot(b, "notification-channel")).await;

    // Subscribers: the one a key added, its history, removed from the list.
    s.post(
        "/api/subscribers",
        json!({"statusPageId": page, "kind": "webhook", "target": format!("{}/visitor", rx.base), "componentIds": [api]}),
    )
    .await
    .data(201);
    press(&d, "Subscribers").await;
    assert!(
        text(&d, "section[aria-labelledby=h-list]")
            .await
            .contains("/visitor")
    );
    press(&d, &format!("History of {}/visitor", rx.base)).await;
    assert!(text(&d, "#h-history").await.contains("/visitor"));
    d.screenshot(&shot(b, "subscribers")).await;
    no_axe_violations(&d, "subscribers").await;
    // A list pasted as CSV: a bad row refused beside the field, then imported.
    fill(&d, "CSV", "target,kind\nftp://nope,webhook").await;
    press(&d, "Import subscribers").await;
    assert!(
        text(&d, "#f-csv-note").await.contains("line 2"),
        "the bad line is named"
    );
    fill(
        &d,
        "CSV",
        "target,kind\nhttps://hooks.example.com/a,webhook",
    )
    .await;
    press(&d, "Import subscribers").await;
    assert!(text(&d, ".alert.notice").await.contains("Imported 1"));
    d.c()
        .execute("window.confirm = () => true", vec![])
        .await
        .unwrap();
    press_named(&d, &format!("Remove {}/visitor", rx.base)).await;
    assert!(
        text(&d, ".alert.notice")
            .await
            .contains("Subscriber removed")
    );
    let left = s.get("/api/subscribers").await.data(200);
    assert_eq!(
        left.as_array().unwrap().len(),
        1,
        "the imported one stays: {left}"
    );

    press(&d, "Notifications").await;
    assert!(
        text(&d, "section[aria-labelledby=h-channels]")
            .await
            .contains("Status webhook")
    );
    d.screenshot(&shot(b, "notifications")).await;
    press(&d, "Open Status webhook").await;
    d.c()
        .execute("window.confirm = () => true", vec![])
        .await
        .unwrap();
    press(&d, "Delete Status webhook").await;
    assert_eq!(path(&d).await, "/admin/notifications");
    assert!(text(&d, ".alert.notice").await.contains("Channel deleted"));
    assert_eq!(s.get("/api/notifications").await.data(200), json!([]));
    d.quit().await;
}

/// Comments from both sides: an operator turns them on in Settings, a
/// visitor comments on the incident's page (no script needed), the
/// operator approves it from the queue and it shows on the page as text.
async fn comments_in_chromium(b: Backend) {
    if !browser_available("comments_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    let incident = s.incident(page, "Checkout errors").await["id"]
        .as_i64()
        .unwrap();
    press(&d, "Settings").await;
    field(&d, "Comments on incidents")
        .await
        .click()
        .await
        .unwrap();
    press(&d, "Save features").await;
    assert!(text(&d, "[role=status]").await.contains("Features saved"));
    assert_eq!(s.get("/api/features").await.data(200)["comments"], true);

    // A visitor (another browser, no session) comments.
    let v = Driver::start(&[]).await;
    v.c().set_window_size(1280, 1000).await.unwrap();
    v.c()
        .goto(&format!("{}/s/acme/incidents/{incident}", s.base))
        .await
        .unwrap();
    assert_eq!(text(&v, "#cm-h").await, "Comments");
    fill(&v, "Your name (optional)", "Ann from Frankfurt").await;
    fill(&v, "Comment", "Still <b>broken</b> for us.\nSince 09:10.").await;
    no_axe_violations(&v, "incident with comment form").await;
    v.screenshot(&shot(b, "public-comment-form")).await;
    press(&v, "Send comment").await;
    assert_eq!(text(&v, "h1").await, "Comment received");
    assert!(
        text(&v, "main")
            .await
            .contains("once a moderator has read it")
    );

    // The queue shows it waiting; approving it puts it on the page.
    press(&d, "Comments").await;
    assert_eq!(text(&d, "h1").await, "Comments");
    assert!(text(&d, "nav.tabs").await.contains("Waiting 1"));
    assert!(
        text(&d, ".comment-body")
            .await
            .contains("Still <b>broken</b> for us.")
    );
    no_axe_violations(&d, "comments queue").await;
    d.screenshot(&shot(b, "comments-queue")).await;
    press_named(&d, "Approve").await;
    assert!(text(&d, "[role=status]").await.contains("Comment approved"));
    assert!(text(&d, ".empty").await.contains("No comments here"));

    // The visitor reloads (the page may be cached for its max-age; a
    // reload asks again and the rebuilt page answers).
    v.c()
        .goto(&format!("{}/s/acme/incidents/{incident}", s.base))
        .await
        .unwrap();
    v.c().refresh().await.unwrap();
    let shown = text(&v, ".comment-list").await;
    assert!(shown.contains("Ann from Frankfurt"), "{shown}");
    assert!(
        shown.contains("Still <b>broken</b> for us."),
        "as text: {shown}"
    );
    let bold = v
        .js("return document.querySelectorAll('.comment-list b').length")
        .await;
    assert_eq!(bold, 0, "never markup");
    v.screenshot(&shot(b, "public-comment-shown")).await;
    v.quit().await;
    d.quit().await;
}

/// Monitors from /admin: a new monitor against a local target, its first
/// check shown, "test now" against a target gone bad, the component's
/// screen pointing at it, and a bad interval refused beside its field.
async fn monitors_in_chromium(b: Backend) {
    if !browser_available("monitors_in_chromium") {
        return;
    }
    let rx = crate::receiver::Receiver::start().await;
    let (s, d) = signed_in_browser_with(
        b,
        "ad@example.com",
        "admin",
        &[("UPSTATE_MONITOR_ALLOW", "127.0.0.1")],
    )
    .await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    press(&d, "Monitors").await;
    assert_eq!(text(&d, "h1").await, "Monitors");
    assert!(text(&d, ".empty").await.contains("No monitors yet"));
    fill(&d, "Target", &format!("{}/health", rx.base)).await;
    fill(&d, "Check every (seconds)", "5").await;
    press(&d, "Add monitor").await;
    assert!(
        text(&d, "#f-intervalSeconds-error")
            .await
            .contains("must be from 10"),
        "refused beside the field"
    );
    assert_eq!(s.get("/api/monitors").await.data(200), json!([]));
    fill(&d, "Check every (seconds)", "30").await;
    press(&d, "Add monitor").await;
    assert!(text(&d, "[role=status]").await.contains("Monitor added"));
    assert!(text(&d, "h1").await.starts_with("Monitor of API"));

    // The server's own loop runs the first check at once.
    let id = s.get("/api/monitors").await.data(200)[0]["id"]
        .as_i64()
        .unwrap();
    let deadline = std::time::Instant::now() + crate::browser::STEP_WITHIN;
    while s.get(&format!("/api/monitors/{id}")).await.data(200)["state"] != "up" {
        assert!(std::time::Instant::now() < deadline, "never checked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    d.c().refresh().await.unwrap();
    assert!(text(&d, "h1").await.contains("Up"));
    assert!(text(&d, "#h-checks + *").await.contains("HTTP 200"));
    no_axe_violations(&d, "monitor screen").await;
    d.screenshot(&shot(b, "monitor")).await;

    // Test now against a target that went bad: the answer, in words.
    rx.otherwise(crate::receiver::Plan::Status(503));
    press(&d, "Test now").await;
    let result = text(&d, "#test-result").await;
    assert!(
        result.contains("Down.") && result.contains("HTTP 503"),
        "{result}"
    );
    d.screenshot(&shot(b, "monitor-test-now")).await;

    // Request headers from the form, as rows of name and value; blanking
    // every row removes them.
    let open = "document.querySelectorAll('details').forEach(x => x.open = true)";
    d.js(open).await;
    fill(&d, "Name 1", "Authorization").await;
    fill(&d, "Value 1", "Bearer probe-0123456789-xyz").await;
    press(&d, "Save monitor").await;
    // The value is write-only: the API and the form show a hint.
    let hint = json!([{"name": "Authorization", "value": "Bearer …xyz"}]);
    let saved = s.get(&format!("/api/monitors/{id}")).await.data(200);
    assert_eq!(saved["headers"], hint);
    d.js(open).await;
    assert_eq!(
        d.js("return document.querySelector('#f-header-value-0').value")
            .await,
        json!("Bearer …xyz")
    );
    // Saving the form with the hint untouched keeps the value (sealed in
    // the database; the check sends it).
    press(&d, "Save monitor").await;
    let stored = s.db.texts("SELECT config FROM monitors").await;
    assert!(
        !stored[0].contains("probe-0123456789") && stored[0].contains("sealed:v1:"),
        "{stored:?}"
    );
    let before = rx.got().len();
    press(&d, "Test now").await;
    let sent = rx.wait_for(before + 1, crate::browser::STEP_WITHIN).await;
    assert_eq!(
        sent[before].header("authorization"),
        "Bearer probe-0123456789-xyz"
    );
    d.js(open).await;
    no_axe_violations(&d, "monitor options").await;
    d.js("document.querySelector('#f-headers').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "monitor-options")).await;
    fill(&d, "Name 1", "").await;
    fill(&d, "Value 1", "").await;
    press(&d, "Save monitor").await;
    let saved = s.get(&format!("/api/monitors/{id}")).await.data(200);
    assert_eq!(saved["headers"], json!([]));

    // The list and the component's own screen point at it.
    press(&d, "All monitors").await;
    assert!(text(&d, "ul.rows").await.contains("API"));
    no_axe_violations(&d, "monitors list").await;
    d.screenshot(&shot(b, "monitors")).await;
    d.c()
        .goto(&format!("{}/admin/components/{api}", s.base))
        .await
        .unwrap();
    assert!(text(&d, "#h-monitor + p").await.contains("Its monitor is"));
    d.quit().await;
}

/// The slug is filled in from the name as one types, until typed by hand;
/// an empty key list is a sentence, not an empty box.
async fn a_new_page_slug_follows_its_name_in_chromium(b: Backend) {
    if !browser_available("a_new_page_slug_follows_its_name_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "owner@example.com", "owner").await;
    d.c().goto(&format!("{}/admin/keys", s.base)).await.unwrap();
    assert_eq!(
        d.js("return document.querySelector('section[aria-labelledby=h-keys] ul') === null")
            .await,
        true,
        "no empty list under \"No keys yet.\""
    );
    press(&d, "Status pages").await;
    fill(&d, "Name", "Café Status 24/7").await;
    assert_eq!(value(&d, "Slug").await, "cafe-status-24-7");
    fill(&d, "Slug", "ours").await;
    fill(&d, "Name", "Something else").await;
    assert_eq!(
        value(&d, "Slug").await,
        "ours",
        "a slug typed by hand stays"
    );
    press(&d, "Create page").await;
    assert!(path(&d).await.starts_with("/admin/pages/"));
    assert_eq!(s.db.texts("SELECT slug FROM status_pages").await, ["ours"]);
    // Renaming a page never moves its address.
    fill(&d, "Name", "Renamed").await;
    assert_eq!(value(&d, "Slug").await, "ours");
    d.quit().await;
}
