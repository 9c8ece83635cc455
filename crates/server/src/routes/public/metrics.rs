//! `GET /api/metrics`: Prometheus text exposition (docs/operations.md),
//! written by `metrics-exporter-prometheus` from a fresh recorder each
//! scrape, so a deleted component's series goes with it. Components of
//! private pages are left out; `metrics_token` in the configuration puts
//! the route behind a bearer token.

use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use metrics::{counter, gauge, with_local_recorder};
use metrics_exporter_prometheus::PrometheusBuilder;
use upstate_core::{ComponentStatus, IncidentStatus, MonitorState};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics_text))
}

const DAY_MS: i64 = 86_400_000;

/// Which component a series is of. Labelled by id: two components may share
/// a name on one page ("Web" in group "EU" and in group "US"), and folding
/// their series into one would let an outage hide behind the other.
struct Labels {
    page: String,
    id: String,
    name: String,
    /// The group's name, empty for a component in no group.
    group: String,
}

impl Labels {
    fn of(&self) -> [(&'static str, String); 4] {
        [
            ("page", self.page.clone()),
            ("component_id", self.id.clone()),
            ("component", self.name.clone()),
            ("group", self.group.clone()),
        ]
    }
}

/// Every figure, read now.
struct Figures {
    /// (component, status, uptime over 24 h and 30 d)
    components: Vec<(Labels, ComponentStatus, f64, f64)>,
    /// (page slug, open incidents)
    incidents: Vec<(String, usize)>,
    /// (component, up, latency in seconds)
    monitors: Vec<(Labels, bool, Option<f64>)>,
    deliveries: Vec<(String, i64)>,
    backend: &'static str,
    uptime_seconds: f64,
    /// (pool, open connections, idle ones)
    pools: Vec<(&'static str, u32, usize)>,
    snapshot_builds: u64,
    cache: crate::snapshot::CacheFigures,
    /// Whether the static copy is published, and how the last publish went.
    export: (bool, upstate_core::static_copy::ExportStatus),
    /// Whether rate limits are counted in Redis now (None: not configured).
    shared_limits: Option<bool>,
}

async fn figures(state: &AppState) -> Result<Figures, ApiError> {
    let db = &state.db;
    let now = state.db.clock.now();
    let pages: Vec<_> = upstate_store::pages::list(db)
        .await?
        .into_iter()
        .filter(|p| p.is_public)
        .collect();
    let monitors = upstate_store::monitors::list(db).await?;
    let mut f = Figures {
        components: Vec::new(),
        incidents: Vec::new(),
        monitors: Vec::new(),
        deliveries: upstate_store::deliveries::counts(db).await?,
        backend: match db.backend() {
            upstate_store::Backend::Sqlite => "sqlite",
            upstate_store::Backend::Postgres => "postgres",
        },
        uptime_seconds: state.started.elapsed().as_secs_f64(),
        pools: db.pool_figures(),
        snapshot_builds: state
            .snapshots
            .builds
            .load(std::sync::atomic::Ordering::Relaxed),
        cache: state.snapshots.figures(),
        shared_limits: state.shared_limits.up(),
        export: (
            upstate_store::settings::export_settings(db).await?.enabled,
            upstate_store::settings::export_status(db).await?,
        ),
    };
    // Each page's figures come from its snapshot (what its public reads
    // are served from), so a scrape reads the database only for what no
    // snapshot holds: pages, monitors, deliveries.
    for p in &pages {
        // A page held to some networks is not public: its figures would
        // reach whoever scrapes from anywhere.
        let Some(snap) = state
            .snapshots
            .get(&p.slug)
            .await?
            .filter(|s| !s.data.access.restricted())
        else {
            continue;
        };
        // Components of audience groups are for their members only.
        let snap = snap.seen_without(
            "",
            upstate_core::audience::hidden_from(&snap.data.audiences, &[]),
        );
        let history = upstate_core::uptime::by_component(snap.history(db).await?);
        for c in &snap.data.components {
            let labels = || Labels {
                page: p.slug.clone(),
                id: c.id.to_string(),
                name: c.name.clone(),
                group: c
                    .group_id
                    .and_then(|g| snap.data.groups.iter().find(|x| x.id == g))
                    .map(|g| g.name.clone())
                    .unwrap_or_default(),
            };
            let mine = history.get(&c.id).map_or(&[][..], Vec::as_slice);
            let over = |days: i64| {
                // A percentage; Prometheus speaks ratios. No data yet: up.
                upstate_core::uptime::uptime_between(mine, now.plus_millis(-days * DAY_MS), now)
                    .map_or(1.0, |p| p / 100.0)
            };
            if let Some(m) = monitors.iter().find(|m| m.component_id == c.id)
                && m.state != MonitorState::Unknown
            {
                f.monitors.push((
                    labels(),
                    m.state == MonitorState::Up,
                    m.last_latency_ms.map(|ms| ms as f64 / 1_000.0),
                ));
            }
            f.components.push((labels(), c.status, over(1), over(30)));
        }
        let open = snap
            .data
            .incidents
            .iter()
            .filter(|i| i.status != IncidentStatus::Resolved)
            .count();
        f.incidents.push((p.slug.clone(), open));
    }
    Ok(f)
}

/// The exposition of `f`.
fn render(f: &Figures) -> String {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    with_local_recorder(&recorder, || {
        gauge!("upstate_info", "version" => env!("CARGO_PKG_VERSION"), "backend" => f.backend)
            .set(1.0);
        gauge!("upstate_process_uptime_seconds").set(f.uptime_seconds);
        for (c, status, day, month) in &f.components {
            for s in ComponentStatus::ALL {
                let on = if s == status { 1.0 } else { 0.0 };
                let mut labels = c.of().to_vec();
                labels.push(("status", s.as_str().to_string()));
                gauge!("upstate_component_status", &labels).set(on);
            }
            for (window, ratio) in [("24h", day), ("30d", month)] {
                let mut labels = c.of().to_vec();
                labels.push(("window", window.to_string()));
                gauge!("upstate_component_uptime_ratio", &labels).set(*ratio);
            }
        }
        for (page, open) in &f.incidents {
            gauge!("upstate_open_incidents", "page" => page.clone()).set(*open as f64);
        }
        for (c, up, latency) in &f.monitors {
            gauge!("upstate_monitor_up", &c.of()).set(if *up { 1.0 } else { 0.0 });
            if let Some(s) = latency {
                gauge!("upstate_monitor_latency_seconds", &c.of()).set(*s);
            }
        }
        for state in ["pending", "delivered", "given_up"] {
            let n = f
                .deliveries
                .iter()
                .find(|(s, _)| s == state)
                .map_or(0, |(_, n)| *n);
            gauge!("upstate_deliveries", "status" => state).set(n as f64);
        }
        for (pool, open, idle) in &f.pools {
            gauge!("upstate_db_connections", "pool" => *pool, "state" => "idle").set(*idle as f64);
            gauge!("upstate_db_connections", "pool" => *pool, "state" => "busy")
                .set(f64::from(*open) - *idle as f64);
        }
        counter!("upstate_snapshot_builds_total").absolute(f.snapshot_builds);
        gauge!("upstate_snapshot_pages").set(f.cache.pages as f64);
        gauge!("upstate_snapshot_bytes").set(f.cache.bytes as f64);
        if let Some(up) = f.shared_limits {
            gauge!("upstate_shared_limits_up").set(if up { 1.0 } else { 0.0 });
        }
        let (publishing, status) = &f.export;
        gauge!("upstate_static_copy_enabled").set(if *publishing { 1.0 } else { 0.0 });
        if *publishing {
            let secs = |t: Option<upstate_core::Timestamp>| t.map(|t| t.millis() as f64 / 1_000.0);
            if let Some(at) = secs(status.last_published_at) {
                gauge!("upstate_static_copy_last_success_timestamp_seconds").set(at);
            }
            if let Some(at) = secs(status.last_attempt_at) {
                gauge!("upstate_static_copy_last_attempt_timestamp_seconds").set(at);
            }
            gauge!("upstate_static_copy_failing").set(if status.last_error.is_some() {
                1.0
            } else {
                0.0
            });
            gauge!("upstate_static_copy_files").set(status.files as f64);
        }
    });
    handle.render()
}

#[utoipa::path(get, path = "/api/metrics", tag = "operations", operation_id = "metrics",
    summary = "Prometheus metrics: component status and uptime, open incidents, monitors and their check times, requests by route family, the delivery queue, snapshots, the database pool",
    description = "Text exposition format 0.0.4. Public pages only (not those held to some networks). With `metrics_token` configured, send it as a bearer token.",
    responses((status = 200, description = "The exposition", content_type = "text/plain", body = String),
        (status = 401, description = "A token is configured and was not sent", body = crate::openapi::Problem)),
    security(()))]
async fn metrics_text(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = &state.settings.metrics_token {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let right = sent.is_some_and(|s| {
            use sha2::Digest;
            // Compared as digests, so the time taken says nothing of the token.
            sha2::Sha256::digest(s.as_bytes()) == sha2::Sha256::digest(token.0.as_bytes())
        });
        if !right {
            return ApiError::Unauthorized("send the metrics token as a bearer token".into())
                .into_response();
        }
    }
    match figures(&state).await {
        Ok(f) => (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            render(&f) + &state.telemetry.render(),
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}
