//! Background work as rows (docs/jobs.md): an auto-start window has exactly
//! one job, which follows every change of the window in the same
//! transaction, and a job whose lease runs out (a killed instance) is taken
//! over by another worker.

use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::json;
use std::time::Duration;
use upstate_core::Timestamp;

on_both_backends!(
    a_window_has_one_job_that_follows_it,
    a_job_whose_lease_runs_out_is_taken_over,
    a_window_moves_when_the_test_clock_reaches_it
);

/// The run times of a window's job (none, or exactly one).
async fn job_of(s: &Server, id: i64) -> Vec<i64> {
    s.db.integers(&format!(
        "SELECT run_at FROM jobs WHERE dedupe_key = 'maintenance:{id}'"
    ))
    .await
}

fn ms(rfc3339: &str) -> i64 {
    let t = time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339)
        .unwrap();
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

async fn a_window_has_one_job_that_follows_it(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let (start, end) = (at_offset_ms(3_600_000), at_offset_ms(7_200_000));
    let body = json!({"title": "DB", "statusPageId": p, "scheduledStartTime": start,
                      "scheduledEndTime": end, "autoStart": true});
    let id = s.post("/api/v1/maintenance", body).await.data(201)["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        job_of(&s, id).await,
        [ms(&start)],
        "the job waits for the start"
    );

    let later = at_offset_ms(5_400_000);
    let path = format!("/api/v1/maintenance/{id}");
    s.patch(&path, json!({"scheduledStartTime": later}))
        .await
        .data(200);
    assert_eq!(
        job_of(&s, id).await,
        [ms(&later)],
        "moving the window moves its job"
    );
    s.patch(&path, json!({"autoStart": false})).await.data(200);
    assert_eq!(
        job_of(&s, id).await,
        Vec::<i64>::new(),
        "a manual window has none"
    );
    s.patch(&path, json!({"autoStart": true})).await.data(200);
    s.post_empty(&format!("{path}/start")).await.data(200);
    assert_eq!(
        job_of(&s, id).await,
        [ms(&end)],
        "started by hand, it waits for the end"
    );
    s.post_empty(&format!("{path}/complete")).await.data(200);
    assert_eq!(
        job_of(&s, id).await,
        Vec::<i64>::new(),
        "a finished window has none"
    );

    let other = json!({"title": "Cache", "statusPageId": p, "scheduledStartTime": start,
                       "scheduledEndTime": end, "autoStart": true});
    let other = s.post("/api/v1/maintenance", other).await.data(201)["id"]
        .as_i64()
        .unwrap();
    s.delete(&format!("/api/v1/maintenance/{other}"))
        .await
        .data(200);
    assert_eq!(
        job_of(&s, other).await,
        Vec::<i64>::new(),
        "deleted with its window"
    );
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM jobs WHERE kind = 'maintenance'")
            .await,
        [0],
        "no window job is left (fan-outs of notifications come and go)"
    );
}

async fn a_job_whose_lease_runs_out_is_taken_over(b: Backend) {
    use crate::harness::TestApp;
    use reqwest::Method;
    let mut app = TestApp::spawn(b).await;
    let p = app.page("p").await;
    let start = app.now().millis() + 1_000;
    let body = json!({"title": "DB", "statusPageId": p,
                      "scheduledStartTime": Timestamp::from_millis(start),
                      "scheduledEndTime": Timestamp::from_millis(start + 3_600_000),
                      "autoStart": true});
    let id = app
        .data(Method::POST, "/api/v1/maintenance", Some(body), 201)
        .await["id"]
        .as_i64()
        .unwrap();
    // As if another instance had leased the job and died: its lease holds
    // for 4 s, and nobody may run the job before then.
    let until = app.now().millis() + 4_000;
    app.test_db
        .execute(&format!(
            "UPDATE jobs SET locked_until = {until}, attempts = 1 WHERE dedupe_key = 'maintenance:{id}'"
        ))
        .await;
    let status = async |app: &TestApp| {
        app.data(Method::GET, &format!("/api/v1/maintenance/{id}"), None, 200)
            .await["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // (The fan-out of "maintenance scheduled" is free to run meanwhile.)
    app.advance(Duration::from_millis(2_500));
    app.run_jobs().await;
    assert_eq!(
        status(&app).await,
        "scheduled",
        "the dead lease still holds"
    );
    app.advance(Duration::from_millis(1_500));
    assert!(app.run_jobs().await >= 1);
    assert_eq!(
        status(&app).await,
        "in_progress",
        "taken over once the lease ran out"
    );
    assert_eq!(
        app.test_db
            .integers(&format!(
                "SELECT run_at FROM jobs WHERE dedupe_key = 'maintenance:{id}'"
            ))
            .await,
        [start + 3_600_000],
        "the job now waits for the end"
    );
    app.settle().await;
}

/// The in-process harness runs an auto-start window through its life in no
/// time: nothing moves until the test's clock reaches the window's times.
async fn a_window_moves_when_the_test_clock_reaches_it(b: Backend) {
    use crate::harness::TestApp;
    use reqwest::Method;
    let mut app = TestApp::spawn(b).await;
    let p = app
        .data(
            Method::POST,
            "/api/v1/statuspages",
            Some(json!({"name": "P", "slug": "p"})),
            201,
        )
        .await["id"]
        .clone();
    let c = app
        .data(
            Method::POST,
            "/api/v1/components",
            Some(json!({"name": "DB", "statusPageId": p})),
            201,
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let body = json!({"title": "Upgrade", "statusPageId": p, "componentIds": [c], "autoStart": true,
        "scheduledStartTime": at_offset_ms(3_600_000), "scheduledEndTime": at_offset_ms(7_200_000)});
    let m = app
        .data(Method::POST, "/api/v1/maintenance", Some(body), 201)
        .await["id"]
        .as_i64()
        .unwrap();

    // Only the fan-out of "maintenance scheduled" to notification channels
    // (and perhaps the hourly prune) is due: the window does not move yet.
    app.run_jobs().await;
    let key = format!("maintenance:{m}");
    assert!(
        matches!(
            upstate_store::jobs::by_key(&app.db, &key).await,
            Ok(Some(_))
        ),
        "the window's job waits for its start"
    );
    assert_eq!(
        states(&app, m, c).await,
        (json!("scheduled"), json!("operational"))
    );

    app.advance(Duration::from_secs(3_601));
    assert!(app.run_jobs().await >= 1, "the start came");
    assert_eq!(
        states(&app, m, c).await,
        (json!("in_progress"), json!("maintenance"))
    );
    app.run_jobs().await;
    assert_eq!(
        states(&app, m, c).await,
        (json!("in_progress"), json!("maintenance")),
        "the end has not come"
    );

    app.advance(Duration::from_secs(3_600));
    assert!(app.run_jobs().await >= 1, "the end came");
    assert_eq!(
        states(&app, m, c).await,
        (json!("completed"), json!("operational"))
    );
    let job = upstate_store::jobs::by_key(&app.db, &key).await;
    assert!(
        matches!(job, Ok(None)),
        "a finished window has no job left: {job:?}"
    );
    let (_, told) = app.settle().await;
    assert_eq!(
        told, 0,
        "nobody subscribed: the fan-outs ran and told no one"
    );
}

/// A window's status and its component's.
async fn states(
    app: &crate::harness::TestApp,
    m: i64,
    c: i64,
) -> (serde_json::Value, serde_json::Value) {
    use reqwest::Method;
    let window = app
        .data(Method::GET, &format!("/api/v1/maintenance/{m}"), None, 200)
        .await;
    let comp = app
        .data(Method::GET, &format!("/api/v1/components/{c}"), None, 200)
        .await;
    (window["status"].clone(), comp["status"].clone())
}
