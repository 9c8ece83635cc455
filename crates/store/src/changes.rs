//! Which pages changed, so public snapshots know when to rebuild and live
//! streams what to say. Both read the change events of the outbox.
//!
//! Each page has a version number in memory. A write transaction records its
//! events in the outbox; after it commits, their pages' versions go up
//! (before the handler answers, so a write acknowledged to an operator is
//! never followed by a stale public read) and the events go to live
//! listeners. On PostgreSQL the transaction also sends
//! `pg_notify('upstate_changes', '{origin}:{outbox ids}')`, delivered only on
//! commit; every other instance reads those outbox rows and does the same.
//! An instance ignores its own notifications (it applied them at commit):
//! one change, one rebuild, one live event.

use dashmap::DashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast;
use upstate_core::Id;
use upstate_core::events::Event;

pub const CHANNEL: &str = "upstate_changes";

#[derive(Debug)]
pub struct Changes {
    pages: DashMap<Id, u64>,
    /// Added to every page's version: bumped by changes of every page
    /// (settings) and lost notifications, so pages never read yet go stale too.
    epoch: AtomicU64,
    /// Bumped by every change: guards caches of "which page has this slug"
    /// (including "none"), which any page's change may alter.
    all: AtomicU64,
    /// Tells live listeners (the public event streams) what changed.
    events: broadcast::Sender<Heard>,
    /// This process, in the notifications it sends.
    origin: u64,
    /// Wakes this process's job worker: a job was scheduled (here, or on
    /// another instance, heard through `upstate_jobs`).
    pub jobs: tokio::sync::Notify,
    /// Wakes this process's sender: deliveries were fanned out here.
    pub deliveries: tokio::sync::Notify,
    /// The audit chain's head (seq, hash) as this process last appended to
    /// it: a guess, checked by the next append's compare-and-set.
    audit_head: std::sync::Mutex<Option<(i64, String)>>,
    /// Outbox rows this process wrote, marked before their commit, so that
    /// following SQLite's outbox (`sqlite::follow`) skips what was applied
    /// at commit already.
    own_rows: std::sync::Mutex<std::collections::BTreeSet<i64>>,
}

/// The most outbox rows remembered as this process's own.
const OWN_ROWS_MAX: usize = 10_000;

impl Default for Changes {
    fn default() -> Self {
        Changes {
            pages: DashMap::new(),
            epoch: AtomicU64::new(0),
            all: AtomicU64::new(0),
            events: broadcast::channel(256).0,
            origin: rand::random(),
            jobs: tokio::sync::Notify::new(),
            deliveries: tokio::sync::Notify::new(),
            audit_head: std::sync::Mutex::new(None),
            own_rows: std::sync::Mutex::new(std::collections::BTreeSet::new()),
        }
    }
}

/// What a live listener hears.
#[derive(Debug, Clone)]
pub enum Heard {
    /// The events of one committed transaction, in the order written.
    Committed(Arc<[Event]>),
    /// Anything may have changed (a lost notification connection).
    Everything,
}

/// What a notification asks of this instance.
#[derive(Debug, PartialEq)]
pub enum Notice {
    /// Its own commit, applied already.
    Own,
    /// Read these outbox rows and apply their events.
    Rows(Vec<i64>),
    /// Too many rows to name, or unreadable: everything changed.
    Everything,
}

/// PostgreSQL refuses notification payloads of 8000 bytes or more.
pub(crate) const MAX_PAYLOAD: usize = 7900;

impl Changes {
    pub(crate) fn audit_head(&self) -> Option<(i64, String)> {
        self.audit_head.lock().ok().and_then(|h| h.clone())
    }

    pub(crate) fn set_audit_head(&self, head: (i64, String)) {
        if let Ok(mut h) = self.audit_head.lock() {
            *h = Some(head);
        }
    }

    /// A receiver of committed events. A lagging receiver loses messages, and
    /// should treat that as "everything changed".
    pub fn subscribe(&self) -> broadcast::Receiver<Heard> {
        self.events.subscribe()
    }

    /// This process among the instances (random at start), as hex.
    pub fn instance_id(&self) -> String {
        format!("{:016x}", self.origin)
    }

    /// The notification payload announcing this process's commit of the
    /// outbox rows `ids`.
    pub fn payload(&self, ids: &[i64]) -> String {
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        let payload = format!("{}:{}", self.origin, list.join(","));
        if payload.len() > MAX_PAYLOAD {
            format!("{}:*", self.origin)
        } else {
            payload
        }
    }

    /// The payload of this process's "new jobs" notification.
    pub(crate) fn jobs_payload(&self) -> String {
        self.origin.to_string()
    }

    /// Whether a "new jobs" notification is this process's own.
    pub(crate) fn is_own_jobs(&self, payload: &str) -> bool {
        payload.parse::<u64>().ok() == Some(self.origin)
    }

    /// Reads a notification.
    pub fn notice(&self, payload: &str) -> Notice {
        let Some((origin, rows)) = payload.split_once(':') else {
            return Notice::Everything;
        };
        if origin.parse::<u64>().ok() == Some(self.origin) {
            return Notice::Own;
        }
        let ids: Result<Vec<i64>, _> = rows.split(',').map(str::parse).collect();
        match ids {
            Ok(ids) if !ids.is_empty() => Notice::Rows(ids),
            _ => Notice::Everything,
        }
    }

    /// Applies committed events: their pages' versions go up once each, then
    /// live listeners hear them.
    pub fn committed(&self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let mut pages: Vec<Option<Id>> = events.iter().map(Event::page).collect();
        pages.sort_unstable();
        pages.dedup();
        if pages.contains(&None) {
            self.epoch.fetch_add(1, Ordering::AcqRel);
        } else {
            for page in pages.into_iter().flatten() {
                *self.pages.entry(page).or_insert(0) += 1;
            }
        }
        self.all.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(Heard::Committed(events.into()));
    }

    pub fn page_version(&self, page: Id) -> u64 {
        let own = self.pages.get(&page).map(|v| *v).unwrap_or(0);
        own + self.epoch.load(Ordering::Acquire)
    }

    pub fn global_version(&self) -> u64 {
        self.all.load(Ordering::Acquire)
    }

    /// Marks outbox rows as this process's own (before their commit).
    /// A process that never follows the outbox (a CLI writer, a test's
    /// in-process app) never takes them back: past `OWN_ROWS_MAX` the oldest
    /// are forgotten, and following one again costs only a refresh.
    pub(crate) fn mark_own(&self, ids: &[i64]) {
        if let Ok(mut own) = self.own_rows.lock() {
            own.extend(ids.iter().copied());
            while own.len() > OWN_ROWS_MAX {
                own.pop_first();
            }
        }
    }

    /// Whether outbox row `id` is this process's own; forgets it.
    pub(crate) fn take_own(&self, id: i64) -> bool {
        self.own_rows
            .lock()
            .map(|mut o| o.remove(&id))
            .unwrap_or(false)
    }

    /// Forgets own rows up to `id` (those of commits that failed).
    pub(crate) fn forget_own_through(&self, id: i64) {
        if let Ok(mut own) = self.own_rows.lock() {
            *own = own.split_off(&(id + 1));
        }
    }

    /// After a lost notification connection nothing can be trusted.
    pub fn bump_all(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.all.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(Heard::Everything);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_rows_stay_bounded_without_a_follower() {
        let me = Changes::default();
        let many: Vec<i64> = (1..=(OWN_ROWS_MAX as i64 + 500)).collect();
        me.mark_own(&many);
        assert!(!me.take_own(1), "the oldest forgotten");
        assert!(me.take_own(OWN_ROWS_MAX as i64 + 500), "the newest kept");
        assert_eq!(
            me.own_rows.lock().map(|o| o.len()).unwrap_or_default(),
            OWN_ROWS_MAX - 1
        );
    }

    #[test]
    fn own_notifications_are_skipped_and_others_name_rows() {
        let (me, other) = (Changes::default(), Changes::default());
        assert_eq!(me.notice(&me.payload(&[7, 9])), Notice::Own);
        assert_eq!(me.notice(&other.payload(&[7, 9])), Notice::Rows(vec![7, 9]));
        assert_eq!(me.notice("garbage"), Notice::Everything);
        assert_eq!(me.notice("1:x"), Notice::Everything);
        let many: Vec<i64> = (1_000_000..1_002_000).collect();
        assert_eq!(
            me.notice(&other.payload(&many)),
            Notice::Everything,
            "a payload PostgreSQL would refuse is sent as 'everything'"
        );
    }

    #[test]
    fn a_commit_bumps_each_page_once() {
        let c = Changes::default();
        let mut rx = c.subscribe();
        c.committed(vec![
            Event::PageUpdated { page: 3 },
            Event::QuickLinksChanged { page: 3 },
            Event::PageUpdated { page: 4 },
        ]);
        assert_eq!((c.page_version(3), c.page_version(4)), (1, 1));
        match rx.try_recv() {
            Ok(Heard::Committed(events)) => assert_eq!(events.len(), 3),
            other => panic!("expected the committed events, got {other:?}"),
        }
        c.committed(vec![Event::SettingsChanged]);
        assert_eq!(
            (c.page_version(3), c.page_version(99)),
            (2, 1),
            "a change of every page makes even unread pages stale"
        );
    }
}
