//! Rate limits counted in Redis, so a key's 100 requests a minute hold
//! across every instance behind a balancer. One Lua script per check reads
//! every window of the subject and counts the request in all of them only
//! when none is full: atomic, the same fixed windows (opened by the first
//! request, closed a window length later) and the same refusal (a refused
//! request counts nowhere) as the in-process limiter.
//!
//! Redis is a helper, not a dependency: when it does not answer within
//! 250 ms the check falls back to the instance's own counts, the log says
//! so once, `/api/metrics` and the self-test report "degraded", and Redis
//! is tried again after five seconds (the connection manager reconnects by
//! itself). A status page must keep answering when its helpers fail.

use crate::rate_limit::{Decision, Subject};
use redis::aio::ConnectionManager;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OnceCell};

const ANSWER_WITHIN: Duration = Duration::from_millis(250);
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// KEYS: one per window. ARGV: each window's limit and length in ms.
/// Returns the 1-based index of the window that refused (0: counted), then
/// each window's count after the call and the milliseconds it has left.
const SCRIPT: &str = r"
local out = {0}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i - 1])
  local used = tonumber(redis.call('GET', key) or '0')
  local left = redis.call('PTTL', key)
  if left < 0 then used = 0; left = tonumber(ARGV[2 * i]) end
  if used >= limit and out[1] == 0 then out[1] = i end
  out[2 * i] = used
  out[2 * i + 1] = left
end
if out[1] == 0 then
  for i, key in ipairs(KEYS) do
    if out[2 * i] == 0 then
      redis.call('SET', key, 1, 'PX', ARGV[2 * i])
    else
      redis.call('INCR', key)
    end
    out[2 * i] = out[2 * i] + 1
  end
end
return out
";

/// The Redis all instances count in (or none), shared by every limiter.
#[derive(Clone, Default)]
pub struct SharedLimits {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    client: redis::Client,
    prefix: String,
    conn: OnceCell<ConnectionManager>,
    script: redis::Script,
    /// Since when Redis has not answered, and when to try it again.
    down: Mutex<Option<(Instant, Instant)>>,
    up: std::sync::atomic::AtomicBool,
}

impl Inner {
    /// The connection, opened on first use (it reconnects by itself).
    async fn connection(&self) -> redis::RedisResult<ConnectionManager> {
        self.conn
            .get_or_try_init(|| ConnectionManager::new(self.client.clone()))
            .await
            .cloned()
    }
}

impl SharedLimits {
    /// From `redis_url` (None: per-instance limits). Connects lazily: a
    /// Redis down at start only means per-instance limits until it is up.
    pub fn new(url: Option<&str>, prefix: &str) -> Result<SharedLimits, String> {
        let Some(url) = url else {
            return Ok(SharedLimits::default());
        };
        let client =
            redis::Client::open(url).map_err(|e| format!("redis_url is not usable: {e}"))?;
        Ok(SharedLimits {
            inner: Some(Arc::new(Inner {
                client,
                prefix: prefix.to_string(),
                conn: OnceCell::new(),
                script: redis::Script::new(SCRIPT),
                down: Mutex::new(None),
                up: std::sync::atomic::AtomicBool::new(true),
            })),
        })
    }

    /// While Redis is down, tries it again every five seconds in the
    /// background, so an instance nobody calls (a standby, a quiet night)
    /// reports it back in the metrics and the log, not only after the next
    /// request that counts.
    pub fn keep_trying(&self, stopping: tokio_util::sync::CancellationToken) {
        let (Some(_), Ok(runtime)) = (&self.inner, tokio::runtime::Handle::try_current()) else {
            return;
        };
        let this = self.clone();
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    () = stopping.cancelled() => return,
                    () = tokio::time::sleep(RETRY_AFTER) => {}
                }
                if this.up() == Some(false) {
                    let _ = this.ping().await;
                }
            }
        });
    }

    pub fn configured(&self) -> bool {
        self.inner.is_some()
    }

    /// Whether limits are shared now: Some(false) while falling back.
    pub fn up(&self) -> Option<bool> {
        self.inner
            .as_ref()
            .map(|i| i.up.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The decision counted in Redis; None when Redis is not there (then
    /// the caller counts locally). `Some(None)`: no window configured.
    pub(crate) async fn check(
        &self,
        name: &str,
        subject: Subject,
        windows: &[(u32, Duration)],
    ) -> Option<Option<Decision>> {
        let inner = self.inner.as_ref()?;
        if windows.is_empty() {
            return Some(None);
        }
        {
            let down = inner.down.lock().await;
            if let Some((_, retry)) = *down
                && Instant::now() < retry
            {
                return None;
            }
        }
        let who = match subject {
            Subject::Key(id) => format!("k{id}"),
            Subject::Addr(ip) => format!("a{ip}"),
        };
        let mut call = inner.script.prepare_invoke();
        for (limit, length) in windows {
            call.key(format!(
                "{}rl:{name}:{who}:{}",
                inner.prefix,
                length.as_secs()
            ))
            .arg(*limit)
            .arg(length.as_millis() as u64);
        }
        let answer = tokio::time::timeout(ANSWER_WITHIN, async {
            let mut conn = inner.connection().await?;
            call.invoke_async::<Vec<i64>>(&mut conn).await
        })
        .await;
        match answer {
            Ok(Ok(out)) => {
                self.recovered(inner).await;
                Some(decide(&out, windows))
            }
            Ok(Err(e)) => {
                self.failed(inner, &e.to_string()).await;
                None
            }
            Err(_) => {
                self.failed(inner, "no answer within 250 ms").await;
                None
            }
        }
    }

    /// Whether Redis answers a PING now (the self-test); a failure is
    /// recorded as a failed check would be.
    pub async fn ping(&self) -> Result<(), String> {
        let Some(inner) = self.inner.as_ref() else {
            return Err("no Redis configured".into());
        };
        let answer = tokio::time::timeout(ANSWER_WITHIN, async {
            let mut conn = inner.connection().await?;
            redis::cmd("PING").query_async::<String>(&mut conn).await
        })
        .await;
        let why = match answer {
            Ok(Ok(_)) => {
                self.recovered(inner).await;
                return Ok(());
            }
            Ok(Err(e)) => format!("Redis does not answer: {e}"),
            Err(_) => "Redis does not answer within 250 ms".to_string(),
        };
        self.failed(inner, &why).await;
        Err(why)
    }

    async fn failed(&self, inner: &Inner, why: &str) {
        let mut down = inner.down.lock().await;
        let now = Instant::now();
        if down.is_none() {
            tracing::warn!(
                error = why,
                "Redis does not answer: rate limits are counted per instance until it does"
            );
        }
        let since = down.map_or(now, |(since, _)| since);
        *down = Some((since, now + RETRY_AFTER));
        inner.up.store(false, std::sync::atomic::Ordering::Relaxed);
    }

    async fn recovered(&self, inner: &Inner) {
        if inner.up.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let mut down = inner.down.lock().await;
        if let Some((since, _)) = down.take() {
            tracing::info!(
                after_secs = since.elapsed().as_secs(),
                "Redis answers again: rate limits are shared across instances"
            );
        }
        inner.up.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The script's answer as the limiter's decision: the refusing window, or
/// the one closest to running out.
fn decide(out: &[i64], windows: &[(u32, Duration)]) -> Option<Decision> {
    let refused = usize::try_from(*out.first()?).ok()?;
    let mut tightest: Option<Decision> = None;
    for (i, (limit, _)) in windows.iter().enumerate() {
        let used = u32::try_from(*out.get(2 * i + 1)?).unwrap_or(u32::MAX);
        let left_ms = u64::try_from(*out.get(2 * i + 2)?).unwrap_or(0);
        let reset_secs = left_ms.div_ceil(1000);
        if refused == i + 1 {
            return Some(Decision {
                limit: *limit,
                remaining: 0,
                reset_secs,
                retry_after_secs: Some(reset_secs.max(1)),
            });
        }
        let d = Decision {
            limit: *limit,
            remaining: limit.saturating_sub(used),
            reset_secs,
            retry_after_secs: None,
        };
        if tightest.is_none_or(|t| d.remaining < t.remaining) {
            tightest = Some(d);
        }
    }
    tightest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_reads_as_the_local_limiter_would_decide() {
        let windows = [
            (100, Duration::from_secs(60)),
            (1000, Duration::from_secs(3600)),
        ];
        let counted = decide(&[0, 40, 30_500, 900, 3_000_000], &windows);
        assert!(counted.is_some_and(|d| d.remaining == 60 && d.reset_secs == 31));
        let hourly = decide(&[0, 10, 59_000, 999, 1_000], &windows);
        assert!(hourly.is_some_and(|d| d.remaining == 1 && d.limit == 1000));
        let refused = decide(&[1, 100, 12_000, 500, 9_000], &windows);
        assert!(refused.is_some_and(|d| d.retry_after_secs == Some(12) && d.remaining == 0));
    }
}
