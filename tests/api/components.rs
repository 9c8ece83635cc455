use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use serde_json::json;

on_both_backends!(
    component_lifecycle_and_order,
    component_status_route,
    component_filters,
    component_references,
    groups_lifecycle,
    component_details
);

async fn component_lifecycle_and_order(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let r = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "description": "REST", "statusPageId": p, "status": "degraded"}),
        )
        .await;
    let api = r.data(201);
    let id = api["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/components/{id}").as_str())
    );
    assert_eq!(
        api,
        json!({"id": id, "name": "API", "description": "REST", "status": "degraded", "order": 0, "statusPageId": p, "groupId": null})
    );
    let web = s
        .post(
            "/api/v1/components",
            json!({"name": "Web", "statusPageId": p}),
        )
        .await
        .data(201);
    assert_eq!(web["order"], 1, "new components go last");
    assert_eq!(web["status"], "operational", "default status");
    assert_eq!(web["description"], "");

    let got = s.get(&format!("/api/v1/components/{id}")).await.data(200);
    assert_eq!(got, api);

    let patched = s
        .patch(
            &format!("/api/v1/components/{id}"),
            json!({"name": "Public API", "description": "v2", "order": 5}),
        )
        .await
        .data(200);
    assert_eq!(patched["name"], "Public API");
    assert_eq!(patched["description"], "v2");
    assert_eq!(patched["order"], 5);
    assert_eq!(patched["status"], "degraded", "unnamed fields stay");
    let listed = s
        .get(&format!("/api/v1/components?statusPageId={p}"))
        .await
        .data(200);
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Web", "Public API"], "listed by order");

    let del = s.delete(&format!("/api/v1/components/{id}")).await;
    assert_eq!(del.status, 200);
    assert!(del.body["message"].as_str().unwrap().contains("deleted"));
    s.get(&format!("/api/v1/components/{id}"))
        .await
        .problem(404);
    s.delete(&format!("/api/v1/components/{id}"))
        .await
        .problem(404);
    s.patch(
        &format!("/api/v1/components/{id}/status"),
        json!({"status": "operational"}),
    )
    .await
    .problem(404);
    s.get("/api/v1/components/abc").await.problem(404);
}

async fn component_status_route(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s.component(p, "API").await;
    for status in [
        "degraded",
        "partial_outage",
        "major_outage",
        "maintenance",
        "operational",
    ] {
        let r = s
            .patch(
                &format!("/api/v1/components/{c}/status"),
                json!({"status": status}),
            )
            .await
            .data(200);
        assert_eq!(r["status"], status);
        assert_eq!(s.component_status(c).await, status);
    }
    // PATCH of the component itself may carry a status too.
    assert_eq!(
        s.patch(
            &format!("/api/v1/components/{c}"),
            json!({"status": "major_outage"})
        )
        .await
        .data(200)["status"],
        "major_outage"
    );
    let before = s.snapshot().await;
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "down"}),
    )
    .await
    .invalid_fields(&["status"]);
    s.patch(&format!("/api/v1/components/{c}/status"), json!({}))
        .await
        .invalid_fields(&["status"]);
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": null}),
    )
    .await
    .invalid_fields(&["status"]);
    s.patch(
        &format!("/api/v1/components/{c}"),
        json!({"status": "broken"}),
    )
    .await
    .invalid_fields(&["status"]);
    assert_eq!(s.snapshot().await, before);
}

async fn component_filters(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let g = s.group(p1, "G").await;
    s.post(
        "/api/v1/components",
        json!({"name": "A", "statusPageId": p1, "groupId": g}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/components",
        json!({"name": "B", "statusPageId": p1}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/components",
        json!({"name": "C", "statusPageId": p2}),
    )
    .await
    .data(201);
    let names = |v: serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(s.get("/api/v1/components").await.data(200)),
        ["A", "B", "C"]
    );
    assert_eq!(
        names(
            s.get(&format!("/api/v1/components?statusPageId={p1}"))
                .await
                .data(200)
        ),
        ["A", "B"]
    );
    assert_eq!(
        names(
            s.get(&format!("/api/v1/components?statusPageId={p2}"))
                .await
                .data(200)
        ),
        ["C"]
    );
    assert_eq!(
        names(
            s.get(&format!("/api/v1/components?groupId={g}"))
                .await
                .data(200)
        ),
        ["A"]
    );
    assert_eq!(
        names(
            s.get(&format!("/api/v1/components?statusPageId={p2}&groupId={g}"))
                .await
                .data(200)
        ),
        Vec::<String>::new()
    );
    s.get("/api/v1/components?statusPageId=abc")
        .await
        .invalid_fields(&["statusPageId"]);
    s.get("/api/v1/components?groupId=-3")
        .await
        .invalid_fields(&["groupId"]);
}

async fn component_references(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let g2 = s.group(p2, "Elsewhere").await;
    let c = s.component(p1, "A").await;
    let before = s.snapshot().await;
    s.post(
        "/api/v1/components",
        json!({"name": "X", "statusPageId": 9999}),
    )
    .await
    .invalid_fields(&["statusPageId"]);
    s.post("/api/v1/components", json!({"name": "X"}))
        .await
        .invalid_fields(&["statusPageId"]);
    s.post(
        "/api/v1/components",
        json!({"name": "X", "statusPageId": p1, "groupId": g2}),
    )
    .await
    .invalid_fields(&["groupId"]);
    s.post(
        "/api/v1/components",
        json!({"name": "X", "statusPageId": p1, "groupId": 4242}),
    )
    .await
    .invalid_fields(&["groupId"]);
    s.post(
        "/api/v1/components",
        json!({"statusPageId": p1, "status": "sideways"}),
    )
    .await
    .invalid_fields(&["status"]);
    s.post(
        "/api/v1/components",
        json!({"name": "", "statusPageId": p1}),
    )
    .await
    .invalid_fields(&["name"]);
    s.patch(&format!("/api/v1/components/{c}"), json!({"groupId": g2}))
        .await
        .invalid_fields(&["groupId"]);
    s.patch(&format!("/api/v1/components/{c}"), json!({}))
        .await
        .invalid_fields(&["body"]);
    s.patch(&format!("/api/v1/components/{c}"), json!({"order": -1}))
        .await
        .invalid_fields(&["order"]);
    assert_eq!(s.snapshot().await, before);
}

async fn groups_lifecycle(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let r = s
        .post(
            "/api/v1/component-groups",
            json!({"name": "Core", "statusPageId": p}),
        )
        .await;
    let core = r.data(201);
    let g1 = core["id"].as_i64().unwrap();
    assert_eq!(
        core,
        json!({"id": g1, "name": "Core", "statusPageId": p, "order": 0})
    );
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/component-groups/{g1}").as_str())
    );
    let g2 = s
        .post(
            "/api/v1/component-groups",
            json!({"name": "Edge", "statusPageId": p}),
        )
        .await
        .data(201);
    assert_eq!(g2["order"], 1, "new groups go last");
    let g2 = g2["id"].as_i64().unwrap();
    let other = s.page("other").await;
    s.group(other, "Elsewhere").await;

    assert_eq!(
        s.get("/api/v1/component-groups")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        s.get(&format!("/api/v1/component-groups?statusPageId={p}"))
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        s.get(&format!("/api/v1/component-groups/{g1}"))
            .await
            .data(200),
        core
    );

    let renamed = s
        .patch(
            &format!("/api/v1/component-groups/{g1}"),
            json!({"name": "Platform", "order": 7}),
        )
        .await
        .data(200);
    assert_eq!(renamed["name"], "Platform");
    assert_eq!(renamed["order"], 7);
    let names: Vec<String> = s
        .get(&format!("/api/v1/component-groups?statusPageId={p}"))
        .await
        .data(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["Edge", "Platform"], "listed by order");

    // Deleting a group leaves its components on the page, ungrouped.
    let c = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "statusPageId": p, "groupId": g1}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.delete(&format!("/api/v1/component-groups/{g1}"))
        .await
        .data(200);
    s.get(&format!("/api/v1/component-groups/{g1}"))
        .await
        .problem(404);
    let comp = s.get(&format!("/api/v1/components/{c}")).await.data(200);
    assert_eq!(comp["groupId"], json!(null));
    assert_eq!(comp["statusPageId"], p);

    let before = s.snapshot().await;
    s.post("/api/v1/component-groups", json!({"statusPageId": p}))
        .await
        .invalid_fields(&["name"]);
    s.post(
        "/api/v1/component-groups",
        json!({"name": "X", "statusPageId": 777}),
    )
    .await
    .invalid_fields(&["statusPageId"]);
    s.patch(
        &format!("/api/v1/component-groups/{g2}"),
        json!({"name": ""}),
    )
    .await
    .invalid_fields(&["name"]);
    s.patch(&format!("/api/v1/component-groups/{g2}"), json!({}))
        .await
        .invalid_fields(&["body"]);
    s.patch("/api/v1/component-groups/999", json!({"name": "x"}))
        .await
        .problem(404);
    s.delete("/api/v1/component-groups/999").await.problem(404);
    assert_eq!(s.snapshot().await, before);
}

/// `GET /api/components/{id}/details`: the component, its page, uptime by
/// period, latest changes, what affects it now.
async fn component_details(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let other = s.component(page, "Website").await;
    s.post(
        "/api/v1/incidents",
        json!({"title": "API down", "statusPageId": page,
               "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
    )
    .await
    .data(201);
    let window = json!({"title": "Upgrade", "statusPageId": page, "componentIds": [api],
        "scheduledStartTime": crate::support::at_offset_ms(3_600_000),
        "scheduledEndTime": crate::support::at_offset_ms(7_200_000)});
    s.post("/api/v1/maintenance", window).await.data(201);
    // A minute of the outage passes on the server's clock.
    s.advance(std::time::Duration::from_secs(60));

    let (status, body, _) = vi
        .send(
            reqwest::Method::GET,
            &format!("/api/components/{api}/details"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let d = &body["data"];
    assert_eq!(d["component"]["name"], "API");
    assert_eq!(d["statusPage"]["slug"], "acme");
    assert_eq!(d["recentChanges"][0]["status"], "major_outage");
    assert_eq!(d["recentChanges"][1]["status"], "operational");
    let day = d["uptime"]["last24h"]
        .as_f64()
        .expect("a figure for the last day");
    assert!(
        (0.0..100.0).contains(&day),
        "down most of its short life: {day}"
    );
    assert_eq!(
        d["uptime"]["last90d"], d["uptime"]["last24h"],
        "it is younger than a day"
    );
    assert_eq!(d["openIncidents"][0]["title"], "API down");
    assert_eq!(d["maintenance"][0]["title"], "Upgrade");
    let (_, quiet, _) = vi
        .send(
            reqwest::Method::GET,
            &format!("/api/components/{other}/details"),
            None,
        )
        .await;
    assert_eq!(quiet["data"]["uptime"]["last24h"], 100.0);
    assert_eq!(quiet["data"]["openIncidents"], json!([]));
    assert_eq!(
        s.get(&format!("/api/components/{api}/details"))
            .await
            .status,
        200,
        "keys may read it too"
    );
    s.get("/api/components/999999/details").await.problem(404);
    let anonymous = reqwest::get(format!("{}/api/components/{api}/details", s.base))
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}
