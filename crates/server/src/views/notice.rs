//! A short page for a visitor who followed a link from a message
//! (confirm a subscription, unsubscribe): what happened, and the way back
//! to the status page. Styled like the public page; no script.

use super::assets;
use crate::i18n::Lang;
use maud::{DOCTYPE, Markup, html};

/// `action` is a form the page offers (the unsubscribe button). The
/// caller passes words already in `lang`; the page only declares it.
pub fn notice_page(
    lang: Lang,
    title: &str,
    text: &str,
    back: Option<(&str, &str)>,
    action: Option<Markup>,
) -> String {
    html! {
        (DOCTYPE)
        html lang=(lang.code()) dir=[lang.rtl_dir()] {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                meta name="robots" content="noindex";
                title { (title) }
                link rel="icon" href=(assets::FAVICON_URL);
                link rel="stylesheet" href=(assets::css_url());
            }
            body {
                main #main .wrap.notice {
                    section.card {
                        h1 { (title) }
                        p { (text) }
                        @if let Some(form) = action { (form) }
                        @if let Some((href, label)) = back { p { a href=(href) { (label) } } }
                    }
                }
            }
        }
    }
    .into_string()
}
