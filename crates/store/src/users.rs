//! Users, their sessions, sign-in throttling and the first-owner setup token.
//! Passwords arrive here already hashed (Argon2id, in the server); session
//! and setup tokens are stored as SHA-256 hashes only.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::rows::parse_enum;
use rand::RngCore;
use serde_json::json;
use sha2::{Digest, Sha256};
use upstate_core::audit::Action;
use upstate_core::roles::Role;
use upstate_core::values::Email;
use upstate_core::{Id, Timestamp};

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: Id,
    pub email: String,
    pub name: String,
    pub role: Role,
    pub totp_enabled: bool,
    pub created_at: Timestamp,
    pub last_login_at: Option<Timestamp>,
    /// Signed in with a password someone else chose: the screens ask for a
    /// new one before anything else.
    pub must_change_password: bool,
    /// Came in through single sign-on: the identity provider vouches for
    /// it (and proves it is them again for a step-up).
    pub sso: bool,
}

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: i64,
    email: String,
    name: String,
    role: String,
    totp_enabled: bool,
    created_at: i64,
    last_login_at: Option<i64>,
    must_change_password: bool,
    sso: bool,
}

impl TryFrom<UserRow> for User {
    type Error = StoreError;
    fn try_from(r: UserRow) -> StoreResult<User> {
        Ok(User {
            id: r.id,
            email: r.email,
            name: r.name,
            role: parse_enum("role", &r.role)?,
            totp_enabled: r.totp_enabled,
            created_at: Timestamp::from_millis(r.created_at),
            last_login_at: r.last_login_at.map(Timestamp::from_millis),
            must_change_password: r.must_change_password,
            sso: r.sso,
        })
    }
}

macro_rules! user_cols {
    () => {
        "id, email, name, role, totp_enabled, created_at, last_login_at, must_change_password, (sso_subject IS NOT NULL) AS sso"
    };
}
pub(crate) use user_cols;

pub fn token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub async fn count(db: &Db) -> StoreResult<i64> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM users"
    )
    .fetch_one(c)
    .await?))
}

pub async fn create(
    db: &Db,
    ctx: &AuditCtx,
    email: &Email,
    name: &str,
    role: Role,
    password_hash: &str,
    chosen_by_another: bool,
) -> StoreResult<User> {
    let mut tx = db.begin_as(ctx).await?;
    let row: UserRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO users (email, name, role, password_hash, created_at, must_change_password) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ",
        user_cols!()
    ))
    .bind(email.as_str())
    .bind(name)
    .bind(role.as_str())
    .bind(password_hash)
    .bind(db.clock.now().millis())
    .bind(chosen_by_another)
    .fetch_one(c)
    .await
    .map_err(|e| StoreError::unique(e, "a user with this email already exists"))?
    });
    let user = User::try_from(row)?;
    let audited = tx
        .audit(
            Action::UserCreate,
            "user",
            Some(user.id),
            json!({ "email": &user.email, "name": &user.name, "role": role }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(user)
}

pub async fn get(db: &Db, id: Id) -> StoreResult<User> {
    let row: Option<UserRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        user_cols!(),
        " FROM users WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(c)
    .await?);
    row.ok_or(StoreError::NotFound("user"))?.try_into()
}

/// The user and password hash for a sign-in attempt.
pub async fn credentials(db: &Db, email: &str) -> StoreResult<Option<(User, String)>> {
    let row: Option<(i64, String)> = on_db!(db, |c| sqlx::query_as(
        "SELECT id, password_hash FROM users WHERE email = $1"
    )
    .bind(email)
    .fetch_optional(c)
    .await?);
    match row {
        Some((id, hash)) => Ok(Some((get(db, id).await?, hash))),
        None => Ok(None),
    }
}

pub async fn password_hash(db: &Db, id: Id) -> StoreResult<String> {
    let h: Option<String> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT password_hash FROM users WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    h.ok_or(StoreError::NotFound("user"))
}

/// Sets a new password and ends every session of the user but `keep`.
/// `chosen_by_another` (a reset): its holder is asked to change it.
pub async fn change_password(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    new_hash: &str,
    keep: Option<&str>,
    chosen_by_another: bool,
) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE users SET password_hash = $1, must_change_password = $2 WHERE id = $3"
    )
    .bind(new_hash)
    .bind(chosen_by_another)
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let ended = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM sessions WHERE user_id = $1 AND id <> $2"
    )
    .bind(id)
    .bind(keep.unwrap_or(""))
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::UserChangePassword,
            "user",
            Some(id),
            json!({ "otherSessionsEnded": ended }),
        )
        .await?;
    tx.commit(audited).await
}

// ------------------------------------------------------------- sessions

/// A signed-in session, looked up by the hash of its cookie token.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub user: User,
    pub csrf_token: String,
    pub last_seen_at: Timestamp,
    pub expires_at: Timestamp,
}

/// Starts a session (a fresh id at every sign-in); returns it and its cookie token.
pub async fn start_session(
    db: &Db,
    ctx: &AuditCtx,
    user: &User,
    absolute_ms: i64,
) -> StoreResult<(Session, String)> {
    let now = db.clock.now();
    let token = token();
    let session = Session {
        id: token_hash(&token),
        user: user.clone(),
        csrf_token: self::token(),
        last_seen_at: now,
        expires_at: now.plus_millis(absolute_ms),
    };
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| {
        sqlx::query(
        "INSERT INTO sessions (id, user_id, csrf_token, created_at, last_seen_at, expires_at, client_addr, user_agent) \
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7)"
    )
    .bind(&session.id)
    .bind(user.id)
    .bind(&session.csrf_token)
    .bind(now.millis())
    .bind(session.expires_at.millis())
    .bind(&ctx.client_addr)
    .bind(&ctx.user_agent)
    .execute(c)
    .await?
    .rows_affected()
    });
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE users SET last_login_at = $1 WHERE id = $2"
    )
    .bind(now.millis())
    .bind(user.id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(Action::UserLogin, "user", Some(user.id), json!({}))
        .await?;
    tx.commit(audited).await?;
    Ok((session, token))
}

/// The live session of a cookie token: not expired absolutely, not idle
/// longer than `idle_ms`. Expired ones are deleted on sight.
pub async fn session(db: &Db, token: &str, idle_ms: i64) -> StoreResult<Option<Session>> {
    let id = token_hash(token);
    let row: Option<(i64, String, i64, i64)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT user_id, csrf_token, last_seen_at, expires_at FROM sessions WHERE id = $1 AND NOT pending_2fa"
    )
    .bind(&id)
    .fetch_optional(c)
    .await?
    });
    let Some((user_id, csrf_token, last_seen, expires)) = row else {
        return Ok(None);
    };
    let now = db.clock.now().millis();
    if now >= expires || now - last_seen > idle_ms {
        end_session(db, &id).await?;
        return Ok(None);
    }
    let user = get(db, user_id).await?;
    Ok(Some(Session {
        id,
        user,
        csrf_token,
        last_seen_at: Timestamp::from_millis(last_seen),
        expires_at: Timestamp::from_millis(expires),
    }))
}

pub async fn touch_session(db: &Db, id: &str) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE sessions SET last_seen_at = $1 WHERE id = $2"
    )
    .bind(db.clock.now().millis())
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

pub async fn end_session(db: &Db, id: &str) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM sessions WHERE id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}

/// Signs out: ends the session, recorded as the user's act.
pub async fn logout(db: &Db, ctx: &AuditCtx, session: &Session) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM sessions WHERE id = $1"
    )
    .bind(&session.id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(Action::UserLogout, "user", Some(session.user.id), json!({}))
        .await?;
    tx.commit(audited).await
}

// ------------------------------------------------------------- first owner

/// Issues a one-time setup token when there are no users and no live token.
pub async fn issue_setup_token(db: &Db, valid_ms: i64) -> StoreResult<Option<String>> {
    if count(db).await? > 0 {
        return Ok(None);
    }
    let token = token();
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query("DELETE FROM setup_tokens")
        .execute(c)
        .await?
        .rows_affected());
    on_tx!(&mut tx, |c| sqlx::query(
        "INSERT INTO setup_tokens (token_hash, expires_at) VALUES ($1, $2)"
    )
    .bind(token_hash(&token))
    .bind(db.clock.now().plus_millis(valid_ms).millis())
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await?;
    Ok(Some(token))
}

/// Spends a setup token on the first owner; refused once used, expired, or
/// when a user exists already.
pub async fn setup_owner(
    db: &Db,
    ctx: &AuditCtx,
    token: &str,
    email: &Email,
    name: &str,
    password_hash: &str,
) -> StoreResult<User> {
    let now = db.clock.now().millis();
    let mut tx = db.begin_as(ctx).await?;
    let spent = on_tx!(&mut tx, |c| {
        sqlx::query(
        "UPDATE setup_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1"
    )
    .bind(now)
    .bind(token_hash(token))
    .execute(c)
    .await?
    .rows_affected()
    });
    let users: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM users"
    )
    .fetch_one(c)
    .await?);
    if spent != 1 || users > 0 {
        return Err(StoreError::Conflict(
            "this setup link is used, expired or no longer needed".into(),
        ));
    }
    let row: UserRow = on_tx!(&mut tx, |c| {
        sqlx::query_as(concat!(
        "INSERT INTO users (email, name, role, password_hash, created_at) VALUES ($1, $2, 'owner', $3, $4) RETURNING ",
        user_cols!()
    ))
    .bind(email.as_str())
    .bind(name)
    .bind(password_hash)
    .bind(now)
    .fetch_one(c)
    .await?
    });
    let user = User::try_from(row)?;
    let audited = tx
        .audit(
            Action::UserCreate,
            "user",
            Some(user.id),
            json!({ "email": &user.email, "role": "owner", "via": "setup link" }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(user)
}

// ------------------------------------------------------------- administration

pub async fn list(db: &Db) -> StoreResult<Vec<User>> {
    let rows: Vec<UserRow> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        user_cols!(),
        " FROM users ORDER BY id"
    ))
    .fetch_all(c)
    .await?);
    rows.into_iter().map(User::try_from).collect()
}

/// Owners other than `except`.
async fn other_owners(tx: &mut crate::db::Tx, except: Id) -> StoreResult<i64> {
    Ok(on_tx!(tx, |c| sqlx::query_scalar(
        "SELECT COUNT(*) FROM users WHERE role = 'owner' AND id <> $1"
    )
    .bind(except)
    .fetch_one(c)
    .await?))
}

const LAST_OWNER: &str = "this is the last owner: make someone else owner first";

/// Changes name and/or role; refuses to leave the service without an owner.
pub async fn update(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    name: Option<&str>,
    role: Option<Role>,
) -> StoreResult<User> {
    let mut tx = db.begin_as(ctx).await?;
    let before = {
        let row: Option<UserRow> = locked!(
            &mut tx,
            concat!("SELECT ", user_cols!(), " FROM users WHERE id = $1"),
            |c, q| sqlx::query_as(q).bind(id).fetch_optional(c).await?
        );
        User::try_from(row.ok_or(StoreError::NotFound("user"))?)?
    };
    if before.role == Role::Owner
        && role.is_some_and(|r| r != Role::Owner)
        && other_owners(&mut tx, id).await? == 0
    {
        return Err(StoreError::Conflict(LAST_OWNER.into()));
    }
    let row: UserRow = on_tx!(&mut tx, |c| sqlx::query_as(concat!(
        "UPDATE users SET name = $1, role = $2 WHERE id = $3 RETURNING ",
        user_cols!()
    ))
    .bind(name.unwrap_or(&before.name))
    .bind(role.unwrap_or(before.role).as_str())
    .bind(id)
    .fetch_one(c)
    .await?);
    let after = User::try_from(row)?;
    let audited = tx
        .audit(
            Action::UserUpdate,
            "user",
            Some(id),
            crate::audit::changes(&before, &after),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(after)
}

pub async fn delete(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<()> {
    let mut tx = db.begin_as(ctx).await?;
    let role: Option<String> = on_tx!(&mut tx, |c| sqlx::query_scalar(
        "SELECT role FROM users WHERE id = $1"
    )
    .bind(id)
    .fetch_optional(c)
    .await?);
    let role = role.ok_or(StoreError::NotFound("user"))?;
    if role == "owner" && other_owners(&mut tx, id).await? == 0 {
        return Err(StoreError::Conflict(LAST_OWNER.into()));
    }
    on_tx!(&mut tx, |c| sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(id)
        .execute(c)
        .await?
        .rows_affected());
    let audited = tx
        .audit(
            Action::UserDelete,
            "user",
            Some(id),
            json!({ "role": role }),
        )
        .await?;
    tx.commit(audited).await
}

/// Ends every session of a user.
pub async fn revoke_sessions(db: &Db, ctx: &AuditCtx, id: Id) -> StoreResult<u64> {
    let mut tx = db.begin_as(ctx).await?;
    let n = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM sessions WHERE user_id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    let audited = tx
        .audit(
            Action::UserRevokeSessions,
            "user",
            Some(id),
            json!({ "sessionsEnded": n }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(n)
}

/// The page a person chose to work on, if they chose one.
pub async fn current_page(db: &Db, user: Id) -> StoreResult<Option<Id>> {
    let id: Option<Option<Id>> = on_db!(db, |c| sqlx::query_scalar(
        "SELECT current_page_id FROM users WHERE id = $1"
    )
    .bind(user)
    .fetch_optional(c)
    .await?);
    Ok(id.flatten())
}

/// Remembers the page a person works on (a preference, not a change of
/// record: nothing to audit).
pub async fn set_current_page(db: &Db, user: Id, page: Id) -> StoreResult<()> {
    let mut tx = db.bookkeeping().await?;
    on_tx!(&mut tx, |c| sqlx::query(
        "UPDATE users SET current_page_id = $1 WHERE id = $2"
    )
    .bind(page)
    .bind(user)
    .execute(c)
    .await?
    .rows_affected());
    tx.commit().await
}
