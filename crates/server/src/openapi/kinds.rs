//! Bodies whose valid values depend on their `kind`: a monitor's target is a
//! URL, `host:port` or a DNS name by its kind; a channel's or subscriber's
//! target an address or a URL; a Telegram channel needs its bot token. The
//! derived schemas say each field alone; here each such body becomes a
//! `oneOf` of closed variants, one per kind, so a client (or a fuzzer) that
//! writes what the document allows writes what the server accepts.
//!
//! As in `upstate_core::schema`, each variant is at most as wide as the
//! rules: where the server compares two fields (a timeout no longer than
//! the interval, a latency threshold below the timeout) the bounds here
//! hold for any value of the other field, and the description says the rule.

use serde_json::{Map, Value, json};
use upstate_core::monitors::{
    CERT_DAYS_MAX, DNS_TYPES, INTERVAL_MAX_S, INTERVAL_MIN_S, METHODS, RETRIES_MAX, TIMEOUT_MIN_MS,
};
use upstate_core::notify::{FILTER_MAX, NOTIFIED_KINDS};
use upstate_core::schema;
use utoipa::openapi::{OpenApi, RefOr, Schema};

/// Kinds whose target is an http(s) URL.
const URL_KINDS: [&str; 4] = ["webhook", "slack", "discord", "teams"];

fn of(o: utoipa::openapi::Object) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

fn int(min: i64, max: i64) -> Value {
    json!({"type": "integer", "format": "int64", "minimum": min, "maximum": max})
}

fn ids(max: usize) -> Value {
    json!({"type": "array", "maxItems": max, "items": {"type": "integer", "format": "int64", "minimum": 1}})
}

fn one(value: &str) -> Value {
    json!({"type": "string", "enum": [value]})
}

fn any_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// A closed object of `props`, `required` listed.
fn object(props: Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required,
           "additionalProperties": false})
}

fn with(base: &Map<String, Value>, more: &[(&str, Value)]) -> Map<String, Value> {
    let mut m = base.clone();
    for (k, v) in more {
        m.insert((*k).to_string(), v.clone());
    }
    m
}

fn monitor_target(kind: &str) -> Option<Value> {
    let host = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";
    match kind {
        "http" => {
            let mut url = of(schema::url());
            url["maxLength"] = json!(2000);
            Some(url)
        }
        "tcp" => Some(json!({"type": "string", "maxLength": 2000,
            "pattern": format!(r"^{host}(\.{host})*:[1-9][0-9]{{0,3}}$"),
            "examples": ["db.example.com:5432"]})),
        "dns" => Some(json!({"type": "string", "maxLength": 253,
            "pattern": r"^[A-Za-z0-9_-]{1,40}(\.[A-Za-z0-9_-]{1,40}){0,4}\.?$",
            "examples": ["api.example.com"]})),
        _ => None,
    }
}

/// `POST /api/monitors` (`create`) and `PUT /api/monitors/{id}`.
fn monitor(create: bool) -> Value {
    let octet = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    let line = json!({"type": "string", "maxLength": 200, "pattern": r"^[^\u0000-\u001f\u007f]*$"});
    let mut common = Map::new();
    for (k, v) in [
        ("intervalSeconds", int(INTERVAL_MIN_S, INTERVAL_MAX_S)),
        // No longer than the interval, whatever interval: at most the shortest.
        ("timeoutMs", int(TIMEOUT_MIN_MS, INTERVAL_MIN_S * 1_000)),
        ("retries", int(0, RETRIES_MAX)),
        // Below the timeout, whatever timeout (0: off).
        ("degradedAboveMs", int(0, TIMEOUT_MIN_MS - 1)),
        ("openIncident", json!({"type": "boolean"})),
        ("enabled", json!({"type": "boolean"})),
        ("method", any_of(&METHODS)),
        (
            "headers",
            json!({"type": "array", "maxItems": 20, "items": {
                "type": "object", "additionalProperties": false, "required": ["name", "value"],
                "properties": {
                    "name": {"type": "string", "pattern": r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$"},
                    "value": {"type": "string", "maxLength": 500, "pattern": r"^[\t -~]*$",
                              "description": "Write-only: answers and the audit log show a hint such as `Bearer …c3t`; sending the hint back keeps the stored value."}}}}),
        ),
        (
            "body",
            json!({"type": "string", "maxLength": 2500, "pattern": r"^[^\u0000]*$"}),
        ),
        (
            "expectedStatus",
            json!({"type": "string", "pattern": r"^[1-5][0-9]{2}(, ?[1-5][0-9]{2}){0,5}$",
                   "description": "Status codes and ranges that count as up, like `200-299, 301` (a range's first code is not above its last)."}),
        ),
        ("keyword", line.clone()),
        ("followRedirects", json!({"type": "boolean"})),
        ("verifyTls", json!({"type": "boolean"})),
        ("certExpiryDays", int(0, CERT_DAYS_MAX)),
        ("dnsRecordType", any_of(&DNS_TYPES)),
        (
            "dnsServer",
            json!({"type": "string",
                   "pattern": format!(r"^$|^({octet}\.){{3}}{octet}(:[1-9][0-9]{{0,3}})?$"),
                   "description": "An IP address, optionally with a port (empty: the system's resolver)."}),
        ),
        ("dnsExpected", line),
    ] {
        common.insert(k.to_string(), v);
    }
    if create {
        common.insert(
            "componentId".into(),
            json!({"type": "integer", "format": "int64", "minimum": 1}),
        );
    } else {
        common.insert(
            "manual".into(),
            json!({"type": "boolean", "description": "Hand the component back to its monitor after an operator set its status by hand (`false`); `true` takes it over."}),
        );
    }
    let mut variants = Vec::new();
    for kind in ["http", "tcp", "dns", "heartbeat"] {
        let mut props = with(&common, &[("kind", one(kind))]);
        let mut required = vec!["kind"];
        if let Some(target) = monitor_target(kind) {
            props.insert("target".into(), target);
            required.push("target");
        }
        if create {
            required.push("componentId");
        }
        variants.push(object(props, &required));
    }
    if !create {
        // Other settings, the kind and target as they are.
        variants.push(object(common, &[]));
    }
    json!({"oneOf": variants, "description": if create {
        "A monitor of one kind, with the target that kind checks. The timeout is at most the interval; a latency threshold (`degradedAboveMs`) is below the timeout."
    } else {
        "Any subset over the current monitor; a new kind comes with its target (heartbeat: none). The timeout is at most the interval; a latency threshold is below the timeout."
    }})
}

fn channel_target(kind: &str) -> Value {
    match kind {
        "email" => of(schema::email()),
        "telegram" => {
            json!({"type": "string", "pattern": r"^(-?[0-9]{1,19}|@[A-Za-z0-9_]{1,32})$",
                   "description": "The chat id (a number, or @channelname)."})
        }
        _ => of(schema::url()),
    }
}

/// `POST /api/notifications` (`create`) and `PUT /api/notifications/{id}`
/// (the kind is the channel's own: given, it must be that one).
fn channel(create: bool, mail: bool) -> Value {
    let mut common = Map::new();
    let mut name = of(schema::name());
    name["maxLength"] = json!(upstate_core::notify::NAME_MAX);
    common.insert("name".into(), name);
    common.insert("pageIds".into(), ids(FILTER_MAX));
    common.insert("componentIds".into(), ids(FILTER_MAX));
    common.insert(
        "eventKinds".into(),
        json!({"type": "array", "maxItems": NOTIFIED_KINDS.len(), "items": any_of(&NOTIFIED_KINDS)}),
    );
    common.insert("enabled".into(), json!({"type": "boolean"}));
    let token = json!({"type": "string", "pattern": r"^[A-Za-z0-9:_-]{1,100}$",
                       "description": "The bot token BotFather gave."});
    // Kinds that share a target's shape; Telegram's also takes a token.
    let mut groups: Vec<&[&str]> =
        vec![&["webhook"], &["slack", "discord", "teams"], &["telegram"]];
    if mail {
        groups.push(&["email"]);
    }
    let mut variants = Vec::new();
    for kinds in groups {
        let telegram = kinds == ["telegram"];
        let mut props = common.clone();
        if telegram {
            props.insert("token".into(), token.clone());
        }
        props.insert("kind".into(), any_of(kinds));
        props.insert("target".into(), channel_target(kinds[0]));
        if !create && kinds == ["webhook"] {
            props.insert(
                "rotateSecret".into(),
                json!({"type": "boolean", "enum": [true], "description": "Make a new signing secret (shown once); `false` is the same as leaving it out."}),
            );
        }
        let required: Vec<&str> = if create {
            let mut r = vec!["name", "kind", "target"];
            if telegram {
                r.push("token");
            }
            r
        } else {
            vec!["kind"]
        };
        let mut variant = object(props, &required);
        if !create {
            // The kind alone changes nothing.
            variant["minProperties"] = json!(2);
        }
        variants.push(variant);
    }
    if !create {
        let mut rest = object(common, &[]);
        rest["minProperties"] = json!(1);
        variants.push(rest);
    }
    json!({"oneOf": variants})
}

/// `POST /api/subscribers`: an address (email, the default kind) or a URL,
/// following the whole page, some components, or one open incident.
fn subscribe(mail: bool) -> Value {
    let mut common = Map::new();
    common.insert(
        "statusPageId".into(),
        json!({"type": "integer", "format": "int64", "minimum": 1}),
    );
    common.insert(
        "skipConfirmation".into(),
        json!({"type": "boolean", "description": "Operators only: add an email subscriber without the confirmation (for lists that opted in elsewhere)."}),
    );
    let mut targets = vec![(URL_KINDS.to_vec(), true)];
    if mail {
        targets.insert(0, (vec!["email"], false));
    }
    let mut variants = Vec::new();
    for (kinds, kind_required) in targets {
        for follows in ["componentIds", "incidentId"] {
            let mut props = with(
                &common,
                &[
                    ("kind", any_of(&kinds)),
                    ("target", channel_target(kinds[0])),
                ],
            );
            let mut required = vec!["statusPageId", "target"];
            if kind_required {
                required.push("kind");
            }
            if follows == "componentIds" {
                props.insert("componentIds".into(), ids(FILTER_MAX));
            } else {
                props.insert(
                    "incidentId".into(),
                    json!({"type": "integer", "format": "int64", "minimum": 1,
                           "description": "Follow only this open incident of the page."}),
                );
                required.push("incidentId");
            }
            variants.push(object(props, &required));
        }
    }
    json!({"oneOf": variants, "description": "Subscribe to a page (`statusPageId`, or its `slug`): a visitor (no sign-in) or an operator."})
}

/// `POST /api/subscribers/import`: the rows are one column of addresses
/// (or, without mail, `kind,target` rows of webhook URLs).
fn import(mail: bool) -> Value {
    let csv = if mail {
        r"^(target|email)\n([a-z0-9._+-]{1,40}@[a-z0-9]{1,20}\.[a-z]{2,6}\n){1,20}$"
    } else {
        r"^kind,target\n(webhook,https://[a-z0-9]{1,20}\.[a-z]{2,6}/[a-z0-9]{0,20}\n){1,20}$"
    };
    object(
        Map::from_iter([
            (
                "statusPageId".to_string(),
                json!({"type": "integer", "format": "int64", "minimum": 1}),
            ),
            (
                "csv".to_string(),
                json!({"type": "string", "pattern": csv, "description":
                    "A header row naming `target` (or `email`), and optionally `kind` (email, webhook, slack, discord, teams) and `componentIds` (ids separated by spaces or semicolons); then one subscriber per row. Up to 10,000 rows; a bad row refuses the file."}),
            ),
            (
                "skipConfirmation".to_string(),
                json!({"type": "boolean", "description": "Add email subscribers without the confirmation (they opted in elsewhere)."}),
            ),
        ]),
        &["statusPageId", "csv"],
    )
}

/// `POST /api/push/subscribe`: what a browser's `PushSubscription.toJSON()`
/// holds. The public key is an uncompressed P-256 point (65 bytes, the
/// first 0x04), the secret 16 bytes, both base64url without padding.
fn push() -> Value {
    object(
        Map::from_iter([
            (
                "statusPageId".to_string(),
                json!({"type": "integer", "format": "int64", "minimum": 1}),
            ),
            ("componentIds".to_string(), ids(500)),
            (
                "subscription".to_string(),
                object(
                    Map::from_iter([
                        ("endpoint".to_string(), of(schema::url())),
                        ("expirationTime".to_string(), json!({"type": "null"})),
                        (
                            "keys".to_string(),
                            object(
                                Map::from_iter([
                                    (
                                        "p256dh".to_string(),
                                        json!({"type": "string", "pattern": r"^B[A-P][A-Za-z0-9_-]{84}[AEIMQUYcgkosw048]$"}),
                                    ),
                                    (
                                        "auth".to_string(),
                                        json!({"type": "string", "pattern": r"^[A-Za-z0-9_-]{21}[AQgw]$"}),
                                    ),
                                ]),
                                &["p256dh", "auth"],
                            ),
                        ),
                    ]),
                    &["endpoint", "keys"],
                ),
            ),
        ]),
        &["statusPageId", "subscription"],
    )
}

/// Points each operation's body at its variants. `mail`: whether the install
/// sends mail (email channels and subscribers are refused without it).
pub fn by_kind(doc: &mut OpenApi, mail: bool) {
    let bodies = [
        ("createMonitor", "MonitorCreate", monitor(true)),
        ("updateMonitor", "MonitorChange", monitor(false)),
        (
            "createNotificationChannel",
            "ChannelCreate",
            channel(true, mail),
        ),
        (
            "updateNotificationChannel",
            "ChannelChange",
            channel(false, mail),
        ),
        ("subscribe", "SubscribeInput", subscribe(mail)),
        ("importSubscribers", "ImportInput", import(mail)),
        ("pushSubscribe", "PushSubscribeInput", push()),
    ];
    // What the variants replace, referenced from nowhere else.
    if let Some(components) = doc.components.as_mut() {
        for unused in [
            "MonitorInput",
            "ChannelInput",
            "BrowserSubscription",
            "PushKeys",
        ] {
            components.schemas.remove(unused);
        }
    }
    for (operation, name, value) in bodies {
        let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(value) else {
            tracing::error!(name, "a body schema does not read as a schema");
            continue;
        };
        doc.components
            .get_or_insert_with(Default::default)
            .schemas
            .insert(name.to_string(), schema);
        let target = RefOr::Ref(utoipa::openapi::Ref::from_schema_name(name));
        for item in doc.paths.paths.values_mut() {
            for op in super::operations_mut(item) {
                if op.operation_id.as_deref() != Some(operation) {
                    continue;
                }
                if let Some(RefOr::T(body)) = op.request_body.as_mut() {
                    body.required = Some(utoipa::openapi::Required::True);
                    for content in body.content.values_mut() {
                        if let RefOr::T(content) = content {
                            content.schema = Some(target.clone());
                        }
                    }
                }
            }
        }
    }
}
