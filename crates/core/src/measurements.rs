//! Response-time measurements (docs/monitors.md, "Measurements"): a check's
//! latency lands in one bucket of a fixed histogram, and a period's figures
//! are counts and those buckets. Buckets add up, so minute, hour and day
//! figures are all made the same way as checks arrive, and percentiles of
//! any span come from the summed buckets without keeping every check.
//!
//! The bounds are Prometheus's default buckets in milliseconds, so
//! `/api/metrics` exposes the same histogram.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// Upper bounds (ms, inclusive) of the histogram's buckets; one more bucket
/// holds everything slower.
pub const BOUNDS_MS: [i64; 11] = [5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000];
/// Buckets in all (the bounded ones and the slower-than-all one).
pub const BUCKETS: usize = BOUNDS_MS.len() + 1;

/// Which bucket a latency falls in.
pub fn bucket_of(ms: i64) -> usize {
    BOUNDS_MS
        .iter()
        .position(|b| ms <= *b)
        .unwrap_or(BOUNDS_MS.len())
}

/// How finely a series is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Resolution {
    /// Every check as it was made.
    Raw,
    Minute,
    Hour,
    Day,
}

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

impl Resolution {
    pub const ALL: [Resolution; 4] = [
        Resolution::Raw,
        Resolution::Minute,
        Resolution::Hour,
        Resolution::Day,
    ];
    /// The summed resolutions, each with its span.
    pub const SUMMED: [(Resolution, i64); 3] = [
        (Resolution::Minute, MINUTE_MS),
        (Resolution::Hour, HOUR_MS),
        (Resolution::Day, DAY_MS),
    ];

    pub fn parse(s: &str) -> Option<Resolution> {
        Resolution::ALL.into_iter().find(|r| r.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Raw => "raw",
            Resolution::Minute => "minute",
            Resolution::Hour => "hour",
            Resolution::Day => "day",
        }
    }

    /// The length of one point (raw: none, each check is its own).
    pub fn span_ms(self) -> Option<i64> {
        Resolution::SUMMED
            .into_iter()
            .find(|(r, _)| *r == self)
            .map(|(_, s)| s)
    }

    /// How far back this resolution is kept; the prune deletes older
    /// figures. Sized so a year of 1,000 monitors checked every 30 s stays
    /// well under 1 GB (bench/monitor-storage.sh).
    pub fn kept_ms(self) -> i64 {
        match self {
            Resolution::Raw => DAY_MS,
            Resolution::Minute => 2 * DAY_MS,
            Resolution::Hour => 90 * DAY_MS,
            Resolution::Day => 730 * DAY_MS,
        }
    }

    /// The window a request without `from` covers.
    pub fn default_window_ms(self) -> i64 {
        match self {
            Resolution::Raw => HOUR_MS,
            Resolution::Minute => DAY_MS,
            Resolution::Hour => 7 * DAY_MS,
            Resolution::Day => 90 * DAY_MS,
        }
    }
}

/// Counts of checks over a span: how many, how many failed, and the
/// latencies of those that measured one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    pub checks: i64,
    pub failures: i64,
    /// Checks with a latency (a heartbeat's has none).
    pub timed: i64,
    pub latency_sum: i64,
    pub latency_min: Option<i64>,
    pub latency_max: Option<i64>,
    pub buckets: [i64; BUCKETS],
}

impl Tally {
    /// The tally of one check.
    pub fn of_check(ok: bool, latency_ms: Option<i64>) -> Tally {
        let mut t = Tally {
            checks: 1,
            failures: i64::from(!ok),
            ..Tally::default()
        };
        if let Some(ms) = latency_ms {
            t.timed = 1;
            t.latency_sum = ms;
            t.latency_min = Some(ms);
            t.latency_max = Some(ms);
            t.buckets[bucket_of(ms)] = 1;
        }
        t
    }

    pub fn add(&mut self, o: &Tally) {
        self.checks += o.checks;
        self.failures += o.failures;
        self.timed += o.timed;
        self.latency_sum += o.latency_sum;
        self.latency_min = min_opt(self.latency_min, o.latency_min);
        self.latency_max = self.latency_max.max(o.latency_max);
        for (a, b) in self.buckets.iter_mut().zip(o.buckets) {
            *a += b;
        }
    }

    /// The latency below which `q` (0–1) of the timed checks fall: linear
    /// within the bucket it lands in, kept inside the span's min and max.
    pub fn percentile(&self, q: f64) -> Option<i64> {
        let (lo_seen, hi_seen) = (self.latency_min?, self.latency_max?);
        if self.timed == 0 {
            return None;
        }
        let rank = (q * self.timed as f64).max(1.0);
        let mut below = 0.0;
        for (i, n) in self.buckets.iter().enumerate() {
            let n = *n as f64;
            if n > 0.0 && below + n >= rank {
                let lo = if i == 0 { 0 } else { BOUNDS_MS[i - 1] };
                let hi = BOUNDS_MS.get(i).copied().unwrap_or(hi_seen);
                let (lo, hi) = (lo.max(lo_seen) as f64, hi.min(hi_seen) as f64);
                let at = lo + (hi - lo) * ((rank - below) / n);
                return Some(at.round() as i64);
            }
            below += n;
        }
        Some(hi_seen)
    }

    /// The figures people read.
    pub fn figures(&self) -> Figures {
        Figures {
            checks: self.checks,
            failures: self.failures,
            uptime: (self.checks > 0).then(|| {
                let up = (self.checks - self.failures) as f64 / self.checks as f64;
                (up * 100_000.0).round() / 1_000.0
            }),
            avg_ms: (self.timed > 0).then(|| self.latency_sum / self.timed),
            min_ms: self.latency_min,
            max_ms: self.latency_max,
            p50_ms: self.percentile(0.50),
            p95_ms: self.percentile(0.95),
            p99_ms: self.percentile(0.99),
        }
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A span's figures (latencies in milliseconds; percentiles estimated from
/// the histogram's buckets, exact for raw checks).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub checks: i64,
    pub failures: i64,
    /// Percentage of checks that passed (null without checks).
    pub uptime: Option<f64>,
    pub avg_ms: Option<i64>,
    pub min_ms: Option<i64>,
    pub max_ms: Option<i64>,
    pub p50_ms: Option<i64>,
    pub p95_ms: Option<i64>,
    pub p99_ms: Option<i64>,
}

/// One point of a series: the span starting at `at`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Point {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub at: Timestamp,
    #[serde(flatten)]
    pub figures: Figures,
}

/// Exact percentile of raw latencies (sorted ascending), nearest rank.
pub fn exact_percentile(sorted: &[i64], q: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_fall_in_their_buckets() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(5), 0);
        assert_eq!(bucket_of(6), 1);
        assert_eq!(bucket_of(10_000), 10);
        assert_eq!(bucket_of(10_001), 11);
    }

    #[test]
    fn tallies_add_up_and_give_percentiles_within_their_bucket() {
        let mut t = Tally::default();
        for ms in 1..=100 {
            t.add(&Tally::of_check(true, Some(ms)));
        }
        t.add(&Tally::of_check(false, None));
        let f = t.figures();
        assert_eq!((f.checks, f.failures), (101, 1));
        assert_eq!(f.uptime, Some(99.01));
        assert_eq!(
            (f.min_ms, f.max_ms, f.avg_ms),
            (Some(1), Some(100), Some(50))
        );
        // The 50th of 100 latencies is in the 25–50 bucket.
        let p50 = f.p50_ms.unwrap_or(0);
        assert!((26..=50).contains(&p50), "p50 {p50}");
        let p99 = f.p99_ms.unwrap_or(0);
        assert!((51..=100).contains(&p99), "p99 {p99}");
        assert_eq!(Tally::default().figures().p50_ms, None);
        assert_eq!(exact_percentile(&[1, 2, 3, 4], 0.5), Some(2));
        assert_eq!(exact_percentile(&[1, 2, 3, 4], 0.99), Some(4));
    }

    #[test]
    fn resolutions_read_back() {
        for r in Resolution::ALL {
            assert_eq!(Resolution::parse(r.as_str()), Some(r));
        }
        assert_eq!(Resolution::parse("week"), None);
        assert_eq!(Resolution::Raw.span_ms(), None);
        assert_eq!(Resolution::Hour.span_ms(), Some(3_600_000));
    }
}
