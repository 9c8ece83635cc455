//! `GET /api/selftest`: real checks of what this instance needs, each with
//! its timing: the database written and read back, migrations current, the
//! background loops turning, the SMTP relay answering (when mail is set up)
//! and room on the disk of an SQLite database. For an operator asking "is
//! it me or Upstate?"; restricted to admins and admin keys.

use crate::caller::Caller;
use crate::error::ApiResult;
use crate::openapi::SessionErrors;
use crate::respond::Data;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::time::Instant;
use upstate_core::Timestamp;
use upstate_core::roles::Permission;
use upstate_jobs::beats::{self, Loop};
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(selftest))
}

/// A loop that has not finished a round for this long is stuck (they
/// sleep at most 30 s between rounds).
const STALE_MS: i64 = 120_000;
/// Less free space than this on an SQLite database's disk is a fault.
const DISK_MIN_BYTES: u64 = 256 * 1024 * 1024;

/// One check's outcome.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Check {
    name: &'static str,
    ok: bool,
    /// How long the check took.
    ms: u64,
    /// What was found, in words.
    detail: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Report {
    /// Every check passed.
    ok: bool,
    checks: Vec<Check>,
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
            ms,
            detail,
        },
        Err(detail) => Check {
            name,
            ok: false,
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

#[utoipa::path(get, path = "/api/selftest", tag = "operations", operation_id = "selftest",
    summary = "Run the self-test: database write and read back, migrations, background loops, SMTP, disk (needs SETTINGS_WRITE)",
    description = "Answers 200 when every check passes and 503 when one fails; either way the body lists each check with its timing.",
    responses((status = 200, body = Data<Report>), (status = 503, description = "A check failed", body = Data<Report>), SessionErrors),
    security(("session" = []), ("api_key" = [])))]
async fn selftest(State(state): State<AppState>, caller: Caller) -> ApiResult<Response> {
    caller.require(Permission::SettingsWrite)?;
    let db = &state.db;
    let mut checks = vec![
        timed("database", async {
            upstate_store::health::write_and_read(db, Timestamp::now())
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
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    Ok((
        status,
        Json(Data {
            data: Report { ok, checks },
        }),
    )
        .into_response())
}
