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
    /// A document `upstate export` or `GET /api/admin/export` wrote.
    file: PathBuf,
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

pub async fn import(db: &Db, args: ImportArgs) -> anyhow::Result<()> {
    let text = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not JSON", args.file.display()))?;
    let mode = if args.add_pages {
        Mode::AddPages
    } else {
        Mode::Empty
    };
    let done = match transfer::import(db, &AuditCtx::of(Actor::cli()), &doc, mode).await {
        Ok(done) => done,
        Err(StoreError::Invalid(e)) => {
            let first = e.0.first();
            anyhow::bail!(
                "{} was not imported, nothing changed: {}: {}",
                args.file.display(),
                first.map_or("", |f| f.field.as_str()),
                first.map_or("", |f| f.message.as_str())
            );
        }
        Err(e) => anyhow::bail!(
            "{} was not imported, nothing changed: {e}",
            args.file.display()
        ),
    };
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
