//! Every screen offers only what the person's role may do (one place
//! decides: `Frame::may`), and a refusal that still happens says who may,
//! in words: a viewer reads the pages, incidents and maintenance with no
//! control on them; an editor changes them but sees no audit events, keys
//! or settings.

use crate::admin_ui::{PW, fill, no_axe_violations, path, press, shot};
use crate::browser::{Driver, browser_available};
use crate::on_both_backends;
use crate::support::{Backend, Browser, Server, at_offset_ms};
use reqwest::Method;
use serde_json::json;

on_both_backends!(browser: screens_show_each_role_only_what_it_may_do, a_password_someone_else_chose_is_changed_at_first_sign_in);

/// The forms of the screen in Chromium that change something: all but
/// signing out, choosing the page to work on, and searches (GET).
async fn write_forms(d: &Driver, screen: &str) -> Vec<String> {
    let found = d
        .js("return [...document.querySelectorAll('form')]
               .filter(f => f.method === 'post')
               .map(f => f.getAttribute('action'))
               .filter(a => a !== '/api/auth/logout' && a !== '/api/statuspages/current');")
        .await;
    serde_json::from_value(found).unwrap_or_else(|e| panic!("{screen}: {e}"))
}

async fn visit(d: &Driver, s: &Server, screen: &str) {
    d.c().goto(&format!("{}{screen}", s.base)).await.unwrap();
    assert_eq!(path(d).await, screen, "{screen} opens");
}

async fn text(d: &Driver) -> String {
    d.js("return document.body.innerText")
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
}

async fn screens_show_each_role_only_what_it_may_do(b: Backend) {
    if !browser_available("screens_show_each_role_only_what_it_may_do") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("vi@example.com", "viewer", PW);
    s.db.user_with("ed@example.com", "editor", PW);
    let p = s.page("acme").await;
    let c = s.component(p, "API").await;
    s.group(p, "Core").await;
    let inc = s.incident(p, "Slow answers").await["id"].as_i64().unwrap();
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Database upgrade", "statusPageId": p, "componentIds": [c],
               "scheduledStartTime": at_offset_ms(3_600_000), "scheduledEndTime": at_offset_ms(7_200_000)}),
    )
    .await
    .data(201);
    // Some activity an editor must not read on the dashboard.
    s.post(
        "/api/v1/statuspages",
        json!({"name": "Other", "slug": "other"}),
    )
    .await
    .data(201);

    let screens = [
        "/admin".to_string(),
        "/admin/pages".to_string(),
        format!("/admin/pages/{p}"),
        "/admin/incidents".to_string(),
        format!("/admin/incidents/{inc}"),
        "/admin/maintenance".to_string(),
        "/admin/monitors".to_string(),
        format!("/admin/components/{c}"),
    ];

    // A viewer: every screen it opens, and not one control.
    let d = crate::admin_ui::browser_of(&s, "vi@example.com").await;
    for screen in &screens {
        visit(&d, &s, screen).await;
        assert_eq!(
            write_forms(&d, screen).await,
            Vec::<String>::new(),
            "a viewer is offered no change on {screen}"
        );
        let buttons = d
            .js("return [...document.querySelectorAll('button, a.button')].map(b => b.innerText.trim())
                   .filter(t => t !== 'Sign out' && !t.startsWith('Work on') && t !== 'View public page'
                                && !t.startsWith('Back to') && t !== 'Search');")
            .await;
        assert_eq!(buttons, json!([]), "a viewer is offered these on {screen}");
    }
    visit(&d, &s, &format!("/admin/pages/{p}")).await;
    let seen = text(&d).await;
    assert!(
        seen.contains("API") && seen.contains("Operational"),
        "{seen}"
    );
    no_axe_violations(&d, "page screen as a viewer").await;
    d.screenshot(&shot(b, "roles-viewer-page")).await;
    let nav = d
        .js("return document.querySelector('nav[aria-label=Admin]').innerText")
        .await;
    let nav = nav.as_str().unwrap();
    for hidden in ["API keys", "Audit log", "Settings", "Comments"] {
        assert!(
            !nav.contains(hidden),
            "a viewer's menu lists {hidden}: {nav}"
        );
    }
    // A screen of another role answers in words, not with a permission's name.
    d.c()
        .goto(&format!("{}/admin/incidents/new", s.base))
        .await
        .unwrap();
    let refused = text(&d).await;
    assert!(
        refused.contains("Only editors and above can report incidents and plan maintenance."),
        "{refused}"
    );
    d.quit().await;

    // An editor: changes pages and incidents, but reads no audit events and
    // sees no keys or settings.
    let d = crate::admin_ui::browser_of(&s, "ed@example.com").await;
    let seen = text(&d).await;
    assert!(seen.contains("Report an incident"), "{seen}");
    assert!(!seen.contains("Recent activity"), "{seen}");
    for action in ["statuspage.create", "api_key.create", "user.create"] {
        assert!(
            !seen.contains(action),
            "an editor's dashboard shows {action}"
        );
    }
    d.screenshot(&shot(b, "roles-editor-dashboard")).await;
    visit(&d, &s, &format!("/admin/pages/{p}")).await;
    assert!(!write_forms(&d, "page screen").await.is_empty());
    visit(&d, &s, &format!("/admin/incidents/{inc}")).await;
    assert!(
        write_forms(&d, "incident")
            .await
            .contains(&format!("/api/incidents/{inc}/updates")),
        "an editor posts updates"
    );
    let nav = d
        .js("return document.querySelector('nav[aria-label=Admin]').innerText")
        .await;
    let nav = nav.as_str().unwrap();
    for hidden in ["API keys", "Audit log", "Settings", "Users"] {
        assert!(
            !nav.contains(hidden),
            "an editor's menu lists {hidden}: {nav}"
        );
    }
    d.c().goto(&format!("{}/admin/keys", s.base)).await.unwrap();
    let refused = text(&d).await;
    assert!(
        refused.contains("Only admins and owners can manage API keys."),
        "{refused}"
    );
    d.quit().await;

    // A request sent anyway is refused in the same words, and changes nothing.
    let ed = Browser::login(&s, "ed@example.com", PW)
        .await
        .expect("the editor signs in");
    let (status, problem, _) = ed
        .send(
            Method::POST,
            "/api/notifications",
            Some(json!({"name": "Ops", "kind": "webhook", "target": "https://example.com/x"})),
        )
        .await;
    assert_eq!(status, 403, "{problem}");
    assert_eq!(
        problem["detail"],
        "Only admins and owners can change settings, notification channels and subscribers."
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM notification_channels")
            .await,
        [0]
    );
}

async fn a_password_someone_else_chose_is_changed_at_first_sign_in(b: Backend) {
    if !browser_available("a_password_someone_else_chose_is_changed_at_first_sign_in") {
        return;
    }
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PW);
    let admin = Browser::login(&s, "ad@example.com", PW)
        .await
        .expect("the admin signs in");
    let given = "a password the admin chose";
    let (status, made, _) = admin
        .send(
            Method::POST,
            "/api/admin/users",
            Some(json!({"email": "nora@example.com", "name": "Nora", "role": "editor", "password": given})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["data"]["mustChangePassword"], true);
    // The application routes too wait for the change; only it, who one is
    // and signing out answer.
    let nora = Browser::login(&s, "nora@example.com", given)
        .await
        .expect("the given password signs in");
    let (status, refused, _) = nora.send(Method::GET, "/api/incidents", None).await;
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap()
            .contains("choose your own password first"),
        "{refused}"
    );
    let (status, _, _) = nora
        .send(
            Method::POST,
            "/api/statuspages",
            Some(json!({"name": "Nora's", "slug": "noras"})),
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );
    let (status, me, _) = nora.send(Method::GET, "/api/auth/me", None).await;
    assert_eq!(
        (status, &me["data"]["mustChangePassword"]),
        (200, &json!(true))
    );

    let d = Driver::start(&[]).await;
    // The sign-in card sits in the middle of a wide screen.
    d.c().set_window_size(1600, 1000).await.unwrap();
    d.c()
        .goto(&format!("{}/admin/login", s.base))
        .await
        .unwrap();
    let off = d
        .js(
            "const r = document.querySelector('main .card').getBoundingClientRect();
             return Math.abs(r.left + r.width / 2 - document.documentElement.clientWidth / 2);",
        )
        .await
        .as_f64()
        .unwrap();
    assert!(off < 2.0, "the sign-in card is {off} px off the middle");
    d.c().set_window_size(1280, 1000).await.unwrap();
    fill(&d, "Email", "nora@example.com").await;
    fill(&d, "Password", given).await;
    press(&d, "Sign in").await;
    assert_eq!(
        path(&d).await,
        "/admin/account",
        "sent to choose a password"
    );
    let seen = text(&d).await;
    assert!(seen.contains("Choose your own password"), "{seen}");
    no_axe_violations(&d, "account, password to change").await;
    d.screenshot(&shot(b, "account-given-password")).await;
    // No other screen opens until it is changed.
    for screen in ["/admin", "/admin/incidents", "/admin/pages"] {
        d.c().goto(&format!("{}{screen}", s.base)).await.unwrap();
        assert_eq!(path(&d).await, "/admin/account", "{screen} waits");
    }
    // A wrong "given" password is refused beside the field; nothing changes.
    fill(&d, "Password you were given", "not what was given").await;
    fill(&d, "New password", "my very own passphrase").await;
    press(&d, "Change password").await;
    assert_eq!(path(&d).await, "/admin/account");
    assert!(text(&d).await.contains("is wrong"));
    fill(&d, "Password you were given", given).await;
    fill(&d, "New password", "my very own passphrase").await;
    press(&d, "Change password").await;
    assert_eq!(path(&d).await, "/admin", "on to the dashboard");
    assert!(text(&d).await.contains("Password changed."));
    d.c()
        .goto(&format!("{}/admin/incidents", s.base))
        .await
        .unwrap();
    assert_eq!(path(&d).await, "/admin/incidents", "every screen opens now");
    d.quit().await;
    let nora = Browser::login(&s, "nora@example.com", "my very own passphrase")
        .await
        .expect("the new password signs in");
    let (_, me, _) = nora.send(Method::GET, "/api/auth/me", None).await;
    assert_eq!(me["data"]["mustChangePassword"], false, "{me}");
    let (status, _, _) = nora.send(Method::GET, "/api/incidents", None).await;
    assert_eq!(status, 200, "every route answers now");
    // The change is in the audit log, once.
    let id = made["data"]["id"].as_i64().unwrap();
    let changed = s
        .db
        .integers(&format!(
            "SELECT COUNT(*) FROM audit_events WHERE action = 'user.change_password' AND target_id = {id}"
        ))
        .await;
    assert_eq!(changed, [1]);
}
