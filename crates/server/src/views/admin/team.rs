//! People and machines: your API keys (the secret shown once, with a copy
//! button), users and roles (for those who manage them), and the audit log
//! (recent events, filters, chain verification, exports).

use super::{Frame, Input, action, bridge, page, step_up_field, step_up_input, when};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::audit::AuditEvent;
use upstate_core::roles::Role;
use upstate_store::api_keys::ApiKey;
use upstate_store::users::User;

pub fn keys(frame: &Frame, flash: Option<&Flash>, keys: &[ApiKey]) -> Markup {
    let back = "/admin/keys";
    let secret = flash
        .and_then(|f| f.values.get("secret"))
        .and_then(|v| v.as_str());
    let body = html! {
        header.top { h1 { "API keys" } }
        @if let Some(secret) = secret {
            section.card.codes aria-labelledby="h-secret" {
                h2 #h-secret { "Your new key" }
                p { "Copy it now: only its hash is stored, so it is not shown again." }
                p.secret { code #new-secret { (secret) } " " button.secondary type="button" data-copy="new-secret" hidden { "Copy" } }
            }
        }
        section.card aria-labelledby="h-keys" {
            h2 #h-keys { "Your keys" }
            @if keys.is_empty() { p.empty { "No keys yet." } }
            @else { ul.rows {
                @for k in keys {
                    li {
                        span {
                            strong { (k.name) } " " code.muted { (k.prefix) "…" }
                            br; span.muted {
                                (k.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "))
                                " · created " (when(k.created_at))
                                @if let Some(t) = k.expires_at { " · expires " (when(t)) }
                                @if let Some(t) = k.last_used_at { " · last used " (when(t)) }
                                @if k.revoked_at.is_some() { " · revoked" }
                            }
                        }
                        @if k.revoked_at.is_none() {
                            (action(frame, back, &format!("/api/api-keys/{}", k.id), "DELETE", &format!("Revoke {}", k.name), Some("Revoke this key? Whatever uses it stops working at once."), Some("Key revoked.")))
                        }
                    }
                }
            } }
        }
        section.card aria-labelledby="h-newkey" {
            h2 #h-newkey { "New key" }
            form.stack method="post" action="/api/api-keys" {
                (bridge(back, back, Some("Key created."), Some(frame.csrf)))
                input type="hidden" name="_keep" value="secret";
                (Input { hint: Some("Where it is used, such as \"deploy pipeline\"."), ..Input::new("name", "Key name", "text") }.render(flash))
                fieldset.field {
                    legend { "Scope" }
                    div.choices {
                        label { input type="radio" name="scopes" value="read" checked; "read: reads only" }
                        label { input type="radio" name="scopes" value="write"; "write: reads and changes content" }
                        label { input type="radio" name="scopes" value="admin"; "admin: everything (asks you to confirm your password)" }
                    }
                }
                (Input { form_name: Some("expiresInDays:int"), required: false, hint: Some("Leave empty for a key that does not expire."), ..Input::new("expiresInDays", "Expires after (days)", "number") }.render(flash))
                (step_up_input(frame, "key", "to create an admin key", flash, Some("Needed only for the admin scope.")))
                div { button type="submit" { "Create key" } }
            }
        }
    };
    page(frame, "API keys", flash, body)
}

const ROLES: [Role; 4] = [Role::Viewer, Role::Editor, Role::Admin, Role::Owner];

/// The sensitive actions on one user, each confirmed inline with a step-up.
fn manage_user(frame: &Frame, flash: Option<&Flash>, u: &User) -> Markup {
    let back = "/admin/users";
    let route = format!("/api/admin/users/{}", u.id);
    let tag = |what: &str| format!("{what}-{}", u.id);
    // Open again after a refusal inside it.
    let open = flash.is_some_and(|f| {
        f.fields
            .iter()
            .any(|(field, _)| field.ends_with(&format!("-{}", u.id)))
    });
    html! {
        details.manage open[open] {
            summary { "Manage " (u.name) }
            div.manage-forms {
                form.stack method="post" action=(route) {
                    (bridge(back, back, Some("Role changed."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PATCH";
                    div.field {
                        label for=(format!("role-{}", u.id)) { "Role" span.visually-hidden { " of " (u.name) } }
                        select id=(format!("role-{}", u.id)) name="role" {
                            @for r in ROLES { option value=(r.as_str()) selected[r == u.role] { (r.as_str()) } }
                        }
                    }
                    (step_up_field(frame, &tag("role"), &format!("to change the role of {}", u.name), flash))
                    div { button type="submit" { "Change role" span.visually-hidden { " of " (u.name) } } }
                }
                form.stack method="post" action=(format!("{route}/reset-password")) {
                    (bridge(back, back, Some("Password reset; their sessions ended."), Some(frame.csrf)))
                    input type="hidden" name="_keep" value="temporaryPassword";
                    (step_up_field(frame, &tag("password"), &format!("to reset the password of {}", u.name), flash))
                    div { button.secondary type="submit" { "Reset password" span.visually-hidden { " of " (u.name) } } }
                }
                @if u.totp_enabled {
                    form.stack method="post" action=(format!("{route}/reset-2fa")) {
                        (bridge(back, back, Some("Two-factor turned off; they set it up again."), Some(frame.csrf)))
                        (step_up_field(frame, &tag("2fa"), &format!("to reset two-factor of {}", u.name), flash))
                        div { button.secondary type="submit" { "Reset two-factor" span.visually-hidden { " of " (u.name) } } }
                    }
                }
                form.stack method="post" action=(route) data-confirm=(format!("Remove {} ({})? They can no longer sign in.", u.name, u.email)) {
                    (bridge(back, back, Some("User removed."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="DELETE";
                    (step_up_field(frame, &tag("remove"), &format!("to remove {}", u.name), flash))
                    div { button.danger type="submit" { "Remove user" span.visually-hidden { " " (u.name) } } }
                }
            }
        }
    }
}

pub fn users(frame: &Frame, flash: Option<&Flash>, users: &[User]) -> Markup {
    let back = "/admin/users";
    let body = html! {
        header.top { h1 { "Users" } }
        @if let Some(pw) = flash.and_then(|f| f.value_of("temporaryPassword")) {
            div.alert.notice role="status" {
                "Their temporary password, shown once: " code #temp-password { (pw) }
                " Give it to them over a safe channel; they change it after signing in."
            }
        }
        section.card aria-labelledby="h-users" {
            h2 #h-users { "Everyone" }
            ul.rows {
                @for u in users {
                    li {
                        span {
                            strong { (u.name) } " " span.muted { (u.email) }
                            br; span.muted {
                                (u.role.as_str())
                                @if u.sso {
                                    " · single sign-on"
                                } @else {
                                    (if u.totp_enabled { " · two-factor on" } else { " · two-factor off" })
                                }
                                @if let Some(t) = u.last_login_at { " · last sign-in " (when(t)) }
                            }
                        }
                        (action(frame, back, &format!("/api/admin/users/{}/revoke-sessions", u.id), "POST", &format!("Sign {} out everywhere", u.name), None, Some("Sessions ended.")))
                        (manage_user(frame, flash, u))
                    }
                }
            }
        }
        section.card aria-labelledby="h-newuser" {
            h2 #h-newuser { "Add a user" }
            form.stack method="post" action="/api/admin/users" {
                (bridge(back, back, Some("User added. Give them their password in person or over a safe channel."), Some(frame.csrf)))
                (Input::new("name", "Name", "text").render(flash))
                (Input::new("email", "Email", "email").render(flash))
                div.field {
                    label for="f-role" { "Role" }
                    select #f-role name="role" {
                        @for r in ROLES { option value=(r.as_str()) selected[r == Role::Editor] { (r.as_str()) } }
                    }
                    span.hint { "viewer reads; editor runs incidents, maintenance and pages; admin also manages users, keys and settings; owner everything." }
                }
                (Input { autocomplete: Some("new-password"), hint: Some("At least 12 characters; they change it after signing in."), ..Input::new("password", "First password", "password") }.render(flash))
                div { button type="submit" { "Add user" } }
            }
        }
    };
    page(frame, "Users", flash, body)
}

/// The audit screen's filters, as typed (the export links carry them too).
#[derive(Default)]
pub struct AuditFilters {
    pub action: Option<String>,
    pub actor_kind: Option<String>,
    pub target_type: Option<String>,
    /// `YYYY-MM-DD`.
    pub since: Option<String>,
}

impl AuditFilters {
    /// The filters as the audit routes' query (`&`-joined, encoded).
    fn query(&self) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("action", &self.action),
            ("actorKind", &self.actor_kind),
            ("targetType", &self.target_type),
        ] {
            if let Some(v) = v {
                q.append_pair(k, v);
            }
        }
        if let Some(d) = &self.since {
            q.append_pair("since", &format!("{d}T00:00:00Z"));
        }
        q.finish()
    }
}

const ACTOR_KINDS: [(&str, &str); 5] = [
    ("user", "People"),
    ("key", "API keys"),
    ("cli", "Command line"),
    ("system", "Upstate itself"),
    ("anonymous", "Not signed in"),
];

pub fn audit(
    frame: &Frame,
    flash: Option<&Flash>,
    events: &[AuditEvent],
    f: &AuditFilters,
) -> Markup {
    let query = f.query();
    let export = |format: &str| {
        if query.is_empty() {
            format!("/api/audit-events/export?format={format}")
        } else {
            format!("/api/audit-events/export?format={format}&{query}")
        }
    };
    let verified = flash
        .and_then(|f| f.values.get("intact"))
        .and_then(|v| v.as_bool());
    let checked = flash
        .and_then(|f| f.values.get("checked"))
        .and_then(|v| v.as_i64());
    let body = html! {
        header.top {
            h1 { "Audit log" }
            span.actions {
                a.button.secondary href=(export("csv")) { "Export CSV" }
                a.button.secondary href=(export("json")) { "Export JSON" }
                form.inline method="post" action="/api/audit-events/verify" {
                    (bridge("/admin/audit", "/admin/audit", None, Some(frame.csrf)))
                    input type="hidden" name="_keep" value="intact,checked,brokenAt,reason";
                    button type="submit" { "Verify the chain" }
                }
            }
        }
        @match verified {
            Some(true) => div.alert.notice role="status" { "The chain is intact: " (checked.unwrap_or(0)) " events checked." },
            Some(false) => div.alert.error role="alert" {
                "The chain is broken at event "
                (flash.and_then(|f| f.value_of("brokenAt")).unwrap_or_default()) ": "
                (flash.and_then(|f| f.value_of("reason")).unwrap_or_default())
            },
            None => {}
        }
        section.card aria-labelledby="h-events" {
            h2 #h-events { "Recent events" }
            form.inline.filter method="get" action="/admin/audit" {
                label for="f-action" { "Action" }
                input #f-action type="text" data-shortcut="/" name="action" value=[f.action.as_deref()] placeholder="incident or incident.create" title="An action, or the part before its dot for all of them";
                label for="f-actor" { "Who" }
                select #f-actor name="actorKind" {
                    option value="" { "Anyone" }
                    @for (value, label) in ACTOR_KINDS {
                        option value=(value) selected[f.actor_kind.as_deref() == Some(value)] { (label) }
                    }
                }
                label for="f-target" { "Target" }
                input #f-target type="text" name="targetType" value=[f.target_type.as_deref()] placeholder="incident";
                label for="f-since" { "Since" }
                input #f-since type="date" name="since" value=[f.since.as_deref()];
                button.secondary type="submit" { "Filter" }
            }
            @if events.is_empty() { p.empty { "No events." } }
            div.scroll-x tabindex="0" role="region" aria-label="Table of the audit events" { table.events {
                thead { tr { th { "When" } th { "Who" } th { "Action" } th { "Target" } th { "From" } } }
                tbody {
                    @for e in events {
                        tr {
                            td { (when(e.at)) }
                            td { (e.actor.label) br; span.muted { (e.actor.kind) } }
                            td { code { (e.action) } }
                            td {
                                @match (target_link(&e.target_type, e.target_id), e.target_id) {
                                    (Some(href), Some(id)) => { a href=(href) { (e.target_type) " #" (id) } },
                                    (_, Some(id)) => { (e.target_type) " #" (id) },
                                    _ => { (e.target_type) },
                                }
                            }
                            td.muted { (e.client_addr.as_deref().unwrap_or("")) }
                        }
                    }
                }
            } }
        }
    };
    page(frame, "Audit log", flash, body)
}

/// Where the interface shows an audit event's target, when it has a
/// screen (a target deleted since leads to its list).
fn target_link(kind: &str, id: Option<i64>) -> Option<String> {
    let id = id?;
    Some(match kind {
        "incident" => format!("/admin/incidents/{id}"),
        "statuspage" => format!("/admin/pages/{id}"),
        "component" => format!("/admin/components/{id}"),
        "monitor" => format!("/admin/monitors/{id}"),
        "notification" => format!("/admin/notifications/{id}"),
        "subscriber" => format!("/admin/subscribers?open={id}"),
        "maintenance" | "recurring" => "/admin/maintenance".into(),
        "user" => "/admin/users".into(),
        "api_key" => "/admin/keys".into(),
        "template" => "/admin/templates".into(),
        "comment" => "/admin/comments?status=all".into(),
        _ => return None,
    })
}

pub struct SystemInfo {
    pub version: &'static str,
    pub uptime_seconds: u64,
    pub backend: &'static str,
    pub database_bytes: i64,
    pub instance_id: String,
    pub cache: crate::snapshot::CacheFigures,
    /// Development mode (`--dev`).
    pub dev: bool,
    /// The self-test, run as the screen opened.
    pub selftest: crate::selftest::Report,
}

pub fn system(frame: &Frame, flash: Option<&Flash>, i: &SystemInfo) -> Markup {
    let mb = |b: f64| format!("{:.1} MB", b / 1_048_576.0);
    let body = html! {
        header.top { h1 { "System" } }
        div.grid {
            section.card aria-labelledby="h-sys" {
                h2 #h-sys { "This instance" }
                dl.facts {
                    dt { "Version" } dd { (i.version) }
                    dt { "Running for" } dd { (i.uptime_seconds / 3600) " h " ((i.uptime_seconds % 3600) / 60) " min" }
                    dt { "Database" } dd { (i.backend) ", " (mb(i.database_bytes as f64)) }
                    dt { "Instance" } dd { code { (i.instance_id) } }
                }
            }
            section.card aria-labelledby="h-selftest" {
                h2 #h-selftest { "Self-test " @if i.selftest.ok { span.pill.s-operational { "All passed" } } @else { span.pill.s-major_outage { "A check failed" } } }
                ul.rows {
                    @for c in &i.selftest.checks {
                        li {
                            span {
                                @if c.degraded { span.pill.s-degraded { "Degraded" } } @else if c.ok { span.pill.s-operational { "OK" } } @else { span.pill.s-major_outage { "Failed" } }
                                " " strong { (c.name) } br; span.muted { (c.detail) }
                            }
                            span.muted { (c.ms) " ms" }
                        }
                    }
                }
                p.muted { "Run each time this screen opens; also GET /api/selftest for your own monitoring (503 when a check fails)." }
            }
            section.card aria-labelledby="h-cache" {
                h2 #h-cache { "Public page cache" }
                dl.facts {
                    dt { "Pages in memory" } dd { (i.cache.pages) }
                    dt { "Bodies" } dd { (i.cache.bodies) ", " (mb(i.cache.bytes as f64)) }
                    dt { "Custom domains remembered" } dd { (i.cache.hosts) }
                }
                p.muted { "The cache mirrors the database; dropping it only makes the next reads rebuild." }
                (action(frame, "/admin/system", "/api/admin/cache", "POST", "Drop the cache", None, Some("Cache dropped.")))
            }
            @if i.dev {
                section.card aria-labelledby="h-dev" {
                    h2 #h-dev { "Development mode" }
                    p.muted { "This server runs with --dev. Never run production this way." }
                    (action(frame, "/admin/system", "/api/admin/reset-rate-limits", "POST", "Reset rate limits", Some("Forget every rate-limit count and sign-in lock?"), Some("Rate limits reset.")))
                }
            }
        }
    };
    page(frame, "System", flash, body)
}
