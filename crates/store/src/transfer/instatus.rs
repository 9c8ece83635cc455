//! Instatus's REST API answers (`/v2/pages`, `/v2/{page}/components`,
//! `/v1/{page}/incidents`, `/v1/{page}/maintenances`, read with the
//! page's API key) turned into an export document of one page: component
//! groups (Instatus's parent components), components, incidents with
//! every update and the components they touched, and maintenance.

use super::foreign::{Files, Ids, Move, Translated, history, millis, slug_of, text};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use upstate_core::Timestamp;

fn component_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "OPERATIONAL" => "operational",
        "DEGRADEDPERFORMANCE" => "degraded",
        "PARTIALOUTAGE" => "partial_outage",
        "MAJOROUTAGE" => "major_outage",
        "UNDERMAINTENANCE" => "maintenance",
        _ => return None,
    })
}

fn incident_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "INVESTIGATING" => "investigating",
        "IDENTIFIED" => "identified",
        "MONITORING" => "monitoring",
        "RESOLVED" => "resolved",
        _ => return None,
    })
}

fn maintenance_status(s: &str) -> Option<&'static str> {
    Some(match s {
        "NOTSTARTEDYET" => "scheduled",
        "INPROGRESS" => "in_progress",
        "COMPLETED" => "completed",
        _ => return None,
    })
}

/// How bad a component status (ours) is, for the worst of several.
fn severity(s: &str) -> u8 {
    match s {
        "degraded" => 1,
        "partial_outage" => 2,
        "major_outage" => 3,
        _ => 0,
    }
}

/// Instatus's name of one of our component statuses.
fn instatus_name(s: &str) -> &'static str {
    match s {
        "degraded" => "DEGRADEDPERFORMANCE",
        "partial_outage" => "PARTIALOUTAGE",
        "major_outage" => "MAJOROUTAGE",
        "maintenance" => "UNDERMAINTENANCE",
        _ => "OPERATIONAL",
    }
}

/// Instatus states an incident's impact as the worst component status.
fn impact(s: &str) -> &'static str {
    match s {
        "DEGRADEDPERFORMANCE" => "minor",
        "PARTIALOUTAGE" => "major",
        "MAJOROUTAGE" => "critical",
        _ => "none",
    }
}

fn list(files: &Files, name: &str) -> Vec<Value> {
    match files.get(name) {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => o
            .get(name.trim_end_matches(".json"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// A translated name: Instatus sends `{en: "..."}` where a page has
/// several languages, and a string otherwise.
fn words(v: &Value) -> String {
    match v {
        Value::Object(o) => o
            .get("en")
            .or_else(|| o.values().next())
            .map(text)
            .unwrap_or_default(),
        other => text(other),
    }
}

pub fn translate(files: &Files, schema: i64, now: Timestamp) -> Result<Translated, String> {
    if files.get("components.json").is_none() {
        return Err(
            "no components were read: is the page id right, and the key one of its team?".into(),
        );
    }
    let components = list(files, "components.json");
    if components
        .iter()
        .any(|c| c.get("id").is_none() || c.get("status").is_none())
    {
        return Err(
            "components.json does not hold Instatus components (each has an id and a status)"
                .into(),
        );
    }
    let now = now.millis();
    let mut ids = Ids::new("instatus");
    let mut left_out = Vec::new();
    let mut t: Map<String, Value> = Map::new();
    let push = super::push_row;

    // The page: the one asked for (or the one the key reads), else the
    // one its components name; named by /v2/pages when the team lists it.
    let page_source = files
        .get(super::foreign::PAGE_ID_FILE)
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            components
                .iter()
                .find_map(|c| c["siteId"].as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "page".into());
    let listed = list(files, "pages.json")
        .into_iter()
        .find(|p| text(&p["id"]) == page_source);
    let name = listed
        .as_ref()
        .map(|p| words(&p["name"]))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "Status".into());
    let slug = listed
        .as_ref()
        .map(|p| text(&p["subdomain"]))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| slug_of(&name));
    let page_id = ids.give("status_pages", &page_source);
    push(
        &mut t,
        "status_pages",
        json!({"id": page_id, "name": name, "slug": slug_of(&slug), "accent_color": "#2563eb",
               "is_public": true, "show_subscribe": true, "show_uptime": true, "uptime_days": 90,
               "time_zone": "UTC", "created_at": now, "updated_at": now,
               "description": "Imported from Instatus"}),
    );

    // Parents are groups; a component names its parent by `groupId` (or
    // `group.id`).
    let mut components = components;
    components.sort_by_key(|c| c["order"].as_i64().unwrap_or(0));
    let parent_of = |c: &Value| {
        c.get("groupId")
            .filter(|g| !g.is_null())
            .or_else(|| c.pointer("/group/id"))
            .map(text)
            .filter(|g| !g.is_empty())
    };
    let parents: std::collections::HashSet<String> =
        components.iter().filter_map(parent_of).collect();
    for (position, c) in components
        .iter()
        .filter(|c| c["isParent"] == json!(true) || parents.contains(&text(&c["id"])))
        .enumerate()
    {
        let gid = ids.give("component_groups", &text(&c["id"]));
        push(
            &mut t,
            "component_groups",
            json!({"id": gid, "page_id": page_id, "name": words(&c["name"]), "position": position,
                   "created_at": millis(&c["createdAt"]).unwrap_or(now)}),
        );
    }
    let mut local: HashMap<String, i64> = HashMap::new();
    let mut created_of: HashMap<String, (i64, &'static str)> = HashMap::new();
    let mut position = 0;
    for c in &components {
        let source = text(&c["id"]);
        if ids.of("component_groups", &source).is_some() {
            continue;
        }
        let name = words(&c["name"]);
        if !c.get("archivedAt").is_none_or(Value::is_null) || c["archived"] == json!(true) {
            left_out.push(format!("component {name:?}: archived in Instatus"));
            continue;
        }
        let Some(status) = component_status(c["status"].as_str().unwrap_or_default()) else {
            left_out.push(format!(
                "component {name:?}: unknown status {}",
                c["status"]
            ));
            continue;
        };
        let cid = ids.give("components", &source);
        let group = parent_of(c).and_then(|g| ids.of("component_groups", &g));
        let created = millis(&c["createdAt"]).unwrap_or(now);
        push(
            &mut t,
            "components",
            json!({"id": cid, "page_id": page_id, "group_id": group, "name": name,
                   "description": words(&c["description"]), "status": status, "position": position,
                   "created_at": created, "updated_at": millis(&c["updatedAt"]).unwrap_or(created)}),
        );
        local.insert(source.clone(), cid);
        created_of.insert(source, (created, status));
        position += 1;
    }

    // Incidents, and the component moves their updates tell.
    let mut moves: Vec<(String, i64, &'static str, String)> = Vec::new();
    for i in list(files, "incidents.json") {
        let title = words(&i["name"]);
        let Some(status) = incident_status(i["status"].as_str().unwrap_or_default()) else {
            left_out.push(format!(
                "incident {title:?}: unknown status {}",
                i["status"]
            ));
            continue;
        };
        let source = text(&i["id"]);
        let started = millis(&i["started"])
            .or_else(|| millis(&i["createdAt"]))
            .unwrap_or(now);
        let iid = ids.give("incidents", &source);
        let resolved = (status == "resolved").then(|| {
            millis(&i["resolved"])
                .or_else(|| millis(&i["updatedAt"]))
                .unwrap_or(started)
                .max(started)
        });
        let touched: Vec<(String, &'static str)> = i["components"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let s = component_status(c["status"].as_str().unwrap_or_default())?;
                Some((text(&c["id"]), s))
            })
            .collect();
        // Instatus's impact is the worst status of the components the
        // incident touched (its answers carry no impact field of their own).
        let worst = touched
            .iter()
            .map(|(_, s)| *s)
            .max_by_key(|s| severity(s))
            .map(instatus_name);
        let impact = impact(worst.or_else(|| i["impact"].as_str()).unwrap_or_default());
        push(
            &mut t,
            "incidents",
            json!({"id": iid, "page_id": page_id, "title": title, "status": status,
                   "impact": impact,
                   "created_at": started,
                   "updated_at": millis(&i["updatedAt"]).unwrap_or(started).max(started),
                   "resolved_at": resolved}),
        );
        for (c, _) in &touched {
            if let Some(cid) = local.get(c) {
                push(
                    &mut t,
                    "incident_components",
                    json!({"incident_id": iid, "component_id": cid}),
                );
            }
        }
        // `updates` in its v1 answers (`incidentUpdates` in older ones).
        let mut updates = i["updates"]
            .as_array()
            .or_else(|| i["incidentUpdates"].as_array())
            .cloned()
            .unwrap_or_default();
        updates.sort_by_key(|u| {
            millis(&u["started"])
                .or_else(|| millis(&u["createdAt"]))
                .unwrap_or(started)
        });
        for u in &updates {
            let Some(ustatus) = incident_status(u["status"].as_str().unwrap_or_default()) else {
                continue;
            };
            let at = millis(&u["started"])
                .or_else(|| millis(&u["createdAt"]))
                .unwrap_or(started)
                .max(started);
            let uid = ids.give("incident_updates", &text(&u["id"]));
            push(
                &mut t,
                "incident_updates",
                json!({"id": uid, "incident_id": iid, "status": ustatus,
                       "message": words(&u["message"]), "created_at": at}),
            );
        }
        // Instatus keeps the components' status at the incident, not at
        // each update: they moved when it started and came back when it
        // was resolved.
        for (c, s) in &touched {
            moves.push((c.clone(), started, s, format!("{source}:start")));
            if let Some(r) = resolved {
                moves.push((c.clone(), r, "operational", format!("{source}:end")));
            }
        }
    }
    moves.sort_by_key(|m| m.1);
    for (source, (created, status)) in &created_of {
        let Some(cid) = local.get(source) else {
            continue;
        };
        let mine: Vec<Move> = moves
            .iter()
            .filter(|m| &m.0 == source)
            .map(|m| (m.1, m.2, m.3.clone()))
            .collect();
        history(
            &mut ids,
            &mut t,
            *cid,
            source,
            *created,
            &mine,
            (status, now),
        );
    }

    for m in list(files, "maintenances.json") {
        let title = words(&m["name"]);
        let (Some(status), Some(start)) = (
            maintenance_status(m["status"].as_str().unwrap_or_default()),
            millis(&m["start"]),
        ) else {
            left_out.push(format!(
                "maintenance {title:?}: needs a known status and a start"
            ));
            continue;
        };
        // `duration` is in minutes, as a number or text.
        let minutes = m["duration"]
            .as_i64()
            .or_else(|| text(&m["duration"]).parse().ok())
            .filter(|d| *d > 0)
            .unwrap_or(60);
        let source = text(&m["id"]);
        let mid = ids.give("maintenance", &source);
        let created = millis(&m["createdAt"]).unwrap_or(start);
        let updates = m["updates"]
            .as_array()
            .or_else(|| m["maintenanceUpdates"].as_array())
            .cloned()
            .unwrap_or_default();
        push(
            &mut t,
            "maintenance",
            json!({"id": mid, "page_id": page_id, "title": title,
                   "description": updates.first().map(|u| words(&u["message"])).unwrap_or_default(),
                   "status": status, "scheduled_start": start, "scheduled_end": start + minutes * 60_000,
                   "auto_start": false, "created_at": created,
                   "updated_at": millis(&m["updatedAt"]).unwrap_or(created)}),
        );
        for c in m["components"].as_array().into_iter().flatten() {
            if let Some(cid) = local.get(&text(&c["id"])) {
                push(
                    &mut t,
                    "maintenance_components",
                    json!({"maintenance_id": mid, "component_id": cid}),
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
                json!({"id": uid, "maintenance_id": mid, "status": ustatus, "message": words(&u["message"]),
                       "created_at": millis(&u["started"]).or_else(|| millis(&u["createdAt"])).unwrap_or(created)}),
            );
        }
    }
    left_out.push(
        "subscribers: not read from Instatus (export them from its dashboard as CSV and use Import subscribers)"
            .into(),
    );
    Ok(Translated {
        doc: super::document(schema, Timestamp::from_millis(now), t),
        origin: ids.origin,
        left_out,
    })
}
