//! Recurring maintenance: a template whose windows repeat by an RFC 5545
//! RRULE (the `rrule` crate) from a first start given as a wall-clock time
//! in the template's own time zone or else the page's, so "every Sunday
//! 02:00" stays 02:00 across daylight-saving changes (docs/maintenance.md,
//! "Recurring maintenance").

use crate::patch::Patch;
use crate::validate::{self, FieldErrors};
use crate::{Id, Timestamp};
use chrono::{TimeZone, Utc};
use serde::{Deserialize, Serialize};

/// The shortest and longest window, in minutes.
pub const DURATION_MIN: i64 = 5;
pub const DURATION_MAX: i64 = 7 * 1_440;
/// How far ahead windows are made, in days.
pub const HORIZON_DEFAULT: i64 = 14;
pub const HORIZON_MAX: i64 = 90;
/// The most windows one template makes per expansion.
pub const EXPAND_MAX: u16 = 100;

/// A template as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Recurring {
    pub id: Id,
    pub status_page_id: Id,
    pub title: String,
    pub description: String,
    /// The RRULE, e.g. `FREQ=WEEKLY;BYDAY=SU`.
    pub rrule: String,
    /// The first window's start, wall-clock in `timeZone`, else the
    /// page's time zone (`2026-11-29T02:00`).
    pub first_start: String,
    /// The zone the rule's wall-clock times are in, when it is not the
    /// page's (a datacentre's window kept in its own zone); `null`: the
    /// page's.
    pub time_zone: Option<String>,
    pub duration_minutes: i64,
    pub auto_start: bool,
    /// Windows are made this many days ahead.
    pub horizon_days: i64,
    pub component_ids: Vec<Id>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `POST /api/maintenance/recurring` (all but `description`, `autoStart`,
/// `horizonDays` and `componentIds` required) and `PUT …/{id}` (any subset).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecurringInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    /// RFC 5545 RRULE: FREQ of DAILY, WEEKLY, MONTHLY or YEARLY, with any
    /// of INTERVAL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, COUNT, UNTIL.
    /// Required unless `repeat` says daily, weekly or monthly.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::rrule))]
    pub rrule: Option<String>,
    /// The rule as a person picks it: `daily`, `weekly` (on `weekdays`),
    /// `monthly` (on `monthDay`), or `rule` (the `rrule` as written). When
    /// it is daily, weekly or monthly the RRULE is made from it and a
    /// `rrule` sent beside it is not read.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::repeat))]
    pub repeat: Option<String>,
    /// With `repeat: weekly`: the days, `MO` to `SU`.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::weekdays))]
    pub weekdays: Option<Vec<String>>,
    /// With `repeat: monthly`: the day of the month, 1 to 31 (months
    /// without that day are skipped).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::month_day))]
    pub month_day: Option<i64>,
    /// Local date and time of the first window: `YYYY-MM-DDTHH:MM`.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::local_start, required))]
    pub first_start: Option<String>,
    /// The zone of `firstStart` and of every window's wall-clock time;
    /// absent on a new template, or `null`: the page's.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::time_zone_or_null))]
    pub time_zone: Patch<String>,
    /// 5 minutes to 7 days.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::duration_minutes, required))]
    pub duration_minutes: Option<i64>,
    pub auto_start: Option<bool>,
    /// 1 to 90, default 14.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::horizon_days))]
    pub horizon_days: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::ids))]
    pub component_ids: Option<Vec<Id>>,
}

/// A checked template (`id`, times: the store's).
#[derive(Debug, Clone, PartialEq)]
pub struct RecurringFields {
    pub status_page_id: Id,
    pub title: String,
    pub description: String,
    pub rrule: String,
    pub first_start: String,
    /// `None`: the page's.
    pub time_zone: Option<String>,
    pub duration_minutes: i64,
    pub auto_start: bool,
    pub horizon_days: i64,
    pub component_ids: Vec<Id>,
}

impl RecurringFields {
    /// The zone the template's times are in: its own, else the page's.
    pub fn zone<'a>(&'a self, page_zone: &'a str) -> &'a str {
        self.time_zone.as_deref().unwrap_or(page_zone)
    }
}

impl Recurring {
    /// The zone the template's times are in: its own, else the page's.
    pub fn zone<'a>(&'a self, page_zone: &'a str) -> &'a str {
        self.time_zone.as_deref().unwrap_or(page_zone)
    }
}

impl RecurringInput {
    /// The template this input makes, over `base` (a change) or from
    /// nothing (a new one). `tz` is the page's time zone.
    pub fn apply(
        self,
        base: Option<&RecurringFields>,
        tz: impl Fn(Id) -> Option<String>,
    ) -> Result<RecurringFields, FieldErrors> {
        let mut e = FieldErrors::new();
        let page = self.status_page_id.or(base.map(|b| b.status_page_id));
        if page.is_none() {
            e.push("statusPageId", "is required");
        }
        // A field given is checked; one absent keeps the base's, or is
        // missing on a new template.
        fn field(
            e: &mut FieldErrors,
            name: &str,
            given: Option<String>,
            check: fn(&str) -> Result<String, String>,
            kept: Option<String>,
        ) -> Option<String> {
            match (given, kept) {
                (Some(v), _) => e.check(name, check(&v)),
                (None, Some(k)) => Some(k),
                (None, None) => {
                    e.push(name, "is required");
                    None
                }
            }
        }
        let title = field(
            &mut e,
            "title",
            self.title,
            validate::name,
            base.map(|b| b.title.clone()),
        );
        let description = match self.description {
            Some(d) => e
                .check("description", validate::text(&d, validate::DESCRIPTION_MAX))
                .unwrap_or_default(),
            None => base.map(|b| b.description.clone()).unwrap_or_default(),
        };
        let picked = match picked_rule(
            self.repeat.as_deref(),
            self.weekdays.as_deref(),
            self.month_day,
        ) {
            Ok(made) => made,
            Err((name, message)) => {
                e.push(name, message);
                // Nothing more to say of a rule that was not made.
                Some(String::new())
            }
        };
        let rrule = match picked {
            Some(made) if made.is_empty() => None,
            Some(made) => Some(made),
            None => field(
                &mut e,
                "rrule",
                self.rrule,
                rule,
                base.map(|b| b.rrule.clone()),
            ),
        };
        let first_start = field(
            &mut e,
            "firstStart",
            self.first_start,
            local_start,
            base.map(|b| b.first_start.clone()),
        );
        let duration = self.duration_minutes.or(base.map(|b| b.duration_minutes));
        match duration {
            None => e.push("durationMinutes", "is required"),
            Some(d) if !(DURATION_MIN..=DURATION_MAX).contains(&d) => e.push(
                "durationMinutes",
                format!("must be {DURATION_MIN} to {DURATION_MAX} (7 days)"),
            ),
            Some(_) => {}
        }
        let horizon = self
            .horizon_days
            .or(base.map(|b| b.horizon_days))
            .unwrap_or(HORIZON_DEFAULT);
        if !(1..=HORIZON_MAX).contains(&horizon) {
            e.push("horizonDays", format!("must be 1 to {HORIZON_MAX}"));
        }
        let own_zone = match self.time_zone.try_map(|z| validate::time_zone(z.trim())) {
            Ok(z) => z.apply(base.and_then(|b| b.time_zone.clone())),
            Err(m) => {
                e.push("timeZone", m);
                None
            }
        };
        let page_zone = page.and_then(&tz);
        if page.is_some() && page_zone.is_none() {
            e.push("statusPageId", "names no page");
        }
        let zone = own_zone.clone().or(page_zone);
        if let (Some(r), Some(s), Some(z)) = (&rrule, &first_start, &zone) {
            // Up to 2100: a rule must make at least one window.
            match occurrences(
                r,
                s,
                z,
                Timestamp::from_millis(0),
                Timestamp::from_millis(4_102_444_800_000),
                1,
            ) {
                Ok(found) if found.is_empty() => {
                    e.push("rrule", "makes no occurrence from firstStart on")
                }
                Ok(_) => {}
                Err(m) => e.push("rrule", m),
            }
        }
        e.into_result()?;
        match (page, title, rrule, first_start, duration) {
            (
                Some(status_page_id),
                Some(title),
                Some(rrule),
                Some(first_start),
                Some(duration_minutes),
            ) => Ok(RecurringFields {
                status_page_id,
                title,
                description,
                rrule,
                first_start,
                time_zone: own_zone,
                duration_minutes,
                auto_start: self
                    .auto_start
                    .or(base.map(|b| b.auto_start))
                    .unwrap_or(true),
                horizon_days: horizon,
                component_ids: self
                    .component_ids
                    .or(base.map(|b| b.component_ids.clone()))
                    .unwrap_or_default(),
            }),
            _ => Err(FieldErrors::single("body", "is incomplete")),
        }
    }
}

/// The weekdays of RFC 5545, Monday first, with their English names.
pub const WEEKDAYS: [(&str, &str); 7] = [
    ("MO", "Monday"),
    ("TU", "Tuesday"),
    ("WE", "Wednesday"),
    ("TH", "Thursday"),
    ("FR", "Friday"),
    ("SA", "Saturday"),
    ("SU", "Sunday"),
];

/// The RRULE a person's pick makes: `Ok(None)` when the pick is the rule
/// as written (no `repeat`, or `rule`); the field at fault otherwise.
fn picked_rule(
    repeat: Option<&str>,
    weekdays: Option<&[String]>,
    month_day: Option<i64>,
) -> Result<Option<String>, (&'static str, String)> {
    match repeat.map(str::trim) {
        None | Some("rule") => Ok(None),
        Some("daily") => Ok(Some("FREQ=DAILY".into())),
        Some("weekly") => {
            let given = weekdays.unwrap_or_default();
            let mut days = Vec::new();
            for d in given.iter().map(|d| d.trim().to_ascii_uppercase()) {
                if d.is_empty() {
                    continue;
                }
                let Some((code, _)) = WEEKDAYS.iter().find(|(c, _)| *c == d) else {
                    return Err(("weekdays", "must be days from MO to SU".into()));
                };
                if !days.contains(code) {
                    days.push(*code);
                }
            }
            if days.is_empty() {
                return Err(("weekdays", "choose at least one day of the week".into()));
            }
            // Monday first, however they were ticked.
            days.sort_by_key(|d| WEEKDAYS.iter().position(|(c, _)| c == d));
            Ok(Some(format!("FREQ=WEEKLY;BYDAY={}", days.join(","))))
        }
        Some("monthly") => match month_day {
            Some(d) if (1..=31).contains(&d) => Ok(Some(format!("FREQ=MONTHLY;BYMONTHDAY={d}"))),
            Some(_) => Err(("monthDay", "must be a day of the month, 1 to 31".into())),
            None => Err(("monthDay", "choose the day of the month".into())),
        },
        Some(_) => Err(("repeat", "must be daily, weekly, monthly or rule".into())),
    }
}

/// A rule in words where it is one of the shapes people pick ("every
/// Sunday"), else `None` (show the rule itself).
pub fn in_words(rrule: &str) -> Option<String> {
    let parts: Vec<(&str, &str)> = rrule.split(';').filter_map(|p| p.split_once('=')).collect();
    let get = |k: &str| parts.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    match (get("FREQ")?, parts.len()) {
        ("DAILY", 1) => Some("Every day".into()),
        ("WEEKLY", 2) => {
            let names: Vec<&str> = get("BYDAY")?
                .split(',')
                .map(|d| WEEKDAYS.iter().find(|(c, _)| *c == d).map(|(_, n)| *n))
                .collect::<Option<_>>()?;
            Some(match names.as_slice() {
                [one] => format!("Every {one}"),
                [rest @ .., last] => format!("Every {} and {last}", rest.join(", ")),
                [] => return None,
            })
        }
        ("MONTHLY", 2) => {
            let day: u8 = get("BYMONTHDAY")?.parse().ok()?;
            Some(format!("Every month on day {day}"))
        }
        _ => None,
    }
}

/// An RRULE as given (an `RRULE:` prefix dropped), checked for what makes
/// sense for maintenance: daily or rarer, no DTSTART of its own.
pub fn rule(raw: &str) -> Result<String, String> {
    let r = raw.trim();
    let r = r
        .strip_prefix("RRULE:")
        .unwrap_or(r)
        .trim()
        .to_ascii_uppercase();
    if r.is_empty() {
        return Err("must not be empty".into());
    }
    if r.len() > 500 || r.contains(['\n', '\r']) {
        return Err("must be one RRULE line of at most 500 characters".into());
    }
    // RRULEs are ASCII (RFC 5545 3.3.10); the rrule crate slices text by
    // byte and panics inside a multi-byte character (found by cargo fuzz).
    if !r.is_ascii() {
        return Err("must be written in ASCII letters, digits and ;=,:+-".into());
    }
    if r.contains("DTSTART") {
        return Err("must not carry DTSTART: firstStart gives it".into());
    }
    // The parser's own words name its internals; say what to write instead.
    let parsed: rrule::RRule<rrule::Unvalidated> = r.parse().map_err(|_| {
        "cannot be read as a repeat rule: write it like FREQ=WEEKLY;BYDAY=SU (every Sunday) or FREQ=MONTHLY;BYMONTHDAY=1".to_string()
    })?;
    match parsed.get_freq() {
        rrule::Frequency::Daily
        | rrule::Frequency::Weekly
        | rrule::Frequency::Monthly
        | rrule::Frequency::Yearly => Ok(r),
        _ => Err("must repeat daily or less often (FREQ=DAILY, WEEKLY, MONTHLY or YEARLY)".into()),
    }
}

/// `YYYY-MM-DDTHH:MM[:SS]` as a wall-clock time, normalised to minutes.
pub fn local_start(raw: &str) -> Result<String, String> {
    let t: jiff::civil::DateTime = raw
        .trim()
        .parse()
        .map_err(|_| "must be a local date and time like 2026-11-29T02:00".to_string())?;
    if t.year() < 2000 {
        return Err("must be in 2000 or later".into());
    }
    Ok(t.strftime("%Y-%m-%dT%H:%M").to_string())
}

/// The starts of the occurrences in `[from, to)`, at most `limit`.
pub fn occurrences(
    rule: &str,
    first_start: &str,
    tz: &str,
    from: Timestamp,
    to: Timestamp,
    limit: u16,
) -> Result<Vec<Timestamp>, String> {
    let start: jiff::civil::DateTime = first_start
        .parse()
        .map_err(|_| "firstStart is no local date and time".to_string())?;
    if !rule.is_ascii() || !tz.is_ascii() {
        return Err("is no RFC 5545 RRULE for this page: not ASCII".into());
    }
    let text = format!(
        "DTSTART;TZID={tz}:{}\nRRULE:{rule}",
        start.strftime("%Y%m%dT%H%M%S")
    );
    let set: rrule::RRuleSet = text.parse().map_err(|_| {
        "is not a rule we can read for this page's first start and time zone".to_string()
    })?;
    let at = |t: Timestamp| {
        Utc.timestamp_millis_opt(t.millis())
            .single()
            .map(|d| d.with_timezone(&rrule::Tz::UTC))
    };
    let (Some(from), Some(to)) = (at(from), at(to)) else {
        return Err("times out of range".into());
    };
    let found = set.after(from).before(to).all(limit);
    Ok(found
        .dates
        .into_iter()
        .map(|d| Timestamp::from_millis(d.timestamp_millis()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> Timestamp {
        Timestamp::from_millis(
            s.parse::<jiff::Timestamp>()
                .map(|t| t.as_millisecond())
                .unwrap_or_default(),
        )
    }

    #[test]
    fn sundays_at_three_stay_at_three_across_daylight_saving() -> Result<(), String> {
        let got = occurrences(
            "FREQ=WEEKLY;BYDAY=SU",
            "2026-10-18T03:00",
            "Europe/Berlin",
            ms("2026-10-01T00:00:00Z"),
            ms("2026-11-05T00:00:00Z"),
            10,
        )?;
        let utc: Vec<String> = got.iter().map(|t| t.to_rfc3339()).collect();
        assert_eq!(
            utc,
            [
                "2026-10-18T01:00:00.000Z",
                "2026-10-25T02:00:00.000Z",
                "2026-11-01T02:00:00.000Z"
            ]
        );
        Ok(())
    }

    #[test]
    fn rules_are_checked() {
        assert_eq!(
            rule("RRULE:freq=weekly;byday=su").ok().as_deref(),
            Some("FREQ=WEEKLY;BYDAY=SU")
        );
        for bad in [
            "",
            "FREQ=HOURLY",
            "FREQ=MINUTELY",
            "FREQ=SOMETIMES",
            "DTSTART:20260101T000000Z",
            "FREQ=DAILY\nFREQ=DAILY",
            "\u{76a}\u{4e1}H",
        ] {
            assert!(rule(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            local_start("2026-11-29T02:00:00").ok().as_deref(),
            Some("2026-11-29T02:00")
        );
        assert!(local_start("next sunday").is_err());
        assert!(local_start("1999-01-01T00:00").is_err());
    }

    #[test]
    fn picks_make_rules_and_read_back_in_words() {
        let days = ["SU".to_string(), "mo".to_string()];
        assert_eq!(
            picked_rule(Some("weekly"), Some(&days), None),
            Ok(Some("FREQ=WEEKLY;BYDAY=MO,SU".into()))
        );
        assert_eq!(
            in_words("FREQ=WEEKLY;BYDAY=MO,WE,SU").as_deref(),
            Some("Every Monday, Wednesday and Sunday")
        );
        assert_eq!(in_words("FREQ=DAILY").as_deref(), Some("Every day"));
        assert_eq!(
            in_words("FREQ=MONTHLY;BYMONTHDAY=5").as_deref(),
            Some("Every month on day 5")
        );
        assert_eq!(in_words("FREQ=MONTHLY;BYDAY=1SA"), None);
        assert_eq!(picked_rule(Some("rule"), None, None), Ok(None));
        for (repeat, days, day, field) in [
            ("weekly", &[][..], None, "weekdays"),
            ("weekly", &["XX".to_string()][..], None, "weekdays"),
            ("monthly", &[][..], None, "monthDay"),
            ("monthly", &[][..], Some(32), "monthDay"),
            ("hourly", &[][..], None, "repeat"),
        ] {
            match picked_rule(Some(repeat), Some(days), day) {
                Err((f, _)) => assert_eq!(f, field, "{repeat}"),
                Ok(r) => panic!("{repeat} made {r:?}"),
            }
        }
        let Err(m) = rule("FREQ=WEEKLY;BYDAY=WEEKLY") else {
            panic!("a malformed rule is refused");
        };
        assert!(
            !m.contains("parsing") && m.contains("FREQ=WEEKLY;BYDAY=SU"),
            "{m}"
        );
    }

    #[test]
    fn inputs_name_every_bad_field() {
        let input = RecurringInput {
            status_page_id: Some(1),
            rrule: Some("FREQ=HOURLY".into()),
            duration_minutes: Some(2),
            horizon_days: Some(365),
            ..Default::default()
        };
        let Err(e) = input.apply(None, |_| Some("UTC".into())) else {
            panic!("refused");
        };
        let mut fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        fields.sort_unstable();
        assert_eq!(
            fields,
            [
                "durationMinutes",
                "firstStart",
                "horizonDays",
                "rrule",
                "title"
            ]
        );
    }
}
