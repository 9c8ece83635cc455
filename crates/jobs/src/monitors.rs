//! Running monitors (docs/monitors.md): the checks themselves (HTTP through
//! the guarded client, TCP connect, a heartbeat's silence) and the loop
//! that leases due monitors, checks them from a bounded pool and records
//! each result (the store moves components).
//!
//! Targets pass the same outgoing rule as webhooks, with their own allow
//! list (`monitor_allow`): watching internal services is what monitors are
//! for, so the switch is separate from the one for notifications.

use crate::outgoing::{Guard, Outgoing};
use ipnet::IpNet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use upstate_core::monitors::{CheckResult, MonitorConfig, expected_codes, host_port};
use upstate_core::{MonitorKind, Timestamp};
use upstate_store::monitors::{self, Stored};
use upstate_store::{Db, StoreResult};

/// How long a leased check is ours before another instance may take it.
const LEASE_MS: i64 = 90_000;
/// Monitors leased at once.
const BATCH: i64 = 200;
/// The longest the loop sleeps without looking for due checks.
const POLL: Duration = Duration::from_secs(1);

/// What the runner may reach, and how many checks run at once.
#[derive(Debug, Clone)]
pub struct MonitorSettings {
    /// Ranges monitors may reach although the outgoing rule forbids them
    /// (`monitor_allow`: private networks, localhost).
    pub allow: Vec<IpNet>,
    /// Checks in flight at once.
    pub concurrency: usize,
}

impl Default for MonitorSettings {
    fn default() -> Self {
        MonitorSettings {
            allow: Vec::new(),
            concurrency: 64,
        }
    }
}

/// Makes checks. Cheap to clone.
#[derive(Clone)]
pub struct Checker {
    follow: Outgoing,
    stay: Outgoing,
    guard: Arc<Guard>,
    slots: Arc<Semaphore>,
    /// Wakes the loop when a monitor is created or changed.
    pub wake: Arc<Notify>,
}

impl Checker {
    pub fn new(settings: &MonitorSettings) -> Result<Checker, String> {
        let guard = Guard {
            allow: settings.allow.clone(),
        };
        let limit = Duration::from_secs(60);
        Ok(Checker {
            follow: Outgoing::build(guard.clone(), limit, true, "status page monitor")?,
            stay: Outgoing::build(guard.clone(), limit, false, "status page monitor")?,
            guard: Arc::new(guard),
            slots: Arc::new(Semaphore::new(settings.concurrency.max(1))),
            wake: Arc::new(Notify::new()),
        })
    }

    /// Runs one check of `c`, starting at `at` (a heartbeat's check is its
    /// silence).
    pub async fn check(&self, c: &MonitorConfig, at: Timestamp) -> CheckResult {
        let started = Instant::now();
        let outcome = match c.kind {
            MonitorKind::Http => self.http(c).await,
            MonitorKind::Tcp => self.tcp(c).await.map(|()| None),
            MonitorKind::Heartbeat => Err((
                None,
                format!("no heartbeat in the last {} seconds", c.interval_seconds),
            )),
        };
        // A heartbeat's silence has no latency to speak of.
        let latency_ms =
            (c.kind != MonitorKind::Heartbeat).then(|| started.elapsed().as_millis() as i64);
        match outcome {
            Ok(status_code) => CheckResult {
                at,
                ok: true,
                latency_ms,
                status_code,
                error: None,
                cert_expires_at: None,
            },
            Err((status_code, error)) => CheckResult {
                at,
                ok: false,
                latency_ms,
                status_code,
                error: Some(error),
                cert_expires_at: None,
            },
        }
    }

    async fn http(&self, c: &MonitorConfig) -> Result<Option<i64>, (Option<i64>, String)> {
        let client = if c.follow_redirects {
            &self.follow
        } else {
            &self.stay
        };
        let headers: Vec<(&str, String)> = c
            .headers
            .iter()
            .map(|h| (h.name.as_str(), h.value.clone()))
            .collect();
        let timeout = Duration::from_millis(c.timeout_ms.max(1) as u64);
        let answer = client
            .request(
                &c.method,
                &c.target,
                &headers,
                c.body.as_bytes(),
                Some(timeout),
            )
            .await
            .map_err(|f| (None, f.reason))?;
        let code = i64::from(answer.status);
        let expected = expected_codes(&c.expected_status).unwrap_or_else(|_| vec![(200, 299)]);
        if !expected
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&answer.status))
        {
            return Err((
                Some(code),
                format!(
                    "answered HTTP {} (expected {})",
                    answer.status, c.expected_status
                ),
            ));
        }
        if !c.keyword.is_empty() && !answer.body.contains(&c.keyword) {
            return Err((
                Some(code),
                format!("the answer does not contain {:?}", c.keyword),
            ));
        }
        Ok(Some(code))
    }

    async fn tcp(&self, c: &MonitorConfig) -> Result<(), (Option<i64>, String)> {
        let (host, port) = host_port(&c.target).map_err(|e| (None, e))?;
        let timeout = Duration::from_millis(c.timeout_ms.max(1) as u64);
        let work = async {
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| format!("{host} does not resolve: {e}"))?
                .collect();
            let Some(addr) = addrs.iter().find(|a| self.guard.permits(a.ip())) else {
                return Err(match addrs.first() {
                    Some(a) => format!(
                        "refused: {} is a private, loopback, link-local or reserved address \
                         (allow it with monitor_allow if this target is meant)",
                        a.ip()
                    ),
                    None => format!("{host} has no address"),
                });
            };
            tokio::net::TcpStream::connect(addr)
                .await
                .map(|_| ())
                .map_err(|e| format!("could not connect to {addr}: {e}"))
        };
        match tokio::time::timeout(timeout, work).await {
            Ok(r) => r.map_err(|e| (None, e)),
            Err(_) => Err((None, format!("no connection within {} ms", c.timeout_ms))),
        }
    }
}

/// When a check that was due at `due` and ran at `now` should run next:
/// one interval after it was due, so checks keep their rhythm, but never in
/// the past (a runner that was down does not catch up in a burst).
fn next_run(c: &MonitorConfig, due: Timestamp, now: Timestamp) -> Timestamp {
    let every = c.interval_seconds * 1_000;
    let next = due.millis() + every;
    Timestamp::from_millis(if next > now.millis() {
        next
    } else {
        now.millis() + every
    })
}

/// Checks every monitor due at `now` and records the results; returns how
/// many it recorded.
pub async fn run_due(db: &Db, checker: &Checker, now: Timestamp) -> StoreResult<usize> {
    let round = Instant::now();
    let leased = monitors::lease_due(db, now, LEASE_MS, BATCH).await?;
    let mut work = JoinSet::new();
    for (id, lease) in leased {
        let m: Stored = match monitors::stored(db, id).await {
            Ok(m) => m,
            Err(upstate_store::StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        let checker = checker.clone();
        let db = db.clone();
        work.spawn(async move {
            let _slot = checker.slots.clone().acquire_owned().await;
            // `now` moved on by the time this check waited for its slot.
            let at = Timestamp::from_millis(now.millis() + round.elapsed().as_millis() as i64);
            let r = checker.check(&m.monitor.config, at).await;
            let next = next_run(&m.monitor.config, m.monitor.next_check_at, at);
            monitors::record(&db, id, Some(lease), &r, next).await
        });
    }
    let mut recorded = 0;
    while let Some(done) = work.join_next().await {
        match done {
            Ok(Ok(Some(_))) => recorded += 1,
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "recording a check failed"),
            Err(e) => tracing::warn!(error = %e, "a check panicked"),
        }
    }
    Ok(recorded)
}

/// Runs until cancelled: checks what is due, then sleeps until the next
/// check is due (at most a second), or until a monitor changes.
pub async fn run_monitors(db: Db, checker: Checker, cancel: CancellationToken) {
    loop {
        if let Err(e) = run_due(&db, &checker, Timestamp::now()).await {
            tracing::warn!(error = %e, "monitor round failed");
        }
        crate::beats::beat(crate::beats::Loop::Monitors);
        let wait = match monitors::next_due(&db).await {
            Ok(Some(at)) => {
                let ms = (at.millis() - Timestamp::now().millis()).max(0) as u64;
                Duration::from_millis(ms).min(POLL)
            }
            _ => POLL,
        };
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = checker.wake.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_keep_their_rhythm_but_never_run_in_the_past() {
        let c = MonitorConfig {
            interval_seconds: 30,
            ..MonitorConfig::default()
        };
        let t = Timestamp::from_millis;
        assert_eq!(next_run(&c, t(0), t(400)), t(30_000));
        assert_eq!(next_run(&c, t(0), t(95_000)), t(125_000));
    }
}
