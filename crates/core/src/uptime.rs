//! Uptime from status history.
//!
//! Rule (documented in docs/api.md): time in `major_outage` counts as down;
//! time in `partial_outage` counts as 30% down (Atlassian's rule); `degraded`
//! and `maintenance` count as up. Only time the component existed counts:
//! days before its first recorded status have no data (never 100%), and today
//! counts up to now. Days are calendar days in the page's time zone, so a day
//! may last 23 or 25 hours around a DST change.

use crate::Id;
use crate::model::Component;
use crate::status::ComponentStatus;
use crate::timestamp::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Serialize;
use std::collections::HashMap;

/// A component's status from a moment on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusChange {
    pub component_id: Id,
    pub status: ComponentStatus,
    pub at: Timestamp,
}

/// The share of a period in a status that counts as down.
pub fn down_weight(s: ComponentStatus) -> f64 {
    match s {
        ComponentStatus::MajorOutage => 1.0,
        ComponentStatus::PartialOutage => 0.3,
        _ => 0.0,
    }
}

/// One calendar day of one component (or of the page).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DayUptime {
    /// `YYYY-MM-DD` in the page's time zone.
    pub date: String,
    /// Percentage up, or null when there is no data for the day.
    pub uptime: Option<f64>,
    /// The worst status seen that day, or null without data.
    pub worst_status: Option<ComponentStatus>,
    /// Minutes spent in partial or major outage.
    pub outage_minutes: i64,
}

/// A component's (or the page's) uptime over the requested days.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UptimeSeries {
    /// Percentage up over all days with data, or null without any.
    pub uptime: Option<f64>,
    /// Oldest first; the last entry is today.
    pub days: Vec<DayUptime>,
}

/// Per-day boundaries: (date, start, end) oldest first, today ending at `now`.
pub fn day_windows(tz: &TimeZone, days: u32, now: Timestamp) -> Vec<(Date, Timestamp, Timestamp)> {
    let to_ts = |d: Date| -> Option<Timestamp> {
        d.to_zoned(tz.clone())
            .ok()
            .map(|z| Timestamp::from_millis(z.timestamp().as_millisecond()))
    };
    let Ok(now_j) = jiff::Timestamp::from_millisecond(now.millis()) else {
        return vec![];
    };
    let today = now_j.to_zoned(tz.clone()).date();
    let mut out = Vec::with_capacity(days as usize);
    let mut date = today;
    for _ in 0..days {
        let (Some(start), Some(next)) = (to_ts(date), date.tomorrow().ok().and_then(to_ts)) else {
            break;
        };
        out.push((date, start, next.min(now)));
        match date.yesterday() {
            Ok(d) => date = d,
            Err(_) => break,
        }
    }
    out.reverse();
    out
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One component's series. `changes` are that component's changes in time
/// order, including the one in effect at the first day's start.
pub fn component_series(
    changes: &[StatusChange],
    windows: &[(Date, Timestamp, Timestamp)],
    now: Timestamp,
) -> UptimeSeries {
    let segments: Vec<(i64, i64, ComponentStatus)> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let end = changes.get(i + 1).map(|n| n.at).unwrap_or(now);
            (c.at.millis(), end.millis(), c.status)
        })
        .filter(|(s, e, _)| e > s)
        .collect();
    let (mut total_known, mut total_down) = (0i64, 0f64);
    let days = windows
        .iter()
        .map(|(date, start, end)| {
            let (mut known, mut down, mut outage, mut worst) =
                (0i64, 0f64, 0i64, None::<ComponentStatus>);
            // Segments follow one another, so their ends rise too: the
            // first that reaches into the day is found by halving, and the
            // walk stops at the first that starts after it (a year of
            // changes per component cost each day a pass over all of them).
            let first = segments.partition_point(|&(_, e, _)| e <= start.millis());
            for &(s, e, status) in segments[first..]
                .iter()
                .take_while(|&&(s, _, _)| s < end.millis())
            {
                let overlap = e.min(end.millis()) - s.max(start.millis());
                if overlap <= 0 {
                    continue;
                }
                known += overlap;
                down += overlap as f64 * down_weight(status);
                if down_weight(status) > 0.0 {
                    outage += overlap;
                }
                if worst.is_none_or(|w| status.severity() > w.severity()) {
                    worst = Some(status);
                }
            }
            total_known += known;
            total_down += down;
            DayUptime {
                date: date.to_string(),
                uptime: (known > 0).then(|| round3(100.0 * (1.0 - down / known as f64))),
                worst_status: worst,
                outage_minutes: (outage as f64 / 60_000.0).round() as i64,
            }
        })
        .collect();
    UptimeSeries {
        uptime: (total_known > 0).then(|| round3(100.0 * (1.0 - total_down / total_known as f64))),
        days,
    }
}

/// Percentage up from `since` to `now` by the same rule (None without
/// data): `changes` as for `component_series`.
pub fn uptime_between(changes: &[StatusChange], since: Timestamp, now: Timestamp) -> Option<f64> {
    component_series(changes, &[(Date::MIN, since, now)], now).uptime
}

/// The page's series: each day is the mean of the components with data that
/// day, its worst status the worst of any, its outage minutes the most of any;
/// the overall figure is the mean of the components' overall figures.
pub fn page_series(
    components: &[UptimeSeries],
    windows: &[(Date, Timestamp, Timestamp)],
) -> UptimeSeries {
    let mean =
        |xs: Vec<f64>| (!xs.is_empty()).then(|| round3(xs.iter().sum::<f64>() / xs.len() as f64));
    let days = windows
        .iter()
        .enumerate()
        .map(|(i, (date, _, _))| {
            let day: Vec<&DayUptime> = components.iter().filter_map(|c| c.days.get(i)).collect();
            DayUptime {
                date: date.to_string(),
                uptime: mean(day.iter().filter_map(|d| d.uptime).collect()),
                worst_status: day
                    .iter()
                    .filter_map(|d| d.worst_status)
                    .max_by_key(|s| s.severity()),
                outage_minutes: day.iter().map(|d| d.outage_minutes).max().unwrap_or(0),
            }
        })
        .collect();
    UptimeSeries {
        uptime: mean(components.iter().filter_map(|c| c.uptime).collect()),
        days,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ComponentUptime {
    pub id: String,
    pub name: String,
    pub uptime: Option<f64>,
    pub days: Vec<DayUptime>,
}

/// The body of `GET /api/public/status/{slug}/uptime`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UptimeReport {
    pub days: u32,
    pub time_zone: String,
    /// The page as a whole over all days.
    pub uptime: Option<f64>,
    /// The page day by day, oldest first.
    pub page: Vec<DayUptime>,
    pub components: Vec<ComponentUptime>,
}

/// Uptime of a page's components over the last `days` calendar days of the
/// page's time zone (an unknown zone falls back to UTC). `history` holds the
/// changes of all components, ordered by component and time.
/// Each component's changes, in their order, from one pass over a page's
/// (a pass over all of them per component made a thousand components a
/// billion steps).
pub fn by_component(history: &[StatusChange]) -> HashMap<Id, Vec<StatusChange>> {
    let mut out: HashMap<Id, Vec<StatusChange>> = HashMap::new();
    for h in history {
        out.entry(h.component_id).or_default().push(*h);
    }
    out
}

pub fn report(
    time_zone: &str,
    components: &[Component],
    history: &[StatusChange],
    days: u32,
    now: Timestamp,
) -> UptimeReport {
    let tz = TimeZone::get(time_zone).unwrap_or(TimeZone::UTC);
    let windows = day_windows(&tz, days, now);
    let by_component = by_component(history);
    let series: Vec<UptimeSeries> = components
        .iter()
        .map(|c| {
            let own = by_component.get(&c.id).map_or(&[][..], Vec::as_slice);
            component_series(own, &windows, now)
        })
        .collect();
    let page = page_series(&series, &windows);
    UptimeReport {
        days,
        time_zone: time_zone.to_string(),
        uptime: page.uptime,
        page: page.days,
        components: components
            .iter()
            .zip(series)
            .map(|(c, s)| ComponentUptime {
                id: c.id.to_string(),
                name: c.name.clone(),
                uptime: s.uptime,
                days: s.days,
            })
            .collect(),
    }
}

/// The worst status `component` had from `from` to `to` (an incident's
/// span), by the same history as uptime; None when the history does not
/// reach that far back (older than a year) or the component is gone.
pub fn worst_during(
    history: &[StatusChange],
    component: Id,
    from: Timestamp,
    to: Timestamp,
) -> Option<ComponentStatus> {
    let own: Vec<StatusChange> = history
        .iter()
        .filter(|h| h.component_id == component)
        .copied()
        .collect();
    // A span of no length (resolved in the same millisecond) still asks
    // for the status in effect at that instant.
    let to = to.max(from.plus_millis(1));
    component_series(&own, &[(Date::MIN, from, to)], to)
        .days
        .first()
        .and_then(|d| d.worst_status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ComponentStatus::*;

    fn at(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap_or(Timestamp::from_millis(0))
    }

    fn change(status: ComponentStatus, when: &str) -> StatusChange {
        StatusChange {
            component_id: 1,
            status,
            at: at(when),
        }
    }

    /// Many changes a day, some within one day, some over several: each
    /// day's figures are those of every segment that overlaps it, as a
    /// walk over all of them finds; and a page's report reads each
    /// component's own changes however the page's are interleaved.
    #[test]
    fn days_see_exactly_the_segments_that_overlap_them() {
        let tz = TimeZone::UTC;
        let now = at("2026-03-31T13:00:00Z");
        let w = day_windows(&tz, 30, now);
        let statuses = [Operational, Degraded, PartialOutage, MajorOutage];
        let (mut seed, mut t) = (7u64, at("2026-02-25T00:00:00Z").millis());
        let mut changes = Vec::new();
        while t < now.millis() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            changes.push(StatusChange {
                component_id: 1,
                status: statuses[(seed >> 33) as usize % 4],
                at: Timestamp::from_millis(t),
            });
            // From a minute to three days later.
            t += 60_000 + (seed >> 20) as i64 % (3 * 86_400_000);
        }
        let got = component_series(&changes, &w, now);
        for (day, (_, start, end)) in got.days.iter().zip(&w) {
            let (mut known, mut worst) = (0i64, None::<ComponentStatus>);
            for (i, c) in changes.iter().enumerate() {
                let until = changes.get(i + 1).map_or(now, |n| n.at).millis();
                let overlap = until.min(end.millis()) - c.at.millis().max(start.millis());
                if overlap > 0 {
                    known += overlap;
                    if worst.is_none_or(|w| c.status.severity() > w.severity()) {
                        worst = Some(c.status);
                    }
                }
            }
            assert_eq!(day.worst_status, worst, "{}", day.date);
            assert_eq!(day.uptime.is_some(), known > 0, "{}", day.date);
        }
        // Two components' changes interleaved: each gets its own series.
        let other: Vec<StatusChange> = changes
            .iter()
            .map(|c| StatusChange {
                component_id: 2,
                status: MajorOutage,
                ..*c
            })
            .collect();
        let mixed: Vec<StatusChange> = changes
            .iter()
            .zip(&other)
            .flat_map(|(a, b)| [*b, *a])
            .collect();
        let comp = |id: Id| Component {
            id,
            name: format!("C{id}"),
            description: String::new(),
            status: Operational,
            order: 0,
            status_page_id: 1,
            group_id: None,
            created_at: now,
            updated_at: now,
        };
        let r = report("UTC", &[comp(1), comp(2)], &mixed, 30, now);
        assert_eq!(r.components[0].uptime, got.uptime);
        assert_eq!(r.components[1].uptime, Some(0.0));
    }

    #[test]
    fn a_day_split_by_an_outage() {
        let tz = TimeZone::UTC;
        let now = at("2026-03-03T00:00:00Z");
        let w = day_windows(&tz, 3, now);
        // Day 3 ("today") is empty: now is its first instant.
        assert_eq!(
            w.iter().map(|d| d.0.to_string()).collect::<Vec<_>>(),
            ["2026-03-01", "2026-03-02", "2026-03-03"]
        );
        let changes = [
            change(Operational, "2026-02-01T00:00:00Z"),
            change(MajorOutage, "2026-03-01T12:00:00Z"),
            change(PartialOutage, "2026-03-01T18:00:00Z"),
            change(Operational, "2026-03-02T00:00:00Z"),
        ];
        let s = component_series(&changes, &w, now);
        // 6 h down + 6 h at 30% = 7.8 h of 24 h down.
        assert_eq!(s.days[0].uptime, Some(67.5));
        assert_eq!(s.days[0].worst_status, Some(MajorOutage));
        assert_eq!(s.days[0].outage_minutes, 720);
        assert_eq!(s.days[1].uptime, Some(100.0));
        assert_eq!(s.days[1].worst_status, Some(Operational));
        assert_eq!(s.days[2].uptime, None);
        assert_eq!(s.uptime, Some(83.75));
    }

    #[test]
    fn days_before_creation_have_no_data_and_degraded_counts_as_up() {
        let tz = TimeZone::UTC;
        let now = at("2026-03-02T12:00:00Z");
        let w = day_windows(&tz, 3, now);
        let s = component_series(
            &[
                change(Degraded, "2026-03-01T18:00:00Z"),
                change(Maintenance, "2026-03-02T06:00:00Z"),
            ],
            &w,
            now,
        );
        assert_eq!(s.days[0].uptime, None, "before the component existed");
        assert_eq!(s.days[0].worst_status, None);
        assert_eq!(
            s.days[1].uptime,
            Some(100.0),
            "a partial first day counts only its known hours"
        );
        assert_eq!(s.days[2].uptime, Some(100.0), "today counts up to now");
        assert_eq!(s.days[2].worst_status, Some(Degraded));
    }

    #[test]
    fn days_follow_the_page_time_zone() {
        // Pacific/Kiritimati is UTC+14: its 2026-03-02 is 2026-03-01T10:00Z..2026-03-02T10:00Z.
        let tz = TimeZone::get("Pacific/Kiritimati").unwrap_or(TimeZone::UTC);
        let now = at("2026-03-02T10:00:00Z");
        let w = day_windows(&tz, 2, now);
        assert_eq!(w[0].0.to_string(), "2026-03-02");
        assert_eq!(w[0].1, at("2026-03-01T10:00:00Z"));
        assert_eq!(w[1].0.to_string(), "2026-03-03");
        let changes = [
            change(Operational, "2026-02-01T00:00:00Z"),
            change(MajorOutage, "2026-03-01T22:00:00Z"),
        ];
        let s = component_series(&changes, &w, now);
        // Down from 22:00Z to 10:00Z: half of the local day 2026-03-02.
        assert_eq!(s.days[0].uptime, Some(50.0));
        assert_eq!(s.days[0].outage_minutes, 720);
    }

    #[test]
    fn dst_days_last_23_hours() {
        let tz = TimeZone::get("Europe/Berlin").unwrap_or(TimeZone::UTC);
        let now = at("2026-03-30T12:00:00Z");
        let w = day_windows(&tz, 3, now);
        let (_, start, end) = w[1];
        assert_eq!(w[1].0.to_string(), "2026-03-29");
        assert_eq!(end.millis() - start.millis(), 23 * 3_600_000);
    }

    #[test]
    fn page_series_averages_components_with_data() {
        let tz = TimeZone::UTC;
        let now = at("2026-03-02T00:00:00Z");
        let w = day_windows(&tz, 1, now.plus_millis(-1));
        let a = component_series(&[change(MajorOutage, "2026-03-01T00:00:00Z")], &w, now);
        let b = component_series(&[change(Operational, "2026-03-01T00:00:00Z")], &w, now);
        let none = component_series(&[], &w, now);
        let page = page_series(&[a, b, none], &w);
        assert_eq!(page.days[0].uptime, Some(50.0));
        assert_eq!(page.days[0].worst_status, Some(MajorOutage));
        assert_eq!(page.uptime, Some(50.0));
    }

    #[test]
    fn the_worst_status_during_a_span_counts_the_one_in_effect_at_its_start() {
        let history = [
            change(Degraded, "2026-03-01T00:00:00Z"),
            change(MajorOutage, "2026-03-01T10:00:00Z"),
            change(Operational, "2026-03-01T11:00:00Z"),
            StatusChange {
                component_id: 2,
                status: PartialOutage,
                at: at("2026-03-01T00:00:00Z"),
            },
        ];
        let during = |from: &str, to: &str| worst_during(&history, 1, at(from), at(to));
        assert_eq!(
            during("2026-03-01T09:00:00Z", "2026-03-01T09:30:00Z"),
            Some(Degraded)
        );
        assert_eq!(
            during("2026-03-01T09:00:00Z", "2026-03-01T12:00:00Z"),
            Some(MajorOutage)
        );
        assert_eq!(
            during("2026-03-01T11:30:00Z", "2026-03-01T11:30:00Z"),
            Some(Operational)
        );
        assert_eq!(during("2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z"), None);
        assert_eq!(
            worst_during(
                &history,
                3,
                at("2026-03-01T09:00:00Z"),
                at("2026-03-02T00:00:00Z")
            ),
            None
        );
    }
}
