//! Continuous publishing of the static copy while the service runs: after
//! each committed change (heard on the change feed, from this instance or
//! another), once things have been quiet for a second (but no later than
//! ten seconds after the first change), and every five minutes anyway, so
//! relative times and uptime stay fresh. One publish at a time per
//! instance; a failed one is retried with doubling waits up to five
//! minutes. How each attempt went is kept in the database (`export_status`)
//! for the Settings screen, the API and `/api/metrics`.
//!
//! Several instances each publish the same copy: the writes are idempotent
//! (same bytes, unchanged files skipped), so the cost is repeated work, not
//! a wrong copy (docs/operations.md).

use super::{DirReport, bucket, render, write_dir};
use crate::app::App;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use upstate_core::static_copy::ExportSettings;
use upstate_store::Db;
use upstate_store::settings;

const QUIET: Duration = Duration::from_secs(1);
const AT_MOST: Duration = Duration::from_secs(10);
const REFRESH: Duration = Duration::from_secs(300);
const RETRY_MAX: Duration = Duration::from_secs(300);
/// How long a stop waits for the last publish.
const LAST_WITHIN: Duration = Duration::from_secs(20);

/// Publishes `app`'s copy wherever the export settings say, until `stop`.
pub async fn run(
    app: App,
    db: Db,
    root: PathBuf,
    guard: upstate_jobs::outgoing::Guard,
    stop: CancellationToken,
) {
    let mut heard = db.changes.subscribe();
    // At start: whatever changed while no instance was running.
    let mut dirty_since = Some(Instant::now());
    let mut failures: u32 = 0;
    let mut retry_at = Instant::now();
    let mut refresh_at = Instant::now() + REFRESH;
    loop {
        let due = match dirty_since {
            Some(_) if failures > 0 => retry_at,
            Some(since) => (Instant::now() + QUIET).min(since + AT_MOST),
            None => refresh_at,
        };
        tokio::select! {
            () = stop.cancelled() => {
                // A change made just before the stop is in the copy when
                // the process ends (it may be the last word for hours).
                while let Ok(_) | Err(TryRecvError::Lagged(_)) = heard.try_recv() {
                    dirty_since.get_or_insert_with(Instant::now);
                }
                if dirty_since.is_some() {
                    let last = once(&app, &db, &root, &guard);
                    if tokio::time::timeout(LAST_WITHIN, last).await.is_err() {
                        tracing::warn!("the static copy's last publish did not finish before the stop");
                    }
                }
                return;
            }
            got = heard.recv() => {
                if matches!(got, Err(RecvError::Closed)) {
                    return;
                }
                dirty_since.get_or_insert_with(Instant::now);
                continue;
            }
            () = tokio::time::sleep_until(due) => {}
        }
        refresh_at = Instant::now() + REFRESH;
        let attempt = once(&app, &db, &root, &guard);
        tokio::pin!(attempt);
        let done = tokio::select! {
            done = &mut attempt => done,
            () = stop.cancelled() => {
                // Stopping mid-publish: it may finish, within bounds.
                if tokio::time::timeout(LAST_WITHIN, attempt).await.is_err() {
                    tracing::warn!("the static copy's last publish did not finish before the stop");
                }
                return;
            }
        };
        match done {
            Attempt::Off | Attempt::Published => {
                dirty_since = None;
                failures = 0;
            }
            Attempt::Failed => {
                failures += 1;
                retry_at = Instant::now() + backoff(failures);
            }
        }
    }
}

/// How one publish went.
enum Attempt {
    /// The copy is turned off.
    Off,
    Published,
    Failed,
}

/// One publish wherever the export settings say, recorded for the
/// Settings screen, the API and the metrics.
async fn once(
    app: &App,
    db: &Db,
    root: &std::path::Path,
    guard: &upstate_jobs::outgoing::Guard,
) -> Attempt {
    let wanted = match settings::export_settings(db).await {
        Ok(s) if s.enabled => s,
        Ok(_) => return Attempt::Off,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the export settings");
            return Attempt::Failed;
        }
    };
    let outcome = publish(app, db, &wanted, root, guard).await;
    let mut status = settings::export_status(db).await.unwrap_or_default();
    let now = db.clock.now();
    status.last_attempt_at = Some(now);
    let attempt = match outcome {
        Ok((files, report)) => {
            status.last_published_at = Some(now);
            status.last_error = None;
            status.files = files;
            status.written = report.written;
            status.removed = report.removed;
            tracing::info!(
                files,
                written = report.written,
                removed = report.removed,
                "static copy published"
            );
            Attempt::Published
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot publish the static copy");
            status.last_error = Some(e);
            Attempt::Failed
        }
    };
    if let Err(e) = settings::record_export_status(db, &status).await {
        tracing::warn!(error = %e, "cannot record how publishing went");
    }
    attempt
}

fn backoff(failures: u32) -> Duration {
    (Duration::from_secs(5) * 2u32.saturating_pow(failures.saturating_sub(1).min(10)))
        .min(RETRY_MAX)
}

/// One publish to every target; the file count and what the targets did
/// (summed), or every target's error.
async fn publish(
    app: &App,
    db: &Db,
    wanted: &ExportSettings,
    root: &std::path::Path,
    guard: &upstate_jobs::outgoing::Guard,
) -> Result<(usize, DirReport), String> {
    let copy = render(app, db, db.clock.now()).await?;
    let files = std::sync::Arc::new(copy.files);
    let mut total = DirReport::default();
    let mut errors = Vec::new();
    let mut add = |r: DirReport| {
        total.written += r.written;
        total.unchanged += r.unchanged;
        total.removed += r.removed;
    };
    if let Some(dir) = &wanted.directory {
        let target = root.join(dir);
        let all = files.clone();
        let written = tokio::task::spawn_blocking(move || write_dir(&target, &all)).await;
        match written {
            Ok(Ok(r)) => add(r),
            Ok(Err(e)) => errors.push(format!("directory {dir}: {e}")),
            Err(e) => errors.push(format!("directory {dir}: {e}")),
        }
    }
    if let Some(s3) = &wanted.s3 {
        match bucket::write_bucket(s3, &files, guard).await {
            Ok(r) => add(r),
            Err(e) => errors.push(format!("bucket {}: {e}", s3.bucket)),
        }
    }
    if errors.is_empty() {
        Ok((files.len(), total))
    } else {
        Err(errors.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_longer_each_time_up_to_five_minutes() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 300, 300, 300]);
    }
}
