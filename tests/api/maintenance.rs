use crate::on_both_backends;
use crate::support::{Backend, Server, at_offset_ms};
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    maintenance_lifecycle,
    maintenance_refused_transitions,
    maintenance_restores_components,
    maintenance_overlapping_windows,
    maintenance_auto_start_and_complete,
    maintenance_filters,
    maintenance_validation,
    maintenance_patch_and_delete,
    alerting_tools_ask_whether_to_page
);

async fn window(
    s: &Server,
    page: i64,
    components: &[i64],
    start_ms: i64,
    end_ms: i64,
    auto: bool,
) -> Value {
    s.post(
        "/api/v1/maintenance",
        json!({"title": "DB upgrade", "description": "Postgres 17", "statusPageId": page,
               "scheduledStartTime": at_offset_ms(start_ms), "scheduledEndTime": at_offset_ms(end_ms),
               "autoStart": auto, "componentIds": components}),
    )
    .await
    .data(201)
}

async fn maintenance_lifecycle(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s.component(p, "DB").await;
    let r = s
        .post("/api/v1/maintenance", json!({"title": "DB upgrade", "description": "Postgres 17", "statusPageId": p,
               "scheduledStartTime": "2030-05-01T02:00:00+02:00", "scheduledEndTime": "2030-05-01T04:00:00.000Z", "componentIds": [c]}))
        .await;
    let m = r.data(201);
    let id = m["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/maintenance/{id}").as_str())
    );
    assert_eq!(m["title"], "DB upgrade");
    assert_eq!(m["description"], "Postgres 17");
    assert_eq!(m["status"], "scheduled");
    assert_eq!(m["statusPageId"], p);
    assert_eq!(
        m["scheduledStartTime"], "2030-05-01T00:00:00.000Z",
        "stored in UTC"
    );
    assert_eq!(m["scheduledEndTime"], "2030-05-01T04:00:00.000Z");
    assert_eq!(m["autoStart"], false, "default");
    assert_eq!(m["affectedComponents"], json!([c]));
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{id}")).await.data(200),
        m
    );

    let started = s
        .post_empty(&format!("/api/v1/maintenance/{id}/start"))
        .await
        .data(200);
    assert_eq!(started["status"], "in_progress");
    assert_eq!(s.component_status(c).await, "maintenance");
    let done = s
        .post(
            &format!("/api/v1/maintenance/{id}/complete"),
            json!({"message": "Upgrade finished"}),
        )
        .await
        .data(200);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["updates"][0]["message"], "Upgrade finished");
    assert_eq!(done["updates"][0]["status"], "completed");
    assert_eq!(done["updates"][1]["status"], "in_progress");
    assert_eq!(s.component_status(c).await, "operational");

    let other = window(&s, p, &[c], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    let cancelled = s
        .post(
            &format!("/api/v1/maintenance/{other}/cancel"),
            json!({"message": "Postponed"}),
        )
        .await
        .data(200);
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["updates"][0]["message"], "Postponed");
    assert_eq!(
        s.component_status(c).await,
        "operational",
        "cancelling a scheduled window touches no component"
    );

    let third = window(&s, p, &[c], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{third}/start"))
        .await
        .data(200);
    assert_eq!(s.component_status(c).await, "maintenance");
    assert_eq!(
        s.post_empty(&format!("/api/v1/maintenance/{third}/cancel"))
            .await
            .data(200)["status"],
        "cancelled"
    );
    assert_eq!(
        s.component_status(c).await,
        "operational",
        "cancelling an ongoing window gives components back"
    );
}

async fn maintenance_refused_transitions(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s.component(p, "DB").await;
    let path =
        |id: &Value, action: &str| format!("/api/v1/maintenance/{}/{action}", id.as_i64().unwrap());

    let scheduled = window(&s, p, &[c], 60_000, 120_000, false).await["id"].clone();
    s.post_empty(&path(&scheduled, "complete"))
        .await
        .problem(409);

    let running = window(&s, p, &[c], 60_000, 120_000, false).await["id"].clone();
    s.post_empty(&path(&running, "start")).await.data(200);
    let r = s.post_empty(&path(&running, "start")).await;
    assert!(
        r.problem(409)["detail"]
            .as_str()
            .unwrap()
            .contains("in_progress")
    );

    let completed = window(&s, p, &[], 60_000, 120_000, false).await["id"].clone();
    s.post_empty(&path(&completed, "start")).await.data(200);
    s.post_empty(&path(&completed, "complete")).await.data(200);
    let cancelled = window(&s, p, &[], 60_000, 120_000, false).await["id"].clone();
    s.post_empty(&path(&cancelled, "cancel")).await.data(200);

    let before = s.snapshot().await;
    for id in [&completed, &cancelled] {
        for action in ["start", "complete", "cancel"] {
            s.post_empty(&path(id, action)).await.problem(409);
        }
    }
    s.post_empty(&path(&scheduled, "complete"))
        .await
        .problem(409);
    s.post_empty("/api/v1/maintenance/9999/start")
        .await
        .problem(404);
    assert_eq!(
        s.snapshot().await,
        before,
        "refused transitions change nothing"
    );
}

async fn maintenance_restores_components(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let degraded = s
        .post(
            "/api/v1/components",
            json!({"name": "A", "statusPageId": p, "status": "degraded"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let touched = s.component(p, "B").await;
    let m = window(&s, p, &[degraded, touched], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{m}/start"))
        .await
        .data(200);
    assert_eq!(s.component_status(degraded).await, "maintenance");
    assert_eq!(s.component_status(touched).await, "maintenance");
    // Someone changes B during the window: the window's end leaves B alone.
    s.patch(
        &format!("/api/v1/components/{touched}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    s.post_empty(&format!("/api/v1/maintenance/{m}/complete"))
        .await
        .data(200);
    assert_eq!(
        s.component_status(degraded).await,
        "degraded",
        "back to its status before the window"
    );
    assert_eq!(
        s.component_status(touched).await,
        "major_outage",
        "a change made meanwhile wins"
    );
}

async fn maintenance_overlapping_windows(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s
        .post(
            "/api/v1/components",
            json!({"name": "A", "statusPageId": p, "status": "partial_outage"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let first = window(&s, p, &[c], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    let second = window(&s, p, &[c], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{first}/start"))
        .await
        .data(200);
    s.post_empty(&format!("/api/v1/maintenance/{second}/start"))
        .await
        .data(200);
    s.post_empty(&format!("/api/v1/maintenance/{first}/complete"))
        .await
        .data(200);
    assert_eq!(
        s.component_status(c).await,
        "maintenance",
        "still covered by the second window"
    );
    s.post_empty(&format!("/api/v1/maintenance/{second}/complete"))
        .await
        .data(200);
    assert_eq!(
        s.component_status(c).await,
        "partial_outage",
        "back to what it was before both"
    );
}

async fn maintenance_auto_start_and_complete(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c = s.component(p, "DB").await;
    let manual = s.component(p, "Manual").await;
    let auto = window(&s, p, &[c], 1_500, 3_500, true).await["id"]
        .as_i64()
        .unwrap();
    // Without autoStart, a window whose time has come stays scheduled.
    let not_auto = window(&s, p, &[manual], -10_000, 60_000, false).await["id"]
        .as_i64()
        .unwrap();
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{auto}"))
            .await
            .data(200)["status"],
        "scheduled"
    );

    let started = s
        .eventually(Duration::from_secs(6), || async {
            s.get(&format!("/api/v1/maintenance/{auto}"))
                .await
                .data(200)["status"]
                == "in_progress"
        })
        .await;
    assert!(started, "auto-start window started; log: {}", s.log());
    assert_eq!(s.component_status(c).await, "maintenance");
    let completed = s
        .eventually(Duration::from_secs(8), || async {
            s.get(&format!("/api/v1/maintenance/{auto}"))
                .await
                .data(200)["status"]
                == "completed"
        })
        .await;
    assert!(completed, "auto-start window completed at its end");
    assert_eq!(s.component_status(c).await, "operational");
    let m = s
        .get(&format!("/api/v1/maintenance/{auto}"))
        .await
        .data(200);
    assert_eq!(
        m["updates"].as_array().unwrap().len(),
        2,
        "both moves are in the timeline"
    );
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{not_auto}"))
            .await
            .data(200)["status"],
        "scheduled"
    );
    assert_eq!(s.component_status(manual).await, "operational");
}

async fn maintenance_filters(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let later = window(&s, p1, &[], 7_200_000, 10_800_000, false).await["id"]
        .as_i64()
        .unwrap();
    let sooner = window(&s, p1, &[], 3_600_000, 7_200_000, false).await["id"]
        .as_i64()
        .unwrap();
    let past = window(&s, p1, &[], -7_200_000, -3_600_000, false).await["id"]
        .as_i64()
        .unwrap();
    let running = window(&s, p2, &[], 3_600_000, 7_200_000, false).await["id"]
        .as_i64()
        .unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{running}/start"))
        .await
        .data(200);
    let ids = |v: Value| -> Vec<i64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect()
    };

    assert_eq!(
        ids(s.get("/api/v1/maintenance").await.data(200)),
        [past, sooner, running, later],
        "by scheduled start"
    );
    assert_eq!(
        ids(s
            .get(&format!("/api/v1/maintenance?statusPageId={p1}"))
            .await
            .data(200)),
        [past, sooner, later]
    );
    assert_eq!(
        ids(s
            .get("/api/v1/maintenance?status=in_progress")
            .await
            .data(200)),
        [running]
    );
    assert_eq!(
        ids(s.get("/api/v1/maintenance?upcoming=true").await.data(200)),
        [sooner, later],
        "future and not started"
    );
    assert_eq!(
        ids(s
            .get(&format!(
                "/api/v1/maintenance?upcoming=true&statusPageId={p2}"
            ))
            .await
            .data(200)),
        Vec::<i64>::new()
    );
    assert_eq!(
        ids(s.get("/api/v1/maintenance?upcoming=false").await.data(200)).len(),
        4
    );
    s.get("/api/v1/maintenance?status=ongoing")
        .await
        .invalid_fields(&["status"]);
    s.get("/api/v1/maintenance?upcoming=maybe")
        .await
        .invalid_fields(&["upcoming"]);
    s.get("/api/v1/maintenance?statusPageId=0")
        .await
        .invalid_fields(&["statusPageId"]);
}

async fn maintenance_validation(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let foreign = s.component(p2, "X").await;
    let id = window(&s, p1, &[], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    let before = s.snapshot().await;
    let ok_start = "2030-01-01T00:00:00.000Z";
    let ok_end = "2030-01-01T01:00:00.000Z";
    let cases = [
        (
            json!({"statusPageId": p1, "scheduledStartTime": ok_start, "scheduledEndTime": ok_end}),
            vec!["title"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": ok_end, "scheduledEndTime": ok_start}),
            vec!["scheduledEndTime"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": ok_start, "scheduledEndTime": ok_start}),
            vec!["scheduledEndTime"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": "next tuesday", "scheduledEndTime": ok_end}),
            vec!["scheduledStartTime"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": ok_start}),
            vec!["scheduledEndTime"],
        ),
        (
            json!({"title": "t", "statusPageId": 999, "scheduledStartTime": ok_start, "scheduledEndTime": ok_end}),
            vec!["statusPageId"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": ok_start, "scheduledEndTime": ok_end, "componentIds": [foreign]}),
            vec!["componentIds"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "scheduledStartTime": ok_start, "scheduledEndTime": ok_end, "autoStart": "yes"}),
            vec!["autoStart"],
        ),
    ];
    for (body, fields) in cases {
        s.post("/api/v1/maintenance", body)
            .await
            .invalid_fields(&fields);
    }
    let path = format!("/api/v1/maintenance/{id}");
    s.patch(&path, json!({"status": "completed"}))
        .await
        .invalid_fields(&["status"]);
    s.patch(&path, json!({"statusPageId": p2}))
        .await
        .invalid_fields(&["statusPageId"]);
    s.patch(
        &path,
        json!({"scheduledEndTime": "2000-01-01T00:00:00.000Z"}),
    )
    .await
    .invalid_fields(&["scheduledEndTime"]);
    s.patch(&path, json!({"scheduledStartTime": "garbage"}))
        .await
        .invalid_fields(&["scheduledStartTime"]);
    s.patch(&path, json!({"componentIds": [foreign]}))
        .await
        .invalid_fields(&["componentIds"]);
    s.patch(&path, json!({})).await.invalid_fields(&["body"]);
    s.post(
        &format!("{path}/complete"),
        json!({"message": ["not", "text"]}),
    )
    .await
    .invalid_fields(&["message"]);
    assert_eq!(s.snapshot().await, before);
}

async fn maintenance_patch_and_delete(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let a = s.component(p, "A").await;
    let bb = s.component(p, "B").await;
    let id = window(&s, p, &[a], 60_000, 120_000, false).await["id"]
        .as_i64()
        .unwrap();
    let path = format!("/api/v1/maintenance/{id}");
    let m = s
        .patch(&path, json!({"title": "Renamed", "scheduledEndTime": "2099-01-01T00:00:00.000Z", "autoStart": true}))
        .await
        .data(200);
    assert_eq!(m["title"], "Renamed");
    assert_eq!(m["scheduledEndTime"], "2099-01-01T00:00:00.000Z");
    assert_eq!(m["autoStart"], true);
    assert_eq!(m["description"], "Postgres 17", "unnamed fields stay");

    // Changing components of an ongoing window hands them over at once.
    s.post_empty(&format!("{path}/start")).await.data(200);
    assert_eq!(s.component_status(a).await, "maintenance");
    let m = s
        .patch(&path, json!({"componentIds": [bb]}))
        .await
        .data(200);
    assert_eq!(m["affectedComponents"], json!([bb]));
    assert_eq!(s.component_status(a).await, "operational");
    assert_eq!(s.component_status(bb).await, "maintenance");

    // Deleting an ongoing window gives its components back.
    let del = s.delete(&path).await;
    assert_eq!(del.status, 200);
    assert!(del.body["message"].as_str().unwrap().contains("deleted"));
    assert_eq!(s.component_status(bb).await, "operational");
    s.get(&path).await.problem(404);
    s.delete(&path).await.problem(404);
    s.patch(&path, json!({"title": "x"})).await.problem(404);
}

/// `/api/monitor/check`: an outside alerting tool asks before paging.
async fn alerting_tools_ask_whether_to_page(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let db = s.component(p, "DB").await;
    let api = s.component(p, "API").await;
    let cache = s.component(p, "Cache").await;
    // DB: in progress now; cache: scheduled for tomorrow; API: nothing.
    let now = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "DB upgrade", "statusPageId": p, "componentIds": [db],
                   "scheduledStartTime": at_offset_ms(-60_000), "scheduledEndTime": at_offset_ms(3_600_000)}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{now}/start"))
        .await
        .data(200);
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Cache swap", "statusPageId": p, "componentIds": [cache],
               "scheduledStartTime": at_offset_ms(86_400_000), "scheduledEndTime": at_offset_ms(90_000_000)}),
    )
    .await
    .data(201);
    let reader = s.db.create_key("read");
    let ask = |path: String| {
        let s = &s;
        let reader = reader.clone();
        async move {
            s.send(reqwest::Method::GET, &path, Some(&reader), None)
                .await
        }
    };
    let r = ask(format!("/api/monitor/check?componentId={db}"))
        .await
        .data(200);
    assert_eq!(r["suppressed"], true, "{r}");
    assert_eq!(r["reason"], "maintenance");
    assert_eq!(r["maintenance"][0]["id"], now);
    assert_eq!(r["maintenance"][0]["status"], "in_progress");
    for quiet in [api, cache] {
        let r = ask(format!("/api/monitor/check?componentId={quiet}"))
            .await
            .data(200);
        assert_eq!(
            (r["suppressed"].clone(), r["reason"].clone()),
            (json!(false), Value::Null),
            "{r}"
        );
        assert_eq!(r["maintenance"], json!([]));
    }
    let many = s
        .post("/api/monitor/check", json!({"componentIds": [db, api]}))
        .await
        .data(200);
    let answers: Vec<(i64, bool)> = many
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["componentId"].as_i64().unwrap(),
                c["suppressed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(answers, [(db, true), (api, false)]);
    // Completed: alerts may page again.
    s.post_empty(&format!("/api/v1/maintenance/{now}/complete"))
        .await
        .data(200);
    let r = ask(format!("/api/monitor/check?componentId={db}"))
        .await
        .data(200);
    assert_eq!(r["suppressed"], false);

    // Bad questions get clear answers.
    ask("/api/monitor/check".into())
        .await
        .invalid_fields(&["componentId"]);
    ask("/api/monitor/check?componentId=x".into())
        .await
        .invalid_fields(&["componentId"]);
    ask("/api/monitor/check?componentId=9999".into())
        .await
        .problem(404);
    s.post("/api/monitor/check", json!({"componentIds": []}))
        .await
        .invalid_fields(&["componentIds"]);
    s.post("/api/monitor/check", json!({"componentIds": [9999]}))
        .await
        .invalid_fields(&["componentIds"]);
    s.post("/api/monitor/check", json!({}))
        .await
        .invalid_fields(&["componentIds"]);
    s.send(
        reqwest::Method::GET,
        &format!("/api/monitor/check?componentId={db}"),
        None,
        None,
    )
    .await
    .problem(401);
}
