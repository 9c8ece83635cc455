//! Resources as the management API (v1) shows them, and the inputs that create
//! or change them. Field names follow the seed document exactly (camelCase).

use crate::Id;
use crate::validate::FieldErrors;

mod component;
mod incident;
mod maintenance;
mod page;
pub use component::*;
pub use incident::*;
pub use maintenance::*;
pub use page::*;

/// Records "required" for a missing field and runs the rule on a present one.
fn required<T>(
    errors: &mut FieldErrors,
    field: &str,
    value: Option<String>,
    rule: impl FnOnce(&str) -> Result<T, String>,
) -> Option<T> {
    match value {
        None => {
            errors.push(field, "is required");
            None
        }
        Some(v) => errors.check(field, rule(&v)),
    }
}

/// Sorted and deduplicated, so `[3, 3, 1]` means the same as `[1, 3]`.
fn id_set(mut ids: Vec<Id>) -> Vec<Id> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_input(json: serde_json::Value) -> Result<NewPage, FieldErrors> {
        serde_json::from_value::<NewPageInput>(json)
            .map_err(|_| FieldErrors::single("json", "bad"))
            .and_then(NewPageInput::validate)
    }

    #[test]
    fn page_reports_every_bad_field_at_once() {
        let err =
            page_input(serde_json::json!({"name": "", "slug": "Bad Slug", "accentColor": "red"}))
                .err();
        let fields: Vec<String> = err
            .map(|e| e.0.into_iter().map(|f| f.field).collect())
            .unwrap_or_default();
        assert_eq!(fields, ["name", "slug", "accentColor"]);
    }

    #[test]
    fn page_defaults() {
        let p = page_input(serde_json::json!({"name": "Acme", "slug": "acme"}));
        assert!(
            matches!(p, Ok(NewPage { is_public: true, ref description, .. }) if description.is_empty())
        );
    }

    #[test]
    fn maintenance_end_must_follow_start() {
        let input: Result<NewMaintenanceInput, _> = serde_json::from_value(serde_json::json!({
            "title": "DB", "statusPageId": 1,
            "scheduledStartTime": "2026-01-01T02:00:00Z", "scheduledEndTime": "2026-01-01T01:00:00Z"
        }));
        let err = input
            .ok()
            .map(NewMaintenanceInput::validate)
            .and_then(Result::err);
        assert_eq!(
            err.map(|e| e.0[0].field.clone()).as_deref(),
            Some("scheduledEndTime")
        );
    }

    #[test]
    fn empty_patch_is_refused() {
        let input: Option<ComponentPatchInput> = serde_json::from_value(serde_json::json!({})).ok();
        assert!(
            input
                .map(ComponentPatchInput::validate)
                .is_some_and(|r| r.is_err())
        );
    }
}
