//! Quick links: labelled links a public page shows (documentation, support,
//! a contact form). Not described by the seed beyond its route names; the
//! shape follows the other resources (see docs/api.md).

use crate::Id;
use crate::validate::{self, FieldErrors};
use crate::values::HttpUrl;
use serde::{Deserialize, Serialize};

pub const LABEL_MAX: usize = 100;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuickLink {
    pub id: Id,
    pub label: String,
    pub url: String,
    pub order: i32,
    pub status_page_id: Id,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuickLinkInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::id, required))]
    pub status_page_id: Option<Id>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::link_label, required))]
    pub label: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url, required))]
    pub url: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::order))]
    pub order: Option<i64>,
}

/// `PUT /api/quicklinks/{id}` as the document shows it: the fields a change
/// may name (a link stays on its page), at least one.
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[schema(min_properties = 1)]
#[allow(
    dead_code,
    reason = "describes the change body to the document; read as QuickLinkInput"
)]
pub struct QuickLinkChange {
    #[schema(schema_with = crate::schema::link_label)]
    label: Option<String>,
    #[schema(schema_with = crate::schema::url)]
    url: Option<String>,
    #[schema(schema_with = crate::schema::order)]
    order: Option<i64>,
}

/// A checked create (every field but `order` present) or change (any subset).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuickLinkFields {
    pub status_page_id: Option<Id>,
    pub label: Option<String>,
    pub url: Option<HttpUrl>,
    pub order: Option<i32>,
}

impl QuickLinkInput {
    fn check(self, e: &mut FieldErrors) -> QuickLinkFields {
        QuickLinkFields {
            status_page_id: self.status_page_id,
            label: self.label.and_then(|v| e.check("label", label(&v))),
            url: self.url.and_then(|v| e.check("url", HttpUrl::parse(&v))),
            order: self
                .order
                .and_then(|o| e.check("order", validate::order(o))),
        }
    }

    pub fn validate_new(self) -> Result<QuickLinkFields, FieldErrors> {
        let mut e = FieldErrors::new();
        for (field, present) in [
            ("statusPageId", self.status_page_id.is_some()),
            ("label", self.label.is_some()),
            ("url", self.url.is_some()),
        ] {
            if !present {
                e.push(field, "is required");
            }
        }
        let fields = self.check(&mut e);
        e.into_result().map(|()| fields)
    }

    /// A change may not move a link to another page.
    pub fn validate_change(self) -> Result<QuickLinkFields, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.status_page_id.is_some() {
            e.push(
                "statusPageId",
                "cannot be changed; delete the link and create it on the other page",
            );
        }
        let fields = self.check(&mut e);
        if e.is_empty() && fields == QuickLinkFields::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| fields)
    }
}

/// A link's words: one rule for the API and every importer.
pub fn label(raw: &str) -> Result<String, String> {
    validate::text(raw, LABEL_MAX).and_then(non_blank)
}

fn non_blank(s: String) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be blank".into())
    } else {
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(page: Option<Id>, label: Option<&str>, url: Option<&str>) -> QuickLinkInput {
        QuickLinkInput {
            status_page_id: page,
            label: label.map(Into::into),
            url: url.map(Into::into),
            order: None,
        }
    }

    #[test]
    fn new_links_need_page_label_and_a_web_url() {
        assert!(
            input(Some(1), Some("Docs"), Some("https://docs.example.com"))
                .validate_new()
                .is_ok()
        );
        let e = input(None, Some(" "), Some("javascript:alert(1)"))
            .validate_new()
            .err()
            .unwrap_or_default();
        let fields: Vec<_> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["statusPageId", "label", "url"]);
    }

    #[test]
    fn changes_name_something_and_keep_the_page() {
        assert!(input(None, None, None).validate_change().is_err());
        assert!(input(Some(2), Some("x"), None).validate_change().is_err());
        assert!(input(None, Some("Support"), None).validate_change().is_ok());
    }
}
