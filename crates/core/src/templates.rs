//! Incident templates: saved starting points (title, status, impact, first
//! message) an operator picks when reporting an incident, so the words for
//! a known kind of trouble are written once, calmly, ahead of time.

use crate::validate::{self, FieldErrors};
use crate::{Id, Impact, IncidentStatus, Timestamp};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct IncidentTemplate {
    pub id: Id,
    /// What operators pick it by, such as "Database degraded". Unique.
    pub name: String,
    pub title: String,
    pub message: String,
    pub status: IncidentStatus,
    pub impact: Impact,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TemplateInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub title: Option<String>,
    /// Markdown; may be left empty.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::optional_message))]
    pub message: Option<String>,
    /// Defaults to `investigating`.
    pub status: Option<IncidentStatus>,
    /// Defaults to `minor`.
    pub impact: Option<Impact>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TemplateFields {
    pub name: String,
    pub title: String,
    pub message: String,
    pub status: IncidentStatus,
    pub impact: Impact,
}

impl TemplateInput {
    /// A whole template (create and replace take every field).
    pub fn validate(self) -> Result<TemplateFields, FieldErrors> {
        let mut e = FieldErrors::new();
        let name = match self.name {
            Some(n) => e.check("name", validate::name(&n)),
            None => {
                e.push("name", "is required");
                None
            }
        };
        let title = match self.title {
            Some(t) => e.check("title", validate::name(&t)),
            None => {
                e.push("title", "is required");
                None
            }
        };
        let message = e.check(
            "message",
            validate::text(self.message.as_deref().unwrap_or(""), validate::MESSAGE_MAX),
        );
        match (name, title, message) {
            (Some(name), Some(title), Some(message)) if e.is_empty() => Ok(TemplateFields {
                name,
                title,
                message,
                status: self.status.unwrap_or(IncidentStatus::Investigating),
                impact: self.impact.unwrap_or(Impact::Minor),
            }),
            _ => Err(e),
        }
    }
}
