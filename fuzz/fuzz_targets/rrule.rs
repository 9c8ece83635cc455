//! Any RRULE line and first start a maintenance template may be given: the
//! checks answer, and a rule they accept expands (bounded) without panic,
//! every occurrence inside the window asked for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use upstate_core::Timestamp;
use upstate_core::recurring::{local_start, occurrences, rule};

fuzz_target!(|data: &str| {
    let (raw_rule, raw_start) = data.split_once('|').unwrap_or((data, "2026-11-29T02:00"));
    let Ok(r) = rule(raw_rule) else { return };
    let Ok(start) = local_start(raw_start) else {
        return;
    };
    let from = Timestamp::from_millis(1_764_000_000_000);
    let to = Timestamp::from_millis(1_764_000_000_000 + 400 * 86_400_000);
    for tz in ["UTC", "Europe/Amsterdam", "Pacific/Chatham"] {
        if let Ok(found) = occurrences(&r, &start, tz, from, to, 50) {
            assert!(found.len() <= 50);
            for t in found {
                assert!(t.millis() >= from.millis() && t.millis() <= to.millis());
            }
        }
    }
});
