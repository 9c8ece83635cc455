//! Alerts in: each sender's real payload (tests/fixtures/alerts, written
//! from each vendor's documented format) posted to its receiver moves
//! components and opens, drafts, joins or resolves incidents as the
//! integration's rules say; repeats change nothing; maintenance holds;
//! signatures are checked; every refusal leaves the page as it was.

use crate::admin_ui::{
    check, field_by_id, fill, no_axe_violations, press, press_named, shot, signed_in_browser, text,
};
use crate::browser::browser_available;
use crate::on_both_backends;
use crate::support::{Backend, Resp, Running, Server, free_port, peers_available, root};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::time::Duration;

on_both_backends!(
    alertmanager_groups_open_one_incident_and_resolve_it,
    drafts_wait_for_a_person,
    signed_senders_are_verified,
    opsgenie_and_datadog_move_components_only,
    maintenance_holds_alerts_back,
    a_deleted_incident_ends_its_alert_group,
    bad_integrations_and_payloads_are_refused,
    a_rotated_or_disabled_receiver_answers_404,
    the_real_alertmanager_opens_and_resolves_an_incident,
    the_team_hears_of_a_draft_and_publishes_it_from_the_link,
    old_alerts_are_pruned_with_the_delivery_log
);
on_both_backends!(browser: integrations_in_chromium);

fn fixture(name: &str) -> Value {
    let path = root().join("tests/fixtures/alerts").join(name);
    let text = std::fs::read_to_string(&path).expect("alert fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// A made integration: its id, receiver path (the token in it) and secret.
struct Made {
    id: i64,
    path: String,
    secret: Option<String>,
}

async fn integration(s: &Server, body: Value) -> Made {
    let d = s.post("/api/integrations", body).await.data(201);
    let url = d["receiverUrl"].as_str().expect("receiver URL");
    let at = url.find("/api/integrations/").expect("receiver path");
    Made {
        id: d["id"].as_i64().expect("id"),
        path: url[at..].to_string(),
        secret: d["secret"].as_str().map(String::from),
    }
}

/// Posts as the sender does: no key, its own headers.
async fn deliver(s: &Server, path: &str, body: &[u8], headers: &[(&str, String)]) -> Resp {
    let mut req = reqwest::Client::new()
        .post(format!("{}{path}", s.base))
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let res = req.send().await.expect("post");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let text = res.text().await.expect("body");
    Resp {
        status,
        headers,
        body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
    }
}

async fn post_alert(s: &Server, path: &str, body: &Value) -> Resp {
    deliver(s, path, body.to_string().as_bytes(), &[]).await
}

fn outcomes(r: &Resp) -> Vec<String> {
    r.data(200)["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| o.as_str().unwrap_or_default().to_string())
        .collect()
}

/// What each alert of a payload did, posted as the sender posts it.
async fn said(s: &Server, path: &str, body: &Value) -> Vec<String> {
    outcomes(&post_alert(s, path, body).await)
}

fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

async fn incidents(s: &Server) -> Vec<String> {
    s.db.texts("SELECT title || '|' || status FROM incidents ORDER BY id")
        .await
}

async fn alertmanager_groups_open_one_incident_and_resolve_it(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let web = s.component(page, "Website").await;
    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page, "rules": [
            {"when": "severity=warning", "componentIds": [web], "status": "degraded", "incident": "none"},
            {"when": r#"severity="critical", service=~"api|gateway""#, "componentIds": [api],
             "status": "major_outage", "incident": "publish", "resolveMessage": "The API answers again."}
        ]}),
    )
    .await;
    let firing = fixture("alertmanager-firing.json");
    // Two alerts of one group: one incident, the second joins it.
    let r = post_alert(&s, &am.path, &firing).await;
    assert_eq!(outcomes(&r), ["opened", "joined"]);
    assert_eq!(
        incidents(&s).await,
        ["The API does not answer|investigating"]
    );
    assert_eq!(s.component_status(api).await, "major_outage");
    assert_eq!(
        s.component_status(web).await,
        "operational",
        "the first rule did not match"
    );

    // Alertmanager repeats a group every repeat_interval: nothing changes.
    let r = post_alert(&s, &am.path, &firing).await;
    assert_eq!(outcomes(&r), ["duplicate", "duplicate"]);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);

    // One instance recovers: the other still holds the incident.
    let mut one = firing.clone();
    one["status"] = json!("resolved");
    one["alerts"][0]["status"] = json!("resolved");
    one["alerts"] = json!([one["alerts"][0].clone()]);
    let r = post_alert(&s, &am.path, &one).await;
    assert_eq!(outcomes(&r), ["released"]);
    assert_eq!(s.component_status(api).await, "major_outage");

    // The last one recovers: the incident resolves in the rule's words and
    // the component comes back.
    let mut all = firing.clone();
    all["status"] = json!("resolved");
    for a in all["alerts"].as_array_mut().expect("alerts") {
        a["status"] = json!("resolved");
    }
    let r = post_alert(&s, &am.path, &all).await;
    assert_eq!(outcomes(&r), ["ignored", "resolved"]);
    assert_eq!(incidents(&s).await, ["The API does not answer|resolved"]);
    assert_eq!(s.component_status(api).await, "operational");
    assert_eq!(
        s.db.texts("SELECT message FROM incident_updates ORDER BY id DESC LIMIT 1")
            .await,
        ["The API answers again."]
    );

    // It fires again later: a new incident.
    let r = post_alert(&s, &am.path, &firing).await;
    assert_eq!(outcomes(&r), ["opened", "joined"]);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [2]);

    // The log tells each step, newest first.
    let log = s
        .get(&format!("/api/integrations/{}/events", am.id))
        .await
        .data(200);
    let said: Vec<&str> = log
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["outcome"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        said,
        [
            "joined",
            "opened",
            "resolved",
            "ignored",
            "released",
            "duplicate",
            "duplicate",
            "joined",
            "opened"
        ]
    );
    assert_eq!(log[1]["fingerprint"], "5f1d9c1e8a6b2c3d");
    // The audit log names the integration as the actor.
    let actors =
        s.db.texts("SELECT actor_label FROM audit_events WHERE action = 'incident.create'")
            .await;
    assert_eq!(actors, ["integration Prometheus", "integration Prometheus"]);
}

async fn drafts_wait_for_a_person(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let checkout = s.component(page, "Checkout").await;
    let grafana = integration(
        &s,
        json!({"kind": "grafana", "name": "Grafana", "statusPageId": page, "rules": [
            {"when": "team=blue", "componentIds": [checkout], "status": "partial_outage"}
        ]}),
    )
    .await;
    let firing = fixture("grafana-firing.json");
    let told =
        s.db.integers("SELECT COALESCE(MAX(id), 0) FROM outbox")
            .await[0];
    let r = post_alert(&s, &grafana.path, &firing).await;
    assert_eq!(outcomes(&r), ["drafted"], "drafts are the default");
    // Not public, told to nobody, nothing moved.
    assert!(incidents(&s).await.is_empty());
    assert_eq!(s.component_status(checkout).await, "operational");
    assert_eq!(
        s.db.texts(&format!("SELECT kind FROM outbox WHERE id > {told}"))
            .await,
        ["alert.drafted"],
        "no change of the page: only the team hears of the draft"
    );
    let drafts = s.get("/api/alert-drafts").await.data(200);
    assert_eq!(drafts.as_array().map(Vec::len), Some(1));
    let draft = &drafts[0];
    assert_eq!(draft["title"], "Checkout is slow");
    assert_eq!(
        draft["message"],
        "Checkout is slow: memory pressure on the payment hosts."
    );
    assert_eq!(draft["impact"], "major");
    assert_eq!(draft["firing"], 1);
    assert_eq!(
        draft["components"],
        json!([{"componentId": checkout, "status": "partial_outage"}])
    );
    let id = draft["id"].as_i64().expect("draft id");

    // A person approves it with better words: it is published.
    let approved = s
        .post(
            &format!("/api/alert-drafts/{id}/approve"),
            json!({"title": "Checkout is slow for some customers"}),
        )
        .await
        .data(200);
    assert!(approved["incidentId"].as_i64().is_some());
    assert_eq!(
        incidents(&s).await,
        ["Checkout is slow for some customers|investigating"]
    );
    assert_eq!(s.component_status(checkout).await, "partial_outage");
    assert!(
        s.get("/api/alert-drafts")
            .await
            .data(200)
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    let again = s
        .post(&format!("/api/alert-drafts/{id}/approve"), json!({}))
        .await;
    again.problem(409);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);

    // Its alert resolves: the approved incident resolves with it.
    let mut resolved = firing.clone();
    resolved["alerts"][0]["status"] = json!("resolved");
    assert_eq!(said(&s, &grafana.path, &resolved).await, ["resolved"]);
    assert_eq!(
        incidents(&s).await,
        ["Checkout is slow for some customers|resolved"]
    );
    assert_eq!(s.component_status(checkout).await, "operational");

    // A draft whose alert resolves before anyone looks is withdrawn.
    assert_eq!(said(&s, &grafana.path, &firing).await, ["drafted"]);
    assert_eq!(said(&s, &grafana.path, &resolved).await, ["withdrawn"]);
    assert!(
        s.get("/api/alert-drafts")
            .await
            .data(200)
            .as_array()
            .is_some_and(Vec::is_empty)
    );

    // A dismissed draft publishes nothing, and its repeats change nothing.
    assert_eq!(said(&s, &grafana.path, &firing).await, ["drafted"]);
    let id = s.get("/api/alert-drafts").await.data(200)[0]["id"]
        .as_i64()
        .expect("draft");
    let r = s
        .post_empty(&format!("/api/alert-drafts/{id}/dismiss"))
        .await;
    assert_eq!(
        (r.status, &r.body["message"]),
        (200, &json!("The draft is dismissed."))
    );
    assert_eq!(said(&s, &grafana.path, &firing).await, ["duplicate"]);
    s.post(&format!("/api/alert-drafts/{id}/approve"), json!({}))
        .await
        .problem(409);
    s.post(
        &format!("/api/alert-drafts/{}/approve", id + 100),
        json!({}),
    )
    .await
    .problem(404);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);
    assert_eq!(s.component_status(checkout).await, "operational");

    // Approval needs the right to write incidents; bad words are refused.
    assert_eq!(said(&s, &grafana.path, &resolved).await, ["ignored"]);
    assert_eq!(said(&s, &grafana.path, &firing).await, ["drafted"]);
    let id = s.get("/api/alert-drafts").await.data(200)[0]["id"]
        .as_i64()
        .expect("draft");
    let reader = s.db.create_key("read");
    let r = s
        .send(
            reqwest::Method::POST,
            &format!("/api/alert-drafts/{id}/approve"),
            Some(&reader),
            Some(json!({})),
        )
        .await;
    r.problem(403);
    s.post(
        &format!("/api/alert-drafts/{id}/approve"),
        json!({"title": ""}),
    )
    .await
    .invalid_fields(&["title"]);
    s.post(
        &format!("/api/alert-drafts/{id}/approve"),
        json!({"impact": "huge"}),
    )
    .await
    .problem(422);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);
    assert_eq!(
        s.get("/api/alert-drafts")
            .await
            .data(200)
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

async fn signed_senders_are_verified(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let payments = s.component(page, "Payments").await;
    let search = s.component(page, "Search").await;
    let pd = integration(
        &s,
        json!({"kind": "pagerduty", "name": "PagerDuty", "statusPageId": page,
               "secret": "whsec-from-pagerduty", "rules": [
            {"when": "urgency=high, service=\"Payments API\"", "componentIds": [payments],
             "status": "major_outage", "incident": "publish"}
        ]}),
    )
    .await;
    assert_eq!(pd.secret.as_deref(), Some("whsec-from-pagerduty"));
    let body = fixture("pagerduty-triggered.json").to_string();
    // Unsigned, or signed with another secret: refused, nothing moves.
    deliver(&s, &pd.path, body.as_bytes(), &[])
        .await
        .problem(401);
    let forged = format!("v1={}", sign("another-secret", body.as_bytes()));
    deliver(
        &s,
        &pd.path,
        body.as_bytes(),
        &[("x-pagerduty-signature", forged)],
    )
    .await
    .problem(401);
    assert!(incidents(&s).await.is_empty());
    assert_eq!(s.component_status(payments).await, "operational");
    let log = s
        .get(&format!("/api/integrations/{}/events", pd.id))
        .await
        .data(200);
    assert!(
        log[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("signature")),
        "the refusal is in the log: {log}"
    );
    // PagerDuty signs with v1=, several while it rotates its secret.
    let good = format!(
        "v1={},v1={}",
        sign("old-secret", body.as_bytes()),
        sign("whsec-from-pagerduty", body.as_bytes())
    );
    let r = deliver(
        &s,
        &pd.path,
        body.as_bytes(),
        &[("x-pagerduty-signature", good)],
    )
    .await;
    assert_eq!(outcomes(&r), ["opened"]);
    assert_eq!(
        incidents(&s).await,
        ["Payments API error rate above 5%|investigating"]
    );
    assert_eq!(s.component_status(payments).await, "major_outage");
    let ping = fixture("pagerduty-ping.json").to_string();
    let sig = format!("v1={}", sign("whsec-from-pagerduty", ping.as_bytes()));
    let r = deliver(
        &s,
        &pd.path,
        ping.as_bytes(),
        &[("x-pagerduty-signature", sig)],
    )
    .await;
    assert_eq!(outcomes(&r), ["ignored"]);
    let resolved = fixture("pagerduty-resolved.json").to_string();
    let sig = format!("v1={}", sign("whsec-from-pagerduty", resolved.as_bytes()));
    let r = deliver(
        &s,
        &pd.path,
        resolved.as_bytes(),
        &[("x-pagerduty-signature", sig)],
    )
    .await;
    assert_eq!(outcomes(&r), ["resolved"]);
    assert_eq!(s.component_status(payments).await, "operational");

    // The generic receiver gets a secret made for it, shown once.
    let generic = integration(
        &s,
        json!({"kind": "generic", "name": "Cron checks", "statusPageId": page, "rules": [
            {"when": "service=search", "componentIds": [search], "status": "degraded", "incident": "none"}
        ]}),
    )
    .await;
    let secret = generic
        .secret
        .clone()
        .expect("a secret is made for generic");
    assert!(secret.len() >= 32);
    let shown = s
        .get(&format!("/api/integrations/{}", generic.id))
        .await
        .data(200);
    assert_eq!(shown["signed"], true);
    assert!(!shown.to_string().contains(&secret), "never shown again");
    let body = fixture("generic-firing.json").to_string();
    deliver(&s, &generic.path, body.as_bytes(), &[])
        .await
        .problem(401);
    assert_eq!(s.component_status(search).await, "operational");
    let sig = format!("sha256={}", sign(&secret, body.as_bytes()));
    let r = deliver(
        &s,
        &generic.path,
        body.as_bytes(),
        &[("x-upstate-signature", sig)],
    )
    .await;
    assert_eq!(outcomes(&r), ["moved"]);
    assert_eq!(s.component_status(search).await, "degraded");
    // The stored secret is sealed, not in clear.
    let stored =
        s.db.texts("SELECT secret FROM integrations ORDER BY id")
            .await;
    assert!(
        stored
            .iter()
            .all(|v| !v.contains(&secret) && !v.contains("whsec"))
    );
}

async fn opsgenie_and_datadog_move_components_only(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let db = s.component(page, "Database").await;
    let web = s.component(page, "Website").await;
    let og = integration(
        &s,
        json!({"kind": "opsgenie", "name": "Opsgenie", "statusPageId": page, "rules": [
            {"when": "env=prod, database=true, priority=~\"P[12]\"", "componentIds": [db],
             "status": "partial_outage", "incident": "none"}
        ]}),
    )
    .await;
    assert_eq!(
        said(&s, &og.path, &fixture("opsgenie-create.json")).await,
        ["moved"]
    );
    assert_eq!(s.component_status(db).await, "partial_outage");
    assert_eq!(
        said(&s, &og.path, &fixture("opsgenie-note.json")).await,
        ["ignored"]
    );
    assert_eq!(s.component_status(db).await, "partial_outage");
    assert_eq!(
        said(&s, &og.path, &fixture("opsgenie-close.json")).await,
        ["resolved"]
    );
    assert_eq!(s.component_status(db).await, "operational");
    assert!(incidents(&s).await.is_empty(), "incident: none opens none");

    let dd = integration(
        &s,
        json!({"kind": "datadog", "name": "Datadog", "statusPageId": page, "rules": [
            {"when": "service=web, env=prod", "componentIds": [web], "status": "degraded", "incident": "none"}
        ]}),
    )
    .await;
    assert_eq!(
        said(&s, &dd.path, &fixture("datadog-triggered.json")).await,
        ["moved"]
    );
    assert_eq!(s.component_status(web).await, "degraded");
    // A person moves the component meanwhile: the recovery leaves it be.
    s.patch(
        &format!("/api/v1/components/{web}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    assert_eq!(
        said(&s, &dd.path, &fixture("datadog-recovered.json")).await,
        ["resolved"]
    );
    assert_eq!(
        s.component_status(web).await,
        "major_outage",
        "a person's move stands"
    );
    // An alert no rule matches changes nothing, and says so.
    let mut other = fixture("datadog-triggered.json");
    other["tags"] = json!("env:staging,service:web");
    other["alertId"] = json!("999");
    assert_eq!(said(&s, &dd.path, &other).await, ["unmatched"]);
}

/// A page "acme" with a component "API" and an Alertmanager receiver
/// whose one rule takes API down and publishes an incident.
async fn publishing_receiver(b: Backend) -> (Server, i64, i64, Made) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page, "rules": [
            {"componentIds": [api], "status": "major_outage", "incident": "publish"}
        ]}),
    )
    .await;
    (s, page, api, am)
}

async fn maintenance_holds_alerts_back(b: Backend) {
    let (s, _, api, am) = publishing_receiver(b).await;
    s.patch(
        &format!("/api/v1/components/{api}/status"),
        json!({"status": "maintenance"}),
    )
    .await
    .data(200);
    let r = post_alert(&s, &am.path, &fixture("alertmanager-firing.json")).await;
    assert_eq!(outcomes(&r), ["suppressed", "suppressed"]);
    assert_eq!(s.component_status(api).await, "maintenance");
    assert!(incidents(&s).await.is_empty());
    let log = s
        .get(&format!("/api/integrations/{}/events", am.id))
        .await
        .data(200);
    assert!(
        log[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("maintenance") && d.contains("API"))
    );
    // Still held while the window lasts: a repeat changes nothing.
    let r = post_alert(&s, &am.path, &fixture("alertmanager-firing.json")).await;
    assert_eq!(outcomes(&r), ["suppressed", "suppressed"]);
    // The window over and the alert still firing: its next repeat moves
    // the component and opens the incident, as a monitor's next check does.
    s.patch(
        &format!("/api/v1/components/{api}/status"),
        json!({"status": "operational"}),
    )
    .await
    .data(200);
    let r = post_alert(&s, &am.path, &fixture("alertmanager-firing.json")).await;
    assert_eq!(outcomes(&r), ["opened", "joined"]);
    assert_eq!(s.component_status(api).await, "major_outage");
    assert_eq!(
        incidents(&s).await,
        ["The API does not answer|investigating"]
    );
}

/// A person deletes the incident an alert opened: the group ends with it,
/// and its next alert opens a new incident rather than joining nothing.
/// A sender's multi-line summary becomes a one-line title, as the API
/// would take it.
async fn a_deleted_incident_ends_its_alert_group(b: Backend) {
    let (s, page, api, am) = publishing_receiver(b).await;
    let firing = fixture("alertmanager-firing.json");
    let mut first = firing.clone();
    first["alerts"] = json!([firing["alerts"][0].clone()]);
    first["alerts"][0]["annotations"]["summary"] =
        json!("The API does not answer\n\non host api-1\r\tsince 10:02");
    assert_eq!(said(&s, &am.path, &first).await, ["opened"]);
    let titles = s.db.texts("SELECT title FROM incidents").await;
    assert_eq!(
        titles,
        ["The API does not answer on host api-1 since 10:02"]
    );
    // The same words through the front door: refused there.
    s.post(
        "/api/v1/incidents",
        json!({"title": "The API does not answer\non host api-1", "statusPageId": page,
               "message": "Looking"}),
    )
    .await
    .problem(422);
    let id = s.db.integers("SELECT id FROM incidents").await[0];
    s.delete(&format!("/api/v1/incidents/{id}")).await.data(200);
    s.patch(
        &format!("/api/v1/components/{api}/status"),
        json!({"status": "operational"}),
    )
    .await
    .data(200);
    // The group's second alert: a new incident, and the component moves.
    let mut second = firing.clone();
    second["alerts"] = json!([firing["alerts"][1].clone()]);
    assert_eq!(said(&s, &am.path, &second).await, ["opened"]);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);
    assert_eq!(s.component_status(api).await, "major_outage");
    assert_eq!(
        s.db.integers(
            "SELECT COUNT(*) FROM alert_groups WHERE state = 'open' AND incident_id IS NULL"
        )
        .await,
        [0]
    );
}

async fn bad_integrations_and_payloads_are_refused(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let other = s.page("other").await;
    let api = s.component(page, "API").await;
    let elsewhere = s.component(other, "Elsewhere").await;
    let reader = s.db.create_key("read");
    let before = s.db.everything_stored().await;
    let r = s.post("/api/integrations", json!({})).await;
    r.invalid_fields(&["body"]);
    assert!(
        r.body.to_string().contains("missing field `kind`"),
        "{}",
        r.body
    );
    s.post(
        "/api/integrations",
        json!({"kind": "nagios", "name": "N", "statusPageId": page}),
    )
    .await
    .problem(422);
    let rule = |when: &str, ids: Value, status: &str| {
        json!({"kind": "alertmanager", "name": "P", "statusPageId": page,
               "rules": [{"when": when, "componentIds": ids, "status": status}]})
    };
    s.post(
        "/api/integrations",
        rule("severity", json!([api]), "major_outage"),
    )
    .await
    .invalid_fields(&["rules[0].when"]);
    s.post(
        "/api/integrations",
        rule("a=~(", json!([api]), "major_outage"),
    )
    .await
    .invalid_fields(&["rules[0].when"]);
    s.post("/api/integrations", rule("", json!([]), "operational"))
        .await
        .invalid_fields(&["rules[0].componentIds", "rules[0].status"]);
    s.post(
        "/api/integrations",
        rule("", json!([elsewhere]), "degraded"),
    )
    .await
    .invalid_fields(&["rules[0].componentIds"]);
    s.post(
        "/api/integrations",
        rule("", json!([api + 1000]), "degraded"),
    )
    .await
    .invalid_fields(&["rules[0].componentIds"]);
    s.send(
        reqwest::Method::POST,
        "/api/integrations",
        Some(&reader),
        Some(rule("", json!([api]), "degraded")),
    )
    .await
    .problem(403);
    assert_eq!(s.db.everything_stored().await, before, "nothing was stored");

    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "P", "statusPageId": page,
               "rules": [{"componentIds": [api], "status": "major_outage", "incident": "publish"}]}),
    )
    .await;
    s.put(
        &format!("/api/integrations/{}", am.id),
        json!({"statusPageId": other}),
    )
    .await
    .invalid_fields(&["statusPageId"]);
    let token = am.path.rsplit('/').next().expect("token");
    // Another kind's receiver with this token, a token nobody holds.
    post_alert(
        &s,
        &format!("/api/integrations/grafana/{token}"),
        &fixture("grafana-firing.json"),
    )
    .await
    .problem(404);
    post_alert(
        &s,
        "/api/integrations/alertmanager/upi_nobody",
        &fixture("alertmanager-firing.json"),
    )
    .await
    .problem(404);
    // Not JSON; JSON that is not the sender's format.
    deliver(&s, &am.path, b"{not json", &[]).await.problem(400);
    post_alert(&s, &am.path, &json!({"alerts": [{"status": "on fire"}]}))
        .await
        .invalid_fields(&["alerts[0].status"]);
    post_alert(&s, &am.path, &json!({"version": "3", "alerts": []}))
        .await
        .invalid_fields(&["version"]);
    post_alert(&s, &am.path, &json!([1, 2]))
        .await
        .invalid_fields(&["body"]);
    assert!(incidents(&s).await.is_empty());
    assert_eq!(s.component_status(api).await, "operational");
    let log = s
        .get(&format!("/api/integrations/{}/events", am.id))
        .await
        .data(200);
    assert!(
        log.as_array()
            .is_some_and(|l| l.len() == 4 && l.iter().all(|e| e["outcome"] == "ignored")),
        "each refusal is logged: {log}"
    );
}

async fn a_rotated_or_disabled_receiver_answers_404(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "P", "statusPageId": page,
               "rules": [{"componentIds": [api], "status": "degraded", "incident": "none"}]}),
    )
    .await;
    let rotated = s
        .post_empty(&format!("/api/integrations/{}/token", am.id))
        .await
        .data(200);
    let url = rotated["receiverUrl"].as_str().expect("url");
    let new_path = &url[url.find("/api/integrations/").expect("path")..];
    assert_ne!(new_path, am.path);
    let firing = fixture("alertmanager-firing.json");
    post_alert(&s, &am.path, &firing).await.problem(404);
    assert_eq!(s.component_status(api).await, "operational");
    s.put(
        &format!("/api/integrations/{}", am.id),
        json!({"enabled": false}),
    )
    .await
    .data(200);
    post_alert(&s, new_path, &firing).await.problem(404);
    s.put(
        &format!("/api/integrations/{}", am.id),
        json!({"enabled": true, "name": "Prometheus EU"}),
    )
    .await
    .data(200);
    assert_eq!(said(&s, new_path, &firing).await, ["moved", "joined"]);
    assert_eq!(s.component_status(api).await, "degraded");
    let listed = s.get("/api/integrations").await.data(200);
    assert_eq!(listed[0]["name"], "Prometheus EU");
    s.delete(&format!("/api/integrations/{}", am.id))
        .await
        .data(200);
    post_alert(&s, new_path, &firing).await.problem(404);
    s.get(&format!("/api/integrations/{}", am.id))
        .await
        .problem(404);
}

/// An operator makes an integration and its rule in the interface, the
/// sender's alert drafts an incident, and the operator publishes it from
/// the incidents screen with better words.
async fn integrations_in_chromium(b: Backend) {
    if !browser_available("integrations_in_chromium") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ad@example.com", "admin").await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.component(page, "Website").await;
    press(&d, "Integrations").await;
    assert_eq!(text(&d, "h1").await, "Integrations");
    assert!(text(&d, ".empty").await.contains("No integrations yet"));
    fill(&d, "Name", "Prometheus production").await;
    press(&d, "Make integration").await;
    assert!(text(&d, "h1").await.starts_with("Prometheus production"));
    let url = text(&d, "#new-url").await;
    let at = url
        .find("/api/integrations/alertmanager/upi_")
        .expect("the receiver URL, once");
    let path = url[at..].to_string();

    fill(
        &d,
        "When the labels match (empty: every alert)",
        "severity=~(",
    )
    .await;
    check(&d, "API").await;
    press(&d, "Add rule").await;
    assert!(
        text(&d, "#f-when-error").await.contains("does not compile"),
        "a bad matcher is refused beside the field"
    );
    assert!(
        d.js("return document.body.innerText")
            .await
            .as_str()
            .is_some_and(|t| !t.contains("#new-url"))
    );
    fill(
        &d,
        "When the labels match (empty: every alert)",
        "severity=\"critical\"",
    )
    .await;
    check(&d, "API").await;
    press(&d, "Add rule").await;
    assert!(text(&d, "[role=status]").await.contains("Rule added"));
    assert!(
        text(&d, "#h-rules + p + ol")
            .await
            .contains("severity=\"critical\"")
    );
    no_axe_violations(&d, "integration screen").await;

    let r = post_alert(&s, &path, &fixture("alertmanager-firing.json")).await;
    assert_eq!(outcomes(&r), ["drafted", "joined"]);
    d.c().refresh().await.expect("reload");
    assert!(text(&d, "#h-log + *").await.contains("drafted"));
    d.screenshot(&shot(b, "integration")).await;

    // The dashboard says a draft waits, and leads to it.
    press(&d, "Dashboard").await;
    assert!(
        text(&d, "#drafts-waiting")
            .await
            .contains("1 incident drafted by your alerting waits")
    );
    press(&d, "Review them").await;
    assert!(text(&d, "#h-drafts").await.contains("Awaiting approval"));
    no_axe_violations(&d, "incidents with a draft").await;
    d.screenshot(&shot(b, "incidents-draft")).await;
    let id = s.get("/api/alert-drafts").await.data(200)[0]["id"]
        .as_i64()
        .expect("draft");
    let title = field_by_id(&d, &format!("draft-{id}-title")).await;
    title.clear().await.expect("clear");
    title.send_keys("The API is down").await.expect("type");
    press_named(&d, "Publish").await;
    assert!(text(&d, "[role=status]").await.contains("Published"));
    assert!(text(&d, "h1").await.contains("The API is down"));
    assert_eq!(s.component_status(api).await, "major_outage");
    assert_eq!(incidents(&s).await, ["The API is down|investigating"]);
}

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

/// Debian's Alertmanager, configured to send to an Upstate integration,
/// is given an alert and later its end: the incident opens and resolves
/// from what the real sender posts.
async fn the_real_alertmanager_opens_and_resolves_an_incident(b: Backend) {
    if !peers_available(
        "the_real_alertmanager_opens_and_resolves_an_incident",
        &[ALERTMANAGER.into()],
    ) {
        return;
    }
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page, "rules": [
            {"when": "severity=critical", "componentIds": [api], "status": "major_outage", "incident": "publish"}
        ]}),
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "route:\n  receiver: upstate\n  group_by: [alertname]\n  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n\
         receivers:\n  - name: upstate\n    webhook_configs:\n      - url: {}{}\n        send_resolved: true\n",
        s.base, am.path
    );
    std::fs::write(dir.path().join("alertmanager.yml"), config).expect("config");
    let port = free_port();
    let child = std::process::Command::new(ALERTMANAGER)
        .arg(format!(
            "--config.file={}",
            dir.path().join("alertmanager.yml").display()
        ))
        .arg(format!(
            "--storage.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--cluster.listen-address=")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start alertmanager");
    let _running = Running(child);
    let http = reqwest::Client::new();
    let alerts = format!("http://127.0.0.1:{port}/api/v2/alerts");
    let send = |ends: Option<String>| {
        let mut alert = json!({"labels": {"alertname": "APIDown", "severity": "critical", "service": "api"},
            "annotations": {"summary": "The API does not answer", "description": "Probes fail."}});
        if let Some(e) = ends {
            alert["endsAt"] = json!(e);
        }
        http.post(&alerts).json(&json!([alert])).send()
    };
    // Alertmanager takes a moment to listen.
    let up = s
        .eventually(Duration::from_secs(20), || async {
            send(None).await.is_ok_and(|r| r.status().is_success())
        })
        .await;
    assert!(up, "alertmanager took the alert");
    let opened = s
        .eventually(Duration::from_secs(30), || async {
            incidents(&s).await == ["The API does not answer|investigating"]
        })
        .await;
    assert!(opened, "the incident opened: {:?}", incidents(&s).await);
    assert_eq!(s.component_status(api).await, "major_outage");
    // An end in the past resolves the alert; Alertmanager sends that too.
    let ended = crate::support::at_offset_ms(-1_000);
    assert!(
        send(Some(ended))
            .await
            .is_ok_and(|r| r.status().is_success())
    );
    let resolved = s
        .eventually(Duration::from_secs(30), || async {
            incidents(&s).await == ["The API does not answer|resolved"]
        })
        .await;
    assert!(resolved, "the incident resolved: {:?}", incidents(&s).await);
    assert_eq!(s.component_status(api).await, "operational");
}

/// A draft tells the team's channels, never the subscribers; the message's
/// link shows the draft and publishes it with one press (a POST, so a chat
/// app's preview publishes nothing); the link then works no more.
async fn the_team_hears_of_a_draft_and_publishes_it_from_the_link(b: Backend) {
    let rx = crate::receiver::Receiver::start().await;
    let s = Server::start_with(b, &[("UPSTATE_OUTGOING_ALLOW", "127.0.0.1")]).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.hook_and_subscriber(page, &rx.base).await;
    let am = integration(
        &s,
        json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page, "rules": [
            {"componentIds": [api], "status": "major_outage"}
        ]}),
    )
    .await;
    let r = post_alert(&s, &am.path, &fixture("alertmanager-firing.json")).await;
    assert_eq!(outcomes(&r), ["drafted", "joined"]);
    let got = rx.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 1, "one message, to the channel only");
    assert_eq!(got[0].path, "/hook");
    let body = String::from_utf8_lossy(&got[0].body).to_string();
    assert!(
        body.contains("Awaiting approval: The API does not answer"),
        "{body}"
    );
    let at = body.find("/admin/approve/").expect("the approve link");
    let link: String = body[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '/' || *c == '_')
        .collect();
    assert!(
        s.db.integers("SELECT COUNT(*) FROM deliveries WHERE subscriber_id IS NOT NULL")
            .await
            == [0],
        "subscribers hear nothing of a draft"
    );

    let http = reqwest::Client::new();
    // Opening the link (as a chat app's preview does) changes nothing.
    let shown = http
        .get(format!("{}{link}", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(shown.status(), 200);
    let page_text = shown.text().await.expect("html");
    assert!(page_text.contains("The API does not answer") && page_text.contains("Publish"));
    assert!(incidents(&s).await.is_empty());
    // A wrong secret publishes nothing.
    let wrong = format!("{}{}x", s.base, &link[..link.len() - 1]);
    let r = http
        .post(&wrong)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("answer=publish")
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 404);
    assert!(incidents(&s).await.is_empty());
    let r = http
        .post(format!("{}{link}", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("answer=publish")
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 200);
    assert!(r.text().await.expect("html").contains("Published"));
    assert_eq!(
        incidents(&s).await,
        ["The API does not answer|investigating"]
    );
    assert_eq!(s.component_status(api).await, "major_outage");
    let actors =
        s.db.texts("SELECT actor_label FROM audit_events WHERE action = 'alert_draft.approve'")
            .await;
    assert_eq!(actors, ["approve link"]);
    // Used: the link answers 404 and publishes nothing more.
    let again = http
        .get(format!("{}{link}", s.base))
        .send()
        .await
        .expect("get");
    assert_eq!(again.status(), 404);
    let r = http
        .post(format!("{}{link}", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("answer=publish")
        .send()
        .await
        .expect("post");
    assert_eq!(r.status(), 404);
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [1]);
}

/// What an integration remembers of alerts goes with the delivery log
/// (`deliveryLogDays`): alerts that stopped firing and closed groups are
/// deleted by the hourly prune once older; a firing alert and its open
/// group stay whatever their age.
async fn old_alerts_are_pruned_with_the_delivery_log(b: Backend) {
    const DAY: std::time::Duration = std::time::Duration::from_secs(86_400);
    let mut app = crate::harness::TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let api = app.component(&page, "API").await;
    let made = app
        .data(
            reqwest::Method::POST,
            "/api/integrations",
            Some(json!({"kind": "alertmanager", "name": "Prometheus", "statusPageId": page, "rules": [
                {"when": r#"severity="critical""#, "componentIds": [api], "status": "major_outage", "incident": "publish"}
            ]})),
            201,
        )
        .await;
    let url = made["receiverUrl"].as_str().expect("receiver URL");
    let path = &url[url.find("/api/integrations/").expect("path")..];
    let firing = fixture("alertmanager-firing.json");
    let mut resolved = firing.clone();
    resolved["status"] = json!("resolved");
    for a in resolved["alerts"].as_array_mut().expect("alerts") {
        a["status"] = json!("resolved");
    }
    // A second group that keeps firing.
    let mut still = firing.clone();
    still["groupKey"] = json!("{}/{severity=\"critical\"}:{alertname=\"DiskFull\"}");
    still["alerts"] = json!([firing["alerts"][0].clone()]);
    still["alerts"][0]["fingerprint"] = json!("00aa11bb22cc33dd");
    still["alerts"][0]["labels"]["alertname"] = json!("DiskFull");
    for body in [&firing, &resolved, &still] {
        let (status, said) = app
            .send(reqwest::Method::POST, path, Some(body.clone()))
            .await;
        assert_eq!(status, 200, "{said}");
    }
    app.run_jobs().await;
    assert_eq!(alert_counts(&app).await, (vec![3], vec![2]));
    // Younger than the delivery log's 30 days: kept.
    app.advance(29 * DAY);
    app.run_jobs().await;
    assert_eq!(alert_counts(&app).await, (vec![3], vec![2]));
    // Older: the resolved alerts and the closed group go; the firing one
    // and its open group stay.
    app.advance(2 * DAY);
    app.run_jobs().await;
    assert_eq!(alert_counts(&app).await, (vec![1], vec![1]));
    let left = app.test_db.texts("SELECT state FROM alert_groups").await;
    assert_eq!(left, ["open"]);
}

/// How many alerts and alert groups an install remembers.
async fn alert_counts(app: &crate::harness::TestApp) -> (Vec<i64>, Vec<i64>) {
    (
        app.test_db
            .integers("SELECT COUNT(*) FROM integration_alerts")
            .await,
        app.test_db
            .integers("SELECT COUNT(*) FROM alert_groups")
            .await,
    )
}
