//! The one guard of every check of a secret: passwords (sign-in, password
//! change, step-up, two-factor proofs), second factors (TOTP and recovery
//! codes), page passwords and the setup link. The comparisons themselves live
//! in the private `verify` module, so a route cannot check a secret except
//! through here.
//!
//! Each attempt counts against three subjects of its kind of secret:
//! - the account from this client address: 3 free failures (10 for page
//!   passwords, which many visitors share and mistype);
//! - the account from anywhere: 10 free (100 for page passwords), so an
//!   attacker with many addresses still meets a lock;
//! - the address across accounts: 50 free, so only floods trip it and one
//!   person behind an office NAT does not shut out the others.
//!
//! IPv6 clients count per /64, the block one subscriber usually holds. Past
//! its free failures a subject is locked for 1 s, doubling with each failure
//! up to 15 min (`upstate_store::failures`). While any subject of an attempt
//! is locked, the attempt is refused before any checking with 429 and a
//! `Retry-After` that names the end of the latest lock, so a client that
//! obeys it is not refused again. A right answer forgets the account's
//! counts (never the address's: a valid account of one's own must not wash
//! away guesses at others). A pending sign-in ends after 5 wrong codes and
//! then counts as a failed sign-in; a step-up ends after 3 wrong proofs.
//! Every failure, lock and ending is in the audit log, without the guess.

mod verify;

use crate::client_ip::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use upstate_core::audit::Actor;
use upstate_core::{Id, Timestamp};
use upstate_store::failures::{self, Counter, Failure, Mortal};
use upstate_store::users::{self, User};
use upstate_store::{AuditCtx, StoreError, two_factor};

/// Failures of one address, across accounts, before it is locked.
pub const ADDRESS_FREE: i64 = 50;
/// Wrong codes a pending sign-in survives.
pub const PENDING_CODES: i64 = 5;
/// Wrong proofs a step-up survives.
pub const STEP_UP_PROOFS: i64 = 3;

#[derive(Debug, Clone, Copy)]
enum Secret {
    Password,
    SecondFactor,
    PagePassword,
    SetupLink,
}

impl Secret {
    fn name(self) -> &'static str {
        match self {
            Secret::Password => "password",
            Secret::SecondFactor => "second factor",
            Secret::PagePassword => "page password",
            Secret::SetupLink => "setup link",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Secret::Password => "pw",
            Secret::SecondFactor => "2fa",
            Secret::PagePassword => "page",
            Secret::SetupLink => "setup",
        }
    }

    fn account_free(self) -> i64 {
        match self {
            Secret::PagePassword => 100,
            _ => 10,
        }
    }

    fn pair_free(self) -> i64 {
        match self {
            Secret::PagePassword => 10,
            _ => 3,
        }
    }
}

/// What a proof of a signed-in person is for: a mortal step-up, or a plain
/// proof (password change, two-factor changes).
#[derive(Debug, Clone, Copy)]
pub enum Purpose<'a> {
    Proof,
    StepUp {
        token: &'a str,
    },
    /// The second step of a sign-in whose session id is given.
    SignIn {
        pending: &'a str,
    },
}

/// A second factor as the person gives it.
pub enum Code {
    Totp(String),
    Recovery(String),
}

struct Attempt {
    secret: Secret,
    /// `user:<email>`, `page:<id>`, `install`.
    account: String,
    target_type: &'static str,
    target_id: Option<Id>,
    actor: Actor,
    mortal: Option<Mortal>,
    /// Whether a right answer forgets the account's failures.
    forget_on_success: bool,
}

impl Attempt {
    /// An attempt at one of a known person's secrets.
    fn of_user(secret: Secret, user: &User, mortal: Option<Mortal>) -> Attempt {
        Attempt {
            secret,
            account: format!("user:{}", user.email),
            target_type: "user",
            target_id: Some(user.id),
            actor: user_actor(user),
            mortal,
            forget_on_success: true,
        }
    }

    /// An attempt by someone not signed in.
    fn anonymous(secret: Secret, account: String, target: (&'static str, Option<Id>)) -> Attempt {
        Attempt {
            secret,
            account,
            target_type: target.0,
            target_id: target.1,
            actor: Actor::anonymous(),
            mortal: None,
            forget_on_success: true,
        }
    }
}

/// A request's seat at the guard: who is asking, from where, on which route.
pub struct Guard {
    state: AppState,
    client: IpAddr,
    route: String,
    user_agent: Option<String>,
}

impl FromRequestParts<AppState> for Guard {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .ok_or_else(|| ApiError::Internal("no peer address".into()))?;
        // Routes that check secrets have no path parameters: the path is the route.
        let route = parts.uri.path().chars().take(200).collect();
        let user_agent = parts
            .headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(|ua| ua.chars().take(512).collect());
        Ok(Guard {
            client: client_ip(peer, &parts.headers, &state.settings.trusted_proxies),
            state: state.clone(),
            route,
            user_agent,
        })
    }
}

/// The block an address counts as: itself for IPv4, its /64 for IPv6.
fn network(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// 429 until `until`, rounded up to whole seconds.
fn retry_after(until: Timestamp, now: Timestamp) -> ApiError {
    let ms = (until.millis() - now.millis()).max(0) as u64;
    ApiError::RateLimited {
        retry_after_secs: ms.div_ceil(1000).max(1),
    }
}

fn user_actor(user: &User) -> Actor {
    Actor::user(user.id, &user.email)
}

impl Guard {
    fn counters(&self, secret: Secret, account: &str) -> [Counter; 3] {
        let (kind, addr) = (secret.key(), network(self.client));
        [
            Counter {
                key: format!("{kind}|{account}"),
                free: secret.account_free(),
                scope: "account",
            },
            Counter {
                key: format!("{kind}|{account}|{addr}"),
                free: secret.pair_free(),
                scope: "account+address",
            },
            Counter {
                key: format!("{kind}|addr|{addr}"),
                free: ADDRESS_FREE,
                scope: "address",
            },
        ]
    }

    fn ctx(&self, actor: Actor) -> AuditCtx {
        AuditCtx {
            actor,
            client_addr: Some(self.client.to_string()),
            user_agent: self.user_agent.clone(),
            quiet: false,
        }
    }

    /// Refuses while locked, runs the check, and counts a wrong answer.
    async fn attempt(
        &self,
        a: Attempt,
        check: impl Future<Output = ApiResult<bool>>,
    ) -> ApiResult<bool> {
        let counters = self.counters(a.secret, &a.account);
        let keys: Vec<&str> = counters.iter().map(|c| c.key.as_str()).collect();
        if let Some(until) = failures::locked_until(&self.state.db, &keys).await? {
            return Err(retry_after(until, self.state.db.clock.now()));
        }
        let mortal = a.mortal.map(|m| {
            let (key, free) = match &m {
                Mortal::PendingSignIn { session_id } => {
                    (format!("pending|{session_id}"), PENDING_CODES)
                }
                Mortal::StepUp { token_hash } => (format!("step-up|{token_hash}"), STEP_UP_PROOFS),
            };
            (
                Counter {
                    key,
                    free,
                    scope: "mortal",
                },
                m,
            )
        });
        if check.await? {
            if a.forget_on_success {
                let mut forget = keys[..2].to_vec();
                forget.extend(mortal.as_ref().map(|(c, _)| c.key.as_str()));
                failures::clear(&self.state.db, &forget).await?;
            }
            return Ok(true);
        }
        let ended_kind = mortal.as_ref().map(|(_, m)| m.clone());
        let failure = Failure {
            route: &self.route,
            secret: a.secret.name(),
            target_type: a.target_type,
            target_id: a.target_id,
            counters: &counters,
            mortal,
        };
        let outcome = failures::record(&self.state.db, &self.ctx(a.actor.clone()), failure).await?;
        match ended_kind.filter(|_| outcome.ended) {
            Some(Mortal::PendingSignIn { .. }) => {
                // The sign-in as a whole failed: it counts against the password's throttle.
                let counters = self.counters(Secret::Password, &a.account);
                let failure = Failure {
                    route: &self.route,
                    secret: Secret::Password.name(),
                    target_type: a.target_type,
                    target_id: a.target_id,
                    counters: &counters,
                    mortal: None,
                };
                failures::record(&self.state.db, &self.ctx(a.actor), failure).await?;
                Err(ApiError::Unauthorized(
                    "too many wrong codes: sign in again with your password".into(),
                ))
            }
            Some(Mortal::StepUp { .. }) => Err(ApiError::Conflict(
                "too many wrong proofs: this step-up has ended; start a new one".into(),
            )),
            None => Ok(false),
        }
    }

    fn mortal(purpose: Purpose<'_>) -> Option<Mortal> {
        match purpose {
            Purpose::Proof => None,
            Purpose::StepUp { token } => Some(Mortal::StepUp {
                token_hash: users::token_hash(token),
            }),
            Purpose::SignIn { pending } => Some(Mortal::PendingSignIn {
                session_id: pending.to_string(),
            }),
        }
    }

    /// Sign-in's password check: the user, when the email and the password
    /// match. An unknown email costs the same work and counts the same way.
    pub async fn sign_in(&self, email: &str, password: String) -> ApiResult<Option<User>> {
        let found = users::credentials(&self.state.db, email).await?;
        let (user, hash) = found.map_or((None, None), |(u, h)| (Some(u), Some(h)));
        let target = ("user", user.as_ref().map(|u| u.id));
        let attempt = Attempt {
            // With two-factor on, a right password is half a sign-in: its
            // failures stay until the second factor passes too.
            forget_on_success: !user.as_ref().is_some_and(|u| u.totp_enabled),
            ..Attempt::anonymous(Secret::Password, format!("user:{email}"), target)
        };
        let ok = self
            .attempt(attempt, async {
                Ok(verify::password(password, hash).await)
            })
            .await?;
        Ok(user.filter(|_| ok))
    }

    /// A signed-in person's password, proven again.
    pub async fn password(
        &self,
        user: &User,
        password: String,
        purpose: Purpose<'_>,
    ) -> ApiResult<bool> {
        let stored = users::password_hash(&self.state.db, user.id).await?;
        let attempt = Attempt::of_user(Secret::Password, user, Self::mortal(purpose));
        self.attempt(attempt, async {
            Ok(verify::password(password, Some(stored)).await)
        })
        .await
    }

    /// A current TOTP code (never one of a step already used) or an unused
    /// recovery code of the user's.
    pub async fn second_factor(
        &self,
        user: &User,
        code: Code,
        purpose: Purpose<'_>,
    ) -> ApiResult<bool> {
        let db = &self.state.db;
        let attempt = Attempt::of_user(Secret::SecondFactor, user, Self::mortal(purpose));
        let check = async {
            match code {
                Code::Recovery(c) => Ok(two_factor::spend_code(db, user.id, &c).await?),
                Code::Totp(c) => {
                    let secret = two_factor::state(db, user.id).await?.secret;
                    match secret.and_then(|s| verify::totp_step(&s, &c, clock_secs(db))) {
                        Some(step) => Ok(two_factor::use_step(db, user.id, step).await?),
                        None => Ok(false),
                    }
                }
            }
        };
        let ok = self.attempt(attempt, check).await?;
        if ok && matches!(purpose, Purpose::SignIn { .. }) {
            // The sign-in is whole now: its password failures are forgotten too.
            let counters = self.counters(Secret::Password, &format!("user:{}", user.email));
            failures::clear(db, &[&counters[0].key, &counters[1].key]).await?;
        }
        Ok(ok)
    }

    /// A code of a secret being set up: the time step it matched.
    pub async fn new_second_factor(
        &self,
        user: &User,
        secret: &str,
        code: &str,
    ) -> ApiResult<Option<i64>> {
        let attempt = Attempt {
            forget_on_success: false,
            ..Attempt::of_user(Secret::SecondFactor, user, None)
        };
        let mut step = None;
        self.attempt(attempt, async {
            step = verify::totp_step(secret, code, clock_secs(&self.state.db));
            Ok(step.is_some())
        })
        .await?;
        Ok(step)
    }

    /// A visitor's password for a private page (`hash` is the page's).
    pub async fn page_password(&self, page: Id, hash: String, password: String) -> ApiResult<bool> {
        let attempt = Attempt::anonymous(
            Secret::PagePassword,
            format!("page:{page}"),
            ("status_page", Some(page)),
        );
        self.attempt(attempt, async {
            Ok(verify::password(password, Some(hash)).await)
        })
        .await
    }

    /// Spends the setup link on the first owner (the password is hashed only
    /// once the guard lets the attempt through).
    pub async fn setup_owner(
        &self,
        ctx: &AuditCtx,
        token: &str,
        email: &upstate_core::values::Email,
        name: &str,
        pw: String,
    ) -> ApiResult<User> {
        let attempt = Attempt::anonymous(Secret::SetupLink, "install".into(), ("setup", None));
        let mut owner = None;
        self.attempt(attempt, async {
            let hash = crate::password::hash(pw).await?;
            match users::setup_owner(&self.state.db, ctx, token, email, name, &hash).await {
                Ok(user) => {
                    owner = Some(user);
                    Ok(true)
                }
                Err(StoreError::Conflict(_)) => Ok(false),
                Err(e) => Err(e.into()),
            }
        })
        .await?;
        owner.ok_or_else(|| {
            ApiError::Conflict("this setup link is used, expired or no longer needed".into())
        })
    }
}

/// The install's clock in whole seconds, for TOTP steps: the same clock as
/// every other time the server keeps (moved in tests, the wall clock here).
fn clock_secs(db: &upstate_store::Db) -> u64 {
    u64::try_from(db.clock.now().millis() / 1000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::network;

    #[test]
    fn ipv6_clients_count_per_64_and_mapped_ipv4_as_ipv4() {
        let a = network(
            "2001:db8:1:2:aaaa::1"
                .parse()
                .unwrap_or(std::net::IpAddr::from([0; 16])),
        );
        let b = network(
            "2001:db8:1:2:bbbb::9"
                .parse()
                .unwrap_or(std::net::IpAddr::from([0; 16])),
        );
        assert_eq!(a, b);
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(
            network(
                "::ffff:192.0.2.7"
                    .parse()
                    .unwrap_or(std::net::IpAddr::from([0; 4]))
            ),
            "192.0.2.7"
        );
        assert_eq!(
            network(
                "192.0.2.7"
                    .parse()
                    .unwrap_or(std::net::IpAddr::from([0; 16]))
            ),
            "192.0.2.7"
        );
    }
}
