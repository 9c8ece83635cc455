//! Upstate's persistence: one set of queries over SQLite (embedded default) and
//! PostgreSQL (several instances), picked once from the database URL.
//!
//! Every write is one transaction that also records what later features read
//! (component status history for uptime), so an acknowledged write is whole.

#[macro_use]
mod db;
#[macro_use]
mod rows;
pub mod access;
pub mod api_keys;
pub mod audiences;
pub mod audit;
pub mod changes;
pub mod comments;
pub mod components;
pub mod deliveries;
mod error;
pub mod failures;
pub mod groups;
pub mod health;
pub mod incidents;
pub mod integrations;
pub mod jobs;
pub mod maintenance;
pub mod managed;
mod migrations_in_step;
pub mod monitor_stats;
pub mod monitors;
pub mod notifications;
pub mod pages;
mod postgres;
pub mod postmortems;
pub mod public;
pub mod push;
pub mod quick_links;
pub mod recurring;
pub mod reminders;
pub mod retention;
pub mod sealed;
pub mod server_key;
pub mod settings;
mod sqlite;
pub mod sso;
pub mod step_up;
pub mod subscribers;
pub mod templates;
pub mod third_party;
mod timeline;
pub mod transfer;
pub mod two_factor;
pub mod users;
pub mod viewer_providers;
pub mod viewers;
mod work;
mod writer;

pub use audit::AuditCtx;
pub use changes::Changes;
pub use db::{Backend, Db, Tx, redact};
pub use error::{StoreError, StoreResult};
