//! Everything a public page shows, loaded in one go for the public snapshot.
//! Only the snapshot builder calls this; visitors never reach SQL directly.

use crate::db::Db;
use crate::error::StoreResult;
use crate::incidents::{self, IncidentFilter};
use crate::maintenance::{self, MaintenanceFilter};
use crate::rows::{PageRow, parse_enum};
use crate::{components, groups};
use upstate_core::uptime::StatusChange;
use upstate_core::*;

/// How many resolved incidents a public page keeps (all unresolved ones are kept too).
pub const RESOLVED_KEPT: i64 = 100;

#[derive(Debug, Clone)]
pub struct PageData {
    pub page: StatusPage,
    /// When anything on the page last changed.
    pub updated_at: Timestamp,
    pub components: Vec<Component>,
    pub groups: Vec<ComponentGroup>,
    /// The marks of components that mirror a vendor (docs/third-party.md).
    pub third_party: Vec<(Id, upstate_core::third_party::ThirdPartyMark)>,
    /// Unresolved ones, then the latest resolved ones; newest first.
    pub incidents: Vec<Incident>,
    /// Upcoming and ongoing windows, by start time: in progress, or
    /// scheduled to end in the future.
    pub maintenance: Vec<Maintenance>,
    /// Completed and cancelled windows scheduled to end within the last
    /// `PAST_MAINTENANCE_DAYS`, and scheduled ones whose end passed without
    /// being started ("not started"); latest start first (calendars, feeds).
    pub past_maintenance: Vec<Maintenance>,
    /// When the next scheduled window's end passes (it then leaves the
    /// upcoming list): what was read is stale from then on.
    pub lapses_at: Option<Timestamp>,
    pub quick_links: Vec<upstate_core::links::QuickLink>,
    /// Published postmortems (Markdown) of this page's incidents, by incident.
    pub postmortems: Vec<crate::postmortems::Published>,
    /// Set on a private page visitors may open with a password.
    pub password_hash: Option<String>,
    /// The networks the page is held to, if any, and whether viewers open it.
    pub access: upstate_core::access::PageAccess,
    /// Each viewer's id, cookie key and email, when viewers open the page.
    pub viewer_keys: Vec<crate::viewers::ViewerKey>,
    /// Its audience groups: components only some viewers see.
    pub audiences: Vec<upstate_core::audience::Audience>,
    /// The install's feature switches and settings when this was read.
    pub features: upstate_core::settings::Features,
    pub settings: upstate_core::settings::Settings,
}

/// A window still scheduled whose planned end has passed: nobody started
/// it, so it did not happen as announced.
pub fn lapsed(m: &Maintenance, now: Timestamp) -> bool {
    m.status == MaintenanceStatus::Scheduled && m.scheduled_end_time <= now
}

impl PageData {
    /// Whether visitors may see the page at all (with the password, if it has one).
    pub fn visible(&self) -> bool {
        self.page.is_public || self.password_hash.is_some() || self.access.viewers
    }

    /// Whether a visitor needs the password, or to sign in as a viewer, first.
    pub fn gated(&self) -> bool {
        !self.page.is_public && (self.password_hash.is_some() || self.access.viewers)
    }

    /// Whether its bodies differ by visitor (a password, networks, or
    /// audiences): they must then stay out of shared caches. (The static
    /// copy and the public metrics leave out gated and network-held pages,
    /// and read an audience page as a visitor who is no viewer.)
    pub fn guarded(&self) -> bool {
        self.gated() || self.access.restricted() || !self.audiences.is_empty()
    }

    /// The page as someone who cannot see the `hidden` components reads
    /// it: those components, groups left empty by them, and incidents and
    /// windows only about them are gone; the rest name only what is left.
    pub fn seen_without(&self, hidden: &std::collections::BTreeSet<Id>) -> PageData {
        let mut d = self.clone();
        d.components.retain(|c| !hidden.contains(&c.id));
        let used: Vec<Id> = d.components.iter().filter_map(|c| c.group_id).collect();
        d.groups.retain(|g| used.contains(&g.id));
        d.third_party.retain(|(c, _)| !hidden.contains(c));
        d.incidents = keep_shown(std::mem::take(&mut d.incidents), hidden);
        d.maintenance = keep_shown(std::mem::take(&mut d.maintenance), hidden);
        d.past_maintenance = keep_shown(std::mem::take(&mut d.past_maintenance), hidden);
        let kept: Vec<Id> = d.incidents.iter().map(|i| i.id).collect();
        d.postmortems.retain(|p| kept.contains(&p.incident));
        d
    }
}

/// Incidents and maintenance windows: what names affected components.
pub trait Affecting {
    fn affected(&mut self) -> &mut Vec<Id>;
}

impl Affecting for Incident {
    fn affected(&mut self) -> &mut Vec<Id> {
        &mut self.affected_components
    }
}

impl Affecting for Maintenance {
    fn affected(&mut self) -> &mut Vec<Id> {
        &mut self.affected_components
    }
}

/// Whether someone who cannot see `hidden` sees this at all (it is about
/// no component, or about one they see), and then only what they see.
pub fn shown_without<T: Affecting>(
    mut item: T,
    hidden: &std::collections::BTreeSet<Id>,
) -> Option<T> {
    let a = item.affected();
    if !a.is_empty() && a.iter().all(|c| hidden.contains(c)) {
        return None;
    }
    a.retain(|c| !hidden.contains(c));
    Some(item)
}

/// `shown_without` over a list.
pub fn keep_shown<T: Affecting>(list: Vec<T>, hidden: &std::collections::BTreeSet<Id>) -> Vec<T> {
    list.into_iter()
        .filter_map(|i| shown_without(i, hidden))
        .collect()
}

/// How far back finished maintenance stays on the public page's calendar.
pub const PAST_MAINTENANCE_DAYS: i64 = 365;

/// Incidents and maintenance windows of one month (for the history pages),
/// a bounded part of it at a time.
#[derive(Debug, Clone)]
pub struct History {
    /// Newest first.
    pub incidents: Vec<Incident>,
    /// Latest start first; every status.
    pub maintenance: Vec<Maintenance>,
    /// Either list goes on past this part.
    pub more: bool,
}

/// How many incidents, and how many maintenance windows, one part of a
/// month's history shows: a month of a busy install (thousands) would be
/// megabytes of HTML built at once.
pub const HISTORY_PER_PART: i64 = 50;

/// What happened on a page between two instants, the `part`th (from 0)
/// `HISTORY_PER_PART` of each kind.
pub async fn history(
    db: &Db,
    page_id: Id,
    (from, until): (Timestamp, Timestamp),
    part: i64,
) -> StoreResult<History> {
    let offset = part.saturating_mul(HISTORY_PER_PART);
    let mut incidents = incidents::list(
        db,
        &IncidentFilter {
            page_id: Some(page_id),
            limit: HISTORY_PER_PART + 1,
            offset,
            created_between: Some((from, until)),
            ..Default::default()
        },
    )
    .await?;
    let mut maintenance = maintenance::list(
        db,
        &MaintenanceFilter {
            page_id: Some(page_id),
            starting_between: Some((from, until)),
            newest_first: true,
            limit: Some(HISTORY_PER_PART + 1),
            offset,
            ..Default::default()
        },
    )
    .await?;
    let more =
        incidents.len() as i64 > HISTORY_PER_PART || maintenance.len() as i64 > HISTORY_PER_PART;
    incidents.truncate(HISTORY_PER_PART as usize);
    maintenance.truncate(HISTORY_PER_PART as usize);
    Ok(History {
        incidents,
        maintenance,
        more,
    })
}

/// One maintenance window of a page, whatever its age.
pub async fn maintenance(db: &Db, page_id: Id, id: Id) -> StoreResult<Option<Maintenance>> {
    match maintenance::get(db, id).await {
        Ok(m) => Ok((m.status_page_id == page_id).then_some(m)),
        Err(crate::StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// One incident of a page, whatever its age.
pub async fn incident(db: &Db, page_id: Id, id: Id) -> StoreResult<Option<Incident>> {
    match incidents::get(db, id).await {
        Ok(i) => Ok((i.status_page_id == page_id).then_some(i)),
        Err(crate::StoreError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[derive(sqlx::FromRow)]
struct PageWithStamp {
    #[sqlx(flatten)]
    page: PageRow,
    updated_at: i64,
    password_hash: Option<String>,
}

/// The id of the page with this slug, if there is one.
pub async fn page_id_by_slug(db: &Db, slug: &str) -> StoreResult<Option<Id>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT id FROM status_pages WHERE slug = $1"
    )
    .bind(slug)
    .fetch_optional(c)
    .await?))
}

/// The slug of the page served at this custom domain, if any.
pub async fn slug_by_domain(db: &Db, domain: &str) -> StoreResult<Option<String>> {
    Ok(on_db!(db, |c| sqlx::query_scalar(
        "SELECT slug FROM status_pages WHERE custom_domain = $1"
    )
    .bind(domain)
    .fetch_optional(c)
    .await?))
}

pub async fn load(db: &Db, page_id: Id) -> StoreResult<Option<PageData>> {
    let row: Option<PageWithStamp> = on_db!(db, |c| sqlx::query_as(concat!(
        "SELECT ",
        page_cols!(),
        ", updated_at, password_hash FROM status_pages WHERE id = $1"
    ))
    .bind(page_id)
    .fetch_optional(c)
    .await?);
    let Some(PageWithStamp {
        page,
        updated_at,
        password_hash,
    }) = row
    else {
        return Ok(None);
    };
    let mut open = incidents::of_page(db, page_id, RESOLVED_KEPT).await?;
    open.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    // Both lists come ordered by start (and id) from the store.
    let unfinished = MaintenanceFilter {
        page_id: Some(page_id),
        finished: Some(false),
        ..Default::default()
    };
    let now = db.clock.now();
    // A window nobody started whose end has passed is no longer upcoming.
    let (windows, lapsed): (Vec<Maintenance>, Vec<Maintenance>) =
        maintenance::list(db, &unfinished)
            .await?
            .into_iter()
            .partition(|m| !lapsed(m, now));
    let lapses_at = windows
        .iter()
        .filter(|m| m.status == MaintenanceStatus::Scheduled)
        .map(|m| m.scheduled_end_time)
        .min();
    let since = now.plus_millis(-PAST_MAINTENANCE_DAYS * 86_400_000);
    let finished = MaintenanceFilter {
        page_id: Some(page_id),
        finished: Some(true),
        ending_after: Some(since),
        ..Default::default()
    };
    let mut past = maintenance::list(db, &finished).await?;
    past.extend(lapsed.into_iter().filter(|m| m.scheduled_end_time > since));
    past.sort_by(|a, b| {
        b.scheduled_start_time
            .cmp(&a.scheduled_start_time)
            .then(b.id.cmp(&a.id))
    });
    let features = crate::settings::features(db).await?;
    let access = crate::access::of(db, page_id).await?;
    Ok(Some(PageData {
        page: page.into(),
        updated_at: Timestamp::from_millis(updated_at),
        components: components::list(db, Some(page_id), None).await?,
        groups: groups::list(db, Some(page_id)).await?,
        third_party: crate::third_party::marks(db, page_id).await?,
        incidents: open,
        maintenance: windows,
        past_maintenance: past,
        lapses_at,
        quick_links: crate::quick_links::list(db, Some(page_id)).await?,
        // Turned off, postmortems are not even read: nothing can show them.
        postmortems: if features.postmortems {
            crate::postmortems::published_on(db, page_id).await?
        } else {
            Vec::new()
        },
        password_hash,
        viewer_keys: if access.viewers {
            crate::viewers::keys(db, page_id).await?
        } else {
            Vec::new()
        },
        audiences: crate::audiences::of(db, page_id).await?,
        access,
        features,
        settings: crate::settings::settings(db).await?,
    }))
}

/// Status changes of a page's components since `since`, plus the change in
/// effect at `since` for each, ordered by component and time.
pub async fn status_history(
    db: &Db,
    page_id: Id,
    since: Timestamp,
) -> StoreResult<Vec<StatusChange>> {
    let rows: Vec<(i64, String, i64)> = on_db!(db, |c| {
        sqlx::query_as(
        "SELECT h.component_id, h.status, h.changed_at FROM component_status_history h \
         JOIN components c ON c.id = h.component_id \
         WHERE c.page_id = $1 AND (h.changed_at >= $2 OR h.id = ( \
             SELECT h2.id FROM component_status_history h2 WHERE h2.component_id = h.component_id AND h2.changed_at < $2 \
             ORDER BY h2.changed_at DESC, h2.id DESC LIMIT 1)) \
         ORDER BY h.component_id, h.changed_at, h.id"
    )
    .bind(page_id)
    .bind(since.millis())
    .fetch_all(c)
    .await?
    });
    changes(rows)
}

/// `status_history` of these components only (a page's snapshot reads
/// again only those whose history a commit wrote).
pub async fn status_history_of(
    db: &Db,
    components: &[Id],
    since: Timestamp,
) -> StoreResult<Vec<StatusChange>> {
    if components.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, String, i64)> = on_db!(db, |c| {
        let mut q = sqlx::QueryBuilder::new(
            "SELECT h.component_id, h.status, h.changed_at FROM component_status_history h \
             WHERE h.component_id IN (",
        );
        let mut listed = q.separated(", ");
        for id in components {
            listed.push_bind(*id);
        }
        q.push(") AND (h.changed_at >= ")
            .push_bind(since.millis())
            .push(
                " OR h.id = (SELECT h2.id FROM component_status_history h2 \
                 WHERE h2.component_id = h.component_id AND h2.changed_at < ",
            )
            .push_bind(since.millis())
            .push(
                " ORDER BY h2.changed_at DESC, h2.id DESC LIMIT 1)) \
                 ORDER BY h.component_id, h.changed_at, h.id",
            );
        q.build_query_as().fetch_all(c).await?
    });
    changes(rows)
}

fn changes(rows: Vec<(i64, String, i64)>) -> StoreResult<Vec<StatusChange>> {
    rows.into_iter()
        .map(|(component_id, status, at)| {
            Ok(StatusChange {
                component_id,
                status: parse_enum("component status", &status)?,
                at: Timestamp::from_millis(at),
            })
        })
        .collect()
}
