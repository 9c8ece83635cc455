//! The outbox: every change of what a page shows writes its change event in
//! the same transaction as the change and its audit event; a refused write
//! leaves none.

use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::json;

on_both_backends!(each_change_writes_its_events_once);

async fn kinds(s: &Server) -> Vec<String> {
    s.db.texts("SELECT kind FROM outbox ORDER BY id").await
}

async fn each_change_writes_its_events_once(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let c = s.component(p, "API").await;
    let body = json!({"title": "Slow", "statusPageId": p, "status": "investigating",
                      "impact": "minor", "componentIds": [c], "message": "Looking"});
    let incident = s.post("/api/v1/incidents", body).await.data(201)["id"]
        .as_i64()
        .unwrap();
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "degraded"}),
    )
    .await
    .data(200);
    s.post(
        &format!("/api/v1/incidents/{incident}/resolve"),
        json!({"message": "Fixed"}),
    )
    .await
    .data(200);
    let window = json!({"title": "DB", "statusPageId": p, "componentIds": [c],
        "scheduledStartTime": at_offset_ms(3_600_000), "scheduledEndTime": at_offset_ms(7_200_000)});
    let m = s.post("/api/v1/maintenance", window).await.data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(&format!("/api/v1/maintenance/{m}/start"), json!({}))
        .await
        .data(200);
    assert_eq!(
        kinds(&s).await,
        [
            "page.created",
            "component.created",
            "incident.created",
            "component.status_changed",
            "incident.resolved",
            "maintenance.scheduled",
            "component.status_changed",
            "maintenance.started",
        ]
    );
    let last: serde_json::Value = serde_json::from_str(
        &s.db
            .texts("SELECT payload FROM outbox ORDER BY id DESC LIMIT 1 OFFSET 1")
            .await[0],
    )
    .unwrap();
    assert_eq!(
        last,
        json!({"kind": "component.status_changed", "page": p, "component": c,
               "from": "degraded", "to": "maintenance"})
    );
    let pages =
        s.db.integers("SELECT DISTINCT status_page_id FROM outbox")
            .await;
    assert_eq!(pages, [p]);

    // A refused write (unknown component) records nothing; nor does a PATCH
    // that changes nothing but the status it already has.
    let before = kinds(&s).await.len();
    let bad = json!({"title": "X", "statusPageId": p, "status": "investigating",
                     "impact": "minor", "componentIds": [c + 1000], "message": "m"});
    s.post("/api/v1/incidents", bad).await.problem(422);
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "maintenance"}),
    )
    .await
    .data(200);
    assert_eq!(kinds(&s).await.len(), before);
}
