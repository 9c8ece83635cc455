//! `upstate incident …` and `upstate maintenance …` drive a running server
//! through its API with a key, as a script or a chat bot would: what they
//! do shows on the page, `--json` prints the server's answer, and a
//! refusal is the server's own words with a failing exit status.

use crate::on_both_backends;
use crate::support::{Backend, Server};
use serde_json::Value;

on_both_backends!(
    an_incident_is_run_from_the_command_line,
    maintenance_is_scheduled_from_the_command_line
);

async fn an_incident_is_run_from_the_command_line(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let key = s.db.create_key("write");
    let remote = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--server", s.base.as_str(), "--key", key.as_str()]);
        s.db.cli(&all)
    };
    let page_id = page.to_string();
    let component = format!("{api}=major_outage");
    let (ok, out, err) = remote(&[
        "incident",
        "open",
        "--status-page",
        &page_id,
        "--title",
        "API down",
        "--message",
        "Requests fail.",
        "--impact",
        "major",
        "--component",
        &component,
        "--json",
    ]);
    assert!(ok, "{err}");
    let made: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(made["title"], "API down");
    let id = match &made["id"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert_eq!(
        s.db.texts(&format!("SELECT status FROM components WHERE id = {api}"))
            .await,
        ["major_outage"],
        "the component moved"
    );

    let (ok, out, err) = remote(&[
        "incident",
        "update",
        &id,
        "--status",
        "identified",
        "--message",
        "A bad deploy.",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("identified") && out.contains("A bad deploy."),
        "{out}"
    );

    // A line per incident without --json: id, status, impact, time, title.
    let (ok, out, err) = remote(&["incident", "list", "--status-page", &page_id]);
    assert!(ok, "{err}");
    let line = out.lines().next().unwrap_or_default();
    assert!(
        line.starts_with(&format!("{id}\tidentified\tmajor\t")),
        "{out}"
    );
    assert!(line.ends_with("\tAPI down"), "{out}");

    let (ok, out, err) = remote(&["incident", "resolve", &id, "--message", "Rolled back."]);
    assert!(ok, "{err}");
    assert!(out.contains("resolved"), "{out}");
    assert_eq!(
        s.db.texts(&format!("SELECT status FROM components WHERE id = {api}"))
            .await,
        ["operational"]
    );
    let html = reqwest::get(format!("{}/s/acme/history", s.base))
        .await
        .expect("page")
        .text()
        .await
        .expect("text");
    assert!(
        html.contains("API down") && html.contains("Rolled back."),
        "{html}"
    );

    // Refusals: the server's words, a failing status, nothing stored.
    let before = s.db.integers("SELECT COUNT(*) FROM incidents").await;
    let (ok, _, err) = remote(&[
        "incident",
        "open",
        "--status-page",
        &page_id,
        "--title",
        "x",
        "--message",
        "y",
        "--impact",
        "apocalyptic",
    ]);
    assert!(
        !ok && err.contains("422") && err.contains("impact"),
        "{err}"
    );
    let reader = s.db.create_key("read");
    let (ok, _, err) = s.db.cli(&[
        "incident",
        "open",
        "--status-page",
        &page_id,
        "--title",
        "x",
        "--message",
        "y",
        "--server",
        &s.base,
        "--key",
        &reader,
    ]);
    assert!(!ok && err.contains("403"), "{err}");
    let (ok, _, err) = remote(&[
        "incident",
        "update",
        "999999",
        "--status",
        "identified",
        "--message",
        "z",
    ]);
    assert!(!ok && err.contains("404"), "{err}");
    let (ok, _, err) = s.db.cli(&[
        "incident",
        "list",
        "--server",
        &s.base,
        "--key",
        "not-a-key",
    ]);
    assert!(!ok && err.contains("401"), "{err}");
    let (ok, _, err) = remote(&[
        "incident",
        "open",
        "--status-page",
        &page_id,
        "--title",
        "x",
        "--message",
        "y",
        "--component",
        "API",
    ]);
    assert!(!ok && err.contains("--component"), "{err}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM incidents").await,
        before
    );
}

async fn maintenance_is_scheduled_from_the_command_line(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let db_component = s.component(page, "Database").await;
    let key = s.db.create_key("write");
    let page_id = page.to_string();
    let component = db_component.to_string();
    let (ok, out, err) = s.db.cli_with(
        &[
            "maintenance",
            "schedule",
            "--status-page",
            &page_id,
            "--title",
            "Database upgrade",
            "--description",
            "Read-only for an hour.",
            "--start",
            "2030-03-01T02:00:00Z",
            "--end",
            "2030-03-01T03:00:00Z",
            "--component",
            &component,
        ],
        // The server and key from the environment, as a CI job sets them.
        &[
            ("UPSTATE_SERVER", s.base.as_str()),
            ("UPSTATE_API_KEY", key.as_str()),
        ],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("scheduled") && out.contains("Database upgrade"),
        "{out}"
    );
    let (ok, out, err) = s.db.cli_with(
        &[
            "maintenance",
            "list",
            "--status-page",
            &page_id,
            "--upcoming",
            "--json",
        ],
        &[
            ("UPSTATE_SERVER", s.base.as_str()),
            ("UPSTATE_API_KEY", key.as_str()),
        ],
    );
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(listed[0]["title"], "Database upgrade", "{listed}");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM maintenance_components")
            .await,
        [1]
    );
    // An end before the start: refused, said, nothing stored.
    let (ok, _, err) = s.db.cli_with(
        &[
            "maintenance",
            "schedule",
            "--status-page",
            &page_id,
            "--title",
            "Backwards",
            "--start",
            "2030-03-01T03:00:00Z",
            "--end",
            "2030-03-01T02:00:00Z",
        ],
        &[
            ("UPSTATE_SERVER", s.base.as_str()),
            ("UPSTATE_API_KEY", key.as_str()),
        ],
    );
    assert!(!ok && err.contains("422"), "{err}");
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM maintenance").await, [1]);
}
