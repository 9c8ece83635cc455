//! The dictionaries live in core (`upstate_core::i18n`), shared with the
//! messages the jobs crate sends; choosing a visitor's language from a
//! request is the server's part.

use axum::http::{HeaderMap, header};
pub use upstate_core::i18n::{LANGS, Lang, key_of};
use upstate_store::Db;

/// The language of a page a visitor reaches from a message or a form
/// (confirm, unsubscribe, manage, "comment received"): `?lang=`, else the
/// browser's choice, else the install's default language. Reads the
/// settings from the database: these pages are rare, and not every page
/// they belong to is in the public cache.
pub async fn of_visitor(db: &Db, query: Option<&str>, headers: &HeaderMap) -> Lang {
    let fallback = upstate_store::settings::settings(db)
        .await
        .ok()
        .and_then(|s| s.default_language);
    Lang::negotiate_or(query, headers, fallback.as_deref())
}

/// The language of the page that answers a plain HTML form (`of_visitor`),
/// or None for JSON, whose messages stay in English like the problem
/// documents.
pub async fn of_form(
    db: &Db,
    html: bool,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Option<Lang> {
    if html {
        Some(of_visitor(db, query, headers).await)
    } else {
        None
    }
}

/// `Lang::negotiate(…)` from a request (import the trait).
pub trait Negotiate {
    /// `?lang=` when it names a dictionary, else the best `Accept-Language`
    /// match by quality, else English.
    fn negotiate(query: Option<&str>, headers: &HeaderMap) -> Lang;
    /// `negotiate` with the install's default language (a code) in place
    /// of English when the visitor asks for none we have.
    fn negotiate_or(query: Option<&str>, headers: &HeaderMap, fallback: Option<&str>) -> Lang;
}

impl Negotiate for Lang {
    fn negotiate(query: Option<&str>, headers: &HeaderMap) -> Lang {
        Lang::negotiate_or(query, headers, None)
    }

    fn negotiate_or(query: Option<&str>, headers: &HeaderMap, fallback: Option<&str>) -> Lang {
        if let Some(l) = query.and_then(Lang::parse) {
            return l;
        }
        let mut best: Option<(f32, Lang)> = None;
        for (tag, q) in crate::accept::weighted(headers, header::ACCEPT_LANGUAGE) {
            let Some(lang) = Lang::parse(tag) else {
                continue;
            };
            if q > 0.0 && best.is_none_or(|(bq, _)| q > bq) {
                best = Some((q, lang));
            }
        }
        best.map(|(_, l)| l)
            .or_else(|| fallback.and_then(Lang::parse))
            .unwrap_or(Lang::En)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn negotiation_prefers_query_then_quality() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("xx, fr-CH;q=0.4, de;q=0.8, en;q=0.1"),
        );
        assert_eq!(Lang::negotiate(None, &h), Lang::De);
        assert_eq!(Lang::negotiate(Some("ja"), &h), Lang::Ja);
        assert_eq!(Lang::negotiate(Some("zz"), &h), Lang::De);
        assert_eq!(Lang::negotiate(None, &HeaderMap::new()), Lang::En);
    }
}
