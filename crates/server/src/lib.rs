//! Upstate's HTTP server: the axum application and its lifecycle.

mod accept;
pub mod app;
mod caller;
mod client_ip;
mod component_details;
mod connection;
mod db_gate;
pub mod error;
pub mod extract;
mod form_bridge;
mod guard;
pub mod i18n;
pub mod key_auth;
mod listen;
mod openapi;
mod page_gate;
mod password;
mod public_reads;
pub mod rate_limit;
mod request_gate;
mod respond;
mod retry;
mod routes;
mod security_headers;
mod selftest;
mod session;
mod shared_limits;
mod snapshot;
mod sso;
pub mod state;
pub mod static_copy;
mod statuspage_body;
pub mod telemetry;
mod totp;
mod views;
mod visitor;

use axum::extract::{DefaultBodyLimit, MatchedPath};
use axum::http::{HeaderValue, header};
use std::future::Future;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

pub use password::hash_blocking as hash_password;

pub use listen::ConnectionLimits;
pub use public_reads::PublicLimits;
pub use state::AppState;

/// What the HTTP layer needs from configuration.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    pub api_rate_per_minute: u32,
    pub api_rate_per_hour: u32,
    pub max_body_bytes: usize,
    pub public_limits: PublicLimits,
    /// Peers whose `X-Forwarded-For` is believed (load balancers, CDNs).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Whether session cookies are marked Secure (all but plain-http loopback).
    pub secure_cookies: bool,
    /// Where visitors reach this server, for absolute links in feeds.
    pub public_url: String,
    /// The page served at `/` (and `/api/v1/status`) for hosts that are no
    /// page's custom domain.
    pub default_page: Option<String>,
    /// Development mode (`--dev`): opens `/api/admin/reset-rate-limits`.
    pub dev: bool,
    /// The bearer token `/api/metrics` asks for, when set.
    pub metrics_token: Option<Token>,
    /// How many connections, and how slow, the server accepts.
    pub connections: ConnectionLimits,
    /// `Strict-Transport-Security: max-age=…` on every answer when the
    /// public URL is https (0: never).
    pub hsts_max_age_secs: u64,
    /// Cancelled when this server starts shutting down, so endless
    /// responses (event streams) end and graceful shutdown does not wait on
    /// them. One per server: `app` and `serve` must be given the same
    /// settings.
    pub stopping: tokio_util::sync::CancellationToken,
    /// The folder the static copy's directory targets live under.
    pub static_copy_root: std::path::PathBuf,
    /// Redis, where rate limits are counted across instances (None: each
    /// instance counts its own).
    pub redis_url: Option<SecretUrl>,
    /// Put before every key this install keeps in Redis.
    pub redis_prefix: String,
    /// Single sign-on's identity provider from configuration: it takes the
    /// place of the one saved on the Settings screen.
    pub sso_connection: Option<upstate_core::sso::Connection>,
}

/// A secret from configuration; its Debug (the start-up log) hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(pub String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A URL that may carry a password (Redis's); its Debug (the start-up
/// log) shows it with the password masked, as the database URL is.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(pub String);

impl std::fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", upstate_store::redact(&self.0))
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            api_rate_per_minute: 100,
            api_rate_per_hour: 1000,
            max_body_bytes: 1024 * 1024,
            public_limits: PublicLimits::default(),
            trusted_proxies: Vec::new(),
            secure_cookies: true,
            public_url: "http://127.0.0.1:8080".into(),
            default_page: None,
            dev: false,
            metrics_token: None,
            connections: ConnectionLimits::default(),
            hsts_max_age_secs: 31_536_000,
            stopping: tokio_util::sync::CancellationToken::new(),
            static_copy_root: std::path::PathBuf::from("data/static"),
            redis_url: None,
            redis_prefix: "upstate:".into(),
            sso_connection: None,
        }
    }
}

/// A server error of the HTTP layer, logged as an error; a 503 is the
/// documented answer while the database is away (or the server stops), a
/// state the log already names once, so each such answer is a warning.
fn log_failure(
    class: tower_http::classify::ServerErrorsFailureClass,
    latency: std::time::Duration,
    _span: &tracing::Span,
) {
    let ms = latency.as_millis();
    match class {
        tower_http::classify::ServerErrorsFailureClass::StatusCode(code)
            if code == axum::http::StatusCode::SERVICE_UNAVAILABLE =>
        {
            tracing::warn!(latency_ms = ms, "answered 503: unavailable for now");
        }
        class => tracing::error!(classification = %class, latency_ms = ms, "response failed"),
    }
}

pub fn app(
    db: upstate_store::Db,
    settings: &ServerSettings,
    sender: upstate_jobs::Sender,
    checker: upstate_jobs::monitors::Checker,
) -> app::App {
    // A visitor subscribes once or twice, comments a few times; a script
    // trying addresses or posting spam is stopped after a handful.
    let shared_limits = match rate_limit::SharedLimits::new(
        settings.redis_url.as_ref().map(|u| u.0.as_str()),
        &settings.redis_prefix,
    ) {
        Ok(shared) => shared,
        Err(e) => {
            // The configuration checked the URL; this is the last guard.
            tracing::error!(error = %e, "rate limits are counted per instance");
            rate_limit::SharedLimits::default()
        }
    };
    shared_limits.keep_trying(settings.stopping.clone());
    let subscribe_limits = rate_limit::Limits::new(5, 20)
        .shared(&shared_limits, "subscribe")
        .swept();
    // Each way out to the identity provider stores a sign-in under way: an
    // office behind one address signs in often, a script far more.
    let sso_limits = rate_limit::Limits::new(30, 300)
        .shared(&shared_limits, "sso")
        .swept();
    let comment_limits = rate_limit::Limits::new(3, 10)
        .shared(&shared_limits, "comment")
        .swept();
    let visitor_limiters = vec![
        std::sync::Arc::downgrade(&subscribe_limits),
        std::sync::Arc::downgrade(&sso_limits),
        std::sync::Arc::downgrade(&comment_limits),
    ];
    let telemetry = telemetry::Telemetry::new();
    let observer: std::sync::Arc<dyn upstate_jobs::monitors::Observe> = telemetry.clone();
    // A second app in one process (tests) keeps the first one's observer.
    let _ = checker.observer.set(observer);
    let sso = sso::Provider::new(sender.settings.allow.clone());
    let state = AppState::new(state::Shared {
        sso,
        telemetry: telemetry.clone(),
        sender,
        checker,
        limits: rate_limit::Limits::new(settings.api_rate_per_minute, settings.api_rate_per_hour)
            .shared(&shared_limits, "api")
            .swept(),
        shared_limits,
        subscribe_limits,
        sso_limits,
        comment_limits,
        snapshots: snapshot::Snapshots::new(db.clone()),
        settings: settings.clone(),
        db: db.clone(),
        started: std::time::Instant::now(),
        public_limiters: std::sync::Mutex::new(visitor_limiters),
    });
    let gate_db = db.clone();
    tokio::spawn(async move { db.follow_changes().await });
    let routes::Routes {
        public,
        managed,
        doc,
    } = routes::routes(&state);
    let managed = managed
        .with_state(state.clone())
        .layer(DefaultBodyLimit::max(settings.max_body_bytes))
        .layer(CatchPanicLayer::custom(|_| {
            axum::response::IntoResponse::into_response(error::ApiError::Internal(
                "handler panicked".into(),
            ))
        }))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(route_span)
                .on_failure(log_failure),
        );
    let mail = state.sender.has_mailer();
    let routes = public
        .with_state(state)
        .merge(openapi::routes(openapi::finish(doc, mail)))
        .merge(managed)
        .fallback(routes::not_found);
    app::App::new(routes, telemetry, gate_db)
}

/// A request's span names its route's pattern, never the URI: paths and
/// query strings carry tokens (heartbeats, integrations, step-up links,
/// viewers' `?token=`), and a debug log must not hand them out.
fn route_span<B>(req: &axum::http::Request<B>) -> tracing::Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("(no route)", MatchedPath::as_str);
    tracing::debug_span!("request", method = %req.method(), route)
}

/// Serves until `shutdown` resolves, then stops accepting and lets requests
/// in flight finish before returning. Every request passes `request_gate`
/// first, then the form bridge, then the router.
pub fn serve(
    listener: TcpListener,
    app: app::App,
    settings: &ServerSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
    let hsts = (settings.public_url.starts_with("https://") && settings.hsts_max_age_secs > 0)
        .then(|| HeaderValue::from_str(&format!("max-age={}", settings.hsts_max_age_secs)).ok())
        .flatten();
    let gate = std::sync::Arc::new(request_gate::Gate {
        max_body_bytes: settings.max_body_bytes,
        body_timeout: settings.connections.body_timeout,
        hsts,
        secure_cookies: settings.secure_cookies,
    });
    let gated = request_gate::Gated::new(gate, form_bridge::Bridged(app));
    // This server's own signal (several may share a process, as the tests'
    // do): its event streams end, and graceful shutdown does not wait on them.
    let stopping = settings.stopping.clone();
    listen::serve(
        listener,
        gated,
        settings.connections.clone(),
        settings.trusted_proxies.clone(),
        async move {
            shutdown.await;
            stopping.cancel();
        },
    )
}
