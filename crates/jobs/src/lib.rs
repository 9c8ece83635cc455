//! Background work. For now: the maintenance scheduler, which starts
//! auto-start windows at their start time and completes them at their end.
//!
//! It keeps no state of its own: every tick asks the database what is due,
//! so a window missed while the service was down is caught up at start-up,
//! and several instances can run it at once (the store's compare-and-set
//! transitions apply each move exactly once; the losers see a conflict and
//! skip it).

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use upstate_core::audit::Actor;
use upstate_core::{MaintenanceAction, Timestamp};
use upstate_store::{AuditCtx, Db, StoreError, maintenance};

/// How often the scheduler looks for due windows: well inside the promised
/// "within about a second".
pub const TICK: Duration = Duration::from_millis(250);

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

/// Applies every transition due at `now`; returns how many it applied.
pub async fn run_due(db: &Db, now: Timestamp) -> Result<usize, StoreError> {
    let ctx = AuditCtx::of(Actor::system("scheduler"));
    let mut applied = 0;
    for (id, action) in maintenance::due(db, now).await? {
        match maintenance::transition(db, &ctx, id, action, message(action)).await {
            Ok(_) => {
                applied += 1;
                tracing::info!(
                    maintenance = id,
                    action = action.verb(),
                    "scheduler moved maintenance"
                );
            }
            // Someone (an operator or another instance) got there first.
            Err(StoreError::Transition(_) | StoreError::Conflict(_) | StoreError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(applied)
}

/// Runs until cancelled. A failing tick is logged and retried on the next.
pub async fn run_scheduler(db: Db, cancel: CancellationToken) {
    loop {
        if let Err(e) = run_due(&db, Timestamp::now()).await {
            tracing::warn!(error = %e, "maintenance scheduler tick failed");
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(TICK) => {}
        }
    }
}
