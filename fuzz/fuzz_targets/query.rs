//! Any query string: each accessor answers a value inside its promise or
//! names the parameter it refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use upstate_core::FieldErrors;
use upstate_core::input::Query;

fuzz_target!(|q: &str| {
    let q = Query::parse(q);
    let mut e = FieldErrors::new();
    let limit = q.limit("limit", 20, 100, &mut e);
    assert!((1..=100).contains(&limit), "limit {limit} out of 1..=100");
    if let Some(id) = q.id("componentId", &mut e) {
        assert!(id > 0, "id {id} is not positive");
    }
    let _ = q.bool("active", &mut e);
    let _ = q.incident_status(&mut e);
    let sort = q.one_of("sort", &["newest", "oldest"], &mut e);
    assert!(sort == "newest" || sort == "oldest");
    let _ = q.page_slug(&mut e);
    for f in &e.0 {
        assert!(
            ["limit", "componentId", "active", "status", "sort", "page"]
                .contains(&f.field.as_str()),
            "refusal names a parameter asked for: {}",
            f.field
        );
    }
    if let Some(v) = q.get("page") {
        assert!(!v.is_empty(), "an empty value counts as absent");
    }
});
