//! Several instances on one PostgreSQL database (the scale-out setup).

use crate::status_html::{next_event, next_sse};
use crate::support::{Backend, Running, Server, at_offset_ms, spawn};
use serde_json::json;
use std::time::{Duration, Instant};

/// Instance A (a test server on a fresh PostgreSQL database) and the base
/// URL of instance B on the same database.
async fn two_instances() -> (Server, String, Running) {
    let a = Server::start(Backend::Postgres).await;
    let (child, b_base) = spawn(&a.db, &[]);
    (a, b_base, Running(child))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn instances_share_writes_snapshots_and_the_scheduler() {
    let (a, b_base, _b) = two_instances().await;
    let client = reqwest::Client::new();
    let p = a.page("shared").await;
    let c = a.component(p, "API").await;
    let read_b = async || -> serde_json::Value {
        client
            .get(format!("{b_base}/api/public/status/shared"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };
    assert_eq!(read_b().await["components"][0]["status"], "operational");

    // B has the page in memory now; a write through A must reach it.
    a.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let start = Instant::now();
    let mut seen = false;
    while start.elapsed() < Duration::from_secs(3) {
        if read_b().await["components"][0]["status"] == "major_outage" {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen, "instance B saw A's write within 3 s");
    eprintln!("instance B saw the change after {:?}", start.elapsed());

    // A feature switched off through A is off on B too (B has the page's
    // snapshot in memory; the change names no page).
    let feed_b = async || {
        client
            .get(format!("{b_base}/api/feed/rss?page=shared"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(feed_b().await, 200);
    let admin = a.db.create_key("admin");
    let r = a
        .send(
            reqwest::Method::PUT,
            "/api/features",
            Some(&admin),
            Some(json!({"feeds": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let start = Instant::now();
    let mut gone = false;
    while start.elapsed() < Duration::from_secs(3) {
        if feed_b().await == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "instance B turned feeds off within 3 s");

    // Both instances run the scheduler; the window moves once.
    let m = a
        .post(
            "/api/v1/maintenance",
            json!({"title": "w", "statusPageId": p, "scheduledStartTime": at_offset_ms(300),
               "scheduledEndTime": at_offset_ms(1_300), "autoStart": true, "componentIds": [c]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let done = a
        .eventually(Duration::from_secs(8), || async {
            a.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["status"] == "completed"
        })
        .await;
    assert!(done);
    let updates = a.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["updates"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(updates, 2, "started once and completed once");
    assert_eq!(
        a.component_status(c).await,
        "major_outage",
        "its status before the window came back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn live_events_carry_writes_made_on_another_instance() {
    let (a, b_base, _b) = two_instances().await;
    let p = a.page("shared").await;
    let c = a.component(p, "API").await;
    // A visitor's page on B listens; the operator writes through A.
    let r = reqwest::get(format!("{b_base}/api/public/status/shared/events"))
        .await
        .unwrap();
    let mut stream = futures_util::StreamExt::boxed(r.bytes_stream());
    let mut buf = String::new();
    let first = next_event(
        &mut stream,
        &mut buf,
        Instant::now() + Duration::from_secs(5),
    )
    .await
    .expect("first event");
    assert_eq!(first["status"], "operational");
    let changed = Instant::now();
    a.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    // B reads A's change event from the outbox row A's notification names.
    // Earlier events may come first: B's listener connecting counts as
    // "anything may have changed", and the notification of A's earlier
    // component creation may reach B after its stream opened.
    let change = loop {
        let (name, data) = next_sse(&mut stream, &mut buf, changed + Duration::from_secs(1))
            .await
            .expect("B's stream reports A's write within 1 s");
        if name == "change" && data["kind"] == "component.status_changed" {
            break data;
        }
    };
    assert_eq!(
        (&change["component"], &change["from"]),
        (&json!(c), &json!("operational"))
    );
    let next = next_event(&mut stream, &mut buf, changed + Duration::from_secs(1)).await;
    assert_eq!(
        next.expect("B's stream reports A's write within 1 s")["status"],
        "major_outage"
    );
}

/// Three instances on one database race for the same due checks: each
/// monitor's first check runs once, on one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn instances_run_each_monitor_check_once() {
    let allow = [("UPSTATE_MONITOR_ALLOW", "127.0.0.1")];
    let a = Server::start_with(Backend::Postgres, &allow).await;
    let (b, _) = spawn(&a.db, &allow);
    let (c, _) = spawn(&a.db, &allow);
    let (_b, _c) = (Running(b), Running(c));
    let rx = crate::receiver::Receiver::start().await;
    let p = a.page("shared").await;
    for n in 0..12 {
        let comp = a.component(p, &format!("Service {n}")).await;
        a.post(
            "/api/monitors",
            json!({"componentId": comp, "target": format!("{}/m{n}", rx.base), "intervalSeconds": 60}),
        )
        .await
        .data(201);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while rx.got().len() < 12 {
        assert!(Instant::now() < deadline, "checks ran: {}", rx.got().len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Give a second runner every chance to repeat a check.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut paths: Vec<String> = rx.got().into_iter().map(|g| g.path).collect();
    paths.sort();
    let mut want: Vec<String> = (0..12).map(|n| format!("/m{n}")).collect();
    want.sort();
    assert_eq!(paths, want, "each check once");
    let checks = a.db.integers("SELECT COUNT(*) FROM monitor_checks").await;
    assert_eq!(checks, [12]);
}
