//! The password form of a private page: all a visitor without the page's
//! cookie sees. It posts (without JavaScript) to `/api/verify-page-password`,
//! which sets the cookie and sends the visitor back.

use super::{View, document};
use maud::html;

/// `error` is a dictionary key (`password.wrong`, `password.throttled`).
pub fn gate(v: &View, next: &str, error: Option<&'static str>) -> String {
    let p = &v.d.page;
    let title = format!("{} {}", p.name, v.t("page.status"));
    document(
        v,
        &title,
        html! {
            section.card.gate aria-labelledby="gate-h" {
                h2 #gate-h { (v.t("password.title")) }
                p { (v.t("password.prompt")) }
                @if let Some(e) = error { p.error role="alert" #gate-error { (v.t(e)) } }
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
        },
        false,
    )
}
