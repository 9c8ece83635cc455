//! Readiness (`/api/health?ready`) and the self-test (`/api/selftest`)
//! against the real binary: every check passes on a healthy server (with a
//! real SMTP relay), and each fault shows as the failing check and a 503.

use crate::on_both_backends;
use crate::smtp::SmtpSink;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::Value;

on_both_backends!(
    a_healthy_server_is_ready_and_passes_its_self_test,
    faults_show_as_failing_checks,
    metrics_parse_with_the_prometheus_client,
);

fn names(report: &Value) -> Vec<String> {
    report["data"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// An exposition as Prometheus's own Python client reads it.
fn prometheus_samples(text: &str) -> Vec<Value> {
    let parsed = crate::support::consumer(
        "metrics_parse_with_the_prometheus_client",
        "parse_prometheus.py",
        text.as_bytes(),
    )
    .expect("the peers are installed");
    serde_json::from_value(parsed).unwrap_or_default()
}

/// The public API's requests of one status class in parsed samples (none
/// counted yet: no series).
fn public_reads(samples: &[Value], class: &str) -> f64 {
    samples
        .iter()
        .find(|s| {
            s["name"] == "upstate_http_requests_total"
                && s["labels"]["family"] == "public_api"
                && s["labels"]["status"] == class
        })
        .map_or(0.0, |s| s["value"].as_f64().unwrap_or(0.0))
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["data"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

async fn a_healthy_server_is_ready_and_passes_its_self_test(b: Backend) {
    let Some(sink) = SmtpSink::start("a_healthy_server_is_ready_and_passes_its_self_test") else {
        return;
    };
    let s = sink.server(b).await;
    let ready = s.send(Method::GET, "/api/health?ready", None, None).await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.body["status"], "ready");
    assert_eq!(ready.body["migrations"], "current");

    let anonymous = s.send(Method::GET, "/api/selftest", None, None).await;
    assert_eq!(anonymous.status, 401);

    // The loops beat after their first round, moments after start.
    let mut report = Value::Null;
    for _ in 0..50 {
        report = s.get("/api/selftest").await.body;
        if report["data"]["ok"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(report["data"]["ok"], true, "{report}");
    let mut want = vec![
        "database",
        "migrations",
        "scheduler",
        "deliveries",
        "monitors",
        "smtp",
    ];
    if b == Backend::Sqlite {
        want.push("disk");
    }
    assert_eq!(names(&report), want);
    for c in report["data"]["checks"].as_array().unwrap() {
        assert!(c["ms"].is_u64(), "{c}");
        assert!(!c["detail"].as_str().unwrap().is_empty(), "{c}");
    }
    assert_eq!(check(&report, "smtp")["detail"], "the relay answered");

    // The System screen shows the same checks.
    s.db.user_with("ad@example.com", "admin", "correct horse battery staple");
    let ad = crate::support::Browser::login(&s, "ad@example.com", "correct horse battery staple")
        .await
        .unwrap_or_else(|_| panic!("admin signs in"));
    let html = ad.screen("/admin/system").await;
    assert!(
        html.contains("Self-test") && html.contains("All passed"),
        "{html}"
    );
    assert!(html.contains("the relay answered"));
}

async fn faults_show_as_failing_checks(b: Backend) {
    // A relay nobody answers on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("smtp://127.0.0.1:{closed}");
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_SMTP_URL", url.as_str()),
            ("UPSTATE_SMTP_FROM", "Status <status@example.com>"),
        ],
    )
    .await;
    let report = s.get("/api/selftest").await;
    assert_eq!(report.status, 503, "{}", report.body);
    assert_eq!(report.body["data"]["ok"], false);
    let smtp = check(&report.body, "smtp");
    assert_eq!(smtp["ok"], false);
    assert!(
        smtp["detail"]
            .as_str()
            .unwrap()
            .contains("cannot reach the relay"),
        "{smtp}"
    );
    assert_eq!(check(&report.body, "database")["ok"], true);

    // A database one migration behind this build: not ready.
    let latest =
        s.db.integers("SELECT MAX(version) FROM _sqlx_migrations")
            .await[0];
    s.db.execute(&format!(
        "DELETE FROM _sqlx_migrations WHERE version = {latest}"
    ))
    .await;
    let ready = s.send(Method::GET, "/api/health?ready", None, None).await;
    assert_eq!(ready.status, 503);
    assert_eq!(ready.body["migrations"], "behind");
    assert_eq!(ready.body["needed"], latest);
    let live = s.send(Method::GET, "/api/health", None, None).await;
    assert_eq!(live.status, 200, "liveness does not care");
    let report = s.get("/api/selftest").await.body;
    let m = check(&report, "migrations");
    assert_eq!(m["ok"], false);
    assert!(
        m["detail"].as_str().unwrap().contains("this build needs"),
        "{m}"
    );
}

/// `/api/metrics` read by the official Prometheus client's parser: the
/// component's status and uptime, open incidents, monitors and the delivery
/// queue; private pages left out; behind a bearer token when configured.
async fn metrics_parse_with_the_prometheus_client(b: Backend) {
    if !crate::support::peers_available(
        "metrics_parse_with_the_prometheus_client",
        &[crate::support::peers().join("consumers/venv/bin/python")],
    ) {
        return;
    }
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_METRICS_TOKEN", "scrape-secret"),
            ("UPSTATE_MONITOR_ALLOW", "127.0.0.1"),
        ],
    )
    .await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let website = s.component(page, "Website").await;
    // A monitor the server's own loop runs, so its checks are counted.
    let rx = crate::receiver::Receiver::start().await;
    s.post(
        "/api/monitors",
        serde_json::json!({"componentId": website, "target": format!("{}/", rx.base)}),
    )
    .await
    .data(201);
    rx.wait_for(1, std::time::Duration::from_secs(10)).await;
    let public = reqwest::get(format!("{}/s/acme", s.base)).await.unwrap();
    assert_eq!(public.status(), 200);
    let hidden = s.page("internal").await;
    s.patch(
        &format!("/api/v1/statuspages/{hidden}"),
        serde_json::json!({"isPublic": false}),
    )
    .await
    .data(200);
    s.component(hidden, "Secret thing").await;
    // Two components of one name in two groups: each has its own series.
    let eu = s.group(page, "EU").await;
    let us = s.group(page, "US").await;
    let mut webs = Vec::new();
    for (g, status) in [(eu, "major_outage"), (us, "operational")] {
        webs.push(
            s.post(
                "/api/v1/components",
                serde_json::json!({"name": "Web", "statusPageId": page, "groupId": g, "status": status}),
            )
            .await
            .data(201)["id"]
                .as_i64()
                .unwrap(),
        );
    }
    s.post(
        "/api/v1/incidents",
        serde_json::json!({"title": "Slow API", "statusPageId": page, "impact": "minor", "message": "Looking",
            "componentStatuses": [{"componentId": api, "status": "degraded"}]}),
    )
    .await
    .data(201);

    let client = reqwest::Client::new();
    let url = format!("{}/api/metrics", s.base);
    assert_eq!(client.get(&url).send().await.unwrap().status(), 401);
    let wrong = client.get(&url).bearer_auth("guess").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    let r = client
        .get(&url)
        .bearer_auth("scrape-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = r.text().await.unwrap();
    assert!(!text.contains("Secret thing"), "private pages stay out");

    let samples = prometheus_samples(&text);
    let find = |name: &str, labels: &[(&str, &str)]| -> f64 {
        samples
            .iter()
            .find(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
            .unwrap_or_else(|| panic!("no {name} {labels:?} in\n{text}"))["value"]
            .as_f64()
            .unwrap()
    };
    let api_is = |status| {
        find(
            "upstate_component_status",
            &[("page", "acme"), ("component", "API"), ("status", status)],
        )
    };
    assert_eq!(api_is("degraded"), 1.0);
    for (id, group, down) in [(webs[0], "EU", 1.0), (webs[1], "US", 0.0)] {
        let id = id.to_string();
        assert_eq!(
            find(
                "upstate_component_status",
                &[
                    ("component_id", &id),
                    ("component", "Web"),
                    ("group", group),
                    ("status", "major_outage")
                ],
            ),
            down,
            "{group}"
        );
    }
    assert_eq!(api_is("operational"), 0.0);
    assert_eq!(find("upstate_open_incidents", &[("page", "acme")]), 1.0);
    let uptime = find(
        "upstate_component_uptime_ratio",
        &[("component", "Website"), ("window", "30d")],
    );
    assert!((0.0..=1.0).contains(&uptime), "{uptime}");
    assert_eq!(find("upstate_deliveries", &[("status", "given_up")]), 0.0);
    assert_eq!(find("upstate_info", &[]), 1.0);

    // What the process counted: requests by family and status class, their
    // durations, the monitor's checks, snapshot builds, the database pool.
    assert!(
        find(
            "upstate_http_requests_total",
            &[("family", "api_v1"), ("status", "2xx")]
        ) >= 4.0
    );
    assert!(
        find(
            "upstate_http_requests_total",
            &[("family", "operations"), ("status", "4xx")]
        ) >= 2.0,
        "the refused scrapes"
    );
    assert!(find("upstate_http_requests_total", &[("family", "public_page")]) >= 1.0);
    // Each request counts once in its own series, whose handle is kept
    // after its first use: three public reads and one refused after this
    // scrape move their two series by exactly that.
    let (ok_before, refused_before) =
        (public_reads(&samples, "2xx"), public_reads(&samples, "4xx"));
    for (slug, status) in [("acme", 200), ("acme", 200), ("acme", 200), ("nope", 404)] {
        let r = client
            .get(format!("{}/api/public/status/{slug}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{slug}");
    }
    let again = client
        .get(&url)
        .bearer_auth("scrape-secret")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let after = prometheus_samples(&again);
    assert_eq!(public_reads(&after, "2xx"), ok_before + 3.0, "{again}");
    assert_eq!(public_reads(&after, "4xx"), refused_before + 1.0, "{again}");
    assert!(
        find(
            "upstate_http_request_duration_seconds_count",
            &[("family", "api_v1")]
        ) >= 4.0
    );
    assert!(
        find(
            "upstate_http_request_duration_seconds_bucket",
            &[("family", "api_v1"), ("le", "+Inf")]
        ) >= 4.0
    );
    let website = website.to_string();
    assert!(
        find(
            "upstate_monitor_checks_total",
            &[("component_id", website.as_str()), ("result", "up")]
        ) >= 1.0
    );
    assert!(
        find(
            "upstate_monitor_check_duration_seconds_count",
            &[("component_id", website.as_str()), ("kind", "http")]
        ) >= 1.0
    );
    assert!(find("upstate_monitor_check_lateness_seconds_count", &[]) >= 1.0);
    assert!(
        find(
            "upstate_monitor_check_lateness_seconds_bucket",
            &[("le", "+Inf")]
        ) >= 1.0
    );
    assert!(find("upstate_snapshot_builds_total", &[]) >= 1.0);
    assert!(find("upstate_snapshot_pages", &[]) >= 1.0);
    let pool = if b == Backend::Sqlite { "read" } else { "main" };
    assert!(
        find(
            "upstate_db_connections",
            &[("pool", pool), ("state", "idle")]
        ) >= 0.0
    );
}
