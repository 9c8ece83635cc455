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
    /// What commits did to component status history, for snapshots that
    /// read only what changed since they last read it.
    history: std::sync::Mutex<HistoryLog>,
}

/// The most outbox rows remembered as this process's own.
const OWN_ROWS_MAX: usize = 10_000;

/// The most history marks kept: a reader further behind reads it all.
const HISTORY_LOG_MAX: usize = 4096;

/// Numbered marks of status history written, the newest last.
#[derive(Debug, Default)]
struct HistoryLog {
    seq: u64,
    marks: std::collections::VecDeque<(u64, Touched)>,
}

/// Whose status history a commit may have written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Touched {
    Component(Id),
    Page(Id),
    Everything,
}

/// What one of this process's transactions did to status history.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum HistoryWritten {
    /// Rows of these components only (none: no history at all).
    #[default]
    None,
    Components(Vec<Id>),
    /// Rows written by other means (an import): its pages are read again.
    Unknown,
}

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
            history: std::sync::Mutex::new(HistoryLog::default()),
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

    /// Applies another process's committed events (its notification, or
    /// SQLite's outbox followed): their pages' history is read again, as
    /// nothing says which components' it wrote.
    pub fn committed(&self, events: Vec<Event>) {
        self.committed_own(events, HistoryWritten::Unknown);
    }

    /// Applies committed events: marks what they wrote of status history,
    /// then their pages' versions go up once each, then live listeners hear
    /// them.
    pub fn committed_own(&self, events: Vec<Event>, history: HistoryWritten) {
        if events.is_empty() && history == HistoryWritten::None {
            return;
        }
        let marks: Vec<Touched> = match history {
            HistoryWritten::None => Vec::new(),
            HistoryWritten::Components(ids) => ids.into_iter().map(Touched::Component).collect(),
            HistoryWritten::Unknown => events
                .iter()
                .map(|e| e.page().map_or(Touched::Everything, Touched::Page))
                .collect(),
        };
        self.mark_history(marks);
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

    fn mark_history(&self, marks: Vec<Touched>) {
        if marks.is_empty() {
            return;
        }
        if let Ok(mut log) = self.history.lock() {
            for m in marks {
                log.seq += 1;
                let seq = log.seq;
                log.marks.push_back((seq, m));
            }
            while log.marks.len() > HISTORY_LOG_MAX {
                log.marks.pop_front();
            }
        }
    }

    /// The mark a history read now stands at: read it before reading the
    /// rows, and a commit in between is read again next time.
    pub fn history_seq(&self) -> u64 {
        self.history.lock().map(|l| l.seq).unwrap_or(0)
    }

    /// The components of `page` whose history may have changed since mark
    /// `after` (sorted, once each); None when the whole page's must be read
    /// again: the page or everything was marked, or the marks since then
    /// are no longer kept. `components` are the page's.
    pub fn history_touched(&self, page: Id, components: &[Id], after: u64) -> Option<Vec<Id>> {
        let log = self.history.lock().ok()?;
        let oldest = log.marks.front().map_or(log.seq + 1, |m| m.0);
        // Marks after `after` were dropped: unknown.
        if after + 1 < oldest {
            return None;
        }
        let mut out = Vec::new();
        for (seq, m) in log.marks.iter().rev() {
            if *seq <= after {
                break;
            }
            match *m {
                Touched::Everything => return None,
                Touched::Page(p) if p == page => return None,
                Touched::Component(c) if components.contains(&c) => out.push(c),
                _ => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// After a lost notification connection nothing can be trusted.
    pub fn bump_all(&self) {
        self.mark_history(vec![Touched::Everything]);
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
    fn history_marks_name_components_or_say_read_it_all() {
        let c = Changes::default();
        let start = c.history_seq();
        c.committed_own(
            vec![Event::PageUpdated { page: 1 }],
            HistoryWritten::Components(vec![10, 11]),
        );
        // Component 20 is another page's: not this page's business.
        c.committed_own(Vec::new(), HistoryWritten::Components(vec![10, 20]));
        assert_eq!(
            c.history_touched(1, &[10, 11, 12], start),
            Some(vec![10, 11])
        );
        let now = c.history_seq();
        assert_eq!(c.history_touched(1, &[10, 11, 12], now), Some(vec![]));
        // Another process's commit of page 1: nothing says what it wrote.
        c.committed(vec![Event::PageUpdated { page: 1 }]);
        assert_eq!(c.history_touched(1, &[10], now), None);
        assert_eq!(
            c.history_touched(2, &[30], now),
            Some(vec![]),
            "page 2 kept"
        );
        let now = c.history_seq();
        c.bump_all();
        assert_eq!(c.history_touched(2, &[30], now), None);
        // A reader so far behind that its marks were dropped reads it all.
        let behind = c.history_seq();
        for n in 0..=HISTORY_LOG_MAX as i64 {
            c.committed_own(Vec::new(), HistoryWritten::Components(vec![1000 + n]));
        }
        assert_eq!(c.history_touched(1, &[10], behind), None);
        assert_eq!(c.history_touched(1, &[10], behind + 2), Some(vec![]));
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
