//! What this process counts as it runs, for `/api/metrics`: requests by
//! route family and status class with their durations, and the monitor
//! checks it made with their latencies. Kept in one long-lived
//! `metrics-exporter-prometheus` recorder (not the global one: several
//! servers may share a process in tests); the figures read from the
//! database at each scrape are rendered beside it.
//!
//! Per instance, as Prometheus expects: with several instances, scrape each
//! and sum.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{counter, histogram, with_local_recorder};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use std::sync::Arc;
use std::time::Instant;
use upstate_core::monitors::CheckResult;
use upstate_core::{Id, MonitorKind};

/// Prometheus's default buckets, in seconds.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How often the histograms' samples are folded into their buckets.
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

pub struct Telemetry {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
}

impl Telemetry {
    pub fn new() -> Arc<Telemetry> {
        let builder = PrometheusBuilder::new();
        let builder = match builder.set_buckets(&BUCKETS) {
            Ok(b) => b,
            Err(_) => PrometheusBuilder::new(),
        };
        let recorder = builder.build_recorder();
        let telemetry = Arc::new(Telemetry {
            handle: recorder.handle(),
            recorder,
        });
        // Histograms keep every sample until upkeep drains them into their
        // buckets; a scrape runs it, but nothing says anyone scrapes. Without
        // this, memory grows with every request served (about 20 bytes
        // each). The exporter's own installer runs it on the same period.
        let weak = Arc::downgrade(&telemetry);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UPKEEP_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(t) => t.handle.run_upkeep(),
                    None => break,
                }
            }
        });
        telemetry
    }

    pub fn request(&self, family: &'static str, status: u16, seconds: f64) {
        with_local_recorder(&self.recorder, || {
            counter!("upstate_http_requests_total", "family" => family, "status" => class(status))
                .increment(1);
            histogram!("upstate_http_request_duration_seconds", "family" => family).record(seconds);
        });
    }

    /// This process's exposition.
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        self.handle.render()
    }
}

impl upstate_jobs::monitors::Observe for Telemetry {
    fn check(&self, component: Id, kind: MonitorKind, r: &CheckResult, late_ms: i64) {
        with_local_recorder(&self.recorder, || {
            histogram!("upstate_monitor_check_lateness_seconds").record(late_ms as f64 / 1_000.0);
            let id = component.to_string();
            let result = if r.ok { "up" } else { "down" };
            counter!("upstate_monitor_checks_total", "component_id" => id.clone(), "result" => result)
                .increment(1);
            if let Some(ms) = r.latency_ms {
                histogram!("upstate_monitor_check_duration_seconds", "component_id" => id, "kind" => kind.as_str())
                    .record(ms as f64 / 1_000.0);
            }
        });
    }
}

fn class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// Which part of Upstate a path belongs to: few values, so the series stay
/// few whatever visitors ask for.
pub fn family(path: &str) -> &'static str {
    let p = path;
    if p.starts_with("/assets/") || p == "/sw.js" || p == "/favicon.ico" {
        "assets"
    } else if p.starts_with("/api/badge") {
        "badge"
    } else if p.starts_with("/api/widget") {
        "widget"
    } else if p.starts_with("/api/feed") || p.starts_with("/api/calendar") {
        "feed"
    } else if p.starts_with("/s/") && p.contains("/api/v2/")
        || p.starts_with("/api/v2/") && p.ends_with(".json")
        || p.starts_with("/api/v1/public/")
        || p.starts_with("/api/public/")
        || p == "/api/v1/status"
    {
        "public_api"
    } else if p.starts_with("/s/") || p == "/" || p == "/events" {
        "public_page"
    } else if p.starts_with("/api/v1/") {
        "api_v1"
    } else if p.starts_with("/api/v2/") {
        "api_v2"
    } else if p.starts_with("/admin") {
        "admin"
    } else if p == "/api/health" || p == "/api/metrics" || p == "/api/selftest" {
        "operations"
    } else if p.starts_with("/api/") {
        "app"
    } else {
        "other"
    }
}

/// Counts every request by family and status class, and times it.
pub async fn count(State(t): State<Arc<Telemetry>>, req: Request, next: Next) -> Response {
    // The static copy's requests are the service asking itself, not traffic.
    if req
        .extensions()
        .get::<crate::static_copy::StaticCopy>()
        .is_some()
    {
        return next.run(req).await;
    }
    let family = family(req.uri().path());
    let started = Instant::now();
    let response = next.run(req).await;
    t.request(
        family,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fall_in_few_families() {
        for (path, f) in [
            ("/s/acme", "public_page"),
            ("/s/acme/api/v2/summary.json", "public_api"),
            ("/api/v2/summary.json", "public_api"),
            ("/api/v1/public/acme", "public_api"),
            ("/api/v1/incidents", "api_v1"),
            ("/api/v2/metrics", "api_v2"),
            ("/api/monitors", "app"),
            ("/api/badge/acme.svg", "badge"),
            ("/assets/status.css", "assets"),
            ("/admin/monitors", "admin"),
            ("/api/metrics", "operations"),
            ("/wp-login.php", "other"),
        ] {
            assert_eq!(family(path), f, "{path}");
        }
        assert_eq!(class(204), "2xx");
        assert_eq!(class(503), "5xx");
    }
}
