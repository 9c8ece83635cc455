//! Importers from the products people leave (docs/operations.md,
//! "Importing from Atlassian Statuspage"): a Statuspage page's public v2
//! JSON (`tests/fixtures/statuspage/`, written from the documented format)
//! comes in as a page beside the others, with its history; imported again,
//! only what is new; a file that is not Statuspage's changes nothing. The
//! same through Statuspage's management API (with its subscribers),
//! Instatus's API and Cachet's, each served by a local server from the
//! fixtures beside Statuspage's.

use crate::browser::STEP_WITHIN;
use crate::on_both_backends;
use crate::support::{Backend, Browser, Server, root};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    a_statuspage_page_comes_in_with_its_history_once,
    a_statuspage_page_is_fetched_from_its_address_within_the_outgoing_rule,
    what_is_not_a_statuspage_page_changes_nothing,
    an_admin_brings_a_statuspage_page_from_the_settings_screen,
    an_uptime_kuma_backup_becomes_components_watched_alike,
    statuspage_subscribers_come_through_the_management_api,
    an_instatus_page_comes_through_its_api,
    a_cachet_install_comes_in_page_by_page,
    uptime_kumas_database_brings_its_status_pages_and_maintenance
);
on_both_backends!(browser(postgres): an_admin_brings_a_cachet_page_from_the_settings_screen, kumas_database_comes_through_the_settings_screen);

fn fixtures() -> std::path::PathBuf {
    root().join("tests/fixtures/statuspage")
}

async fn counts(s: &Server) -> Vec<i64> {
    let mut n = vec![];
    for t in [
        "status_pages",
        "component_groups",
        "components",
        "component_status_history",
        "incidents",
        "incident_updates",
        "incident_components",
        "maintenance",
        "maintenance_updates",
    ] {
        n.extend(s.db.integers(&format!("SELECT COUNT(*) FROM {t}")).await);
    }
    n
}

async fn a_statuspage_page_comes_in_with_its_history_once(b: Backend) {
    let s = Server::start(b).await;
    s.page("acme").await;
    let dir = fixtures();
    let dir = dir.to_str().expect("path");
    let (ok, out, err) = s.db.cli(&["import", "--from", "statuspage", dir]);
    assert!(ok, "{err}");
    for line in [
        "status_pages: 1",
        "component_groups: 1",
        "components: 3",
        "incidents: 2",
        "incident_updates: 6",
        "maintenance: 2",
        "not brought: subscribers",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }
    let pages = s.get("/api/v1/statuspages").await.data(200);
    let page = pages
        .as_array()
        .expect("pages")
        .iter()
        .find(|p| p["slug"] == "example-cloud")
        .cloned()
        .unwrap_or_else(|| panic!("the imported page in {pages}"));
    let id = page["id"].as_i64().expect("id");
    let components = s
        .get(&format!("/api/v1/components?statusPageId={id}"))
        .await
        .data(200);
    let by_name = |name: &str| {
        components
            .as_array()
            .expect("components")
            .iter()
            .find(|c| c["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {components}"))
    };
    assert_eq!(by_name("Database")["status"], "degraded");
    assert!(by_name("API")["groupId"].is_i64() || by_name("API")["groupId"].is_string());
    assert!(by_name("Dashboard")["groupId"].is_null());
    let incidents = s
        .get(&format!("/api/v1/incidents?statusPageId={id}"))
        .await
        .data(200);
    let api_down = incidents
        .as_array()
        .expect("incidents")
        .iter()
        .find(|i| i["title"] == "API unavailable")
        .cloned()
        .expect("the past incident");
    assert_eq!(api_down["status"], "resolved", "a postmortem is resolved");
    assert_eq!(api_down["impact"], "critical");
    assert!(
        api_down["createdAt"]
            .as_str()
            .is_some_and(|t| t.starts_with("2026-11-20T10:00:00")),
        "{api_down}"
    );
    // The API's outage that day, from the updates' component changes.
    let api = by_name("API")["id"].as_i64().expect("API id");
    let history = s
        .db
        .texts(&format!(
            "SELECT status FROM component_status_history WHERE component_id = {api} ORDER BY changed_at"
        ))
        .await;
    assert_eq!(
        history,
        [
            "operational",
            "major_outage",
            "partial_outage",
            "operational"
        ]
    );
    let html = s.get("/s/example-cloud/history?month=2026-11").await;
    let body = html.body.as_str().unwrap_or_default();
    assert!(
        html.status == 200 && body.contains("API unavailable"),
        "{}",
        html.status
    );
    let audit = s
        .get("/api/audit-events?action=install.import")
        .await
        .data(200);
    assert_eq!(audit.as_array().map(Vec::len), Some(1));

    // Again: nothing new, nothing doubled.
    let before = counts(&s).await;
    let (ok, out, err) = s.db.cli(&["import", "--from", "statuspage", dir]);
    assert!(ok, "{err}");
    assert!(out.contains("nothing new"), "{out}");
    assert_eq!(counts(&s).await, before);

    // A later look at the page brings the incident that is new since.
    let newer = tempfile::tempdir().expect("dir");
    let mut incidents: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("incidents.json")).expect("incidents"),
    )
    .expect("JSON");
    incidents["incidents"]
        .as_array_mut()
        .expect("list")
        .push(json!({"id": "inc0newone000", "name": "Login errors", "status": "investigating",
                     "created_at": "2026-11-26T08:00:00.000Z", "updated_at": "2026-11-26T08:00:00.000Z",
                     "impact": "major", "started_at": "2026-11-26T08:00:00.000Z",
                     "incident_updates": [{"id": "upd0newone001", "status": "investigating",
                        "body": "Some sign-ins fail.", "created_at": "2026-11-26T08:00:00.000Z",
                        "display_at": "2026-11-26T08:00:00.000Z", "affected_components": null}],
                     "components": []}));
    // Meanwhile the slow database was resolved there, and the component
    // is back: the incident brought before moves on with it here.
    for i in incidents["incidents"].as_array_mut().expect("list") {
        if i["id"] == "inc0slowdb000" {
            i["status"] = json!("resolved");
            i["resolved_at"] = json!("2026-11-26T09:00:00.000Z");
            i["updated_at"] = json!("2026-11-26T09:00:00.000Z");
            i["incident_updates"]
                .as_array_mut()
                .expect("updates")
                .insert(
                    0,
                    json!({"id": "upd0slowdb003", "status": "resolved",
                    "body": "Queries are fast again.", "created_at": "2026-11-26T09:00:00.000Z",
                    "display_at": "2026-11-26T09:00:00.000Z",
                    "affected_components": [{"code": "cmp0db000000", "name": "Database",
                        "old_status": "degraded_performance", "new_status": "operational"}]}),
                );
        }
    }
    std::fs::write(newer.path().join("incidents.json"), incidents.to_string()).expect("file");
    let mut summary: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("summary.json")).expect("summary"),
    )
    .expect("JSON");
    for c in summary["components"].as_array_mut().expect("components") {
        if c["id"] == "cmp0db000000" {
            c["status"] = json!("operational");
        }
    }
    summary["incidents"] = json!([]);
    std::fs::write(newer.path().join("summary.json"), summary.to_string()).expect("file");
    std::fs::copy(
        fixtures().join("scheduled-maintenances.json"),
        newer.path().join("scheduled-maintenances.json"),
    )
    .expect("copy");
    let (ok, out, err) = s.db.cli(&[
        "import",
        "--from",
        "statuspage",
        newer.path().to_str().expect("path"),
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("incidents: 1") && out.contains("incident_updates: 2"),
        "{out}"
    );
    assert!(
        out.contains("incidents: 1 brought before, updated")
            && out.contains("components: 1 brought before, updated"),
        "{out}"
    );
    let after = counts(&s).await;
    assert_eq!(after[4], before[4] + 1, "one incident more");
    assert_eq!(after[2], before[2], "no component doubled");
    assert_eq!(
        s.db.texts(
            "SELECT status || ' ' || CASE WHEN resolved_at IS NULL THEN 'open' ELSE 'resolved' END \
             FROM incidents WHERE title = 'Slow database queries'"
        )
        .await,
        ["resolved resolved"]
    );
    assert_eq!(
        s.db.texts("SELECT status FROM components WHERE name = 'Database'")
            .await,
        ["operational"]
    );
    let open = s.get("/api/v1/incidents?status=unresolved").await.data(200);
    assert!(
        !open.to_string().contains("Slow database queries"),
        "{open}"
    );
    // The running service hears of what the command wrote beside it (on
    // SQLite too, where it follows the outbox): its public summary no
    // longer lists the incident as unresolved, within seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let summary = s.get("/s/example-cloud/api/v2/summary.json").await;
        if !summary.body["incidents"]
            .to_string()
            .contains("Slow database queries")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still unresolved in the public summary: {}",
            summary.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Serves the fixtures as a Statuspage page does, under `/api/v2/`.
async fn statuspage_site() -> String {
    use axum::extract::Path;
    let app = axum::Router::new().route(
        "/api/v2/{file}",
        axum::routing::get(|Path(file): Path<String>| async move {
            match std::fs::read_to_string(fixtures().join(&file)) {
                Ok(body) if file.ends_with(".json") => {
                    ([("content-type", "application/json")], body).into_response()
                }
                _ => axum::http::StatusCode::NOT_FOUND.into_response(),
            }
        }),
    );
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn a_statuspage_page_is_fetched_from_its_address_within_the_outgoing_rule(b: Backend) {
    let s = Server::start(b).await;
    let site = statuspage_site().await;
    let before = counts(&s).await;
    // A private address is refused unless the operator allowed it.
    let (ok, _, err) = s.db.cli(&["import", "--from", "statuspage", &site]);
    assert!(!ok && err.contains("outgoing_allow"), "{err}");
    assert_eq!(counts(&s).await, before, "nothing changed");
    let (ok, out, err) = s.db.cli_with(
        &[
            "import",
            "--from",
            "statuspage",
            &format!("{site}/api/v2/summary.json"),
        ],
        &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")],
    );
    assert!(ok, "{err}");
    assert!(out.contains("incidents: 2"), "{out}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages WHERE slug = 'example-cloud'")
            .await,
        [1]
    );
}

async fn what_is_not_a_statuspage_page_changes_nothing(b: Backend) {
    let s = Server::start(b).await;
    let before = counts(&s).await;
    let dir = tempfile::tempdir().expect("dir");
    // Uptime Kuma's backup is no Statuspage summary.
    std::fs::write(
        dir.path().join("summary.json"),
        r#"{"version": "1.23.0", "monitorList": []}"#,
    )
    .expect("file");
    let path = dir.path().to_str().expect("path");
    let (ok, _, err) = s.db.cli(&["import", "--from", "statuspage", path]);
    assert!(!ok, "refused");
    assert!(
        err.contains("nothing changed") && err.contains("\"page\""),
        "{err}"
    );
    // A Statuspage summary given as an Upstate export: told which importer
    // reads it, nothing changed.
    let file = dir.path().join("upstate-export.json");
    std::fs::copy(fixtures().join("summary.json"), &file).expect("copied");
    let (ok, _, err) = s.db.cli(&["import", file.to_str().expect("path")]);
    assert!(!ok, "refused");
    assert!(
        err.contains("nothing changed")
            && err.contains("Statuspage summary.json")
            && err.contains("--from statuspage"),
        "{err}"
    );
    // A folder without a summary says which file it needs.
    let empty = tempfile::tempdir().expect("dir");
    let (ok, _, err) = s.db.cli(&[
        "import",
        "--from",
        "statuspage",
        empty.path().to_str().expect("path"),
    ]);
    assert!(!ok && err.contains("summary.json"), "{err}");
    // A component of an unknown status stays out, and says so.
    let odd = tempfile::tempdir().expect("dir");
    let mut summary: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("summary.json")).expect("summary"),
    )
    .expect("JSON");
    summary["components"][3]["status"] = json!("on_fire");
    std::fs::write(odd.path().join("summary.json"), summary.to_string()).expect("file");
    let (ok, out, err) = s.db.cli(&[
        "import",
        "--from",
        "statuspage",
        odd.path().to_str().expect("path"),
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("not brought: component \"Dashboard\": unknown status"),
        "{out}"
    );
    assert!(counts(&s).await[2] == before[2] + 2, "two components came");
}

async fn an_admin_brings_a_statuspage_page_from_the_settings_screen(b: Backend) {
    let s = Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    s.db.user("owner@example.com", "owner");
    s.db.user_with("ed@example.com", "editor", crate::support::PASSWORD);
    let site = statuspage_site().await;
    let me = Browser::signed_in(&s, "owner@example.com").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let path = "/api/admin/import/statuspage";
    let (status, _, _) = ed
        .send(Method::POST, path, Some(json!({"url": site})))
        .await;
    assert_eq!(status, 403, "an editor changes no settings");
    // Not an http(s) address: 422 on url; no page read there: 404.
    for (bad, expected) in [
        (json!({"url": "ftp://example.com"}), 422),
        (json!({"url": format!("{site}/nothing-here")}), 404),
    ] {
        let before = counts(&s).await;
        let (status, problem, _) = me.send(Method::POST, path, Some(bad.clone())).await;
        assert_eq!(status, expected, "{bad}: {problem}");
        if expected == 422 {
            assert_eq!(problem["errors"][0]["field"], "url", "{problem}");
        } else {
            assert!(
                problem["detail"].to_string().contains("summary.json"),
                "{problem}"
            );
        }
        assert_eq!(counts(&s).await, before, "nothing changed");
    }
    let (status, done, _) = me
        .send(Method::POST, path, Some(json!({"url": site})))
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["rows"]["incidents"], 2, "{done}");
    assert!(done["data"]["leftOut"].to_string().contains("subscribers"));
    let (status, again, _) = me
        .send(Method::POST, path, Some(json!({"url": site})))
        .await;
    assert_eq!(status, 200, "{again}");
    let brought: i64 = again["data"]["rows"]
        .as_object()
        .expect("rows")
        .values()
        .filter_map(Value::as_i64)
        .sum();
    assert_eq!(brought, 0, "only what is new: {again}");
}

async fn an_uptime_kuma_backup_becomes_components_watched_alike(b: Backend) {
    let s = Server::start(b).await;
    s.db.user("owner@example.com", "owner");
    let file = root().join("tests/fixtures/uptime-kuma/backup.json");
    let file = file.to_str().expect("path");
    let (ok, out, err) = s.db.cli(&["import", "--from", "uptime-kuma", file]);
    assert!(ok, "{err}");
    for line in [
        "status_pages: 1",
        "component_groups: 1",
        "components: 6",
        "monitors: 5",
        "not brought: monitor \"Gateway\": Uptime Kuma's ping check has no counterpart",
        "not brought: notifications: 1",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }
    let monitors = s.get("/api/monitors").await.data(200);
    let list = monitors.as_array().expect("monitors");
    let find = |target: &str| {
        list.iter()
            .find(|m| m["target"] == target)
            .cloned()
            .unwrap_or_else(|| panic!("{target} in {monitors}"))
    };
    let api = find("https://api.example.com/health");
    assert_eq!(api["kind"], "http");
    assert_eq!(api["intervalSeconds"], 30);
    assert_eq!(api["retries"], 2);
    let db = find("db.example.com:5432");
    assert_eq!(db["kind"], "tcp");
    let dns = find("example.com");
    assert_eq!(dns["kind"], "dns");
    assert_eq!(dns["dnsRecordType"], "MX");
    assert_eq!(dns["enabled"], false, "paused in Kuma, paused here");
    let website = find("https://www.example.com/");
    assert_eq!(website["keyword"], "Welcome");
    assert_eq!(website["verifyTls"], false);
    assert!(
        list.iter().any(|m| m["kind"] == "heartbeat"),
        "the push monitor became a heartbeat: {monitors}"
    );
    // Grouped as in Kuma; the header's value sealed like any other.
    let grouped =
        s.db.texts(
            "SELECT c.name FROM components c JOIN component_groups g ON g.id = c.group_id \
             WHERE g.name = 'Backend' ORDER BY c.name",
        )
        .await;
    assert_eq!(grouped, ["API", "Database"]);
    assert!(!s.db.everything_stored().await.contains("kuma-secret-123"));
    // Again: nothing doubled (the monitors run meanwhile, so the
    // components' history may grow by itself).
    let rows = async || {
        s.db.integers(
            "SELECT (SELECT COUNT(*) FROM status_pages) * 1000000 + (SELECT COUNT(*) FROM component_groups) * 10000 \
             + (SELECT COUNT(*) FROM components) * 100 + (SELECT COUNT(*) FROM monitors)",
        )
        .await
    };
    let before = rows().await;
    let (ok, out, _) = s.db.cli(&["import", "--from", "uptime-kuma", file]);
    assert!(ok && out.contains("nothing new"), "{out}");
    assert_eq!(rows().await, before);
    // Not a Kuma backup, through the Settings screen's route: refused.
    let mut me = Browser::signed_in(&s, "owner@example.com").await;
    me.step_up().await;
    let (status, problem, _) = me
        .send(
            Method::POST,
            "/api/admin/export?source=uptime_kuma",
            Some(json!({"format": "upstate-export"})),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    assert!(problem.to_string().contains("monitorList"), "{problem}");
    assert_eq!(rows().await, before);
}

fn fixture(dir: &str, file: &str) -> Value {
    let path = root().join("tests/fixtures").join(dir).join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture")).expect("JSON")
}

/// Serves `app` on a local port; its address.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A bare-array API (Statuspage's management API, Instatus's): the
/// fixture `file(path)` names, on page 1 of `?page=N`, for the one key.
async fn array_api(
    dir: &'static str,
    authorization: &'static str,
    file: fn(&str) -> Option<&'static str>,
) -> String {
    use axum::http::{HeaderMap, StatusCode, Uri};
    use axum::response::IntoResponse;
    let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| async move {
        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(authorization) {
            return (StatusCode::UNAUTHORIZED, "bad key").into_response();
        }
        let Some(name) = file(uri.path()) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let later = uri
            .query()
            .unwrap_or_default()
            .split('&')
            .any(|q| q.starts_with("page=") && q != "page=1");
        let body = if later { json!([]) } else { fixture(dir, name) };
        axum::Json(body).into_response()
    });
    serve(app).await
}

async fn statuspage_subscribers_come_through_the_management_api(b: Backend) {
    let s = Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    s.db.user("owner@example.com", "owner");
    let api = array_api("statuspage-api", "OAuth sp-key", |path| {
        Some(match path {
            "/v1/pages" => "pages.json",
            "/v1/pages/kctbh9vrtdwd" => "page.json",
            "/v1/pages/kctbh9vrtdwd/components" => "components.json",
            "/v1/pages/kctbh9vrtdwd/incidents" => "all-incidents.json",
            "/v1/pages/kctbh9vrtdwd/subscribers" => "subscribers.json",
            _ => return None,
        })
    })
    .await;
    let url = format!("{api}/v1");
    let me = Browser::signed_in(&s, "owner@example.com").await;
    let path = "/api/admin/import/statuspage";
    // A wrong key reads nothing, and nothing changes.
    let before = counts(&s).await;
    let (status, problem, _) = me
        .send(
            Method::POST,
            path,
            Some(json!({"url": url, "apiKey": "wrong"})),
        )
        .await;
    assert_eq!(status, 404, "{problem}");
    assert!(problem["detail"].to_string().contains("401"), "{problem}");
    assert_eq!(counts(&s).await, before, "nothing changed");
    // The key reads one page: it needs no page id.
    let (status, done, _) = me
        .send(
            Method::POST,
            path,
            Some(json!({"url": url, "apiKey": "sp-key"})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    let rows = &done["data"]["rows"];
    assert_eq!(rows["incidents"], 2, "{done}");
    assert_eq!(rows["maintenance"], 2, "{done}");
    assert_eq!(rows["subscribers"], 3, "{done}");
    let left = done["data"]["leftOut"].to_string();
    assert!(left.contains("1 by sms"), "{left}");
    assert!(left.contains("1 quarantined"), "{left}");
    let subscribers =
        s.db.texts("SELECT kind || ' ' || target FROM subscribers ORDER BY target")
            .await;
    assert_eq!(
        subscribers,
        [
            "email alice@example.com",
            "email bob@example.com",
            "webhook https://hooks.example.com/status"
        ]
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM subscribers WHERE verified_at IS NULL")
            .await,
        [0],
        "confirmed at Statuspage, confirmed here"
    );
    // Bob chose the API alone; Alice every component (the whole page).
    assert_eq!(
        s.db.texts(
            "SELECT c.name FROM subscriber_components sc JOIN subscribers s ON s.id = sc.subscriber_id \
             JOIN components c ON c.id = sc.component_id WHERE s.target = 'bob@example.com'"
        )
        .await,
        ["API"]
    );
    assert_eq!(
        s.db.integers(
            "SELECT COUNT(*) FROM subscriber_components sc JOIN subscribers s ON s.id = sc.subscriber_id \
             WHERE s.target = 'alice@example.com'"
        )
        .await,
        [0]
    );
    // Again: nothing new, no subscriber doubled.
    let (status, again, _) = me
        .send(
            Method::POST,
            path,
            Some(json!({"url": url, "apiKey": "sp-key", "pageId": "kctbh9vrtdwd"})),
        )
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["data"]["rows"]["subscribers"], 0, "{again}");
    assert_eq!(again["data"]["rows"]["incidents"], 0, "{again}");
}

async fn an_instatus_page_comes_through_its_api(b: Backend) {
    let s = Server::start(b).await;
    let api = array_api("instatus", "Bearer in-key", |path| {
        Some(match path {
            "/v2/pages" => "pages.json",
            "/v2/ckpage0000001/components" => "components.json",
            "/v1/ckpage0000001/incidents" => "incidents.json",
            "/v1/ckpage0000001/maintenances" => "maintenances.json",
            _ => return None,
        })
    })
    .await;
    let allow = [("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")];
    let before = counts(&s).await;
    // Instatus is read through its API: without a key, nothing.
    let (ok, _, err) =
        s.db.cli_with(&["import", "--from", "instatus", &api], &allow);
    assert!(!ok && err.contains("--key"), "{err}");
    // The key reads two pages: which one must be said.
    let (ok, _, err) = s.db.cli_with(
        &["import", "--from", "instatus", "--key", "in-key", &api],
        &allow,
    );
    assert!(
        !ok && err.contains("2 pages") && err.contains("ckpage0000002"),
        "{err}"
    );
    let (ok, _, err) = s.db.cli_with(
        &[
            "import",
            "--from",
            "instatus",
            "--key",
            "not-it",
            "--page-id",
            "ckpage0000001",
            &api,
        ],
        &allow,
    );
    assert!(
        !ok && err.contains("401") && err.contains("nothing changed"),
        "{err}"
    );
    assert_eq!(counts(&s).await, before, "nothing changed");
    let args = [
        "import",
        "--from",
        "instatus",
        "--key",
        "in-key",
        "--page-id",
        "ckpage0000001",
        &api,
    ];
    let (ok, out, err) = s.db.cli_with(&args, &allow);
    assert!(ok, "{err}");
    for line in [
        "status_pages: 1",
        "component_groups: 1",
        "components: 3",
        "incidents: 2",
        "incident_updates: 6",
        "maintenance: 1",
        "maintenance_updates: 1",
        "not brought: subscribers",
        "Old FTP",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }
    // Named from /v2/pages by the page asked for (its components do not
    // say which page they are of).
    assert_eq!(
        s.db.texts("SELECT name || ' ' || slug FROM status_pages WHERE slug = 'northwind'")
            .await,
        ["Northwind Status northwind"]
    );
    // Each incident's impact: the worst status of the components it named.
    let impacts =
        s.db.texts("SELECT title || ' ' || impact FROM incidents")
            .await;
    assert!(
        impacts.contains(&"Website errors major".to_string())
            && impacts.contains(&"API outage critical".to_string()),
        "{impacts:?}"
    );
    assert_eq!(
        s.db.texts(
            "SELECT c.name || ' ' || c.status || ' ' || COALESCE(g.name, '-') FROM components c \
             LEFT JOIN component_groups g ON g.id = c.group_id \
             JOIN status_pages p ON p.id = c.page_id WHERE p.slug = 'northwind' ORDER BY c.position"
        )
        .await,
        [
            "API operational Services",
            "Website partial_outage Services",
            "Email delivery operational -"
        ]
    );
    // The resolved outage: its times, and the API's history through it.
    assert_eq!(
        s.db.integers("SELECT resolved_at - created_at FROM incidents WHERE title = 'API outage'")
            .await,
        [90 * 60 * 1000]
    );
    assert_eq!(
        s.db.texts(
            "SELECT h.status FROM component_status_history h JOIN components c ON c.id = h.component_id \
             WHERE c.name = 'API' ORDER BY h.changed_at"
        )
        .await,
        ["operational", "major_outage", "operational"]
    );
    assert_eq!(
        s.db.integers("SELECT scheduled_end - scheduled_start FROM maintenance")
            .await,
        [120 * 60 * 1000],
        "duration in minutes"
    );
    // The public page reads as the import left it.
    let html = reqwest::get(format!("{}/s/northwind", s.base))
        .await
        .expect("page")
        .text()
        .await
        .expect("text");
    assert!(
        html.contains("Website errors") && html.contains("Email delivery"),
        "{html}"
    );
    let (ok, out, err) = s.db.cli_with(&args, &allow);
    assert!(ok, "{err}");
    assert!(out.contains("nothing new"), "{out}");
}

/// Cachet 2 as its API answers: lists cut into pages of two, with the
/// next page's link written for the address Cachet thinks it has.
async fn cachet_site() -> String {
    use axum::http::{StatusCode, Uri};
    use axum::response::IntoResponse;
    let app = axum::Router::new().fallback(|uri: Uri| async move {
        let path = uri.path().trim_start_matches("/api/v1/");
        let (file, incident) = match path.split('/').collect::<Vec<_>>().as_slice() {
            ["components"] => ("components.json", None),
            ["components", "groups"] => ("component-groups.json", None),
            ["incidents"] => ("incidents.json", None),
            ["incidents", id, "updates"] => ("incident-updates.json", id.parse::<i64>().ok()),
            ["schedules"] => ("schedules.json", None),
            _ => return StatusCode::NOT_FOUND.into_response(),
        };
        let mut all: Vec<Value> = fixture("cachet", file)["data"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(id) = incident {
            all.retain(|u| u["incident_id"] == json!(id));
        }
        let page: usize = uri
            .query()
            .unwrap_or_default()
            .split('&')
            .find_map(|q| q.strip_prefix("page="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let pages = all.len().div_ceil(2).max(1);
        let data: Vec<Value> = all.iter().skip((page - 1) * 2).take(2).cloned().collect();
        let next = (page < pages).then(|| {
            format!(
                "http://cachet.internal{}?per_page=2&page={}",
                uri.path(),
                page + 1
            )
        });
        axum::Json(json!({
            "meta": {"pagination": {"total": all.len(), "count": data.len(), "per_page": 2,
                     "current_page": page, "total_pages": pages,
                     "links": {"next_page": next, "previous_page": null}}},
            "data": data,
        }))
        .into_response()
    });
    serve(app).await
}

async fn a_cachet_install_comes_in_page_by_page(b: Backend) {
    let s = Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    s.db.user("owner@example.com", "owner");
    let site = cachet_site().await;
    let other = statuspage_site().await;
    let me = Browser::signed_in(&s, "owner@example.com").await;
    let path = "/api/admin/import/cachet";
    for (bad, expected, field) in [
        (json!({"url": "ftp://example.com"}), 422, Some("url")),
        (json!({"url": other}), 404, None),
        (json!({"url": site, "extra": 1}), 422, Some("extra")),
    ] {
        let before = counts(&s).await;
        let (status, problem, _) = me.send(Method::POST, path, Some(bad.clone())).await;
        assert_eq!(status, expected, "{bad}: {problem}");
        if let Some(field) = field {
            assert_eq!(problem["errors"][0]["field"], field, "{problem}");
        } else {
            assert!(
                problem["detail"].to_string().contains("components"),
                "{problem}"
            );
        }
        assert_eq!(counts(&s).await, before, "nothing changed");
    }
    let (status, done, _) = me
        .send(
            Method::POST,
            path,
            Some(json!({"url": format!("{site}/api/v1")})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    let rows = &done["data"]["rows"];
    assert_eq!(rows["components"], 4, "every page of the list: {done}");
    assert_eq!(rows["component_groups"], 2, "{done}");
    assert_eq!(rows["incidents"], 2, "{done}");
    assert_eq!(
        rows["incident_updates"], 6,
        "each message and its updates: {done}"
    );
    assert_eq!(rows["maintenance"], 2, "{done}");
    assert!(
        done["data"]["leftOut"].to_string().contains("1 hidden"),
        "{done}"
    );
    assert_eq!(
        s.db.texts(
            "SELECT c.name || ' ' || c.status || ' ' || COALESCE(g.name, '-') FROM components c \
             LEFT JOIN component_groups g ON g.id = c.group_id ORDER BY c.position"
        )
        .await,
        [
            "Website operational Core",
            "API degraded Core",
            "Payments operational Billing",
            "Search operational -"
        ]
    );
    assert_eq!(
        s.db.texts("SELECT u.status FROM incident_updates u JOIN incidents i ON i.id = u.incident_id WHERE i.title = 'Website down' ORDER BY u.created_at")
            .await,
        ["investigating", "identified", "resolved"]
    );
    assert_eq!(
        s.db.integers(
            "SELECT resolved_at - created_at FROM incidents WHERE title = 'Website down'"
        )
        .await,
        [60 * 60 * 1000]
    );
    assert_eq!(
        s.db.texts("SELECT m.status || ' ' || COALESCE(c.name, '-') FROM maintenance m LEFT JOIN maintenance_components mc ON mc.maintenance_id = m.id LEFT JOIN components c ON c.id = mc.component_id ORDER BY m.scheduled_start")
            .await,
        ["completed -", "scheduled Payments"]
    );
    let (status, again, _) = me
        .send(Method::POST, path, Some(json!({"url": site})))
        .await;
    assert_eq!(status, 200, "{again}");
    let brought: i64 = again["data"]["rows"]
        .as_object()
        .expect("rows")
        .values()
        .filter_map(Value::as_i64)
        .sum();
    assert_eq!(brought, 0, "only what is new: {again}");

    // Cachet 3's JSON:API items, saved in a folder, read the same way.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("components.json"),
        json!({"data": [{"id": "9", "type": "components", "attributes": {
            "name": "Edge", "description": "CDN", "order": 0,
            "status": {"human": "Partial Outage", "value": 3},
            "created": {"human": "a year ago", "string": "2025-11-01T00:00:00+00:00"},
            "enabled": true}}]})
        .to_string(),
    )
    .expect("file");
    let (ok, out, err) = s.db.cli(&[
        "import",
        "--from",
        "cachet",
        dir.path().to_str().expect("path"),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("components: 1"), "{out}");
    assert_eq!(
        s.db.texts("SELECT status FROM components WHERE name = 'Edge'")
            .await,
        ["partial_outage"]
    );
}

async fn an_admin_brings_a_cachet_page_from_the_settings_screen(b: Backend) {
    use crate::admin_ui::{browser_of, field_by_id, shot};
    use crate::browser::browser_available;
    use fantoccini::Locator;
    if !browser_available("an_admin_brings_a_cachet_page_from_the_settings_screen") {
        return;
    }
    let s = Server::in_process(b, |c| {
        c.delivery.allow = vec!["127.0.0.1/32".parse().expect("range")];
    })
    .await;
    s.db.user_with("owner@example.com", "owner", crate::admin_ui::PW);
    let site = cachet_site().await;
    let d = browser_of(&s, "owner@example.com").await;
    d.c()
        .goto(&format!("{}/admin/settings#moving", s.base))
        .await
        .expect("settings");
    // Cachet's form is folded away under its name; Statuspage's is open.
    d.c()
        .find(Locator::XPath("//summary[normalize-space()='From Cachet']"))
        .await
        .expect("Cachet's form")
        .click()
        .await
        .expect("opened");
    d.screenshot(&shot(b, "settings-import-products")).await;
    let url = field_by_id(&d, "f-cachet-url").await;
    url.send_keys(&format!("{site}/api/v1"))
        .await
        .expect("typed");
    d.c()
        .find(Locator::Css(
            "form[action='/api/admin/import/cachet'] button[type=submit]",
        ))
        .await
        .expect("button")
        .click()
        .await
        .expect("sent");
    let done = d
        .until(
            "return (document.querySelector('#statuspage-notes')?.textContent ?? '').includes('hidden')",
            STEP_WITHIN,
        )
        .await;
    assert!(done.is_some(), "what stayed out is listed");
    d.js("document.querySelector('#statuspage-notes').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "settings-cachet-imported")).await;
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM components").await, [4]);
    d.quit().await;
}

/// A kuma.db made from `tests/fixtures/uptime-kuma/kuma.sql`.
async fn kuma_db(dir: &std::path::Path) -> std::path::PathBuf {
    use sqlx::ConnectOptions;
    let path = dir.join("kuma.db");
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .connect()
        .await
        .expect("kuma.db");
    let sql = std::fs::read_to_string(root().join("tests/fixtures/uptime-kuma/kuma.sql"))
        .expect("kuma.sql");
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .expect("Kuma's tables");
    path
}

async fn uptime_kumas_database_brings_its_status_pages_and_maintenance(b: Backend) {
    let s = Server::start(b).await;
    let dir = tempfile::tempdir().expect("dir");
    // Another SQLite file is no kuma.db: refused, nothing changed.
    let other = dir.path().join("other.db");
    {
        use sqlx::ConnectOptions;
        let mut c = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&other)
            .create_if_missing(true)
            .connect()
            .await
            .expect("db");
        sqlx::raw_sql("CREATE TABLE notes (id INTEGER PRIMARY KEY)")
            .execute(&mut c)
            .await
            .expect("table");
    }
    let before = counts(&s).await;
    let (ok, _, err) = s.db.cli(&[
        "import",
        "--from",
        "uptime-kuma",
        other.to_str().expect("path"),
    ]);
    assert!(
        !ok && err.contains("not Uptime Kuma's database") && err.contains("nothing changed"),
        "{err}"
    );
    assert_eq!(counts(&s).await, before);

    // A page here already has Kuma's first page's address.
    let mine = s.page("acme").await;
    let file = kuma_db(dir.path()).await;
    let file = file.to_str().expect("path");
    let (ok, out, err) = s.db.cli(&["import", "--from", "uptime-kuma", file]);
    assert!(ok, "{err}");
    assert!(
        out.contains("note: status_pages: a page here has the address /s/acme; the one brought is at /s/acme-2"),
        "{out}"
    );
    for line in [
        "status_pages: 3",
        "component_groups: 3",
        "components: 8",
        "monitors: 5",
        "maintenance: 1",
        "recurring_maintenance: 1",
        "incidents: 2",
        "not brought: status page \"Internal\": its password stays in Uptime Kuma",
        "not brought: monitor \"Gateway\": Uptime Kuma's ping check has no counterpart",
        "not brought: maintenance \"Log rotation\": a cron schedule",
        "not brought: maintenance \"Emergency switch\": switched on by hand",
        "not brought: maintenance \"Old window\": paused",
        "not brought: notifications: 1",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }
    // Pages as Kuma had them: published or not, and the monitors on no
    // page on a page of their own that is not public.
    assert_eq!(
        s.db.texts(&format!(
            "SELECT slug || ' ' || name || ' ' || CASE WHEN is_public THEN 'public' ELSE 'private' END || ' ' || time_zone \
             FROM status_pages WHERE id <> {mine} ORDER BY id"
        ))
        .await,
        [
            "acme-2 Acme Status public Europe/Berlin",
            "internal Internal private UTC",
            "uptime-kuma-monitors Uptime Kuma monitors private UTC"
        ]
    );
    assert_eq!(
        s.db.texts(
            "SELECT p.slug || ' ' || COALESCE(g.name, '-') || ' ' || c.name FROM components c \
             JOIN status_pages p ON p.id = c.page_id LEFT JOIN component_groups g ON g.id = c.group_id \
             ORDER BY p.id, c.position"
        )
        .await,
        [
            "acme-2 Services API",
            "acme-2 Services Website",
            "acme-2 Services Nightly backup",
            "acme-2 Infrastructure Database",
            "acme-2 Infrastructure Gateway",
            "internal Everything API",
            "internal Everything Database",
            "uptime-kuma-monitors - Mail DNS"
        ]
    );
    // One monitor per Kuma monitor, on its first component.
    assert_eq!(
        s.db.texts(
            "SELECT p.slug || ' ' || c.name || ' ' || m.kind FROM monitors m JOIN components c ON c.id = m.component_id \
             JOIN status_pages p ON p.id = c.page_id ORDER BY m.id"
        )
        .await,
        [
            "acme-2 API http",
            "acme-2 Website http",
            "acme-2 Nightly backup heartbeat",
            "acme-2 Database tcp",
            "uptime-kuma-monitors Mail DNS dns"
        ]
    );
    assert!(
        !s.db
            .everything_stored()
            .await
            .contains("kuma-db-secret-456")
    );
    assert_eq!(
        s.db.texts("SELECT heartbeat_token FROM monitors WHERE kind = 'heartbeat'")
            .await,
        ["kumaDbPushToken99"]
    );
    // The one-off window at its Berlin time, on the database's component.
    let start =
        s.db.integers("SELECT scheduled_start FROM maintenance WHERE title = 'Database upgrade'")
            .await;
    assert_eq!(
        start,
        [1_898_557_200_000],
        "2030-03-01 02:00 in Berlin is 01:00 UTC"
    );
    assert_eq!(
        s.db.texts(
            "SELECT c.name FROM maintenance_components mc JOIN components c ON c.id = mc.component_id \
             JOIN maintenance m ON m.id = mc.maintenance_id WHERE m.title = 'Database upgrade'"
        )
        .await,
        ["Database"]
    );
    assert_eq!(
        s.db.texts(
            "SELECT rrule || ' ' || first_start || ' ' || duration_minutes || ' ' || time_zone FROM recurring_maintenance"
        )
        .await,
        ["FREQ=WEEKLY;BYDAY=SU,WE 2026-01-01T02:00 90 America/Chicago"]
    );
    // Its windows at 02:00 in Chicago (08:00 UTC, 07:00 in summer), though
    // the page's zone is Berlin's (where 02:00 is 01:00 or 00:00 UTC).
    let listed = s.get("/api/maintenance/recurring").await.data(200);
    let upcoming = listed["templates"][0]["upcoming"]
        .as_array()
        .expect("upcoming");
    assert!(!upcoming.is_empty(), "{listed}");
    for start in upcoming {
        let at = start.as_str().expect("a time");
        assert!(
            at.contains("T08:00:00") || at.contains("T07:00:00"),
            "02:00 in Chicago: {at}"
        );
    }
    assert_eq!(
        listed["templates"][0]["timeZone"], "America/Chicago",
        "{listed}"
    );
    assert_eq!(
        s.db.texts("SELECT title || ' ' || status || ' ' || impact FROM incidents ORDER BY id")
            .await,
        [
            "Slow logins investigating minor",
            "Office network down resolved major"
        ]
    );
    // Again: nothing new.
    let (ok, out, err) = s.db.cli(&["import", "--from", "uptime-kuma", file]);
    assert!(ok, "{err}");
    assert!(out.contains("nothing new"), "{out}");
}

async fn kumas_database_comes_through_the_settings_screen(b: Backend) {
    use crate::admin_ui::{PW, field_by_id, shot, signed_in_browser};
    use fantoccini::Locator;
    if !crate::browser::browser_available("kumas_database_comes_through_the_settings_screen") {
        return;
    }
    let (s, d) = signed_in_browser(b, "owner@example.com", "owner").await;
    let dir = tempfile::tempdir().expect("dir");
    let file = kuma_db(dir.path()).await;
    // Through the route: a database file needs source=uptime_kuma, and
    // bytes that are not SQLite are refused; nothing changes either way.
    s.db.user_with("api@example.com", "owner", crate::support::PASSWORD);
    let mut me = Browser::signed_in(&s, "api@example.com").await;
    me.step_up().await;
    let proof = me.step_up.clone().expect("stepped up");
    let bytes = std::fs::read(&file).expect("kuma.db");
    for (query, body, says) in [
        ("", bytes.clone(), "only as Uptime Kuma's"),
        (
            "?source=uptime_kuma",
            b"not a database".to_vec(),
            "not a SQLite database",
        ),
    ] {
        let r = reqwest::Client::new()
            .post(format!("{}/api/admin/export{query}", s.base))
            .header("cookie", &me.cookie)
            .header("x-csrf-token", &me.csrf)
            .header("x-step-up-token", &proof)
            .header("content-type", "application/vnd.sqlite3")
            .body(body)
            .send()
            .await
            .expect("sent");
        assert_eq!(r.status(), 422);
        let problem: Value = r.json().await.expect("problem");
        assert!(problem.to_string().contains(says), "{problem}");
    }
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [0]
    );

    d.c()
        .goto(&format!("{}/admin/settings#moving", s.base))
        .await
        .expect("settings");
    field_by_id(&d, "f-document")
        .await
        .send_keys(file.to_str().expect("path"))
        .await
        .expect("file chosen");
    d.c()
        .find(Locator::Css("#f-from option[value=uptime_kuma]"))
        .await
        .expect("Kuma")
        .click()
        .await
        .expect("chosen");
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
    let done = d
        .until(
            "return (document.querySelector('#import-notes')?.textContent ?? '').includes('cron schedule')",
            STEP_WITHIN,
        )
        .await;
    assert!(done.is_some(), "what stayed out is said");
    d.js("document.querySelector('#import-notes').scrollIntoView()")
        .await;
    d.screenshot(&shot(b, "settings-kuma-db-imported")).await;
    assert_eq!(
        s.db.texts("SELECT slug FROM status_pages ORDER BY id")
            .await,
        ["acme", "internal", "uptime-kuma-monitors"]
    );
    d.quit().await;
}
