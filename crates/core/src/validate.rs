//! Field rules for everything operators send, collected per request so one
//! 422 names every bad field at once instead of one per round trip.
//!
//! Limits (documented in docs/api.md): names and titles 1..=255 characters,
//! slugs 1..=64 of `a-z 0-9 -`, descriptions 10,000, messages 20,000, URLs 2,048.

use serde::Serialize;

pub const NAME_MAX: usize = 255;
pub const SLUG_MAX: usize = 64;
pub const DESCRIPTION_MAX: usize = 10_000;
pub const MESSAGE_MAX: usize = 20_000;
pub const URL_MAX: usize = 2_048;
pub const DOMAIN_MAX: usize = 253;
pub const UPTIME_DAYS_MAX: i64 = 365;

/// One bad field: `field` is the JSON name (or query parameter) the client sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Every bad field of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn single(field: &str, message: impl Into<String>) -> Self {
        let mut e = Self::new();
        e.push(field, message);
        e
    }

    pub fn push(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_string(),
            message: message.into(),
        });
    }

    /// Keeps the value when the rule passed; records the message when not.
    pub fn check<T>(&mut self, field: &str, result: Result<T, String>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(message) => {
                self.push(field, message);
                None
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }
}

fn has_control(s: &str, allow_newlines: bool) -> bool {
    s.chars()
        .any(|c| c.is_control() && !(allow_newlines && matches!(c, '\n' | '\r' | '\t')))
}

/// A display name or title: trimmed, non-empty, one line.
pub fn name(raw: &str) -> Result<String, String> {
    let s = raw.trim();
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    if s.chars().count() > NAME_MAX {
        return Err(format!("must be at most {NAME_MAX} characters"));
    }
    if has_control(s, false) {
        return Err("must not contain control characters".into());
    }
    Ok(s.to_string())
}

/// Free text (may be empty) with a length cap. Line ends are stored as
/// `\n` alone: a bare `\r` is a line end to a person and to some formats
/// (iCalendar, email headers) but not to others, so a text that keeps it
/// can mean two things on its way out.
pub fn text(raw: &str, max: usize) -> Result<String, String> {
    let s = one_line_end(raw.trim());
    if s.chars().count() > max {
        return Err(format!("must be at most {max} characters"));
    }
    if has_control(&s, true) {
        return Err("must not contain control characters".into());
    }
    Ok(s)
}

/// `\r\n` and a bare `\r` as `\n`.
pub fn one_line_end(s: &str) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        s.to_string()
    }
}

/// A title made from another product's words (an alert's summary): its
/// lines joined with spaces, control characters dropped, clipped to
/// `NAME_MAX` characters; what `name` accepts, or None when nothing is left.
pub fn headline(raw: &str) -> Option<String> {
    let joined = raw
        .split(char::is_control)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let clipped: String = if joined.chars().count() > NAME_MAX {
        let mut c: String = joined.chars().take(NAME_MAX - 1).collect();
        c = c.trim_end().to_string();
        c.push('…');
        c
    } else {
        joined
    };
    name(&clipped).ok()
}

/// Free text from another product: line ends folded, other control
/// characters dropped, clipped to `max` characters; what `text` accepts.
pub fn foreign_text(raw: &str, max: usize) -> String {
    let folded = one_line_end(raw.trim());
    let kept: String = folded
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .take(max)
        .collect();
    kept.trim().to_string()
}

/// A non-empty message for a timeline entry.
pub fn message(raw: &str) -> Result<String, String> {
    let s = text(raw, MESSAGE_MAX)?;
    if s.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s)
    }
}

/// The public address segment of a page: lowercase letters, digits and inner hyphens.
pub fn slug(raw: &str) -> Result<String, String> {
    let ok_chars = raw
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if raw.is_empty()
        || raw.len() > SLUG_MAX
        || !ok_chars
        || raw.starts_with('-')
        || raw.ends_with('-')
    {
        return Err(format!(
            "must be 1 to {SLUG_MAX} lowercase letters, digits or hyphens, not starting or ending with a hyphen"
        ));
    }
    Ok(raw.to_string())
}

/// `#rgb` or `#rrggbb`, normalised to lowercase `#rrggbb`.
pub fn hex_color(raw: &str) -> Result<String, String> {
    let err = || "must be a hex colour such as #2563eb".to_string();
    let hex = raw.strip_prefix('#').ok_or_else(err)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(err());
    }
    match hex.len() {
        6 => Ok(format!("#{}", hex.to_ascii_lowercase())),
        3 => Ok(format!(
            "#{}",
            hex.chars()
                .flat_map(|c| [c, c])
                .collect::<String>()
                .to_ascii_lowercase()
        )),
        _ => Err(err()),
    }
}

/// An absolute http(s) URL without whitespace.
pub fn url(raw: &str) -> Result<String, String> {
    let s = raw.trim();
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    match rest {
        Some(rest)
            if !rest.is_empty()
                && !rest.starts_with('/')
                && s.len() <= URL_MAX
                && !s.chars().any(char::is_whitespace)
                // What a browser or client could not follow (`http://a[b`,
                // `http://a:port/`) is no address either.
                && url::Url::parse(s).is_ok_and(|u| u.has_host()) =>
        {
            Ok(s.to_string())
        }
        _ => Err(format!(
            "must be an absolute http:// or https:// URL of at most {URL_MAX} characters"
        )),
    }
}

/// A host name (no scheme, port or path), lowercased.
pub fn domain(raw: &str) -> Result<String, String> {
    let s = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if s.len() > DOMAIN_MAX || !s.contains('.') || !s.split('.').all(label_ok) {
        return Err("must be a host name such as status.example.com".into());
    }
    Ok(s)
}

/// An IANA time zone name such as `Europe/Berlin` (or `UTC`) that both
/// zone databases Upstate carries know: jiff's, which shows times, and
/// chrono-tz's, which the `rrule` crate expands recurring windows with
/// (jiff's also lists `Factory`, which the other cannot read: a page or
/// rule in it made no windows, found by the contract probe).
pub fn time_zone(raw: &str) -> Result<String, String> {
    if known_zone(raw) {
        Ok(raw.to_string())
    } else {
        Err("must be an IANA time zone name such as Europe/Berlin or UTC".into())
    }
}

/// Whether both zone databases know `name` (`time_zone`).
pub fn known_zone(name: &str) -> bool {
    !name.is_empty()
        && jiff::tz::TimeZone::get(name).is_ok()
        && name.parse::<chrono_tz::Tz>().is_ok()
}

/// How many days of uptime history a page shows.
/// The longest stylesheet a page may carry.
pub const CUSTOM_CSS_MAX: usize = 20_000;

/// An operator's stylesheet: any CSS up to `CUSTOM_CSS_MAX` bytes, without
/// control characters. It is served as a file of its own, so nothing in it
/// can end a `<style>` element or touch the page's headers.
pub fn custom_css(raw: &str) -> Result<String, String> {
    if raw.len() > CUSTOM_CSS_MAX {
        return Err(format!("must be at most {CUSTOM_CSS_MAX} bytes"));
    }
    if raw
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err("must not contain control characters".into());
    }
    Ok(raw.trim().to_string())
}

/// The most days the "Past incidents" section lists.
pub const PAST_INCIDENT_DAYS_MAX: i64 = 90;

pub fn past_incident_days(raw: i64) -> Result<i32, String> {
    if (0..=PAST_INCIDENT_DAYS_MAX).contains(&raw) {
        Ok(raw as i32)
    } else {
        Err(format!(
            "must be between 0 (no section) and {PAST_INCIDENT_DAYS_MAX}"
        ))
    }
}

pub fn uptime_days(raw: i64) -> Result<i32, String> {
    if (1..=UPTIME_DAYS_MAX).contains(&raw) {
        Ok(raw as i32)
    } else {
        Err(format!("must be between 1 and {UPTIME_DAYS_MAX}"))
    }
}

/// A display position.
pub fn order(raw: i64) -> Result<i32, String> {
    if (0..=1_000_000).contains(&raw) {
        Ok(raw as i32)
    } else {
        Err("must be between 0 and 1000000".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_words_keep_the_rules() {
        assert_eq!(
            headline("CPU high\n\non db-1\r\tnow").as_deref(),
            Some("CPU high on db-1 now")
        );
        assert_eq!(headline(" \n\u{7}"), None);
        let long = headline(&"word ".repeat(100)).unwrap_or_default();
        assert!(name(&long).is_ok() && long.ends_with('…'), "{long}");
        assert_eq!(foreign_text("a\r\nb\rc\u{0}d", 100), "a\nb\ncd");
        assert_eq!(foreign_text("abcdef", 3), "abc");
        assert_eq!(text("a\rb", 10), Ok("a\nb".to_string()));
    }

    #[test]
    fn slugs() {
        assert!(slug("acme-cloud").is_ok());
        assert!(slug("a").is_ok());
        for bad in ["", "-a", "a-", "Acme", "a b", "a_b", "ü", &"a".repeat(65)] {
            assert!(slug(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn colours_normalise() {
        assert_eq!(hex_color("#ABC").as_deref(), Ok("#aabbcc"));
        assert_eq!(hex_color("#2563EB").as_deref(), Ok("#2563eb"));
        assert!(hex_color("2563eb").is_err());
        assert!(hex_color("#12345").is_err());
        assert!(hex_color("#gggggg").is_err());
    }

    #[test]
    fn names_and_text() {
        assert_eq!(name("  API  ").as_deref(), Ok("API"));
        assert!(name("   ").is_err());
        assert!(name(&"x".repeat(256)).is_err());
        assert!(name("a\u{0}b").is_err());
        assert!(text("line one\nline two", 100).is_ok());
        assert!(message("").is_err());
    }

    #[test]
    fn urls_domains_zones() {
        assert!(url("https://example.com/logo.png").is_ok());
        assert!(url("javascript:alert(1)").is_err());
        assert!(url("https://").is_err());
        assert!(url("http://a[b/").is_err());
        assert!(url("http://a:port/").is_err());
        assert_eq!(
            domain("Status.Example.com").as_deref(),
            Ok("status.example.com")
        );
        assert!(domain("localhost").is_err());
        assert!(domain("http://x.com").is_err());
        assert!(time_zone("Europe/Berlin").is_ok());
        assert!(time_zone("UTC").is_ok());
        assert!(time_zone("Mars/Olympus").is_err());
        // jiff knows it, chrono-tz (rrule's) does not.
        assert!(time_zone("Factory").is_err());
    }
}
