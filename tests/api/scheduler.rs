//! The scheduler: maintenance reminders to subscribers and channels, once
//! per window and lead time however often (and wherever) it sweeps; and
//! recurring maintenance expanded into windows once per occurrence.

use crate::harness::TestApp;
use crate::on_both_backends;
use crate::receiver::Receiver;
use crate::support::Backend;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    reminders_reach_subscribers_once_per_lead_time,
    recurring_maintenance_makes_each_occurrence_once,
    bad_recurring_templates_are_refused,
    messages_speak_the_language_of_the_pages,
);

const HOUR: Duration = Duration::from_secs(3_600);

fn at(app: &TestApp, from_now: Duration) -> String {
    upstate_core::Timestamp::from_millis(app.now().millis() + from_now.as_millis() as i64)
        .to_rfc3339()
}

/// Runs the scheduler and the sender once; returns what the receiver got
/// since `seen`, as (path, type, title).
async fn round(app: &TestApp, rx: &Receiver, seen: &mut usize) -> Vec<(String, String, String)> {
    app.run_jobs().await;
    app.send_deliveries().await;
    let got = rx.got();
    let new: Vec<(String, String, String)> = got[*seen..]
        .iter()
        .map(|g| {
            let j: Value = g.json();
            (
                g.path.clone(),
                j["type"].as_str().unwrap_or_default().to_string(),
                j["data"]["title"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    *seen = got.len();
    new
}

async fn reminders_reach_subscribers_once_per_lead_time(b: Backend) {
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let db_comp = app.component(&page, "Database").await;
    app.data(
        Method::POST,
        "/api/notifications",
        Some(json!({"name": "Reminders only", "kind": "webhook", "target": format!("{}/team", rx.base),
            "eventKinds": ["maintenance.reminder"]})),
        201,
    )
    .await;
    app.data(
        Method::POST,
        "/api/subscribers",
        Some(json!({"statusPageId": page, "kind": "webhook", "target": format!("{}/sub", rx.base), "componentIds": [db_comp]})),
        201,
    )
    .await;
    let mut seen = 0;

    // Bad reminder settings are refused and change nothing.
    for bad in ["soon", "2m", "1h, 2h, 3h, 4h, 5h", "15d"] {
        let (status, body) = app
            .send(
                Method::PUT,
                "/api/settings",
                Some(json!({"maintenanceReminders": bad})),
            )
            .await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["errors"][0]["field"], "maintenanceReminders");
    }
    let settings = app.data(Method::GET, "/api/settings", None, 200).await;
    assert_eq!(settings["maintenanceReminders"], "24h, 1h");

    let upgrade = app
        .data(
            Method::POST,
            "/api/v1/maintenance",
            Some(json!({"title": "Database upgrade", "statusPageId": page, "componentIds": [db_comp],
                "scheduledStartTime": at(&app, 48 * HOUR), "scheduledEndTime": at(&app, 49 * HOUR)})),
            201,
        )
        .await;
    // Scheduled 30 minutes ahead: its "scheduled" message is the notice,
    // no reminder follows.
    app.data(
        Method::POST,
        "/api/v1/maintenance",
        Some(json!({"title": "Quick restart", "statusPageId": page, "componentIds": [db_comp],
            "scheduledStartTime": at(&app, Duration::from_secs(1_800)), "scheduledEndTime": at(&app, HOUR)})),
        201,
    )
    .await;
    let first = round(&app, &rx, &mut seen).await;
    assert_eq!(
        first.iter().filter(|(p, _, _)| p == "/sub").count(),
        2,
        "the subscriber hears of both windows: {first:?}"
    );
    assert!(
        first.iter().all(|(p, _, _)| p == "/sub"),
        "the team channel only takes reminders: {first:?}"
    );

    // 24 hours before: one reminder each to the channel and the subscriber.
    app.advance(24 * HOUR + Duration::from_secs(60));
    let day = round(&app, &rx, &mut seen).await;
    let mut got: Vec<(String, String, String)> = day.clone();
    got.sort();
    assert_eq!(
        got,
        [
            (
                "/sub".into(),
                "maintenance.reminder".into(),
                "Maintenance in 24 hours: Database upgrade".into()
            ),
            (
                "/team".into(),
                "maintenance.reminder".into(),
                "Maintenance in 24 hours: Database upgrade".into()
            ),
        ]
    );
    // Sweeping again, or from three instances at once, sends nothing more.
    assert_eq!(round(&app, &rx, &mut seen).await, []);
    let minutes = [1_440, 60];
    let (a, b2, c) = tokio::join!(
        upstate_store::reminders::send_due(&app.db, app.now(), &minutes),
        upstate_store::reminders::send_due(&app.db, app.now(), &minutes),
        upstate_store::reminders::send_due(&app.db, app.now(), &minutes),
    );
    assert_eq!(a.unwrap() + b2.unwrap() + c.unwrap(), 0);

    // An hour before: the second reminder.
    app.advance(23 * HOUR);
    let hour = round(&app, &rx, &mut seen).await;
    assert_eq!(hour.len(), 2, "{hour:?}");
    assert!(
        hour.iter()
            .all(|(_, _, t)| t == "Maintenance in 1 hour: Database upgrade"),
        "{hour:?}"
    );
    assert_eq!(round(&app, &rx, &mut seen).await, []);

    let reminded = app
        .data(
            Method::GET,
            "/api/audit-events?action=maintenance.remind",
            None,
            200,
        )
        .await;
    let reminded: Vec<&Value> = reminded
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "maintenance.remind")
        .collect();
    assert_eq!(
        reminded.len(),
        2,
        "each reminder audited once by the scheduler"
    );
    assert_eq!(reminded[0]["actor"]["label"], "scheduler");
    assert_eq!(reminded[0]["targetId"], upgrade["id"]);

    // No reminders when the setting is emptied.
    app.data(
        Method::PUT,
        "/api/settings",
        Some(json!({"maintenanceReminders": ""})),
        200,
    )
    .await;
    app.data(
        Method::POST,
        "/api/v1/maintenance",
        Some(
            json!({"title": "Later work", "statusPageId": page, "componentIds": [db_comp],
            "scheduledStartTime": at(&app, 48 * HOUR), "scheduledEndTime": at(&app, 49 * HOUR)}),
        ),
        201,
    )
    .await;
    round(&app, &rx, &mut seen).await;
    app.advance(47 * HOUR + Duration::from_secs(60));
    assert_eq!(round(&app, &rx, &mut seen).await, []);
}

async fn windows(app: &TestApp, title: &str) -> Vec<Value> {
    let all = app
        .data(Method::GET, "/api/v1/maintenance", None, 200)
        .await;
    all.as_array()
        .unwrap()
        .iter()
        .filter(|m| m["title"] == title)
        .cloned()
        .collect()
}

async fn recurring_maintenance_makes_each_occurrence_once(b: Backend) {
    let mut app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let comp = app.component(&page, "Database").await;
    let today = app.now().to_rfc3339()[..10].to_string();
    let template = app
        .data(
            Method::POST,
            "/api/maintenance/recurring",
            Some(
                json!({"statusPageId": page, "title": "Nightly backup", "rrule": "FREQ=DAILY",
                "firstStart": format!("{today}T23:30"), "durationMinutes": 30, "horizonDays": 3,
                "componentIds": [comp], "autoStart": true}),
            ),
            201,
        )
        .await;
    assert_eq!(template["rrule"], "FREQ=DAILY");
    assert_eq!(template["firstStart"], format!("{today}T23:30"));
    let upcoming = template["upcoming"].as_array().unwrap();
    assert_eq!(upcoming.len(), 3, "{template}");
    let made = windows(&app, "Nightly backup").await;
    assert_eq!(made.len(), 3, "made at once");
    let mut starts: Vec<&str> = made
        .iter()
        .map(|m| m["scheduledStartTime"].as_str().unwrap())
        .collect();
    starts.sort_unstable();
    assert_eq!(starts[0], upcoming[0].as_str().unwrap());
    assert!(
        starts[0].ends_with("T23:30:00.000Z") || starts[0].ends_with("T23:30:00.000Z"),
        "{starts:?}"
    );
    assert_eq!(made[0]["affectedComponents"], json!([comp]));
    assert_eq!(made[0]["status"], "scheduled");

    // Expanding again (the seed's periodic GET, the scheduler) makes nothing.
    let again = app
        .data(Method::GET, "/api/maintenance/recurring", None, 200)
        .await;
    assert_eq!(again["created"], json!([]));
    assert_eq!(again["templates"][0]["title"], "Nightly backup");
    app.run_jobs().await;
    assert_eq!(windows(&app, "Nightly backup").await.len(), 3);

    // A day later one more occurrence enters the horizon: three instances
    // expanding at once make it once.
    app.advance(Duration::from_secs(86_400));
    let (x, y, z) = tokio::join!(
        upstate_store::recurring::expand(&app.db, app.now()),
        upstate_store::recurring::expand(&app.db, app.now()),
        upstate_store::recurring::expand(&app.db, app.now()),
    );
    assert_eq!(x.unwrap().len() + y.unwrap().len() + z.unwrap().len(), 1);
    assert_eq!(windows(&app, "Nightly backup").await.len(), 4);

    // A window the operator deletes (skipping one night) is not made again.
    let skipped = windows(&app, "Nightly backup")
        .await
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .max()
        .unwrap();
    app.data(
        Method::DELETE,
        &format!("/api/v1/maintenance/{skipped}"),
        None,
        200,
    )
    .await;
    app.run_jobs().await;
    let (_, body) = app
        .send(Method::GET, "/api/maintenance/recurring", None)
        .await;
    assert_eq!(body["data"]["created"], json!([]));
    assert_eq!(windows(&app, "Nightly backup").await.len(), 3);

    // Changing the template shapes windows not made yet; deleting it keeps
    // the windows it made.
    let id = template["id"].as_i64().unwrap();
    let changed = app
        .data(
            Method::PUT,
            &format!("/api/maintenance/recurring/{id}"),
            Some(json!({"title": "Nightly backup (new)"})),
            200,
        )
        .await;
    assert_eq!(changed["title"], "Nightly backup (new)");
    assert_eq!(changed["durationMinutes"], 30, "the rest stays");
    assert_eq!(changed["timeZone"], Value::Null, "the page's zone");
    // Its own zone: 23:30 in Tokyo (UTC+9, no daylight saving) is 14:30 UTC;
    // `null` gives the page's (UTC) back.
    for (zone, at) in [
        (json!("Asia/Tokyo"), "T14:30:00.000Z"),
        (Value::Null, "T23:30:00.000Z"),
    ] {
        let moved = app
            .data(
                Method::PUT,
                &format!("/api/maintenance/recurring/{id}"),
                Some(json!({ "timeZone": zone })),
                200,
            )
            .await;
        assert_eq!(moved["timeZone"], zone);
        let next = moved["upcoming"].as_array().expect("upcoming");
        assert!(
            !next.is_empty()
                && next
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| t.ends_with(at))),
            "{moved}"
        );
    }
    app.data(
        Method::DELETE,
        &format!("/api/maintenance/recurring/{id}"),
        None,
        200,
    )
    .await;
    let (status, _) = app
        .send(
            Method::GET,
            &format!("/api/maintenance/recurring/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(windows(&app, "Nightly backup").await.len(), 3);
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

async fn bad_recurring_templates_are_refused(b: Backend) {
    let app = TestApp::spawn(b).await;
    let page = app.page("acme").await;
    let other = app.page("other").await;
    let other_comp = app.component(&other, "Database").await;
    let good = json!({"statusPageId": page, "title": "Patching", "rrule": "FREQ=WEEKLY;BYDAY=SU",
        "firstStart": "2026-12-06T02:00", "durationMinutes": 60});
    let with = |k: &str, v: Value| {
        let mut g = good.clone();
        g[k] = v;
        g
    };
    let cases = [
        (with("rrule", json!("FREQ=HOURLY")), "rrule"),
        (with("rrule", json!("every sunday")), "rrule"),
        // Found by `cargo fuzz` (fuzz/fuzz_targets/rrule.rs): the rrule
        // crate slices inside a multi-byte character and panics.
        (with("rrule", json!("\u{76a}\u{4e1}H")), "rrule"),
        (with("rrule", json!("FREQ=WEEKLY;BYDAY=S\u{00dc}")), "rrule"),
        (with("rrule", json!("FREQ=DAILY;COUNT=x")), "rrule"),
        (
            with("rrule", json!("FREQ=DAILY;UNTIL=20200101T000000Z")),
            "rrule",
        ),
        (with("firstStart", json!("next sunday")), "firstStart"),
        (with("durationMinutes", json!(0)), "durationMinutes"),
        (with("durationMinutes", json!(20_000)), "durationMinutes"),
        (with("horizonDays", json!(0)), "horizonDays"),
        (with("horizonDays", json!(400)), "horizonDays"),
        (with("title", json!("")), "title"),
        (with("timeZone", json!("Mars/Olympus_Mons")), "timeZone"),
        (with("timeZone", json!("")), "timeZone"),
        // A name jiff knows and rrule's zone database does not (found by
        // the contract probe: such a rule made no windows).
        (with("timeZone", json!("Factory")), "timeZone"),
        (with("statusPageId", json!(999_999)), "statusPageId"),
        (with("componentIds", json!([other_comp])), "componentIds"),
        (with("colour", json!("red")), "colour"),
        (json!({"statusPageId": page}), "title"),
    ];
    for (body, field) in cases {
        let (status, answer) = app
            .send(
                Method::POST,
                "/api/maintenance/recurring",
                Some(body.clone()),
            )
            .await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert!(
            answer["errors"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["field"] == field),
            "{body}: {answer}"
        );
    }
    let listed = app
        .data(Method::GET, "/api/maintenance/recurring", None, 200)
        .await;
    assert_eq!(listed["templates"], json!([]), "nothing stored");
    assert_eq!(
        app.data(Method::GET, "/api/v1/maintenance", None, 200)
            .await,
        json!([])
    );
    let (status, _) = app
        .send(
            Method::PUT,
            "/api/maintenance/recurring/77",
            Some(json!({"title": "x"})),
        )
        .await;
    assert_eq!(status, 404);
}

/// With German as the language of public pages, what subscribers and
/// channels are told is German too.
async fn messages_speak_the_language_of_the_pages(b: Backend) {
    let rx = Receiver::start().await;
    let mut app = TestApp::spawn(b).await;
    app.data(
        Method::PUT,
        "/api/settings",
        Some(json!({"defaultLanguage": "de"})),
        200,
    )
    .await;
    let page = app.page("acme").await;
    let comp = app.component(&page, "API").await;
    app.data(
        Method::POST,
        "/api/subscribers",
        Some(
            json!({"statusPageId": page, "kind": "webhook", "target": format!("{}/sub", rx.base)}),
        ),
        201,
    )
    .await;
    let mut seen = 0;
    app.data(
        Method::POST,
        "/api/v1/incidents",
        Some(json!({"title": "Ausfall", "statusPageId": page, "message": "Wir prüfen das."})),
        201,
    )
    .await;
    app.data(
        Method::PATCH,
        &format!("/api/v1/components/{comp}/status"),
        Some(json!({"status": "major_outage"})),
        200,
    )
    .await;
    app.data(
        Method::POST,
        "/api/v1/maintenance",
        Some(json!({"title": "Datenbank", "statusPageId": page,
            "scheduledStartTime": at(&app, 48 * HOUR), "scheduledEndTime": at(&app, 49 * HOUR)})),
        201,
    )
    .await;
    let mut titles: Vec<String> = round(&app, &rx, &mut seen)
        .await
        .into_iter()
        .map(|(_, _, t)| t)
        .collect();
    titles.sort();
    assert_eq!(
        titles,
        [
            "API: Schwerer Ausfall",
            "Geplante Wartung: Datenbank",
            "Neuer Vorfall: Ausfall"
        ]
    );
    app.advance(24 * HOUR + Duration::from_secs(60));
    let reminder: Vec<String> = round(&app, &rx, &mut seen)
        .await
        .into_iter()
        .map(|(_, _, t)| t)
        .collect();
    assert_eq!(reminder, ["Wartung in 24 Stunden: Datenbank"]);
}
