//! Visitors' comments on incidents ("still broken for us in Frankfurt"):
//! what a comment is and what a visitor may send. Shown as escaped plain
//! text once a moderator approves it (docs/comments.md).

use crate::status::CommentStatus;
use crate::validate::{self, FieldErrors};
use crate::{Id, Timestamp};
use serde::{Deserialize, Serialize};

/// The longest comment, in characters: a report, not an essay.
pub const BODY_MAX: usize = 1_000;
/// The longest name a commenter may give.
pub const AUTHOR_MAX: usize = 60;

/// A comment as moderators see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: Id,
    pub incident_id: Id,
    pub status_page_id: Id,
    /// The incident's title, so a queue reads without a lookup.
    pub incident_title: String,
    /// The name the visitor gave; empty for none.
    pub author: String,
    pub body: String,
    pub status: CommentStatus,
    pub created_at: Timestamp,
    pub moderated_at: Option<Timestamp>,
}

/// A comment as visitors see it: approved ones only, nothing about moderation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PublicComment {
    pub id: Id,
    pub incident_id: Id,
    pub author: String,
    pub body: String,
    pub created_at: Timestamp,
}

impl From<Comment> for PublicComment {
    fn from(c: Comment) -> Self {
        PublicComment {
            id: c.id,
            incident_id: c.incident_id,
            author: c.author,
            body: c.body,
            created_at: c.created_at,
        }
    }
}

/// `POST /api/comments`: a visitor's comment on an incident.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommentInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub incident_id: Option<Id>,
    /// A name to show beside the comment (optional, at most 60 characters).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::comment_author))]
    pub author: Option<String>,
    /// The comment: plain text, 1 to 1,000 characters; line breaks kept.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::comment_body, required))]
    pub body: Option<String>,
}

/// A checked comment.
#[derive(Debug, Clone, PartialEq)]
pub struct NewComment {
    pub incident_id: Id,
    pub author: String,
    pub body: String,
}

impl CommentInput {
    pub fn validate(self) -> Result<NewComment, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.incident_id.is_none() {
            e.push("incidentId", "is required");
        }
        let author = match self.author.as_deref() {
            None => String::new(),
            Some(a) if a.trim().contains(['\n', '\r']) => {
                e.push("author", "must be one line");
                String::new()
            }
            Some(a) => e
                .check("author", validate::text(a, AUTHOR_MAX))
                .unwrap_or_default(),
        };
        let body = match self.body.as_deref() {
            None => {
                e.push("body", "is required");
                None
            }
            Some(b) => e.check("body", validate::text(b, BODY_MAX)).filter(|b| {
                if b.is_empty() {
                    e.push("body", "must not be empty");
                }
                !b.is_empty()
            }),
        };
        e.into_result()?;
        match (self.incident_id, body) {
            (Some(incident_id), Some(body)) => Ok(NewComment {
                incident_id,
                author,
                body,
            }),
            _ => Err(FieldErrors::single("body", "is required")),
        }
    }
}

/// `PATCH /api/comments/admin/{id}`: a moderator's decision.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModerationInput {
    /// approved (shown on the incident's page), rejected (never shown) or
    /// pending (back into the queue).
    #[cfg_attr(feature = "openapi", schema(required, nullable = false, value_type = Option<crate::CommentStatus>))]
    pub status: Option<String>,
}

impl ModerationInput {
    pub fn validate(self) -> Result<CommentStatus, FieldErrors> {
        match self.status.as_deref() {
            None => Err(FieldErrors::single("status", "is required")),
            Some(s) => s.parse().map_err(|e: crate::status::UnknownVariant| {
                FieldErrors::single("status", e.to_string())
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(author: Option<&str>, body: Option<&str>) -> CommentInput {
        CommentInput {
            incident_id: Some(1),
            author: author.map(String::from),
            body: body.map(String::from),
        }
    }

    #[test]
    fn comments_are_checked() {
        let ok = input(Some("  Ann "), Some(" Still down\nin Frankfurt "))
            .validate()
            .ok();
        assert_eq!(
            ok,
            Some(NewComment {
                incident_id: 1,
                author: "Ann".into(),
                body: "Still down\nin Frankfurt".into()
            })
        );
        assert!(input(None, Some("   ")).validate().is_err());
        assert!(input(None, None).validate().is_err());
        assert!(input(Some("a\nb"), Some("x")).validate().is_err());
        assert!(
            input(None, Some(&"x".repeat(BODY_MAX + 1)))
                .validate()
                .is_err()
        );
        assert!(
            input(Some(&"x".repeat(AUTHOR_MAX + 1)), Some("x"))
                .validate()
                .is_err()
        );
        assert!(input(None, Some("bell \u{7}")).validate().is_err());
        let mut no_incident = input(None, Some("x"));
        no_incident.incident_id = None;
        assert!(no_incident.validate().is_err());
    }

    #[test]
    fn decisions_are_statuses() {
        let m = |s: &str| {
            ModerationInput {
                status: Some(s.into()),
            }
            .validate()
        };
        assert_eq!(m("approved").ok(), Some(CommentStatus::Approved));
        assert!(m("spam").is_err());
        assert!(ModerationInput::default().validate().is_err());
    }
}
