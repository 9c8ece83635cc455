//! The service `upstate serve` runs: the HTTP server, the three job loops
//! (scheduler, deliveries, monitors) and the static copy's publisher on one
//! database, stopped together.

use crate::config::Config;
use anyhow::Context;
use std::future::Future;
use tokio_util::sync::CancellationToken;
use upstate_store::Db;

/// How long the first-owner setup link logged at start stays valid.
const SETUP_VALID_MS: i64 = 24 * 3_600_000;

/// Opens (creating an SQLite file's directory) and migrates the database,
/// and unlocks its secrets with the server key.
pub async fn open(config: &Config) -> anyhow::Result<Db> {
    let db = open_locked(config).await?;
    Ok(crate::server_key::unlock(&config.keys, db).await?.0)
}

/// `open` without the server key (`upstate rotate-key` brings its own).
pub async fn open_locked(config: &Config) -> anyhow::Result<Db> {
    config.prepare_storage()?;
    let db = Db::connect(&config.database_url).await.with_context(|| {
        format!(
            "cannot open database {}",
            upstate_store::redact(&config.database_url)
        )
    })?;
    db.migrate().await.context("cannot apply migrations")?;
    Ok(db)
}

/// Writes the static copy of every public page into `out` (`upstate
/// export-static`): the routes' own answers, as the running service would
/// give them now.
pub async fn export_static(
    config: &Config,
    out: &std::path::Path,
) -> anyhow::Result<(
    upstate_server::static_copy::Copy,
    upstate_server::static_copy::DirReport,
)> {
    let db = open(config).await?;
    let mut settings = config.server.clone();
    if settings.public_url.is_empty() {
        settings.public_url = format!("http://{}", config.addr);
    }
    let mut delivery = config.delivery.clone();
    delivery.public_url = settings.public_url.clone();
    let sender = upstate_jobs::Sender::new(delivery).map_err(anyhow::Error::msg)?;
    let checker =
        upstate_jobs::monitors::Checker::new(&config.monitors).map_err(anyhow::Error::msg)?;
    let app = upstate_server::app(db.clone(), &settings, sender, checker);
    let copy = upstate_server::static_copy::render(&app, &db, db.clock.now())
        .await
        .map_err(anyhow::Error::msg)?;
    let report = upstate_server::static_copy::write_dir(out, &copy.files)
        .with_context(|| format!("cannot write the copy into {}", out.display()))?;
    db.close().await;
    Ok((copy, report))
}

/// What a started service tells whoever started it, before it serves.
pub struct Started<'a> {
    /// Where it listens (`http://` and the bound address).
    pub url: &'a str,
    /// Where visitors reach it (configured, or `url`).
    pub public_url: &'a str,
    /// The first owner's setup link token, on an install with no users yet
    /// (valid for 24 hours).
    pub setup_token: Option<&'a str>,
}

/// Serves `db` on `listener` with the job loops until `shutdown` resolves,
/// then finishes requests in flight and stops the loops. `started` is
/// called once the routes are built, before the first request is served
/// (the binary prints the address there: scripts and tests read the port
/// from that line).
pub async fn run(
    config: Config,
    db: Db,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    started: impl FnOnce(Started<'_>),
) -> anyhow::Result<()> {
    let local = listener.local_addr()?;
    let cancel = CancellationToken::new();
    let mut settings = config.server.clone();
    if settings.public_url.is_empty() {
        // Not configured: where this server really listens (port 0 resolved).
        settings.public_url = format!("http://{local}");
    }
    let mut delivery = config.delivery.clone();
    delivery.public_url = settings.public_url.clone();
    let sender = upstate_jobs::Sender::new(delivery.clone()).map_err(anyhow::Error::msg)?;
    let scheduler = tokio::spawn(upstate_jobs::run_scheduler(
        db.clone(),
        delivery,
        cancel.clone(),
    ));
    let deliveries = tokio::spawn(upstate_jobs::run_sender(
        db.clone(),
        sender.clone(),
        cancel.clone(),
    ));
    let checker =
        upstate_jobs::monitors::Checker::new(&config.monitors).map_err(anyhow::Error::msg)?;
    let monitors = tokio::spawn(upstate_jobs::monitors::run_monitors(
        db.clone(),
        checker.clone(),
        cancel.clone(),
    ));
    let vendors = tokio::spawn(upstate_jobs::third_party::run_third_party(
        db.clone(),
        sender.outgoing().clone(),
        cancel.clone(),
    ));
    let guard = sender.outgoing().guard().clone();
    let app = upstate_server::app(db.clone(), &settings, sender, checker);
    let publisher = tokio::spawn(upstate_server::static_copy::publish::run(
        app.clone(),
        db.clone(),
        settings.static_copy_root.clone(),
        guard,
        cancel.clone(),
    ));
    let probe = tokio::spawn(probe_database(db.clone(), cancel.clone()));
    let setup_token = upstate_store::users::issue_setup_token(&db, SETUP_VALID_MS).await?;
    started(Started {
        url: &format!("http://{local}"),
        public_url: settings.public_url.trim_end_matches('/'),
        setup_token: setup_token.as_deref(),
    });
    tracing::info!(%local, backend = ?db.backend(), "listening");
    let stop = cancel.clone();
    upstate_server::serve(listener, app, &settings, async move {
        shutdown.await;
        tracing::info!("shutting down: finishing requests in flight");
        stop.cancel();
    })
    .await?;
    cancel.cancel();
    let _ = scheduler.await;
    let _ = deliveries.await;
    let _ = monitors.await;
    let _ = vendors.await;
    let _ = publisher.await;
    let _ = probe.await;
    db.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Asks the database for a round trip every second, so requests know at
/// once whether it answers (`upstate_store::health::probe`).
async fn probe_database(db: Db, stop: CancellationToken) {
    if db.backend() == upstate_store::Backend::Sqlite {
        return;
    }
    loop {
        upstate_store::health::probe(&db, std::time::Duration::from_secs(1)).await;
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
}
