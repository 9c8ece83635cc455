//! Cachet's API answers turned into an export document of one page:
//! component groups, components, incidents with their updates, and
//! schedules (maintenance). Cachet 2 answers `{data: [{id, name, status:
//! 1, ...}]}` under `/api/v1`; Cachet 3 answers JSON:API items (`{id,
//! attributes: {name, status: {value: 1}, ...}}`) under `/api`. Both are
//! flattened into the first shape before they are read.

use super::foreign::{Files, Ids, Translated, history, millis, slug_of, text};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use upstate_core::Timestamp;

/// The items of a list answer, flattened to Cachet 2's shape.
pub(crate) fn items(v: Option<&Value>) -> Vec<Value> {
    let list = match v {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => o
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    list.into_iter().map(flatten).collect()
}

/// A Cachet 3 item as a Cachet 2 one: attributes lifted, `{value}` and
/// `{string}` objects to their value, the group from the relationship.
fn flatten(item: Value) -> Value {
    let Value::Object(mut o) = item else {
        return item;
    };
    if let Some(Value::Object(attributes)) = o.remove("attributes") {
        for (k, v) in attributes {
            o.entry(k).or_insert(v);
        }
    }
    for v in o.values_mut() {
        if let Value::Object(inner) = v {
            if let Some(value) = inner.get("value").filter(|x| !x.is_object()) {
                *v = value.clone();
            } else if let Some(s) = inner.get("string").filter(|x| x.is_string()) {
                *v = s.clone();
            }
        }
    }
    // Cachet 3's names for what Cachet 2 calls created_at and group_id.
    for (from, to) in [
        ("created", "created_at"),
        ("updated", "updated_at"),
        ("component_group_id", "group_id"),
    ] {
        if !o.contains_key(to)
            && let Some(v) = o.get(from).cloned()
        {
            o.insert(to.into(), v);
        }
    }
    if !o.contains_key("group_id")
        && let Some(g) = o
            .get("relationships")
            .and_then(|r| r.pointer("/group/data/id"))
            .cloned()
    {
        o.insert("group_id".into(), g);
    }
    Value::Object(o)
}

pub(crate) fn id(item: &Value) -> String {
    text(&item["id"])
}

/// An incident's updates when the answer carries them (Cachet 2.4 may).
pub(crate) fn embedded_updates(item: &Value) -> Option<&Vec<Value>> {
    item.get("updates")
        .and_then(Value::as_array)
        .filter(|u| !u.is_empty())
}

/// 1 operational, 2 performance issues, 3 partial outage, 4 major outage
/// (0: unknown, shown as operational).
fn component_status(v: &Value) -> Option<&'static str> {
    Some(match v.as_i64().or_else(|| text(v).parse().ok())? {
        0 | 1 => "operational",
        2 => "degraded",
        3 => "partial_outage",
        4 => "major_outage",
        _ => return None,
    })
}

/// 1 investigating, 2 identified, 3 watching, 4 fixed; 0 was "scheduled"
/// (maintenance) before Cachet 2.4 had schedules.
fn incident_status(v: &Value) -> Option<&'static str> {
    Some(match v.as_i64().or_else(|| text(v).parse().ok())? {
        1 => "investigating",
        2 => "identified",
        3 => "monitoring",
        4 => "resolved",
        _ => return None,
    })
}

/// 0 upcoming, 1 in progress, 2 complete.
fn schedule_status(v: &Value) -> Option<&'static str> {
    Some(match v.as_i64().or_else(|| text(v).parse().ok())? {
        0 => "scheduled",
        1 => "in_progress",
        2 => "completed",
        _ => return None,
    })
}

fn visible(item: &Value) -> bool {
    match &item["visible"] {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_i64() != Some(0),
        _ => true,
    }
}

pub fn translate(files: &Files, schema: i64, now: Timestamp) -> Result<Translated, String> {
    let components = items(files.get("components.json"));
    if files.get("components.json").is_none() {
        return Err(
            "no components were read: is this a Cachet install (/api/v1/components)?".into(),
        );
    }
    if components.iter().any(|c| c.get("name").is_none()) {
        return Err("components.json does not hold Cachet components (each has a name)".into());
    }
    let now = now.millis();
    let mut ids = Ids::new("cachet");
    let mut left_out = Vec::new();
    let mut t: Map<String, Value> = Map::new();
    let push = super::push_row;
    let page_id = ids.give("status_pages", "page");
    push(
        &mut t,
        "status_pages",
        json!({"id": page_id, "name": "Status", "slug": slug_of("cachet"), "accent_color": "#2563eb",
               "is_public": true, "show_subscribe": true, "show_uptime": true, "uptime_days": 90,
               "time_zone": "UTC", "created_at": now, "updated_at": now,
               "description": "Imported from Cachet"}),
    );
    let mut groups = items(files.get("component-groups.json"));
    groups.sort_by_key(|g| g["order"].as_i64().unwrap_or(0));
    for (position, g) in groups.iter().enumerate() {
        let gid = ids.give("component_groups", &id(g));
        push(
            &mut t,
            "component_groups",
            json!({"id": gid, "page_id": page_id, "name": text(&g["name"]), "position": position,
                   "created_at": millis(&g["created_at"]).unwrap_or(now)}),
        );
    }
    let mut components = components;
    components.sort_by_key(|c| c["order"].as_i64().unwrap_or(0));
    let mut local: HashMap<String, i64> = HashMap::new();
    let mut position = 0;
    for c in &components {
        let name = text(&c["name"]);
        let Some(status) = component_status(&c["status"]) else {
            left_out.push(format!(
                "component {name:?}: unknown status {}",
                c["status"]
            ));
            continue;
        };
        if c["enabled"] == json!(false) || c["enabled"] == json!(0) {
            left_out.push(format!("component {name:?}: disabled in Cachet"));
            continue;
        }
        let cid = ids.give("components", &id(c));
        let group = ids.of("component_groups", &text(&c["group_id"]));
        let created = millis(&c["created_at"]).unwrap_or(now);
        push(
            &mut t,
            "components",
            json!({"id": cid, "page_id": page_id, "group_id": group, "name": name,
                   "description": text(&c["description"]), "status": status, "position": position,
                   "created_at": created, "updated_at": millis(&c["updated_at"]).unwrap_or(created)}),
        );
        let since = millis(&c["updated_at"]).unwrap_or(now).max(created);
        history(&mut ids, &mut t, cid, &id(c), created, &[], (status, since));
        local.insert(id(c), cid);
        position += 1;
    }

    // Updates listed apart, by incident.
    let mut apart: HashMap<String, Vec<Value>> = HashMap::new();
    for u in items(files.get("incident-updates.json")) {
        apart.entry(text(&u["incident_id"])).or_default().push(u);
    }
    let mut hidden = 0;
    for i in items(files.get("incidents.json")) {
        let title = text(&i["name"]);
        if !visible(&i) {
            hidden += 1;
            continue;
        }
        let Some(status) = incident_status(&i["status"]) else {
            left_out.push(format!(
                "incident {title:?}: status {} (a scheduled incident of Cachet before 2.4) has no counterpart; schedules come as maintenance",
                i["status"]
            ));
            continue;
        };
        let source = id(&i);
        let created = millis(&i["occurred_at"])
            .or_else(|| millis(&i["created_at"]))
            .unwrap_or(now);
        let updated = millis(&i["updated_at"]).unwrap_or(created).max(created);
        let iid = ids.give("incidents", &source);
        let mut updates: Vec<Value> = embedded_updates(&i)
            .cloned()
            .or_else(|| apart.remove(&source))
            .unwrap_or_default()
            .into_iter()
            .map(flatten)
            .collect();
        updates.sort_by_key(|u| millis(&u["created_at"]).unwrap_or(created));
        let last_at = updates
            .last()
            .and_then(|u| millis(&u["created_at"]))
            .unwrap_or(created)
            .max(created);
        let resolved = (status == "resolved").then_some(last_at.max(updated));
        push(
            &mut t,
            "incidents",
            json!({"id": iid, "page_id": page_id, "title": title, "status": status, "impact": "none",
                   "created_at": created, "updated_at": updated.max(last_at), "resolved_at": resolved}),
        );
        if let Some(cid) = local.get(&text(&i["component_id"])) {
            push(
                &mut t,
                "incident_components",
                json!({"incident_id": iid, "component_id": cid}),
            );
        }
        // The incident's own message is its first update, in its first status.
        let first_status = if updates.is_empty() {
            status
        } else {
            "investigating"
        };
        let uid = ids.give("incident_updates", &format!("{source}:message"));
        push(
            &mut t,
            "incident_updates",
            json!({"id": uid, "incident_id": iid, "status": first_status,
                   "message": text(&i["message"]), "created_at": created}),
        );
        for u in &updates {
            let Some(ustatus) = incident_status(&u["status"]) else {
                continue;
            };
            let uid = ids.give("incident_updates", &format!("update:{}", id(u)));
            push(
                &mut t,
                "incident_updates",
                json!({"id": uid, "incident_id": iid, "status": ustatus, "message": text(&u["message"]),
                       "created_at": millis(&u["created_at"]).unwrap_or(created).max(created)}),
            );
        }
    }
    if hidden > 0 {
        left_out.push(format!(
            "incidents: {hidden} hidden from Cachet's page stay out"
        ));
    }
    for m in items(files.get("schedules.json")) {
        let title = text(&m["name"]);
        let (Some(status), Some(start)) =
            (schedule_status(&m["status"]), millis(&m["scheduled_at"]))
        else {
            left_out.push(format!(
                "schedule {title:?}: needs a known status and scheduled_at"
            ));
            continue;
        };
        // Cachet's schedules end when completed; an open one is given an
        // hour, which the operator can change.
        let end = millis(&m["completed_at"])
            .filter(|e| *e > start)
            .unwrap_or(start + 3_600_000);
        let mid = ids.give("maintenance", &id(&m));
        let created = millis(&m["created_at"]).unwrap_or(start);
        push(
            &mut t,
            "maintenance",
            json!({"id": mid, "page_id": page_id, "title": title, "description": text(&m["message"]),
                   "status": status, "scheduled_start": start, "scheduled_end": end,
                   "auto_start": false, "created_at": created,
                   "updated_at": millis(&m["updated_at"]).unwrap_or(created)}),
        );
        for c in m["components"].as_array().into_iter().flatten() {
            let cid = c
                .get("component_id")
                .or_else(|| c.get("id"))
                .map_or_else(|| text(c), text);
            if let Some(local) = local.get(&cid) {
                push(
                    &mut t,
                    "maintenance_components",
                    json!({"maintenance_id": mid, "component_id": local}),
                );
            }
        }
    }
    left_out.push(
        "subscribers: Cachet's API does not list them (export them from Cachet's dashboard and use Import subscribers)"
            .into(),
    );
    Ok(Translated {
        doc: super::document(schema, Timestamp::from_millis(now), t),
        origin: ids.origin,
        left_out,
    })
}
