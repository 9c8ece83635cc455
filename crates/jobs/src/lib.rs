//! Background work: a worker that runs due job rows (docs/jobs.md), and the
//! sender of notifications (`deliver`). Job kinds: a maintenance window's
//! next automatic move (start at its scheduled start, complete at its end),
//! and the fan-out of a committed change into deliveries, both scheduled by
//! the store in the transaction of the change that calls for them; and the
//! hourly prune of the delivery log, which moves itself on. Each round also sweeps for what is due by the clock rather than
//! by a change: recurring maintenance to expand, reminders to send.
//!
//! The worker sleeps until the next job is due, and wakes early when a job
//! is scheduled (in this process, or on another instance through
//! PostgreSQL's notifications), with a slow poll as the safety net. A leased
//! job runs on one instance; if that instance dies, its lease runs out and
//! another takes the job. Handlers re-read what they act on, so running a job
//! twice, or after someone else made the move, changes nothing.

pub mod beats;
pub mod deliver;
pub mod fetch_page;
pub mod mailer;
pub mod messages;
pub mod monitors;
pub mod notices;
pub mod outgoing;
mod plain_relay;
pub mod push;
pub mod third_party;

pub use deliver::{DeliverySettings, Sender, SmtpSettings, run_sender, send_due};

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use upstate_core::audit::Actor;
use upstate_core::{Id, MaintenanceAction, Timestamp};
use upstate_store::jobs::{self, Job, Work};
use upstate_store::{AuditCtx, Db, StoreError, maintenance, retention};

/// How long a leased job is ours before another instance may take it.
pub const LEASE_MS: i64 = 60_000;
/// The longest the worker sleeps without being told of new work.
pub const SAFETY_POLL: Duration = Duration::from_secs(30);
/// Jobs leased at once.
const BATCH: i64 = 20;

fn message(action: MaintenanceAction) -> &'static str {
    match action {
        MaintenanceAction::Start => {
            "Maintenance started automatically at its scheduled start time."
        }
        MaintenanceAction::Complete => {
            "Maintenance completed automatically at its scheduled end time."
        }
        MaintenanceAction::Cancel => "Maintenance cancelled.",
    }
}

/// A window's due move, if it still is one when the job runs.
async fn maintenance_move(db: &Db, id: Id, now: Timestamp) -> Result<(), StoreError> {
    let action = match maintenance::due_move(db, id, now).await {
        Ok(Some(action)) => action,
        // Deleted, moved later, no longer automatic, or done by someone else.
        Ok(None) | Err(StoreError::NotFound(_)) => return Ok(()),
        Err(e) => return Err(e),
    };
    let ctx = AuditCtx::of(Actor::system("scheduler"));
    match maintenance::transition(db, &ctx, id, action, message(action)).await {
        Ok(_) => {
            tracing::info!(
                maintenance = id,
                action = action.verb(),
                "scheduler moved maintenance"
            );
            Ok(())
        }
        // Someone (an operator or another instance) got there first.
        Err(StoreError::Transition(_) | StoreError::Conflict(_) | StoreError::NotFound(_)) => {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// How a job that ran ended: finished in the transaction of its own work,
/// or still to be finished.
enum Ran {
    Finished,
    ToFinish,
}

async fn run(
    db: &Db,
    settings: &DeliverySettings,
    job: &Job,
    now: Timestamp,
) -> Result<Ran, StoreError> {
    match job.work()? {
        Work::MoveMaintenance(window) => maintenance_move(db, window, now)
            .await
            .map(|()| Ran::ToFinish),
        Work::FanOut(events) => deliver::fan_out(db, settings, job, &events, now)
            .await
            .map(|_| Ran::Finished),
        Work::Prune => {
            let days = upstate_store::settings::settings(db)
                .await?
                .delivery_log_days;
            let pruned = retention::prune(db, now, days).await?;
            if pruned.deliveries + pruned.events + pruned.checks + pruned.followers + pruned.alerts
                > 0
            {
                tracing::info!(
                    deliveries = pruned.deliveries,
                    events = pruned.events,
                    checks = pruned.checks,
                    followers = pruned.followers,
                    alerts = pruned.alerts,
                    days,
                    "pruned the delivery log"
                );
            }
            Ok(Ran::ToFinish)
        }
    }
}

/// The scheduler's sweep at `now`: recurring maintenance expanded into
/// windows, then the maintenance reminders that are due. Safe on every
/// instance at once (see `recurring` and `reminders` in the store).
async fn sweep(db: &Db, now: Timestamp) -> Result<usize, StoreError> {
    let made = upstate_store::recurring::expand(db, now).await?.len();
    let install = upstate_store::settings::settings(db).await?;
    let minutes = upstate_core::settings::reminder_minutes(&install.maintenance_reminders)
        .unwrap_or_default();
    Ok(made + upstate_store::reminders::send_due(db, now, &minutes).await?)
}

/// Runs every job due at `now`, then the sweep; returns how many jobs and
/// reminders it finished.
pub async fn run_due(
    db: &Db,
    settings: &DeliverySettings,
    now: Timestamp,
) -> Result<usize, StoreError> {
    let swept = sweep(db, now).await?;
    // What the sweep just made (a reminder's fan-out) is due at the clock's
    // time of its commit, a little after `now`: it runs in this round too.
    let after = now.max(db.clock.now());
    Ok(swept + run_jobs(db, settings, after).await?)
}

/// Runs every job due at `now`; returns how many it finished.
async fn run_jobs(
    db: &Db,
    settings: &DeliverySettings,
    now: Timestamp,
) -> Result<usize, StoreError> {
    let mut finished = 0;
    for job in jobs::lease(db, now, LEASE_MS, BATCH).await? {
        match run(db, settings, &job, now).await {
            Ok(ran) => {
                if let Ran::ToFinish = ran {
                    jobs::finish(db, &job).await?;
                }
                finished += 1;
            }
            Err(e) => {
                // 2 s, 4 s, 8 s ... up to an hour, a little jittered so that
                // instances that failed together do not retry together.
                let backoff = (1_000i64 << job.attempts.clamp(1, 12)).min(3_600_000);
                let jitter = i64::from(rand::random::<u16>()) % (backoff / 10 + 1);
                tracing::warn!(job = job.id, kind = %job.kind, error = %e, "job failed; retrying");
                let again = Timestamp::from_millis(now.millis() + backoff + jitter);
                jobs::retry(db, &job, &e.to_string(), again).await?;
            }
        }
    }
    Ok(finished)
}

/// The sweep reads every recurring schedule and upcoming window: once a
/// second is soon enough for what is minutes away, and keeps a storm of
/// writes (each waking the worker for its fan-out) from paying for it
/// every time.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Runs until cancelled. A failing round is logged and tried again.
pub async fn run_scheduler(db: Db, settings: DeliverySettings, cancel: CancellationToken) {
    let mut last_sweep: Option<std::time::Instant> = None;
    loop {
        let now = db.clock.now();
        let sweep_due = last_sweep.is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
        let round = if sweep_due {
            last_sweep = Some(std::time::Instant::now());
            run_due(&db, &settings, now).await
        } else {
            run_jobs(&db, &settings, now).await
        };
        if let Err(e) = &round {
            tracing::warn!(error = %e, "job round failed");
        }
        beats::beat(beats::Loop::Scheduler);
        let wait = match (round, jobs::next_run_at(&db).await) {
            (Ok(_), Ok(Some(at))) => {
                let ms = (at.millis() - db.clock.now().millis()).max(0) as u64;
                Duration::from_millis(ms).min(SAFETY_POLL)
            }
            (Ok(_), Ok(None)) => SAFETY_POLL,
            _ => Duration::from_secs(1),
        };
        // A sweep skipped this round runs within the second.
        let wait = match (sweep_due, last_sweep) {
            (false, Some(at)) => wait.min(SWEEP_EVERY.saturating_sub(at.elapsed())),
            _ => wait,
        };
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = db.changes.jobs.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}
