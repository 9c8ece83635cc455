//! `upstate export` and `upstate import`: the document of
//! `GET`/`POST /api/admin/export`, written to or read from a file.

use anyhow::Context;
use std::path::PathBuf;
use upstate_core::audit::Actor;
use upstate_store::transfer::{self, Include, Mode};
use upstate_store::{AuditCtx, Db, StoreError};

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The file to write (`-` for standard output).
    #[arg(long, default_value = "-")]
    out: PathBuf,
    /// Include sealed secrets in clear (channel secrets, second-factor
    /// seeds, the push key, monitor header values, bucket credentials).
    #[arg(long)]
    secrets: bool,
    /// Include password, page password, API key and recovery code hashes.
    #[arg(long)]
    passwords: bool,
    /// Write the JSON Schema of the format instead of a document.
    #[arg(long, conflicts_with_all = ["secrets", "passwords"])]
    schema: bool,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// A document `upstate export` or `GET /api/admin/export` wrote; for
    /// another product, its address or a folder of its saved API answers
    /// (docs/operations.md lists the file names); for Uptime Kuma, its
    /// JSON backup.
    file: PathBuf,
    /// What the source is: `upstate` (an export, the default),
    /// `statuspage` (a page's public v2 JSON, or its management API with
    /// --key), `instatus` (its API, with --key),
    /// `cachet` (Cachet 2 or 3's API) or `uptime-kuma` (a JSON backup, or
    /// its database file kuma.db).
    /// Another product's page comes in beside the pages here; imported
    /// again, only what is new is added.
    #[arg(long, default_value = "upstate", value_parser = ["upstate", "statuspage", "instatus", "cachet", "uptime-kuma"])]
    from: String,
    /// The API key of the product imported from (Statuspage's management
    /// API, Instatus, Cachet). The address is then the API's
    /// (https://api.statuspage.io/v1, https://api.instatus.com) or, for
    /// Cachet, the install's.
    #[arg(long)]
    key: Option<String>,
    /// The page's id in the product imported from (Statuspage and
    /// Instatus, with --key), when the key reads several.
    #[arg(long = "page-id", requires = "key")]
    page_id: Option<String>,
    /// Add the document's pages beside the ones here (new ids) instead of
    /// filling an empty install.
    #[arg(long)]
    add_pages: bool,
}

pub async fn export(db: &Db, args: ExportArgs) -> anyhow::Result<()> {
    let doc = if args.schema {
        transfer::json_schema(db).await?
    } else {
        let include = Include {
            secrets: args.secrets,
            passwords: args.passwords,
        };
        transfer::export_as(db, &AuditCtx::of(Actor::cli()), include).await?
    };
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    if args.out.as_os_str() == "-" {
        print!("{text}");
    } else {
        write_private(&args.out, &text)
            .with_context(|| format!("cannot write {}", args.out.display()))?;
        if !args.schema {
            let rows: usize = doc["tables"]
                .as_object()
                .map(|t| t.values().filter_map(|v| v.as_array()).map(Vec::len).sum())
                .unwrap_or(0);
            eprintln!("exported {rows} rows into {}", args.out.display());
        }
    }
    Ok(())
}

/// The document holds every subscriber's address (and maybe secrets): only
/// its owner reads it.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

pub async fn import(db: &Db, args: ImportArgs, allow: &[ipnet::IpNet]) -> anyhow::Result<()> {
    if let Some(product) = transfer::Product::parse(&args.from) {
        return import_foreign(db, product, &args, allow).await;
    }
    if args.from == "uptime-kuma" {
        return import_kuma(db, &args).await;
    }
    let text = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not JSON", args.file.display()))?;
    let mode = if args.add_pages {
        Mode::AddPages
    } else {
        Mode::Empty
    };
    let done = transfer::import(db, &AuditCtx::of(Actor::cli()), &doc, mode)
        .await
        .map_err(|e| refused(&args.file.display().to_string(), "imported", e))?;
    for (table, n) in &done.rows {
        if *n > 0 {
            println!("{table}: {n}");
        }
    }
    for (table, ids) in &done.ids {
        println!("{table}: {} ids changed", ids.len());
    }
    for note in &done.notes {
        println!("note: {note}");
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct BackupArgs {
    /// The file to write: a SQLite database file (SQLite), or a JSON
    /// document of every table (PostgreSQL). It must not exist yet.
    #[arg(long)]
    out: PathBuf,
    /// `file` (a SQLite database file; SQLite's default) or `json` (every
    /// table as one document; PostgreSQL's only kind).
    #[arg(long, value_parser = ["file", "json"])]
    format: Option<String>,
}

#[derive(clap::Args)]
pub struct RestoreArgs {
    /// A file `upstate backup` wrote (either kind).
    file: PathBuf,
}

#[derive(clap::Args)]
pub struct MigrateDbArgs {
    /// The database to copy from (`sqlite://PATH` or `postgres://…`).
    #[arg(long)]
    from: String,
    /// The database to copy into: new, or holding nothing yet.
    #[arg(long)]
    to: String,
}

/// A database named by URL, migrated (the service's key is not needed:
/// sealed values move as they are).
async fn connect(url: &str) -> anyhow::Result<Db> {
    let db = Db::connect(url)
        .await
        .with_context(|| format!("cannot open database {}", upstate_store::redact(url)))?;
    db.migrate().await.context("cannot apply migrations")?;
    Ok(db)
}

pub async fn backup(db: &Db, args: BackupArgs) -> anyhow::Result<()> {
    if args.out.exists() {
        anyhow::bail!("{} exists already: name a new file", args.out.display());
    }
    let sqlite = db.backend() == upstate_store::Backend::Sqlite;
    match args.format.as_deref() {
        Some("file") | None if sqlite => transfer::sqlite_backup(db, &args.out).await?,
        Some("file") => anyhow::bail!("--format file is for SQLite; PostgreSQL backs up as json"),
        _ => {
            let doc = transfer::backup_document(db).await?;
            write_private(&args.out, &serde_json::to_string(&doc)?)
                .with_context(|| format!("cannot write {}", args.out.display()))?;
        }
    }
    println!(
        "backup written to {}: keep the server key (data/secret.key or UPSTATE_SECRET_KEY) with it",
        args.out.display()
    );
    Ok(())
}

/// Whether a file is a SQLite database (its 16-byte header).
fn is_sqlite(path: &std::path::Path) -> anyhow::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(file.read_exact(&mut head).is_ok() && &head == b"SQLite format 3\0")
}

pub async fn restore(db: &Db, args: RestoreArgs) -> anyhow::Result<()> {
    let rows = if is_sqlite(&args.file)? {
        // Opened from a copy: migrating must not touch the backup itself.
        let copy = std::env::temp_dir().join(format!("upstate-restore-{}.db", std::process::id()));
        std::fs::copy(&args.file, &copy)?;
        let rows = match connect(&format!("sqlite://{}", copy.display())).await {
            Ok(source) => {
                let rows = transfer::read_everything(&source).await;
                source.close().await;
                rows.map_err(anyhow::Error::from)
            }
            Err(e) => Err(e),
        };
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
        }
        rows?
    } else {
        let text = std::fs::read(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?;
        let doc: serde_json::Value = serde_json::from_slice(&text).with_context(|| {
            format!(
                "{} is neither a SQLite file nor JSON: not an Upstate backup",
                args.file.display()
            )
        })?;
        transfer::rows_of_backup(db, &doc)
            .await
            .map_err(|e| refused(&args.file.display().to_string(), "restored", e))?
    };
    let n = transfer::write_everything(db, rows)
        .await
        .map_err(|e| refused(&args.file.display().to_string(), "restored", e))?;
    println!("restored {n} rows from {}", args.file.display());
    Ok(())
}

pub async fn migrate_db(args: MigrateDbArgs) -> anyhow::Result<()> {
    let from = connect(&args.from).await?;
    let to = connect(&args.to).await?;
    let rows = transfer::read_everything(&from).await?;
    let counts: Vec<(&str, usize)> = rows.iter().map(|(t, r)| (*t, r.len())).collect();
    let n = transfer::write_everything(&to, rows).await;
    from.close().await;
    to.close().await;
    let n = n.map_err(|e| anyhow::anyhow!("nothing was copied: {e}"))?;
    for (table, rows) in counts.iter().filter(|(_, r)| *r > 0) {
        println!("{table}: {rows}");
    }
    println!(
        "copied {n} rows from {} to {}",
        upstate_store::redact(&args.from),
        upstate_store::redact(&args.to)
    );
    Ok(())
}

/// "nothing changed", with the first wrong place of a refused document.
fn refused(source: &str, done: &str, e: StoreError) -> anyhow::Error {
    match e {
        StoreError::Invalid(e) => {
            let first = e.0.first();
            anyhow::anyhow!(
                "{source} was not {done}, nothing changed: {}: {}",
                first.map_or("", |f| f.field.as_str()),
                first.map_or("", |f| f.message.as_str())
            )
        }
        other => anyhow::anyhow!("{source} was not {done}, nothing changed: {other}"),
    }
}

/// What another product's page holds: fetched from its address (within
/// the `outgoing_allow` rule, as every request Upstate makes) or read from
/// a folder of saved answers.
async fn foreign_files(
    product: transfer::Product,
    source: &str,
    access: Option<&transfer::Access>,
    allow: &[ipnet::IpNet],
) -> anyhow::Result<(transfer::Files, Vec<String>)> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let guard = upstate_jobs::outgoing::Guard {
            allow: allow.to_vec(),
            setting: "outgoing_allow",
        };
        let client = upstate_jobs::outgoing::Outgoing::build(
            guard,
            std::time::Duration::from_secs(60),
            true,
            "importing a status page",
            upstate_jobs::outgoing::Tls::Verify,
        )
        .map_err(anyhow::Error::msg)?;
        return upstate_jobs::fetch_page::foreign(&client, product, source, access)
            .await
            .map_err(|e| anyhow::anyhow!("{source} was not imported, nothing changed: {e}"));
    }
    let dir = std::path::Path::new(source);
    if !dir.is_dir() {
        anyhow::bail!(
            "{source} is neither an http(s) address nor a folder of saved {} answers",
            product.title()
        );
    }
    let mut files = transfer::Files::new();
    let mut missing = Vec::new();
    for name in product.folder_files() {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let v = serde_json::from_slice(&bytes)
                    .with_context(|| format!("{} is not JSON", path.display()))?;
                files.insert(name.to_string(), v);
            }
            Err(_) => missing.push(format!("{name}: not in {}", dir.display())),
        }
    }
    Ok((files, missing))
}

async fn import_kuma(db: &Db, args: &ImportArgs) -> anyhow::Result<()> {
    let source = args.file.display().to_string();
    let text = std::fs::read(&args.file).with_context(|| format!("cannot read {source}"))?;
    // Its database file, or its JSON backup.
    let backup: serde_json::Value = if text.starts_with(b"SQLite format 3\0") {
        transfer::read_kuma_db(&args.file)
            .await
            .map_err(|e| anyhow::anyhow!("{source} was not imported, nothing changed: {e}"))?
    } else {
        serde_json::from_slice(&text).with_context(|| {
            format!("{source} is neither JSON nor SQLite: not an Uptime Kuma backup or kuma.db")
        })?
    };
    let schema = transfer::schema_version(db).await?;
    let made = transfer::from_uptime_kuma(&backup, schema, db.clock.now())
        .map_err(|e| anyhow::anyhow!("{source} was not imported, nothing changed: {e}"))?;
    brought(db, &source, made, Vec::new()).await
}

/// Imports what an importer made and says what it brought and left.
async fn brought(
    db: &Db,
    source: &str,
    made: transfer::Translated,
    missing: Vec<String>,
) -> anyhow::Result<()> {
    let done = transfer::import_from(
        db,
        &AuditCtx::of(Actor::cli()),
        &made.doc,
        Mode::AddPages,
        Some(&made.origin),
    )
    .await
    .map_err(|e| refused(source, "imported", e))?;
    let brought: usize = done.rows.values().sum();
    if brought == 0 {
        println!("nothing new: everything of {source} was imported before");
    }
    for (table, n) in &done.rows {
        if *n > 0 {
            println!("{table}: {n}");
        }
    }
    for m in missing {
        println!("not read: {m}");
    }
    for l in &made.left_out {
        println!("not brought: {l}");
    }
    for n in &done.notes {
        println!("note: {n}");
    }
    Ok(())
}

async fn import_foreign(
    db: &Db,
    product: transfer::Product,
    args: &ImportArgs,
    allow: &[ipnet::IpNet],
) -> anyhow::Result<()> {
    let source = args.file.display().to_string();
    let access = args.key.as_ref().map(|key| transfer::Access {
        key: key.clone(),
        page: args.page_id.clone().unwrap_or_default(),
    });
    if product.needs_access() && access.is_none() && !std::path::Path::new(&source).is_dir() {
        anyhow::bail!(
            "{} is read through its API: give its --key",
            product.title()
        );
    }
    let (files, missing) = foreign_files(product, &source, access.as_ref(), allow).await?;
    let schema = transfer::schema_version(db).await?;
    let made = product
        .translate(&files, schema, db.clock.now())
        .map_err(|e| anyhow::anyhow!("{source} was not imported, nothing changed: {e}"))?;
    // What was not there is said only where it mattered to the outcome.
    brought(db, &source, made, missing).await
}
