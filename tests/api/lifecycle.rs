use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::json;
use std::io::{Read, Write};
use std::time::Duration;

on_both_backends!(
    missed_windows_are_caught_up_after_restart,
    graceful_shutdown_finishes_requests_in_flight
);

async fn missed_windows_are_caught_up_after_restart(b: Backend) {
    let mut s = Server::process(b).await;
    let p = s.page("p").await;
    let ended = s.component(p, "ended").await;
    let ongoing = s.component(p, "ongoing").await;
    let body = |c: i64, end_ms: i64| {
        json!({"title": "w", "statusPageId": p, "scheduledStartTime": at_offset_ms(1_000), "scheduledEndTime": at_offset_ms(end_ms),
               "autoStart": true, "componentIds": [c]})
    };
    let whole = s
        .post("/api/v1/maintenance", body(ended, 2_000))
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let half = s
        .post("/api/v1/maintenance", body(ongoing, 3_600_000))
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    assert!(s.stop(), "clean exit on SIGTERM");
    // Both windows' start (and the first one's end) pass while nothing runs.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    s.restart(&[]);
    let caught_up = s
        .eventually(Duration::from_secs(5), || async {
            s.get(&format!("/api/v1/maintenance/{whole}"))
                .await
                .data(200)["status"]
                == "completed"
                && s.get(&format!("/api/v1/maintenance/{half}"))
                    .await
                    .data(200)["status"]
                    == "in_progress"
        })
        .await;
    assert!(caught_up, "log: {}", s.log());
    assert_eq!(s.component_status(ended).await, "operational");
    assert_eq!(s.component_status(ongoing).await, "maintenance");
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{whole}"))
            .await
            .data(200)["updates"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn graceful_shutdown_finishes_requests_in_flight(b: Backend) {
    let mut s = Server::process(b).await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let body = serde_json::to_vec(&json!({"name": "Written during shutdown", "slug": "inflight"}))
        .unwrap();
    let (head, tail) = body.split_at(10);
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        conn,
        "POST /api/v1/statuspages HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        s.key,
        body.len()
    )
    .unwrap();
    conn.write_all(head).unwrap();
    conn.flush().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.signal_term();
    // The server stops accepting (a new connection is refused) but still
    // owes this request its answer.
    assert!(
        s.eventually(Duration::from_secs(10), || async {
            std::net::TcpStream::connect(&addr).is_err()
        })
        .await,
        "still accepting after SIGTERM"
    );
    conn.write_all(tail).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut response = String::new();
    let _ = conn.read_to_string(&mut response);
    assert!(
        response.starts_with("HTTP/1.1 201"),
        "in-flight request completed: {response}"
    );
    assert!(s.wait_exit(), "exited cleanly");
    // Nothing half-written: the page is there after a restart.
    s.restart(&[]);
    let pages = s.get("/api/v1/statuspages").await.data(200);
    assert_eq!(pages[0]["slug"], "inflight");
}
