//! One set of rules for every way in: the same bad values, sent through
//! the API, the interface's forms (the form bridge), the export importer, a
//! foreign importer (Statuspage's files) and `upstate apply`, are refused
//! with the same words, naming the field or the place, and nothing is
//! stored or changed. (The alert receivers, which cannot refuse a sender,
//! fold a multi-line summary into the one line the API takes:
//! `integrations::a_deleted_incident_ends_its_alert_group`.)

use crate::on_both_backends;
use crate::support::{Backend, Browser, Server, root, set_cookie};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(the_same_bad_values_are_refused_at_every_door);

/// A page's field as the API names it, the column it fills, a value the
/// API refuses, and words of the refusal.
const PAGE_FIELDS: [(&str, &str, &str, &str); 4] = [
    (
        "slug",
        "slug",
        "../../admin",
        "lowercase letters, digits or hyphens",
    ),
    (
        "timeZone",
        "time_zone",
        "Mars/Olympus_Mons",
        "IANA time zone",
    ),
    // Known to one of the two zone databases only: a page in it could not
    // expand its recurring windows.
    ("timeZone", "time_zone", "Factory", "IANA time zone"),
    (
        "accentColor",
        "accent_color",
        "red;} body{display:none",
        "hex colour",
    ),
];

/// An incident title of two lines, and the words that refuse it.
const TWO_LINES: &str = "Database down\nsince 10:02";
const ONE_LINE: &str = "control characters";

/// What the tables hold, to show a refusal changed nothing.
async fn everything(s: &Server) -> String {
    let mut all = String::new();
    for sql in [
        "SELECT id || ' ' || slug || ' ' || time_zone || ' ' || accent_color FROM status_pages ORDER BY id",
        "SELECT id || ' ' || title FROM incidents ORDER BY id",
        "SELECT CAST(COUNT(*) AS TEXT) FROM components",
        "SELECT CAST(COUNT(*) AS TEXT) FROM incident_updates",
    ] {
        all.push_str(&s.db.texts(sql).await.join("|"));
        all.push('\n');
    }
    all
}

/// A form as the interface posts it (urlencoded, for HTML): where it
/// leads back to, and what that screen then says.
async fn form(me: &Browser, path: &str, back: &str, fields: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("_back", back),
        ("_next", back),
        ("_csrf", me.csrf.as_str()),
    ];
    pairs.extend_from_slice(fields);
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(format!("{}{path}", me.base))
        .header("cookie", &me.cookie)
        .header("accept", "text/html")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&pairs)
                .finish(),
        )
        .send()
        .await
        .expect("form post");
    assert_eq!(r.status(), 303, "{path}: the form is sent back");
    assert_eq!(r.headers()["location"], back, "{path}");
    let flash = set_cookie(r.headers(), "upstate_flash")
        .and_then(|c| c.split(';').next().map(str::to_string))
        .expect("the refusal travels in a flash cookie");
    reqwest::Client::new()
        .get(format!("{}{back}", me.base))
        .header("cookie", format!("{}; {flash}", me.cookie))
        .send()
        .await
        .expect("screen")
        .text()
        .await
        .expect("screen body")
}

/// The message of the error on `field` in a problem.
fn said_of(problem: &Value, field: &str) -> String {
    problem["errors"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["field"] == field))
        .and_then(|e| e["message"].as_str())
        .unwrap_or_else(|| panic!("no error on {field}: {problem}"))
        .to_string()
}

async fn the_same_bad_values_are_refused_at_every_door(b: Backend) {
    // An install with one page to change, and a document of another
    // install's page to import beside it.
    let source = Server::start(b).await;
    source.db.user("owner@example.com", "owner");
    let theirs = source.page("theirs").await;
    source.component(theirs, "API").await;
    source.incident(theirs, "Slow logins").await;
    let mut them = Browser::signed_in(&source, "owner@example.com").await;
    them.step_up().await;
    let (status, doc, _) = them.send(Method::GET, "/api/admin/export", None).await;
    assert_eq!(status, 200, "{doc}");

    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let page = s.page("acme").await;
    s.component(page, "API").await;
    let mut me = Browser::signed_in(&s, "owner@example.com").await;
    me.step_up().await;
    let before = everything(&s).await;

    for (field, column, bad, says) in PAGE_FIELDS {
        // The API, new and changed.
        let mut new = json!({"name": "Other", "slug": "other"});
        new[field] = json!(bad);
        let made = s.post("/api/v1/statuspages", new).await;
        assert!(said_of(made.problem(422), field).contains(says), "{field}");
        let changed = s
            .patch(
                &format!("/api/v1/statuspages/{page}"),
                json!({ field: bad }),
            )
            .await;
        assert!(
            said_of(changed.problem(422), field).contains(says),
            "{field}"
        );

        // The page's settings form: the same words beside the field.
        let back = format!("/admin/pages/{page}");
        let screen = form(
            &me,
            &format!("/api/statuspages/{page}"),
            &back,
            &[("_method", "PATCH"), (field, bad)],
        )
        .await;
        assert!(screen.contains(says), "{field}: the form says why");

        // The export importer, beside the install's page: refused at the
        // place, with the same words.
        let mut doc = doc.clone();
        doc["tables"]["status_pages"][0][column] = json!(bad);
        let (status, problem, _) = me
            .send(Method::POST, "/api/admin/export?mode=add_pages", Some(doc))
            .await;
        assert_eq!(status, 422, "{problem}");
        let place = format!("/tables/status_pages/0/{column}");
        assert!(said_of(&problem, &place).contains(says), "{problem}");
    }

    // `upstate apply`: a setup file's page, refused with its field before
    // anything is written.
    for (key, bad, says) in [
        (
            "slug",
            "../../admin",
            "lowercase letters, digits or hyphens",
        ),
        ("timeZone", "Mars/Olympus_Mons", "IANA time zone"),
    ] {
        let (slug, zone) = if key == "slug" {
            (bad, "UTC")
        } else {
            ("other", bad)
        };
        let file = s.db.dir.path().join("upstate.yaml");
        std::fs::write(
            &file,
            format!("pages:\n  - slug: {slug:?}\n    name: Other\n    timeZone: {zone:?}\n"),
        )
        .expect("setup file");
        let (ok, _, err) = s.db.cli(&["apply", "-f", file.to_str().expect("path")]);
        assert!(!ok, "{key}");
        assert!(err.contains(key) && err.contains(says), "{key}: {err}");
    }

    // An incident's title of two lines: the API, the new-incident form,
    // the export importer and Statuspage's files refuse it alike.
    let opened = s
        .post(
            "/api/v1/incidents",
            json!({"title": TWO_LINES, "statusPageId": page, "message": "Looking"}),
        )
        .await;
    assert!(said_of(opened.problem(422), "title").contains(ONE_LINE));
    let page_id = page.to_string();
    let screen = form(
        &me,
        "/api/incidents",
        "/admin/incidents/new",
        &[
            ("statusPageId:int", page_id.as_str()),
            ("title", TWO_LINES),
            ("status", "investigating"),
            ("impact", "minor"),
            ("message", "Looking"),
        ],
    )
    .await;
    assert!(screen.contains(ONE_LINE), "the form says why");
    let mut doc = doc.clone();
    doc["tables"]["incidents"][0]["title"] = json!(TWO_LINES);
    let (status, problem, _) = me
        .send(Method::POST, "/api/admin/export?mode=add_pages", Some(doc))
        .await;
    assert_eq!(status, 422, "{problem}");
    assert!(said_of(&problem, "/tables/incidents/0/title").contains(ONE_LINE));

    let files = s.db.dir.path().join("statuspage");
    std::fs::create_dir_all(&files).expect("folder");
    for name in [
        "summary.json",
        "incidents.json",
        "scheduled-maintenances.json",
    ] {
        std::fs::copy(
            root().join("tests/fixtures/statuspage").join(name),
            files.join(name),
        )
        .expect("fixture");
    }
    let incidents = files.join("incidents.json");
    let mut listed: Value =
        serde_json::from_str(&std::fs::read_to_string(&incidents).expect("incidents"))
            .expect("json");
    listed["incidents"][0]["name"] = json!(TWO_LINES);
    std::fs::write(&incidents, listed.to_string()).expect("written");
    let (ok, _, err) = s.db.cli(&[
        "import",
        "--from",
        "statuspage",
        files.to_str().expect("path"),
    ]);
    assert!(!ok, "refused");
    assert!(
        err.contains("/tables/incidents/") && err.contains("/title") && err.contains(ONE_LINE),
        "{err}"
    );

    assert_eq!(everything(&s).await, before, "nothing stored or changed");
}
