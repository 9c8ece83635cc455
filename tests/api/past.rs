//! History kept (docs/api.md, "Records of the past"): an incident,
//! its updates and a maintenance window can be recorded as they happened,
//! with their own times, checked (not in the future, in order), audited as
//! back-dated, told to no subscriber, and shown in the uptime as they were.

use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::{Value, json};

on_both_backends!(
    a_past_incident_is_recorded_as_it_happened,
    times_of_the_past_are_checked_and_nothing_is_stored_when_wrong,
    a_past_maintenance_window_is_recorded_completed,
    a_page_read_before_keeps_up_with_every_write_of_history
);
on_both_backends!(browser: the_incident_form_records_the_past);

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

/// The offset from now of `hour`:00 UTC, `day` days from today.
fn of_day(day: i64, hour: i64) -> i64 {
    let now = time::OffsetDateTime::now_utc();
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
    let midnight = now_ms - now_ms.rem_euclid(DAY);
    midnight + day * DAY + hour * HOUR - now_ms
}

async fn incidents(s: &Server) -> i64 {
    s.db.integers("SELECT COUNT(*) FROM incidents").await[0]
}

/// The component's uptime days, newest last.
async fn days(s: &Server, component: i64) -> Vec<Value> {
    let up = s.get("/api/public/status/acme/uptime").await;
    assert_eq!(up.status, 200, "{}", up.body);
    let c = up.body["components"]
        .as_array()
        .expect("components")
        .iter()
        .find(|c| c["id"] == json!(component.to_string()) || c["id"] == json!(component))
        .cloned()
        .expect("the component");
    c["days"].as_array().expect("days").clone()
}

/// A page's uptime after each kind of write to its history, read after the
/// page was read already (so its snapshot reads again only the components
/// written): a status set, a past incident recorded, a reset, a component
/// added, a component deleted; and then the same as a fresh start reads
/// it whole.
async fn a_page_read_before_keeps_up_with_every_write_of_history(b: Backend) {
    let mut s = Server::process(b).await;
    let page = s.page("acme").await;
    let a = s.component(page, "A").await;
    let bee = s.component(page, "B").await;
    let gone = s.component(page, "C").await;
    let today = |d: &[Value]| d[d.len() - 1]["worstStatus"].clone();
    assert_eq!(today(&days(&s, a).await), "operational");

    s.patch(
        &format!("/api/v1/components/{a}"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    assert_eq!(today(&days(&s, a).await), "major_outage");
    assert_eq!(today(&days(&s, bee).await), "operational");

    s.post(
        "/api/v1/incidents",
        json!({"title": "Failover", "statusPageId": page, "message": "Writes fail",
               "impact": "major", "createdAt": at_offset_ms(of_day(-3, 10)),
               "resolvedAt": at_offset_ms(of_day(-3, 12)),
               "componentStatuses": [{"componentId": bee, "status": "partial_outage"}]}),
    )
    .await
    .data(201);
    let b_days = days(&s, bee).await;
    assert_eq!(b_days[b_days.len() - 4]["worstStatus"], "partial_outage");

    // A reset: B's history starts now, its past outage is gone.
    s.post_empty(&format!("/api/components/{bee}/reset-stats"))
        .await
        .data(200);
    let b_days = days(&s, bee).await;
    assert_eq!(
        b_days[b_days.len() - 4]["worstStatus"],
        Value::Null,
        "{b_days:?}"
    );

    let d = s.component(page, "D").await;
    s.patch(
        &format!("/api/v1/components/{d}"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    assert_eq!(today(&days(&s, d).await), "degraded");
    s.delete(&format!("/api/v1/components/{gone}")).await;
    let up = s.get("/api/public/status/acme/uptime").await.body;
    let ids: Vec<Value> = up["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(ids.len(), 3, "C is gone: {ids:?}");

    // What a start reads whole (the days before today: today's share moves
    // with the clock).
    let settled = |up: &Value| -> Vec<(Value, Vec<Value>)> {
        up["components"]
            .as_array()
            .expect("components")
            .iter()
            .map(|c| {
                let days = c["days"].as_array().expect("days");
                let mut seen: Vec<Value> = days[..days.len() - 1].to_vec();
                seen.push(days[days.len() - 1]["worstStatus"].clone());
                (c["id"].clone(), seen)
            })
            .collect()
    };
    let before = settled(&up);
    s.restart(&[]);
    let after = s.get("/api/public/status/acme/uptime").await.body;
    assert_eq!(before, settled(&after));
}

async fn a_past_incident_is_recorded_as_it_happened(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.post(
        "/api/subscribers",
        json!({"statusPageId": page, "kind": "webhook", "target": "https://hooks.example.com/acme"}),
    )
    .await;
    // 10:00 to 12:00 UTC (the page's zone) three days ago: one calendar day.
    let began = at_offset_ms(of_day(-3, 10));
    let ended = at_offset_ms(of_day(-3, 12));
    let made = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Database failover", "statusPageId": page, "message": "Writes fail",
                   "impact": "major", "createdAt": began, "resolvedAt": ended,
                   "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
        )
        .await
        .data(201);
    assert_eq!(made["status"], "resolved");
    let id = made["id"].as_i64().expect("id");
    let millis = |t: &Value| {
        time::OffsetDateTime::parse(
            t.as_str().expect("time"),
            &time::format_description::well_known::Rfc3339,
        )
        .expect("RFC 3339")
        .unix_timestamp()
    };
    assert_eq!(millis(&made["createdAt"]), millis(&json!(began)));
    assert_eq!(millis(&made["resolvedAt"]), millis(&json!(ended)));
    let detail = s.get(&format!("/api/v1/incidents/{id}")).await.data(200);
    let updates = detail["updates"].as_array().expect("updates");
    assert_eq!(updates.len(), 2, "{detail}");
    let statuses: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert!(statuses.contains(&"investigating") && statuses.contains(&"resolved"));
    // The component is fine now; its history shows the outage that day.
    assert_eq!(s.component_status(api).await, "operational");
    let days = days(&s, api).await;
    let that_day = &days[days.len() - 4];
    assert_eq!(that_day["worstStatus"], "major_outage", "{days:?}");
    assert!(
        that_day["outageMinutes"].as_i64() >= Some(119),
        "{that_day}"
    );
    // Audited as back-dated; told to no subscriber.
    let audit = s
        .get("/api/audit-events?action=incident.create")
        .await
        .data(200);
    assert!(
        audit[0]["summary"]["backdated"]["createdAt"].is_string(),
        "{audit}"
    );
    s.quiet().await;
    let told =
        s.db.integers("SELECT COUNT(*) FROM deliveries WHERE subscriber_id IS NOT NULL")
            .await;
    assert_eq!(told, [0], "nobody is told of a record of the past");

    // An open incident of the past, its timeline written update by update.
    let open = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Slow search", "statusPageId": page, "message": "Looking",
                   "createdAt": at_offset_ms(-2 * HOUR)}),
        )
        .await
        .data(201);
    let open_id = open["id"].as_i64().expect("id");
    let path = format!("/api/v1/incidents/{open_id}/updates");
    s.post(
        &path,
        json!({"message": "Found it", "status": "identified", "createdAt": at_offset_ms(-HOUR)}),
    )
    .await
    .data(201);
    // Said before the last update: it takes its place in the timeline and
    // changes nothing the later update decided.
    s.post(
        &path,
        json!({"message": "Earlier", "status": "monitoring", "createdAt": at_offset_ms(-90 * 60_000)}),
    )
    .await
    .data(201);
    let still = s
        .get(&format!("/api/v1/incidents/{open_id}"))
        .await
        .data(200);
    assert_eq!(still["status"], "identified", "{still}");
    let refused = s
        .post(
            &path,
            json!({"message": "Earlier", "createdAt": at_offset_ms(-100 * 60_000),
                   "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    let resolved_at = at_offset_ms(-30 * 60_000);
    s.post(
        &path,
        json!({"message": "Fixed", "status": "resolved", "createdAt": resolved_at}),
    )
    .await
    .data(201);
    let done = s
        .get(&format!("/api/v1/incidents/{open_id}"))
        .await
        .data(200);
    assert_eq!(done["status"], "resolved");
    assert_eq!(millis(&done["resolvedAt"]), millis(&json!(resolved_at)));
    assert_eq!(done["updates"].as_array().map(Vec::len), Some(4));
    // Recorded resolved at once: over as soon as it began.
    let instant = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Blip", "statusPageId": page, "status": "resolved",
                   "createdAt": at_offset_ms(-5 * HOUR)}),
        )
        .await
        .data(201);
    assert_eq!(instant["status"], "resolved");
    assert_eq!(
        millis(&instant["resolvedAt"]),
        millis(&instant["createdAt"])
    );
    // With both times and status resolved: begun as investigated.
    let both = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Both", "statusPageId": page, "status": "resolved",
                   "createdAt": at_offset_ms(-4 * HOUR), "resolvedAt": at_offset_ms(-3 * HOUR)}),
        )
        .await
        .data(201);
    assert_eq!(both["status"], "resolved");
}

async fn times_of_the_past_are_checked_and_nothing_is_stored_when_wrong(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let base = json!({"title": "Past", "statusPageId": page, "message": "m"});
    let with = |extra: Value| {
        let mut body = base.clone();
        for (k, v) in extra.as_object().expect("object") {
            body[k] = v.clone();
        }
        body
    };
    for (extra, field) in [
        (json!({"createdAt": at_offset_ms(HOUR)}), "createdAt"),
        (json!({"createdAt": "last tuesday"}), "createdAt"),
        (json!({"resolvedAt": at_offset_ms(-HOUR)}), "resolvedAt"),
        (
            json!({"createdAt": at_offset_ms(-HOUR), "resolvedAt": at_offset_ms(-2 * HOUR)}),
            "resolvedAt",
        ),
        (
            json!({"createdAt": at_offset_ms(-2 * HOUR), "resolvedAt": at_offset_ms(HOUR)}),
            "resolvedAt",
        ),
    ] {
        let r = s.post("/api/v1/incidents", with(extra.clone())).await;
        assert_eq!(r.status, 422, "{extra}: {}", r.body);
        r.invalid_fields(&[field]);
    }
    assert_eq!(incidents(&s).await, 0, "nothing was stored");
    let now = s.post("/api/v1/incidents", base.clone()).await.data(201);
    let r = s
        .post(
            &format!("/api/v1/incidents/{}/updates", now["id"]),
            json!({"message": "later", "createdAt": at_offset_ms(2 * HOUR)}),
        )
        .await;
    r.invalid_fields(&["createdAt"]);
    let detail = s
        .get(&format!("/api/v1/incidents/{}", now["id"]))
        .await
        .data(200);
    assert_eq!(detail["updates"].as_array().map(Vec::len), Some(1));
}

async fn a_past_maintenance_window_is_recorded_completed(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let db = s.component(page, "Database").await;
    let window = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "Upgrade", "statusPageId": page, "componentIds": [db],
                   "scheduledStartTime": at_offset_ms(of_day(-2, 10)),
                   "scheduledEndTime": at_offset_ms(of_day(-2, 11))}),
        )
        .await
        .data(201);
    assert_eq!(window["status"], "completed", "{window}");
    assert_eq!(s.component_status(db).await, "operational");
    let days = days(&s, db).await;
    assert_eq!(
        days[days.len() - 3]["worstStatus"],
        "maintenance",
        "{days:?}"
    );
    s.quiet().await;
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM jobs WHERE kind = 'maintenance'")
            .await,
        [0],
        "no start, end or reminder is planned for a window that is over"
    );
}

async fn the_incident_form_records_the_past(b: Backend) {
    use crate::admin_ui::{PW, field_by_id, shot, signed_in_browser};
    use fantoccini::Locator;
    if !crate::browser::browser_available("the_incident_form_records_the_past") {
        return;
    }
    let (s, d) = signed_in_browser(b, "ed@example.com", "editor").await;
    let _ = PW;
    s.page("acme").await;
    d.c()
        .goto(&format!("{}/admin/incidents/new", s.base))
        .await
        .expect("form");
    d.c()
        .find(Locator::Css("details.past summary"))
        .await
        .expect("the past")
        .click()
        .await
        .expect("opened");
    field_by_id(&d, "f-title")
        .await
        .send_keys("Power cut")
        .await
        .expect("title");
    field_by_id(&d, "f-message")
        .await
        .send_keys("The data centre lost power.")
        .await
        .expect("message");
    // A day ago, 09:00 to 10:30 UTC, typed as a person types into the fields.
    let day = time::OffsetDateTime::now_utc() - time::Duration::days(1);
    let set = |id: &str, hm: &str| {
        format!(
            "document.getElementById('{id}').value = '{:04}-{:02}-{:02}T{hm}'",
            day.year(),
            u8::from(day.month()),
            day.day()
        )
    };
    d.js(&set("f-createdAt", "09:00")).await;
    d.js(&set("f-resolvedAt", "10:30")).await;
    d.screenshot(&shot(b, "incident-of-the-past")).await;
    d.c()
        .find(Locator::XPath(
            "//button[normalize-space()='Report incident']",
        ))
        .await
        .expect("button")
        .click()
        .await
        .expect("sent");
    let shown = d
        .until(
            "return location.pathname.startsWith('/admin/incidents/') && !location.pathname.endsWith('/new')",
            crate::browser::STEP_WITHIN,
        )
        .await;
    assert!(shown.is_some(), "the incident's screen follows");
    let list = s.get("/api/v1/incidents").await.data(200);
    let made = &list[0];
    assert_eq!(made["status"], "resolved", "{made}");
    let began = made["createdAt"].as_str().expect("createdAt");
    assert!(
        began.ends_with("T09:00:00.000Z") || began.contains("T09:00:00"),
        "{began}"
    );
    d.screenshot(&shot(b, "incident-of-the-past-recorded"))
        .await;
    d.quit().await;
}
