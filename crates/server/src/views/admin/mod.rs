//! The admin interface's templates (maud, escaped by construction). Forms
//! post to the application routes through `crate::form_bridge`, so they work
//! without JavaScript; `assets/admin.js` only adds hints and confirmations.

mod account;
mod comments;
mod component;
mod dashboard;
mod incidents;
mod integrations;
mod maintenance;
mod monitors;
mod notifications;
mod pages;
mod settings;
mod sign_in;
mod subscribers;
mod team;

pub use account::{TwoFactor, account};
pub use comments::{CommentsScreen, comments};
pub use component::component;
pub use dashboard::{DashboardData, MonitorGlance, dashboard};
pub use incidents::{
    IncidentForm, IncidentScreen, IncidentSearch, IncidentsScreen, incident_detail, incident_new,
    incidents_list, templates,
};
pub use integrations::{
    IntegrationScreen, IntegrationsScreen, approve_link, drafts, integration, integrations,
};
pub use maintenance::{MaintenanceScreen, maintenance_list};
pub use monitors::{
    MonitorScreen, MonitorSearch, MonitorsScreen, Row as MonitorRow, VendorRow, monitor,
    monitor_rank, monitors,
};
pub use notifications::{ChannelScreen, channel, channels};
pub use pages::{PageScreen, page_screen, pages_list};
pub use settings::{StaticCopy, settings};
pub use sign_in::{SsoOffer, login, second_factor, setup, setup_gone, setup_needs_link};
pub use subscribers::{SubscribersScreen, subscribers};
pub use team::{AuditFilters, SystemInfo, audit, keys, system, users};

use crate::form_bridge::Flash;
use crate::views::assets;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use upstate_core::Timestamp;
use upstate_core::roles::{Permission, Role};

/// Component statuses in the order people pick them.
pub const COMPONENT_STATUSES: [upstate_core::ComponentStatus; 5] = [
    upstate_core::ComponentStatus::Operational,
    upstate_core::ComponentStatus::Degraded,
    upstate_core::ComponentStatus::PartialOutage,
    upstate_core::ComponentStatus::MajorOutage,
    upstate_core::ComponentStatus::Maintenance,
];

/// A component's status as operators name it (the public page's overall
/// wording, "All Systems Operational", is for a whole page).
pub fn component_status_name(s: upstate_core::ComponentStatus) -> &'static str {
    use upstate_core::ComponentStatus::*;
    match s {
        Operational => "Operational",
        Degraded => "Degraded performance",
        PartialOutage => "Partial outage",
        MajorOutage => "Major outage",
        Maintenance => "Under maintenance",
    }
}

/// Who is signed in, for the frame around every page.
pub struct Frame<'a> {
    pub email: &'a str,
    pub name: &'a str,
    pub role: Role,
    pub csrf: &'a str,
    /// The install's name (settings).
    pub site: &'a str,
    /// The nav entry to mark as current.
    pub here: &'static str,
    /// The person came in through single sign-on: a step-up is proven at
    /// the identity provider, not with a password.
    pub sso: bool,
    /// This screen's path and query.
    pub path: &'a str,
    /// A step-up proven at the identity provider is at hand.
    pub confirmed: bool,
}

impl Frame<'_> {
    /// Whether the signed-in person's role may do what `p` allows: every
    /// screen asks this before it offers a control, so no one is shown a
    /// form the server would refuse them.
    pub fn may(&self, p: Permission) -> bool {
        self.role.has(p)
    }
}

const LOGO: PreEscaped<&str> = PreEscaped(
    r##"<svg width="22" height="22" viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10" fill="#22c55e"/><path d="M7 12.5l3 3 7-7" stroke="#fff" stroke-width="2.4" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>"##,
);

fn head(title: &str, site: &str) -> Markup {
    html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        meta name="robots" content="noindex";
        title { (title) " · " (site) " admin" }
        link rel="icon" href=(assets::FAVICON_URL);
        link rel="stylesheet" href=(assets::ADMIN_CSS.url);
        script src=(assets::ADMIN_JS.url) defer {}
    }
}

/// A page of the signed-in interface: the side navigation and the content.
pub fn page(frame: &Frame, title: &str, flash: Option<&Flash>, body: Markup) -> Markup {
    let nav = [
        ("dashboard", "/admin", "Dashboard"),
        ("pages", "/admin/pages", "Status pages"),
        ("incidents", "/admin/incidents", "Incidents"),
        ("maintenance", "/admin/maintenance", "Maintenance"),
        ("monitors", "/admin/monitors", "Monitors"),
    ];
    let managers = [
        (
            frame.may(Permission::KeysManage),
            "keys",
            "/admin/keys",
            "API keys",
        ),
        (
            frame.may(Permission::IncidentsWrite),
            "comments",
            "/admin/comments",
            "Comments",
        ),
        (
            frame.may(Permission::UsersManage),
            "users",
            "/admin/users",
            "Users",
        ),
        (
            frame.may(Permission::AuditView),
            "audit",
            "/admin/audit",
            "Audit log",
        ),
        (
            frame.may(Permission::SettingsWrite),
            "integrations",
            "/admin/integrations",
            "Integrations",
        ),
        (
            frame.may(Permission::SettingsWrite),
            "notifications",
            "/admin/notifications",
            "Notifications",
        ),
        (
            frame.may(Permission::SettingsWrite),
            "subscribers",
            "/admin/subscribers",
            "Subscribers",
        ),
        (
            frame.may(Permission::SettingsWrite),
            "settings",
            "/admin/settings",
            "Settings",
        ),
        (
            frame.may(Permission::SettingsWrite),
            "system",
            "/admin/system",
            "System",
        ),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title, frame.site)) }
            body {
                a.skip href="#main" { "Skip to content" }
                div.shell {
                    aside.side {
                        a.brand href="/admin" { (LOGO) (frame.site) }
                        // On a phone the menu folds behind one button (a
                        // details element: no script needed); on wider
                        // screens it is always open.
                        details.menu {
                        summary { "Menu" }
                        nav aria-label="Admin" {
                            ul {
                                @for (key, href, label) in nav {
                                    li { a href=(href) aria-current=[(key == frame.here).then_some("page")] { (label) } }
                                }
                                @for (_, key, href, label) in managers.iter().filter(|m| m.0) {
                                    li { a href=(href) aria-current=[(*key == frame.here).then_some("page")] { (label) } }
                                }
                                li { a href="/api/docs/" { "API reference" } }
                            }
                        }
                        div.who {
                            div { a href="/admin/account" aria-current=[(frame.here == "account").then_some("page")] { (frame.name) } " · " (frame.role.as_str()) }
                            div.email { (frame.email) }
                            form method="post" action="/api/auth/logout" {
                                input type="hidden" name="_back" value="/admin";
                                input type="hidden" name="_next" value="/admin/login";
                                input type="hidden" name="_done" value="Signed out.";
                                input type="hidden" name="_csrf" value=(frame.csrf);
                                button.secondary type="submit" { "Sign out" }
                            }
                            p.keys {
                                "Keys: " kbd { "/" } " search"
                                @if frame.may(Permission::IncidentsWrite) {
                                    " · " kbd { "n" } " " a href="/admin/incidents/new" data-shortcut="n" { "new incident" }
                                }
                            }
                        }
                        }
                    }
                    main #main {
                        (messages(flash))
                        (body)
                    }
                }
            }
        }
    }
}

/// A page of its own, centred (sign-in, setup).
pub fn centered(title: &str, flash: Option<&Flash>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { (head(title, "Upstate")) }
            body {
                main.center #main {
                    div.card {
                        div.brand { (LOGO) "Upstate" }
                        (messages(flash))
                        (body)
                    }
                }
            }
        }
    }
}

/// The notice or the refusal of the last form. A refusal that marks
/// fields opens with a summary linking to each (as GOV.UK forms do): our
/// script focuses it, so the person hears and sees what to fix however far
/// down the form the marked field is.
fn messages(flash: Option<&Flash>) -> Markup {
    html! {
        @if let Some(f) = flash {
            @if let Some(n) = &f.notice { div.alert.notice role="status" { (n) } }
            @let marked: Vec<&(String, String)> = f.fields.iter().filter(|(name, _)| !name.starts_with('_')).collect();
            @if let (Some(e), false) = (&f.error, marked.is_empty()) {
                div.alert.error.summary #error-summary role="alert" tabindex="-1" {
                    p { strong { (e) } }
                    ul {
                        @for (name, message) in marked {
                            li { a href=(format!("#f-{name}")) data-field=(name) { span.label { (field_words(name)) } " " (message) } }
                        }
                    }
                }
            } @else if let Some(e) = &f.error { div.alert.error role="alert" { (e) } }
        }
    }
}

/// An API field name as words ("scheduledEndTime" → "Scheduled end
/// time"), for a summary read before our script puts the label there.
fn field_words(name: &str) -> String {
    let base = name.split(['[', '.']).next().unwrap_or(name);
    let mut out = String::new();
    for (i, c) in base.chars().enumerate() {
        if c.is_ascii_uppercase() {
            out.push(' ');
            out.push(c.to_ascii_lowercase());
        } else if i == 0 {
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// One labelled input, with its hint, its last value and its error.
pub struct Input<'a> {
    pub name: &'a str,
    /// The form field's name when it carries a type (`statusPageId:int`).
    pub form_name: Option<&'a str>,
    pub label: &'a str,
    pub kind: &'a str,
    pub value: Option<String>,
    pub hint: Option<&'a str>,
    pub required: bool,
    pub autocomplete: Option<&'a str>,
    /// The id of a strength meter this password input drives.
    pub meter: Option<&'a str>,
    /// The element id when two forms of a screen share a field name.
    pub id: Option<&'a str>,
    /// A Markdown textarea with a live preview (`message` or `document`,
    /// as `/api/markdown/preview` renders them); needs our script.
    pub preview: Option<&'a str>,
    /// The first field of a screen that is one form: typing starts there.
    pub autofocus: bool,
}

impl<'a> Input<'a> {
    pub fn new(name: &'a str, label: &'a str, kind: &'a str) -> Input<'a> {
        Input {
            name,
            form_name: None,
            label,
            kind,
            value: None,
            hint: None,
            required: true,
            autocomplete: None,
            meter: None,
            id: None,
            preview: None,
            autofocus: false,
        }
    }

    pub fn render(self, flash: Option<&Flash>) -> Markup {
        let id = self
            .id
            .map_or_else(|| format!("f-{}", self.name), String::from);
        let error = flash.and_then(|f| f.error_of(self.name));
        let value = flash.and_then(|f| f.value_of(self.name)).or(self.value);
        let described = match (error.is_some(), self.hint.is_some()) {
            (true, _) => Some(format!("{id}-error")),
            (false, true) => Some(format!("{id}-hint")),
            _ => None,
        };
        html! {
            div.field.invalid[error.is_some()] {
                label for=(id) { (self.label) }
                @if self.kind == "textarea" {
                    textarea id=(id) name=(self.form_name.unwrap_or(self.name)) required[self.required] autofocus[self.autofocus]
                        data-preview=[self.preview]
                        aria-invalid=[error.map(|_| "true")] aria-describedby=[described.as_deref()] {
                        (value.unwrap_or_default())
                    }
                } @else {
                    input id=(id) type=(self.kind) name=(self.form_name.unwrap_or(self.name))
                        value=[value.filter(|_| self.kind != "password")] required[self.required] autofocus[self.autofocus]
                        autocomplete=[self.autocomplete] data-strength=[self.meter]
                        aria-invalid=[error.map(|_| "true")] aria-describedby=[described.as_deref()];
                }
                @if let Some(e) = error {
                    span.error id=(format!("{id}-error")) { (e) }
                } @else if let Some(h) = self.hint {
                    span.hint id=(format!("{id}-hint")) { (h) }
                }
            }
        }
    }
}

/// The hidden fields every bridged form carries.
pub fn bridge(back: &str, next: &str, done: Option<&str>, csrf: Option<&str>) -> Markup {
    html! {
        input type="hidden" name="_back" value=(back);
        input type="hidden" name="_next" value=(next);
        @if let Some(d) = done { input type="hidden" name="_done" value=(d); }
        @if let Some(c) = csrf { input type="hidden" name="_csrf" value=(c); }
    }
}

/// A one-button form: a state change or a deletion (which asks first).
pub fn action(
    frame: &Frame,
    back: &str,
    route: &str,
    method: &str,
    label: &str,
    confirm: Option<&str>,
    done: Option<&str>,
) -> Markup {
    html! {
        form.inline method="post" action=(route) data-confirm=[confirm] {
            (bridge(back, back, done, Some(frame.csrf)))
            @if method != "POST" { input type="hidden" name="_method" value=(method); }
            button.secondary.danger[method == "DELETE"] type="submit" { (label) }
        }
    }
}

/// The inline step-up of a sensitive form (see `crate::form_bridge`): the
/// person's password or a current 2FA code. `tag` tells the forms of one
/// screen apart; `what` ends the label for screen readers ("to remove Nora").
pub fn step_up_field(frame: &Frame, tag: &str, what: &str, flash: Option<&Flash>) -> Markup {
    step_up_input(frame, tag, what, flash, None)
}

/// `step_up_field` for a form where only some choices need it (`when`
/// says which); left empty, the route says whether it was needed.
pub fn step_up_input(
    frame: &Frame,
    tag: &str,
    what: &str,
    flash: Option<&Flash>,
    when: Option<&str>,
) -> Markup {
    let name = format!("_step_up:{tag}");
    let id = format!("su-{tag}");
    let error = flash.and_then(|f| f.error_of(&name));
    if frame.sso {
        return sso_step_up(frame, &name, &id, what, error, when);
    }
    html! {
        div.field.invalid[error.is_some()] {
            label for=(id) { "Your password or 2FA code" span.visually-hidden { " " (what) } }
            input id=(id) type="password" name=(name) autocomplete="current-password" required[when.is_none()]
                aria-invalid=[error.map(|_| "true")] aria-describedby=(format!("{id}-note"));
            @if let Some(e) = error {
                span.error id=(format!("{id}-note")) { (e) }
            } @else if let Some(w) = when {
                span.hint id=(format!("{id}-note")) { (w) }
            } @else {
                span.hint id=(format!("{id}-note")) { "Confirms it is you before a change that cannot be undone." }
            }
        }
    }
}

/// The step-up of someone who came in through single sign-on: proven at
/// the identity provider (which asks them to sign in again), valid for 5
/// minutes; the form then sends `sso` as its proof and the bridge takes
/// the step-up from its cookie.
fn sso_step_up(
    frame: &Frame,
    name: &str,
    id: &str,
    what: &str,
    error: Option<&str>,
    when: Option<&str>,
) -> Markup {
    let back: String =
        percent_encoding::utf8_percent_encode(frame.path, percent_encoding::NON_ALPHANUMERIC)
            .to_string();
    html! {
        div.field.invalid[error.is_some()] id=(id) {
            // Where the change always needs it, the proof goes with the form
            // (and the refusal says to confirm first); where only some
            // choices do, only once confirmed.
            input type="hidden" name=(name) value=(if frame.confirmed || when.is_none() { "sso" } else { "" });
            @if frame.confirmed {
                p.hint { "Confirmed at your identity provider: sensitive actions need no further proof for a few minutes." span.visually-hidden { " " (what) } }
            } @else {
                p {
                    a.button.secondary href=(format!("/api/auth/sso/step-up?next={back}")) { "Confirm at your identity provider" span.visually-hidden { " " (what) } }
                }
                @if let Some(w) = when {
                    span.hint { (w) " Confirm first; the confirmation lasts 5 minutes." }
                } @else {
                    span.hint { "This change needs you to sign in again at your identity provider first; the confirmation lasts 5 minutes." }
                }
            }
            @if let Some(e) = error {
                span.error { (e) }
            }
        }
    }
}

/// `t` in the zone `tz` (a page's), as people read it: "2026-11-23 15:30 CET".
pub fn when_in(t: Timestamp, tz: &str) -> String {
    match jiff::tz::TimeZone::get(tz) {
        Ok(zone) => jiff::Timestamp::from_millisecond(t.millis())
            .map(|ts| ts.to_zoned(zone).strftime("%Y-%m-%d %H:%M %Z").to_string())
            .unwrap_or_else(|_| when(t)),
        Err(_) => when(t),
    }
}

/// `t` in the zone `tz` as a `datetime-local` input's value.
pub fn local_input(t: Timestamp, tz: &str) -> String {
    let zone = jiff::tz::TimeZone::get(tz).unwrap_or(jiff::tz::TimeZone::UTC);
    jiff::Timestamp::from_millisecond(t.millis())
        .map(|ts| ts.to_zoned(zone).strftime("%Y-%m-%dT%H:%M").to_string())
        .unwrap_or_default()
}

/// A time as people read it in the interface (UTC).
pub fn when(t: Timestamp) -> String {
    t.to_rfc3339()
        .replace('T', " ")
        .chars()
        .take(16)
        .collect::<String>()
        + " UTC"
}
