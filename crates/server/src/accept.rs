//! Quality-weighted request headers (`Accept-Encoding`, `Accept-Language`,
//! `Accept`): read by content negotiation and by language choice alike, so
//! neither borrows it from the other or from the extractors.

use axum::http::header;
use upstate_core::input;

/// The items of a comma-separated, quality-weighted header (`Accept-Encoding`,
/// `Accept-Language`, `Accept`) over all its lines, as `input::weighted` reads
/// each.
pub fn weighted(
    headers: &axum::http::HeaderMap,
    name: header::HeaderName,
) -> impl Iterator<Item = (&str, f32)> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(input::weighted)
}
