//! Per-subject request quotas (GCRA via governor): one per minute and one per
//! hour, each subject (an API key, or a client address for requests without a
//! valid key) with its own buckets, so one key's traffic never limits another.
//!
//! Quotas are per instance: several instances behind a balancer each grant the
//! full quota (documented in the README's scale-out section).

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;
use upstate_core::Id;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    Key(Id),
    Addr(IpAddr),
}

type Keyed = RateLimiter<Subject, DefaultKeyedStateStore<Subject>, DefaultClock, StateInformationMiddleware>;

struct Window {
    limiter: Keyed,
    limit: u32,
    period: Duration,
}

/// What a check decided, with what the `X-RateLimit-*` headers report.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window's full quota is available again.
    pub reset_secs: u64,
    /// Set when refused: seconds until one more request is allowed.
    pub retry_after_secs: Option<u64>,
}

pub struct Limits {
    windows: Vec<Window>,
}

impl Window {
    fn new(limit: u32, period: Duration) -> Option<Window> {
        let n = NonZeroU32::new(limit)?;
        let quota = Quota::with_period(period / limit)?.allow_burst(n);
        Some(Window {
            limiter: RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
            limit,
            period,
        })
    }

    fn reset_secs(&self, remaining: u32) -> u64 {
        let per_cell = self.period.as_secs_f64() / f64::from(self.limit);
        (f64::from(self.limit - remaining) * per_cell).ceil() as u64
    }
}

impl Limits {
    /// A limit of 0 turns that window off.
    pub fn new(per_minute: u32, per_hour: u32) -> Limits {
        let windows =
            [Window::new(per_minute, Duration::from_secs(60)), Window::new(per_hour, Duration::from_secs(3600))]
                .into_iter()
                .flatten()
                .collect();
        Limits { windows }
    }

    /// Takes one request from every window of the subject. The reported window
    /// is the one closest to running out.
    pub fn check(&self, subject: Subject) -> Option<Decision> {
        let mut tightest: Option<Decision> = None;
        for w in &self.windows {
            let decision = match w.limiter.check_key(&subject) {
                Ok(snapshot) => {
                    let remaining = snapshot.remaining_burst_capacity();
                    Decision { limit: w.limit, remaining, reset_secs: w.reset_secs(remaining), retry_after_secs: None }
                }
                Err(not_until) => {
                    let wait = not_until.wait_time_from(DefaultClock::default().now());
                    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                    Decision {
                        limit: w.limit,
                        remaining: 0,
                        reset_secs: w.reset_secs(0),
                        retry_after_secs: Some(secs.max(1)),
                    }
                }
            };
            if decision.retry_after_secs.is_some() {
                return Some(decision);
            }
            if tightest.is_none_or(|t| decision.remaining < t.remaining) {
                tightest = Some(decision);
            }
        }
        tightest
    }

    /// Drops buckets that are full again, so idle subjects cost no memory.
    pub fn forget_idle(&self) {
        for w in &self.windows {
            w.limiter.retain_recent();
            w.limiter.shrink_to_fit();
        }
    }
}
