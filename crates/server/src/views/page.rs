//! The main page: banner, active incidents, maintenance, components with
//! their uptime bars, quick links.

use super::chart::{ChartText, response_chart};
use super::{View, layout, overall_key, status_badge, status_class, status_symbol};
use maud::{Markup, html};
use upstate_core::public::overall_status;
use upstate_core::uptime::{
    DayUptime, StatusChange, UptimeSeries, by_component, component_series, day_windows, page_series,
};
use upstate_core::*;
use upstate_store::monitor_stats::Series;

/// With showSubscribe on, the page offers subscriptions: by webhook or chat
/// always, by email when `mail` (this install can send it), and browser
/// notifications where the browser has push.
pub fn status_page(
    v: &View,
    history: &[StatusChange],
    charts: &[(Id, Series)],
    mail: bool,
) -> String {
    let d = v.d;
    let title = format!("{} {}", d.page.name, v.t("page.status"));
    let main = html! {
        div #live data-version=(v.version) {
            (live(v, history, charts))
        }
        // A copy takes no subscriptions: the forms post to the live service.
        @if d.page.show_subscribe && v.copy.is_none() {
            (subscribe_form(v, mail, None))
            (push_offer(v))
        }
        @if !d.quick_links.is_empty() {
            nav.links aria-labelledby="links-h" {
                h2 #links-h { (v.t("section.links")) }
                ul {
                    @for l in &d.quick_links {
                        li { a href=(l.url) rel="noopener" { (l.label) } }
                    }
                }
            }
        }
    };
    layout(v, &title, main)
}

/// Email sign-up: a plain form (no script needed) posting to
/// `/api/subscribers`, which answers with a page saying what happens next.
/// Browser notifications: hidden until `status.js` finds service workers
/// and push in this browser (without script there is nothing to offer).
fn push_offer(v: &View) -> Markup {
    let d = v.d;
    html! {
        section.card.subscribe.push #push hidden aria-labelledby="push-h" data-page=(d.page.id) {
            h2 #push-h { (v.t("push.title")) }
            p { (v.t("push.prompt")) }
            p.meta #push-state role="status" data-on=(v.t("push.on")) data-denied=(v.t("push.denied")) data-failed=(v.t("push.failed")) {}
            button type="button" #push-on { (v.t("push.enable")) }
            " "
            button type="button" #push-off hidden { (v.t("push.disable")) }
        }
    }
}

/// The sign-up form of the page, or of one open incident (`following`):
/// then it names the incident and offers no component choice.
pub(super) fn subscribe_form(v: &View, mail: bool, following: Option<Id>) -> Markup {
    let d = v.d;
    // (value, label): email only where this install can send mail.
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    if mail {
        kinds.push(("email", v.t("subscribe.kind_email")));
    }
    kinds.extend([
        ("webhook", v.t("subscribe.kind_webhook")),
        ("slack", "Slack"),
        ("discord", "Discord"),
        ("teams", "Microsoft Teams"),
    ]);
    let (label, kind) = if mail {
        (v.t("subscribe.target"), "text")
    } else {
        (v.t("subscribe.url"), "url")
    };
    html! {
        section.card.subscribe #subscribe aria-labelledby="sub-h" {
            @if following.is_some() {
                h2 #sub-h { (v.t("subscribe.follow_title")) }
                p { (v.t("subscribe.follow_prompt")) }
            } @else {
                h2 #sub-h { (v.t("subscribe.title")) }
                p { (v.t("subscribe.prompt")) }
            }
            form method="post" action=(format!("/api/subscribers?lang={}", v.lang.code())) {
                input type="hidden" name="slug" value=(d.page.slug);
                @if let Some(id) = following { input type="hidden" name="incidentId:int" value=(id); }
                fieldset.kinds {
                    legend { (v.t("subscribe.by")) }
                    @for (i, (value, name)) in kinds.iter().enumerate() {
                        label { input type="radio" name="kind" value=(value) checked[i == 0]; " " (name) }
                    }
                }
                label for="sub-email" #sub-label data-email=(v.t("subscribe.email")) data-url=(v.t("subscribe.url")) { (label) }
                div.row {
                    input #sub-email type=(kind) name="target" required autocomplete=[mail.then_some("email")] aria-describedby="sub-note";
                    button type="submit" { (v.t("subscribe.submit")) }
                }
                @if d.components.len() > 1 && following.is_none() {
                    details {
                        summary { (v.t("subscribe.components")) }
                        ul.choices {
                            @for c in &d.components {
                                li { label { input type="checkbox" name="componentIds[]" value=(c.id); " " (c.name) } }
                            }
                        }
                    }
                }
                p.meta #sub-note {
                    @if mail { (v.t("subscribe.note")) " " }
                    (v.t("subscribe.note_hooks"))
                }
            }
        }
    }
}

/// The part of the page live updates replace: everything that moves. In
/// the order a visitor's questions come: is anything wrong, is my thing
/// working, is work planned, what happened lately.
fn live(v: &View, history: &[StatusChange], charts: &[(Id, Series)]) -> Markup {
    let d = v.d;
    let overall = overall_status(&d.components, &d.incidents);
    let active: Vec<&Incident> = d
        .incidents
        .iter()
        .filter(|i| i.status != IncidentStatus::Resolved)
        .collect();
    html! {
        section class={ "banner " (status_class(overall)) } role="status" aria-live="polite" data-status=(overall.as_str()) {
            span.sym aria-hidden="true" { (status_symbol(overall)) }
            " "
            span.label { (v.t(overall_key(overall))) }
        }
        p.updated { (v.t("label.updated")) ": " (v.when(d.updated_at)) }
        @if !active.is_empty() {
            section aria-labelledby="inc-h" {
                h2 #inc-h { (v.t("section.incidents")) }
                @for i in active { (incident_summary(v, i)) }
            }
        }
        @if !d.components.is_empty() {
            section aria-labelledby="cmp-h" {
                h2 #cmp-h { (v.t("section.components")) }
                (components(v, history, charts))
            }
        }
        @if !d.maintenance.is_empty() {
            section aria-labelledby="mnt-h" {
                h2 #mnt-h { (v.t("section.maintenance")) }
                @for m in &d.maintenance { (maintenance_card(v, m)) }
            }
        }
        @if d.page.past_incident_days > 0 { (past_incidents(v)) }
    }
}

/// The last days, newest first, each with the incidents that began on it
/// and the maintenance that ended on it (or "No incidents reported."), as
/// Statuspage shows them; a link to the whole history below.
fn past_incidents(v: &View) -> Markup {
    let d = v.d;
    let days = day_windows(&v.tz, d.page.past_incident_days.clamp(1, 90) as u32, v.now);
    html! {
        section.past aria-labelledby="past-h" {
            h2 #past-h { (v.t("section.recent_incidents")) }
            @for (date, start, end) in days.iter().rev() {
                @let incidents: Vec<&Incident> = d.incidents.iter()
                    .filter(|i| i.created_at >= *start && i.created_at < *end).collect();
                @let windows: Vec<&Maintenance> = d.past_maintenance.iter()
                    .filter(|m| matches!(m.status, MaintenanceStatus::Completed | MaintenanceStatus::Scheduled)
                        && m.scheduled_end_time >= *start && m.scheduled_end_time < *end).collect();
                div.day {
                    h3 { time datetime=(date.to_string()) { (v.day_title(*date)) } }
                    @if incidents.is_empty() && windows.is_empty() {
                        p.meta { (v.t("label.no_incidents_reported")) }
                    }
                    @for i in incidents { (past_incident(v, i)) }
                    @for m in windows { (past_maintenance(v, m)) }
                }
            }
            @if d.features.history {
                p.more { a href=(v.href("/history")) { (v.t("nav.incident_history")) " " span.arr aria-hidden="true" { "→" } } }
            }
        }
    }
}

/// An incident in a list of what happened: title in its impact's colour,
/// the latest update, when it began, how long it lasted, what it touched.
pub(super) fn past_incident(v: &View, i: &Incident) -> Markup {
    let affected = component_names(v, &i.affected_components);
    html! {
        article class={ "past-item impact-" (i.impact.as_str()) } data-incident=(i.id) {
            h4 { a href=(v.href(&format!("/incidents/{}", i.id))) { (i.title) } }
            @if let Some(u) = i.updates.first() {
                div.msg.md dir="auto" { strong { (v.t(incident_status_key(u.status))) } " – " (super::message_markdown(&u.message)) }
            }
            p.meta {
                time datetime=(i.created_at.to_rfc3339()) { (v.absolute(i.created_at)) }
                @if let Some(d) = lasted(v, i) { " · " (d) }
                " · " (v.t(impact_key(i.impact)))
                @if !affected.is_empty() { " · " (v.t("label.affected")) ": " (affected) }
            }
        }
    }
}

/// A maintenance window in a list of what happened.
pub(super) fn past_maintenance(v: &View, m: &Maintenance) -> Markup {
    let affected = component_names(v, &m.affected_components);
    html! {
        article.past-item.maint data-maintenance=(m.id) {
            h4 { a href=(v.href(&format!("/maintenance/{}", m.id))) { (m.title) } }
            p.meta {
                // Among past windows, "scheduled" is one nobody started.
                strong { (v.t(match m.status {
                    MaintenanceStatus::Scheduled => "maintenance.not_started",
                    other => maintenance_status_key(other),
                })) } " · "
                time datetime=(m.scheduled_start_time.to_rfc3339()) { (v.absolute(m.scheduled_start_time)) }
                " – " (v.absolute(m.scheduled_end_time))
                " · " (v.duration(m.scheduled_end_time.millis() - m.scheduled_start_time.millis()))
                @if !affected.is_empty() { " · " (v.t("label.affected")) ": " (affected) }
            }
        }
    }
}

/// How long an incident lasted ("Lasted 2 h 5 min"), or has lasted so far.
pub(super) fn lasted(v: &View, i: &Incident) -> Option<String> {
    match i.resolved_at {
        Some(end) => Some(
            v.t("incident.lasted")
                .replace("{d}", &v.duration(end.millis() - i.created_at.millis())),
        ),
        None if i.status != IncidentStatus::Resolved => Some(
            v.t("incident.ongoing_for")
                .replace("{d}", &v.duration(v.now.millis() - i.created_at.millis())),
        ),
        None => None,
    }
}

/// An open incident on the main page: what it is, the latest update, and
/// the earlier ones behind "All updates" (a `details`, no script needed).
fn incident_summary(v: &View, i: &Incident) -> Markup {
    let affected = component_names(v, &i.affected_components);
    html! {
        article class={ "card impact-" (i.impact.as_str()) } data-incident=(i.id) {
            h3 { a href=(v.href(&format!("/incidents/{}", i.id))) { (i.title) } }
            p.meta {
                strong { (v.t(incident_status_key(i.status))) } " · " (v.t(impact_key(i.impact)))
                @if let Some(d) = lasted(v, i) { " · " (d) }
                @if !affected.is_empty() { " · " (v.t("label.affected")) ": " (affected) }
            }
            @if let Some((latest, earlier)) = i.updates.split_first() {
                div.latest {
                    p.when { strong { (v.t(incident_status_key(latest.status))) } " — " (v.when(latest.created_at)) }
                    div.msg.md dir="auto" { (super::message_markdown(&latest.message)) }
                }
                @if !earlier.is_empty() {
                    details.more-updates {
                        summary { (v.lang.tn("incident.all_updates", i.updates.len() as i64)) }
                        ol.timeline {
                            @for u in earlier {
                                li {
                                    p.when { strong { (v.t(incident_status_key(u.status))) } " — " (v.when(u.created_at)) }
                                    div.msg.md dir="auto" { (super::message_markdown(&u.message)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn component_names(v: &View, ids: &[Id]) -> String {
    ids.iter()
        .filter_map(|id| v.d.components.iter().find(|c| c.id == *id))
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn impact_key(i: Impact) -> &'static str {
    match i {
        Impact::None => "impact.none",
        Impact::Minor => "impact.minor",
        Impact::Major => "impact.major",
        Impact::Critical => "impact.critical",
    }
}

pub(super) fn incident_status_key(s: IncidentStatus) -> &'static str {
    match s {
        IncidentStatus::Investigating => "incident.investigating",
        IncidentStatus::Identified => "incident.identified",
        IncidentStatus::Monitoring => "incident.monitoring",
        IncidentStatus::Resolved => "incident.resolved",
    }
}

pub(super) fn maintenance_status_key(s: MaintenanceStatus) -> &'static str {
    match s {
        MaintenanceStatus::Scheduled => "maintenance.scheduled",
        MaintenanceStatus::InProgress => "maintenance.in_progress",
        MaintenanceStatus::Completed => "maintenance.completed",
        MaintenanceStatus::Cancelled => "maintenance.cancelled",
    }
}

/// An incident with its timeline, newest update first.
pub(super) fn incident_card(v: &View, i: &Incident) -> Markup {
    let affected = component_names(v, &i.affected_components);
    html! {
        article class={ "card impact-" (i.impact.as_str()) @if i.status == IncidentStatus::Resolved { " resolved" } } data-incident=(i.id) {
            h3 { a href=(v.href(&format!("/incidents/{}", i.id))) { (i.title) } }
            p.meta {
                strong { (v.t(incident_status_key(i.status))) } " · " (v.t(impact_key(i.impact)))
                @if let Some(d) = lasted(v, i) { " · " (d) }
                @if !affected.is_empty() { " · " (v.t("label.affected")) ": " (affected) }
            }
            ol.timeline {
                @for u in &i.updates {
                    li {
                        p.when { strong { (v.t(incident_status_key(u.status))) } " — " (v.when(u.created_at)) }
                        div.msg.md dir="auto" { (super::message_markdown(&u.message)) }
                    }
                }
            }
        }
    }
}

pub(super) fn maintenance_card(v: &View, m: &Maintenance) -> Markup {
    let affected = component_names(v, &m.affected_components);
    html! {
        article.card.maint data-maintenance=(m.id) {
            h3 { a href=(v.href(&format!("/maintenance/{}", m.id))) { (m.title) } }
            p.meta {
                strong { (v.t(maintenance_status_key(m.status))) } " · "
                (v.t("label.scheduled")) " " (v.when(m.scheduled_start_time)) " – "
                time datetime=(m.scheduled_end_time.to_rfc3339()) { (v.absolute(m.scheduled_end_time)) }
                @if !affected.is_empty() { " · " (v.t("label.affected")) ": " (affected) }
            }
            // Markdown, as incident messages are.
            @if !m.description.is_empty() { div.msg.md dir="auto" { (super::message_markdown(&m.description)) } }
            @if !m.updates.is_empty() {
                ol.timeline {
                    @for u in &m.updates {
                        li {
                            p.when { strong { (v.t(maintenance_status_key(u.status))) } " — " (v.when(u.created_at)) }
                            div.msg.md dir="auto" { (super::message_markdown(&u.message)) }
                        }
                    }
                }
            }
        }
    }
}

/// Above this many components a page folds each group into one row (its
/// name, its members' worst status, one bar for all of them, and those of
/// its members that are not operational), with each member's own bar on
/// the group's part of `/s/{slug}/components`: a thousand components' bars
/// are 14 MB of HTML, built again on every change.
pub const FOLD_ABOVE: usize = 100;

/// How many components one part of `/s/{slug}/components` shows in full.
pub const COMPONENTS_PER_PART: usize = 100;

/// Which components a part of `/s/{slug}/components` shows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Members {
    All,
    Group(Id),
    Ungrouped,
}

impl Members {
    /// The query string that names these (empty for all).
    pub fn query(self) -> String {
        match self {
            Members::All => String::new(),
            Members::Group(id) => format!("group={id}"),
            Members::Ungrouped => "group=none".into(),
        }
    }

    fn holds(self, c: &Component) -> bool {
        match self {
            Members::All => true,
            Members::Group(id) => c.group_id == Some(id),
            Members::Ungrouped => c.group_id.is_none(),
        }
    }

    /// The components' part's URL (`part` from 0).
    fn href(self, v: &View, part: usize) -> String {
        let mut q = vec![self.query()];
        if part > 0 {
            q.push(format!("p={}", part + 1));
        }
        q.retain(|x| !x.is_empty());
        match q.is_empty() {
            true => v.href("/components"),
            false => v.href(&format!("/components?{}", q.join("&"))),
        }
    }
}

/// What every row of a components panel needs: the days' windows and each
/// component's series, found by id.
struct Panel<'a> {
    v: &'a View<'a>,
    days: u32,
    windows: Vec<(jiff::civil::Date, Timestamp, Timestamp)>,
    series: Option<std::collections::HashMap<Id, UptimeSeries>>,
    charts: &'a [(Id, Series)],
}

impl<'a> Panel<'a> {
    fn new(v: &'a View<'a>, history: &[StatusChange], charts: &'a [(Id, Series)]) -> Self {
        let d = v.d;
        let days = d.page.uptime_days.clamp(1, 365) as u32;
        let windows = day_windows(&v.tz, days, v.now);
        let series = d.page.show_uptime.then(|| {
            let by_component = by_component(history);
            d.components
                .iter()
                .map(|c| {
                    let own = by_component.get(&c.id).map_or(&[][..], Vec::as_slice);
                    (c.id, component_series(own, &windows, v.now))
                })
                .collect()
        });
        Panel {
            v,
            days,
            windows,
            series,
            charts,
        }
    }

    /// A component in full: name, description, bar, percentage, status, chart.
    fn row(&self, c: &Component) -> Markup {
        let v = self.v;
        let d = v.d;
        let series = self.series.as_ref().and_then(|s| s.get(&c.id));
        html! {
            li.comp data-component=(c.id) {
                div.cname {
                    span.name { (c.name) }
                    @if let Some((_, m)) = d.third_party.iter().find(|(id, _)| *id == c.id) {
                        " "
                        a.third href=(m.url) rel="noopener nofollow" title=(v.t("label.third_party_title").replace("{vendor}", &m.vendor)) {
                            (v.t("label.third_party")) " · " (m.vendor)
                        }
                    }
                    @if !c.description.is_empty() { div.cdesc dir="auto" { (super::message_markdown(&c.description)) } }
                }
                @if let Some(s) = series {
                    (bar(v, &c.name, &s.days, &self.windows, |a| a.contains(&c.id)))
                    (pct(v, s))
                }
                (status_badge(v, c.status))
                @if let Some((_, s)) = self.charts.iter().find(|(id, _)| *id == c.id) {
                    div.chart { (chart(v, s)) }
                }
            }
        }
    }

    /// A member of a folded group that is not operational: name and status.
    fn brief(&self, c: &Component) -> Markup {
        html! {
            li.comp.brief data-component=(c.id) {
                div.cname { span.name { (c.name) } }
                (status_badge(self.v, c.status))
            }
        }
    }

    /// A folded group (or the ungrouped components of a large page): one
    /// row standing for all its members, then those not operational.
    fn folded(&self, name: &str, members: &[&Component], which: Members, key: &str) -> Markup {
        let v = self.v;
        let worst = worst_of(members);
        let series = self.series.as_ref().map(|all| {
            let own: Vec<UptimeSeries> = members
                .iter()
                .filter_map(|c| all.get(&c.id).cloned())
                .collect();
            page_series(&own, &self.windows)
        });
        let ids: std::collections::HashSet<Id> = members.iter().map(|c| c.id).collect();
        html! {
            div.group.folded data-group=(key) {
                ul.comps {
                    li.comp.group-row {
                        div.cname {
                            a.name href=(which.href(v, 0)) { (name) }
                            " "
                            span.count { (v.lang.tn("label.components_in_group", members.len() as i64)) }
                        }
                        @if let Some(s) = &series {
                            (bar(v, name, &s.days, &self.windows, |a| a.iter().any(|c| ids.contains(c))))
                            (pct(v, s))
                        }
                        (status_badge(v, worst))
                    }
                    @for c in members.iter().filter(|c| c.status != ComponentStatus::Operational) {
                        (self.brief(c))
                    }
                }
            }
        }
    }

    /// The panel around rows, with the bars' scale said once at its top.
    fn wrap(&self, rows: Markup) -> Markup {
        let v = self.v;
        let class = if self.series.is_some() {
            "panel with-uptime"
        } else {
            "panel"
        };
        html! {
            div class=(class) {
                @if self.series.is_some() {
                    div.scale aria-hidden="true" {
                        span { (v.lang.tn("label.days_ago", i64::from(self.days))) }
                        span { (v.t("label.today")) }
                    }
                }
                (rows)
            }
        }
    }
}

fn worst_of(members: &[&Component]) -> ComponentStatus {
    members
        .iter()
        .map(|c| c.status)
        .max_by_key(|s| s.severity())
        .unwrap_or(ComponentStatus::Operational)
}

fn pct(v: &View, s: &UptimeSeries) -> Markup {
    html! {
        span.pct {
            @if let Some(t) = s.uptime { (format!("{t:.2}")) "%" span.vh { " " (v.t("label.uptime")) } }
        }
    }
}

/// Components in display order: groups (collapsible, open) by their order,
/// ungrouped components after them, as the JSON lists them. One compact
/// row each (name, uptime bar, percentage, status on one line on a wide
/// screen), in one panel. A page of more than `FOLD_ABOVE` folds its
/// groups (and more than that many ungrouped components) into a row each.
fn components(v: &View, history: &[StatusChange], charts: &[(Id, Series)]) -> Markup {
    let d = v.d;
    let panel = Panel::new(v, history, charts);
    let fold = d.components.len() > FOLD_ABOVE;
    let mut groups: Vec<&ComponentGroup> = d.groups.iter().collect();
    groups.sort_by_key(|g| (g.order, g.id));
    let ungrouped: Vec<&Component> = d
        .components
        .iter()
        .filter(|c| c.group_id.is_none())
        .collect();
    panel.wrap(html! {
        @for g in groups {
            @let members: Vec<&Component> = d.components.iter().filter(|c| c.group_id == Some(g.id)).collect();
            @if members.is_empty() {
            } @else if fold {
                (panel.folded(&g.name, &members, Members::Group(g.id), &g.id.to_string()))
            } @else {
                details.group open data-group=(g.id) {
                    summary {
                        span.name { (g.name) }
                        span.count { (v.lang.tn("label.components_in_group", members.len() as i64)) }
                        (status_badge(v, worst_of(&members)))
                    }
                    ul.comps { @for c in members { (panel.row(c)) } }
                }
            }
        }
        @if ungrouped.len() > FOLD_ABOVE {
            (panel.folded(v.t("components.other"), &ungrouped, Members::Ungrouped, "none"))
        } @else if !ungrouped.is_empty() {
            ul.comps { @for c in ungrouped { (panel.row(c)) } }
        }
    })
}

/// `/s/{slug}/components`: the components `which` names, in display
/// order, `COMPONENTS_PER_PART` at a time in full (their bars and charts),
/// where a folded group's row leads. None when there is no such part.
pub fn components_part(
    v: &View,
    history: &[StatusChange],
    charts: &[(Id, Series)],
    which: Members,
    part: usize,
) -> Option<String> {
    let d = v.d;
    let heading = match which {
        Members::All => v.t("section.components").to_string(),
        Members::Group(id) => d.groups.iter().find(|g| g.id == id)?.name.clone(),
        Members::Ungrouped => v.t("components.other").to_string(),
    };
    let mut order: Vec<&Component> = d.components.iter().filter(|c| which.holds(c)).collect();
    let rank = |c: &Component| {
        c.group_id
            .and_then(|g| d.groups.iter().find(|x| x.id == g))
            .map_or((1, 0, 0), |g| (0, g.order, g.id))
    };
    // Stable: within a group (and among the ungrouped) as the JSON lists them.
    order.sort_by_key(|c| rank(c));
    let shown: Vec<&Component> = order
        .iter()
        .skip(part * COMPONENTS_PER_PART)
        .take(COMPONENTS_PER_PART)
        .copied()
        .collect();
    if shown.is_empty() && part > 0 {
        return None;
    }
    let more = order.len() > (part + 1) * COMPONENTS_PER_PART;
    let panel = Panel::new(v, history, charts);
    let title = format!("{heading} · {}", d.page.name);
    Some(layout(
        v,
        &title,
        html! {
            p { a href=(v.href("")) { span.arr aria-hidden="true" { "←" } " " (v.t("nav.back")) } }
            h2 { (heading) " " span.count { (v.lang.tn("label.components_in_group", order.len() as i64)) } }
            (panel.wrap(html! { ul.comps { @for c in &shown { (panel.row(c)) } } }))
            @if part > 0 || more {
                nav.pager aria-label=(heading) {
                    @if part > 0 { a rel="prev" href=(which.href(v, part - 1)) { span.arr aria-hidden="true" { "←" } " " (v.t("components.previous")) } }
                    @if more { a rel="next" href=(which.href(v, part + 1)) { (v.t("components.more")) " " span.arr aria-hidden="true" { "→" } } }
                }
            }
        },
    ))
}

/// A component's (or a folded group's) daily uptime cells. Each is
/// focusable and carries its tooltip as real text (date, share up, what
/// happened), so hovering, focusing and screen readers all get the same.
fn bar(
    v: &View,
    name: &str,
    days: &[DayUptime],
    windows: &[(jiff::civil::Date, Timestamp, Timestamp)],
    touches: impl Fn(&[Id]) -> bool,
) -> Markup {
    let caption = v.lang.tn("uptime.caption", days.len() as i64);
    html! {
        div.uptime {
            ol.bar aria-label={ (name) ": " (caption) } {
                @for (day, w) in days.iter().zip(windows) {
                    @let cls = day.worst_status.map(status_class).unwrap_or("s-none");
                    li class={ "cell " (cls) } tabindex="0" {
                        span.tip {
                            strong { (day.date) } br;
                            @match day.uptime {
                                Some(u) => { (format!("{u:.2}")) "% " (v.t("label.uptime")) }
                                None => { (v.t("label.no_data")) }
                            }
                            @if day.outage_minutes > 0 { br; (v.lang.tn("label.outage_minutes", day.outage_minutes)) }
                            br;
                            (happened(v, &touches, w.1, w.2))
                        }
                    }
                }
            }
        }
    }
}

/// A monitored component's response times over the last 24 hours.
fn chart(v: &View, s: &Series) -> Markup {
    let text = ChartText {
        title: v.t("rt.title"),
        empty: v.t("rt.empty"),
        avg: v.t("rt.avg"),
        p95: v.t("rt.p95"),
        start: v.t("rt.start"),
        end: v.t("rt.end"),
    };
    response_chart(
        &s.points,
        HOUR_MS,
        v.now.plus_millis(-CHART_MS),
        v.now,
        &text,
        &s.summary,
    )
}

/// How far back the public chart looks, and how fine it is.
pub const CHART_MS: i64 = 86_400_000;
const HOUR_MS: i64 = 3_600_000;

/// The incidents and maintenance that touched a component (those whose
/// affected components `touches` accepts) within a day.
fn happened(
    v: &View,
    touches: &impl Fn(&[Id]) -> bool,
    start: Timestamp,
    end: Timestamp,
) -> String {
    let d = v.d;
    let incidents = d.incidents.iter().filter(|i| {
        touches(&i.affected_components)
            && i.created_at < end
            && i.resolved_at.unwrap_or(v.now) >= start
    });
    let windows = d.maintenance.iter().chain(&d.past_maintenance).filter(|m| {
        m.status != MaintenanceStatus::Cancelled
            && touches(&m.affected_components)
            && m.scheduled_start_time < end
            && m.scheduled_end_time >= start
    });
    let titles: Vec<&str> = incidents
        .map(|i| i.title.as_str())
        .chain(windows.map(|m| m.title.as_str()))
        .take(3)
        .collect();
    if titles.is_empty() {
        v.t("label.no_incidents_day").to_string()
    } else {
        titles.join("; ")
    }
}
