//! Running monitors (docs/monitors.md): the checks themselves (HTTP through
//! the guarded client, TCP connect, a heartbeat's silence) and the loop
//! that leases due monitors, checks them from a bounded pool and records
//! each result (the store moves components).
//!
//! Targets pass the same outgoing rule as webhooks, with their own allow
//! list (`monitor_allow`): watching internal services is what monitors are
//! for, so the switch is separate from the one for notifications.

use crate::outgoing::{Guard, Outgoing, Tls};
use ipnet::IpNet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use upstate_core::monitors::{
    CheckResult, MonitorConfig, cert_expiring, dns_server, expected_codes, host_port,
};
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

/// Told of every check the runner makes (the server counts them for
/// `/api/metrics`).
pub trait Observe: Send + Sync {
    fn check(&self, component: upstate_core::Id, kind: MonitorKind, r: &CheckResult);
}

/// Makes checks. Cheap to clone.
#[derive(Clone)]
pub struct Checker {
    /// Set once by whoever counts checks; every clone sees it.
    pub observer: Arc<std::sync::OnceLock<Arc<dyn Observe>>>,
    /// Indexed by (follow redirects, verify TLS): see `client`.
    clients: [Outgoing; 4],
    guard: Arc<Guard>,
    slots: Arc<Semaphore>,
    /// Wakes the loop when a monitor is created or changed.
    pub wake: Arc<Notify>,
}

/// How one check went, before it is stamped.
#[derive(Default)]
struct Outcome {
    status_code: Option<i64>,
    error: Option<String>,
    cert_expires_at: Option<i64>,
}

impl Outcome {
    fn failed(status_code: Option<i64>, error: impl Into<String>) -> Outcome {
        Outcome {
            status_code,
            error: Some(error.into()),
            cert_expires_at: None,
        }
    }
}

impl Checker {
    pub fn new(settings: &MonitorSettings) -> Result<Checker, String> {
        let guard = Guard {
            allow: settings.allow.clone(),
        };
        let limit = Duration::from_secs(60);
        let client = |follow: bool, verify: bool| {
            let tls = if verify {
                Tls::VerifyAndWatch
            } else {
                Tls::AcceptAndWatch
            };
            Outgoing::build(guard.clone(), limit, follow, "status page monitor", tls)
        };
        Ok(Checker {
            clients: [
                client(false, false)?,
                client(false, true)?,
                client(true, false)?,
                client(true, true)?,
            ],
            observer: Arc::new(std::sync::OnceLock::new()),
            guard: Arc::new(guard),
            slots: Arc::new(Semaphore::new(settings.concurrency.max(1))),
            wake: Arc::new(Notify::new()),
        })
    }

    fn client(&self, c: &MonitorConfig) -> &Outgoing {
        &self.clients[usize::from(c.follow_redirects) * 2 + usize::from(c.verify_tls)]
    }

    /// Runs one check of `c`, starting at `at` (a heartbeat's check is its
    /// silence).
    pub async fn check(&self, c: &MonitorConfig, at: Timestamp) -> CheckResult {
        let started = Instant::now();
        let timeout = Duration::from_millis(c.timeout_ms.max(1) as u64);
        let outcome = match c.kind {
            MonitorKind::Http => self.http(c, timeout).await,
            MonitorKind::Tcp => self.tcp(c, timeout).await,
            MonitorKind::Dns => dns(c, timeout, &self.guard).await,
            MonitorKind::Heartbeat => Outcome::failed(
                None,
                format!("no heartbeat in the last {} seconds", c.interval_seconds),
            ),
        };
        // A heartbeat's silence has no latency to speak of.
        let latency_ms =
            (c.kind != MonitorKind::Heartbeat).then(|| started.elapsed().as_millis() as i64);
        let mut r = CheckResult {
            at,
            ok: outcome.error.is_none(),
            latency_ms,
            status_code: outcome.status_code,
            error: outcome.error,
            cert_expires_at: outcome.cert_expires_at.map(Timestamp::from_millis),
        };
        if let Some(days) = cert_expiring(c, &r)
            && r.ok
        {
            let when = r
                .cert_expires_at
                .map(|t| t.to_rfc3339())
                .unwrap_or_default();
            r.error = Some(if days < 0 {
                format!("the certificate expired ({when})")
            } else {
                format!("the certificate expires in {days} days ({when})")
            });
        }
        r
    }

    async fn http(&self, c: &MonitorConfig, timeout: Duration) -> Outcome {
        let headers: Vec<(&str, String)> = c
            .headers
            .iter()
            .map(|h| (h.name.as_str(), h.value.clone()))
            .collect();
        let answer = match self
            .client(c)
            .request(
                &c.method,
                &c.target,
                &headers,
                c.body.as_bytes(),
                Some(timeout),
            )
            .await
        {
            Ok(a) => a,
            Err(f) => return Outcome::failed(None, f.reason),
        };
        let code = Some(i64::from(answer.status));
        let expected = expected_codes(&c.expected_status).unwrap_or_else(|_| vec![(200, 299)]);
        let mut out = Outcome {
            status_code: code,
            error: None,
            cert_expires_at: answer.cert_expires_at,
        };
        if !expected
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&answer.status))
        {
            out.error = Some(format!(
                "answered HTTP {} (expected {})",
                answer.status, c.expected_status
            ));
        } else if !c.keyword.is_empty() && !answer.body.contains(&c.keyword) {
            out.error = Some(format!("the answer does not contain {:?}", c.keyword));
        }
        out
    }

    async fn tcp(&self, c: &MonitorConfig, timeout: Duration) -> Outcome {
        let (host, port) = match host_port(&c.target) {
            Ok(hp) => hp,
            Err(e) => return Outcome::failed(None, e),
        };
        let work = async {
            let addrs: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| format!("{host} does not resolve: {e}"))?
                .collect();
            let Some(addr) = addrs.iter().find(|a| self.guard.permits(a.ip())) else {
                return Err(match addrs.first() {
                    Some(a) => refused(a.ip()),
                    None => format!("{host} has no address"),
                });
            };
            tokio::net::TcpStream::connect(addr)
                .await
                .map(|_| ())
                .map_err(|e| format!("could not connect to {addr}: {e}"))
        };
        match tokio::time::timeout(timeout, work).await {
            Ok(Ok(())) => Outcome::default(),
            Ok(Err(e)) => Outcome::failed(None, e),
            Err(_) => Outcome::failed(None, format!("no connection within {} ms", c.timeout_ms)),
        }
    }
}

fn refused(ip: std::net::IpAddr) -> String {
    format!(
        "refused: {ip} is a private, loopback, link-local or reserved address \
         (allow it with monitor_allow if this target is meant)"
    )
}

/// Looks `c.target` up (fresh, no cache) at the configured server or the
/// system's, and compares the answers with what is expected. A configured
/// server passes the outgoing rule like any target.
async fn dns(c: &MonitorConfig, timeout: Duration, guard: &Guard) -> Outcome {
    use hickory_resolver::config::{NameServerConfig, ResolverConfig};
    use hickory_resolver::net::runtime::TokioRuntimeProvider;
    use hickory_resolver::proto::rr::RecordType;
    let Ok(kind) = c.dns_record_type.parse::<RecordType>() else {
        return Outcome::failed(None, format!("unknown record type {}", c.dns_record_type));
    };
    let provider = TokioRuntimeProvider::default();
    let builder = if c.dns_server.is_empty() {
        match hickory_resolver::TokioResolver::builder(provider) {
            Ok(b) => b,
            Err(e) => return Outcome::failed(None, format!("no system resolver: {e}")),
        }
    } else {
        let addr = match dns_server(&c.dns_server) {
            Ok(a) => a,
            Err(e) => return Outcome::failed(None, e),
        };
        if !guard.permits(addr.ip()) {
            return Outcome::failed(None, refused(addr.ip()));
        }
        let mut server = NameServerConfig::udp_and_tcp(addr.ip());
        for conn in &mut server.connections {
            conn.port = addr.port();
        }
        hickory_resolver::TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(vec![server]),
            provider,
        )
    };
    let mut builder = builder;
    let opts = builder.options_mut();
    opts.timeout = timeout;
    opts.attempts = 1;
    opts.cache_size = 0;
    let resolver = match builder.build() {
        Ok(r) => r,
        Err(e) => return Outcome::failed(None, format!("cannot make a resolver: {e}")),
    };
    let lookup = match tokio::time::timeout(timeout, resolver.lookup(c.target.as_str(), kind)).await
    {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => return Outcome::failed(None, format!("{} {}: {e}", c.target, kind)),
        Err(_) => {
            return Outcome::failed(None, format!("no answer within {} ms", c.timeout_ms));
        }
    };
    let answers: Vec<String> = lookup
        .answers()
        .iter()
        .filter(|r| r.record_type() == kind)
        .map(|r| r.data.to_string())
        .collect();
    if answers.is_empty() {
        return Outcome::failed(None, format!("no {kind} record for {}", c.target));
    }
    if !c.dns_expected.is_empty() && !answers.iter().any(|a| dns_matches(a, &c.dns_expected)) {
        return Outcome::failed(
            None,
            format!(
                "{} {kind} answered {} (expected {})",
                c.target,
                answers.join(", "),
                c.dns_expected
            ),
        );
    }
    Outcome::default()
}

/// An answer matches what is expected ignoring case, a trailing dot, TXT's
/// quotes, and an MX answer's preference.
fn dns_matches(answer: &str, expected: &str) -> bool {
    let norm = |s: &str| {
        s.trim()
            .trim_matches('"')
            .trim_end_matches('.')
            .to_ascii_lowercase()
    };
    let (a, e) = (norm(answer), norm(expected));
    a == e || a.split_once(' ').is_some_and(|(_, rest)| norm(rest) == e)
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
            if let Some(o) = checker.observer.get() {
                o.check(m.monitor.component_id, m.monitor.config.kind, &r);
            }
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

    #[test]
    fn dns_answers_match_loosely() {
        assert!(dns_matches("192.0.2.1", "192.0.2.1"));
        assert!(dns_matches("Mail.Example.com.", "mail.example.com"));
        assert!(dns_matches("10 mail.example.com.", "mail.example.com"));
        assert!(dns_matches("\"v=spf1 -all\"", "v=spf1 -all"));
        assert!(!dns_matches("192.0.2.10", "192.0.2.1"));
    }
}
