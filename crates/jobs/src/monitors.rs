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
    CheckResult, IncidentWords, MonitorConfig, cert_expiring, dns_server, expected_codes, host_port,
};
use upstate_core::{MonitorKind, Timestamp};
use upstate_store::monitors::{self, Stored};
use upstate_store::{Db, StoreResult};

/// How long a leased check is ours before another instance may take it.
const LEASE_MS: i64 = 90_000;
/// Checks leased and not yet recorded, at most (the pool runs fewer at
/// once; the rest wait for a slot under their lease).
const IN_FLIGHT: i64 = 200;
/// The longest the loop sleeps without looking for due checks.
const POLL: Duration = Duration::from_secs(1);
/// The shortest: checks due within it start together, in one lease query
/// (so a thousand monitors spread over their interval cost a few rounds a
/// second, not one per check).
const GATHER: Duration = Duration::from_millis(100);

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
    /// `late_ms`: how long after it was due the check started.
    fn check(&self, component: upstate_core::Id, kind: MonitorKind, r: &CheckResult, late_ms: i64);
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
            setting: "monitor_allow",
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
                    Some(a) => self.guard.refusal(a.ip()),
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
            return Outcome::failed(None, guard.refusal(addr.ip()));
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

/// When a check that ran at `now` should run next. Each monitor has its own
/// fixed offset inside its interval (spread from its id), and the next check
/// is its first slot at least half an interval after `now`: checks keep
/// their rhythm (an on-time check schedules exactly one interval on), a
/// runner that was down does not catch up in a burst, a new monitor's first
/// check (at once) is not followed by a second seconds later, and a thousand
/// monitors created or restarted at once spread over the interval instead
/// of all running in the same second forever after. A heartbeat's deadline
/// follows the silence it just reported instead: one interval from now.
fn next_run(c: &MonitorConfig, id: upstate_core::Id, now: Timestamp) -> Timestamp {
    let every = (c.interval_seconds * 1_000).max(1);
    if c.kind == MonitorKind::Heartbeat {
        return Timestamp::from_millis(now.millis() + every);
    }
    let offset = ((id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as i64 % every;
    let earliest = now.millis() + every / 2;
    let slots = (earliest - offset + every - 1).div_euclid(every);
    Timestamp::from_millis(offset + slots * every)
}

type Work = JoinSet<StoreResult<Option<monitors::Recorded>>>;

/// Leases at most `room` monitors due at `now` and starts their checks in
/// `work`; each waits for a slot of the pool, checks, and records.
async fn start_due(
    db: &Db,
    checker: &Checker,
    now: Timestamp,
    room: i64,
    work: &mut Work,
) -> StoreResult<()> {
    let round = Instant::now();
    let leased = monitors::lease_due(db, now, LEASE_MS, room).await?;
    if leased.is_empty() {
        return Ok(());
    }
    // Read once per round that has checks, not on every idle tick.
    let words = Arc::new(IncidentWords::in_lang(
        crate::deliver::install_lang(db).await?,
    ));
    for (id, lease) in leased {
        let checker = checker.clone();
        let db = db.clone();
        let words = words.clone();
        work.spawn(async move {
            let m: Stored = match monitors::stored(&db, id).await {
                Ok(m) => m,
                Err(upstate_store::StoreError::NotFound(_)) => return Ok(None),
                Err(e) => return Err(e),
            };
            let _slot = checker.slots.clone().acquire_owned().await;
            // `now` moved on by the time this check got its slot.
            let at = Timestamp::from_millis(now.millis() + round.elapsed().as_millis() as i64);
            let late_ms = (at.millis() - m.monitor.next_check_at.millis()).max(0);
            let r = checker.check(&m.monitor.config, at).await;
            tracing::debug!(monitor = %id, late_ms, latency_ms = r.latency_ms, ok = r.ok, "checked");
            if let Some(o) = checker.observer.get() {
                o.check(m.monitor.component_id, m.monitor.config.kind, &r, late_ms);
            }
            let next = next_run(&m.monitor.config, id, at);
            monitors::record(&db, id, Some(lease), &r, next, &words).await
        });
    }
    Ok(())
}

/// Logs checks that finished; returns how many it recorded.
fn finished(
    done: Result<StoreResult<Option<monitors::Recorded>>, tokio::task::JoinError>,
) -> usize {
    match done {
        Ok(Ok(Some(_))) => 1,
        Ok(Ok(None)) => 0,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "recording a check failed");
            0
        }
        Err(e) => {
            tracing::warn!(error = %e, "a check panicked");
            0
        }
    }
}

/// Checks every monitor due at `now`, waits for them and records the
/// results; returns how many it recorded.
pub async fn run_due(db: &Db, checker: &Checker, now: Timestamp) -> StoreResult<usize> {
    let mut work = Work::new();
    start_due(db, checker, now, IN_FLIGHT, &mut work).await?;
    let mut recorded = 0;
    while let Some(done) = work.join_next().await {
        recorded += finished(done);
    }
    Ok(recorded)
}

/// Runs until cancelled: starts what is due, then sleeps until the next
/// check is due (at most a second), or until a monitor changes. Checks in
/// flight carry on across rounds, so a slow target holds only its own
/// slot, never the next round.
pub async fn run_monitors(db: Db, checker: Checker, cancel: CancellationToken) {
    let mut work = Work::new();
    loop {
        while let Some(done) = work.try_join_next() {
            finished(done);
        }
        let room = IN_FLIGHT - work.len() as i64;
        if room > 0
            && let Err(e) = start_due(&db, &checker, db.clock.now(), room, &mut work).await
        {
            tracing::warn!(error = %e, "monitor round failed");
        }
        crate::beats::beat(crate::beats::Loop::Monitors);
        let wait = match monitors::next_due(&db).await {
            Ok(Some(at)) => {
                let ms = (at.millis() - db.clock.now().millis()).max(0) as u64;
                Duration::from_millis(ms).clamp(GATHER, POLL)
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
        let id = 7;
        let first = next_run(&c, id, t(1_000_000));
        assert!(first >= t(1_015_000) && first < t(1_045_000), "{first:?}");
        // On time, a little late, or very late: the next slot of the same rhythm.
        assert_eq!(next_run(&c, id, first), t(first.millis() + 30_000));
        assert_eq!(
            next_run(&c, id, t(first.millis() + 400)),
            t(first.millis() + 30_000)
        );
        assert_eq!(
            next_run(&c, id, t(first.millis() + 95_000)),
            t(first.millis() + 120_000)
        );
    }

    #[test]
    fn monitors_spread_over_their_interval() {
        let c = MonitorConfig {
            interval_seconds: 30,
            ..MonitorConfig::default()
        };
        let now = Timestamp::from_millis(1_700_000_000_000);
        // A thousand monitors started in the same millisecond: no second of
        // the interval gets more than a few times its share, and none runs
        // again sooner than half an interval.
        let mut per_second = [0u32; 30];
        for id in 1..=1_000 {
            let next = next_run(&c, id, now).millis() - now.millis();
            assert!((15_000..45_000).contains(&next), "{next}");
            per_second[((next - 15_000) / 1_000) as usize] += 1;
        }
        assert!(
            per_second.iter().all(|&n| n > 10 && n < 70),
            "{per_second:?}"
        );
    }

    #[test]
    fn heartbeats_wait_one_interval_from_the_silence() {
        let c = MonitorConfig {
            kind: MonitorKind::Heartbeat,
            interval_seconds: 60,
            ..MonitorConfig::default()
        };
        let t = Timestamp::from_millis;
        assert_eq!(next_run(&c, 3, t(5_000)), t(65_000));
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
