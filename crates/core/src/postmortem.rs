//! Postmortems: the checked input, and the first draft Upstate writes from
//! an incident's own record (no outside service, the same draft every
//! time): what happened, impact, duration, affected components, the
//! timeline, and the sections only people can fill in.

use crate::model::Incident;
use crate::timestamp::Timestamp;
use crate::validate::FieldErrors;
use crate::{Id, IncidentStatus};
use serde::{Deserialize, Serialize};

/// The longest postmortem accepted, in characters.
pub const BODY_MAX: usize = 100_000;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Postmortem {
    pub incident_id: Id,
    /// Markdown.
    pub body: String,
    pub published: bool,
    pub updated_at: Timestamp,
    pub published_at: Option<Timestamp>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PostmortemInput {
    /// Markdown, up to 100,000 characters.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::postmortem, required))]
    pub body: Option<String>,
    /// True shows it on the incident's public page; false keeps (or makes) it a draft.
    pub published: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PostmortemChange {
    pub body: String,
    pub published: bool,
}

impl PostmortemInput {
    pub fn validate(self) -> Result<PostmortemChange, FieldErrors> {
        let mut e = FieldErrors::new();
        let body = self.body.unwrap_or_default();
        if body.trim().is_empty() {
            e.push("body", "is required");
        } else if body.chars().count() > BODY_MAX {
            e.push("body", format!("must be at most {BODY_MAX} characters"));
        } else if body
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t')
        {
            e.push("body", "must not contain control characters");
        }
        e.into_result().map(|()| PostmortemChange {
            body,
            published: self.published.unwrap_or(false),
        })
    }
}

fn duration(from: Timestamp, to: Timestamp) -> String {
    let minutes = ((to.millis() - from.millis()).max(0) / 60_000) as u64;
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

fn when(t: Timestamp) -> String {
    t.to_rfc3339()
        .replace('T', " ")
        .chars()
        .take(16)
        .collect::<String>()
        + " UTC"
}

/// The first draft of an incident's postmortem. `components` are the names
/// of the components it affected.
pub fn draft(i: &Incident, components: &[String], now: Timestamp) -> String {
    let end = i.resolved_at.unwrap_or(now);
    let mut out = format!("# Postmortem: {}\n\n", i.title);
    out.push_str("## Summary\n\n");
    out.push_str(&format!(
        "On {}, {} ({} impact). ",
        when(i.created_at),
        i.title,
        i.impact.as_str()
    ));
    if i.status == IncidentStatus::Resolved {
        out.push_str(&format!(
            "It was resolved after {}.\n\n",
            duration(i.created_at, end)
        ));
    } else {
        out.push_str(&format!(
            "It has lasted {} so far and is not resolved yet.\n\n",
            duration(i.created_at, end)
        ));
    }
    out.push_str("## Impact\n\n");
    out.push_str(&format!("- Impact: {}\n", i.impact.as_str()));
    out.push_str(&format!(
        "- Duration: {} ({} – {})\n",
        duration(i.created_at, end),
        when(i.created_at),
        when(end)
    ));
    if components.is_empty() {
        out.push_str("- Affected components: none recorded\n\n");
    } else {
        out.push_str(&format!(
            "- Affected components: {}\n\n",
            components.join(", ")
        ));
    }
    out.push_str("## Timeline\n\n");
    let mut updates = i.updates.clone();
    updates.sort_by_key(|u| (u.created_at, u.id));
    for u in &updates {
        let message = u.message.trim().replace('\n', " ");
        out.push_str(&format!(
            "- **{}** · {}: {}\n",
            when(u.created_at),
            u.status.as_str(),
            message
        ));
    }
    out.push_str("\n## Root cause\n\n_To be written: what failed, and why._\n\n");
    out.push_str("## Resolution\n\n_To be written: what brought the service back._\n\n");
    out.push_str("## What we will change\n\n_To be written: the actions that keep it from happening again, with owners._\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Impact, IncidentUpdate};

    #[test]
    fn the_draft_tells_the_record_and_leaves_the_rest_to_people() {
        let t0 = Timestamp::from_millis(1_700_000_000_000);
        let i = Incident {
            id: 1,
            title: "Checkout errors".into(),
            status: IncidentStatus::Resolved,
            impact: Impact::Major,
            status_page_id: 1,
            created_at: t0,
            resolved_at: Some(t0.plus_millis(95 * 60_000)),
            updates: vec![
                IncidentUpdate {
                    id: 2,
                    message: "Fixed".into(),
                    status: IncidentStatus::Resolved,
                    created_at: t0.plus_millis(95 * 60_000),
                },
                IncidentUpdate {
                    id: 1,
                    message: "Looking".into(),
                    status: IncidentStatus::Investigating,
                    created_at: t0,
                },
            ],
            affected_components: vec![3],
            updated_at: t0,
        };
        let d = draft(&i, &["API".into()], t0);
        assert!(d.starts_with("# Postmortem: Checkout errors"));
        assert!(d.contains("resolved after 1 h 35 min"), "{d}");
        assert!(d.contains("Affected components: API"));
        let looking = d.find("investigating: Looking");
        let fixed = d.find("resolved: Fixed");
        assert!(
            looking.is_some() && fixed.is_some() && looking < fixed,
            "the timeline reads forward"
        );
        assert!(d.contains("## Root cause"));
        assert_eq!(
            d,
            draft(&i, &["API".into()], t0),
            "the same draft every time"
        );
    }
}
