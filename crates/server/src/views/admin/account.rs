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

pub fn account(frame: &Frame, flash: Option<&Flash>, tf: &TwoFactor) -> Markup {
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
        @if !codes.is_empty() {
            section.card.codes aria-labelledby="h-codes" {
                h2 #h-codes { "Your recovery codes" }
                p { "Each signs you in once if you lose your authenticator. Keep them somewhere safe now: they are not shown again." }
                ul.codes { @for c in &codes { li { code { (c) } } } }
            }
        }
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
                    }
                }
            }
            section.card aria-labelledby="h-password" {
                h2 #h-password { "Change password" }
                form.stack method="post" action="/api/auth/change-password" {
                    (bridge("/admin/account", "/admin/account", Some("Password changed. Your other sessions were signed out."), Some(frame.csrf)))
                    (Input { autocomplete: Some("current-password"), ..Input::new("currentPassword", "Current password", "password") }.render(flash))
                    (Input { autocomplete: Some("new-password"), meter: Some("strength"), hint: Some("At least 12 characters."), ..Input::new("newPassword", "New password", "password") }.render(flash))
                    div.meter aria-hidden="true" { span #strength {} }
                    div { button type="submit" { "Change password" } }
                }
            }
        }
    };
    page(frame, "Your account", flash, body)
}
