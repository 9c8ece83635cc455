//! Sign-in, the second factor, and the first owner's setup.

use super::{Input, bridge, centered};
use crate::form_bridge::Flash;
use maud::{Markup, html};

/// How the sign-in screen offers single sign-on: its button's words, and
/// whether passwords are only the owner's way back in.
pub struct SsoOffer<'a> {
    pub label: &'a str,
    pub only: bool,
}

pub fn login(flash: Option<&Flash>, sso: Option<SsoOffer<'_>>) -> Markup {
    let password = html! {
        form.stack method="post" action="/api/auth/login" {
            (bridge("/admin/login", "/admin", None, None))
            input type="hidden" name="_pending" value="/admin/login/code";
            (Input { autocomplete: Some("username"), autofocus: sso.is_none(), ..Input::new("email", "Email", "email") }.render(flash))
            (Input { autocomplete: Some("current-password"), ..Input::new("password", "Password", "password") }.render(flash))
            button type="submit" { "Sign in" }
        }
    };
    let body = html! {
        h1 { "Sign in" }
        p.muted { "Manage your status pages." }
        @match &sso {
            Some(offer) => {
                // A plain link: the way out is a navigation, it works
                // without scripts.
                a.button.sso href="/api/auth/sso" { (offer.label) }
                @if offer.only {
                    details.break-glass {
                        summary { "Owner's password" }
                        p.hint { "Passwords open only an owner's account here, for when single sign-on is down." }
                        (password)
                    }
                } @else {
                    p.or aria-hidden="true" { span { "or" } }
                    (password)
                }
            }
            None => { (password) }
        }
    };
    centered("Sign in", flash, body)
}

pub fn second_factor(flash: Option<&Flash>) -> Markup {
    let body = html! {
        h1 { "Two-factor code" }
        p.muted { "Enter the 6-digit code from your authenticator app." }
        form.stack method="post" action="/api/auth/verify-2fa" {
            (bridge("/admin/login/code", "/admin", None, None))
            (Input { autocomplete: Some("one-time-code"), form_name: Some("code:opt"), required: false, autofocus: true, ..Input::new("code", "Code", "text") }.render(flash))
            details {
                summary { "Use a recovery code instead" }
                (Input { form_name: Some("recoveryCode:opt"), required: false, hint: Some("Each recovery code works once."), ..Input::new("recoveryCode", "Recovery code", "text") }.render(flash))
            }
            button type="submit" { "Verify" }
        }
        p { a href="/admin/login" { "Start over" } }
    };
    centered("Two-factor code", flash, body)
}

pub fn setup(token: &str, flash: Option<&Flash>) -> Markup {
    let back = format!("/admin/setup?token={token}");
    let body = html! {
        h1 { "Welcome to Upstate" }
        p.muted { "Create the owner account. The owner can invite everyone else." }
        form.stack method="post" action="/api/auth/setup" {
            (bridge(&back, "/admin/login", Some("The owner account exists. Sign in with it."), None))
            input type="hidden" name="token" value=(token);
            (Input { autocomplete: Some("name"), autofocus: true, ..Input::new("name", "Your name", "text") }.render(flash))
            (Input { autocomplete: Some("email"), ..Input::new("email", "Email", "email") }.render(flash))
            (Input {
                autocomplete: Some("new-password"),
                meter: Some("strength"),
                hint: Some("At least 12 characters. A few unrelated words make a strong one."),
                ..Input::new("password", "Password", "password")
            }.render(flash))
            div.meter aria-hidden="true" { span #strength {} }
            button type="submit" { "Create owner" }
        }
    };
    centered("Set up", flash, body)
}

pub fn setup_gone() -> Markup {
    centered(
        "Set up",
        None,
        html! {
            h1 { "Setup is done" }
            p { "This install has an owner already. " a href="/admin/login" { "Sign in" } "." }
        },
    )
}

/// `/admin/setup` without the link's token.
pub fn setup_needs_link() -> Markup {
    centered(
        "Set up",
        None,
        html! {
            h1 { "Open the setup link" }
            p { "A new install is set up with the one-time link Upstate printed in its log when it started:" }
            pre { code { "http://HOST:PORT/admin/setup?token=…" } }
            p.muted { "The token keeps anyone else who can reach this server from taking it over. Restart Upstate to print a fresh link." }
        },
    )
}
