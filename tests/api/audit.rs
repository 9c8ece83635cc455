use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    every_change_is_audited_and_the_chain_holds,
    tampering_is_found,
    audit_queries_pages_and_exports,
    audit_needs_an_admin_key
);

async fn events(s: &Server, query: &str) -> Value {
    let r = s.get(&format!("/api/audit-events?{query}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

async fn verify(s: &Server) -> Value {
    s.post_empty("/api/audit-events/verify").await.data(200)
}

async fn every_change_is_audited_and_the_chain_holds(b: Backend) {
    let s = Server::start(b).await;
    let client = reqwest::Client::new();
    // A write with a recognisable user agent.
    let r = client
        .post(format!("{}/api/v1/statuspages", s.base))
        .bearer_auth(&s.key)
        .header("user-agent", "audit-test/1.0")
        .json(&json!({"name": "Audited", "slug": "audited"}))
        .send()
        .await
        .unwrap();
    let p = r.json::<Value>().await.unwrap()["data"]["id"]
        .as_i64()
        .unwrap();
    let c = s.component(p, "API").await;
    s.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let g = s.group(p, "G").await;
    s.patch(
        &format!("/api/v1/component-groups/{g}"),
        json!({"name": "G2"}),
    )
    .await
    .data(200);
    let i = s.incident(p, "Down").await["id"].as_i64().unwrap();
    s.patch(
        &format!("/api/v1/incidents/{i}"),
        json!({"impact": "major"}),
    )
    .await
    .data(200);
    s.post(
        &format!("/api/v1/incidents/{i}/updates"),
        json!({"message": "Fixing", "status": "identified"}),
    )
    .await
    .data(201);
    s.post(
        &format!("/api/v1/incidents/{i}/resolve"),
        json!({"message": "Done"}),
    )
    .await
    .data(200);
    let m = s
        .post("/api/v1/maintenance", json!({"title": "Auto", "statusPageId": p, "scheduledStartTime": "2020-01-01T00:00:00.000Z", "scheduledEndTime": "2099-01-01T00:00:00.000Z", "autoStart": true}))
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let started = s
        .eventually(Duration::from_secs(5), || async {
            s.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["status"] == "in_progress"
        })
        .await;
    assert!(started);
    s.post_empty(&format!("/api/v1/maintenance/{m}/complete"))
        .await
        .data(200);
    s.delete(&format!("/api/v1/component-groups/{g}"))
        .await
        .data(200);
    s.delete(&format!("/api/v1/incidents/{i}")).await.data(200);
    let (ok, out, _) =
        s.db.cli(&["api-key", "create", "--name", "ci bot", "--scopes", "read"]);
    assert!(ok);
    let secret = out.lines().last().unwrap().to_string();
    // Twenty writes at once still make one unbroken chain.
    let writes: Vec<_> = (0..20)
        .map(|n| {
            s.post(
                "/api/v1/components",
                json!({"name": format!("c{n}"), "statusPageId": p}),
            )
        })
        .collect();
    // Awaited together so they really overlap on the server.
    for r in futures_util::future::join_all(writes).await {
        assert_eq!(r.status, 201);
    }

    let all = events(&s, "limit=500").await;
    let list = all["data"].as_array().unwrap();
    let actions: Vec<&str> = list.iter().map(|e| e["action"].as_str().unwrap()).collect();
    for want in [
        "api_key.create",
        "statuspage.create",
        "component.create",
        "component.update",
        "group.create",
        "group.update",
        "group.delete",
        "incident.create",
        "incident.update",
        "incident.post_update",
        "incident.resolve",
        "incident.delete",
        "maintenance.create",
        "maintenance.start",
        "maintenance.complete",
    ] {
        assert!(actions.contains(&want), "{want} missing from {actions:?}");
    }
    let seqs: Vec<i64> = list.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let n = seqs.len() as i64;
    assert_eq!(
        seqs,
        (1..=n).rev().collect::<Vec<_>>(),
        "newest first, no gaps"
    );
    let by = |action: &str| list.iter().find(|e| e["action"] == action).unwrap().clone();
    let created = by("statuspage.create");
    assert_eq!(created["actor"]["kind"], "key");
    assert_eq!(created["actor"]["label"], "test");
    assert_eq!(created["userAgent"], "audit-test/1.0");
    assert_eq!(created["clientAddr"], "127.0.0.1");
    assert_eq!(created["targetType"], "statuspage");
    assert_eq!(created["targetId"], p);
    assert_eq!(created["summary"]["slug"], "audited");
    let status_change = by("component.update");
    assert_eq!(
        status_change["summary"]["status"],
        json!({"from": "operational", "to": "major_outage"}),
        "what changed"
    );
    assert_eq!(
        by("maintenance.start")["actor"],
        json!({"kind": "system", "id": null, "label": "scheduler"})
    );
    assert_eq!(by("maintenance.complete")["actor"]["kind"], "key");
    let key_event = by("api_key.create");
    assert_eq!(key_event["actor"]["kind"], "cli");
    assert_eq!(key_event["summary"]["name"], "ci bot");
    assert!(!all.to_string().contains(&secret), "no secret in the log");
    assert!(!all.to_string().contains(&s.key), "no secret in the log");
    assert_eq!(
        verify(&s).await,
        json!({"intact": true, "checked": n, "brokenAt": null, "reason": null})
    );
}

async fn tampering_is_found(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("t").await;
    for n in 0..4 {
        s.component(p, &format!("c{n}")).await;
    }
    let total = verify(&s).await["checked"].as_i64().unwrap();
    assert!(total >= 6);
    s.db.execute("UPDATE audit_events SET summary = '{\"name\":\"forged\"}' WHERE seq = 4")
        .await;
    let v = verify(&s).await;
    assert_eq!(v["intact"], false);
    assert_eq!(v["brokenAt"], 4);
    assert_eq!(v["checked"], 3);
    assert!(v["reason"].as_str().unwrap().contains("altered"), "{v}");

    // A removed tail is found too, even though every remaining link fits.
    let s = Server::start(b).await;
    let p = s.page("t").await;
    s.component(p, "c").await;
    s.db.execute("DELETE FROM audit_events WHERE seq = (SELECT MAX(seq) FROM audit_events)")
        .await;
    let v = verify(&s).await;
    assert_eq!(v["intact"], false);
    assert!(v["reason"].as_str().unwrap().contains("removed"), "{v}");
}

async fn audit_queries_pages_and_exports(b: Backend) {
    let s = Server::start(b).await;
    let p = s.page("q").await;
    let mut comps = vec![];
    for n in 0..5 {
        comps.push(s.component(p, &format!("c{n}")).await);
    }
    s.patch(
        &format!("/api/v1/components/{}", comps[2]),
        json!({"name": "renamed"}),
    )
    .await
    .data(200);
    let total = events(&s, "").await["aggregations"]["total"]
        .as_i64()
        .unwrap();
    assert_eq!(total, 8, "key, page, five components, one update");

    let creates = events(&s, "action=component.create").await;
    assert_eq!(creates["data"].as_array().unwrap().len(), 5);
    assert_eq!(creates["aggregations"]["total"], 5);
    let one = events(&s, &format!("targetType=component&targetId={}", comps[2])).await;
    assert_eq!(one["data"].as_array().unwrap().len(), 2);
    assert_eq!(
        events(&s, "actorKind=cli").await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        events(&s, "actorKind=key").await["aggregations"]["total"],
        7
    );
    assert_eq!(
        events(&s, "since=2099-01-01T00:00:00.000Z").await["data"],
        json!([])
    );
    assert_eq!(
        events(&s, "until=2000-01-01T00:00:00.000Z").await["data"],
        json!([])
    );
    let agg = events(&s, "").await["aggregations"].clone();
    assert_eq!(
        agg["byAction"][0],
        json!({"key": "component.create", "count": 5})
    );
    assert!(
        agg["byActor"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["key"] == "key:test" && a["count"] == 7)
    );

    // Cursor pages of 3 walk every event once, newest first.
    let mut seen = vec![];
    let mut query = "limit=3".to_string();
    loop {
        let page = events(&s, &query).await;
        seen.extend(
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["seq"].as_i64().unwrap()),
        );
        match page["nextCursor"].as_str() {
            Some(c) => query = format!("limit=3&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, (1..=8).rev().collect::<Vec<i64>>());

    for (q, field) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("since=yesterday", "since"),
        ("actorKind=robot", "actorKind"),
        ("targetId=x", "targetId"),
        ("cursor=abc", "cursor"),
        ("cursor=", "cursor"),
        ("action=incident.explode", "action"),
    ] {
        s.get(&format!("/api/audit-events?{q}"))
            .await
            .invalid_fields(&[field]);
    }

    let csv_text = reqwest::Client::new()
        .get(format!("{}/api/audit-events/export?format=csv", s.base))
        .bearer_auth(&s.key)
        .send()
        .await
        .unwrap();
    assert!(
        csv_text.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let body = csv_text.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().take(3).collect::<Vec<_>>(),
        ["seq", "at", "actor_kind"]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 8);
    assert_eq!(&rows[0][0], "8");
    let summary: Value = serde_json::from_str(&rows[0][8]).unwrap();
    assert_eq!(summary["name"], json!({"from": "c2", "to": "renamed"}));
    let json_export = s
        .get("/api/audit-events/export?action=component.create")
        .await;
    assert_eq!(
        json_export.body.as_array().unwrap().len(),
        5,
        "filters apply to exports"
    );
    s.get("/api/audit-events/export?format=xml")
        .await
        .invalid_fields(&["format"]);

    let stats = s.get("/api/audit-events/statistics").await.data(200);
    assert_eq!(stats["total"], 8);
    assert!(stats["firstAt"].as_str().unwrap() <= stats["lastAt"].as_str().unwrap());
    assert_eq!(
        s.get("/api/audit").await.body["aggregations"]["total"],
        8,
        "GET /api/audit lists the same"
    );
}

async fn audit_needs_an_admin_key(b: Backend) {
    let s = Server::start(b).await;
    // Signed-in users need AUDIT_VIEW; a session's POST also needs its CSRF token.
    s.db.user("viewer@example.com", "viewer");
    s.db.user("admin@example.com", "admin");
    let client = reqwest::Client::new();
    let session = async |email: &str| {
        let b = crate::support::Browser::signed_in(&s, email).await;
        (b.cookie, b.csrf)
    };
    let (viewer, _) = session("viewer@example.com").await;
    let r = client
        .get(format!("{}/api/audit-events", s.base))
        .header("cookie", &viewer)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "viewers lack AUDIT_VIEW");
    let (admin, csrf) = session("admin@example.com").await;
    let r = client
        .get(format!("{}/api/audit-events", s.base))
        .header("cookie", &admin)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["cache-control"],
        "no-store",
        "authenticated data is never cached"
    );
    let r = client
        .post(format!("{}/api/audit-events/verify", s.base))
        .header("cookie", &admin)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "no CSRF token");
    let r = client
        .post(format!("{}/api/audit-events/verify", s.base))
        .header("cookie", &admin)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["data"]["intact"], true);

    for scopes in ["read", "write"] {
        let key = s.db.create_key(scopes);
        for (m, path) in [
            (Method::GET, "/api/audit-events"),
            (Method::GET, "/api/audit-events/export"),
            (Method::GET, "/api/audit-events/statistics"),
            (Method::GET, "/api/audit"),
            (Method::POST, "/api/audit-events/verify"),
        ] {
            s.send(m.clone(), path, Some(&key), None).await.problem(403);
            s.send(m, path, None, None).await.problem(401);
        }
    }
}
