//! Uptime Kuma turned into an export document for `import_from` with
//! `Mode::AddPages`. Its JSON backup (Settings → Backup → Export:
//! `version`, `notificationList`, `monitorList`) makes one page; its
//! database (`kuma.db`, read by `kuma_db`) adds what the backup never held:
//! status pages with their groups, maintenance and incidents. Each monitor
//! becomes a component watched by a monitor of the same kind, target and
//! interval. What has no counterpart is said, with the reason.

use super::foreign::{Ids, Translated, history, slug_of, text};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use upstate_core::Timestamp;
use upstate_core::monitors::{INTERVAL_MAX_S, INTERVAL_MIN_S};

/// Kuma writes booleans as `true`/`false` or `1`/`0`.
fn truthy(v: &Value) -> bool {
    v.as_bool()
        .unwrap_or_else(|| v.as_i64().is_some_and(|n| n != 0))
}

/// Kuma's request headers: a JSON object, as text, of name to value.
fn headers(v: &Value) -> Vec<Value> {
    let parsed: Option<Map<String, Value>> = match v {
        Value::String(s) if !s.trim().is_empty() => serde_json::from_str(s).ok(),
        Value::Object(o) => Some(o.clone()),
        _ => None,
    };
    parsed
        .into_iter()
        .flatten()
        .map(|(name, value)| json!({"name": name, "value": text(&value)}))
        .collect()
}

fn list<'a>(backup: &'a Value, name: &str) -> &'a [Value] {
    backup
        .get(name)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What watches a Kuma monitor here: (kind, target, heartbeat token,
/// config), or why nothing can.
fn watch(m: &Value, left_out: &mut Vec<String>) -> Result<(String, Value, Option<String>), String> {
    let name = text(&m["name"]);
    let kuma = text(&m["type"]);
    let interval = m["interval"]
        .as_i64()
        .unwrap_or(60)
        .clamp(INTERVAL_MIN_S, INTERVAL_MAX_S);
    let mut config = json!({
        "intervalSeconds": interval,
        "retries": m["maxretries"].as_i64().unwrap_or(0).clamp(0, 10),
        "enabled": truthy(&m["active"]),
    });
    if let Some(timeout) = m["timeout"].as_f64().filter(|t| *t > 0.0) {
        config["timeoutMs"] = json!(((timeout * 1000.0) as i64).clamp(1000, interval * 1000));
    }
    let (kind, target, token) = match kuma.as_str() {
        "http" | "keyword" | "json-query" => {
            config["method"] = json!(text(&m["method"]).to_uppercase());
            if config["method"] == "" {
                config["method"] = json!("GET");
            }
            config["verifyTls"] = json!(!truthy(&m["ignoreTls"]));
            config["followRedirects"] = json!(m["maxredirects"].as_i64() != Some(0));
            if let Some(codes) = m["accepted_statuscodes"].as_array() {
                let codes: Vec<String> = codes.iter().map(text).collect();
                if !codes.is_empty() {
                    config["expectedStatus"] = json!(codes.join(", "));
                }
            }
            if kuma == "keyword" {
                config["keyword"] = json!(text(&m["keyword"]));
            }
            if kuma == "json-query" {
                left_out.push(format!("monitor {name:?}: its JSON query is not checked (Upstate checks the status and a keyword)"));
            }
            config["headers"] = json!(headers(&m["headers"]));
            config["body"] = json!(text(&m["body"]));
            ("http", text(&m["url"]), None)
        }
        "port" => (
            "tcp",
            format!("{}:{}", text(&m["hostname"]), text(&m["port"])),
            None,
        ),
        "dns" => {
            config["dnsRecordType"] = json!(text(&m["dns_resolve_type"]).to_uppercase());
            config["dnsServer"] = json!(text(&m["dns_resolve_server"]));
            ("dns", text(&m["hostname"]), None)
        }
        "push" => {
            let token = Some(text(&m["pushToken"])).filter(|t| t.len() >= 8);
            (
                "heartbeat",
                String::new(),
                Some(token.unwrap_or_else(crate::subscribers::token)),
            )
        }
        other => {
            return Err(format!(
                "monitor {name:?}: Uptime Kuma's {other} check has no counterpart (Upstate checks http, tcp, dns and heartbeats); the component came, unwatched"
            ));
        }
    };
    config["kind"] = json!(kind);
    config["target"] = json!(target);
    Ok((kind.to_string(), config, token))
}

/// A Kuma time (`2026-11-20 10:00:00`, wall-clock in `zone`) in ms.
fn kuma_time(v: &Value, zone: &jiff::tz::TimeZone) -> Option<i64> {
    let s = v.as_str()?.trim();
    if let Ok(t) = Timestamp::parse(s) {
        return Some(t.millis());
    }
    let civil: jiff::civil::DateTime = s.replace(' ', "T").parse().ok()?;
    civil
        .to_zoned(zone.clone())
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

/// A maintenance's zone: Kuma's `timezone`, where it names one.
fn zone_of(m: &Value) -> Option<String> {
    let z = text(&m["timezone"]);
    jiff::tz::TimeZone::get(&z).is_ok().then_some(z)
}

/// Minutes after midnight of Kuma's `HH:MM[:SS]`.
fn clock(s: &str) -> Option<i64> {
    let mut p = s.split(':');
    let h: i64 = p.next()?.trim().parse().ok()?;
    let m: i64 = p.next()?.trim().parse().ok()?;
    ((0..24).contains(&h) && (0..60).contains(&m)).then_some(h * 60 + m)
}

/// A recurring window's length in minutes and its start (`HH:MM`): Kuma
/// 2's `duration` (seconds: its form's minutes times 60), or from
/// `start_time` to `end_time`, across midnight when the end comes first.
fn window(m: &Value) -> Option<(i64, String)> {
    let start = clock(&text(&m["start_time"]))?;
    let span = match m["duration"].as_i64().filter(|d| *d > 0) {
        Some(seconds) => (seconds + 59) / 60,
        None => {
            let end = clock(&text(&m["end_time"]))?;
            if end > start {
                end - start
            } else {
                end + 1440 - start
            }
        }
    };
    Some((span, format!("{:02}:{:02}", start / 60, start % 60)))
}

/// The RRULE of a recurring Kuma maintenance, or why there is none.
fn rrule(m: &Value) -> Result<String, String> {
    let numbers = |v: &Value| -> Vec<Value> {
        match v {
            Value::String(s) => serde_json::from_str::<Vec<Value>>(s).unwrap_or_default(),
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        }
    };
    match text(&m["strategy"]).as_str() {
        "recurring-weekday" => {
            const DAYS: [&str; 7] = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"];
            let days: Vec<&str> = numbers(&m["weekdays"])
                .iter()
                .filter_map(|d| d.as_i64().or_else(|| text(d).parse().ok()))
                .filter_map(|d| DAYS.get(usize::try_from(d % 7).ok()?).copied())
                .collect();
            if days.is_empty() {
                return Err("no weekday chosen".into());
            }
            Ok(format!("FREQ=WEEKLY;BYDAY={}", days.join(",")))
        }
        "recurring-day-of-month" => {
            let days: Vec<String> = numbers(&m["days_of_month"])
                .iter()
                .filter_map(|d| match d {
                    Value::Number(n) => n.as_i64().map(|n| n.to_string()),
                    Value::String(s) if s.starts_with("lastDay") => s
                        .trim_start_matches("lastDay")
                        .parse::<i64>()
                        .ok()
                        .map(|n| format!("-{n}")),
                    Value::String(s) => s.parse::<i64>().ok().map(|n| n.to_string()),
                    _ => None,
                })
                .collect();
            if days.is_empty() {
                return Err("no day of the month chosen".into());
            }
            Ok(format!("FREQ=MONTHLY;BYMONTHDAY={}", days.join(",")))
        }
        "recurring-interval" => {
            let n = m["interval_day"].as_i64().filter(|n| *n >= 1).unwrap_or(1);
            Ok(format!("FREQ=DAILY;INTERVAL={n}"))
        }
        "cron" => Err("a cron schedule (set it up again as recurring maintenance)".into()),
        "manual" => {
            Err("switched on by hand, with no time (schedule it here when it comes)".into())
        }
        other => Err(format!("the {other} strategy has no counterpart")),
    }
}

/// Kuma as one or more pages of components and monitors.
pub fn translate(backup: &Value, schema: i64, now: Timestamp) -> Result<Translated, String> {
    let monitors = backup
        .get("monitorList")
        .and_then(Value::as_array)
        .ok_or("this is not an Uptime Kuma backup: it has no \"monitorList\"")?;
    if backup.get("version").and_then(Value::as_str).is_none() {
        return Err("this is not an Uptime Kuma backup: it has no \"version\"".into());
    }
    let now_ms = now.millis();
    let mut ids = Ids::new("uptime_kuma");
    let mut left_out = Vec::new();
    let mut t: Map<String, Value> = Map::new();
    let push = super::push_row;
    let page_row =
        |id: i64, name: &str, slug: &str, public: bool, zone: &str, description: &str| {
            json!({"id": id, "name": name, "slug": slug_of(slug), "accent_color": "#2563eb",
               "is_public": public, "show_subscribe": true, "show_uptime": true, "uptime_days": 90,
               "time_zone": zone, "created_at": now_ms, "updated_at": now_ms,
               "description": description})
        };
    let by_id: HashMap<String, &Value> = monitors.iter().map(|m| (text(&m["id"]), m)).collect();
    let maintenance = list(backup, "maintenanceList");
    // Where each monitor shows: (monitor, page, group), in order.
    let mut places: Vec<(String, i64, Option<i64>)> = Vec::new();
    let mut fallback = None;
    let status_pages = list(backup, "statusPageList");
    if status_pages.is_empty() {
        // A backup: one page, Kuma's group monitors as its groups.
        let page = ids.give("status_pages", "page");
        push(
            &mut t,
            "status_pages",
            page_row(
                page,
                "Uptime Kuma",
                "uptime-kuma",
                true,
                "UTC",
                "Imported from an Uptime Kuma backup",
            ),
        );
        let mut groups: HashMap<String, i64> = HashMap::new();
        for (i, m) in monitors.iter().filter(|m| m["type"] == "group").enumerate() {
            let source = text(&m["id"]);
            let id = ids.give("component_groups", &format!("group:{source}"));
            groups.insert(source, id);
            push(
                &mut t,
                "component_groups",
                json!({"id": id, "page_id": page, "name": text(&m["name"]), "position": i, "created_at": now_ms}),
            );
        }
        for m in monitors.iter().filter(|m| m["type"] != "group") {
            places.push((
                text(&m["id"]),
                page,
                groups.get(&text(&m["parent"])).copied(),
            ));
        }
        fallback = Some(page);
    } else {
        // The database: each status page with its groups, in Kuma's order.
        let mut zones: HashMap<String, String> = HashMap::new();
        for link in list(backup, "maintenanceStatusPageList") {
            let m = maintenance
                .iter()
                .find(|m| text(&m["id"]) == text(&link["maintenance_id"]));
            if let Some(zone) = m.and_then(zone_of) {
                zones.entry(text(&link["status_page_id"])).or_insert(zone);
            }
        }
        let mut groups = list(backup, "groupList").to_vec();
        groups.sort_by_key(|g| g["weight"].as_i64().unwrap_or(0));
        let mut links = list(backup, "monitorGroupList").to_vec();
        links.sort_by_key(|l| l["weight"].as_i64().unwrap_or(0));
        for sp in status_pages {
            let source = text(&sp["id"]);
            let page = ids.give("status_pages", &format!("status_page:{source}"));
            let name = text(&sp["title"]);
            let zone = zones.get(&source).map_or("UTC", String::as_str);
            push(
                &mut t,
                "status_pages",
                page_row(
                    page,
                    &name,
                    &text(&sp["slug"]),
                    truthy(&sp["published"]),
                    zone,
                    &text(&sp["description"]),
                ),
            );
            if !text(&sp["password"]).is_empty() {
                left_out.push(format!("status page {name:?}: its password stays in Uptime Kuma (set one here under Pages)"));
            }
            for (i, g) in groups
                .iter()
                .filter(|g| text(&g["status_page_id"]) == source)
                .enumerate()
            {
                let gid = ids.give(
                    "component_groups",
                    &format!("kuma_group:{}", text(&g["id"])),
                );
                push(
                    &mut t,
                    "component_groups",
                    json!({"id": gid, "page_id": page, "name": text(&g["name"]), "position": i, "created_at": now_ms}),
                );
                for l in links
                    .iter()
                    .filter(|l| text(&l["group_id"]) == text(&g["id"]))
                {
                    places.push((text(&l["monitor_id"]), page, Some(gid)));
                }
            }
        }
        // Monitors on no status page: a page of their own, not public,
        // so that nothing shows that Kuma did not show.
        let shown: std::collections::HashSet<&str> = places.iter().map(|p| p.0.as_str()).collect();
        let hidden: Vec<String> = monitors
            .iter()
            .filter(|m| m["type"] != "group" && !shown.contains(text(&m["id"]).as_str()))
            .map(|m| text(&m["id"]))
            .collect();
        if !hidden.is_empty() {
            let page = ids.give("status_pages", "page");
            push(
                &mut t,
                "status_pages",
                page_row(
                    page,
                    "Uptime Kuma monitors",
                    "uptime-kuma-monitors",
                    false,
                    "UTC",
                    "Monitors that were on no status page of Uptime Kuma",
                ),
            );
            for m in hidden {
                places.push((m, page, None));
            }
            fallback = Some(page);
        }
    }

    // Components where the monitors show; the monitor watches the first.
    let mut watched: HashMap<String, i64> = HashMap::new();
    let mut component_of: HashMap<(String, i64), i64> = HashMap::new();
    let mut position: HashMap<i64, i64> = HashMap::new();
    for (source, page, group) in &places {
        let Some(m) = by_id.get(source) else {
            continue;
        };
        if m["type"] == "group" {
            left_out.push(format!(
                "group monitor {:?} on a status page: its members show, not itself",
                text(&m["name"])
            ));
            continue;
        }
        let name = text(&m["name"]);
        if name.is_empty() || source.is_empty() {
            left_out.push("a monitor without a name or id".into());
            continue;
        }
        if component_of.contains_key(&(source.clone(), *page)) {
            continue;
        }
        let key = if Some(*page) == fallback {
            format!("monitor:{source}")
        } else {
            format!("monitor:{source}@{page}")
        };
        let n = ids.give("components", &key);
        let at = position.entry(*page).or_insert(0);
        push(
            &mut t,
            "components",
            json!({"id": n, "page_id": page, "group_id": group, "name": name,
                   "description": text(&m["description"]), "status": "operational",
                   "position": *at, "created_at": now_ms, "updated_at": now_ms}),
        );
        *at += 1;
        history(
            &mut ids,
            &mut t,
            n,
            &key,
            now_ms,
            &[],
            ("operational", now_ms),
        );
        component_of.insert((source.clone(), *page), n);
        if watched.contains_key(source) {
            continue;
        }
        watched.insert(source.clone(), n);
        let (kind, config, token) = match watch(m, &mut left_out) {
            Ok(w) => w,
            Err(why) => {
                left_out.push(why);
                continue;
            }
        };
        let mid = ids.give("monitors", &format!("monitor:{source}"));
        push(
            &mut t,
            "monitors",
            json!({"id": mid, "component_id": n, "kind": kind, "config": config.to_string(),
                   "enabled": truthy(&m["active"]), "heartbeat_token": token, "state": "unknown",
                   "failures": 0, "successes": 0, "manual": false, "next_run_at": now_ms,
                   "created_at": now_ms, "updated_at": now_ms}),
        );
    }

    // Maintenance: on its first status page, else where its monitors are.
    for m in maintenance {
        let title = text(&m["title"]);
        let source = text(&m["id"]);
        if !truthy(&m["active"]) {
            left_out.push(format!("maintenance {title:?}: paused in Uptime Kuma"));
            continue;
        }
        let affected: Vec<String> = list(backup, "monitorMaintenanceList")
            .iter()
            .filter(|l| text(&l["maintenance_id"]) == source)
            .map(|l| text(&l["monitor_id"]))
            .collect();
        let page = list(backup, "maintenanceStatusPageList")
            .iter()
            .find(|l| text(&l["maintenance_id"]) == source)
            .and_then(|l| {
                ids.of(
                    "status_pages",
                    &format!("status_page:{}", text(&l["status_page_id"])),
                )
            })
            .or_else(|| {
                component_of
                    .iter()
                    .find(|((mon, _), _)| affected.contains(mon))
                    .map(|((_, p), _)| *p)
            })
            .or(fallback);
        let Some(page) = page else {
            left_out.push(format!("maintenance {title:?}: on no page"));
            continue;
        };
        let components: Vec<i64> = affected
            .iter()
            .filter_map(|mon| component_of.get(&(mon.clone(), page)).copied())
            .collect();
        let zone_name = zone_of(m).unwrap_or_else(|| "UTC".into());
        let zone = jiff::tz::TimeZone::get(&zone_name).unwrap_or(jiff::tz::TimeZone::UTC);
        let description = text(&m["description"]);
        if text(&m["strategy"]) == "single" {
            let (Some(start), Some(end)) = (
                kuma_time(&m["start_date"], &zone),
                kuma_time(&m["end_date"], &zone),
            ) else {
                left_out.push(format!("maintenance {title:?}: needs a start and an end"));
                continue;
            };
            let status = if end <= now_ms {
                "completed"
            } else if start <= now_ms {
                "in_progress"
            } else {
                "scheduled"
            };
            let id = ids.give("maintenance", &format!("maintenance:{source}"));
            push(
                &mut t,
                "maintenance",
                json!({"id": id, "page_id": page, "title": title, "description": description,
                       "status": status, "scheduled_start": start, "scheduled_end": end.max(start + 60_000),
                       "auto_start": true, "created_at": now_ms, "updated_at": now_ms}),
            );
            for c in components {
                push(
                    &mut t,
                    "maintenance_components",
                    json!({"maintenance_id": id, "component_id": c}),
                );
            }
            continue;
        }
        let rule = match rrule(m) {
            Ok(r) => r,
            Err(why) => {
                left_out.push(format!("maintenance {title:?}: {why}"));
                continue;
            }
        };
        let Some((duration, at)) = window(m) else {
            left_out.push(format!(
                "maintenance {title:?}: needs a start and an end time"
            ));
            continue;
        };
        let day = text(&m["start_date"])
            .get(..10)
            .map(str::to_string)
            .unwrap_or_else(|| {
                now.to_rfc3339()
                    .get(..10)
                    .unwrap_or("2026-01-01")
                    .to_string()
            });
        let id = ids.give("recurring_maintenance", &format!("maintenance:{source}"));
        push(
            &mut t,
            "recurring_maintenance",
            json!({"id": id, "page_id": page, "title": title, "description": description,
                   "rrule": rule, "first_start": format!("{day}T{at}"),
                   // Its own zone, where Kuma names one: the windows stay at
                   // that place's wall-clock time whatever the page's zone.
                   "time_zone": zone_of(m),
                   "duration_minutes": duration.clamp(upstate_core::recurring::DURATION_MIN, upstate_core::recurring::DURATION_MAX),
                   "auto_start": true, "horizon_days": upstate_core::recurring::HORIZON_DEFAULT,
                   "component_ids": serde_json::to_string(&components).unwrap_or_else(|_| "[]".into()),
                   "expanded_until": 0, "created_at": now_ms, "updated_at": now_ms}),
        );
    }

    // Kuma's incidents are notes pinned on a status page: one update each,
    // over when unpinned.
    for i in list(backup, "incidentList") {
        let Some(page) = ids.of(
            "status_pages",
            &format!("status_page:{}", text(&i["status_page_id"])),
        ) else {
            continue;
        };
        let created = kuma_time(&i["created_date"], &jiff::tz::TimeZone::UTC).unwrap_or(now_ms);
        let updated = kuma_time(&i["last_updated_date"], &jiff::tz::TimeZone::UTC)
            .unwrap_or(created)
            .max(created);
        let open = truthy(&i["pin"]) && truthy(&i["active"]);
        let impact = match text(&i["style"]).as_str() {
            "danger" => "major",
            "warning" => "minor",
            _ => "none",
        };
        let source = text(&i["id"]);
        let id = ids.give("incidents", &format!("incident:{source}"));
        push(
            &mut t,
            "incidents",
            json!({"id": id, "page_id": page, "title": text(&i["title"]),
                   "status": if open { "investigating" } else { "resolved" }, "impact": impact,
                   "created_at": created, "updated_at": updated,
                   "resolved_at": if open { Value::Null } else { json!(updated) }}),
        );
        let u = ids.give("incident_updates", &format!("incident:{source}"));
        push(
            &mut t,
            "incident_updates",
            json!({"id": u, "incident_id": id, "status": if open { "investigating" } else { "resolved" },
                   "message": text(&i["content"]), "created_at": created}),
        );
    }
    if let Some(list) = backup.get("notificationList").and_then(Value::as_array)
        && !list.is_empty()
    {
        left_out.push(format!(
            "notifications: {} of Uptime Kuma's stay out (Upstate's channels are set under Notifications)",
            list.len()
        ));
    }
    Ok(Translated {
        doc: super::document(schema, Timestamp::from_millis(now_ms), t),
        origin: ids.origin,
        left_out,
    })
}
