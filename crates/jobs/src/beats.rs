//! When each background loop of this process last finished a round, for
//! the self-test (`/api/selftest`): a loop that stopped turning is a fault
//! no request would otherwise show. Per process, as the loops are.

use std::sync::atomic::{AtomicI64, Ordering};
use upstate_core::Timestamp;

/// The loops that beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loop {
    /// Jobs and the sweep (`run_scheduler`).
    Scheduler,
    /// Deliveries (`run_sender`).
    Sender,
    /// Monitor checks (`run_monitors`).
    Monitors,
}

static SCHEDULER: AtomicI64 = AtomicI64::new(0);
static SENDER: AtomicI64 = AtomicI64::new(0);
static MONITORS: AtomicI64 = AtomicI64::new(0);

fn slot(l: Loop) -> &'static AtomicI64 {
    match l {
        Loop::Scheduler => &SCHEDULER,
        Loop::Sender => &SENDER,
        Loop::Monitors => &MONITORS,
    }
}

/// A round of `l` finished now.
pub fn beat(l: Loop) {
    slot(l).store(Timestamp::now().millis(), Ordering::Relaxed);
}

/// When `l` last finished a round in this process (None: never).
pub fn last(l: Loop) -> Option<Timestamp> {
    match slot(l).load(Ordering::Relaxed) {
        0 => None,
        ms => Some(Timestamp::from_millis(ms)),
    }
}
