//! Real consumers of the Atlassian Statuspage JSON, pointed at Upstate:
//! the PyPI package statuspage-prometheus-exporter runs its own check of a
//! page's `summary.json` and we read what it concluded.

use crate::on_both_backends;
use crate::support::{Backend, Server, peers, peers_available, root};
use serde_json::{Value, json};

on_both_backends!(statuspage_prometheus_exporter_reads_upstate);

fn exporter_check(url: &str) -> Value {
    let python = peers().join("consumers/venv/bin/python");
    let out = std::process::Command::new(python)
        .arg(root().join("tests/consumers/statuspage_exporter.py"))
        .arg(url)
        .output()
        .expect("run the exporter");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

async fn statuspage_prometheus_exporter_reads_upstate(b: Backend) {
    if !peers_available(
        "statuspage_prometheus_exporter_reads_upstate",
        &[peers().join("consumers/venv/bin/python")],
    ) {
        return;
    }
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let g = s.group(p, "Core").await;
    let api = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "statusPageId": p, "groupId": g, "status": "partial_outage"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.component(p, "Website").await;
    let inc = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": p, "impact": "major",
            "message": "Looking", "componentIds": [api]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let m = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "DB upgrade", "statusPageId": p, "componentIds": [api],
            "scheduledStartTime": "2099-03-01T02:00:00.000Z", "scheduledEndTime": "2099-03-01T04:00:00.000Z"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();

    let url = format!("{}/s/acme/api/v2/summary.json", s.base);
    let r = tokio::task::spawn_blocking(move || exporter_check(&url))
        .await
        .unwrap();
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["status"], 0, "an incident is open: not healthy");
    assert_eq!(r["raw_status"], "major");
    let incident = &r["incident_metadata"][0];
    assert_eq!(incident["id"], inc.to_string());
    assert_eq!(incident["name"], "API errors");
    assert_eq!(incident["impact"], "major");
    assert_eq!(incident["affected_components"], json!(["API"]));
    assert_eq!(
        incident["shortlink"],
        format!("{}/s/acme/incidents/{inc}", s.base)
    );
    let components: Vec<(String, String)> = r["component_metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        components.contains(&("API".into(), "partial_outage".into())),
        "{components:?}"
    );
    assert!(
        components.contains(&("Website".into(), "operational".into())),
        "{components:?}"
    );
    let window = &r["maintenance_metadata"][0];
    assert_eq!(window["id"], m.to_string());
    assert_eq!(window["status"], "scheduled");
    assert_eq!(window["scheduled_start"], "2099-03-01T02:00:00.000Z");
    assert_eq!(window["affected_components"], json!(["API"]));

    // All clear: the exporter sees a healthy page.
    s.post(
        &format!("/api/v1/incidents/{inc}/resolve"),
        json!({"message": "Fixed"}),
    )
    .await
    .data(200);
    s.patch(
        &format!("/api/v1/components/{api}/status"),
        json!({"status": "operational"}),
    )
    .await
    .data(200);
    let url = format!("{}/s/acme/api/v2/summary.json", s.base);
    let r = tokio::task::spawn_blocking(move || exporter_check(&url))
        .await
        .unwrap();
    assert_eq!(
        (r["status"].clone(), r["raw_status"].clone()),
        (json!(1), json!("none")),
        "{r}"
    );
    assert_eq!(r["incident_metadata"], json!([]));
}
