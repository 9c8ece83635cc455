//! Upstate's domain: the vocabulary every other crate speaks.
//!
//! Pure by design (no IO, no async, no SQL) so the rules for states, transitions
//! and validation can be read and tested in one place, and both databases and
//! every route family share them.

pub mod access;
pub mod alerts;
pub mod atlassian;
pub mod audience;
pub mod audit;
pub mod clock;
pub mod comments;
pub mod events;
pub mod i18n;
pub mod input;
pub mod links;
pub mod markdown;
pub mod measurements;
pub mod model;
pub mod monitors;
pub mod notify;
pub mod patch;
pub mod postmortem;
pub mod public;
pub mod push;
pub mod recurring;
pub mod roles;
pub mod rules;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod scope;
pub mod settings;
pub mod setup;
pub mod sso;
pub mod static_copy;
pub mod status;
pub mod subscriber_csv;
pub mod templates;
pub mod third_party;
pub mod timestamp;
pub mod uptime;
pub mod validate;
pub mod values;
pub mod viewer_provider;

pub use clock::Clock;
pub use model::*;
pub use status::*;
pub use timestamp::Timestamp;
pub use validate::{FieldError, FieldErrors};

/// Database identifier of any resource. The management API shows it as a JSON
/// integer; the public API (later) as a string.
pub type Id = i64;
