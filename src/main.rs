//! The `upstate` binary: serve, migrate and operator commands.

mod cli_keys;
mod cli_users;
mod config;

use anyhow::Context;
use clap::{Parser, Subcommand};
use config::{Config, Overrides};
use tokio_util::sync::CancellationToken;
use upstate_store::Db;

#[derive(Parser)]
#[command(name = "upstate", version, about = "Self-hosted status pages")]
struct Cli {
    #[command(flatten)]
    overrides: Overrides,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Create, list and revoke API keys.
    #[command(subcommand)]
    ApiKey(cli_keys::KeyCommand),
    /// Create users.
    #[command(subcommand)]
    User(cli_users::UserCommand),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,sqlx=warn".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never in log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn open(config: &Config) -> anyhow::Result<Db> {
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

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::resolve(&cli.overrides)?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Migrate => {
            let db = open(&config).await?;
            db.close().await;
            println!("migrations applied");
            Ok(())
        }
        Command::ApiKey(cmd) => {
            let db = open(&config).await?;
            let result = cli_keys::run(&db, cmd).await;
            db.close().await;
            result
        }
        Command::User(cmd) => {
            let db = open(&config).await?;
            let result = cli_users::run(&db, cmd).await;
            db.close().await;
            result
        }
    }
}

/// Hands the heap that building the routes and their OpenAPI document used
/// (about 11 MB, freed once the document is serialized) back to the system.
/// glibc keeps freed memory below live allocations; without this an idle
/// server stays a third larger than it needs to be (docs/performance.md).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_startup_heap() {
    // SAFETY: malloc_trim has no preconditions; it only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_startup_heap() {}

/// How long the first-owner setup link printed at start-up stays valid.
const SETUP_VALID_MS: i64 = 24 * 3_600_000;

async fn serve(config: Config) -> anyhow::Result<()> {
    tracing::info!(?config, "starting");
    let db = open(&config).await?;
    let listener = tokio::net::TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
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
    let app = upstate_server::app(db.clone(), &settings, sender, checker);
    release_startup_heap();
    // Scripts and tests read this line to learn the port (useful with :0).
    println!("upstate listening on http://{local}");
    if let Some(token) = upstate_store::users::issue_setup_token(&db, SETUP_VALID_MS).await? {
        tracing::warn!(
            "no users yet: open {}/admin/setup?token={token} within 24 hours to create the first owner \
             (or run `upstate user create --role owner`)",
            settings.public_url.trim_end_matches('/')
        );
    }
    tracing::info!(%local, backend = ?db.backend(), "listening");
    let stop = cancel.clone();
    upstate_server::serve(listener, app, &settings, async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing requests in flight");
        stop.cancel();
    })
    .await?;
    cancel.cancel();
    let _ = scheduler.await;
    let _ = deliveries.await;
    let _ = monitors.await;
    db.close().await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
