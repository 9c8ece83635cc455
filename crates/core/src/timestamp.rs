//! Instants as the API shows them (RFC 3339, UTC) and as the store keeps them
//! (integer milliseconds since the epoch: identical ordering and arithmetic on
//! SQLite and PostgreSQL, no dialect-specific date functions).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

const FIXED: &[time::format_description::BorrowedFormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
);

/// A UTC instant with millisecond precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    pub fn now() -> Self {
        Self::from_datetime(OffsetDateTime::now_utc())
    }

    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    pub fn from_datetime(dt: OffsetDateTime) -> Self {
        Timestamp((dt.unix_timestamp_nanos() / 1_000_000) as i64)
    }

    pub fn to_datetime(self) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(self.0) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    /// Parses RFC 3339 with any offset; the instant is kept, the offset is not.
    pub fn parse(text: &str) -> Result<Self, String> {
        OffsetDateTime::parse(text, &Rfc3339)
            .map(Self::from_datetime)
            .map_err(|_| "must be an RFC 3339 timestamp such as 2026-01-31T14:00:00Z".to_string())
    }

    /// RFC 3339 in UTC, always with three fractional digits
    /// (`2026-01-31T14:00:00.000Z`): fixed-format parsers break when the
    /// width depends on the instant.
    pub fn to_rfc3339(self) -> String {
        self.to_datetime()
            .to_offset(UtcOffset::UTC)
            .format(FIXED)
            .unwrap_or_default()
    }

    pub fn plus_millis(self, ms: i64) -> Self {
        Timestamp(self.0.saturating_add(ms))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// In API documents a timestamp is an RFC 3339 date-time string.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .examples([serde_json::json!("2026-01-31T14:00:00Z")])
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Timestamp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_normalised_to_utc() {
        let t = Timestamp::parse("2026-03-01T10:00:00+02:00").ok();
        assert_eq!(
            t.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-03-01T08:00:00.000Z")
        );
        assert!(Timestamp::parse("tomorrow").is_err());
        assert!(Timestamp::parse("2026-13-01T00:00:00Z").is_err());
    }

    #[test]
    fn millis_survive_a_round_trip() {
        let t = Timestamp::from_millis(1_780_000_000_123);
        assert_eq!(Timestamp::parse(&t.to_rfc3339()).ok(), Some(t));
    }

    #[test]
    fn always_three_fractional_digits() {
        for (ms, text) in [
            (1_780_000_000_000, "2026-05-28T20:26:40.000Z"),
            (1_780_000_000_970, "2026-05-28T20:26:40.970Z"),
            (1_780_000_000_841, "2026-05-28T20:26:40.841Z"),
            (1_780_000_000_007, "2026-05-28T20:26:40.007Z"),
        ] {
            assert_eq!(Timestamp::from_millis(ms).to_rfc3339(), text);
        }
    }
}
