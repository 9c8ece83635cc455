//! Any file given to the subscriber import: refused with a reason, or a
//! non-empty list of valid subscriptions, never more than the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use upstate_core::subscriber_csv::{IMPORT_MAX, parse};

fuzz_target!(|text: &str| {
    match parse(7, text) {
        Ok(subs) => {
            assert!(!subs.is_empty() && subs.len() <= IMPORT_MAX);
            for s in subs {
                assert!(!s.target.is_empty());
            }
        }
        Err(e) => assert!(e.0.iter().all(|f| f.field == "csv")),
    }
});
