//! What a job asks for, and how a job row's columns say it: plain data,
//! below both the write transaction that schedules a fan-out on commit
//! (`db`) and the job table (`jobs`).

use upstate_core::Id;

/// A job row's `kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Start or complete a maintenance window on time.
    Maintenance,
    /// Expand a committed change into deliveries.
    Notify,
    /// Prune the delivery log, old checks and followers (hourly).
    Prune,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Maintenance => "maintenance",
            JobKind::Notify => "notify",
            JobKind::Prune => "prune",
        }
    }
}

/// What a job asks for. A row keeps it in three columns (`kind`,
/// `dedupe_key`, `payload`); this is the one place that writes and reads
/// them, so the store that schedules work and the worker that runs it never
/// agree on strings by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    /// The window's next automatic move (start or complete).
    MoveMaintenance(Id),
    /// The outbox rows of one committed change, to be told.
    FanOut(Vec<Id>),
    Prune,
}

impl Work {
    pub fn kind(&self) -> JobKind {
        match self {
            Work::MoveMaintenance(_) => JobKind::Maintenance,
            Work::FanOut(_) => JobKind::Notify,
            Work::Prune => JobKind::Prune,
        }
    }

    /// The one job a thing has: scheduling the same key again moves it.
    /// A change's fan-out is named by its first outbox row (PostgreSQL
    /// builds the same name in `postgres::write_outbox`).
    pub fn key(&self) -> String {
        match self {
            Work::MoveMaintenance(id) => format!("{}:{id}", JobKind::Maintenance.as_str()),
            Work::FanOut(ids) => format!(
                "{}:{}",
                JobKind::Notify.as_str(),
                ids.first().copied().unwrap_or_default()
            ),
            Work::Prune => JobKind::Prune.as_str().to_string(),
        }
    }

    pub(crate) fn payload(&self) -> String {
        match self {
            Work::FanOut(ids) => serde_json::to_string(ids).unwrap_or_else(|_| "[]".into()),
            _ => "{}".into(),
        }
    }

    /// Reads a row's columns back; a row no release of ours wrote is an error
    /// that names it.
    pub fn read(kind: &str, key: &str, payload: &str) -> Result<Work, String> {
        let kind: JobKind = serde_json::from_value(serde_json::Value::String(kind.into()))
            .map_err(|_| format!("unknown job kind {kind:?}"))?;
        match kind {
            JobKind::Maintenance => key
                .strip_prefix("maintenance:")
                .and_then(|id| id.parse().ok())
                .map(Work::MoveMaintenance)
                .ok_or_else(|| format!("bad maintenance job key {key:?}")),
            JobKind::Notify => serde_json::from_str(payload)
                .map(Work::FanOut)
                .map_err(|e| format!("bad fan-out payload: {e}")),
            JobKind::Prune => Ok(Work::Prune),
        }
    }
}
