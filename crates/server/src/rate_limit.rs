//! Per-subject request quotas: N requests per minute and M per hour, each
//! subject (an API key, or a client address for requests without a valid key)
//! counted on its own, so one key's traffic never limits another.
//!
//! Each window opens at the subject's first request and closes a window
//! length later; within it at most `limit` requests pass. This is what the
//! contract promises ("the 101st request in a minute gets 429", and
//! `X-RateLimit-Reset` says when the count starts over). governor's GCRA was
//! the first choice, but it refills continuously (one request every 0.6 s at
//! 100/min), so a slow run of 100 requests leaves room for a 101st: not the
//! behaviour operators read in the documentation.
//!
//! Without Redis, quotas are per instance: behind a balancer each instance
//! grants the full quota. With `redis_url`, every instance counts in Redis
//! (`shared_limits.rs`: one script call per check, the same windows), and
//! falls back to its own counts while Redis does not answer.

pub use crate::shared_limits::SharedLimits;
use dashmap::DashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use upstate_core::Id;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    Key(Id),
    Addr(IpAddr),
}

/// What a check decided, with what the `X-RateLimit-*` headers report.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window closes and the count starts over.
    pub reset_secs: u64,
    /// Set when refused: seconds until a request will be accepted again.
    pub retry_after_secs: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Count {
    opened: Instant,
    used: u32,
}

struct Window {
    limit: u32,
    length: Duration,
    counts: DashMap<Subject, Count>,
}

impl Window {
    /// Counts one request if the window has room; either way reports the state.
    fn take(&self, subject: Subject, now: Instant) -> Decision {
        let mut entry = self.counts.entry(subject).or_insert(Count {
            opened: now,
            used: 0,
        });
        if now.duration_since(entry.opened) >= self.length {
            *entry = Count {
                opened: now,
                used: 0,
            };
        }
        let left = self.length.saturating_sub(now.duration_since(entry.opened));
        let reset_secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        if entry.used >= self.limit {
            return Decision {
                limit: self.limit,
                remaining: 0,
                reset_secs,
                retry_after_secs: Some(reset_secs.max(1)),
            };
        }
        entry.used += 1;
        Decision {
            limit: self.limit,
            remaining: self.limit - entry.used,
            reset_secs,
            retry_after_secs: None,
        }
    }

    /// Gives back a request counted here when a later window refused it.
    fn untake(&self, subject: Subject) {
        if let Some(mut c) = self.counts.get_mut(&subject) {
            c.used = c.used.saturating_sub(1);
        }
    }
}

pub struct Limits {
    windows: Vec<Window>,
    /// Counted in Redis, under this name, when configured.
    shared: Option<(SharedLimits, String)>,
}

impl Limits {
    /// A limit of 0 turns that window off.
    pub fn new(per_minute: u32, per_hour: u32) -> Limits {
        let windows = [(per_minute, 60), (per_hour, 3600)]
            .into_iter()
            .filter(|(limit, _)| *limit > 0)
            .map(|(limit, secs)| Window {
                limit,
                length: Duration::from_secs(secs),
                counts: DashMap::new(),
            })
            .collect();
        Limits {
            windows,
            shared: None,
        }
    }

    /// Counts these limits in Redis (when `shared` has it), as `name`.
    pub fn shared(mut self, shared: &SharedLimits, name: &str) -> Limits {
        if shared.configured() {
            self.shared = Some((shared.clone(), name.to_string()));
        }
        self
    }

    /// `check`, counted across instances where Redis is configured and
    /// answers; this instance's own count otherwise.
    pub async fn take(&self, subject: Subject) -> Option<Decision> {
        if let Some((shared, name)) = &self.shared {
            let windows: Vec<(u32, Duration)> =
                self.windows.iter().map(|w| (w.limit, w.length)).collect();
            if let Some(d) = shared.check(name, subject, &windows).await {
                return d;
            }
        }
        self.check(subject)
    }

    /// Counts one request against every window of the subject in this
    /// instance. A refused request is counted nowhere; the reported window is the one closest to
    /// running out (or the one that refused).
    pub fn check(&self, subject: Subject) -> Option<Decision> {
        let now = Instant::now();
        let mut tightest: Option<Decision> = None;
        for (i, w) in self.windows.iter().enumerate() {
            let d = w.take(subject, now);
            if d.retry_after_secs.is_some() {
                for earlier in &self.windows[..i] {
                    earlier.untake(subject);
                }
                return Some(d);
            }
            if tightest.is_none_or(|t| d.remaining < t.remaining) {
                tightest = Some(d);
            }
        }
        tightest
    }

    /// Shares the limits and sweeps them every minute for as long as they are
    /// in use, so idle subjects (every address that ever called) cost no memory.
    pub fn swept(self) -> Arc<Limits> {
        let limits = Arc::new(self);
        let weak = Arc::downgrade(&limits);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(l) => l.forget_idle(),
                    None => break,
                }
            }
        });
        limits
    }

    /// Forgets every count (development mode's reset).
    pub fn reset(&self) {
        for w in &self.windows {
            w.counts.clear();
        }
    }

    /// Forgets subjects whose windows have closed.
    pub fn forget_idle(&self) {
        let now = Instant::now();
        for w in &self.windows {
            w.counts
                .retain(|_, c| now.duration_since(c.opened) < w.length);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_after_the_limit_is_refused_until_the_window_closes() {
        let w = Window {
            limit: 3,
            length: Duration::from_secs(60),
            counts: DashMap::new(),
        };
        let s = Subject::Key(1);
        let t0 = Instant::now();
        let remaining: Vec<u32> = (0..3).map(|_| w.take(s, t0).remaining).collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refused = w.take(s, t0 + Duration::from_secs(59));
        assert_eq!(refused.retry_after_secs, Some(1));
        assert!(
            w.take(Subject::Key(2), t0).retry_after_secs.is_none(),
            "other subjects are unaffected"
        );
        let reopened = w.take(s, t0 + Duration::from_secs(60));
        assert_eq!((reopened.remaining, reopened.retry_after_secs), (2, None));
    }

    #[test]
    fn closed_windows_are_forgotten() {
        let limits = Limits::new(5, 0);
        limits.windows[0].counts.insert(
            Subject::Key(1),
            Count {
                opened: Instant::now() - Duration::from_secs(61),
                used: 5,
            },
        );
        limits.windows[0].counts.insert(
            Subject::Key(2),
            Count {
                opened: Instant::now(),
                used: 1,
            },
        );
        limits.forget_idle();
        assert!(limits.windows[0].counts.get(&Subject::Key(1)).is_none());
        assert!(limits.windows[0].counts.get(&Subject::Key(2)).is_some());
    }

    #[test]
    fn an_hourly_refusal_does_not_use_up_the_minute() {
        let limits = Limits::new(10, 2);
        let s = Subject::Key(7);
        assert!(limits.check(s).and_then(|d| d.retry_after_secs).is_none());
        assert!(limits.check(s).and_then(|d| d.retry_after_secs).is_none());
        let refused = limits.check(s);
        assert_eq!(refused.map(|d| d.limit), Some(2));
        assert!(refused.and_then(|d| d.retry_after_secs).is_some());
        assert_eq!(limits.windows[0].counts.get(&s).map(|c| c.used), Some(2));
    }
}
