//! `upstate apply -f upstate.yaml` and `upstate diff`: the setup as code.
//! A file makes pages, groups, components, a monitor, a vendor follow, a
//! channel and a template, through a server's API or on the install's own
//! database; a second run changes nothing; drift shows; a file that drops
//! an object deletes it only when apply made it; hand-made objects are never
//! touched; bad files are refused with their line and nothing changes; the
//! published schema is the one the command prints and reads the example.

use crate::on_both_backends;
use crate::support::{Backend, Server, consumer, root};
use serde_json::{Value, json};

on_both_backends!(
    a_setup_file_is_applied_and_kept,
    bad_setup_files_change_nothing,
    who_sees_a_page_is_kept_in_the_file,
    a_local_apply_prints_the_services_receiver_url
);

const FIRST: &str = r#"# The team's status setup
pages:
  - slug: acme
    name: Acme
    description: Everything Acme runs
    groups:
      - name: Europe
    components:
      - name: API
        group: Europe
        monitor:
          kind: heartbeat
          intervalSeconds: 120
      - name: Website
        description: The shop
      - name: GitHub
        thirdParty:
          url: https://www.githubstatus.com
          vendorComponent: Actions
channels:
  - name: On-call
    kind: webhook
    target: https://hooks.example.com/on-call
    pages: [acme]
templates:
  - name: Outage
    title: We are looking into errors
    message: Requests fail.
    impact: major
integrations:
  - name: Prometheus
    kind: alertmanager
    page: acme
    rules:
      - when: severity="critical"
        components: [API]
        status: major_outage
settings:
  siteName: Acme status
"#;

const SECOND: &str = r#"pages:
  - slug: acme
    name: Acme
    description: Everything Acme runs
    groups:
      - name: Europe
    components:
      - name: API
        group: Europe
        monitor:
          kind: heartbeat
          intervalSeconds: 60
      - name: GitHub
        thirdParty:
          url: https://www.githubstatus.com
          vendorComponent: Actions
templates:
  - name: Outage
    title: We are looking into errors
    message: Requests fail.
    impact: major
"#;

const RECEIVER_ONLY: &str = r#"pages:
  - slug: acme
    name: Acme
    components:
      - name: API
integrations:
  - name: Prometheus
    kind: alertmanager
    page: acme
    rules:
      - when: severity="critical"
        components: [API]
        status: major_outage
"#;

/// `upstate apply` on the install's own database serves its API on a
/// port of its own for the run; the receiver URL it prints (once) is the
/// service's, under `public_url`, and it answers there.
async fn a_local_apply_prints_the_services_receiver_url(b: Backend) {
    let s = Server::start(b).await;
    let file = write(&s, "upstate.yaml", RECEIVER_ONLY);
    let (ok, out, err) = s.db.cli_with(
        &["apply", "-f", &file],
        &[("UPSTATE_PUBLIC_URL", s.base.as_str())],
    );
    assert!(ok, "{out}{err}");
    let at = out
        .find("its receiver URL, shown this once: ")
        .unwrap_or_else(|| panic!("{out}"));
    let url = out[at..]
        .split_whitespace()
        .find(|w| w.starts_with("http"))
        .unwrap_or_default()
        .to_string();
    assert!(
        url.starts_with(&format!("{}/api/integrations/alertmanager/", s.base)),
        "{out}"
    );
    // The service (not the finished run) takes alerts there.
    let body =
        std::fs::read_to_string(root().join("tests/fixtures/alerts/alertmanager-firing.json"))
            .expect("fixture");
    let r = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 200);
    let said: Value = r.json().await.expect("JSON");
    // The rule drafts an incident (the file says no `incident`): the
    // service took the alerts and holds a draft for a person.
    assert_eq!(
        said["data"]["outcomes"],
        json!(["drafted", "joined"]),
        "{said}"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM alert_groups WHERE state = 'draft'")
            .await,
        [1]
    );
}

fn write(s: &Server, name: &str, text: &str) -> String {
    let path = s.db.dir.path().join(name);
    std::fs::write(&path, text).expect("setup file");
    path.to_string_lossy().into_owned()
}

async fn names(s: &Server, path: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .get(path)
        .await
        .data(200)
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|x| x["name"].as_str().map(String::from))
        .collect();
    v.sort();
    v
}

async fn a_setup_file_is_applied_and_kept(b: Backend) {
    let s = Server::start(b).await;
    // What people made by hand stays theirs.
    let hand = s.page("hand").await;
    s.component(hand, "Printer").await;
    let first = write(&s, "upstate.yaml", FIRST);
    let key = s.db.create_key("admin");
    let remote = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--server", s.base.as_str(), "--key", key.as_str()]);
        s.db.cli(&all)
    };

    // On the install's own database: everything is still to make.
    let (ok, out, err) = s.db.cli(&["diff", "-f", &first]);
    assert!(!ok, "drift exits non-zero: {out} {err}");
    for line in [
        "+ page acme",
        "+ group acme/Europe",
        "+ component acme/API",
        "+ monitor acme/API",
        "+ third-party acme/GitHub",
        "+ channel On-call",
        "+ template Outage",
        "+ integration Prometheus",
        "~ settings: siteName",
        "Plan: 10 to create, 1 to change, 0 to delete, 0 to adopt.",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    let (ok, out, err) = remote(&["apply", "-f", &first, "--dry-run"]);
    assert!(ok, "{err}");
    assert!(out.contains("Plan: 10 to create"), "{out}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [1],
        "a dry run changes nothing"
    );

    let (ok, out, err) = remote(&["apply", "-f", &first]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Applied: 10 created, 1 changed, 0 deleted, 0 adopted."),
        "{out}"
    );
    assert!(
        out.contains("Prometheus: its receiver URL, shown this once: ")
            && out.contains("/api/integrations/alertmanager/"),
        "{out}"
    );
    let page = s.get("/api/v1/statuspages").await.data(200);
    let acme = page
        .as_array()
        .expect("pages")
        .iter()
        .find(|p| p["slug"] == "acme")
        .expect("the page was made")
        .clone();
    assert_eq!(acme["description"], "Everything Acme runs");
    let acme_id = acme["id"].as_i64().expect("id");
    let comps = s
        .get(&format!("/api/v1/components?statusPageId={acme_id}"))
        .await
        .data(200);
    let by_name = |n: &str| -> Value {
        comps
            .as_array()
            .expect("components")
            .iter()
            .find(|c| c["name"] == n)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert!(by_name("API")["groupId"].is_i64(), "API is in Europe");
    assert_eq!(by_name("Website")["description"], "The shop");
    let monitors = s.get("/api/monitors").await.data(200);
    assert_eq!(monitors[0]["kind"], "heartbeat");
    assert_eq!(monitors[0]["intervalSeconds"], 120);
    let follows = s.get("/api/third-party").await.data(200);
    assert_eq!(follows[0]["vendorComponent"], "Actions");
    assert_eq!(names(&s, "/api/notifications").await, ["On-call"]);
    let channel = &s.get("/api/notifications").await.data(200)[0];
    assert_eq!(channel["pageIds"], json!([acme_id]));
    assert_eq!(names(&s, "/api/incident-templates").await, ["Outage"]);
    let integration = &s.get("/api/integrations").await.data(200)[0];
    assert_eq!(integration["rules"][0]["status"], "major_outage");
    assert_eq!(
        integration["rules"][0]["componentIds"],
        json!([by_name("API")["id"]])
    );
    assert_eq!(
        s.get("/api/settings").await.data(200)["siteName"],
        "Acme status"
    );
    let managed = s.get("/api/managed").await.data(200);
    assert_eq!(managed.as_array().map(Vec::len), Some(10), "{managed}");
    // The screens say what the file declares, and only that.
    s.db.user("ed@example.com", "editor");
    let ed = crate::support::Browser::signed_in(&s, "ed@example.com").await;
    let api = by_name("API")["id"].as_i64().expect("id");
    for (path, managed) in [
        (format!("/admin/pages/{acme_id}"), true),
        (format!("/admin/components/{api}"), true),
        (format!("/admin/pages/{hand}"), false),
    ] {
        let html = ed.screen(&path).await;
        assert_eq!(html.contains("Managed as code"), managed, "{path}");
    }

    // A second run changes nothing, writes nothing (no audit entry of its
    // managed list either), and diff agrees.
    let replaced = || async {
        s.db.texts("SELECT action FROM audit_events WHERE action = 'managed.replace'")
            .await
            .len()
    };
    let before = replaced().await;
    let (ok, out, err) = remote(&["apply", "-f", &first]);
    assert_eq!(replaced().await, before, "a no-op apply audits nothing");
    assert!(ok, "{err}");
    assert!(
        out.contains("Applied: 0 created, 0 changed, 0 deleted, 0 adopted."),
        "{out}"
    );
    let (ok, out, _) = remote(&["diff", "-f", &first]);
    assert!(ok, "no drift exits 0: {out}");

    // A change by hand is drift, and apply puts it back.
    let website = by_name("Website")["id"].as_i64().expect("id");
    s.patch(
        &format!("/api/v1/components/{website}"),
        json!({"description": "Changed by hand"}),
    )
    .await
    .data(200);
    let (ok, out, _) = remote(&["diff", "-f", &first]);
    assert!(!ok);
    assert!(
        out.contains("~ component acme/Website: description"),
        "{out}"
    );

    // The second file, on the install's own database: the dropped objects
    // go, the changed monitor changes, what people made stays.
    let second = write(&s, "upstate.yaml", SECOND);
    let (ok, out, err) = s.db.cli(&["apply", "-f", &second]);
    assert!(ok, "{err}");
    for line in [
        "~ monitor acme/API: intervalSeconds",
        "~ component acme/GitHub: order",
        "- component acme/Website",
        "- channel On-call",
        "- integration Prometheus",
        "Applied: 0 created, 2 changed, 3 deleted, 0 adopted.",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    s.get(&format!("/api/v1/components/{website}"))
        .await
        .problem(404);
    assert!(names(&s, "/api/notifications").await.is_empty());
    assert_eq!(
        s.get("/api/monitors").await.data(200)[0]["intervalSeconds"],
        60
    );
    assert_eq!(
        s.db.texts(&format!(
            "SELECT name FROM components WHERE page_id = {hand}"
        ))
        .await,
        ["Printer"],
        "a hand-made page and its components are not the file's"
    );
    // The command's key lived for the run only.
    assert_eq!(
        s.db.integers(
            "SELECT COUNT(*) FROM api_keys WHERE name = 'upstate apply' AND revoked_at IS NULL"
        )
        .await,
        [0]
    );
    let audit =
        s.db.texts("SELECT action FROM audit_events WHERE action = 'managed.replace'")
            .await;
    assert_eq!(
        audit.len(),
        2,
        "each run that changes it records what it manages"
    );
}

async fn bad_setup_files_change_nothing(b: Backend) {
    let s = Server::start(b).await;
    let counts = || async {
        let mut n = Vec::new();
        for t in [
            "status_pages",
            "component_groups",
            "components",
            "monitors",
            "third_party",
            "notification_channels",
            "incident_templates",
            "managed",
        ] {
            n.extend(s.db.integers(&format!("SELECT COUNT(*) FROM {t}")).await);
        }
        n
    };
    let before = counts().await;
    for (text, says) in [
        (
            "pages:\n  - slug: acme\n    name: Acme\n    colour: red\n",
            "upstate.yaml:4:",
        ),
        (
            "pages:\n  - slug: acme\n    name: Acme\n    components:\n      - name: API\n        group: Nowhere\n",
            "no group \"Nowhere\" on page acme",
        ),
        (
            "pages:\n  - slug: acme\n    name: Acme\n    components:\n      - name: API\n        monitor:\n          kind: http\n          target: ftp://x\n          intervalSeconds: 5\n",
            "monitor.intervalSeconds: must be from 10",
        ),
        (
            "pages:\n  - slug: acme\n    name: Acme\n  - slug: acme\n    name: Again\n",
            "\"acme\" is declared twice",
        ),
        ("pages: 3\n", "upstate.yaml:1:"),
        (
            "pages:\n  - slug: acme\n    name: Acme\nintegrations:\n  - name: P\n    kind: alertmanager\n    page: acme\n    rules:\n      - components: [Nope]\n        status: major_outage\n",
            "no component \"Nope\" on page acme",
        ),
    ] {
        let file = write(&s, "upstate.yaml", text);
        let (ok, _, err) = s.db.cli(&["apply", "-f", &file]);
        assert!(!ok, "{text}");
        assert!(err.contains(says), "{says} in {err}");
    }
    // The list of managed objects takes only what names rows.
    s.put(
        "/api/managed",
        json!({"objects": [{"kind": "page", "id": 0, "key": "bad\u{9b}"}]}),
    )
    .await
    .invalid_fields(&["objects[0].key", "objects[0].id"]);
    s.put(
        "/api/managed",
        json!({"objects": [{"kind": "planet", "id": 1, "key": "x"}]}),
    )
    .await
    .invalid_fields(&["objects[0].kind"]);
    // The server's own refusal is printed with its field.
    let file = write(
        &s,
        "upstate.yaml",
        "pages:\n  - slug: Not A Slug\n    name: Acme\n",
    );
    let (ok, _, err) = s.db.cli(&["apply", "-f", &file]);
    assert!(!ok);
    assert!(err.contains("slug"), "{err}");
    // A remote run needs its key.
    let (ok, _, err) = s.db.cli(&["apply", "-f", &file, "--server", &s.base]);
    assert!(!ok);
    assert!(err.contains("--key"), "{err}");
    assert_eq!(counts().await, before, "nothing stored");

    // The published schema is what the command prints, and it reads the
    // documented example.
    let (ok, printed, err) = s.db.cli(&["apply", "--schema"]);
    assert!(ok, "{err}");
    let published = std::fs::read_to_string(root().join("docs/upstate.schema.json"))
        .expect("docs/upstate.schema.json");
    assert_eq!(
        printed.trim(),
        published.trim(),
        "docs/upstate.schema.json is stale: regenerate it with `upstate apply --schema`"
    );
    let schema: Value = serde_json::from_str(&printed).expect("JSON Schema");
    let example = std::fs::read_to_string(root().join("docs/upstate.example.yaml"))
        .expect("docs/upstate.example.yaml");
    let document: Value = serde_yaml_ng::from_str(&example).expect("the example is YAML");
    let input = json!({"schema": schema, "document": document}).to_string();
    if let Some(v) = consumer("setup schema", "validate_json_schema.py", input.as_bytes()) {
        assert_eq!(v["errors"], json!([]), "the example is valid");
    }
    let bad = json!({"schema": schema, "document": {"pages": [{"slug": "a", "name": "A", "colour": "red"}]}}).to_string();
    if let Some(v) = consumer("setup schema", "validate_json_schema.py", bad.as_bytes()) {
        assert!(
            v["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "the schema refuses unknown keys too"
        );
    }
    let example_file = write(&s, "example.yaml", &example);
    let (ok, out, err) = s.db.cli(&["diff", "-f", &example_file]);
    assert!(!ok && out.contains("+ page"), "{out} {err}");
}

const PRIVATE: &str = r#"pages:
  - slug: partner
    name: Partner
    isPublic: false
    components:
      - name: Shared
      - name: Acme DB
    access:
      viewers: true
      viewerDomains: [Acme.test]
      allowedNetworks: [198.51.100.7]
    viewers: [Ann@Partner.test]
    audiences:
      - name: Acme
        components: [Acme DB]
        emailDomains: ["@acme.test"]
"#;

/// A page's access, its invited viewers and its audiences live in the
/// file like the rest: made, kept without change, and removed when the
/// file drops them (the access stays: it is part of the page).
async fn who_sees_a_page_is_kept_in_the_file(b: Backend) {
    let s = Server::start(b).await;
    let file = write(&s, "upstate.yaml", PRIVATE);
    let (ok, out, err) = s.db.cli(&["diff", "-f", &file]);
    assert!(!ok, "{err}");
    for line in [
        "+ page partner",
        "+ access partner",
        "+ viewer partner/ann@partner.test",
        "+ audience partner/Acme",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    let (ok, out, err) = s.db.cli(&["apply", "-f", &file]);
    assert!(ok, "{out} {err}");
    let page = s.get("/api/v1/statuspages").await.data(200)[0]["id"]
        .as_i64()
        .expect("the page was made");
    let access = s
        .get(&format!("/api/v1/statuspages/{page}/access"))
        .await
        .data(200);
    assert_eq!(
        access,
        json!({"allowedNetworks": ["198.51.100.7/32"], "viewers": true, "viewerDomains": ["acme.test"], "viewerSso": false})
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{page}/viewers"))
            .await
            .data(200)[0]["email"],
        "ann@partner.test"
    );
    let audiences = s
        .get(&format!("/api/v1/statuspages/{page}/audiences"))
        .await
        .data(200);
    let db =
        s.db.integers("SELECT id FROM components WHERE name = 'Acme DB'")
            .await;
    assert_eq!(audiences[0]["componentIds"], json!(db), "{audiences}");
    assert_eq!(audiences[0]["emailDomains"], json!(["acme.test"]));

    // Written as the server keeps it or not, an unchanged file changes nothing.
    let (ok, out, err) = s.db.cli(&["apply", "-f", &file]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Applied: 0 created, 0 changed, 0 deleted, 0 adopted."),
        "{out}"
    );

    // Dropped from the file: the viewer and the audience go.
    let fewer = PRIVATE
        .split("    viewers: [Ann")
        .next()
        .unwrap_or_default()
        .to_string();
    let file = write(&s, "upstate.yaml", &fewer);
    let (ok, out, err) = s.db.cli(&["apply", "-f", &file]);
    assert!(ok, "{err}");
    for line in [
        "- viewer partner/ann@partner.test",
        "- audience partner/Acme",
    ] {
        assert!(out.contains(line), "{line} in {out}");
    }
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{page}/audiences"))
            .await
            .data(200),
        json!([])
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{page}/viewers"))
            .await
            .data(200),
        json!([])
    );
    assert_eq!(
        s.get(&format!("/api/v1/statuspages/{page}/access"))
            .await
            .data(200)["viewers"],
        true,
        "the access stays"
    );

    // Bad declarations are refused before anything is sent.
    for (text, says) in [
        (
            "pages:\n  - slug: p2\n    name: P\n    viewers: [not-an-email]\n",
            "pages[0] (p2).viewers[0]",
        ),
        (
            "pages:\n  - slug: p2\n    name: P\n    audiences:\n      - name: A\n        components: [Nope]\n",
            "no component \"Nope\" on page p2",
        ),
        (
            "pages:\n  - slug: p2\n    name: P\n    access:\n      allowedNetworks: [nonsense]\n",
            "access.allowedNetworks",
        ),
        (
            "pages:\n  - slug: p2\n    name: P\n    audiences:\n      - name: A\n      - name: A\n",
            "\"A\" is declared twice",
        ),
    ] {
        let bad = write(&s, "bad.yaml", text);
        let (ok, _, err) = s.db.cli(&["apply", "-f", &bad]);
        assert!(!ok, "{text}");
        assert!(err.contains(says), "{says} in {err}");
    }
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM status_pages").await,
        [1],
        "nothing made"
    );
}
