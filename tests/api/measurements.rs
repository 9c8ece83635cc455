//! A component's measurements from real checks of a local target: the
//! response-time series in each resolution agree with the checks made
//! (counts, failures, latencies a slow answer set), bad queries are refused,
//! and a reset starts the figures over while the monitor goes on.

use crate::harness::TestApp;
use crate::on_both_backends;
use crate::receiver::{Plan, Receiver};
use crate::support::Backend;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use upstate_core::Timestamp;

on_both_backends!(
    response_times_come_in_every_resolution,
    bad_queries_are_refused,
    a_reset_starts_the_figures_over
);
on_both_backends!(browser: the_public_page_charts_response_times);

const STEP: Duration = Duration::from_secs(30);

/// A component watched every 30 s (no retries) of a fresh page; (app,
/// receiver, component id).
async fn watched(b: Backend) -> (TestApp, Receiver, Value) {
    let rx = Receiver::start().await;
    let app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    app.data(
        Method::POST,
        "/api/monitors",
        Some(
            json!({"componentId": api, "target": format!("{}/health", rx.base),
                    "intervalSeconds": 30, "retries": 0}),
        ),
        201,
    )
    .await;
    (app, rx, api)
}

/// Runs `n` checks 30 s apart (the first at once).
async fn checks(app: &mut TestApp, n: usize) {
    for i in 0..n {
        if i > 0 {
            app.advance_to_next_check(STEP).await;
        }
        assert_eq!(app.run_monitors().await, 1, "check {i} was due");
    }
}

fn window(from: Timestamp, to: Timestamp) -> String {
    format!(
        "from={}&to={}",
        urlencode(&from.plus_millis(-1_000).to_rfc3339()),
        urlencode(&to.plus_millis(1_000).to_rfc3339())
    )
}

fn urlencode(s: &str) -> String {
    s.replace(':', "%3A").replace('+', "%2B")
}

fn sum_checks(points: &Value) -> i64 {
    points
        .as_array()
        .expect("points")
        .iter()
        .map(|p| p["checks"].as_i64().expect("checks"))
        .sum()
}

async fn response_times_come_in_every_resolution(b: Backend) {
    let (mut app, rx, api) = watched(b).await;
    // Six quick answers, one slow, one failure.
    rx.plan(std::iter::repeat_n(Plan::Slow(0), 6).chain([Plan::Slow(400), Plan::Status(503)]));
    let start = app.now();
    checks(&mut app, 8).await;
    let span = window(start, app.now());
    let series = |resolution: &str| {
        let path = format!("/api/components/{api}/response-times?resolution={resolution}&{span}");
        let app = &app;
        async move { app.data(Method::GET, &path, None, 200).await }
    };

    let raw = series("raw").await;
    assert_eq!(raw["resolution"], "raw");
    assert_eq!(raw["points"].as_array().map(Vec::len), Some(8), "{raw}");
    let s = &raw["summary"];
    assert_eq!(
        (s["checks"].as_i64(), s["failures"].as_i64()),
        (Some(8), Some(1))
    );
    assert_eq!(s["uptime"], 87.5);
    let max = s["maxMs"].as_i64().expect("maxMs");
    assert!((400..3_000).contains(&max), "the slow answer: {s}");
    assert!(s["p50Ms"].as_i64().expect("p50") < 200, "{s}");
    assert_eq!(
        s["p99Ms"].as_i64(),
        Some(max),
        "nearest rank of 8 is the slowest"
    );
    assert_eq!(raw["points"][7]["failures"], 1, "the last check failed");

    for resolution in ["minute", "hour", "day"] {
        let r = series(resolution).await;
        assert_eq!(r["resolution"], resolution);
        assert_eq!(sum_checks(&r["points"]), 8, "{resolution}: {r}");
        let s = &r["summary"];
        assert_eq!(
            (s["checks"].as_i64(), s["failures"].as_i64()),
            (Some(8), Some(1))
        );
        assert_eq!(s["maxMs"].as_i64(), Some(max), "{resolution}");
        let p99 = s["p99Ms"].as_i64().expect("p99");
        assert!(
            p99 > 250 && p99 <= max,
            "{resolution}: p99 {p99} in the slow bucket"
        );
        assert!(s["p50Ms"].as_i64().expect("p50") < 100, "{resolution}: {s}");
    }
    let minutes = series("minute").await["points"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert!(
        (4..=5).contains(&minutes),
        "3.5 minutes of checks: {minutes}"
    );

    // The API-key world's figures carry the same checks.
    let v2 = app
        .data(Method::GET, "/api/v2/metrics?days=1", None, 200)
        .await;
    let mine = v2
        .as_array()
        .and_then(|all| all.iter().find(|c| c["componentId"] == api))
        .cloned()
        .expect("the component in /api/v2/metrics");
    assert_eq!(mine["responseTime"]["checks"], 8, "{mine}");
    assert_eq!(mine["responseTime"]["maxMs"].as_i64(), Some(max));
    assert!(mine["latencyMs"].as_f64().unwrap_or(0.0) > 0.0, "{mine}");
    assert_eq!(mine["monitorState"], "down", "the last check failed");

    // Defaults: the hour resolution, a window ending now.
    let d = app
        .data(
            Method::GET,
            &format!("/api/components/{api}/response-times"),
            None,
            200,
        )
        .await;
    assert_eq!(d["resolution"], "hour");
    assert!(d["monitorId"].is_i64());

    // A component without a monitor has no points.
    let page = app.page("other").await;
    let quiet = app.component(&page, "Quiet").await;
    let q = app
        .data(
            Method::GET,
            &format!("/api/components/{quiet}/response-times?resolution=raw"),
            None,
            200,
        )
        .await;
    assert_eq!(
        (q["monitorId"].clone(), q["points"].clone()),
        (Value::Null, json!([]))
    );
    assert_eq!(q["summary"]["checks"], 0);
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

async fn bad_queries_are_refused(b: Backend) {
    let (mut app, _rx, api) = watched(b).await;
    checks(&mut app, 2).await;
    let before = app
        .test_db
        .integers("SELECT COUNT(*) FROM monitor_stats")
        .await;
    for (query, field) in [
        ("resolution=week", "resolution"),
        ("from=yesterday", "from"),
        ("to=2026-13-01T00:00:00.000Z", "to"),
        (
            "from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00.000Z",
            "from",
        ),
    ] {
        let (status, body) = app
            .send(
                Method::GET,
                &format!("/api/components/{api}/response-times?{query}"),
                None,
            )
            .await;
        assert_eq!(status, 422, "{query}: {body}");
        let fields: Vec<&str> = body["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|x| x["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(fields.contains(&field), "{query}: {body}");
    }
    for (method, path) in [
        (Method::GET, "/api/components/999999/response-times"),
        (Method::POST, "/api/components/999999/reset-stats"),
    ] {
        let (status, body) = app.send(method, path, None).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["status"], 404, "a problem document: {body}");
    }
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_stats")
            .await,
        before,
        "nothing was deleted"
    );
}

async fn a_reset_starts_the_figures_over(b: Backend) {
    let (mut app, rx, api) = watched(b).await;
    rx.plan([Plan::Slow(0), Plan::Status(503), Plan::Slow(0)]);
    checks(&mut app, 3).await;
    let history =
        format!("SELECT COUNT(*) FROM component_status_history WHERE component_id = {api}");
    assert!(
        app.test_db.integers(&history).await[0] >= 3,
        "operational, down, back"
    );

    let done = app
        .data(
            Method::POST,
            &format!("/api/components/{api}/reset-stats"),
            None,
            200,
        )
        .await;
    assert_eq!(done["checks"], 3, "{done}");
    assert!(done["stats"].as_i64().expect("stats") >= 3, "{done}");
    assert!(done["history"].as_i64().expect("history") >= 3, "{done}");
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_checks")
            .await,
        [0]
    );
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM monitor_stats")
            .await,
        [0]
    );
    assert_eq!(
        app.test_db.integers(&history).await,
        [1],
        "the current status, from now"
    );
    assert_eq!(
        app.test_db
            .integers("SELECT COUNT(*) FROM audit_events WHERE action = 'component.reset_stats'")
            .await,
        [1]
    );
    let details = app.details(&api).await;
    assert_eq!(details["lastChecks"], json!([]));
    assert_eq!(details["recentChanges"].as_array().map(Vec::len), Some(1));

    // The monitor goes on, and its figures grow again.
    let from = app.now();
    app.advance_to_next_check(STEP).await;
    assert_eq!(app.run_monitors().await, 1);
    let r = app
        .data(
            Method::GET,
            &format!(
                "/api/components/{api}/response-times?resolution=minute&{}",
                window(from, app.now())
            ),
            None,
            200,
        )
        .await;
    assert_eq!(r["summary"]["checks"], 1, "{r}");
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

/// A day of hourly checks, recorded through the store's own path as the
/// runner records them (the harness clock cannot reach the past).
async fn a_day_of_checks(app: &TestApp, monitor: i64) {
    let now = Timestamp::now();
    for h in (0..24).rev() {
        for k in 0..4 {
            let at = now.plus_millis(-(h * 3_600_000 + k * 900_000) - 60_000);
            let ms = 60 + (h * 37 % 90) + if h == 7 { 400 } else { 0 } + k * 5;
            let r = upstate_core::monitors::CheckResult {
                at,
                ok: !(h == 7 && k == 0),
                latency_ms: Some(ms),
                status_code: Some(200),
                error: None,
                cert_expires_at: None,
            };
            upstate_store::monitors::record(
                &app.db,
                monitor,
                None,
                &r,
                now.plus_millis(60_000),
                &upstate_core::monitors::IncidentWords::in_lang(upstate_core::i18n::Lang::En),
            )
            .await
            .expect("record");
        }
    }
}

async fn the_public_page_charts_response_times(b: Backend) {
    let (app, _rx, api) = watched(b).await;
    let page = app
        .data(Method::GET, "/api/v1/statuspages", None, 200)
        .await[0]["id"]
        .clone();
    app.component(&page, "Docs").await;
    let monitor = app.data(Method::GET, "/api/monitors", None, 200).await[0]["id"]
        .as_i64()
        .expect("monitor id");
    a_day_of_checks(&app, monitor).await;
    let html = |query: &'static str| {
        let url = format!("{}/s/acme{query}", app.base);
        async move {
            reqwest::get(url)
                .await
                .expect("page")
                .text()
                .await
                .expect("html")
        }
    };
    assert!(
        !html("").await.contains("class=\"rt\""),
        "no charts until the page asks for them"
    );
    let changed = app
        .data(
            Method::PATCH,
            &format!("/api/v1/statuspages/{page}"),
            Some(json!({"showResponseTimes": true})),
            200,
        )
        .await;
    assert_eq!(changed["showResponseTimes"], true);

    let shown = html("").await;
    assert_eq!(
        shown.matches("<figure class=\"rt\">").count(),
        1,
        "only the monitored component"
    );
    let chart = &shown[shown.find("<figure class=\"rt\">").expect("chart")..];
    let chart = &chart[..chart.find("</figure>").expect("end")];
    assert!(
        chart.contains("<svg") && chart.contains("class=\"avg\""),
        "{chart}"
    );
    assert!(
        chart.contains("aria-label=\"Response time, last 24 hours: average "),
        "{chart}"
    );
    let within = app
        .data(
            Method::GET,
            &format!("/api/components/{api}/response-times?resolution=hour"),
            None,
            200,
        )
        .await;
    let avg = within["summary"]["avgMs"].as_i64().expect("avg");
    assert!(avg > 60, "{within}");
    assert!(
        html("?lang=fr")
            .await
            .contains("Temps de réponse, dernières 24 heures")
    );

    if crate::browser::browser_available("the_public_page_charts_response_times") {
        let d = crate::browser::Driver::start(&[]).await;
        d.c()
            .goto(&format!("{}/s/acme", app.base))
            .await
            .expect("goto");
        let shape = d
            .js("const s = document.querySelector('.rt svg').getBoundingClientRect(); return [s.width, s.height]")
            .await;
        assert!(
            shape[0].as_f64().unwrap_or(0.0) > 300.0,
            "the chart spans the card: {shape}"
        );
        d.js("window.scrollTo(0, document.querySelector('.comp').getBoundingClientRect().top + window.scrollY - 8)")
            .await;
        d.screenshot(&format!(
            "public/response-times-{}",
            if b == Backend::Sqlite {
                "sqlite"
            } else {
                "postgres"
            }
        ))
        .await;
        d.quit().await;
    }

    app.data(
        Method::PATCH,
        &format!("/api/v1/statuspages/{page}"),
        Some(json!({"showResponseTimes": false})),
        200,
    )
    .await;
    assert!(!html("").await.contains("class=\"rt\""), "switched off");
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}
