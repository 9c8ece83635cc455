//! Single sign-on's two records: sign-ins under way at the identity
//! provider (each taken once, within ten minutes), and the admission of a
//! person the provider vouched for: found by issuer and subject, else by a
//! verified email, else made, with the role their groups give. What the
//! provider says is checked by the server before it comes here.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::users::{User, UserRow, token_hash, user_cols};
use serde_json::json;
use upstate_core::Id;
use upstate_core::audit::Action;
use upstate_core::roles::Role;
use upstate_core::values::Email;

/// How long a sign-in at the provider may take.
pub const PENDING_MS: i64 = 10 * 60 * 1000;

/// A sign-in under way: what its answer is checked with.
#[derive(Debug, Clone)]
pub struct Pending {
    pub nonce: String,
    pub verifier: String,
    /// Where the person goes after (a path of this server).
    pub next_path: String,
    /// A step-up at the provider: the session and step-up token it verifies.
    pub session_id: Option<String>,
    pub step_up: Option<String>,
    /// A viewer's sign-in to this private page (not a team member's).
    pub viewer_page: Option<Id>,
}

/// Records a sign-in under way under its state (stored hashed), and drops
/// those that ran out.
pub async fn begin(db: &Db, state: &str, p: &Pending) -> StoreResult<()> {
    let now = db.clock.now().millis();
    on_db!(db, |c| sqlx::query(
        "DELETE FROM sso_logins WHERE created_at < $1"
    )
    .bind(now - PENDING_MS)
    .execute(c)
    .await?
    .rows_affected());
    on_db!(db, |c| {
        sqlx::query(
        "INSERT INTO sso_logins (state_hash, nonce, verifier, next_path, session_id, step_up, created_at, viewer_page) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    )
    .bind(token_hash(state))
    .bind(&p.nonce)
    .bind(&p.verifier)
    .bind(&p.next_path)
    .bind(&p.session_id)
    .bind(&p.step_up)
    .bind(now)
    .bind(p.viewer_page)
    .execute(c)
    .await?
    .rows_affected()
    });
    Ok(())
}

type PendingRow = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
);

/// Takes the sign-in of this state: once, and only within ten minutes.
pub async fn take(db: &Db, state: &str) -> StoreResult<Option<Pending>> {
    let row: Option<PendingRow> = on_db!(db, |c| sqlx::query_as(
        "DELETE FROM sso_logins WHERE state_hash = $1 \
         RETURNING nonce, verifier, next_path, session_id, step_up, created_at, viewer_page"
    )
    .bind(token_hash(state))
    .fetch_optional(c)
    .await?);
    let now = db.clock.now().millis();
    Ok(row.filter(|r| now - r.5 <= PENDING_MS).map(
        |(nonce, verifier, next_path, session_id, step_up, _, viewer_page)| Pending {
            nonce,
            verifier,
            next_path,
            session_id,
            step_up,
            viewer_page,
        },
    ))
}

/// Who the provider vouched for.
#[derive(Debug, Clone)]
pub struct Identity {
    /// `{issuer} {sub}`: the same person at the same provider, whatever
    /// their email becomes.
    pub subject: String,
    pub email: Email,
    /// Whether the provider says the email is the person's (absent: false).
    pub email_verified: bool,
    pub name: String,
}

/// The account of a person the provider vouched for, with the role their
/// groups give now (`role`; none: refused). An owner stays owner: single
/// sign-on neither makes nor unmakes owners. A refusal is audited and
/// answered with its reason.
pub async fn admit(
    db: &Db,
    ctx: &AuditCtx,
    who: &Identity,
    role: Option<Role>,
) -> StoreResult<Result<User, String>> {
    let mut tx = db.begin_as(ctx).await?;
    let by_subject: Option<UserRow> = locked!(
        &mut tx,
        concat!(
            "SELECT ",
            user_cols!(),
            " FROM users WHERE sso_subject = $1"
        ),
        |c, q| sqlx::query_as(q)
            .bind(&who.subject)
            .fetch_optional(c)
            .await?
    );
    let linked = by_subject.is_none();
    let found = match by_subject {
        Some(row) => Some(User::try_from(row)?),
        None => {
            let by_email: Option<UserRow> = locked!(
                &mut tx,
                concat!("SELECT ", user_cols!(), " FROM users WHERE email = $1"),
                |c, q| sqlx::query_as(q)
                    .bind(who.email.as_str())
                    .fetch_optional(c)
                    .await?
            );
            by_email.map(User::try_from).transpose()?
        }
    };
    let refusal = match (&found, role) {
        (Some(u), _) if !u.sso && !who.email_verified => Some(
            "an account with this email exists here, and the identity provider does not say the email is verified".to_string(),
        ),
        (Some(u), _) if u.sso && role.is_none() && u.role != Role::Owner => {
            Some("your groups at the identity provider give no role here any more".into())
        }
        (None, None) => {
            Some("your groups at the identity provider give no role here".into())
        }
        _ => None,
    };
    if let Some(reason) = refusal {
        let audited = tx
            .audit(
                Action::AuthFailure,
                "user",
                found.as_ref().map(|u| u.id),
                json!({ "via": "sso", "email": who.email.as_str(), "reason": &reason }),
            )
            .await?;
        tx.commit(audited).await?;
        return Ok(Err(reason));
    }
    let user = match found {
        Some(before) => {
            let next_role = match (before.role, role) {
                (Role::Owner, _) | (_, None) => before.role,
                (_, Some(r)) => r,
            };
            // A password someone else chose (an admin made the account)
            // is retired: the provider vouched for this person, and the
            // one who chose it must not keep a way in. So are the sessions
            // it opened, which waited for it to be changed.
            if before.must_change_password {
                on_tx!(&mut tx, |c| sqlx::query(
                    "DELETE FROM sessions WHERE user_id = $1"
                )
                .bind(before.id)
                .execute(c)
                .await?
                .rows_affected());
            }
            let row: UserRow = on_tx!(&mut tx, |c| {
                sqlx::query_as(concat!(
                "UPDATE users SET sso_subject = $1, role = $2, \
                 password_hash = CASE WHEN must_change_password THEN '!sso' ELSE password_hash END, \
                 must_change_password = FALSE WHERE id = $3 RETURNING ",
                user_cols!()
            ))
            .bind(&who.subject)
            .bind(next_role.as_str())
            .bind(before.id)
            .fetch_one(c)
            .await?
            });
            let after = User::try_from(row)?;
            if after != before || linked {
                let mut change = crate::audit::changes(&before, &after);
                if let Some(o) = change.as_object_mut() {
                    o.insert("via".into(), json!("sso"));
                    o.insert("linked".into(), json!(linked));
                }
                let audited = tx
                    .audit(Action::UserUpdate, "user", Some(after.id), change)
                    .await?;
                tx.commit(audited).await?;
            } else {
                // Nothing changed: the transaction only held the row.
                drop(tx);
            }
            after
        }
        None => {
            let role = role.unwrap_or(Role::Viewer);
            let name = if who.name.trim().is_empty() {
                who.email
                    .as_str()
                    .split('@')
                    .next()
                    .unwrap_or("")
                    .to_string()
            } else {
                who.name.trim().chars().take(100).collect()
            };
            // No password opens this account: `!` is no hash argon2 reads.
            let row: UserRow = on_tx!(&mut tx, |c| {
                sqlx::query_as(concat!(
                "INSERT INTO users (email, name, role, password_hash, created_at, must_change_password, sso_subject) \
                 VALUES ($1, $2, $3, '!sso', $4, FALSE, $5) RETURNING ",
                user_cols!()
            ))
            .bind(who.email.as_str())
            .bind(&name)
            .bind(role.as_str())
            .bind(db.clock.now().millis())
            .bind(&who.subject)
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
                    json!({ "email": &user.email, "name": &user.name, "role": role, "via": "sso" }),
                )
                .await?;
            tx.commit(audited).await?;
            user
        }
    };
    Ok(Ok(user))
}

/// The provider subject of a user who came in through single sign-on.
pub async fn subject_of(db: &Db, user: Id) -> StoreResult<Option<String>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT sso_subject FROM users WHERE id = $1"
    )
    .bind(user)
    .fetch_optional(c)
    .await?)
    .flatten())
}
