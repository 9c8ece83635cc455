//! What a visitor without the cookie of a private page sees: its password
//! form, and the viewers' sign-in form when viewers open it. Both post
//! (without JavaScript) and send the visitor back here: the password to
//! `/api/verify-page-password`, which sets the cookie; the email to
//! `/api/viewer-sign-in`, which mails a sign-in link.

use super::{View, document};
use maud::html;

/// `error` is a dictionary key (`password.wrong`, `password.throttled`,
/// `viewer.expired`, `viewer.sso_refused`); `sent`: a sign-in link was
/// asked for; `sso`: the label of the team's identity provider's button,
/// when viewers may sign in through it.
pub fn gate(
    v: &View,
    next: &str,
    error: Option<&'static str>,
    sent: bool,
    sso: Option<&str>,
) -> String {
    let p = &v.d.page;
    let title = format!("{} {}", p.name, v.t("page.status"));
    let password = v.d.password_hash.is_some();
    let viewers = v.d.access.viewers;
    document(
        v,
        &title,
        html! {
            section.card.gate aria-labelledby="gate-h" {
                h2 #gate-h { (v.t("password.title")) }
                @if let Some(e) = error { p.error role="alert" #gate-error { (v.t(e)) } }
                @if sent { p.notice role="status" #gate-sent { (v.t("viewer.sent")) } }
                @if viewers {
                    p { (v.t("viewer.prompt")) }
                    form method="post" action="/api/viewer-sign-in" {
                        input type="hidden" name="slug" value=(p.slug);
                        input type="hidden" name="next" value=(next);
                        input type="hidden" name="lang" value=(v.lang.code());
                        label for="viewer-email" { (v.t("viewer.label")) }
                        input #viewer-email type="email" name="email" required autocomplete="email";
                        button type="submit" { (v.t("viewer.submit")) }
                    }
                    @if let Some(label) = sso {
                        p.or { (v.t("viewer.or")) }
                        a.button #viewer-sso href={ "/api/auth/sso/viewer?page=" (p.slug) } { (label) }
                    }
                }
                @if password {
                    p { (v.t("password.prompt")) }
                    form method="post" action="/api/verify-page-password" {
                        input type="hidden" name="slug" value=(p.slug);
                        input type="hidden" name="next" value=(next);
                        input type="hidden" name="lang" value=(v.lang.code());
                        label for="page-password" { (v.t("password.label")) }
                        input #page-password type="password" name="password" required autocomplete="current-password"
                            aria-describedby=[error.map(|_| "gate-error")];
                        button type="submit" { (v.t("password.submit")) }
                    }
                }
            }
        },
        false,
    )
}

/// The page a sign-in link opens: one button that signs in (a POST), so a
/// mail scanner that opens the link does not use it up.
pub fn confirm_sign_in(v: &View, token: &str) -> String {
    let p = &v.d.page;
    let title = v.t("viewer.confirm").replace("{page}", &p.name);
    document(
        v,
        &title,
        html! {
            section.card.gate aria-labelledby="gate-h" {
                h2 #gate-h { (title) }
                form method="post" action={ "/api/viewer-sign-in/confirm?token=" (token) } {
                    input type="hidden" name="lang" value=(v.lang.code());
                    button type="submit" { (v.t("msg.sign_in")) }
                }
            }
        },
        false,
    )
}

/// A signed-in viewer's own links for apps that cannot sign in, each with
/// their token, and the button that resets them. `links`: (label, URL).
pub fn viewer_links(v: &View, links: &[(&str, String)], reset: bool) -> String {
    let p = &v.d.page;
    let title = v.t("viewer.links_title").replace("{page}", &p.name);
    document(
        v,
        &title,
        html! {
            section.card.gate aria-labelledby="gate-h" {
                h2 #gate-h { (title) }
                @if reset { p.notice role="status" #links-reset { (v.t("viewer.reset_done")) } }
                p { (v.t("viewer.links_intro")) }
                dl.viewer-links {
                    @for (label, url) in links {
                        dt { (label) }
                        dd { code { (url) } }
                    }
                }
                form method="post" action={ "/api/viewer-links/reset?page=" (p.slug) } {
                    input type="hidden" name="lang" value=(v.lang.code());
                    button type="submit" { (v.t("viewer.reset")) }
                }
                form method="post" action={ "/api/viewer-sign-out?page=" (p.slug) } {
                    button.secondary type="submit" { (v.t("viewer.sign_out")) }
                }
                p { a href={ "/s/" (p.slug) } { (v.t("notice.back")) } }
            }
        },
        false,
    )
}
