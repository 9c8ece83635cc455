//! The store's one error type. Callers map it onto HTTP: NotFound → 404,
//! Conflict → 409, InvalidReference → 422 naming the field, Database → 500.

use upstate_core::status::InvalidTransition;

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{0}")]
    Conflict(String),
    /// A body named something that does not exist or belongs elsewhere.
    #[error("{field}: {message}")]
    InvalidReference {
        field: &'static str,
        message: String,
    },
    /// A change the domain's rules refuse, field by field.
    #[error("invalid fields: {0:?}")]
    Invalid(upstate_core::FieldErrors),
    #[error(transparent)]
    Transition(#[from] InvalidTransition),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{0}")]
    Config(String),
}

impl StoreError {
    pub(crate) fn invalid_ref(field: &'static str, message: impl Into<String>) -> Self {
        StoreError::InvalidReference {
            field,
            message: message.into(),
        }
    }

    /// Whether the database gave up on the transaction for reasons that may
    /// be gone a moment later, with nothing of it applied: PostgreSQL's
    /// deadlock (40P01) and serialization failure (40001), SQLite's busy
    /// and locked, or no pooled connection free in time. The same request
    /// may then be run again.
    pub fn is_retryable(&self) -> bool {
        use sqlx::error::DatabaseError as _;
        match self {
            StoreError::Database(sqlx::Error::Database(db)) => {
                matches!(db.code().as_deref(), Some("40P01" | "40001"))
                    || matches!(
                        db.try_downcast_ref::<sqlx::sqlite::SqliteError>()
                            .and_then(|e| e.code())
                            .as_deref(),
                        // SQLITE_BUSY, SQLITE_LOCKED and their extended codes.
                        Some(c) if c.parse::<i32>().is_ok_and(|n| matches!(n & 0xff, 5 | 6))
                    )
            }
            StoreError::Database(sqlx::Error::PoolTimedOut) => true,
            _ => false,
        }
    }

    /// Whether the database could not be reached at all (its connections
    /// cut or refused, the server shutting down or starting): nothing can
    /// be read or written until it is back.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Database(
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed,
            ) => true,
            // Connection exceptions (08…), and "shutting down", "crashed",
            // "starting up" (57P01-57P03).
            StoreError::Database(sqlx::Error::Database(db)) => db
                .code()
                .is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")),
            _ => false,
        }
    }

    /// Maps a unique-constraint violation onto a Conflict with a useful text.
    pub(crate) fn unique(err: sqlx::Error, message: &str) -> Self {
        match &err {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(message.to_string())
            }
            _ => StoreError::Database(err),
        }
    }
}
