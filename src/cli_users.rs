//! `upstate user create --email E --name N --role owner --password-stdin`:
//! the password is read from standard input (never from an argument, which
//! other users of the machine could see in the process list).

use anyhow::{Context, bail};
use std::io::Read;
use upstate_core::audit::Actor;
use upstate_core::roles::{self, Role};
use upstate_core::validate;
use upstate_core::values::Email;
use upstate_store::{AuditCtx, Db};

#[derive(clap::Subcommand)]
pub enum UserCommand {
    /// Create a user who signs in with email and password.
    Create {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// owner, admin, editor or viewer.
        #[arg(long)]
        role: String,
        /// Read the password from standard input (required).
        #[arg(long)]
        password_stdin: bool,
    },
}

pub async fn run(db: &Db, cmd: UserCommand) -> anyhow::Result<()> {
    let UserCommand::Create {
        email,
        name,
        role,
        password_stdin,
    } = cmd;
    if !password_stdin {
        bail!("pass the password on standard input with --password-stdin");
    }
    let email = Email::parse(&email).map_err(|m| anyhow::anyhow!("--email {m}"))?;
    let name = validate::name(&name).map_err(|m| anyhow::anyhow!("--name {m}"))?;
    let role: Role = role.parse().map_err(|e| anyhow::anyhow!("--role {e}"))?;
    let mut password = String::new();
    std::io::stdin()
        .read_to_string(&mut password)
        .context("cannot read the password from standard input")?;
    let password = password.trim_end_matches(['\n', '\r']).to_string();
    roles::password(&password).map_err(|m| anyhow::anyhow!("the password {m}"))?;
    let hash = tokio::task::spawn_blocking(move || upstate_server::hash_password(&password))
        .await?
        .map_err(|e| anyhow::anyhow!(e))?;
    let user = upstate_store::users::create(
        db,
        &AuditCtx::of(Actor::cli()),
        &email,
        &name,
        role,
        &hash,
        false,
    )
    .await
    .context("cannot create the user")?;
    println!(
        "Created user {} <{}> with role {}.",
        user.id,
        user.email,
        role.as_str()
    );
    Ok(())
}
