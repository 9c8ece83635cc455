//! Reminders of scheduled maintenance (docs/notifications.md): a window's
//! subscribers hear of it again a set time before it starts (`24h, 1h` by
//! default; the install setting `maintenanceReminders`).
//!
//! The scheduler sweeps for windows whose reminder time has come. Each
//! reminder is a row of `maintenance_reminders` inserted in the transaction
//! that records its event, so it goes out once however many instances
//! sweep at the same moment. A window scheduled at or after a reminder's time
//! gets no such reminder (its "scheduled" message already said it); one
//! whose several reminders are all due (an instance was down) gets only the
//! nearest.

use crate::audit::AuditCtx;
use crate::db::Db;
use crate::error::StoreResult;
use serde_json::json;
use upstate_core::audit::{Action, Actor};
use upstate_core::events::Event;
use upstate_core::{Id, Timestamp};

const MINUTE_MS: i64 = 60_000;

/// Sends the reminders due at `now` for lead times `minutes` (largest
/// first); returns how many it sent.
pub async fn send_due(db: &Db, now: Timestamp, minutes: &[i64]) -> StoreResult<usize> {
    let Some(&longest) = minutes.first() else {
        return Ok(0);
    };
    let windows: Vec<(i64, i64, i64, i64)> = on_db!(db, |c| sqlx::query_as(
        "SELECT id, page_id, scheduled_start, created_at FROM maintenance \
         WHERE status = 'scheduled' AND scheduled_start > $1 AND scheduled_start <= $2 ORDER BY id"
    )
    .bind(now.millis())
    .bind(now.millis() + longest * MINUTE_MS)
    .fetch_all(c)
    .await?);
    let ctx = AuditCtx::of(Actor::system("scheduler"));
    let mut sent = 0;
    for (id, page, start, created) in windows {
        let due: Vec<i64> = minutes
            .iter()
            .copied()
            .filter(|m| start - m * MINUTE_MS <= now.millis() && created < start - m * MINUTE_MS)
            .collect();
        let Some(&nearest) = due.last() else {
            continue;
        };
        if remind(db, &ctx, id, page, start, nearest, &due, now).await? {
            sent += 1;
        }
    }
    Ok(sent)
}

/// One window's reminder `nearest`, marking every due lead time as done;
/// false when it was sent already (by this or another instance).
#[allow(clippy::too_many_arguments)]
async fn remind(
    db: &Db,
    ctx: &AuditCtx,
    id: Id,
    page: Id,
    start: i64,
    nearest: i64,
    due: &[i64],
    now: Timestamp,
) -> StoreResult<bool> {
    let mut tx = db.begin_as(ctx).await?;
    let mut fresh = false;
    for m in due {
        let n = on_tx!(&mut tx, |c| {
            sqlx::query(
            "INSERT INTO maintenance_reminders (maintenance_id, minutes_before, sent_at) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING"
        )
        .bind(id)
        .bind(m)
        .bind(now.millis())
        .execute(c)
        .await?
        .rows_affected()
        });
        fresh |= *m == nearest && n == 1;
    }
    if !fresh {
        // Dropped: rolled back, nothing recorded.
        return Ok(false);
    }
    let audited = tx
        .audit(
            Action::MaintenanceRemind,
            "maintenance",
            Some(id),
            json!({ "minutesBefore": nearest, "scheduledStartTime": Timestamp::from_millis(start) }),
        )
        .await?;
    tx.record(Event::MaintenanceReminder {
        page,
        maintenance: id,
        minutes_before: nearest,
    })
    .await?;
    tx.commit(audited).await?;
    Ok(true)
}
