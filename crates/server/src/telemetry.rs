//! What this process counts as it runs, for `/api/metrics`: requests by
//! route family and status class with their durations, and the monitor
//! checks it made with their latencies. Kept in one long-lived
//! `metrics-exporter-prometheus` recorder (not the global one: several
//! servers may share a process in tests); the figures read from the
//! database at each scrape are rendered beside it.
//!
//! Per instance, as Prometheus expects: with several instances, scrape each
//! and sum.

use metrics::{Counter, Histogram, counter, histogram, with_local_recorder};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use std::sync::{Arc, OnceLock};
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
    /// Each series' handle, registered on its first request: looking one
    /// up by its labels built a key and hashed it on every request, a
    /// cost on the public read path that a handle does not have. A series
    /// appears in the exposition once it has counted something, as before.
    requests: [[OnceLock<Counter>; CLASSES.len()]; FAMILIES],
    durations: [OnceLock<Histogram>; FAMILIES],
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
            requests: [const { [const { OnceLock::new() }; CLASSES.len()] }; FAMILIES],
            durations: [const { OnceLock::new() }; FAMILIES],
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

    pub fn request(&self, family: Family, status: u16, seconds: f64) {
        let (f, c) = (family as usize, class_of(status));
        self.requests[f][c]
            .get_or_init(|| {
                with_local_recorder(&self.recorder, || {
                    counter!("upstate_http_requests_total", "family" => family.name(), "status" => CLASSES[c])
                })
            })
            .increment(1);
        self.durations[f]
            .get_or_init(|| {
                with_local_recorder(
                    &self.recorder,
                    || histogram!("upstate_http_request_duration_seconds", "family" => family.name()),
                )
            })
            .record(seconds);
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

/// The status classes, in `class_of`'s order.
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

fn class_of(status: u16) -> usize {
    match status {
        100..=199 => 0,
        200..=299 => 1,
        300..=399 => 2,
        400..=499 => 3,
        _ => 4,
    }
}

/// Which part of Upstate a path belongs to: few values, so the series stay
/// few whatever visitors ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Assets,
    Badge,
    Widget,
    Feed,
    PublicApi,
    PublicPage,
    ApiV1,
    ApiV2,
    Admin,
    Operations,
    App,
    Other,
}

/// How many families there are: the handles' table has a row for each.
const FAMILIES: usize = Family::Other as usize + 1;

impl Family {
    pub fn of(p: &str) -> Family {
        if p.starts_with("/assets/") || p == "/sw.js" || p == "/favicon.ico" {
            Family::Assets
        } else if p.starts_with("/api/badge") {
            Family::Badge
        } else if p.starts_with("/api/widget") {
            Family::Widget
        } else if p.starts_with("/api/feed") || p.starts_with("/api/calendar") {
            Family::Feed
        } else if p.starts_with("/s/") && p.contains("/api/v2/")
            || p.starts_with("/api/v2/") && p.ends_with(".json")
            || p.starts_with("/api/v1/public/")
            || p.starts_with("/api/public/")
            || p == "/api/v1/status"
        {
            Family::PublicApi
        } else if p.starts_with("/s/") || p == "/" || p == "/events" {
            Family::PublicPage
        } else if p.starts_with("/api/v1/") {
            Family::ApiV1
        } else if p.starts_with("/api/v2/") {
            Family::ApiV2
        } else if p.starts_with("/admin") {
            Family::Admin
        } else if p == "/api/health" || p == "/api/metrics" || p == "/api/selftest" {
            Family::Operations
        } else if p.starts_with("/api/") {
            Family::App
        } else {
            Family::Other
        }
    }

    /// The `family` label.
    pub fn name(self) -> &'static str {
        match self {
            Family::Assets => "assets",
            Family::Badge => "badge",
            Family::Widget => "widget",
            Family::Feed => "feed",
            Family::PublicApi => "public_api",
            Family::PublicPage => "public_page",
            Family::ApiV1 => "api_v1",
            Family::ApiV2 => "api_v2",
            Family::Admin => "admin",
            Family::Operations => "operations",
            Family::App => "app",
            Family::Other => "other",
        }
    }
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
            assert_eq!(Family::of(path).name(), f, "{path}");
        }
        assert_eq!(CLASSES[class_of(204)], "2xx");
        assert_eq!(CLASSES[class_of(503)], "5xx");
    }
}
