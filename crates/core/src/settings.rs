//! Settings of the whole install and its feature switches: what an operator
//! changes from the browser rather than in `upstate.toml` (see
//! docs/api.md "Settings and feature switches"). A switch that is off takes
//! its feature away everywhere it shows: the route answers 404 and the
//! public pages drop their links to it, so visitors never meet a dead link.

use crate::patch::Patch;
use crate::validate::{self, FieldErrors};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Declares the feature switches once: the struct, its defaults
/// and the list of wire names the routes check bodies against.
macro_rules! features {
    ($($(#[doc = $doc:literal])* $field:ident = $name:literal => $on:literal,)*) => {
        /// Which optional public features this install offers, each on or
        /// off by default as declared below.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "camelCase", default)]
        #[cfg_attr(feature = "openapi", schema(min_properties = 1))]
        pub struct Features {
            $($(#[doc = $doc])* pub $field: bool,)*
        }

        impl Default for Features {
            fn default() -> Self {
                Features { $($field: $on,)* }
            }
        }

        impl Features {
            /// The switches' names on the wire, in display order.
            pub const NAMES: &'static [&'static str] = &[$($name,)*];

            /// Turns the switch `name` on or off; false for no such switch.
            fn set(&mut self, name: &str, on: bool) -> bool {
                match name {
                    $($name => self.$field = on,)*
                    _ => return false,
                }
                true
            }

            /// Each switch's name and state, in display order.
            pub fn list(&self) -> Vec<(&'static str, bool)> {
                vec![$(($name, self.$field),)*]
            }
        }
    };
}

features! {
    /// RSS and Atom feeds of each page (`/api/feed/rss`) and the links to them.
    feeds = "feeds" => true,
    /// iCalendar of maintenance windows (`/api/calendar`) and its link.
    calendar = "calendar" => true,
    /// SVG and shields.io badges (`/api/badge`).
    badges = "badges" => true,
    /// The embeddable widget (`/api/widget`).
    widget = "widget" => true,
    /// Live updates: the event stream (`/api/public/status/{slug}/events`)
    /// that refreshes open pages without a reload.
    live_updates = "liveUpdates" => true,
    /// The month-by-month history page of each status page and its link.
    history = "history" => true,
    /// Published postmortems on incident pages and in feeds.
    postmortems = "postmortems" => true,
    /// Visitors' comments on incidents (`/api/comments`) and the form on
    /// incident pages. Off until an operator is ready to moderate.
    comments = "comments" => false,
}

impl Features {
    /// These switches changed by a `PUT /api/features` body: any subset of
    /// the names with `true` or `false`. Unknown names are refused, not
    /// ignored: a misspelt switch must not look turned off when it is not.
    pub fn changed_by(&self, body: &Map<String, Value>) -> Result<Features, FieldErrors> {
        let mut next = *self;
        let mut e = FieldErrors::new();
        if body.is_empty() {
            e.push("body", "name at least one feature to turn on or off");
        }
        for (name, value) in body {
            match value.as_bool() {
                Some(on) => {
                    if !next.set(name, on) {
                        e.push(
                            name,
                            format!("is not a feature; features are {}", Self::NAMES.join(", ")),
                        );
                    }
                }
                None => e.push(name, "must be true or false"),
            }
        }
        e.into_result().map(|()| next)
    }
}

/// Install-wide settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// This install's name: the admin interface's title and sign-in page.
    pub site_name: String,
    /// The slug of the page served at `/` on hosts that are no page's custom
    /// domain. When unset, `default_page` of `upstate.toml` applies.
    pub default_page: Option<String>,
    /// The language of public pages for visitors whose browser asks for
    /// none Upstate speaks (`en`, `de`, `fr`, `es`, `ja`). English when unset.
    pub default_language: Option<String>,
    /// Visitors' comments wait for a moderator before they show (on unless
    /// turned off; the `comments` switch offers comments at all).
    pub moderate_comments: bool,
    /// How long before a scheduled maintenance window its subscribers are
    /// reminded: durations like `24h, 1h` (empty: no reminders).
    pub maintenance_reminders: String,
    /// Days the delivery log keeps a finished delivery (and the outbox the
    /// change it told of); pending ones stay until they are settled.
    pub delivery_log_days: i64,
}

/// How long a new install keeps its delivery log.
pub const DEFAULT_DELIVERY_LOG_DAYS: i64 = 30;
/// The longest the delivery log may be kept: ten years.
pub const DELIVERY_LOG_DAYS_MAX: i64 = 3_650;

/// The reminders of a new install: a day and an hour before.
pub const DEFAULT_REMINDERS: &str = "24h, 1h";
/// The most reminders one window gets.
pub const REMINDERS_MAX: usize = 4;

/// Reads `24h, 1h` (units m, h, d; 5 minutes to 14 days each, at most
/// four) into minutes, largest first, without repeats.
pub fn reminder_minutes(raw: &str) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((last, _)) = part.char_indices().last() else {
            continue;
        };
        let (number, unit) = part.split_at(last);
        let n: i64 = number
            .trim()
            .parse()
            .map_err(|_| format!("{part:?} is no duration like 24h, 90m or 2d"))?;
        let minutes = match unit {
            "m" => n,
            "h" => n * 60,
            "d" => n * 1_440,
            _ => return Err(format!("{part:?} is no duration like 24h, 90m or 2d")),
        };
        if !(5..=14 * 1_440).contains(&minutes) {
            return Err(format!("{part:?} must be between 5m and 14d"));
        }
        if !out.contains(&minutes) {
            out.push(minutes);
        }
    }
    if out.len() > REMINDERS_MAX {
        return Err(format!("at most {REMINDERS_MAX} reminders"));
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    Ok(out)
}

pub const DEFAULT_SITE_NAME: &str = "Upstate";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            site_name: DEFAULT_SITE_NAME.into(),
            default_page: None,
            default_language: None,
            moderate_comments: true,
            maintenance_reminders: DEFAULT_REMINDERS.into(),
            delivery_log_days: DEFAULT_DELIVERY_LOG_DAYS,
        }
    }
}

impl Settings {
    /// The language the install writes in where no visitor chose one
    /// (messages, monitor incidents): its default language, else English.
    pub fn language(&self) -> crate::i18n::Lang {
        self.default_language
            .as_deref()
            .and_then(crate::i18n::Lang::parse)
            .unwrap_or(crate::i18n::Lang::En)
    }
}

/// `PUT /api/settings`: any subset; `null` clears a nullable setting.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(min_properties = 1))]
pub struct SettingsInput {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::name))]
    pub site_name: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::slug_or_null))]
    pub default_page: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::lang_or_null))]
    pub default_language: Patch<String>,
    #[serde(default)]
    pub moderate_comments: Option<bool>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::reminders))]
    pub maintenance_reminders: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::delivery_log_days))]
    pub delivery_log_days: Option<i64>,
}

impl SettingsInput {
    /// `current` with this input's changes; `languages` are the codes the
    /// public pages speak. Whether the default page exists is the store's
    /// check.
    pub fn apply(self, current: &Settings, languages: &[&str]) -> Result<Settings, FieldErrors> {
        let mut e = FieldErrors::new();
        if self.site_name.is_none()
            && self.default_page.is_absent()
            && self.default_language.is_absent()
            && self.moderate_comments.is_none()
            && self.maintenance_reminders.is_none()
            && self.delivery_log_days.is_none()
        {
            // Nothing to change is a mistake, not a change to audit.
            e.push("body", "name at least one setting to change");
            return Err(e);
        }
        let mut next = current.clone();
        if let Some(name) = self.site_name
            && let Some(n) = e.check("siteName", validate::name(&name))
        {
            next.site_name = n;
        }
        match self.default_page.try_map(|s| validate::slug(&s)) {
            Ok(p) => next.default_page = p.apply(next.default_page),
            Err(m) => e.push("defaultPage", m),
        }
        let lang = self.default_language.try_map(|l| {
            let l = l.trim().to_ascii_lowercase();
            if languages.contains(&l.as_str()) {
                Ok(l)
            } else {
                Err(format!("must be one of {}", languages.join(", ")))
            }
        });
        match lang {
            Ok(l) => next.default_language = l.apply(next.default_language),
            Err(m) => e.push("defaultLanguage", m),
        }
        if let Some(m) = self.moderate_comments {
            next.moderate_comments = m;
        }
        if let Some(r) = self.maintenance_reminders {
            match reminder_minutes(&r) {
                Ok(list) => next.maintenance_reminders = written(&list),
                Err(m) => e.push("maintenanceReminders", m),
            }
        }
        match self.delivery_log_days {
            Some(d) if (1..=DELIVERY_LOG_DAYS_MAX).contains(&d) => next.delivery_log_days = d,
            Some(_) => e.push(
                "deliveryLogDays",
                format!("must be a whole number of days from 1 to {DELIVERY_LOG_DAYS_MAX}"),
            ),
            None => {}
        }
        e.into_result().map(|()| next)
    }
}

/// Minutes as people write them: hours up to two days (`24h`, `48h`, the
/// way reminders are usually said), days beyond, minutes otherwise.
fn written(minutes: &[i64]) -> String {
    minutes
        .iter()
        .map(|m| match m {
            m if m % 1_440 == 0 && *m > 2_880 => format!("{}d", m / 1_440),
            m if m % 60 == 0 => format!("{}h", m / 60),
            m => format!("{m}m"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reminders_read_as_durations() {
        assert_eq!(reminder_minutes("24h, 1h"), Ok(vec![1_440, 60]));
        assert_eq!(reminder_minutes(" 30m,2d,30m "), Ok(vec![2_880, 30]));
        assert_eq!(reminder_minutes(""), Ok(vec![]));
        for bad in ["1h, soon", "2m", "15d", "1w", "h", "1é", "1h,2h,3h,4h,5h"] {
            assert!(reminder_minutes(bad).is_err(), "{bad}");
        }
        assert_eq!(written(&[4_320, 1_440, 90]), "3d, 24h, 90m");
    }

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn switches_change_by_name_and_refuse_what_is_not_one() {
        let all = Features::default();
        assert!(all.list().iter().all(|(n, on)| *on == (*n != "comments")));
        let Ok(off) = all.changed_by(&map(json!({"feeds": false, "liveUpdates": false}))) else {
            panic!("two known switches are accepted");
        };
        assert!(!off.feeds && !off.live_updates && off.calendar);
        let Err(e) = all.changed_by(&map(json!({"feedz": false, "badges": "no"}))) else {
            panic!("unknown names and non-booleans are refused");
        };
        let fields: Vec<&str> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["badges", "feedz"]);
        assert!(all.changed_by(&Map::new()).is_err());
        // Stored documents from an older version gain new switches as on.
        let Ok(old) = serde_json::from_value::<Features>(json!({"feeds": false})) else {
            panic!("a partial document reads");
        };
        assert!(!old.feeds && old.history);
    }

    #[test]
    fn settings_change_any_subset_and_null_clears() {
        let langs = ["en", "de"];
        let cur = Settings {
            default_page: Some("main".into()),
            ..Settings::default()
        };
        let Ok(input) = serde_json::from_value::<SettingsInput>(
            json!({"siteName": " Acme status ", "defaultPage": null, "defaultLanguage": "DE"}),
        ) else {
            panic!("the body reads");
        };
        let Ok(next) = input.apply(&cur, &langs) else {
            panic!("valid settings are accepted");
        };
        assert_eq!(next.site_name, "Acme status");
        assert_eq!(next.default_page, None);
        assert_eq!(next.default_language.as_deref(), Some("de"));
        let Ok(bad) = serde_json::from_value::<SettingsInput>(
            json!({"siteName": "", "defaultPage": "Not A Slug", "defaultLanguage": "xx"}),
        ) else {
            panic!("the body reads");
        };
        let Err(e) = bad.apply(&cur, &langs) else {
            panic!("bad settings are refused");
        };
        assert_eq!(e.0.len(), 3);
        assert!(serde_json::from_value::<SettingsInput>(json!({"colour": "red"})).is_err());
    }
}
