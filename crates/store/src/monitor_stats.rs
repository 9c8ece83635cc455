//! A monitor's measurements: its checks summed by minute, hour and day as
//! each is recorded (so no roll-up job can fall behind the prune), the
//! series operators and the public chart read, and the reset that starts a
//! component's figures over (docs/monitors.md, "Measurements").

use crate::audit::AuditCtx;
use crate::db::{Db, Tx};
use crate::error::StoreResult;
use serde_json::json;
use std::sync::LazyLock;
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::measurements::{
    BUCKETS, Figures, Point, Resolution, Tally, bucket_of, exact_percentile,
};
use upstate_core::monitors::CheckResult;
use upstate_core::{Id, Timestamp};

fn h_cols() -> String {
    (0..BUCKETS)
        .map(|i| format!("h{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One check into its minute, hour and day in one statement: each row is
/// made or its counts grow (min and max kept by hand: SQLite's `min()` of
/// a NULL is NULL). Binds: $1 monitor, $2 checks, $3 failures, $4 timed,
/// $5 latency sum, $6 latency (min and max), then the buckets, then a span
/// and its bucket start per row.
static UPSERT: LazyLock<String> = LazyLock::new(|| {
    let sums = (0..BUCKETS)
        .map(|i| format!("h{i} = monitor_stats.h{i} + excluded.h{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let binds = (7..7 + BUCKETS)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = (0..Resolution::SUMMED.len())
        .map(|k| {
            let span = 7 + BUCKETS + 2 * k;
            format!(
                "($1, ${span}, ${}, $2, $3, $4, $5, $6, $6, {binds})",
                span + 1
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO monitor_stats (monitor_id, span_ms, bucket, checks, failures, timed, latency_sum, \
         latency_min, latency_max, {cols}) VALUES {rows} \
         ON CONFLICT (monitor_id, span_ms, bucket) DO UPDATE SET \
         checks = monitor_stats.checks + excluded.checks, \
         failures = monitor_stats.failures + excluded.failures, \
         timed = monitor_stats.timed + excluded.timed, \
         latency_sum = monitor_stats.latency_sum + excluded.latency_sum, \
         latency_min = CASE WHEN monitor_stats.latency_min IS NULL \
           OR excluded.latency_min < monitor_stats.latency_min \
           THEN COALESCE(excluded.latency_min, monitor_stats.latency_min) ELSE monitor_stats.latency_min END, \
         latency_max = CASE WHEN monitor_stats.latency_max IS NULL \
           OR excluded.latency_max > monitor_stats.latency_max \
           THEN COALESCE(excluded.latency_max, monitor_stats.latency_max) ELSE monitor_stats.latency_max END, \
         {sums}",
        cols = h_cols()
    )
});

/// The `Tally` of a row whose columns 1.. are `checks, failures, timed,
/// latency_sum, latency_min, latency_max, h0..` (both backends' rows).
macro_rules! tally {
    ($row:expr) => {{
        use sqlx::Row;
        let mut t = Tally {
            checks: $row.try_get(1)?,
            failures: $row.try_get(2)?,
            timed: $row.try_get(3)?,
            latency_sum: $row.try_get(4)?,
            latency_min: $row.try_get(5)?,
            latency_max: $row.try_get(6)?,
            ..Tally::default()
        };
        for (i, slot) in t.buckets.iter_mut().enumerate() {
            *slot = $row.try_get(7 + i)?;
        }
        t
    }};
}

static SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT bucket, checks, failures, timed, latency_sum, latency_min, latency_max, {} \
         FROM monitor_stats WHERE monitor_id = $1 AND span_ms = $2 AND bucket >= $3 AND bucket < $4 \
         ORDER BY bucket",
        h_cols()
    )
});

/// Adds check `r` of monitor `id` to its minute, hour and day.
pub(crate) async fn add(tx: &mut Tx, id: Id, r: &CheckResult) -> StoreResult<()> {
    let slot = r.latency_ms.map(bucket_of);
    let sql = UPSERT.as_str();
    on_tx!(tx, |c| {
        let mut q = sqlx::query(sql)
            .bind(id)
            .bind(1_i64)
            .bind(i64::from(!r.ok))
            .bind(i64::from(r.latency_ms.is_some()))
            .bind(r.latency_ms.unwrap_or(0))
            .bind(r.latency_ms);
        for i in 0..BUCKETS {
            q = q.bind(i64::from(slot == Some(i)));
        }
        for (_, span) in Resolution::SUMMED {
            q = q.bind(span).bind(r.at.millis().div_euclid(span) * span);
        }
        q.execute(c).await?.rows_affected()
    });
    Ok(())
}

/// A series and its summary over the whole window.
#[derive(Debug, Clone)]
pub struct Series {
    pub points: Vec<Point>,
    pub summary: Figures,
}

/// Monitor `id`'s figures from `from` (inclusive) to `to` (exclusive) at
/// `resolution`, oldest first. Summed points start at their span's start,
/// so the first may begin before `from`.
pub async fn series(
    db: &Db,
    id: Id,
    resolution: Resolution,
    from: Timestamp,
    to: Timestamp,
) -> StoreResult<Series> {
    match resolution.span_ms() {
        None => raw(db, id, from, to).await,
        Some(span) => summed(db, id, span, from, to).await,
    }
}

async fn raw(db: &Db, id: Id, from: Timestamp, to: Timestamp) -> StoreResult<Series> {
    let rows: Vec<(i64, bool, Option<i64>)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT at, ok, latency_ms FROM monitor_checks WHERE monitor_id = $1 AND at >= $2 AND at < $3 \
         ORDER BY at, id"
    )
    .bind(id)
    .bind(from.millis())
    .bind(to.millis())
    .fetch_all(c)
    .await?
    });
    let mut total = Tally::default();
    let mut latencies = Vec::with_capacity(rows.len());
    let points = rows
        .into_iter()
        .map(|(at, ok, ms)| {
            let one = Tally::of_check(ok, ms);
            total.add(&one);
            latencies.extend(ms);
            let mut figures = one.figures();
            figures.p50_ms = ms;
            figures.p95_ms = ms;
            figures.p99_ms = ms;
            Point {
                at: Timestamp::from_millis(at),
                figures,
            }
        })
        .collect();
    latencies.sort_unstable();
    let mut summary = total.figures();
    summary.p50_ms = exact_percentile(&latencies, 0.50);
    summary.p95_ms = exact_percentile(&latencies, 0.95);
    summary.p99_ms = exact_percentile(&latencies, 0.99);
    Ok(Series { points, summary })
}

async fn summed(db: &Db, id: Id, span: i64, from: Timestamp, to: Timestamp) -> StoreResult<Series> {
    let sql = SELECT.as_str();
    let first = from.millis().div_euclid(span) * span;
    let rows: Vec<(i64, Tally)> = on_db!(db, |c| {
        let rows = sqlx::query(sql)
            .bind(id)
            .bind(span)
            .bind(first)
            .bind(to.millis())
            .fetch_all(c)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            out.push((sqlx::Row::try_get::<i64, _>(row, 0)?, tally!(row)));
        }
        out
    });
    let mut total = Tally::default();
    let points = rows
        .into_iter()
        .map(|(at, t)| {
            total.add(&t);
            Point {
                at: Timestamp::from_millis(at),
                figures: t.figures(),
            }
        })
        .collect();
    Ok(Series {
        points,
        summary: total.figures(),
    })
}

static PAGE_SELECT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT s.bucket, s.checks, s.failures, s.timed, s.latency_sum, s.latency_min, s.latency_max, {}, \
         m.component_id FROM monitor_stats s JOIN monitors m ON m.id = s.monitor_id \
         JOIN components c ON c.id = m.component_id \
         WHERE c.page_id = $1 AND s.span_ms = $2 AND s.bucket >= $3 ORDER BY m.component_id, s.bucket",
        (0..BUCKETS)
            .map(|i| format!("s.h{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
});

/// The hourly points since `since` of every monitored component of page
/// `page` (the public page's charts), by component, oldest first.
pub async fn page_hours(db: &Db, page: Id, since: Timestamp) -> StoreResult<Vec<(Id, Series)>> {
    let sql = PAGE_SELECT.as_str();
    let (_, span) = Resolution::SUMMED[1];
    let first = since.millis().div_euclid(span) * span;
    let rows: Vec<(Id, i64, Tally)> = on_db!(db, |c| {
        let rows = sqlx::query(sql)
            .bind(page)
            .bind(span)
            .bind(first)
            .fetch_all(c)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let component: i64 = sqlx::Row::try_get(row, 7 + BUCKETS)?;
            out.push((
                component,
                sqlx::Row::try_get::<i64, _>(row, 0)?,
                tally!(row),
            ));
        }
        out
    });
    let mut by: Vec<(Id, Vec<Point>, Tally)> = Vec::new();
    for (component, at, t) in rows {
        let point = Point {
            at: Timestamp::from_millis(at),
            figures: t.figures(),
        };
        match by.last_mut() {
            Some((c, points, total)) if *c == component => {
                total.add(&t);
                points.push(point);
            }
            _ => by.push((component, vec![point], t)),
        }
    }
    Ok(by
        .into_iter()
        .map(|(c, points, total)| {
            (
                c,
                Series {
                    points,
                    summary: total.figures(),
                },
            )
        })
        .collect())
}

/// What a reset deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset {
    pub checks: u64,
    pub stats: u64,
    pub history: u64,
}

/// Starts component `id`'s figures over at `now`: its monitor's checks and
/// sums go, and its status history becomes one entry, its current status
/// since now (so uptime counts from the reset). Audited; the page's
/// snapshot is rebuilt. `NotFound` for an unknown component.
pub async fn reset(db: &Db, ctx: &AuditCtx, id: Id, now: Timestamp) -> StoreResult<Reset> {
    let mut tx = db.begin_as(ctx).await?;
    let current = crate::components::get_locked(&mut tx, id).await?;
    let checks = on_tx!(&mut tx, |c| {
        sqlx::query(
        "DELETE FROM monitor_checks WHERE monitor_id IN (SELECT id FROM monitors WHERE component_id = $1)"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected()
    });
    let stats = on_tx!(&mut tx, |c| {
        sqlx::query(
        "DELETE FROM monitor_stats WHERE monitor_id IN (SELECT id FROM monitors WHERE component_id = $1)"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected()
    });
    let history = on_tx!(&mut tx, |c| sqlx::query(
        "DELETE FROM component_status_history WHERE component_id = $1"
    )
    .bind(id)
    .execute(c)
    .await?
    .rows_affected());
    crate::components::record_history(&mut tx, id, current.status, now).await?;
    let audited = tx
        .audit(
            Action::ComponentResetStats,
            "component",
            Some(id),
            json!({ "statusPageId": current.status_page_id, "checks": checks,
                    "stats": stats, "history": history }),
        )
        .await?;
    tx.record(Event::ComponentUpdated {
        page: current.status_page_id,
        component: id,
    })
    .await?;
    tx.commit(audited).await?;
    Ok(Reset {
        checks,
        stats,
        history,
    })
}

/// Deletes sums older than their resolution keeps them; returns how many.
pub(crate) async fn prune(tx: &mut crate::db::Bookkeeping, now: Timestamp) -> StoreResult<u64> {
    let mut gone = 0;
    for (r, span) in Resolution::SUMMED {
        gone += on_tx!(tx, |c| sqlx::query(
            "DELETE FROM monitor_stats WHERE span_ms = $1 AND bucket < $2"
        )
        .bind(span)
        .bind(now.millis() - r.kept_ms())
        .execute(c)
        .await?
        .rows_affected());
    }
    Ok(gone)
}
