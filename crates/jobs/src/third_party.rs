//! Polling vendors for third-party components (docs/third-party.md): the
//! loop that leases due follows, reads each vendor with a conditional GET
//! through the guarded client (the outgoing rule of webhooks and
//! importers), and records what it read (the store moves components).

use crate::outgoing::Outgoing;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use upstate_core::third_party::{read_feed, read_summary, summary_url};
use upstate_core::{SourceKind, Timestamp};
use upstate_store::third_party::{self, Polled, Stored};
use upstate_store::{Db, StoreResult};

/// How long a leased poll is ours before another instance may take it.
const LEASE_MS: i64 = 60_000;
/// Polls leased per round.
const IN_FLIGHT: i64 = 16;
/// The longest the loop sleeps without looking for due polls.
const POLL: Duration = Duration::from_secs(5);
/// The largest answer read: a big vendor's summary is a few hundred KB.
const ANSWER_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Reads the vendor of `s`, sending back the validators of its last
/// answer (a 304 costs the vendor, and us, nothing).
pub async fn poll(client: &Outgoing, s: &Stored, now: Timestamp) -> Polled {
    let c = &s.follow.config;
    let (url, accept) = match c.kind {
        SourceKind::Statuspage => (summary_url(&c.url), "application/json"),
        SourceKind::Feed => (
            c.url.clone(),
            "application/atom+xml, application/rss+xml, application/xml;q=0.9, */*;q=0.5",
        ),
    };
    let mut headers = vec![("accept", accept.to_string())];
    // Validators only mean something beside the reading they came with.
    if s.follow.vendor_status.is_some() {
        if let Some(e) = &s.etag {
            headers.push(("if-none-match", e.clone()));
        }
        if let Some(l) = &s.last_modified {
            headers.push(("if-modified-since", l.clone()));
        }
    }
    let answer = match client.read_whole(&url, &headers, ANSWER_MAX_BYTES).await {
        Ok(a) => a,
        Err(f) => return Polled::Failed(f.reason),
    };
    match answer.status {
        304 => Polled::Unchanged,
        200..=299 => {
            let read = match c.kind {
                SourceKind::Statuspage => read_summary(&answer.body, &c.vendor_component),
                SourceKind::Feed => read_feed(&answer.body, now, c.feed_status),
            };
            match read {
                Ok(reading) => Polled::Read {
                    reading,
                    etag: answer.etag,
                    last_modified: answer.last_modified,
                },
                Err(e) => Polled::Failed(e),
            }
        }
        other => Polled::Failed(format!("{url} answered {other}")),
    }
}

fn next_run(s: &Stored, now: Timestamp) -> Timestamp {
    now.plus_millis(s.follow.config.interval_seconds * 1_000)
}

/// Polls one follow now (a person's "poll now"), recorded like a
/// scheduled poll; returns what it found.
pub async fn poll_now(db: &Db, client: &Outgoing, id: upstate_core::Id) -> StoreResult<Polled> {
    let s = third_party::stored(db, id).await?;
    let now = db.clock.now();
    let polled = poll(client, &s, now).await;
    third_party::record(db, id, None, &polled, next_run(&s, now)).await?;
    Ok(polled)
}

async fn poll_leased(db: Db, client: Outgoing, id: upstate_core::Id, lease: i64) {
    let s = match third_party::stored(&db, id).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, id, "third-party poll: cannot read the follow");
            return;
        }
    };
    let now = db.clock.now();
    let polled = poll(&client, &s, now).await;
    if let Polled::Failed(e) = &polled {
        tracing::info!(id, error = %e, "third-party poll read nothing");
    }
    if let Err(e) = third_party::record(&db, id, Some(lease), &polled, next_run(&s, now)).await {
        tracing::warn!(error = %e, id, "third-party poll not recorded");
    }
}

/// Polls every follow due at `now` and records the outcomes; returns how
/// many it polled.
pub async fn run_due(db: &Db, client: &Outgoing, now: Timestamp) -> StoreResult<usize> {
    let due = third_party::lease_due(db, now, LEASE_MS, IN_FLIGHT).await?;
    let n = due.len();
    let mut work = JoinSet::new();
    for (id, lease) in due {
        work.spawn(poll_leased(db.clone(), client.clone(), id, lease));
    }
    while work.join_next().await.is_some() {}
    Ok(n)
}

/// Runs until cancelled: polls what is due, then sleeps until the next
/// poll is due (at most `POLL`).
pub async fn run_third_party(db: Db, client: Outgoing, cancel: CancellationToken) {
    loop {
        let polled = match run_due(&db, &client, db.clock.now()).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "third-party round failed");
                0
            }
        };
        let wait = match third_party::next_due(&db).await {
            Ok(Some(at)) if polled < IN_FLIGHT as usize => {
                let ms = (at.millis() - db.clock.now().millis()).max(0) as u64;
                Duration::from_millis(ms).clamp(Duration::from_millis(200), POLL)
            }
            Ok(_) if polled >= IN_FLIGHT as usize => Duration::ZERO,
            _ => POLL,
        };
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}
