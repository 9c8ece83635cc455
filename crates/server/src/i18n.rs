//! The dictionaries live in core (`upstate_core::i18n`), shared with the
//! messages the jobs crate sends; choosing a visitor's language from a
//! request is the server's part.

use axum::http::{HeaderMap, header};
pub use upstate_core::i18n::{LANGS, Lang, key_of};

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
        for (tag, q) in crate::extract::weighted(headers, header::ACCEPT_LANGUAGE) {
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
