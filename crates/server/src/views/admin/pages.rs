//! Status pages: the list with a "new page" form, and one page's screen:
//! its settings, its groups and components with their status one click
//! away. Forms post to `/api/statuspages…`, `/api/components…` and
//! `/api/component-groups…`.

use super::{
    COMPONENT_STATUSES, Frame, Input, action, bridge, component_status_name, page, step_up_field,
    when,
};
use crate::form_bridge::Flash;
use maud::{Markup, html};
use upstate_core::links::QuickLink;
use upstate_core::public::status_label;
use upstate_core::roles::Permission;
use upstate_core::{Component, ComponentGroup, ComponentStatus, StatusPage};

pub fn pages_list(
    frame: &Frame,
    flash: Option<&Flash>,
    pages: &[(StatusPage, ComponentStatus)],
    current: Option<i64>,
) -> Markup {
    let body = html! {
        header.top { h1 { "Status pages" } }
        section.card aria-labelledby="h-all" {
            h2 #h-all { "All pages" }
            @if pages.is_empty() {
                p.empty { "No status page yet" @if frame.may(Permission::PagesWrite) { ": create the first below" } "." }
            } @else {
                ul.rows {
                    @for (p, status) in pages {
                        li {
                            span {
                                a href=(format!("/admin/pages/{}", p.id)) { strong { (p.name) } }
                                br; span.muted { "/s/" (p.slug) (if p.is_public { "" } else { " · private" }) }
                            }
                            span.actions {
                                span class=(format!("pill s-{}", status.as_str())) { (status_label(*status)) }
                                a href=(format!("/s/{}", p.slug)) { "View" span.visually-hidden { " " (p.name) } }
                                @if current == Some(p.id) {
                                    span.pill.s-none { "current" }
                                } @else {
                                    form.inline method="post" action="/api/statuspages/current" {
                                        (bridge("/admin/pages", "/admin/pages", Some("Current page chosen."), Some(frame.csrf)))
                                        input type="hidden" name="statusPageId:int" value=(p.id);
                                        button.secondary type="submit" { "Work on " (p.name) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if frame.may(Permission::PagesWrite) {
        section.card aria-labelledby="h-new" {
            h2 #h-new { "New page" }
            form.stack method="post" action="/api/statuspages" {
                (bridge("/admin/pages", "/admin/pages/{id}", Some("Page created."), Some(frame.csrf)))
                (Input::new("name", "Name", "text").render(flash))
                (Input { hint: Some("The page's address: /s/your-slug. Lowercase letters, digits and hyphens."), ..Input::new("slug", "Slug", "text") }.render(flash))
                (Input { required: false, ..Input::new("description", "Description", "text") }.render(flash))
                div.field { label { input type="checkbox" name="isPublic:bool" checked; " Public (anyone can open it)" } }
                div { button type="submit" { "Create page" } }
            }
        }
        }
    };
    page(frame, "Status pages", flash, body)
}

pub struct PageScreen {
    pub page: StatusPage,
    pub groups: Vec<ComponentGroup>,
    pub components: Vec<Component>,
    pub links: Vec<QuickLink>,
    /// Whether visitors can open the (private) page with a password.
    pub password_set: bool,
    /// The networks the page is held to.
    pub access: upstate_core::access::PageAccess,
    /// The page's viewers, and whether this install can mail their links.
    pub viewers: Vec<upstate_core::access::Viewer>,
    pub can_mail: bool,
    /// Its audience groups: components only some viewers see.
    pub audiences: Vec<upstate_core::audience::Audience>,
    /// The team's identity provider's button, when single sign-on is set
    /// up (viewers may then sign in through it).
    pub sso_label: Option<String>,
    /// The page's own identity provider for its viewers, if it has one.
    pub viewer_provider: Option<upstate_core::viewer_provider::ViewerProviderView>,
    /// The address this person's request came from, as the page gate sees
    /// it: what to allow, and a sign of a proxy not yet trusted.
    pub your_address: Option<std::net::IpAddr>,
    /// Where visitors reach this install (absolute links in the snippets).
    pub public_url: String,
    /// The install's switches: a feature turned off offers no snippet.
    pub features: upstate_core::settings::Features,
    /// Declared in a setup file (`upstate apply`).
    pub managed: bool,
}

/// The page's own identity provider for its viewers (a customer's tenant):
/// what is saved, the address to register there, and the form.
fn viewer_provider(frame: &Frame, back: &str, s: &PageScreen, flash: Option<&Flash>) -> Markup {
    let id = s.page.id;
    let own = s.viewer_provider.as_ref();
    let redirect = crate::sso::callback_at(&s.public_url);
    html! {
        section.card aria-labelledby="h-viewer-provider" {
            h2 #h-viewer-provider { "Viewers\u{2019} identity provider" }
            p.muted {
                "Give this page\u{2019}s viewers a provider of their own, such as a customer\u{2019}s Entra, Okta or Keycloak tenant, in place of the team\u{2019}s. "
                "Register the redirect URI below there, and tick \u{201c}Viewers can also sign in with single sign-on\u{201d} above."
            }
            dl.facts #viewer-provider {
                dt { "Redirect URI" } dd { code { (redirect) } }
                @if let Some(own) = own {
                    dt { "Issuer" } dd { (own.issuer) }
                    dt { "Client id" } dd { (own.client_id) }
                    @if !own.client_secret_set { dt { "Client secret" } dd.missing { "Missing: viewers cannot sign in through it until it is saved again." } }
                    dt { "Who comes in" } dd { @if own.admit_all { "Everyone it signs in" } @else { "Invited emails and allowed domains" } }
                } @else {
                    dt { "Provider" } dd { "None of its own: viewers use the team\u{2019}s, when single sign-on is set up." }
                }
            }
            form.stack method="post" action=(format!("/api/statuspages/{id}/viewer-provider")) {
                (bridge(back, back, Some("Viewers\u{2019} identity provider saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                (Input { value: own.map(|o| o.issuer.clone()), hint: Some("Such as https://login.microsoftonline.com/TENANT/v2.0"), ..Input::new("issuer", "Provider issuer URL", "url") }.render(flash))
                (Input { value: own.map(|o| o.client_id.clone()), autocomplete: Some("off"), ..Input::new("clientId", "Provider client id", "text") }.render(flash))
                (Input { required: false, autocomplete: Some("new-password"), hint: Some(if own.is_some_and(|o| o.client_secret_set) { "Saved. Leave empty to keep it." } else { "The client secret the provider gave." }), ..Input::new("clientSecret", "Provider client secret", "password") }.render(flash))
                (Input { value: own.map(|o| o.button_label.clone()), required: false, ..Input::new("buttonLabel", "Provider button label", "text") }.render(flash))
                div.field {
                    input type="hidden" name="admitAll:bool" value="";
                    label { input type="checkbox" name="admitAll:bool" checked[own.is_some_and(|o| o.admit_all)]; " Let in everyone this provider signs in" }
                    span.hint { "Their email must be verified by the provider. Unticked, only invited emails and allowed domains come in." }
                }
                div { button.secondary type="submit" { "Save provider" } }
            }
            @if own.is_some() {
                (action(frame, back, &format!("/api/statuspages/{id}/viewer-provider"), "DELETE", "Remove the provider", Some("Remove the page\u{2019}s own provider? Its viewers then sign in through the team\u{2019}s."), Some("Viewers\u{2019} identity provider removed.")))
            }
        }
    }
}

/// The page's audience groups, each with its form, and a form for a new
/// one: which components only some viewers see.
fn audiences(frame: &Frame, back: &str, s: &PageScreen, flash: Option<&Flash>) -> Markup {
    let p = &s.page;
    let group_form = |a: Option<&upstate_core::audience::Audience>| {
        let tag = a.map_or_else(|| "aud-new".to_string(), |a| format!("aud-{}", a.id));
        let flash = flash.and_then(|f| f.of_form(&tag));
        // What was ticked last time, when the form comes back with an error.
        let ticked: Vec<i64> = match flash.and_then(|f| f.values_of("componentIds")) {
            Some(sent) => sent.iter().filter_map(|v| v.parse().ok()).collect(),
            None => a.map(|a| a.component_ids.clone()).unwrap_or_default(),
        };
        let (action, method, done, button) = match a {
            Some(a) => (
                format!("/api/statuspages/{}/audiences/{}", p.id, a.id),
                "PUT",
                "Audience saved.",
                "Save audience",
            ),
            None => (
                format!("/api/statuspages/{}/audiences", p.id),
                "POST",
                "Audience added.",
                "Add audience",
            ),
        };
        html! {
            form.stack method="post" action=(action) {
                (bridge(back, back, Some(done), Some(frame.csrf)))
                input type="hidden" name="_method" value=(method);
                input type="hidden" name="_form" value=(tag);
                (Input { value: a.map(|a| a.name.clone()), id: Some(&format!("{tag}-name")), ..Input::new("name", "Audience name", "text") }.render(flash))
                fieldset.field.invalid[flash.and_then(|f| f.error_of("componentIds")).is_some()] {
                    legend { "Components only this audience sees" }
                    input type="hidden" name="componentIds[]:int" value="";
                    div.choices {
                        @for c in &s.components {
                            label { input type="checkbox" name="componentIds[]:int" value=(c.id) checked[ticked.contains(&c.id)]; " " (c.name) }
                        }
                    }
                    @if let Some(e) = flash.and_then(|f| f.error_of("componentIds")) { span.error { (e) } }
                }
                (Input { value: a.map(|a| a.emails.join("\n")), id: Some(&format!("{tag}-emails")), form_name: Some("emails:lines"), required: false, hint: Some("One address per line."), ..Input::new("emails", "Viewers", "textarea") }.render(flash))
                (Input { value: a.map(|a| a.email_domains.join("\n")), id: Some(&format!("{tag}-domains")), form_name: Some("emailDomains:lines"), required: false, hint: Some("One per line, such as example.com: every viewer of these domains is in the audience."), ..Input::new("emailDomains", "Viewer email domains", "textarea") }.render(flash))
                div { button.secondary type="submit" { (button) } }
            }
        }
    };
    html! {
        section.card aria-labelledby="h-audiences" {
            h2 #h-audiences { "Audiences" }
            p.muted { "Show some components only to some viewers, such as each customer their own. Components in no audience are shown to everyone who opens the page; a component in an audience only to its viewers, in every format and in the messages they get. Visitors who are not viewers see the shared components only." }
            @if s.audiences.is_empty() { p.empty { "No audiences: everyone who opens the page sees all of it." } }
            @for a in &s.audiences {
                details.audience {
                    summary {
                        strong { (a.name) } " "
                        span.muted {
                            (count(a.component_ids.len(), "component")) " · "
                            (count(a.emails.len(), "viewer")) " · "
                            (count(a.email_domains.len(), "domain"))
                        }
                    }
                    (group_form(Some(a)))
                    (action(frame, back, &format!("/api/statuspages/{}/audiences/{}", p.id, a.id), "DELETE", &format!("Delete audience {}", a.name), Some(&format!("Delete the audience {}? Its components are shown to everyone again, unless another audience holds them.", a.name)), Some("Audience deleted.")))
                }
            }
            h3 { "New audience" }
            (group_form(None))
        }
    }
}

/// "1 component", "2 components".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Where the page is read and how other sites embed it, ready to copy:
/// what operators otherwise dig out of the documentation.
fn share(s: &PageScreen) -> Markup {
    let p = &s.page;
    let base = &s.public_url;
    let slug = &p.slug;
    let f = &s.features;
    let rows: [(bool, &str, String, &str); 8] = [
        (
            true,
            "Status page",
            format!("{base}/s/{slug}"),
            "The page itself.",
        ),
        (
            f.feeds,
            "RSS feed",
            format!("{base}/api/feed/rss?page={slug}"),
            "Incidents and maintenance for feed readers (format=atom for Atom).",
        ),
        (
            f.calendar,
            "Calendar",
            format!("{base}/api/calendar?page={slug}"),
            "Maintenance windows for calendar apps (iCalendar).",
        ),
        (
            f.badges,
            "Badge",
            format!("{base}/api/badge?page={slug}"),
            "An SVG status badge for READMEs and dashboards.",
        ),
        (
            f.widget,
            "Widget",
            format!("<script src=\"{base}/api/widget?page={slug}&format=js\" async></script>"),
            "Paste where the status should show on your site.",
        ),
        (
            true,
            "Status JSON",
            format!("{base}/api/public/status/{slug}"),
            "The public read API (docs/api.md).",
        ),
        (
            true,
            "Statuspage v2 JSON",
            format!("{base}/s/{slug}/api/v2/summary.json"),
            "For tools built for Atlassian Statuspage.",
        ),
        (
            true,
            "Atlassian's widget",
            format!("<statuspage-widget src=\"{base}/s/{slug}?page={slug}\"></statuspage-widget>"),
            "Atlassian's <statuspage-widget> reads this page too.",
        ),
    ];
    html! {
        section.card aria-labelledby="h-share" {
            h2 #h-share { "Share and embed" }
            @if !p.is_public { p.muted { "The page is private: these work for visitors with the page's password in a browser; feeds and badges answer 404." } }
            @let off: Vec<&str> = [(f.feeds, "feeds"), (f.calendar, "calendar"), (f.badges, "badges"), (f.widget, "widget")]
                .into_iter().filter(|(on, _)| !on).map(|(_, n)| n).collect();
            @if !off.is_empty() {
                p.muted { "Turned off in " a href="/admin/settings#h-features" { "Settings" } ", so not offered here: " (off.join(", ")) "." }
            }
            dl.share {
                @for (_, label, value, hint) in rows.into_iter().filter(|r| r.0) {
                    dt { (label) }
                    dd {
                        code { (value) }
                        span.muted { (hint) }
                    }
                }
            }
        }
    }
}

/// The accent colour's contrast with white (WCAG), as a hint beside it:
/// links in that colour on the page's white cards must stay readable.
fn contrast_hint(hex: &str) -> String {
    let channel = |i: usize| {
        let v =
            u8::from_str_radix(hex.get(i..i + 2).unwrap_or("00"), 16).unwrap_or(0) as f64 / 255.0;
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    let ratio = 1.05 / (l + 0.05);
    if ratio >= 4.5 {
        format!("Contrast with white {ratio:.1}:1, readable as link text. Such as #2563eb.")
    } else {
        format!(
            "Low contrast with white ({ratio:.1}:1, under 4.5:1): links in this colour are hard to read. Pick a darker colour."
        )
    }
}

/// A page's layout: groups in order, components in order with their group.
struct Layout<'a> {
    page: i64,
    groups: Vec<&'a ComponentGroup>,
    comps: Vec<(&'a Component, Option<i64>)>,
}

impl<'a> Layout<'a> {
    fn of(s: &'a PageScreen) -> Layout<'a> {
        let mut groups: Vec<&ComponentGroup> = s.groups.iter().collect();
        groups.sort_by_key(|g| (g.order, g.id));
        // Display order: each group's components, then the ungrouped ones.
        let mut comps = Vec::new();
        for g in &groups {
            comps.extend(
                s.components
                    .iter()
                    .filter(|c| c.group_id == Some(g.id))
                    .map(|c| (c, c.group_id)),
            );
        }
        comps.extend(
            s.components
                .iter()
                .filter(|c| c.group_id.is_none())
                .map(|c| (c, None)),
        );
        Layout {
            page: s.page.id,
            groups,
            comps,
        }
    }

    /// The hidden fields of this layout, for `PUT /api/groups/reorder`.
    fn fields(&self) -> Markup {
        html! {
            input type="hidden" name="statusPageId:int" value=(self.page);
            @for g in &self.groups { input type="hidden" name="groupIds[]:int" value=(g.id); }
            @for (c, g) in &self.comps {
                input type="hidden" name="components[][id]:int" value=(c.id);
                input type="hidden" name="components[][groupId]:int" value=[g];
            }
        }
    }

    /// The layout with component `i` moved `by` places within its group.
    fn component_moved(&self, i: usize, up: bool) -> Option<Layout<'a>> {
        let group = self.comps[i].1;
        let j = if up {
            (0..i).rev().find(|&j| self.comps[j].1 == group)?
        } else {
            (i + 1..self.comps.len()).find(|&j| self.comps[j].1 == group)?
        };
        let mut comps = self.comps.clone();
        comps.swap(i, j);
        Some(Layout {
            page: self.page,
            groups: self.groups.clone(),
            comps,
        })
    }

    fn group_moved(&self, i: usize, up: bool) -> Option<Layout<'a>> {
        let j = if up {
            i.checked_sub(1)?
        } else {
            Some(i + 1).filter(|&j| j < self.groups.len())?
        };
        let mut groups = self.groups.clone();
        groups.swap(i, j);
        Some(Layout {
            page: self.page,
            groups,
            comps: self.comps.clone(),
        })
    }
}

fn layout_button(
    frame: &Frame,
    back: &str,
    layout: Option<Layout>,
    label: &str,
    hidden: &str,
) -> Markup {
    html! {
        @if let Some(l) = layout {
            form.inline method="post" action="/api/groups/reorder" {
                (bridge(back, back, Some("Order saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                (l.fields())
                button.secondary.icon type="submit" title=(format!("{label} {hidden}")) { (if label == "Move up" { "↑" } else { "↓" }) span.visually-hidden { (label) " " (hidden) } }
            }
        }
    }
}

/// A status in a word, for the one-click buttons (their accessible name
/// says it whole).
fn short_status(s: ComponentStatus) -> &'static str {
    match s {
        ComponentStatus::Operational => "Operational",
        ComponentStatus::Degraded => "Degraded",
        ComponentStatus::PartialOutage => "Partial",
        ComponentStatus::MajorOutage => "Major",
        ComponentStatus::Maintenance => "Maintenance",
    }
}

fn component_row(frame: &Frame, back: &str, layout: &Layout, i: usize) -> Markup {
    let c = layout.comps[i].0;
    html! {
        li.comp data-component=(c.id) {
            div.comp-head {
            span { strong { a href=(format!("/admin/components/{}", c.id)) { (c.name) } } @if !c.description.is_empty() { div.muted.msg.rendered { (crate::views::message_markdown(&c.description)) } } }
            @if !frame.may(Permission::PagesWrite) {
                span class=(format!("pill s-{}", c.status.as_str())) { (component_status_name(c.status)) }
            } @else {
                // One click sets a status: each is its own submit button
                // (the pressed one is the current status).
                form.inline.statuses method="post" action=(format!("/api/components/{}/status", c.id)) role="group" aria-label=(format!("Status of {}", c.name)) {
                    (bridge(back, back, Some("Status set."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PATCH";
                    @for s in COMPONENT_STATUSES {
                        button type="submit" name="status" value=(s.as_str())
                            class=(format!("status-button s-{}", s.as_str()))
                            aria-pressed=(if s == c.status { "true" } else { "false" })
                            aria-label=(format!("Set {} to {}", c.name, component_status_name(s))) {
                            (short_status(s))
                        }
                    }
                }
            }
            }
            @if frame.may(Permission::PagesWrite) {
            span.actions.comp-tools {
                (layout_button(frame, back, layout.component_moved(i, true), "Move up", &c.name))
                (layout_button(frame, back, layout.component_moved(i, false), "Move down", &c.name))
                @if !layout.groups.is_empty() {
                    form.inline method="post" action="/api/groups/reorder" {
                        (bridge(back, back, Some("Component moved."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="PUT";
                        input type="hidden" name="statusPageId:int" value=(layout.page);
                        @for g in &layout.groups { input type="hidden" name="groupIds[]:int" value=(g.id); }
                        // Every other component keeps its place; this one's group is the select.
                        @for (j, (other, g)) in layout.comps.iter().enumerate() {
                            input type="hidden" name="components[][id]:int" value=(other.id);
                            @if j == i {
                                label.visually-hidden for=(format!("grp-{}", c.id)) { "Group of " (c.name) }
                                select id=(format!("grp-{}", c.id)) name="components[][groupId]:int" {
                                    option value="" selected[g.is_none()] { "No group" }
                                    @for grp in &layout.groups { option value=(grp.id) selected[*g == Some(grp.id)] { (grp.name) } }
                                }
                            } @else {
                                input type="hidden" name="components[][groupId]:int" value=[g];
                            }
                        }
                        button.secondary type="submit" { "Move" span.visually-hidden { " " (c.name) " to this group" } }
                    }
                }
                (action(frame, back, &format!("/api/components/{}", c.id), "DELETE", &format!("Delete {}", c.name), Some(&format!("Delete the component {}? Its history goes with it.", c.name)), Some("Component deleted.")))
                details.edit {
                    summary { "Edit" span.visually-hidden { " " (c.name) } }
                    form.stack method="post" action=(format!("/api/components/{}", c.id)) {
                        (bridge(back, back, Some("Component saved."), Some(frame.csrf)))
                        input type="hidden" name="_method" value="PATCH";
                        div.field {
                            label for=(format!("cn-{}", c.id)) { "Name" span.visually-hidden { " of " (c.name) } }
                            input id=(format!("cn-{}", c.id)) type="text" name="name" value=(c.name) required;
                        }
                        div.field {
                            label for=(format!("cd-{}", c.id)) { "Description" span.visually-hidden { " of " (c.name) } }
                            textarea id=(format!("cd-{}", c.id)) name="description" rows="2" data-preview="message" { (c.description) }
                        }
                        div { button.secondary type="submit" { "Save" span.visually-hidden { " " (c.name) } } }
                    }
                }
            }
            }
        }
    }
}

pub fn page_screen(frame: &Frame, flash: Option<&Flash>, s: &PageScreen) -> Markup {
    let p = &s.page;
    let back = format!("/admin/pages/{}", p.id);
    let layout = Layout::of(s);
    let in_group = |g: Option<i64>| -> Vec<usize> {
        (0..layout.comps.len())
            .filter(|&i| layout.comps[i].1 == g)
            .collect()
    };
    // What a viewer sees is the page as it stands, with no control to change it.
    let w = frame.may(Permission::PagesWrite);
    let body = html! {
        header.top {
            h1 { (p.name) @if s.managed { " " span.pill.s-none { "Managed as code" } } }
            a.button.secondary href=(format!("/s/{}", p.slug)) { "View public page" }
        }
        @if s.managed {
            p.muted { "A setup file declares this page: the next " code { "upstate apply" } " puts back what the file says about it, its groups and its components (docs/setup-as-code.md)." }
        }
        // A long screen: one Tab reaches each part instead of every control.
        @if w {
            nav.jump aria-label="On this screen" {
                a href="#h-add" { "Add a component" }
                a href="#h-group" { "Add a group" }
                a href="#h-links" { "Quick links" }
                a href="#h-settings" { "Settings" }
                a href="#h-share" { "Share and embed" }
                a href="#h-visitors" { "Who can open it" }
            }
        }
        section.card aria-labelledby="h-components" {
            h2 #h-components { "Components" }
            @if w && !s.components.is_empty() {
                p.muted.hint-drag { "Drag rows to reorder them or move them between groups, or use the arrow buttons." }
                // Filled and sent by admin.js after a drag.
                form #layout-form method="post" action="/api/groups/reorder" hidden {
                    (bridge(&back, &back, Some("Order saved."), Some(frame.csrf)))
                    input type="hidden" name="_method" value="PUT";
                    input type="hidden" name="statusPageId:int" value=(p.id);
                }
            }
            @if s.components.is_empty() { p.empty { "No components yet" @if w { ": add what your users rely on below" } "." } }
            @for (gi, g) in layout.groups.iter().enumerate() {
                div.group-head {
                    h3 { (g.name) }
                    @if w {
                        span.actions {
                            (layout_button(frame, &back, layout.group_moved(gi, true), "Move up", &format!("group {}", g.name)))
                            (layout_button(frame, &back, layout.group_moved(gi, false), "Move down", &format!("group {}", g.name)))
                        }
                    }
                }
                @let members = in_group(Some(g.id));
                @if members.is_empty() && !w {
                    p.empty { "No components in this group." }
                } @else {
                    // Empty, it is where a dragged component can be dropped.
                    ul.rows data-group=(g.id) {
                        @for i in members { (component_row(frame, &back, &layout, i)) }
                    }
                }
            }
            @let ungrouped = in_group(None);
            @if !ungrouped.is_empty() {
                @if !layout.groups.is_empty() { h3 { "Not in a group" } }
                ul.rows data-group="" { @for i in ungrouped { (component_row(frame, &back, &layout, i)) } }
            }
        }
        @if w {
        div.grid {
            section.card aria-labelledby="h-add" {
                h2 #h-add { "Add a component" }
                form.stack method="post" action="/api/components" {
                    (bridge(&back, &back, Some("Component added."), Some(frame.csrf)))
                    input type="hidden" name="statusPageId:int" value=(p.id);
                    (Input { id: Some("f-cname"), ..Input::new("name", "Component name", "text") }.render(None))
                    (Input { id: Some("f-cdescription"), required: false, hint: Some("Markdown, shown under its name on the page."), preview: Some("message"), ..Input::new("description", "Component description", "textarea") }.render(None))
                    div.field {
                        label for="f-group" { "Group" }
                        select #f-group name="groupId:int" {
                            option value="" { "No group" }
                            @for g in &s.groups { option value=(g.id) { (g.name) } }
                        }
                    }
                    div { button type="submit" { "Add component" } }
                }
            }
            section.card aria-labelledby="h-group" {
                h2 #h-group { "Add a group" }
                form.stack method="post" action="/api/component-groups" {
                    (bridge(&back, &back, Some("Group added."), Some(frame.csrf)))
                    input type="hidden" name="statusPageId:int" value=(p.id);
                    (Input { id: Some("f-gname"), hint: Some("Groups fold components together on the public page."), ..Input::new("name", "Group name", "text") }.render(None))
                    div { button type="submit" { "Add group" } }
                }
                @if !s.groups.is_empty() {
                    ul.rows {
                        @for g in &s.groups {
                            li {
                                form.inline method="post" action=(format!("/api/groups/{}", g.id)) {
                                    (bridge(&back, &back, Some("Group renamed."), Some(frame.csrf)))
                                    input type="hidden" name="_method" value="PATCH";
                                    label.visually-hidden for=(format!("gn-{}", g.id)) { "Name of group " (g.name) }
                                    input id=(format!("gn-{}", g.id)) type="text" name="name" value=(g.name) required;
                                    button.secondary type="submit" { "Rename" span.visually-hidden { " group " (g.name) } }
                                }
                                (action(frame, &back, &format!("/api/component-groups/{}", g.id), "DELETE", &format!("Delete group {}", g.name), Some("Delete this group? Its components stay, ungrouped."), Some("Group deleted.")))
                            }
                        }
                    }
                }
            }
        }
        }
        section.card aria-labelledby="h-links" {
            h2 #h-links { "Quick links" }
            p.muted { "Links in the public page's header: your support site, your main site, your docs." }
            @if s.links.is_empty() { p.empty { "None yet." } }
            @else { ul.rows {
                @for l in &s.links {
                    li {
                        span { strong { (l.label) } br; span.muted { (l.url) } }
                        @if w { (action(frame, &back, &format!("/api/quicklinks/{}", l.id), "DELETE", &format!("Remove link {}", l.label), Some("Remove this link from the public page?"), Some("Link removed."))) }
                    }
                }
            } }
            @if w {
            form.stack method="post" action="/api/quicklinks" {
                (bridge(&back, &back, Some("Link added."), Some(frame.csrf)))
                input type="hidden" name="statusPageId:int" value=(p.id);
                (Input { id: Some("f-link-label"), ..Input::new("label", "Link label", "text") }.render(flash))
                (Input { id: Some("f-link-url"), hint: Some("https://…"), ..Input::new("url", "Link address", "url") }.render(flash))
                div { button type="submit" { "Add link" } }
            }
            }
        }
        @if w {
        section.card aria-labelledby="h-settings" {
            h2 #h-settings { "Settings" }
            form.stack method="post" action=(format!("/api/statuspages/{}", p.id)) {
                (bridge(&back, &back, Some("Settings saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PATCH";
                (Input { value: Some(p.name.clone()), ..Input::new("name", "Name", "text") }.render(flash))
                (Input { value: Some(p.slug.clone()), ..Input::new("slug", "Slug", "text") }.render(flash))
                (Input { value: Some(p.description.clone()), required: false, ..Input::new("description", "Description", "text") }.render(flash))
                (Input { value: Some(p.accent_color.clone()), hint: Some(&contrast_hint(&p.accent_color)), ..Input::new("accentColor", "Accent colour", "text") }.render(flash))
                (Input { value: Some(p.time_zone.clone()), hint: Some("Times on the public page, such as Europe/Berlin."), ..Input::new("timeZone", "Time zone", "text") }.render(flash))
                (Input { value: Some(p.uptime_days.to_string()), form_name: Some("uptimeDays:int"), ..Input::new("uptimeDays", "Days of uptime shown", "number") }.render(flash))
                (Input { value: Some(p.past_incident_days.to_string()), form_name: Some("pastIncidentDays:int"), hint: Some("Days listed one by one under \"Past incidents\"; 0 hides the section."), ..Input::new("pastIncidentDays", "Days of past incidents", "number") }.render(flash))
                (Input { value: p.logo_url.clone(), form_name: Some("logoUrl:null"), required: false, ..Input::new("logoUrl", "Logo URL", "url") }.render(flash))
                (Input { value: p.favicon_url.clone(), form_name: Some("faviconUrl:null"), required: false, hint: Some("The icon browsers show in the tab; ours when empty."), ..Input::new("faviconUrl", "Favicon URL", "url") }.render(flash))
                (Input { value: p.header_image_url.clone(), form_name: Some("headerImageUrl:null"), required: false, hint: Some("An image across the top of the page, such as a banner in your brand's colours."), ..Input::new("headerImageUrl", "Header image URL", "url") }.render(flash))
                (Input { value: Some(p.custom_css.clone()), required: false, hint: Some("Your own CSS, loaded after ours from its own file (/s/{slug}/custom.css): it restyles the page but cannot add scripts or change its security headers. Colours are variables such as --accent, --bg, --card."), ..Input::new("customCss", "Custom CSS", "textarea") }.render(flash))
                (Input { value: p.custom_domain.clone(), form_name: Some("customDomain:null"), required: false, hint: Some("Serve this page at / of this host, such as status.example.com."), ..Input::new("customDomain", "Custom domain", "text") }.render(flash))
                fieldset {
                    legend { "Show" }
                    div.choices {
                        input type="hidden" name="isPublic:bool" value="";
                        label { input type="checkbox" name="isPublic:bool" checked[p.is_public]; "Public" }
                        input type="hidden" name="showUptime:bool" value="";
                        label { input type="checkbox" name="showUptime:bool" checked[p.show_uptime]; "Uptime bars" }
                        input type="hidden" name="showResponseTimes:bool" value="";
                        label { input type="checkbox" name="showResponseTimes:bool" checked[p.show_response_times]; "Response-time charts (monitored components)" }
                        input type="hidden" name="showSubscribe:bool" value="";
                        label { input type="checkbox" name="showSubscribe:bool" checked[p.show_subscribe]; "Subscribe button" }
                    }
                }
                div { button type="submit" { "Save settings" } }
            }
            p.muted { "Created " (when(p.created_at)) "." }
        }
        }
        (share(s))
        @if w {
        section.card aria-labelledby="h-visitors" {
            h2 #h-visitors { "Visitor password" }
            p.muted {
                @if p.is_public { "The page is public: anyone can open it. A password matters once you make it private." }
                @else if s.password_set { "The page is private and opens with its password." }
                @else { "The page is private and closed to visitors until it has a password." }
            }
            form.stack method="post" action=(format!("/api/statuspages/{}/password", p.id)) {
                (bridge(&back, &back, Some("Visitor password set."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                (Input { autocomplete: Some("new-password"), id: Some("f-page-password"), hint: Some("Share it with the people who may see the page."), ..Input::new("password", "New visitor password", "password") }.render(flash))
                div { button.secondary type="submit" { "Set password" } }
            }
            @if s.password_set {
                (action(frame, &back, &format!("/api/statuspages/{}/password", p.id), "DELETE", "Remove the password", Some("Remove the password? A private page is then closed to visitors."), Some("Visitor password removed.")))
            }
        }
        section.card aria-labelledby="h-viewers" {
            h2 #h-viewers { "Viewers" }
            p.muted { "People outside the team who may read this page while it is private: they sign in with a link mailed to them, good once for 15 minutes, and stay signed in for a week on that browser." }
            @if !s.can_mail { p.error role="alert" { "This install has no SMTP server, so viewers cannot get their sign-in links. Set smtp_url first." } }
            form.stack method="post" action=(format!("/api/statuspages/{}/access", p.id)) {
                (bridge(&back, &back, Some("Viewers saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                div.field {
                    input type="hidden" name="viewers:bool" value="";
                    label { input type="checkbox" name="viewers:bool" checked[s.access.viewers]; " Viewers can sign in" }
                    @if p.is_public { span.hint { "The page is public now: viewers matter once you make it private." } }
                }
                div.field {
                    input type="hidden" name="viewerSso:bool" value="";
                    label { input type="checkbox" name="viewerSso:bool" checked[s.access.viewer_sso]; " Viewers can also sign in with single sign-on" }
                    span.hint {
                        @match (&s.viewer_provider, &s.sso_label) {
                            (Some(own), _) => { "Through the page's own provider (below): the sign-in form offers \u{201c}" (own.button_label) "\u{201d}." }
                            (None, Some(l)) => { "Through the team's provider: the sign-in form offers \u{201c}" (l) "\u{201d}. Their email must still be invited or of an allowed domain." }
                            (None, None) => { "Single sign-on is not set up on this install (Settings, Single sign-on); or give the page a provider of its own below." }
                        }
                    }
                }
                (Input {
                    value: Some(s.access.viewer_domains.join("\n")),
                    form_name: Some("viewerDomains:lines"),
                    required: false,
                    hint: Some("One per line, such as example.com. Anyone with an email of these domains may sign in, beside the people you invite."),
                    ..Input::new("viewerDomains", "Allowed email domains", "textarea")
                }.render(flash))
                div { button.secondary type="submit" { "Save viewers" } }
            }
            @if s.viewers.is_empty() {
                p.muted { "No viewers yet." }
            } @else {
                div.scroll-x tabindex="0" role="region" aria-label="Table of the page's viewers" { table.events #viewers {
                    thead { tr { th scope="col" { "Email" } th scope="col" { "Came in" } th scope="col" { "Audiences" } th scope="col" { "Last sign-in" } th scope="col" { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for v in &s.viewers {
                            tr {
                                td { (v.email) }
                                td { @if v.invited { "Invited" } @else { "By domain" } }
                                td {
                                    @let mine: Vec<&str> = s.audiences.iter().filter(|a| a.includes(&v.email)).map(|a| a.name.as_str()).collect();
                                    @if mine.is_empty() { span.muted { "Shared components only" } } @else { (mine.join(", ")) }
                                }
                                td { @match v.signed_in_at { Some(t) => (when(t)), None => "Never" } }
                                td {
                                    (action(frame, &back, &format!("/api/statuspages/{}/viewers/{}/reset", p.id, v.id), "POST", &format!("Revoke links of {}", v.email), Some(&format!("Sign {} out everywhere and stop their feed links?", v.email)), Some("Sessions and links revoked.")))
                                    " "
                                    (action(frame, &back, &format!("/api/statuspages/{}/viewers/{}", p.id, v.id), "DELETE", &format!("Remove {}", v.email), Some(&format!("Remove {}? Their sign-ins, links and subscriptions end at once.", v.email)), Some("Viewer removed.")))
                                }
                            }
                        }
                    }
                } }
            }
            form.stack method="post" action=(format!("/api/statuspages/{}/viewers", p.id)) {
                (bridge(&back, &back, Some("Viewer invited."), Some(frame.csrf)))
                (Input { autocomplete: Some("off"), ..Input::new("email", "Invite by email", "email") }.render(flash))
                div { button.secondary type="submit" { "Invite viewer" } }
            }
        }
        (viewer_provider(frame, &back, s, flash))
        (audiences(frame, &back, s, flash))
        section.card aria-labelledby="h-networks" {
            h2 #h-networks { "Networks" }
            p.muted {
                @if s.access.restricted() { "Only visitors from these networks can open the page, in every format; it stays out of the static copy and the metrics." }
                @else { "Every network can open the page. List networks to hold it to your office or VPN." }
            }
            form.stack method="post" action=(format!("/api/statuspages/{}/access", p.id)) {
                (bridge(&back, &back, Some("Networks saved."), Some(frame.csrf)))
                input type="hidden" name="_method" value="PUT";
                (Input {
                    value: Some(s.access.allowed_networks.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
                    form_name: Some("allowedNetworks:lines"),
                    required: false,
                    hint: Some("One address or CIDR network per line, such as 203.0.113.0/24. Empty: every network."),
                    ..Input::new("allowedNetworks", "Allowed networks", "textarea")
                }.render(flash))
                @if let Some(ip) = s.your_address {
                    p.hint #your-address {
                        "Your address, as Upstate sees it: " code { (ip) } "."
                        @if !s.access.admits(Some(ip)) { " It is not in the list, so you cannot open the page from here." }
                        " Behind a proxy, set trusted_proxies so visitors' own addresses count."
                    }
                }
                div { button.secondary type="submit" { "Save networks" } }
            }
        }
        section.card.danger-zone aria-labelledby="h-delete" {
            h2 #h-delete { "Delete this page" }
            p.muted { "Its components, incidents, maintenance windows and history go with it, for good." }
            form.stack method="post" action=(format!("/api/statuspages/{}", p.id))
                data-confirm=(format!("Delete the page {} and everything on it?", p.name)) {
                (bridge(&back, "/admin/pages", Some("Page deleted."), Some(frame.csrf)))
                input type="hidden" name="_method" value="DELETE";
                (step_up_field(frame, "page", &format!("to delete {}", p.name), flash))
                div { button.danger type="submit" { "Delete page" } }
            }
        }
        }
    };
    page(frame, &p.name, flash, body)
}
