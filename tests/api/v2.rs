use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::json;

on_both_backends!(v2_routes_mirror_v1, v2_status_and_metrics);

async fn v2_routes_mirror_v1(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s.component(p, "API").await;
    let r = s
        .post(
            "/api/v2/incidents",
            json!({"title": "Down", "statusPageId": p, "impact": "major", "message": "Looking", "componentIds": [c]}),
        )
        .await;
    let inc = r.data(201);
    let id = inc["id"].as_i64().unwrap();
    assert_eq!(
        s.get(&format!("/api/v1/incidents/{id}")).await.data(200),
        inc,
        "the same incident, the same shape"
    );
    let patched = s
        .patch(
            &format!("/api/v2/incidents/{id}"),
            json!({"status": "resolved", "message": "Fixed"}),
        )
        .await
        .data(200);
    assert_eq!(patched["status"], "resolved");
    assert!(patched["resolvedAt"].is_string());
    let m = s
        .post("/api/v2/maintenance", json!({"title": "DB", "statusPageId": p, "scheduledStartTime": "2030-01-01T00:00:00.000Z", "scheduledEndTime": "2030-01-01T01:00:00.000Z"}))
        .await
        .data(201);
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{}", m["id"]))
            .await
            .data(200),
        m
    );
    assert_eq!(
        s.get("/api/v2/components").await.data(200),
        s.get("/api/v1/components").await.data(200)
    );
    assert_eq!(
        s.get(&format!("/api/v2/components?statusPageId={p}"))
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Same keys, scopes and errors.
    s.send(Method::GET, "/api/v2/components", None, None)
        .await
        .problem(401);
    let reader = s.db.create_key("read");
    s.send(
        Method::POST,
        "/api/v2/incidents",
        Some(&reader),
        Some(json!({"title": "x", "statusPageId": p})),
    )
    .await
    .problem(403);
    s.post("/api/v2/incidents", json!({"statusPageId": p}))
        .await
        .invalid_fields(&["title"]);
    s.post("/api/v2/maintenance", json!({"title": "x", "statusPageId": p, "scheduledStartTime": "2030-01-01T01:00:00.000Z", "scheduledEndTime": "2030-01-01T00:00:00.000Z"})).await.invalid_fields(&["scheduledEndTime"]);
    s.patch("/api/v2/incidents/9999", json!({"status": "resolved"}))
        .await
        .problem(404);
    s.send(Method::DELETE, "/api/v2/incidents/1", Some(&s.key), None)
        .await
        .problem(405);
}

async fn v2_status_and_metrics(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let down = s.component(p1, "Down").await;
    let fine = s.component(p1, "Fine").await;
    s.component(p2, "Other").await;
    s.patch(
        &format!("/api/v1/components/{down}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);

    let st = s.get("/api/v2/status").await.data(200);
    assert_eq!(st.as_array().unwrap().len(), 2);
    assert_eq!(st[0]["statusPageId"], p1);
    assert_eq!(st[0]["status"], "major_outage");
    assert_eq!(st[0]["statusLabel"], "Major System Outage");
    assert_eq!(st[0]["components"].as_array().unwrap().len(), 2);
    assert_eq!(st[1]["statusLabel"], "All Systems Operational");
    let only = s
        .get(&format!("/api/v2/status?statusPageId={p2}"))
        .await
        .data(200);
    assert_eq!(only.as_array().unwrap().len(), 1);
    s.get("/api/v2/status?statusPageId=424242")
        .await
        .problem(404);

    // Metrics come from status history: "down" has spent its last hour in a major outage.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    s.db.execute(&format!(
        "UPDATE component_status_history SET changed_at = {} WHERE component_id = {fine}",
        now - 7_200_000
    ))
    .await;
    s.db.execute(&format!(
        "DELETE FROM component_status_history WHERE component_id = {down}"
    ))
    .await;
    s.db.execute(&format!("INSERT INTO component_status_history (component_id, status, changed_at) VALUES ({down}, 'operational', {}), ({down}, 'major_outage', {})", now - 7_200_000, now - 3_600_000)).await;
    let m = s
        .get(&format!("/api/v2/metrics?statusPageId={p1}&days=2"))
        .await
        .data(200);
    let by_name = |n: &str| {
        m.as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap()
            .clone()
    };
    let d = by_name("Down");
    assert_eq!(d["days"], 2);
    assert_eq!(d["status"], "major_outage");
    assert_eq!(d["latencyMs"], json!(null));
    let uptime = d["uptime"].as_f64().unwrap();
    assert!(
        uptime > 40.0 && uptime < 60.0,
        "about half of the last two hours were down: {uptime}"
    );
    assert!(d["outageMinutes"].as_i64().unwrap() >= 59);
    assert_eq!(by_name("Fine")["uptime"], 100.0);
    assert_eq!(
        s.get("/api/v2/metrics")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        3,
        "all pages by default"
    );
    s.get("/api/v2/metrics?days=0")
        .await
        .invalid_fields(&["days"]);
    s.get("/api/v2/metrics?days=400")
        .await
        .invalid_fields(&["days"]);
}
