//! Atlassian Statuspage's public v2 JSON of a page (`summary.json`,
//! `incidents.json`, `scheduled-maintenances.json`, as documented at
//! developer.statuspage.io and served by every hosted page under
//! `/api/v2/`) turned into an export document of one page, for
//! `import_from` with `Mode::AddPages`: components and their groups,
//! incidents with every update and the components they touched,
//! scheduled maintenance, and the components' history as the updates tell
//! it. What does not fit is said, with the reason.

use super::foreign::{Files, Ids, Move, Translated, history, millis, slug_of, text};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use upstate_core::Timestamp;

/// The files of one page, as fetched or saved.
#[derive(Debug, Default)]
struct StatuspageFiles {
    pub summary: Value,
    pub incidents: Option<Value>,
    pub maintenances: Option<Value>,
}

fn component_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "operational" => "operational",
        "degraded_performance" => "degraded",
        "partial_outage" => "partial_outage",
        "major_outage" => "major_outage",
        "under_maintenance" => "maintenance",
        _ => return None,
    })
}

fn incident_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "investigating" => "investigating",
        "identified" => "identified",
        "monitoring" => "monitoring",
        // A postmortem is written after the resolution.
        "resolved" | "postmortem" => "resolved",
        _ => return None,
    })
}

fn maintenance_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "scheduled" => "scheduled",
        "in_progress" | "verifying" => "in_progress",
        "completed" => "completed",
        _ => return None,
    })
}

fn impact(s: &str) -> &'static str {
    match s {
        "minor" => "minor",
        "major" => "major",
        "critical" => "critical",
        _ => "none",
    }
}

/// The files read from a page, public or through the management API, as
/// one document. The management API lists the same objects as the public
/// JSON, bare, with scheduled maintenance among the incidents.
pub fn translate_files(files: &Files, schema: i64, now: Timestamp) -> Result<Translated, String> {
    let sp = if let Some(summary) = files.get("summary.json") {
        StatuspageFiles {
            summary: summary.clone(),
            incidents: files.get("incidents.json").cloned(),
            maintenances: files.get("scheduled-maintenances.json").cloned(),
        }
    } else if let (Some(page), Some(components)) =
        (files.get("page.json"), files.get("components.json"))
    {
        let all = files
            .get("all-incidents.json")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (windows, incidents): (Vec<Value>, Vec<Value>) = all
            .into_iter()
            .partition(|i| !i.get("scheduled_for").is_none_or(Value::is_null));
        StatuspageFiles {
            summary: json!({"page": page, "components": components}),
            incidents: Some(json!({ "incidents": incidents })),
            maintenances: Some(json!({ "scheduled_maintenances": windows })),
        }
    } else {
        return Err(
            "neither summary.json (a page's public JSON) nor page.json and components.json (its management API) was read"
                .into(),
        );
    };
    translate(&sp, files.get("subscribers.json"), schema, now)
}

/// Statuspage's subscribers, as the management API lists them: email and
/// webhook ones (and Teams ones with their address) carry over, confirmed,
/// with the components they chose; the others say why they stayed.
fn subscribe(
    list: &Value,
    page_id: i64,
    components: &HashMap<String, (i64, &'static str, i64)>,
    ids: &mut Ids,
    t: &mut Map<String, Value>,
    left_out: &mut Vec<String>,
    now: i64,
) {
    let mut skipped: std::collections::BTreeMap<String, usize> = Default::default();
    let mut seen = std::collections::HashSet::new();
    for s in list.as_array().into_iter().flatten() {
        let mode = text(&s["mode"]);
        let (kind, target) = match mode.as_str() {
            "email" => ("email", text(&s["email"]).trim().to_lowercase()),
            "webhook" => ("webhook", text(&s["endpoint"]).trim().to_string()),
            "teams" => ("teams", text(&s["endpoint"]).trim().to_string()),
            _ => ("", String::new()),
        };
        if kind.is_empty() || target.is_empty() {
            *skipped
                .entry(if mode.is_empty() {
                    "unknown".into()
                } else {
                    mode
                })
                .or_default() += 1;
            continue;
        }
        if !s.get("quarantined_at").is_none_or(Value::is_null) {
            *skipped.entry("quarantined".into()).or_default() += 1;
            continue;
        }
        if !seen.insert((kind, target.clone())) {
            continue;
        }
        let source = text(&s["id"]);
        let id = ids.give("subscribers", &format!("subscriber:{source}"));
        let created = millis(&s["created_at"]).unwrap_or(now);
        super::push_row(
            t,
            "subscribers",
            json!({"id": id, "page_id": page_id, "kind": kind, "target": target,
                   "token": crate::subscribers::token(), "verified_at": created,
                   "created_at": created, "scope": "page", "lang": ""}),
        );
        // Chosen components: ids, or objects with an id. All of them
        // means the whole page, as a subscriber with none does here.
        let chosen: Vec<i64> = s["components"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let cid = c.get("id").map_or_else(|| text(c), text);
                components.get(&cid).map(|(local, _, _)| *local)
            })
            .collect();
        if chosen.len() < components.len() {
            for cid in chosen {
                super::push_row(
                    t,
                    "subscriber_components",
                    json!({"subscriber_id": id, "component_id": cid}),
                );
            }
        }
    }
    for (why, n) in skipped {
        left_out.push(match why.as_str() {
            "quarantined" => format!("subscribers: {n} quarantined by Statuspage (their mail bounced) stay out"),
            mode => format!("subscribers: {n} by {mode} stay out (Upstate tells subscribers by email, webhook, Slack, Discord, Teams and push)"),
        });
    }
}

/// Where the public files of a Statuspage page are.
pub const FILES: [&str; 3] = [
    "summary.json",
    "incidents.json",
    "scheduled-maintenances.json",
];

/// The page's files as one export document. `now` stamps what has no time.
fn translate(
    files: &StatuspageFiles,
    subscribers: Option<&Value>,
    schema: i64,
    now: Timestamp,
) -> Result<Translated, String> {
    let summary = &files.summary;
    let page = summary.get("page").filter(|p| p.is_object()).ok_or(
        "summary.json has no \"page\": is it a Statuspage summary (/api/v2/summary.json)?",
    )?;
    let components = summary
        .get("components")
        .and_then(Value::as_array)
        .ok_or("summary.json has no \"components\" list")?;
    let page_source = page
        .get("id")
        .map(text)
        .filter(|s| !s.is_empty())
        .ok_or("the page has no id")?;
    let name = page
        .get("name")
        .map(text)
        .filter(|s| !s.is_empty())
        .ok_or("the page has no name")?;
    let now = now.millis();
    let mut ids = Ids::new("statuspage");
    let mut left_out = Vec::new();
    let page_id = ids.give("status_pages", &page_source);
    let updated = page.get("updated_at").and_then(millis).unwrap_or(now);
    let time_zone = page
        .get("time_zone")
        .map(text)
        .filter(|z| jiff::tz::TimeZone::get(z).is_ok())
        .unwrap_or_else(|| "UTC".into());
    let mut t: Map<String, Value> = Map::new();
    let push = super::push_row;
    push(
        &mut t,
        "status_pages",
        json!({"id": page_id, "name": name, "slug": slug_of(&name), "accent_color": "#2563eb",
               "is_public": true, "show_subscribe": true, "show_uptime": true, "uptime_days": 90,
               "time_zone": time_zone, "created_at": updated, "updated_at": updated,
               "description": page.get("url").map(|u| format!("Imported from {}", text(u))).unwrap_or_default()}),
    );

    // Groups first (a group is a component with "group": true).
    for (position, c) in components
        .iter()
        .filter(|c| c["group"] == json!(true))
        .enumerate()
    {
        let source = text(&c["id"]);
        let id = ids.give("component_groups", &source);
        push(
            &mut t,
            "component_groups",
            json!({"id": id, "page_id": page_id, "name": text(&c["name"]), "position": position,
                   "created_at": millis(&c["created_at"]).unwrap_or(now)}),
        );
    }
    // Components, and where each one's history starts.
    let mut current: HashMap<String, (i64, &'static str, i64)> = HashMap::new();
    let mut position = 0;
    for c in components.iter().filter(|c| c["group"] != json!(true)) {
        let source = text(&c["id"]);
        let Some(status) = component_status(c["status"].as_str().unwrap_or_default()) else {
            left_out.push(format!(
                "component {:?}: unknown status {}",
                text(&c["name"]),
                c["status"]
            ));
            continue;
        };
        let id = ids.give("components", &source);
        let group = c["group_id"]
            .as_str()
            .and_then(|g| ids.of("component_groups", g));
        let created = millis(&c["created_at"]).unwrap_or(now);
        push(
            &mut t,
            "components",
            json!({"id": id, "page_id": page_id, "group_id": group, "name": text(&c["name"]),
                   "description": text(&c["description"]), "status": status, "position": position,
                   "created_at": created, "updated_at": millis(&c["updated_at"]).unwrap_or(created)}),
        );
        current.insert(source, (id, status, created));
        position += 1;
    }

    // Incidents: the full list when given, else the unresolved ones of
    // the summary.
    let mut incidents: Vec<&Value> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let lists = [
        files.incidents.as_ref().and_then(|i| i.get("incidents")),
        summary.get("incidents"),
    ];
    for list in lists.into_iter().flatten() {
        for i in list.as_array().into_iter().flatten() {
            if seen.insert(text(&i["id"])) {
                incidents.push(i);
            }
        }
    }
    // Status changes the updates tell: (component source id, at, status).
    let mut changes: Vec<(String, i64, &'static str, String)> = Vec::new();
    for i in &incidents {
        let source = text(&i["id"]);
        let title = text(&i["name"]);
        let Some(status) = incident_status(i["status"].as_str().unwrap_or_default()) else {
            left_out.push(format!(
                "incident {title:?}: unknown status {}",
                i["status"]
            ));
            continue;
        };
        let created = millis(&i["started_at"])
            .or_else(|| millis(&i["created_at"]))
            .unwrap_or(now);
        let id = ids.give("incidents", &source);
        let resolved = (status == "resolved")
            .then(|| millis(&i["resolved_at"]).or_else(|| millis(&i["updated_at"])))
            .flatten();
        push(
            &mut t,
            "incidents",
            json!({"id": id, "page_id": page_id, "title": title, "status": status,
                   "impact": impact(i["impact"].as_str().unwrap_or_default()),
                   "created_at": created, "updated_at": millis(&i["updated_at"]).unwrap_or(created),
                   "resolved_at": resolved}),
        );
        for c in i["components"].as_array().into_iter().flatten() {
            if let Some((cid, _, _)) = current.get(&text(&c["id"])) {
                push(
                    &mut t,
                    "incident_components",
                    json!({"incident_id": id, "component_id": cid}),
                );
            }
        }
        for u in i["incident_updates"].as_array().into_iter().flatten() {
            let Some(ustatus) = incident_status(u["status"].as_str().unwrap_or_default()) else {
                left_out.push(format!(
                    "an update of {title:?}: unknown status {}",
                    u["status"]
                ));
                continue;
            };
            let at = millis(&u["display_at"])
                .or_else(|| millis(&u["created_at"]))
                .unwrap_or(created);
            let uid = ids.give("incident_updates", &text(&u["id"]));
            push(
                &mut t,
                "incident_updates",
                json!({"id": uid, "incident_id": id, "status": ustatus, "message": text(&u["body"]), "created_at": at}),
            );
            for a in u["affected_components"].as_array().into_iter().flatten() {
                let code = text(&a["code"]);
                if let Some(to) = a["new_status"].as_str().and_then(component_status) {
                    changes.push((code, at, to, text(&u["id"])));
                }
            }
        }
    }
    // The components' history: where each started, then what the updates
    // say, then where it is now.
    changes.sort_by_key(|c| c.1);
    for (source, (cid, now_status, created)) in &current {
        let mine: Vec<Move> = changes
            .iter()
            .filter(|c| &c.0 == source)
            .map(|c| (c.1, c.2, c.3.clone()))
            .collect();
        history(
            &mut ids,
            &mut t,
            *cid,
            source,
            *created,
            &mine,
            (now_status, now),
        );
    }

    // Scheduled maintenance.
    let mut windows: Vec<&Value> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let lists = [
        files
            .maintenances
            .as_ref()
            .and_then(|m| m.get("scheduled_maintenances")),
        summary.get("scheduled_maintenances"),
    ];
    for list in lists.into_iter().flatten() {
        for m in list.as_array().into_iter().flatten() {
            if seen.insert(text(&m["id"])) {
                windows.push(m);
            }
        }
    }
    for m in windows {
        let title = text(&m["name"]);
        let (Some(status), Some(start), Some(end)) = (
            maintenance_status(m["status"].as_str().unwrap_or_default()),
            millis(&m["scheduled_for"]),
            millis(&m["scheduled_until"]),
        ) else {
            left_out.push(format!(
                "maintenance {title:?}: needs a known status and scheduled_for/scheduled_until"
            ));
            continue;
        };
        let source = text(&m["id"]);
        let id = ids.give("maintenance", &source);
        let created = millis(&m["created_at"]).unwrap_or(start);
        let updates = m["incident_updates"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let description = updates.last().map(|u| text(&u["body"])).unwrap_or_default();
        push(
            &mut t,
            "maintenance",
            json!({"id": id, "page_id": page_id, "title": title, "description": description,
                   "status": status, "scheduled_start": start, "scheduled_end": end.max(start + 1),
                   "auto_start": false, "created_at": created,
                   "updated_at": millis(&m["updated_at"]).unwrap_or(created)}),
        );
        for c in m["components"].as_array().into_iter().flatten() {
            if let Some((cid, _, _)) = current.get(&text(&c["id"])) {
                push(
                    &mut t,
                    "maintenance_components",
                    json!({"maintenance_id": id, "component_id": cid}),
                );
            }
        }
        for u in &updates {
            let Some(ustatus) = maintenance_status(u["status"].as_str().unwrap_or_default()) else {
                continue;
            };
            let uid = ids.give("maintenance_updates", &text(&u["id"]));
            push(
                &mut t,
                "maintenance_updates",
                json!({"id": uid, "maintenance_id": id, "status": ustatus, "message": text(&u["body"]),
                       "created_at": millis(&u["display_at"]).or_else(|| millis(&u["created_at"])).unwrap_or(created)}),
            );
        }
    }
    match subscribers {
        Some(list) => subscribe(list, page_id, &current, &mut ids, &mut t, &mut left_out, now),
        None => left_out.push(
            "subscribers: a page's public JSON does not list them (import with an API key and the page id, or export them from Statuspage as CSV and use Import subscribers)"
                .into(),
        ),
    }
    Ok(Translated {
        doc: super::document(schema, Timestamp::from_millis(now), t),
        origin: ids.origin,
        left_out,
    })
}
