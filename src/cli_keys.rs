//! `upstate api-key create|list|revoke`. `create` prints the secret alone on
//! its last line so scripts can take it with `tail -n 1`.

use anyhow::{Context, bail};
use upstate_core::audit::Actor;
use upstate_core::scope::{key_expiry, parse_scopes};
use upstate_core::{Id, Timestamp, validate};
use upstate_store::{AuditCtx, Db, StoreError, api_keys};

#[derive(clap::Subcommand)]
pub enum KeyCommand {
    /// Create a key; prints it once, on the last line.
    Create {
        #[arg(long)]
        name: String,
        /// Comma-separated: read, write, admin (read:* and write:* also work).
        #[arg(long)]
        scopes: String,
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
    /// List keys (never their secrets).
    List,
    /// Revoke a key by id.
    Revoke { id: Id },
}

pub async fn run(db: &Db, cmd: KeyCommand) -> anyhow::Result<()> {
    match cmd {
        KeyCommand::Create {
            name,
            scopes,
            expires_in_days,
        } => {
            let name = validate::name(&name).map_err(|m| anyhow::anyhow!("--name {m}"))?;
            let scopes = parse_scopes(&scopes).map_err(|e| anyhow::anyhow!("--scopes {e}"))?;
            let expires_at = expires_in_days
                .map(|d| key_expiry(db.clock.now(), i64::from(d)))
                .transpose()
                .map_err(|m| anyhow::anyhow!("--expires-in-days {m}"))?;
            let (key, secret) =
                api_keys::create(db, &AuditCtx::of(Actor::cli()), &name, &scopes, expires_at)
                    .await
                    .context("cannot create key")?;
            let scope_list: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
            println!(
                "Created API key {} \"{}\" with scopes {}.",
                key.id,
                key.name,
                scope_list.join(",")
            );
            match key.expires_at {
                Some(t) => println!("It expires at {}.", t.to_rfc3339()),
                None => println!("It does not expire."),
            }
            println!("Copy it now; it is not stored and will not be shown again:");
            println!("{secret}");
        }
        KeyCommand::List => {
            let keys = api_keys::list(db).await?;
            println!(
                "{:<6} {:<24} {:<14} {:<18} {:<10} {:<26} {:<26}",
                "ID", "NAME", "PREFIX", "SCOPES", "STATE", "EXPIRES", "LAST USED"
            );
            let now = db.clock.now();
            for k in keys {
                let scopes: Vec<&str> = k.scopes.iter().map(|s| s.as_str()).collect();
                let state = if k.revoked_at.is_some() {
                    "revoked"
                } else if !k.is_active(now) {
                    "expired"
                } else {
                    "active"
                };
                let show =
                    |t: Option<Timestamp>| t.map(|t| t.to_rfc3339()).unwrap_or_else(|| "-".into());
                println!(
                    "{:<6} {:<24} {:<14} {:<18} {:<10} {:<26} {:<26}",
                    k.id,
                    k.name,
                    format!("{}…", k.prefix),
                    scopes.join(","),
                    state,
                    show(k.expires_at),
                    show(k.last_used_at)
                );
            }
        }
        KeyCommand::Revoke { id } => {
            match api_keys::revoke(db, &AuditCtx::of(Actor::cli()), id).await {
                Ok(k) => println!("Revoked API key {} \"{}\".", k.id, k.name),
                Err(StoreError::NotFound(_)) => bail!("no API key with id {id}"),
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
