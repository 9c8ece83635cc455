//! The rules of each entity's stored fields, for the writers that fill
//! rows rather than API inputs: the export importer and every foreign
//! importer that feeds it. They are the very functions the API's inputs
//! call (`validate`), looked up by the column they fill, so a document
//! can store nothing `POST` or `PATCH` would refuse.

use crate::validate;

/// A text column's rule: the value as it is stored, or why not.
pub type TextRule = fn(&str) -> Result<String, String>;
/// A number column's rule.
pub type NumberRule = fn(i64) -> Result<i32, String>;

/// What a stored column must be.
#[derive(Clone, Copy)]
pub enum Rule {
    Text(TextRule),
    Number(NumberRule),
}

fn description(raw: &str) -> Result<String, String> {
    validate::text(raw, validate::DESCRIPTION_MAX)
}

/// Timeline messages: an imported product's update may carry no words
/// (Statuspage lets an update only change a status), so empty is kept.
fn message(raw: &str) -> Result<String, String> {
    validate::text(raw, validate::MESSAGE_MAX)
}

fn recurring_duration(minutes: i64) -> Result<i32, String> {
    use crate::recurring::{DURATION_MAX, DURATION_MIN};
    match i32::try_from(minutes) {
        Ok(m) if (DURATION_MIN..=DURATION_MAX).contains(&minutes) => Ok(m),
        _ => Err(format!("must be {DURATION_MIN} to {DURATION_MAX} (7 days)")),
    }
}

fn recurring_horizon(days: i64) -> Result<i32, String> {
    use crate::recurring::HORIZON_MAX;
    match i32::try_from(days) {
        Ok(d) if (1..=HORIZON_MAX).contains(&days) => Ok(d),
        _ => Err(format!("must be 1 to {HORIZON_MAX}")),
    }
}

fn name(raw: &str) -> Result<String, String> {
    validate::name(raw)
}

/// The rule of `table.column`, when the API has one for the field that
/// fills it.
pub fn of(table: &str, column: &str) -> Option<Rule> {
    use Rule::{Number, Text};
    Some(match (table, column) {
        ("status_pages", "name") => Text(name),
        ("status_pages", "slug") => Text(validate::slug),
        ("status_pages", "description") => Text(description),
        ("status_pages", "time_zone") => Text(validate::time_zone),
        ("status_pages", "accent_color") => Text(validate::hex_color),
        ("status_pages", "custom_css") => Text(validate::custom_css),
        ("status_pages", "custom_domain") => Text(validate::domain),
        ("status_pages", "logo_url" | "favicon_url" | "header_image_url") => Text(validate::url),
        ("status_pages", "uptime_days") => Number(validate::uptime_days),
        ("status_pages", "past_incident_days") => Number(validate::past_incident_days),
        ("component_groups", "name") => Text(name),
        ("components", "name") => Text(name),
        ("components", "description") => Text(description),
        ("incidents", "title") => Text(name),
        ("incident_updates", "message") => Text(message),
        ("maintenance", "title") => Text(name),
        ("maintenance", "description") => Text(description),
        ("maintenance_updates", "message") => Text(message),
        ("recurring_maintenance", "title") => Text(name),
        ("recurring_maintenance", "description") => Text(description),
        ("recurring_maintenance", "rrule") => Text(crate::recurring::rule),
        ("recurring_maintenance", "first_start") => Text(crate::recurring::local_start),
        ("recurring_maintenance", "time_zone") => Text(validate::time_zone),
        ("recurring_maintenance", "duration_minutes") => Number(recurring_duration),
        ("recurring_maintenance", "horizon_days") => Number(recurring_horizon),
        ("quick_links", "label") => Text(crate::links::label),
        ("quick_links", "url") => Text(validate::url),
        ("page_audiences", "name") => Text(name),
        ("incident_templates", "name" | "title") => Text(name),
        ("incident_templates", "message") => Text(message),
        _ => return None,
    })
}

/// Columns whose values are unique across an install: a document that
/// repeats one would have the database refuse it mid-write.
pub const UNIQUE: &[(&str, &str)] = &[
    ("status_pages", "slug"),
    ("status_pages", "custom_domain"),
    ("incident_templates", "name"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn text(table: &str, column: &str, value: &str) -> Result<String, String> {
        match of(table, column) {
            Some(Rule::Text(rule)) => rule(value),
            _ => panic!("{table}.{column} has a text rule"),
        }
    }

    #[test]
    fn the_api_rules_hold_for_stored_rows() {
        assert!(text("status_pages", "slug", "../../admin").is_err());
        assert!(text("status_pages", "slug", &"a".repeat(65)).is_err());
        assert!(text("status_pages", "time_zone", "Mars/Olympus_Mons").is_err());
        assert!(text("status_pages", "accent_color", "red;} body{display:none").is_err());
        assert!(text("incidents", "title", "two\nlines").is_err());
        assert!(text("components", "name", "nul\0inside").is_err());
        assert_eq!(
            text("status_pages", "accent_color", "#ABC"),
            Ok("#aabbcc".into())
        );
        assert_eq!(text("incident_updates", "message", ""), Ok(String::new()));
        assert!(of("incidents", "status").is_none());
        assert!(text("recurring_maintenance", "time_zone", "America/Chicago").is_ok());
        assert!(text("recurring_maintenance", "time_zone", "Mars/Olympus_Mons").is_err());
        assert!(text("recurring_maintenance", "rrule", "FREQ=HOURLY").is_err());
        match of("recurring_maintenance", "duration_minutes") {
            Some(Rule::Number(rule)) => {
                assert_eq!(rule(90), Ok(90));
                assert!(rule(5_400 * 60).is_err());
            }
            _ => panic!("a window's length has a rule"),
        }
    }
}
