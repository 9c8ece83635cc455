use crate::on_both_backends;
use crate::support::{Backend, Server};
use serde_json::{Value, json};

on_both_backends!(
    resolving_without_words_says_so_in_the_install_language,
    incident_lifecycle,
    incident_transitions_any_to_any,
    incident_filters_and_limits,
    incident_validation,
    incidents_move_their_components
);

fn statuses(updates: &Value) -> Vec<String> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["status"].as_str().unwrap().to_string())
        .collect()
}

async fn incident_lifecycle(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let c1 = s.component(p, "API").await;
    let c2 = s.component(p, "Web").await;
    let r = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Elevated errors", "status": "investigating", "impact": "major",
               "statusPageId": p, "message": "We are looking into it", "componentIds": [c2, c1, c2]}),
        )
        .await;
    let inc = r.data(201);
    let id = inc["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/incidents/{id}").as_str())
    );
    assert_eq!(inc["title"], "Elevated errors");
    assert_eq!(inc["status"], "investigating");
    assert_eq!(inc["impact"], "major");
    assert_eq!(inc["statusPageId"], p);
    assert_eq!(inc["resolvedAt"], json!(null));
    assert_eq!(inc["affectedComponents"], json!([c1, c2]));
    assert_eq!(inc["updates"].as_array().unwrap().len(), 1);
    assert_eq!(inc["updates"][0]["message"], "We are looking into it");
    assert_eq!(inc["updates"][0]["status"], "investigating");
    assert!(inc["updates"][0]["createdAt"].is_string());

    // Posting an update with a new status moves the incident and adds to the timeline.
    let r = s
        .post(
            &format!("/api/v1/incidents/{id}/updates"),
            json!({"message": "Found it", "status": "identified"}),
        )
        .await;
    let upd = r.data(201);
    assert_eq!(upd["message"], "Found it");
    assert_eq!(upd["status"], "identified");
    // An update without a status keeps the current one.
    let upd = s
        .post(
            &format!("/api/v1/incidents/{id}/updates"),
            json!({"message": "Fix rolling out"}),
        )
        .await
        .data(201);
    assert_eq!(upd["status"], "identified");

    // PATCH impact alone adds nothing to the timeline; a status change does.
    let inc = s
        .patch(
            &format!("/api/v1/incidents/{id}"),
            json!({"impact": "critical"}),
        )
        .await
        .data(200);
    assert_eq!(inc["impact"], "critical");
    assert_eq!(inc["updates"].as_array().unwrap().len(), 3);
    let inc = s
        .patch(
            &format!("/api/v1/incidents/{id}"),
            json!({"status": "monitoring", "componentIds": [c1]}),
        )
        .await
        .data(200);
    assert_eq!(inc["status"], "monitoring");
    assert_eq!(inc["affectedComponents"], json!([c1]));
    assert_eq!(
        statuses(&inc["updates"]),
        ["monitoring", "identified", "identified", "investigating"],
        "newest first"
    );

    let inc = s
        .post(
            &format!("/api/v1/incidents/{id}/resolve"),
            json!({"message": "All good now"}),
        )
        .await
        .data(200);
    assert_eq!(inc["status"], "resolved");
    let resolved_at = inc["resolvedAt"]
        .as_str()
        .expect("resolvedAt set")
        .to_string();
    assert_eq!(inc["updates"][0]["message"], "All good now");
    assert_eq!(inc["updates"][0]["status"], "resolved");
    // Resolving twice is refused and changes nothing.
    let before = s.get(&format!("/api/v1/incidents/{id}")).await.data(200);
    s.post(
        &format!("/api/v1/incidents/{id}/resolve"),
        json!({"message": "again"}),
    )
    .await
    .problem(409);
    assert_eq!(
        s.get(&format!("/api/v1/incidents/{id}")).await.data(200),
        before
    );
    assert_eq!(before["resolvedAt"], resolved_at.as_str());

    // Leaving resolved clears resolvedAt; resolve without a body works.
    let inc = s
        .patch(
            &format!("/api/v1/incidents/{id}"),
            json!({"status": "investigating", "message": "It is back"}),
        )
        .await
        .data(200);
    assert_eq!(inc["resolvedAt"], json!(null));
    assert_eq!(inc["updates"][0]["message"], "It is back");
    let inc = s
        .post_empty(&format!("/api/v1/incidents/{id}/resolve"))
        .await
        .data(200);
    assert!(inc["resolvedAt"].is_string());

    assert_eq!(
        s.get(&format!("/api/v1/incidents/{id}")).await.data(200),
        inc
    );
    let del = s.delete(&format!("/api/v1/incidents/{id}")).await;
    assert_eq!(del.status, 200);
    assert!(del.body["message"].as_str().unwrap().contains("deleted"));
    s.get(&format!("/api/v1/incidents/{id}")).await.problem(404);
    s.delete(&format!("/api/v1/incidents/{id}"))
        .await
        .problem(404);
    s.post(
        &format!("/api/v1/incidents/{id}/updates"),
        json!({"message": "x"}),
    )
    .await
    .problem(404);
    s.post(&format!("/api/v1/incidents/{id}/resolve"), json!({}))
        .await
        .problem(404);
}

async fn incident_transitions_any_to_any(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("p").await;
    let all = ["investigating", "identified", "monitoring", "resolved"];
    for from in all {
        for to in all {
            let inc = s
                .post(
                    "/api/v1/incidents",
                    json!({"title": "t", "statusPageId": p, "status": from}),
                )
                .await
                .data(201);
            assert_eq!(
                inc["resolvedAt"].is_string(),
                from == "resolved",
                "created {from}"
            );
            let id = inc["id"].as_i64().unwrap();
            let moved = s
                .patch(&format!("/api/v1/incidents/{id}"), json!({"status": to}))
                .await
                .data(200);
            assert_eq!(moved["status"], to);
            assert_eq!(
                moved["resolvedAt"].is_string(),
                to == "resolved",
                "{from} -> {to}"
            );
            let expected_updates = if from == to { 1 } else { 2 };
            assert_eq!(
                moved["updates"].as_array().unwrap().len(),
                expected_updates,
                "{from} -> {to}: every status change is an update"
            );
        }
    }
}

async fn incident_filters_and_limits(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    for n in 0..25 {
        s.post("/api/v1/incidents", json!({"title": format!("inc {n}"), "statusPageId": p1, "status": if n % 5 == 0 { "resolved" } else { "monitoring" }})).await.data(201);
    }
    s.post(
        "/api/v1/incidents",
        json!({"title": "other", "statusPageId": p2, "status": "identified"}),
    )
    .await
    .data(201);

    let titles = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|i| i["title"].as_str().unwrap().to_string())
            .collect()
    };
    let default = s.get("/api/v1/incidents").await.data(200);
    assert_eq!(default.as_array().unwrap().len(), 20, "default limit");
    assert_eq!(titles(&default)[0], "other", "newest first");
    assert_eq!(titles(&default)[1], "inc 24");

    let page1 = s
        .get(&format!("/api/v1/incidents?statusPageId={p1}&limit=100"))
        .await
        .data(200);
    assert_eq!(page1.as_array().unwrap().len(), 25);
    assert!(
        page1
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["statusPageId"] == p1)
    );
    assert_eq!(
        s.get("/api/v1/incidents?limit=3")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let resolved = s.get("/api/v1/incidents?status=resolved").await.data(200);
    assert_eq!(resolved.as_array().unwrap().len(), 5);
    assert!(
        resolved
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "resolved")
    );
    let unresolved = s
        .get("/api/v1/incidents?status=unresolved&limit=100")
        .await
        .data(200);
    assert_eq!(unresolved.as_array().unwrap().len(), 21);
    let identified = s
        .get(&format!(
            "/api/v1/incidents?status=identified&statusPageId={p2}"
        ))
        .await
        .data(200);
    assert_eq!(titles(&identified), ["other"]);
    // Every incident in a list carries its timeline and components.
    assert_eq!(default[0]["updates"].as_array().unwrap().len(), 1);

    for bad in ["limit=0", "limit=-1", "limit=101", "limit=abc"] {
        s.get(&format!("/api/v1/incidents?{bad}"))
            .await
            .invalid_fields(&["limit"]);
    }
    s.get("/api/v1/incidents?status=broken")
        .await
        .invalid_fields(&["status"]);
    s.get("/api/v1/incidents?statusPageId=x&status=y")
        .await
        .invalid_fields(&["statusPageId", "status"]);
}

async fn incident_validation(b: Backend) {
    let s = Server::start(b).await;
    let p1 = s.page("one").await;
    let p2 = s.page("two").await;
    let foreign = s.component(p2, "elsewhere").await;
    let id = s.incident(p1, "existing").await["id"].as_i64().unwrap();
    let before = s.snapshot().await;
    let cases = [
        (json!({"statusPageId": p1}), vec!["title"]),
        (json!({"title": "t"}), vec!["statusPageId"]),
        (
            json!({"title": "t", "statusPageId": 424242}),
            vec!["statusPageId"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "impact": "apocalyptic"}),
            vec!["impact"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "status": "panicking"}),
            vec!["status"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "componentIds": [foreign]}),
            vec!["componentIds"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "componentIds": [31337]}),
            vec!["componentIds"],
        ),
        (
            json!({"title": "t", "statusPageId": p1, "componentIds": "1,2"}),
            vec!["componentIds"],
        ),
        (
            json!({"title": "t".repeat(300), "statusPageId": p1, "message": "m".repeat(20_001)}),
            vec!["title", "message"],
        ),
    ];
    for (body, fields) in cases {
        s.post("/api/v1/incidents", body)
            .await
            .invalid_fields(&fields);
    }
    s.post(
        &format!("/api/v1/incidents/{id}/updates"),
        json!({"message": ""}),
    )
    .await
    .invalid_fields(&["message"]);
    s.post(
        &format!("/api/v1/incidents/{id}/updates"),
        json!({"status": "resolved"}),
    )
    .await
    .invalid_fields(&["message"]);
    s.post(
        &format!("/api/v1/incidents/{id}/updates"),
        json!({"message": "x", "status": "done"}),
    )
    .await
    .invalid_fields(&["status"]);
    s.patch(&format!("/api/v1/incidents/{id}"), json!({}))
        .await
        .invalid_fields(&["body"]);
    s.patch(
        &format!("/api/v1/incidents/{id}"),
        json!({"impact": "huge"}),
    )
    .await
    .invalid_fields(&["impact"]);
    s.patch(
        &format!("/api/v1/incidents/{id}"),
        json!({"componentIds": [foreign]}),
    )
    .await
    .invalid_fields(&["componentIds"]);
    s.post(
        &format!("/api/v1/incidents/{id}/resolve"),
        json!({"message": 12}),
    )
    .await
    .invalid_fields(&["message"]);
    assert_eq!(s.snapshot().await, before);
}

/// `componentStatuses`: an incident's create, update, posted update and
/// resolve move the named components (history, events) in the same
/// transaction, and make them affected; refusals move nothing.
async fn incidents_move_their_components(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let db = s.component(page, "Database").await;
    let other_page = s.page("other").await;
    let elsewhere = s.component(other_page, "Elsewhere").await;

    // Refusals first: nothing is created and nothing moves.
    for (bad, field) in [
        (
            json!([{"componentId": api, "status": "major_outage"}, {"componentId": api, "status": "degraded"}]),
            "componentStatuses",
        ),
        (
            json!([{"componentId": elsewhere, "status": "major_outage"}]),
            "componentStatuses",
        ),
        (
            json!([{"componentId": api, "status": "on_fire"}]),
            "componentStatuses[0].status",
        ),
    ] {
        let r = s
            .post(
                "/api/v1/incidents",
                json!({"title": "Down", "statusPageId": page, "componentStatuses": bad}),
            )
            .await;
        let p = r.problem(422);
        assert!(
            p["errors"][0]["field"]
                .as_str()
                .unwrap()
                .starts_with(field.split('[').next().unwrap()),
            "{p}"
        );
    }
    assert_eq!(s.db.integers("SELECT COUNT(*) FROM incidents").await, [0]);
    assert_eq!(s.component_status(api).await, "operational");
    assert_eq!(s.component_status(elsewhere).await, "operational");

    let created = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API down", "statusPageId": page, "impact": "major",
                   "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
        )
        .await
        .data(201);
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["affectedComponents"], json!([api]), "{created}");
    assert_eq!(s.component_status(api).await, "major_outage");
    let public = s.get("/api/public/status/acme").await.body;
    assert!(public.to_string().contains("major_outage"), "{public}");

    // A posted update moves another one and makes it affected.
    let r = s
        .post(
            &format!("/api/v1/incidents/{id}/updates"),
            json!({"message": "The database is slow too", "status": "identified",
                   "componentStatuses": [{"componentId": db, "status": "degraded"}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(s.component_status(db).await, "degraded");
    let now = s.get(&format!("/api/v1/incidents/{id}")).await.data(200);
    let mut affected: Vec<i64> = now["affectedComponents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    affected.sort_unstable();
    assert_eq!(affected, [api, db]);

    // Resolving returns both to operational; each move is in the history
    // and the outbox.
    let r = s
        .post(
            &format!("/api/v1/incidents/{id}/resolve"),
            json!({"message": "Fixed", "componentStatuses": [
                {"componentId": api, "status": "operational"},
                {"componentId": db, "status": "operational"}]}),
        )
        .await;
    assert_eq!(r.data(200)["status"], "resolved");
    assert_eq!(s.component_status(api).await, "operational");
    assert_eq!(s.component_status(db).await, "operational");
    let moves =
        s.db.integers(&format!(
            "SELECT COUNT(*) FROM component_status_history WHERE component_id IN ({api}, {db})"
        ))
        .await;
    assert_eq!(moves, [6], "created operational, then two moves each");
    let events =
        s.db.texts("SELECT kind FROM outbox WHERE kind = 'component.status_changed'")
            .await;
    assert_eq!(events.len(), 4);
}

/// Visitors read a resolution: one without a message says that it is
/// resolved, in the install's language, never an empty line.
async fn resolving_without_words_says_so_in_the_install_language(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("acme").await;
    let last_words = async |id: &Value| {
        let inc = s.get(&format!("/api/v1/incidents/{id}")).await.data(200);
        assert_eq!(inc["status"], "resolved");
        inc["updates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["status"] == "resolved")
            .map(|u| u["message"].clone())
            .unwrap()
    };
    let first = s.incident(p, "Slow").await["id"].clone();
    s.post_empty(&format!("/api/v1/incidents/{first}/resolve"))
        .await
        .data(200);
    assert_eq!(last_words(&first).await, "This incident has been resolved.");

    s.send(
        reqwest::Method::PUT,
        "/api/settings",
        Some(&s.key),
        Some(json!({"defaultLanguage": "de"})),
    )
    .await
    .data(200);
    let second = s.incident(p, "Langsam").await["id"].clone();
    s.post(
        &format!("/api/v1/incidents/{second}/resolve"),
        json!({"message": "  "}),
    )
    .await
    .data(200);
    assert_eq!(last_words(&second).await, "Dieser Vorfall wurde behoben.");

    // Words of one's own stay as written.
    let third = s.incident(p, "Errors").await["id"].clone();
    s.post(
        &format!("/api/v1/incidents/{third}/resolve"),
        json!({"message": "Rolled back."}),
    )
    .await
    .data(200);
    assert_eq!(last_words(&third).await, "Rolled back.");
}
