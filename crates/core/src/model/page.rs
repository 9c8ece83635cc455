//! Status pages and their settings.

use super::required;
use crate::Id;
use crate::patch::Patch;
use crate::timestamp::Timestamp;
use crate::validate::{self, FieldErrors};
use crate::values::{Domain, HexColor, HttpUrl, Slug};
use serde::{Deserialize, Serialize};

pub const DEFAULT_ACCENT_COLOR: &str = "#2563eb";
pub const DEFAULT_TIME_ZONE: &str = "UTC";
pub const DEFAULT_UPTIME_DAYS: i32 = 90;
/// Statuspage shows the last two weeks of incidents day by day.
pub const DEFAULT_PAST_INCIDENT_DAYS: i32 = 14;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusPage {
    pub id: Id,
    pub name: String,
    pub slug: String,
    pub description: String,
    pub logo_url: Option<String>,
    pub is_public: bool,
    pub created_at: Timestamp,
    pub favicon_url: Option<String>,
    pub custom_domain: Option<String>,
    pub accent_color: String,
    pub show_subscribe: bool,
    pub show_uptime: bool,
    /// Response-time charts of monitored components on the public page.
    pub show_response_times: bool,
    pub uptime_days: i32,
    pub time_zone: String,
    /// Days of the "Past incidents" section on the public page (0: none).
    pub past_incident_days: i32,
    /// An image across the top of the public page's header.
    pub header_image_url: Option<String>,
    /// The operator's own stylesheet, served at `/s/{slug}/custom.css`
    /// after ours (a file of its own: it cannot reach the page's HTML or
    /// its security headers).
    pub custom_css: String,
}

/// Optional page settings shared by create and patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PageSettings {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub logo_url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub favicon_url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::domain_or_null))]
    pub custom_domain: Patch<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::hex_color))]
    pub accent_color: Option<String>,
    pub show_subscribe: Option<bool>,
    pub show_uptime: Option<bool>,
    pub show_response_times: Option<bool>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::uptime_days))]
    pub uptime_days: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::time_zone))]
    pub time_zone: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::past_incident_days))]
    pub past_incident_days: Option<i64>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::url_or_null))]
    pub header_image_url: Patch<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::custom_css))]
    pub custom_css: Option<String>,
}

impl PageSettings {
    fn validate(self, errors: &mut FieldErrors) -> ValidPageSettings {
        fn nullable<T>(
            errors: &mut FieldErrors,
            field: &str,
            p: Patch<String>,
            rule: fn(&str) -> Result<T, String>,
        ) -> Patch<T> {
            errors
                .check(field, p.try_map(|v| rule(&v)))
                .unwrap_or(Patch::Absent)
        }
        ValidPageSettings {
            logo_url: nullable(errors, "logoUrl", self.logo_url, HttpUrl::parse),
            favicon_url: nullable(errors, "faviconUrl", self.favicon_url, HttpUrl::parse),
            custom_domain: nullable(errors, "customDomain", self.custom_domain, Domain::parse),
            accent_color: self
                .accent_color
                .and_then(|c| errors.check("accentColor", HexColor::parse(&c))),
            show_subscribe: self.show_subscribe,
            show_uptime: self.show_uptime,
            show_response_times: self.show_response_times,
            uptime_days: self
                .uptime_days
                .and_then(|d| errors.check("uptimeDays", validate::uptime_days(d))),
            time_zone: self
                .time_zone
                .and_then(|z| errors.check("timeZone", validate::time_zone(&z))),
            past_incident_days: self
                .past_incident_days
                .and_then(|d| errors.check("pastIncidentDays", validate::past_incident_days(d))),
            header_image_url: nullable(
                errors,
                "headerImageUrl",
                self.header_image_url,
                HttpUrl::parse,
            ),
            custom_css: self
                .custom_css
                .and_then(|c| errors.check("customCss", validate::custom_css(&c))),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidPageSettings {
    pub logo_url: Patch<HttpUrl>,
    pub favicon_url: Patch<HttpUrl>,
    pub custom_domain: Patch<Domain>,
    pub accent_color: Option<HexColor>,
    pub show_subscribe: Option<bool>,
    pub show_uptime: Option<bool>,
    pub show_response_times: Option<bool>,
    pub uptime_days: Option<i32>,
    pub time_zone: Option<String>,
    pub past_incident_days: Option<i32>,
    pub header_image_url: Patch<HttpUrl>,
    pub custom_css: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewPageInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name, required))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::slug, required))]
    pub slug: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    pub is_public: Option<bool>,
    #[serde(flatten)]
    pub settings: PageSettings,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewPage {
    pub name: String,
    pub slug: Slug,
    pub description: String,
    pub is_public: bool,
    pub settings: ValidPageSettings,
}

impl NewPageInput {
    pub fn validate(self) -> Result<NewPage, FieldErrors> {
        let mut e = FieldErrors::new();
        let name = required(&mut e, "name", self.name, validate::name);
        let slug = required(&mut e, "slug", self.slug, Slug::parse);
        let description = e.check(
            "description",
            validate::text(
                self.description.as_deref().unwrap_or(""),
                validate::DESCRIPTION_MAX,
            ),
        );
        let settings = self.settings.validate(&mut e);
        match (name, slug, description) {
            (Some(name), Some(slug), Some(description)) if e.is_empty() => Ok(NewPage {
                name,
                slug,
                description,
                is_public: self.is_public.unwrap_or(true),
                settings,
            }),
            _ => Err(e),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PagePatchInput {
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub name: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::slug))]
    pub slug: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::description))]
    pub description: Option<String>,
    pub is_public: Option<bool>,
    #[serde(flatten)]
    pub settings: PageSettings,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PagePatch {
    pub name: Option<String>,
    pub slug: Option<Slug>,
    pub description: Option<String>,
    pub is_public: Option<bool>,
    pub settings: ValidPageSettings,
}

impl PagePatchInput {
    pub fn validate(self) -> Result<PagePatch, FieldErrors> {
        let mut e = FieldErrors::new();
        let patch = PagePatch {
            name: self.name.and_then(|v| e.check("name", validate::name(&v))),
            slug: self.slug.and_then(|v| e.check("slug", Slug::parse(&v))),
            description: self.description.and_then(|v| {
                e.check("description", validate::text(&v, validate::DESCRIPTION_MAX))
            }),
            is_public: self.is_public,
            settings: self.settings.validate(&mut e),
        };
        if e.is_empty() && patch == PagePatch::default() {
            e.push("body", "names no field to change");
        }
        e.into_result().map(|()| patch)
    }
}
