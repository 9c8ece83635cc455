//! Where "now" comes from. One clock per process, held by the store's `Db`
//! so the routes, the store and the jobs read the same one; a test moves it
//! (`advance`) instead of sleeping, and everything that reads the time sees
//! the same moved instant: a link expires, a lock-out ends, a window starts.

use crate::Timestamp;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// The wall clock, moved by whatever was added with `advance` (nothing,
/// outside tests). Cheap to clone; clones share the offset.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicI64>,
}

impl Clock {
    pub fn now(&self) -> Timestamp {
        Timestamp::from_millis(Timestamp::now().millis() + self.offset_ms.load(Ordering::Relaxed))
    }

    /// Moves this clock (and every clone of it) forward.
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_move_together() {
        let clock = Clock::default();
        let other = clock.clone();
        let before = other.now();
        clock.advance(Duration::from_secs(3600));
        assert!(other.now().millis() - before.millis() >= 3_600_000);
    }
}
