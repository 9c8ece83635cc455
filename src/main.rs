//! The `upstate` binary: serve, migrate and operator commands.

mod cli_apply;
mod cli_keys;
mod cli_remote;
mod cli_transfer;
mod cli_users;

use anyhow::Context;
use clap::{Parser, Subcommand};
use upstate::config::{Config, Overrides};
use upstate::service::{self, open};

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
    /// Write every public page, as visitors and integrations read it, into
    /// a directory a static host can serve (only changed files are written).
    ExportStatic {
        /// The directory to write (created if missing).
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Write the whole install as one JSON document (the format of
    /// `GET /api/admin/export`; see docs/operations.md).
    Export(cli_transfer::ExportArgs),
    /// Read a document `upstate export` wrote into this install, all or
    /// nothing.
    Import(cli_transfer::ImportArgs),
    /// Copy the database while the service runs: a SQLite file
    /// (`VACUUM INTO`), or every PostgreSQL table as one JSON document.
    Backup(cli_transfer::BackupArgs),
    /// Write a backup into this install's database, which must be new.
    Restore(cli_transfer::RestoreArgs),
    /// Copy every table from one database into another, new one (SQLite to
    /// PostgreSQL and back), ids kept.
    MigrateDb(cli_transfer::MigrateDbArgs),
    /// Make a new server key and seal every stored secret with it (the key
    /// file keeps only the new key).
    RotateKey,
    /// Open, update, resolve and list incidents on a server, through its
    /// API with a key (for scripts and chat-ops).
    #[command(subcommand)]
    Incident(cli_remote::IncidentCommand),
    /// Schedule and list maintenance on a server, through its API with a key.
    #[command(subcommand)]
    Maintenance(cli_remote::MaintenanceCommand),
    /// Make the install match a setup file (pages, groups, components,
    /// monitors, vendors, channels, templates); see docs/setup-as-code.md.
    Apply(cli_apply::ApplyArgs),
    /// Say where the install differs from a setup file; exits 2 when it does.
    Diff(cli_apply::DiffArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,sqlx=warn".into());
    // A webhook's certificate that does not verify is that remote's answer,
    // which the delivery log gives (a warning, with the reason); the
    // verifier's own ERROR line would read as a fault of this server.
    let filter = match "rustls_platform_verifier=off".parse() {
        Ok(quiet) => filter.add_directive(quiet),
        Err(_) => filter,
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
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

async fn run(cli: Cli) -> anyhow::Result<()> {
    let command = cli.command.unwrap_or(Command::Serve);
    // A server elsewhere, driven through its API: this machine's
    // configuration is not read.
    let command = match command {
        Command::Incident(cmd) => return cli_remote::incident(cmd).await,
        Command::Maintenance(cmd) => return cli_remote::maintenance(cmd).await,
        Command::Apply(args) if args.remote() => return cli_apply::apply(args, None).await,
        Command::Diff(args) if args.remote() => return cli_apply::diff(args, None).await,
        local => local,
    };
    let config = Config::resolve(&cli.overrides)?;
    match command {
        Command::Incident(cmd) => cli_remote::incident(cmd).await,
        Command::Maintenance(cmd) => cli_remote::maintenance(cmd).await,
        Command::Apply(args) => cli_apply::apply(args, Some(&config)).await,
        Command::Diff(args) => cli_apply::diff(args, Some(&config)).await,
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
        Command::ExportStatic { out } => {
            let (copy, report) = service::export_static(&config, &out).await?;
            for (url, status) in &copy.skipped {
                if *status == 0 {
                    eprintln!("not copied: {url} (not an address the copy can hold)");
                } else {
                    eprintln!("not copied: {url} (answered {status})");
                }
            }
            println!(
                "copied {} files into {}: {} written, {} unchanged, {} removed",
                copy.files.len(),
                out.display(),
                report.written,
                report.unchanged,
                report.removed
            );
            Ok(())
        }
        Command::Export(args) => {
            let db = open(&config).await?;
            let result = cli_transfer::export(&db, args).await;
            db.close().await;
            result
        }
        Command::Import(args) => {
            let db = open(&config).await?;
            let result = cli_transfer::import(&db, args, &config.delivery.allow).await;
            db.close().await;
            result
        }
        Command::Backup(args) => {
            let db = service::open_locked(&config).await?;
            let result = cli_transfer::backup(&db, args).await;
            db.close().await;
            result
        }
        Command::Restore(args) => {
            let db = service::open_locked(&config).await?;
            let result = cli_transfer::restore(&db, args).await;
            db.close().await;
            result
        }
        Command::MigrateDb(args) => cli_transfer::migrate_db(args).await,
        Command::User(cmd) => {
            let db = open(&config).await?;
            let result = cli_users::run(&db, cmd).await;
            db.close().await;
            result
        }
        Command::RotateKey => {
            let db = service::open_locked(&config).await?;
            let done = upstate::server_key::rotate(&config.keys, db).await?;
            println!(
                "server key {} replaces {} in {}: {} secrets sealed again",
                done.settled.key_id,
                done.from,
                done.file.display(),
                done.settled.resealed
            );
            Ok(())
        }
    }
}

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(all(feature = "jemalloc", not(feature = "mimalloc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Hands the heap that building the routes and their OpenAPI document used
/// (about 11 MB, freed once the document is serialized) back to the system.
/// glibc keeps freed memory below live allocations; without this an idle
/// server stays a third larger than it needs to be (docs/performance.md).
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    not(any(feature = "mimalloc", feature = "jemalloc"))
))]
#[allow(unsafe_code)]
fn release_startup_heap() {
    // SAFETY: malloc_trim has no preconditions; it only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(
    target_os = "linux",
    target_env = "gnu",
    not(any(feature = "mimalloc", feature = "jemalloc"))
)))]
fn release_startup_heap() {}

async fn serve(config: Config) -> anyhow::Result<()> {
    tracing::info!(?config, "starting");
    let db = open(&config).await?;
    let listener = tokio::net::TcpListener::bind(&config.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.addr))?;
    service::run(config, db, listener, shutdown_signal(), |started| {
        release_startup_heap();
        // Before the line below: whoever waits for it finds the link (or
        // its absence) already in the log.
        if let Some(token) = started.setup_token {
            tracing::warn!(
                "no users yet: open {}/admin/setup?token={token} within 24 hours to create the first owner \
                 (or run `upstate user create --role owner`)",
                started.public_url
            );
        }
        // Scripts and tests read this line to learn the port (useful with :0).
        println!("upstate listening on {}", started.url);
    })
    .await
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
