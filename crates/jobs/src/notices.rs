//! From a committed change's events to what people are told: one `Notice`
//! per thing that happened, rendered from the store as it stood right after
//! the change (an incident's update is the newest one written by then).
//!
//! A change that moved components as part of an incident or a maintenance
//! window tells of them inside that notice, not in messages of their own:
//! people want one message per incident update, as Statuspage sends.

use upstate_core::events::Event;
use upstate_core::i18n::Lang;
use upstate_core::notify::{Notice, NoticeComponent};
use upstate_core::{ComponentStatus, Id, IncidentStatus, MaintenanceStatus, StatusPage, Timestamp};
use upstate_store::deliveries::OutboxEvent;
use upstate_store::{
    Db, StoreError, StoreResult, components, incidents, integrations, maintenance, pages,
    postmortems,
};

/// A component's status in a message. English keeps the sentence case of
/// messages ("Major outage"); the other languages use the page's words.
pub fn component_label(lang: Lang, s: ComponentStatus) -> String {
    if lang == Lang::En {
        return match s {
            ComponentStatus::Operational => "Operational",
            ComponentStatus::Degraded => "Degraded performance",
            ComponentStatus::PartialOutage => "Partial outage",
            ComponentStatus::MajorOutage => "Major outage",
            ComponentStatus::Maintenance => "Under maintenance",
        }
        .into();
    }
    lang.t(&format!("status.{}", s.as_str())).to_string()
}

/// The language a stored notice was written in.
pub fn lang_of(n: &Notice) -> Lang {
    Lang::parse(&n.lang).unwrap_or(Lang::En)
}

fn incident_label(lang: Lang, s: IncidentStatus) -> String {
    lang.t(&format!("incident.{}", s.as_str())).to_string()
}

/// The headline people get of an incident's change: "New incident: …" when
/// it opens, else "<status>: …" (the form's preview shows the same).
pub fn incident_headline(lang: Lang, opened: bool, status: IncidentStatus, title: &str) -> String {
    if opened {
        lang.t("msg.new_incident").replace("{title}", title)
    } else {
        format!("{}: {title}", incident_label(lang, status))
    }
}

/// "1 hour", "24 hours", "30 minutes", "3 days" in `lang`.
fn lead_time(lang: Lang, minutes: i64) -> String {
    match minutes {
        m if m % 1_440 == 0 && m > 2_880 => lang.tn("msg.days", m / 1_440),
        60 => lang.t("msg.hour").to_string(),
        m if m % 60 == 0 => lang.tn("msg.hours", m / 60),
        1 => lang.t("msg.minute").to_string(),
        m => lang.tn("msg.minutes", m),
    }
}

/// A time as the page's readers read it: in the page's zone.
fn local(at: Timestamp, zone: &str) -> String {
    let Ok(ts) = jiff::Timestamp::from_millisecond(at.millis()) else {
        return at.to_rfc3339();
    };
    match jiff::tz::TimeZone::get(zone) {
        Ok(tz) => ts
            .to_zoned(tz)
            .strftime("%a %-d %b %Y %H:%M %Z")
            .to_string(),
        Err(_) => ts.strftime("%a %-d %b %Y %H:%M UTC").to_string(),
    }
}

/// Renders notices, reading what they tell of from `db`.
pub struct Renderer<'a> {
    pub db: &'a Db,
    /// Where visitors reach the server, for links.
    pub public_url: &'a str,
    /// The language messages are written in: the install's default
    /// language of public pages.
    pub lang: Lang,
}

impl Renderer<'_> {
    fn base(&self, page: &StatusPage, kind: &str, at: Timestamp) -> Notice {
        Notice {
            kind: kind.to_string(),
            page_id: page.id,
            page_name: page.name.clone(),
            page_slug: page.slug.clone(),
            title: String::new(),
            text: String::new(),
            url: format!("{}/s/{}", self.public_url.trim_end_matches('/'), page.slug),
            components: Vec::new(),
            subject: String::new(),
            subject_id: 0,
            state: String::new(),
            impact: None,
            at,
            lang: self.lang.code().into(),
        }
    }

    /// The named components with their status now (moves in this change
    /// win, for they are what the reader is told of).
    async fn components(
        &self,
        ids: &[Id],
        moved: &[(Id, ComponentStatus)],
    ) -> StoreResult<Vec<NoticeComponent>> {
        let mut out = Vec::new();
        for &id in ids {
            match components::get(self.db, id).await {
                Ok(c) => out.push(NoticeComponent {
                    id,
                    name: c.name,
                    status: moved
                        .iter()
                        .find(|(m, _)| *m == id)
                        .map_or(c.status, |(_, s)| *s),
                }),
                Err(StoreError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    async fn incident(
        &self,
        e: &OutboxEvent,
        id: Id,
        moved: &[(Id, ComponentStatus)],
    ) -> StoreResult<Option<Notice>> {
        let inc = match incidents::get(self.db, id).await {
            Ok(i) => i,
            Err(StoreError::NotFound(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let page = pages::get(self.db, inc.status_page_id).await?;
        let mut n = self.base(&page, e.event.kind(), e.at);
        // Newest first: the update this change wrote is the newest one made by its time.
        let update = inc
            .updates
            .iter()
            .find(|u| u.created_at.millis() <= e.at.millis())
            .or(inc.updates.first());
        let status = update.map_or(inc.status, |u| u.status);
        n.title = incident_headline(
            self.lang,
            matches!(e.event, Event::IncidentCreated { .. }),
            status,
            &inc.title,
        );
        n.text = update.map(|u| u.message.clone()).unwrap_or_default();
        n.url = format!("{}/incidents/{}", n.url, inc.id);
        let mut ids = inc.affected_components.clone();
        ids.extend(
            moved
                .iter()
                .map(|(c, _)| *c)
                .filter(|c| !inc.affected_components.contains(c)),
        );
        n.components = self.components(&ids, moved).await?;
        n.subject = "incident".into();
        n.subject_id = inc.id;
        n.state = status.as_str().into();
        n.impact = Some(inc.impact.as_str().into());
        Ok(Some(n))
    }

    async fn maintenance(
        &self,
        e: &OutboxEvent,
        id: Id,
        moved: &[(Id, ComponentStatus)],
    ) -> StoreResult<Option<Notice>> {
        let m = match maintenance::get(self.db, id).await {
            Ok(m) => m,
            Err(StoreError::NotFound(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let page = pages::get(self.db, m.status_page_id).await?;
        let mut n = self.base(&page, e.event.kind(), e.at);
        let (verb, state) = match e.event {
            Event::MaintenanceStarted { .. } => {
                ("msg.maintenance_started", MaintenanceStatus::InProgress)
            }
            Event::MaintenanceCompleted { .. } => {
                ("msg.maintenance_completed", MaintenanceStatus::Completed)
            }
            Event::MaintenanceCancelled { .. } => {
                ("msg.maintenance_cancelled", MaintenanceStatus::Cancelled)
            }
            Event::MaintenanceReminder { .. } if m.status != MaintenanceStatus::Scheduled => {
                // Started, cancelled or moved since: the reminder has nothing to say.
                return Ok(None);
            }
            _ => ("msg.maintenance_scheduled", MaintenanceStatus::Scheduled),
        };
        n.title = match e.event {
            Event::MaintenanceReminder { minutes_before, .. } => self
                .lang
                .t("msg.maintenance_in")
                .replace("{lead}", &lead_time(self.lang, minutes_before))
                .replace("{title}", &m.title),
            _ => format!("{}: {}", self.lang.t(verb), m.title),
        };
        let window = format!(
            "{} – {}",
            local(m.scheduled_start_time, &page.time_zone),
            local(m.scheduled_end_time, &page.time_zone)
        );
        let said = m
            .updates
            .iter()
            .find(|u| u.created_at.millis() <= e.at.millis() && u.status == state)
            .map(|u| u.message.clone())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| m.description.clone());
        n.text = if said.is_empty() {
            window
        } else {
            format!("{said}\n\n{window}")
        };
        n.url = format!("{}/maintenance/{}", n.url, m.id);
        n.components = self.components(&m.affected_components, moved).await?;
        n.subject = "maintenance".into();
        n.subject_id = m.id;
        n.state = state.as_str().into();
        Ok(Some(n))
    }

    async fn postmortem(&self, e: &OutboxEvent, incident: Id) -> StoreResult<Option<Notice>> {
        let (Ok(inc), Some(pm)) = (
            incidents::get(self.db, incident).await,
            postmortems::get(self.db, incident).await?,
        ) else {
            return Ok(None);
        };
        let page = pages::get(self.db, inc.status_page_id).await?;
        let mut n = self.base(&page, e.event.kind(), e.at);
        n.title = format!("{}: {}", self.lang.t("label.postmortem"), inc.title);
        n.text = pm.body;
        n.url = format!("{}/incidents/{}", n.url, inc.id);
        n.components = self.components(&inc.affected_components, &[]).await?;
        n.subject = "incident".into();
        n.subject_id = inc.id;
        n.state = inc.status.as_str().into();
        n.impact = Some(inc.impact.as_str().into());
        Ok(Some(n))
    }

    async fn component(
        &self,
        e: &OutboxEvent,
        id: Id,
        to: ComponentStatus,
    ) -> StoreResult<Option<Notice>> {
        let c = match components::get(self.db, id).await {
            Ok(c) => c,
            Err(StoreError::NotFound(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let page = pages::get(self.db, c.status_page_id).await?;
        let mut n = self.base(&page, e.event.kind(), e.at);
        let label = component_label(self.lang, to);
        let label = if self.lang == Lang::En {
            label.to_lowercase()
        } else {
            label
        };
        n.title = self
            .lang
            .t("msg.component_is")
            .replace("{name}", &c.name)
            .replace("{status}", &label);
        n.components = vec![NoticeComponent {
            id,
            name: c.name,
            status: to,
        }];
        n.subject = "component".into();
        n.subject_id = id;
        n.state = to.as_str().into();
        Ok(Some(n))
    }

    /// A drafted incident, for the team: its words, where it would move
    /// what, and the link that publishes it without signing in (it works
    /// while the draft waits, for `integrations::LINK_MS`).
    async fn draft(&self, e: &OutboxEvent, id: Id) -> StoreResult<Option<Notice>> {
        let (d, Some(token)) = (
            match integrations::draft(self.db, id).await {
                Ok(d) => d,
                Err(StoreError::NotFound(_)) => return Ok(None),
                Err(err) => return Err(err),
            },
            integrations::approve_token(self.db, id).await?,
        ) else {
            return Ok(None);
        };
        let page = pages::get(self.db, d.status_page_id).await?;
        let mut n = self.base(&page, e.event.kind(), e.at);
        let link = format!(
            "{}/admin/approve/{}/{token}",
            self.public_url.trim_end_matches('/'),
            d.id
        );
        n.title = format!("Awaiting approval: {}", d.title);
        n.text = format!(
            "{}\n\n{} drafted this incident; nothing is public yet. Review it and publish or dismiss: {link}",
            d.message, d.integration_name
        );
        n.url = link;
        let moved: Vec<(Id, ComponentStatus)> = d
            .components
            .iter()
            .map(|c| (c.component_id, c.status))
            .collect();
        let ids: Vec<Id> = moved.iter().map(|(c, _)| *c).collect();
        n.components = self.components(&ids, &moved).await?;
        n.subject = "alert_draft".into();
        n.subject_id = d.id;
        n.state = "draft".into();
        n.impact = Some(d.impact.as_str().into());
        Ok(Some(n))
    }

    /// The notices of one committed change, each with the outbox row it is
    /// stored on.
    pub async fn notices(&self, events: &[OutboxEvent]) -> StoreResult<Vec<(Id, Notice)>> {
        let moved: Vec<(Id, ComponentStatus)> = events
            .iter()
            .filter_map(|e| match e.event {
                Event::ComponentStatusChanged { component, to, .. } => Some((component, to)),
                _ => None,
            })
            .collect();
        let led = events.iter().any(|e| {
            matches!(
                e.event,
                Event::IncidentCreated { .. }
                    | Event::IncidentUpdated { .. }
                    | Event::IncidentResolved { .. }
                    | Event::MaintenanceScheduled { .. }
                    | Event::MaintenanceStarted { .. }
                    | Event::MaintenanceCompleted { .. }
                    | Event::MaintenanceCancelled { .. }
            )
        });
        let mut out = Vec::new();
        for e in events {
            let notice = match e.event {
                Event::IncidentCreated { incident, .. }
                | Event::IncidentUpdated { incident, .. }
                | Event::IncidentResolved { incident, .. } => {
                    self.incident(e, incident, &moved).await?
                }
                Event::MaintenanceScheduled { maintenance, .. }
                | Event::MaintenanceStarted { maintenance, .. }
                | Event::MaintenanceCompleted { maintenance, .. }
                | Event::MaintenanceCancelled { maintenance, .. }
                | Event::MaintenanceReminder { maintenance, .. } => {
                    self.maintenance(e, maintenance, &moved).await?
                }
                Event::PostmortemPublished { incident, .. } => self.postmortem(e, incident).await?,
                Event::AlertDrafted { draft, .. } => self.draft(e, draft).await?,
                Event::ComponentStatusChanged { component, to, .. } if !led => {
                    self.component(e, component, to).await?
                }
                _ => None,
            };
            if let Some(n) = notice {
                out.push((e.id, n));
            }
        }
        Ok(out)
    }
}
