//! UI and message text in several languages, from the dictionaries in
//! `crates/core/i18n/` (pages and messages share them)
//! (one flat JSON object of key → text per language, compiled into the
//! binary). English is complete by definition; a unit test holds every other
//! dictionary to the same keys, and a missing entry falls back to English
//! rather than showing a key to a visitor.

use std::collections::HashMap;
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
    De,
    Fr,
    Es,
    Ja,
    Ar,
}

pub const LANGS: [Lang; 6] = [Lang::En, Lang::De, Lang::Fr, Lang::Es, Lang::Ja, Lang::Ar];

type Dictionary = HashMap<String, String>;

static DICTIONARIES: LazyLock<HashMap<Lang, Dictionary>> = LazyLock::new(|| {
    let parse = |text: &str| serde_json::from_str::<Dictionary>(text).unwrap_or_default();
    HashMap::from([
        (Lang::En, parse(include_str!("../i18n/en.json"))),
        (Lang::De, parse(include_str!("../i18n/de.json"))),
        (Lang::Fr, parse(include_str!("../i18n/fr.json"))),
        (Lang::Es, parse(include_str!("../i18n/es.json"))),
        (Lang::Ja, parse(include_str!("../i18n/ja.json"))),
        (Lang::Ar, parse(include_str!("../i18n/ar.json"))),
    ])
});

/// Every phrase of every language, lower-cased, to its key: how
/// `POST /api/translate` recognises known text.
static PHRASES: LazyLock<HashMap<String, &'static str>> = LazyLock::new(|| {
    let mut out = HashMap::new();
    for lang in LANGS {
        for (key, text) in &DICTIONARIES[&lang] {
            out.entry(text.to_lowercase()).or_insert(key.as_str());
        }
    }
    out
});

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
            Lang::Fr => "fr",
            Lang::Es => "es",
            Lang::Ja => "ja",
            Lang::Ar => "ar",
        }
    }

    /// `dir="rtl"` for a language written right to left (left to right is
    /// what HTML assumes, so it needs no attribute).
    pub fn rtl_dir(self) -> Option<&'static str> {
        matches!(self, Lang::Ar).then_some("rtl")
    }

    /// The language's own name, for the language menu.
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::De => "Deutsch",
            Lang::Fr => "Français",
            Lang::Es => "Español",
            Lang::Ja => "日本語",
            Lang::Ar => "العربية",
        }
    }

    /// A language tag's language (`de-AT` is German), if there is a dictionary for it.
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        LANGS.into_iter().find(|l| l.code() == primary)
    }

    /// The text for `key`, falling back to English, then to the key itself
    /// (a key missing from English is a bug the dictionary tests catch).
    pub fn t(self, key: &str) -> &str {
        let dicts = &*DICTIONARIES;
        dicts[&self]
            .get(key)
            .or_else(|| dicts[&Lang::En].get(key))
            .map(String::as_str)
            .unwrap_or(key)
    }

    /// `t` with `{n}` replaced.
    pub fn tn(self, key: &str, n: i64) -> String {
        self.t(key).replace("{n}", &n.to_string())
    }

    /// A span of time as people say it: its two largest units, at least a
    /// minute ("1 h 35 min", "2 d 3 h"). One function for every place that
    /// says how long something took, so the page and the postmortem agree.
    pub fn duration(self, ms: i64) -> String {
        let minutes = (ms / 60_000).max(1);
        let (d, h, m) = (minutes / 1_440, minutes / 60 % 24, minutes % 60);
        let parts: Vec<String> = [("dur.days", d), ("dur.hours", h), ("dur.minutes", m)]
            .into_iter()
            .skip_while(|(_, n)| *n == 0)
            .take(2)
            .filter(|(_, n)| *n > 0)
            .map(|(key, n)| self.tn(key, n))
            .collect();
        parts.join(" ")
    }

    /// The text for `key` in this language only, without fallback.
    pub fn entry(self, key: &str) -> Option<&'static str> {
        DICTIONARIES[&self].get(key).map(String::as_str)
    }
}

/// The key a UI key or a known phrase (in any language, any case) stands for.
pub fn key_of(item: &str) -> Option<&'static str> {
    let dicts = &*DICTIONARIES;
    if let Some((k, _)) = dicts[&Lang::En].get_key_value(item) {
        return Some(k.as_str());
    }
    PHRASES.get(&item.trim().to_lowercase()).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dictionary_has_every_english_key_and_nothing_else() {
        let en = &DICTIONARIES[&Lang::En];
        assert!(en.len() > 50, "the English dictionary failed to parse");
        for lang in LANGS {
            let d = &DICTIONARIES[&lang];
            let mut missing: Vec<_> = en.keys().filter(|k| !d.contains_key(*k)).collect();
            let mut extra: Vec<_> = d.keys().filter(|k| !en.contains_key(*k)).collect();
            missing.sort();
            extra.sort();
            assert!(
                missing.is_empty() && extra.is_empty(),
                "{lang:?}: missing {missing:?}, extra {extra:?}"
            );
            for (k, v) in d {
                assert_eq!(
                    v.contains("{n}"),
                    en[k].contains("{n}"),
                    "{lang:?} {k}: placeholder differs"
                );
            }
        }
    }

    #[test]
    fn phrases_resolve_to_keys_in_any_language() {
        assert_eq!(key_of("status.degraded"), Some("status.degraded"));
        assert_eq!(
            key_of("all systems operational"),
            Some("overall.operational")
        );
        assert_eq!(key_of("Behoben"), Some("incident.resolved"));
        assert_eq!(key_of("no such phrase"), None);
    }
}
