//! Which pages changed, so public snapshots know when to rebuild.
//!
//! Each page has a version number in memory. A write transaction names the
//! pages it touched; after it commits, their versions go up (before the
//! handler answers, so a write acknowledged to an operator is never followed
//! by a stale public read). On PostgreSQL the transaction also sends
//! `pg_notify('upstate_changes', '{origin}:{page_id}')`, delivered only on
//! commit, and every instance's listener bumps the same versions for writes
//! made elsewhere. An instance ignores its own notifications (it bumped at
//! commit already): one change, one rebuild, one live event.

use dashmap::DashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::broadcast;
use upstate_core::Id;

pub const CHANNEL: &str = "upstate_changes";

#[derive(Debug)]
pub struct Changes {
    pages: DashMap<Id, u64>,
    /// Bumped by every change: guards caches of "which page has this slug"
    /// (including "none"), which any page's change may alter.
    all: AtomicU64,
    /// Tells live listeners (the public event streams) which page changed;
    /// `None` means every page may have.
    events: broadcast::Sender<Option<Id>>,
    /// This process, in the notifications it sends.
    origin: u64,
    /// Wakes this process's job worker: a job was scheduled (here, or on
    /// another instance, heard through `upstate_jobs`).
    pub jobs: tokio::sync::Notify,
}

impl Default for Changes {
    fn default() -> Self {
        Changes {
            pages: DashMap::new(),
            all: AtomicU64::new(0),
            events: broadcast::channel(256).0,
            origin: rand::random(),
            jobs: tokio::sync::Notify::new(),
        }
    }
}

impl Changes {
    /// A receiver of changed page ids. A lagging receiver loses messages, and
    /// should treat that as "everything changed".
    pub fn subscribe(&self) -> broadcast::Receiver<Option<Id>> {
        self.events.subscribe()
    }

    /// The notification payload announcing a change of `page` by this process.
    pub fn payload(&self, page: Id) -> String {
        format!("{}:{page}", self.origin)
    }

    /// Applies a notification: another process's change bumps its page, this
    /// process's own is skipped, anything unreadable bumps every page.
    pub fn heard(&self, payload: &str) {
        let (origin, page) = match payload.split_once(':') {
            Some((o, p)) => (o.parse::<u64>().ok(), p),
            None => (None, payload),
        };
        match page.parse::<Id>() {
            Ok(_) if origin == Some(self.origin) => {}
            Ok(page) => self.bump(page),
            Err(_) => self.bump_all(),
        }
    }

    pub fn page_version(&self, page: Id) -> u64 {
        self.pages.get(&page).map(|v| *v).unwrap_or(0)
    }

    pub fn global_version(&self) -> u64 {
        self.all.load(Ordering::Acquire)
    }

    pub fn bump(&self, page: Id) {
        *self.pages.entry(page).or_insert(0) += 1;
        self.all.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(Some(page));
    }

    /// After a lost notification connection nothing can be trusted.
    pub fn bump_all(&self) {
        for mut v in self.pages.iter_mut() {
            *v += 1;
        }
        self.all.fetch_add(1, Ordering::AcqRel);
        let _ = self.events.send(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_notifications_are_skipped_and_others_bump() {
        let (me, other) = (Changes::default(), Changes::default());
        me.heard(&me.payload(7));
        assert_eq!(me.page_version(7), 0, "already bumped at commit");
        me.heard(&other.payload(7));
        assert_eq!(me.page_version(7), 1);
        me.heard("8");
        assert_eq!(
            me.page_version(8),
            1,
            "a bare page id (older instances) counts"
        );
        let before = me.global_version();
        me.heard("garbage");
        assert!(
            me.global_version() > before && me.page_version(7) == 2,
            "unreadable: everything changed"
        );
    }
}
