//! The signed-in person's own account: password, two-factor setup with its
//! QR code, recovery codes (shown once, right after they are made).

use super::{Frame, Input, bridge, page};
use crate::form_bridge::Flash;
use maud::{Markup, PreEscaped, html};

pub enum TwoFactor {
    Off,
    /// Setup started: the new secret, its otpauth URI and QR code.
    Pending {
        secret: String,
        qr_svg: String,
    },
    On,
}

/// The change-password form; `given` when the person signed in with a
/// password someone else chose, which they must replace before anything else.
fn password_form(frame: &Frame, flash: Option<&Flash>, given: bool) -> Markup {
    html! {
        section.card aria-labelledby="h-password" {
            h2 #h-password { (if given { "Choose your own password" } else { "Change password" }) }
            @if given {
                p.alert role="status" { "The password you signed in with was chosen by whoever made your account. Choose your own to go on: the other screens open once it is changed." }
            }
            form.stack method="post" action="/api/auth/change-password" {
                (bridge("/admin/account", if given { "/admin" } else { "/admin/account" }, Some("Password changed. Your other sessions were signed out."), Some(frame.csrf)))
                (Input { autocomplete: Some("current-password"), ..Input::new("currentPassword", if given { "Password you were given" } else { "Current password" }, "password") }.render(flash))
                (Input { autocomplete: Some("new-password"), meter: Some("strength"), hint: Some("At least 12 characters."), ..Input::new("newPassword", "New password", "password") }.render(flash))
                div.meter aria-hidden="true" { span #strength {} }
                div { button type="submit" { "Change password" } }
            }
        }
    }
}

pub fn account(frame: &Frame, flash: Option<&Flash>, tf: &TwoFactor, given: bool) -> Markup {
    let codes: Vec<String> = flash
        .and_then(|f| f.values.get("recoveryCodes"))
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let body = html! {
        header.top { h1 { "Your account" } }
        @if given { (password_form(frame, flash, true)) }
        @if !codes.is_empty() {
            section.card.codes aria-labelledby="h-codes" {
                h2 #h-codes { "Your recovery codes" }
                p { "Each signs you in once if you lose your authenticator. Keep them somewhere safe now: they are not shown again." }
                ul.codes { @for c in &codes { li { code { (c) } } } }
            }
        }
        @if frame.sso && !given {
            section.card aria-labelledby="h-signing-in" {
                h2 #h-signing-in { "Signing in" }
                p { "You sign in through your team's identity provider (single sign-on): your password and second factor are kept there, and your role follows your groups there at each sign-in." }
                p.muted { "A change that needs you to confirm it is you sends you to the provider to sign in again." }
            }
        } @else {
        div.grid {
            section.card aria-labelledby="h-2fa" {
                h2 #h-2fa { "Two-factor authentication" }
                @match tf {
                    TwoFactor::Off => {
                        p { "Off. With it on, signing in also asks for a code from an authenticator app." }
                        form method="post" action="/api/auth/2fa/setup" {
                            (bridge("/admin/account", "/admin/account", None, Some(frame.csrf)))
                            button type="submit" { "Set up two-factor" }
                        }
                    }
                    TwoFactor::Pending { secret, qr_svg } => {
                        p { "Scan the code with your authenticator app, or type the key, then enter the 6-digit code it shows." }
                        div.qr { (PreEscaped(qr_svg)) }
                        p { "Key: " code #totp-secret { (secret) } }
                        form.stack method="post" action="/api/auth/2fa/verify-setup" {
                            (bridge("/admin/account", "/admin/account", Some("Two-factor authentication is on."), Some(frame.csrf)))
                            input type="hidden" name="_keep" value="recoveryCodes";
                            (Input { autocomplete: Some("one-time-code"), id: Some("f-setup-code"), ..Input::new("code", "Code from the app", "text") }.render(flash))
                            div { button type="submit" { "Turn on two-factor" } }
                        }
                    }
                    TwoFactor::On => {
                        p { strong { "On." } " Signing in asks for a code from your authenticator app." }
                        @let regen = flash.and_then(|f| f.of_form("regenerate"));
                        @let off = flash.and_then(|f| f.of_form("disable"));
                        details.edit open[regen.is_some_and(|f| !f.fields.is_empty())] {
                            summary { "New recovery codes" }
                            p.muted { "Makes ten new codes; the old ones stop working at once." }
                            form.stack method="post" action="/api/auth/2fa/regenerate-codes" {
                                (bridge("/admin/account", "/admin/account", Some("New recovery codes made; the old ones no longer work."), Some(frame.csrf)))
                                input type="hidden" name="_form" value="regenerate";
                                input type="hidden" name="_keep" value="recoveryCodes";
                                (Input { autocomplete: Some("current-password"), id: Some("regen-password"), ..Input::new("password", "Your password", "password") }.render(regen))
                                div { button.secondary type="submit" { "Make new recovery codes" } }
                            }
                        }
                        details.edit open[off.is_some_and(|f| !f.fields.is_empty())] {
                            summary { "Turn two-factor off" }
                            p.muted { "Signing in then asks for your password only; your recovery codes are deleted." }
                            form.stack method="post" action="/api/auth/2fa/disable" data-confirm="Turn two-factor authentication off?" {
                                (bridge("/admin/account", "/admin/account", Some("Two-factor authentication is off."), Some(frame.csrf)))
                                input type="hidden" name="_form" value="disable";
                                (Input { autocomplete: Some("current-password"), id: Some("off-password"), ..Input::new("password", "Your password", "password") }.render(off))
                                div { button.danger type="submit" { "Turn two-factor off" } }
                            }
                        }
                    }
                }
            }
            @if !given { (password_form(frame, flash, false)) }
        }
        }
    };
    page(frame, "Your account", flash, body)
}
