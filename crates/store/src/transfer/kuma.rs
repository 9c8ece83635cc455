//! An Uptime Kuma backup (the JSON of its Settings → Backup → Export:
//! `version`, `notificationList`, `monitorList`) turned into an export
//! document of one page, for `import_from` with `Mode::AddPages`: each
//! monitor becomes a component watched by a monitor of the same kind,
//! target and interval; Kuma's group monitors become component groups.
//! What has no counterpart is said, with the reason.

use super::foreign::Translated;
use super::import::Origin;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use upstate_core::Timestamp;
use upstate_core::monitors::{INTERVAL_MAX_S, INTERVAL_MIN_S};

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

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

/// The backup as one page of components and monitors.
pub fn translate(backup: &Value, schema: i64, now: Timestamp) -> Result<Translated, String> {
    let monitors = backup
        .get("monitorList")
        .and_then(Value::as_array)
        .ok_or("this is not an Uptime Kuma backup: it has no \"monitorList\"")?;
    if backup.get("version").and_then(Value::as_str).is_none() {
        return Err("this is not an Uptime Kuma backup: it has no \"version\"".into());
    }
    let now = now.millis();
    let mut origin = Origin {
        kind: "uptime_kuma".into(),
        sources: Vec::new(),
    };
    let mut left_out = Vec::new();
    let mut t: Map<String, Value> = Map::new();
    let push = super::push_row;
    origin.sources.push(("status_pages", 1, "page".into()));
    push(
        &mut t,
        "status_pages",
        json!({"id": 1, "name": "Uptime Kuma", "slug": "uptime-kuma", "accent_color": "#2563eb",
               "is_public": true, "show_subscribe": true, "show_uptime": true, "uptime_days": 90,
               "time_zone": "UTC", "created_at": now, "updated_at": now,
               "description": "Imported from an Uptime Kuma backup"}),
    );
    let mut groups: HashMap<String, i64> = HashMap::new();
    for (i, m) in monitors.iter().filter(|m| m["type"] == "group").enumerate() {
        let id = i64::try_from(i).unwrap_or(0) + 1;
        let source = text(&m["id"]);
        origin
            .sources
            .push(("component_groups", id, format!("group:{source}")));
        groups.insert(source, id);
        push(
            &mut t,
            "component_groups",
            json!({"id": id, "page_id": 1, "name": text(&m["name"]), "position": i, "created_at": now}),
        );
    }
    let mut n = 0;
    for m in monitors.iter().filter(|m| m["type"] != "group") {
        let name = text(&m["name"]);
        let source = text(&m["id"]);
        if name.is_empty() || source.is_empty() {
            left_out.push("a monitor without a name or id".into());
            continue;
        }
        n += 1;
        let group = groups.get(&text(&m["parent"])).copied();
        origin
            .sources
            .push(("components", n, format!("monitor:{source}")));
        push(
            &mut t,
            "components",
            json!({"id": n, "page_id": 1, "group_id": group, "name": name,
                   "description": text(&m["description"]), "status": "operational",
                   "position": n - 1, "created_at": now, "updated_at": now}),
        );
        origin.sources.push((
            "component_status_history",
            n,
            format!("monitor:{source}:start"),
        ));
        push(
            &mut t,
            "component_status_history",
            json!({"id": n, "component_id": n, "status": "operational", "changed_at": now}),
        );
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
                left_out.push(format!(
                    "monitor {name:?}: Uptime Kuma's {other} check has no counterpart (Upstate checks http, tcp, dns and heartbeats); the component came, unwatched"
                ));
                continue;
            }
        };
        config["kind"] = json!(kind);
        config["target"] = json!(target);
        origin
            .sources
            .push(("monitors", n, format!("monitor:{source}")));
        push(
            &mut t,
            "monitors",
            json!({"id": n, "component_id": n, "kind": kind, "config": config.to_string(),
                   "enabled": truthy(&m["active"]), "heartbeat_token": token, "state": "unknown",
                   "failures": 0, "successes": 0, "manual": false, "next_run_at": now,
                   "created_at": now, "updated_at": now}),
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
        doc: super::document(schema, Timestamp::from_millis(now), t),
        origin,
        left_out,
    })
}
