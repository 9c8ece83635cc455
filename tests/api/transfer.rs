//! Moving in and out (docs/operations.md, "Export and import"): `GET
//! /api/admin/export` writes the whole install as one document that
//! `docs/export.schema.json` describes; `POST /api/admin/export` and
//! `upstate import` read it into another install, all or nothing; a
//! round trip gives the same document back.

use crate::browser::STEP_WITHIN;
use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server, TestDb, consumer, root};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    an_export_round_trips_through_a_fresh_install,
    a_bad_document_is_refused_by_path_and_nothing_changes,
    pages_are_added_beside_existing_ones_under_new_ids,
    secrets_and_passwords_stay_out_unless_asked,
    a_backup_taken_while_serving_restores_every_table
);
on_both_backends!(browser(postgres): the_settings_screen_exports_and_imports);

const HEADER: &str = "Bearer monitor-credential-0123456789-xyz";

/// A `POST` of the signed-in owner that must create.
async fn made(me: &Browser, path: &str, body: Value) -> Value {
    let (status, body, _) = me.send(Method::POST, path, Some(body)).await;
    assert_eq!(status, 201, "{path}: {body}");
    body["data"].clone()
}

/// An install with something in every kind of record; returns the page id.
async fn furnished(s: &Server, slug: &str) -> i64 {
    let me = Browser::signed_in(s, "owner@example.com").await;
    let page = s.page(slug).await;
    let group = s.group(page, "Backend").await;
    let api = s.component(page, "API").await;
    s.patch(
        &format!("/api/v1/components/{api}"),
        json!({"groupId": group}),
    )
    .await
    .data(200);
    let web = s.component(page, "Web").await;
    s.patch(
        &format!("/api/v1/components/{web}"),
        json!({"status": "partial_outage"}),
    )
    .await
    .data(200);
    let incident = s.incident(page, "Slow checkout").await;
    let id = incident["id"].as_i64().expect("incident id");
    s.patch(
        &format!("/api/v1/incidents/{id}"),
        json!({"status": "identified", "message": "A bad deploy", "componentIds": [api],
               "componentStatus": "degraded_performance"}),
    )
    .await
    .data(200);
    s.send(
        Method::PUT,
        &format!("/api/incidents/{id}/rca"),
        Some(&s.key),
        Some(json!({"body": "# What happened\nA deploy.", "published": true})),
    )
    .await
    .data(200);
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Database upgrade", "statusPageId": page, "componentIds": [web],
               "scheduledStartTime": "2099-01-01T00:00:00.000Z", "scheduledEndTime": "2099-01-01T02:00:00.000Z"}),
    )
    .await
    .data(201);
    made(
        &me,
        "/api/maintenance/recurring",
        json!({"statusPageId": page, "title": "Patching", "rrule": "FREQ=WEEKLY;BYDAY=SU",
               "firstStart": "2099-01-04T02:00", "durationMinutes": 60, "componentIds": [api]}),
    )
    .await;
    made(
        &me,
        "/api/quicklinks",
        json!({"statusPageId": page, "label": "Docs", "url": "https://docs.example.com"}),
    )
    .await;
    made(
        &me,
        "/api/subscribers",
        json!({"statusPageId": page, "kind": "webhook", "target": format!("https://hooks.example.com/{slug}")}),
    )
    .await;
    s.post(
        "/api/monitors",
        json!({"componentId": api, "kind": "http", "target": "http://127.0.0.1:9/health",
               "enabled": false, "headers": [{"name": "Authorization", "value": HEADER}]}),
    )
    .await
    .data(201);
    page
}

/// The owner, signed in with a fresh step-up.
async fn owner(s: &Server) -> Browser {
    let mut me = Browser::signed_in(s, "owner@example.com").await;
    me.step_up().await;
    me
}

/// Install-wide records besides a page's.
async fn install_wide(s: &Server) -> String {
    let me = Browser::signed_in(s, "owner@example.com").await;
    made(
        &me,
        "/api/incident-templates",
        json!({"name": "Outage", "title": "Outage", "message": "Looking"}),
    )
    .await;
    let channel = made(
        &me,
        "/api/notifications",
        json!({"name": "On-call", "kind": "webhook", "target": "https://hooks.example.com/on-call"}),
    )
    .await;
    channel["secret"]
        .as_str()
        .expect("signing secret")
        .to_string()
}

async fn export(me: &Browser, query: &str) -> Value {
    let (status, doc, headers) = me
        .send(Method::GET, &format!("/api/admin/export{query}"), None)
        .await;
    assert_eq!(status, 200, "{doc}");
    let disposition = headers
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        disposition.starts_with("attachment; filename=\"upstate-export-"),
        "{disposition}"
    );
    doc
}

/// Where two documents first differ, with both values.
fn difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (l, r) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if let Some(d) = difference(l, r, &format!("{at}/{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (l, r))| difference(l, r, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} against {b}")),
    }
}

/// Rows of every table an import writes, to show a refusal wrote none.
async fn rows(s: &Server) -> Vec<i64> {
    let mut n = vec![];
    for table in [
        "status_pages",
        "components",
        "component_groups",
        "component_status_history",
        "incidents",
        "incident_updates",
        "maintenance",
        "recurring_maintenance",
        "quick_links",
        "subscribers",
        "monitors",
        "postmortems",
        "users",
        "api_keys",
        "settings",
        "notification_channels",
        "incident_templates",
    ] {
        n.extend(
            s.db.integers(&format!("SELECT COUNT(*) FROM {table}"))
                .await,
        );
    }
    n
}

fn without_time(mut doc: Value) -> Value {
    doc.as_object_mut().expect("object").remove("exportedAt");
    doc
}

async fn an_export_round_trips_through_a_fresh_install(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let page = furnished(&s, "acme").await;
    let signing = install_wide(&s).await;
    let me = owner(&s).await;

    // Only an admin with a fresh step-up takes a copy.
    let plain = Browser::signed_in(&s, "owner@example.com").await;
    let (status, refused, _) = plain.send(Method::GET, "/api/admin/export", None).await;
    assert_eq!(status, 403, "{refused}");
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let mut ed = Browser::signed_in(&s, "ed@example.com").await;
    ed.step_up().await;
    let (status, _, _) = ed.send(Method::GET, "/api/admin/export", None).await;
    assert_eq!(status, 403, "an editor");

    let first = export(&me, "?secrets=true&passwords=true").await;
    assert_eq!(first["format"], "upstate-export");
    assert_eq!(first["withheld"], json!([]));
    let tables = &first["tables"];
    for (table, at_least) in [
        ("status_pages", 1),
        ("component_groups", 1),
        ("components", 2),
        ("component_status_history", 3),
        ("incidents", 1),
        ("incident_updates", 2),
        ("incident_components", 1),
        ("postmortems", 1),
        ("maintenance", 1),
        ("recurring_maintenance", 1),
        ("quick_links", 1),
        ("subscribers", 1),
        ("monitors", 1),
        ("incident_templates", 1),
        ("notification_channels", 1),
        ("users", 2),
    ] {
        let n = tables[table].as_array().map_or(0, Vec::len);
        assert!(n >= at_least, "{table}: {n} rows in {tables}");
    }
    let text = first.to_string();
    assert!(text.contains(&signing), "the channel's secret, opened");
    assert!(text.contains(HEADER), "the monitor's header, opened");
    assert!(!text.contains("sealed:v1:"), "nothing sealed leaves");
    let audited = s
        .get("/api/audit-events?action=install.export")
        .await
        .data(200);
    assert_eq!(audited.as_array().map(Vec::len), Some(1), "{audited}");

    // The schema in the repository is the one the install describes, and
    // the reference validator accepts the document against it.
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/export.schema.json")).expect("schema file"),
    )
    .expect("schema JSON");
    let (ok, made, err) = s.db.cli(&["export", "--schema"]);
    assert!(ok, "{err}");
    let made: Value = serde_json::from_str(&made).expect("schema");
    assert_eq!(
        difference(&made, &schema, ""),
        None,
        "docs/export.schema.json is stale: run `upstate export --schema --out docs/export.schema.json`"
    );
    let input = json!({"schema": schema, "document": first}).to_string();
    if let Some(v) = consumer("export schema", "validate_json_schema.py", input.as_bytes()) {
        assert_eq!(v["errors"], json!([]), "the export fits its schema");
    }

    // Into a fresh install with the CLI; out again: the same document.
    let db = TestDb::new(b).await;
    let file = db.dir.path().join("export.json");
    std::fs::write(&file, first.to_string()).expect("written");
    let (ok, out, err) = db.cli(&["import", file.to_str().expect("path")]);
    assert!(ok, "{err}");
    assert!(out.contains("components: 2"), "{out}");
    let (ok, again, err) = db.cli(&["export", "--secrets", "--passwords"]);
    assert!(ok, "{err}");
    let again: Value = serde_json::from_str(&again).expect("document");
    assert_eq!(
        difference(&without_time(again), &without_time(first.clone()), ""),
        None
    );

    // The moved install serves the same pages, and its people sign in.
    let fresh = Server::process_on(db, &[]);
    assert_eq!(fresh.snapshot().await, s.snapshot().await);
    let detail = fresh
        .get(&format!("/api/v1/statuspages/{page}"))
        .await
        .data(200);
    assert_eq!(detail["slug"], "acme");
    let moved = Browser::login(&fresh, "owner@example.com", PASSWORD).await;
    assert!(moved.is_ok(), "the owner's password came along");
    let imported = fresh
        .get("/api/audit-events?action=install.import")
        .await
        .data(200);
    assert_eq!(imported.as_array().map(Vec::len), Some(1), "{imported}");
}

/// `POST /api/admin/export` as the owner; answers (status, body).
async fn import(me: &Browser, query: &str, doc: Value) -> (u16, Value) {
    let (status, body, _) = me
        .send(
            Method::POST,
            &format!("/api/admin/export{query}"),
            Some(doc),
        )
        .await;
    (status, body)
}

async fn a_bad_document_is_refused_by_path_and_nothing_changes(b: Backend) {
    let source = Server::start(b).await;
    source.db.user("owner@example.com", "owner");
    furnished(&source, "acme").await;
    let good = export(&owner(&source).await, "").await;

    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let me = owner(&s).await;
    let before = rows(&s).await;
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut d = good.clone();
        f(&mut d);
        d
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            edit(&|d| d["format"] = json!("kuma-backup")),
            "/format",
            "not an Upstate export",
        ),
        (edit(&|d| d["version"] = json!(9)), "/version", "must be 1"),
        (
            edit(&|d| d["schema"] = json!(9999)),
            "/schema",
            "newer Upstate",
        ),
        (
            edit(&|d| d["tables"]["widgets"] = json!([])),
            "/tables/widgets",
            "not a table",
        ),
        (
            edit(&|d| d["tables"]["components"][1]["status"] = json!("on_fire")),
            "/tables/components/1/status",
            "must be one of",
        ),
        (
            edit(&|d| d["tables"]["components"][0]["position"] = json!("first")),
            "/tables/components/0/position",
            "integer",
        ),
        (
            edit(&|d| d["tables"]["components"][0]["colour"] = json!("red")),
            "/tables/components/0/colour",
            "no column colour",
        ),
        (
            edit(&|d| {
                d["tables"]["status_pages"][0]
                    .as_object_mut()
                    .expect("row")
                    .remove("slug");
            }),
            "/tables/status_pages/0/slug",
            "missing",
        ),
        (
            edit(&|d| d["tables"]["status_pages"][0]["name"] = Value::Null),
            "/tables/status_pages/0/name",
            "must not be null",
        ),
        (
            edit(&|d| d["tables"]["incidents"][0]["page_id"] = json!(404)),
            "/tables/incidents/0/page_id",
            "refers to status_pages 404",
        ),
        // The rules the API applies to the fields that fill these columns.
        (
            edit(&|d| d["tables"]["status_pages"][0]["slug"] = json!("../../admin")),
            "/tables/status_pages/0/slug",
            "lowercase letters, digits or hyphens",
        ),
        (
            edit(&|d| d["tables"]["status_pages"][0]["slug"] = json!("a".repeat(65))),
            "/tables/status_pages/0/slug",
            "1 to 64",
        ),
        (
            edit(&|d| d["tables"]["status_pages"][0]["time_zone"] = json!("Mars/Olympus_Mons")),
            "/tables/status_pages/0/time_zone",
            "IANA time zone",
        ),
        (
            edit(&|d| {
                d["tables"]["status_pages"][0]["accent_color"] = json!("red;} body{display:none")
            }),
            "/tables/status_pages/0/accent_color",
            "hex colour",
        ),
        (
            edit(&|d| d["tables"]["status_pages"][0]["uptime_days"] = json!(4000)),
            "/tables/status_pages/0/uptime_days",
            "between",
        ),
        (
            edit(&|d| d["tables"]["incidents"][0]["title"] = json!("Two\nlines")),
            "/tables/incidents/0/title",
            "control characters",
        ),
        (
            edit(&|d| d["tables"]["components"][1]["name"] = json!("A NUL\u{0}in it")),
            "/tables/components/1/name",
            "NUL character",
        ),
        (
            edit(&|d| d["tables"]["quick_links"][0]["url"] = json!("javascript:alert(1)")),
            "/tables/quick_links/0/url",
            "http",
        ),
        // Ids repeated within a table: refused, never renumbered.
        (
            edit(&|d| {
                let mut copy = d["tables"]["status_pages"][0].clone();
                copy["slug"] = json!("other");
                d["tables"]["status_pages"]
                    .as_array_mut()
                    .expect("pages")
                    .push(copy);
            }),
            "/tables/status_pages/1/id",
            "repeats the id of /tables/status_pages/0",
        ),
        (
            edit(&|d| {
                let first = d["tables"]["components"][0]["id"].clone();
                d["tables"]["components"][1]["id"] = first;
            }),
            "/tables/components/1/id",
            "repeats the id",
        ),
        // A component on one page in a group of another.
        (
            edit(&|d| {
                let mut copy = d["tables"]["status_pages"][0].clone();
                copy["slug"] = json!("other");
                copy["id"] = json!(77);
                d["tables"]["status_pages"]
                    .as_array_mut()
                    .expect("pages")
                    .push(copy);
                for c in d["tables"]["components"]
                    .as_array_mut()
                    .expect("components")
                {
                    if !c["group_id"].is_null() {
                        c["page_id"] = json!(77);
                    }
                }
            }),
            "/group_id",
            "belongs to another page",
        ),
    ];
    let (status, problem) = import(&me, "", json!([1, 2])).await;
    assert_eq!(status, 422, "{problem}");
    for (doc, path, says) in cases {
        let (status, problem) = import(&me, "", doc).await;
        assert_eq!(status, 422, "{path}: {problem}");
        let errors = problem["errors"].as_array().expect("errors");
        let field = errors[0]["field"].as_str().unwrap_or_default();
        assert!(
            field == path || (path.starts_with("/group_id") && field.ends_with(path)),
            "{path}: {problem}"
        );
        let message = errors[0]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{path}: {message}");
    }
    // Two pages with one slug: the database's own rule, by row.
    let twice = edit(&|d| {
        let mut copy = d["tables"]["status_pages"][0].clone();
        copy["id"] = json!(77);
        d["tables"]["status_pages"]
            .as_array_mut()
            .expect("pages")
            .push(copy);
    });
    let (status, problem) = import(&me, "", twice).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["errors"][0]["field"], "/tables/status_pages/1/slug",
        "{problem}"
    );
    assert!(
        problem["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("repeats the slug of /tables/status_pages/0")),
        "{problem}"
    );
    // The same bad slug through the front door: the same rule refuses it.
    let front = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Admin", "slug": "../../admin"}),
        )
        .await;
    assert!(
        front
            .problem(422)
            .to_string()
            .contains("lowercase letters, digits or hyphens"),
        "{}",
        front.body
    );
    let (status, problem) = import(&me, "?mode=everything", good.clone()).await;
    assert_eq!(status, 422, "{problem}");
    // Without a step-up, nothing is read.
    let plain = Browser::signed_in(&s, "owner@example.com").await;
    let (status, _, _) = plain
        .send(Method::POST, "/api/admin/export", Some(good.clone()))
        .await;
    assert_eq!(status, 403);
    assert_eq!(rows(&s).await, before, "nothing was stored");
    let audited = s
        .get("/api/audit-events?action=install.import")
        .await
        .data(200);
    assert_eq!(audited, json!([]));

    // A CLI import of a foreign file says what was wrong and changes nothing.
    let file = s.db.dir.path().join("kuma.json");
    std::fs::write(&file, r#"{"version": "1.23.0", "monitorList": []}"#).expect("written");
    let (ok, _, err) = s.db.cli(&["import", file.to_str().expect("path")]);
    assert!(!ok);
    assert!(
        err.contains("nothing changed") && err.contains("/monitorList"),
        "{err}"
    );

    // The good document goes in; a second time it meets a full install.
    let (status, done) = import(&me, "", good.clone()).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["rows"]["components"], 2, "{done}");
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM components").await, [2]);
    let (status, problem) = import(&me, "", good).await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM components").await, [2]);
}

async fn pages_are_added_beside_existing_ones_under_new_ids(b: Backend) {
    let source = Server::start(b).await;
    source.db.user("owner@example.com", "owner");
    furnished(&source, "beta").await;
    let doc = export(&owner(&source).await, "").await;

    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let acme = furnished(&s, "acme").await;
    install_wide(&s).await;
    let me = owner(&s).await;
    let (status, done) = import(&me, "?mode=add_pages", doc.clone()).await;
    assert_eq!(status, 200, "{done}");
    let data = &done["data"];
    assert_eq!(data["mode"], "add_pages");
    let new_page = data["ids"]["status_pages"]["1"]
        .as_i64()
        .expect("new page id");
    assert_ne!(new_page, acme);
    assert!(
        data["notes"].to_string().contains("users"),
        "accounts stay out: {data}"
    );
    let pages = s.get("/api/v1/statuspages").await.data(200);
    let slugs: Vec<&str> = pages
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|p| p["slug"].as_str())
        .collect();
    assert_eq!(slugs.len(), 2, "{pages}");
    assert!(slugs.contains(&"acme") && slugs.contains(&"beta"));
    // Everything of beta points at beta's new rows.
    let components = s
        .get(&format!("/api/v1/components?statusPageId={new_page}"))
        .await
        .data(200);
    let names: Vec<&str> = components
        .as_array()
        .expect("components")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{components}");
    let grouped = components
        .as_array()
        .expect("components")
        .iter()
        .find(|c| c["name"] == "API")
        .expect("API");
    let groups = s
        .get(&format!("/api/v1/component-groups?statusPageId={new_page}"))
        .await
        .data(200);
    assert_eq!(grouped["groupId"], groups[0]["id"], "{groups}");
    let html = s.get("/s/beta").await;
    assert_eq!(html.status, 200);
    assert!(
        html.body
            .as_str()
            .unwrap_or_default()
            .contains("Slow checkout")
    );
    // The same pages again collide by slug, and nothing is added.
    let (status, problem) = import(&me, "?mode=add_pages", doc).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [2]
    );

    // A copy of this install's own pages, under other slugs: its
    // subscribers' links are theirs alone, so they get new ones.
    let mut own = export(&me, "").await;
    for p in own["tables"]["status_pages"].as_array_mut().expect("pages") {
        p["slug"] = json!(format!("{}-copy", p["slug"].as_str().unwrap_or("x")));
    }
    let (status, done) = import(&me, "?mode=add_pages", own).await;
    assert_eq!(status, 200, "{done}");
    assert!(
        done["data"]["notes"]
            .to_string()
            .contains("subscribers.token: taken here already"),
        "{done}"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [4]
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(DISTINCT token) FROM subscribers")
            .await,
        s.db.integers("SELECT COUNT(*) FROM subscribers").await,
    );
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM subscribers").await, [4]);
}

async fn secrets_and_passwords_stay_out_unless_asked(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    s.db.user_with("nora@example.com", "admin", PASSWORD);
    let page = furnished(&s, "acme").await;
    s.send(
        Method::PUT,
        &format!("/api/v1/statuspages/{page}/viewer-provider"),
        Some(&s.key),
        Some(json!({"issuer": "https://id.customer.test", "clientId": "status", "clientSecret": "tenant-secret"})),
    )
    .await
    .data(200);
    let signing = install_wide(&s).await;
    let me = owner(&s).await;
    let doc = export(&me, "").await;
    let text = doc.to_string();
    for secret in [signing.as_str(), HEADER, "$argon2", "tenant-secret"] {
        assert!(!text.contains(secret), "{secret} left with the export");
    }
    let withheld: Vec<&str> = doc["withheld"]
        .as_array()
        .expect("withheld")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for column in [
        "users.password_hash",
        "notification_channels.secret",
        "monitors.config",
        "api_keys.secret_hash",
        "viewer_providers.client_secret",
    ] {
        assert!(withheld.contains(&column), "{column} in {withheld:?}");
    }
    let (status, problem, _) = me
        .send(Method::GET, "/api/admin/export?secrets=maybe", None)
        .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "secrets");

    // Imported without them, the people set new passwords; the one who
    // imports keeps theirs.
    let fresh = Server::start(b).await;
    fresh.db.user("owner@example.com", "owner");
    let (status, done) = import(&owner(&fresh).await, "", doc).await;
    assert_eq!(status, 200, "{done}");
    let notes = done["data"]["notes"].to_string();
    assert!(
        notes.contains("users.password_hash was withheld"),
        "{notes}"
    );
    assert!(
        Browser::login(&fresh, "owner@example.com", PASSWORD)
            .await
            .is_ok()
    );
    assert!(
        Browser::login(&fresh, "nora@example.com", PASSWORD)
            .await
            .is_err(),
        "a withheld password opens nothing"
    );
    let stored = fresh
        .db
        .texts("SELECT secret FROM notification_channels WHERE secret IS NOT NULL")
        .await;
    assert!(
        stored.is_empty(),
        "a withheld secret stays empty: {stored:?}"
    );
    // The page's own provider comes without its secret, which is asked
    // again before anything else changes.
    let pages = fresh.get("/api/v1/statuspages").await.data(200);
    let acme = pages
        .as_array()
        .and_then(|p| p.iter().find(|p| p["slug"] == "acme"))
        .and_then(|p| p["id"].as_i64())
        .expect("the imported page");
    let own = format!("/api/v1/statuspages/{acme}/viewer-provider");
    let provider = fresh.get(&own).await.data(200);
    assert_eq!(provider["clientId"], "status");
    assert_eq!(provider["clientSecretSet"], false, "{provider}");
    let again = fresh
        .send(
            Method::PUT,
            &own,
            Some(&fresh.key),
            Some(json!({"issuer": "https://id.customer.test", "clientId": "status"})),
        )
        .await;
    assert_eq!(again.problem(422)["errors"][0]["field"], "clientSecret");
}

async fn the_settings_screen_exports_and_imports(b: Backend) {
    use crate::admin_ui::{PW, field_by_id, shot, signed_in_browser};
    use fantoccini::Locator;
    if !crate::browser::browser_available("the_settings_screen_exports_and_imports") {
        return;
    }
    let source = Server::start(b).await;
    source.db.user("owner@example.com", "owner");
    furnished(&source, "beta").await;

    // The export form works without a script: a plain form post answers
    // the download.
    let me = Browser::signed_in(&source, "owner@example.com").await;
    let form = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("_back", "/admin/settings#moving"),
            ("_next", "/admin/settings#moving"),
            ("_csrf", me.csrf.as_str()),
            ("_method", "GET"),
            ("_form", "export"),
            ("passwords:bool", ""),
            ("passwords:bool", "on"),
            ("_step_up:export", PASSWORD),
        ])
        .finish();
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(format!("{}/api/admin/export", source.base))
        .header("cookie", &me.cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .expect("export");
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-disposition"]
            .to_str()
            .unwrap_or_default()
            .starts_with("attachment")
    );
    let doc: Value = r.json().await.expect("a document");
    assert_eq!(
        doc["withheld"],
        json!(["monitors.config"]),
        "secrets were not asked for"
    );
    assert!(
        !doc["withheld"].to_string().contains("users.password_hash"),
        "asked for passwords"
    );

    let (s, d) = signed_in_browser(b, "admin@example.com", "owner").await;
    d.c()
        .goto(&format!("{}/admin/settings#moving", s.base))
        .await
        .expect("settings");
    d.screenshot(&shot(b, "settings-move")).await;

    // A document with a wrong value: the place is named beside the field.
    let mut bad = doc.clone();
    bad["tables"]["components"][0]["status"] = json!("on_fire");
    let dir = tempfile::tempdir().expect("dir");
    let upload = async |doc: &Value, name: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, doc.to_string()).expect("file");
        field_by_id(&d, "f-document")
            .await
            .send_keys(file.to_str().expect("path"))
            .await
            .expect("file chosen");
        field_by_id(&d, "su-import")
            .await
            .send_keys(PW)
            .await
            .expect("proof");
        d.c()
            .find(Locator::XPath("//button[normalize-space()='Import']"))
            .await
            .expect("button")
            .click()
            .await
            .expect("sent");
    };
    upload(&bad, "bad.json").await;
    let said = d
        .until(
            "return (document.querySelector('#f-document-note.error')?.textContent ?? '') !== ''",
            STEP_WITHIN,
        )
        .await;
    assert!(said.is_some(), "the refusal shows beside the file field");
    let note = d
        .js("return document.querySelector('#f-document-note').textContent")
        .await;
    assert!(
        note.as_str()
            .unwrap_or_default()
            .contains("/tables/components/0/status"),
        "{note}"
    );
    d.screenshot(&shot(b, "settings-import-refused")).await;
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );

    upload(&doc, "good.json").await;
    let done = d
        .until(
            "return (document.querySelector('#import-notes')?.textContent ?? document.body.textContent).includes('Imported')",
            STEP_WITHIN,
        )
        .await;
    assert!(done.is_some(), "the import says it is done");
    d.screenshot(&shot(b, "settings-imported")).await;
    d.js(
        "document.querySelector('form[action=\"/api/admin/import/statuspage\"]').scrollIntoView()",
    )
    .await;
    d.screenshot(&shot(b, "settings-statuspage")).await;
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [1]
    );
    let notes = d
        .js("return document.querySelector('#import-notes')?.textContent ?? ''")
        .await;
    assert!(
        notes.as_str().unwrap_or_default().contains("withheld"),
        "{notes}"
    );
    d.quit().await;
}

/// Every table of `db` as a backup document, its time left out.
fn every_table(db: &TestDb) -> Value {
    let file = db.dir.path().join(format!("tables-{}.json", rand_suffix()));
    let (ok, _, err) = db.cli(&[
        "backup",
        "--format",
        "json",
        "--out",
        file.to_str().expect("path"),
    ]);
    assert!(ok, "{err}");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("backup")).expect("JSON");
    doc.as_object_mut().expect("object").remove("takenAt");
    doc
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The server key of `from`'s data folder, given to `to` (a backup moves
/// with its key).
fn same_key(from: &TestDb, to: &TestDb) {
    let data = to.dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    std::fs::copy(
        from.dir.path().join("data/secret.key"),
        data.join("secret.key"),
    )
    .expect("key copied");
}

async fn a_backup_taken_while_serving_restores_every_table(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    furnished(&s, "acme").await;
    install_wide(&s).await;
    let file = s.db.dir.path().join("backup.bin");
    // Taken while the service serves and writes.
    let writer = {
        let base = s.base.clone();
        let key = s.key.clone();
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            for i in 0..20 {
                let _ = http
                    .post(format!("{base}/api/v1/statuspages"))
                    .bearer_auth(&key)
                    .json(&json!({"name": format!("Busy {i}"), "slug": format!("busy-{i}")}))
                    .send()
                    .await;
            }
        })
    };
    let (ok, out, err) = s.db.cli(&["backup", "--out", file.to_str().expect("path")]);
    assert!(ok, "{err}");
    assert!(out.contains("keep the server key"), "{out}");
    writer.await.expect("writer");
    let (ok, _, err) = s.db.cli(&["backup", "--out", file.to_str().expect("path")]);
    assert!(!ok && err.contains("exists already"), "{err}");

    let target = TestDb::new(b).await;
    same_key(&s.db, &target);
    let (ok, out, err) = target.cli(&["restore", file.to_str().expect("path")]);
    assert!(ok, "{err}");
    assert!(out.starts_with("restored "), "{out}");
    // Every table of the restored database is the backup's: take the
    // backup's own tables by restoring it a second time elsewhere.
    let again = TestDb::new(b).await;
    same_key(&s.db, &again);
    assert!(again.cli(&["restore", file.to_str().expect("path")]).0);
    let restored = every_table(&target);
    assert_eq!(difference(&restored, &every_table(&again), ""), None);
    let pages = restored["tables"]["status_pages"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(pages >= 1, "{pages} pages");
    // A restore goes only into a new database.
    let (ok, _, err) = target.cli(&["restore", file.to_str().expect("path")]);
    assert!(!ok && err.contains("not empty"), "{err}");
    // Not a backup: refused, nothing changed.
    let junk = target.dir.path().join("junk.json");
    std::fs::write(&junk, r#"{"format": "upstate-export"}"#).expect("junk");
    let fresh = TestDb::new(b).await;
    let (ok, _, err) = fresh.cli(&["restore", junk.to_str().expect("path")]);
    assert!(
        !ok && err.contains("/format") && err.contains("nothing changed"),
        "{err}"
    );

    // The restored install serves, its audit chain verifies, its secrets open.
    let moved = Server::process_on(target, &[]);
    let verified = moved.post_empty("/api/audit-events/verify").await.data(200);
    assert_eq!(verified["intact"], true, "{verified}");
    assert!(verified["checked"].as_i64() > Some(5), "{verified}");
    let me = owner(&moved).await;
    let doc = export(&me, "?secrets=true").await;
    assert!(
        doc.to_string().contains(HEADER),
        "sealed secrets open with the key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn migrate_db_moves_every_table_from_sqlite_to_postgres_and_back() {
    let mut s = Server::process(Backend::Sqlite).await;
    s.db.user("owner@example.com", "owner");
    furnished(&s, "acme").await;
    install_wide(&s).await;
    let served = s.snapshot().await;
    // Stopped, so its scheduler moves nothing between the copies compared.
    assert!(s.stop());
    let before = every_table(&s.db);

    let pg = TestDb::new(Backend::Postgres).await;
    let (ok, out, err) =
        s.db.cli(&["migrate-db", "--from", &s.db.url, "--to", &pg.url]);
    assert!(ok, "{err}");
    assert!(out.contains("status_pages: 1"), "{out}");
    assert_eq!(
        difference(&every_table(&pg), &before, ""),
        None,
        "SQLite to PostgreSQL"
    );
    // Into a database that holds something: refused, nothing copied.
    let (ok, _, err) =
        s.db.cli(&["migrate-db", "--from", &s.db.url, "--to", &pg.url]);
    assert!(!ok && err.contains("not empty"), "{err}");

    let back = TestDb::new(Backend::Sqlite).await;
    let (ok, _, err) =
        s.db.cli(&["migrate-db", "--from", &pg.url, "--to", &back.url]);
    assert!(ok, "{err}");
    assert_eq!(
        difference(&every_table(&back), &before, ""),
        None,
        "and back"
    );

    same_key(&s.db, &pg);
    let moved = Server::process_on(pg, &[]);
    let verified = moved.post_empty("/api/audit-events/verify").await.data(200);
    assert_eq!(
        verified["intact"], true,
        "the audit chain verifies after the move: {verified}"
    );
    assert_eq!(moved.snapshot().await, served);
    // New rows get new ids after the copied ones.
    let page = moved.page("after-the-move").await;
    assert!(page > 1, "{page}");
}
