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

/// How long from `from` to `to`, as the public page says it (the draft is
/// written in English, as its headings are).
fn duration(from: Timestamp, to: Timestamp) -> String {
    crate::i18n::Lang::En.duration(to.millis() - from.millis())
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
    let impact = match i.impact {
        crate::Impact::None => "no visible impact".to_string(),
        other => format!("{} impact", other.as_str()),
    };
    out.push_str(&format!(
        "\"{}\" began on {}, with {impact}. ",
        i.title,
        when(i.created_at),
    ));
    if i.status == IncidentStatus::Resolved {
        out.push_str(&format!(
            "It was resolved {} later.\n\n",
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
        // Every line after the first is indented into the list item, so an
        // update of several paragraphs (or with a list of its own) stays
        // inside its item instead of ending the timeline.
        let message = u
            .message
            .trim()
            .lines()
            .map(|l| {
                if l.trim().is_empty() {
                    String::new()
                } else {
                    format!("  {l}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        out.push_str(&format!(
            "- **{}** · {}: {}\n",
            when(u.created_at),
            u.status.as_str(),
            message.trim_start()
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
        assert!(
            d.contains("\"Checkout errors\" began on 2023-11-14 22:13 UTC, with major impact. It was resolved 1 h 35 min later."),
            "{d}"
        );
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

    #[test]
    fn durations_read_as_on_the_page_and_paragraphs_stay_in_their_item() {
        let t0 = Timestamp::from_millis(1_700_000_000_000);
        let i = Incident {
            id: 1,
            title: "Blip".into(),
            status: IncidentStatus::Resolved,
            impact: Impact::None,
            status_page_id: 1,
            created_at: t0,
            resolved_at: Some(t0.plus_millis(20_000)),
            updates: vec![IncidentUpdate {
                id: 1,
                message: "First we saw errors.\n\nThen:\n- a restart\n- a rollback".into(),
                status: IncidentStatus::Investigating,
                created_at: t0,
            }],
            affected_components: vec![],
            updated_at: t0,
        };
        let d = draft(&i, &[], t0);
        // As the page says "Lasted 1 min", never "0 min".
        assert!(
            d.contains("with no visible impact. It was resolved 1 min later."),
            "{d}"
        );
        assert!(d.contains("- Duration: 1 min"), "{d}");
        let html = crate::markdown::to_html(&d);
        let (Some(from), Some(to)) = (html.find("Timeline"), html.find("Root cause")) else {
            panic!("no timeline: {html}");
        };
        let timeline = &html[from..to];
        assert_eq!(timeline.matches("<ul>").count(), 2, "{timeline}");
        let (Some(from), Some(to)) = (timeline.find("<li>"), timeline.rfind("</li>")) else {
            panic!("no item: {timeline}");
        };
        let item = &timeline[from..to];
        assert!(
            item.contains("Then:") && item.contains("a rollback"),
            "the whole update is inside its item: {timeline}"
        );
    }
}
