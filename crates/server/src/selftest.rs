//! The self-test's checks (docs/operations.md): what this instance needs,
//! each really done and timed. Shared by `GET /api/selftest` and the admin
//! System screen.

use crate::state::AppState;
use serde::Serialize;
use std::time::Instant;
use upstate_core::Timestamp;
use upstate_jobs::beats::{self, Loop};

/// A loop that has not finished a round for this long is stuck (they
/// sleep at most 30 s between rounds).
const STALE_MS: i64 = 120_000;
/// Less free space than this on an SQLite database's disk is a fault.
const DISK_MIN_BYTES: u64 = 256 * 1024 * 1024;

/// One check's outcome. Named apart in the document: `/api/monitor/check`
/// has a `Check` of its own.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = SelfTestCheck)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// Working, but without a helper: the instance does its best alone
    /// (Redis down: rate limits counted per instance).
    pub degraded: bool,
    /// How long the check took.
    pub ms: u64,
    /// What was found, in words.
    pub detail: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = SelfTestReport)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Every check passed.
    pub ok: bool,
    pub checks: Vec<Check>,
}

/// Runs `f`, timing it.
async fn timed<F>(name: &'static str, f: F) -> Check
where
    F: std::future::Future<Output = Result<String, String>>,
{
    let started = Instant::now();
    let r = f.await;
    let ms = started.elapsed().as_millis() as u64;
    match r {
        Ok(detail) => Check {
            name,
            ok: true,
            degraded: false,
            ms,
            detail,
        },
        Err(detail) => Check {
            name,
            ok: false,
            degraded: false,
            ms,
            detail,
        },
    }
}

fn heartbeat(l: Loop, what: &str) -> Result<String, String> {
    let now = Timestamp::now().millis();
    match beats::last(l) {
        Some(at) if now - at.millis() <= STALE_MS => Ok(format!(
            "{what}: last round {} s ago",
            (now - at.millis()) / 1_000
        )),
        Some(at) => Err(format!(
            "{what}: no round for {} s",
            (now - at.millis()) / 1_000
        )),
        None => Err(format!("{what}: has not run in this process")),
    }
}

fn free_bytes(path: &std::path::Path) -> Result<u64, String> {
    let dir = path.parent().unwrap_or(path);
    let s = nix::sys::statvfs::statvfs(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(s.blocks_available() * s.fragment_size())
}

/// Runs every check that applies to this instance.
pub async fn run(state: &AppState) -> Report {
    let db = &state.db;
    let mut checks = vec![
        timed("database", async {
            upstate_store::health::write_and_read(db, state.db.clock.now())
                .await
                .map(|()| "wrote a row and read it back".to_string())
                .map_err(|e| e.to_string())
        })
        .await,
        timed("migrations", async {
            match upstate_store::health::migrations(db).await {
                Ok(m) if m.current() => Ok(format!("at {}", m.applied)),
                Ok(m) => Err(format!("at {}, this build needs {}", m.applied, m.expected)),
                Err(e) => Err(e.to_string()),
            }
        })
        .await,
        timed("scheduler", async {
            heartbeat(Loop::Scheduler, "jobs and reminders")
        })
        .await,
        timed("deliveries", async {
            heartbeat(Loop::Sender, "the sender")
        })
        .await,
        timed("monitors", async {
            heartbeat(Loop::Monitors, "monitor checks")
        })
        .await,
    ];
    if state.sender.has_mailer() {
        checks.push(
            timed("smtp", async {
                match state.sender.smtp_reachable().await {
                    Some(r) => r.map(|()| "the relay answered".to_string()),
                    None => Err("no relay configured".into()),
                }
            })
            .await,
        );
    }
    if state.shared_limits.configured() {
        let mut check = timed("shared limits", async {
            match state.shared_limits.ping().await {
                Ok(()) => Ok("Redis answered: rate limits are counted across instances".into()),
                Err(e) => Err(e),
            }
        })
        .await;
        if !check.ok {
            // Degraded, not failed: every limit still holds per instance.
            check.ok = true;
            check.degraded = true;
            check.detail = format!(
                "{}; rate limits are counted per instance until Redis answers",
                check.detail
            );
        }
        checks.push(check);
    }
    if let Ok(Some(file)) = upstate_store::health::sqlite_file(db).await {
        checks.push(
            timed("disk", async {
                let free = free_bytes(&file)?;
                let text = format!("{} MB free beside {}", free / 1_048_576, file.display());
                if free >= DISK_MIN_BYTES {
                    Ok(text)
                } else {
                    Err(format!("only {text}"))
                }
            })
            .await,
        );
    }
    let ok = checks.iter().all(|c| c.ok);
    Report { ok, checks }
}
