//! The seed's application names for content (`/api/groups…`, `PUT` beside
//! `PATCH`, `/api/groups/reorder`, `/api/incident-updates…`) for signed-in
//! people: the same handlers as v1, permission-checked, refusals changing
//! nothing.

use crate::on_both_backends;
use crate::support::{Backend, Browser, PASSWORD, Server};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(
    groups_and_layout_in_one_transaction,
    put_spellings_and_incident_updates,
    system_cache_and_current_page,
    incident_templates,
    markdown_preview
);

async fn names(s: &Server, page: i64) -> Vec<(String, Value)> {
    let list = s
        .get(&format!("/api/v1/components?statusPageId={page}"))
        .await
        .data(200);
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["groupId"].clone(),
            )
        })
        .collect()
}

async fn groups_and_layout_in_one_transaction(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let p = s.page("acme").await;
    let other = s.page("other").await;
    let foreign = s.group(other, "Elsewhere").await;

    let (status, g, headers) = ed
        .send(
            Method::POST,
            "/api/groups",
            Some(json!({"name": "Backend", "statusPageId": p})),
        )
        .await;
    assert_eq!(status, 201, "{g}");
    let backend = g["data"]["id"].as_i64().unwrap();
    assert_eq!(
        headers["location"],
        format!("/api/component-groups/{backend}")
    );
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &format!("/api/groups/{backend}"),
            Some(json!({"name": "Core"})),
        )
        .await;
    assert_eq!(status, 200);
    let (_, got, _) = vi
        .send(Method::GET, &format!("/api/groups/{backend}"), None)
        .await;
    assert_eq!(got["data"]["name"], "Core");
    let (_, list, _) = vi
        .send(Method::GET, &format!("/api/groups?statusPageId={p}"), None)
        .await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1));
    let frontend = s.group(p, "Frontend").await;
    let api = s.component(p, "API").await;
    let web = s.component(p, "Web").await;
    let db = s.component(p, "DB").await;

    // One request: groups swapped, DB first and into Core, Web into Frontend.
    let layout = json!({"statusPageId": p, "groupIds": [frontend, backend],
        "components": [{"id": db, "groupId": backend}, {"id": api, "groupId": backend}, {"id": web, "groupId": frontend}]});
    let (status, body, _) = ed
        .send(Method::PUT, "/api/groups/reorder", Some(layout.clone()))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        names(&s, p).await,
        [
            ("DB".to_string(), json!(backend)),
            ("API".to_string(), json!(backend)),
            ("Web".to_string(), json!(frontend))
        ]
    );
    let groups = s
        .get(&format!("/api/v1/component-groups?statusPageId={p}"))
        .await
        .data(200);
    assert_eq!(groups[0]["id"], frontend, "{groups}");
    let public = s.get("/api/public/status/acme/components").await;
    assert_eq!(public.status, 200);

    // Refusals change nothing.
    let before = names(&s, p).await;
    for (bad, field) in [
        (
            json!({"statusPageId": p, "components": [{"id": api, "groupId": null}]}),
            "components",
        ),
        (
            json!({"statusPageId": p, "components": [{"id": db}, {"id": api}, {"id": web, "groupId": foreign}]}),
            "components",
        ),
        (
            json!({"statusPageId": p, "groupIds": [backend, backend]}),
            "groupIds",
        ),
        (
            json!({"statusPageId": p, "groupIds": [backend]}),
            "groupIds",
        ),
        (json!({"groupIds": [backend, frontend]}), "statusPageId"),
    ] {
        let (status, problem, _) = ed
            .send(Method::PUT, "/api/groups/reorder", Some(bad.clone()))
            .await;
        assert_eq!(status, 422, "{bad}: {problem}");
        assert_eq!(problem["errors"][0]["field"], field, "{problem}");
    }
    let (status, _, _) = vi
        .send(Method::PUT, "/api/groups/reorder", Some(layout))
        .await;
    assert_eq!(status, 403);
    assert_eq!(names(&s, p).await, before);
    let reorders =
        s.db.integers("SELECT COUNT(*) FROM audit_events WHERE action = 'group.reorder'")
            .await;
    assert_eq!(
        reorders,
        [1],
        "only the accepted layout is in the audit log"
    );
    let layout_events =
        s.db.integers("SELECT COUNT(*) FROM outbox WHERE kind = 'layout.changed'")
            .await;
    assert_eq!(layout_events, [1]);

    let (status, _, _) = ed
        .send(Method::DELETE, &format!("/api/groups/{frontend}"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        names(&s, p).await[2],
        ("Web".to_string(), Value::Null),
        "its components stay, ungrouped"
    );
}

async fn put_spellings_and_incident_updates(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let p = s.page("acme").await;
    let c = s.component(p, "API").await;
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &format!("/api/components/{c}"),
            Some(json!({"name": "Public API"})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        s.get(&format!("/api/v1/components/{c}")).await.data(200)["name"],
        "Public API"
    );

    let incident = s.incident(p, "Down").await;
    let id = incident["id"].as_i64().unwrap();
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &format!("/api/incidents/{id}"),
            Some(json!({"impact": "major"})),
        )
        .await;
    assert_eq!(status, 200);

    // An update posted by naming its incident, then deleted.
    let (status, problem, _) = ed
        .send(
            Method::POST,
            "/api/incident-updates",
            Some(json!({"message": "no incident named"})),
        )
        .await;
    assert_eq!(
        (status, &problem["errors"][0]["field"]),
        (422, &json!("incidentId"))
    );
    let (status, posted, _) = ed
        .send(
            Method::POST,
            "/api/incident-updates",
            Some(json!({"incidentId": id, "message": "Fix deployed", "status": "monitoring"})),
        )
        .await;
    assert_eq!(status, 201, "{posted}");
    let update = posted["data"]["id"].as_i64().unwrap();
    // Its text corrected: empty is refused, a typo fixed, the old text kept
    // in the audit log; the status and time stay.
    let edit = format!("/api/incident-updates/{update}");
    for bad in [json!({"message": "  "}), json!({}), json!({"message": 3})] {
        let (status, problem, _) = ed.send(Method::PATCH, &edit, Some(bad)).await;
        assert_eq!(
            (status, &problem["errors"][0]["field"]),
            (422, &json!("message")),
            "{problem}"
        );
    }
    let (status, _, _) = ed
        .send(
            Method::PATCH,
            "/api/incident-updates/999999",
            Some(json!({"message": "x"})),
        )
        .await;
    assert_eq!(status, 404);
    let (status, edited, _) = ed
        .send(
            Method::PATCH,
            &edit,
            Some(json!({"message": "Fix deployed to all regions"})),
        )
        .await;
    assert_eq!(status, 200, "{edited}");
    let entry = edited["data"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == update)
        .unwrap()
        .clone();
    assert_eq!(entry["message"], "Fix deployed to all regions");
    assert_eq!(entry["status"], "monitoring");
    assert_eq!(entry["createdAt"], posted["data"]["createdAt"]);
    let kept =
        s.db.texts("SELECT summary FROM audit_events WHERE action = 'incident.edit_update'")
            .await;
    assert_eq!(kept.len(), 1, "one correction, refusals not logged");
    assert!(kept[0].contains("Fix deployed\""), "{kept:?}");
    let now = s.get(&format!("/api/v1/incidents/{id}")).await.data(200);
    assert_eq!(now["status"], "monitoring");
    let count = now["updates"].as_array().unwrap().len();
    let (status, after, _) = ed
        .send(
            Method::DELETE,
            &format!("/api/incident-updates/{update}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{after}");
    assert_eq!(
        after["data"]["updates"].as_array().unwrap().len(),
        count - 1
    );
    let (status, _, _) = ed
        .send(
            Method::DELETE,
            &format!("/api/incident-updates/{update}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    // The last update stays: deleting it is refused and changes nothing.
    let last = after["data"]["updates"][0]["id"].as_i64().unwrap();
    let left = after["data"]["updates"].as_array().unwrap().len();
    for u in after["data"]["updates"].as_array().unwrap().iter().skip(1) {
        let uid = u["id"].as_i64().unwrap();
        let (status, _, _) = ed
            .send(
                Method::DELETE,
                &format!("/api/incident-updates/{uid}"),
                None,
            )
            .await;
        assert_eq!(status, 200);
    }
    let (status, problem, _) = ed
        .send(
            Method::DELETE,
            &format!("/api/incident-updates/{last}"),
            None,
        )
        .await;
    assert_eq!(status, 409, "{problem}");
    let updates = s.get(&format!("/api/v1/incidents/{id}")).await.data(200)["updates"].clone();
    assert_eq!(updates.as_array().map(Vec::len), Some(1), "from {left}");

    let window = json!({"title": "DB", "statusPageId": p,
        "scheduledStartTime": crate::support::at_offset_ms(3_600_000), "scheduledEndTime": crate::support::at_offset_ms(7_200_000)});
    let m = s.post("/api/v1/maintenance", window).await.data(201)["id"]
        .as_i64()
        .unwrap();
    let (status, _, _) = ed
        .send(
            Method::PUT,
            &format!("/api/maintenance/{m}"),
            Some(json!({"title": "Database upgrade"})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        s.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["title"],
        "Database upgrade"
    );
}

async fn system_cache_and_current_page(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ad@example.com", "admin", PASSWORD);
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    let ad = Browser::signed_in(&s, "ad@example.com").await;
    let ed = Browser::signed_in(&s, "ed@example.com").await;

    // The page one works on: none yet, then the first, then the chosen one.
    let (status, _, _) = ed.send(Method::GET, "/api/statuspages/current", None).await;
    assert_eq!(status, 404);
    let a = s.page("alpha").await;
    let b2 = s.page("beta").await;
    let (_, cur, _) = ed.send(Method::GET, "/api/statuspages/current", None).await;
    assert_eq!(cur["data"]["id"], a);
    let (status, chosen, _) = ed
        .send(
            Method::POST,
            "/api/statuspages/current",
            Some(json!({"statusPageId": b2})),
        )
        .await;
    assert_eq!((status, &chosen["data"]["slug"]), (200, &json!("beta")));
    for bad in [json!({"statusPageId": b2 + 100}), json!({})] {
        let (status, problem, _) = ed
            .send(Method::POST, "/api/statuspages/current", Some(bad))
            .await;
        assert_eq!(
            (status, &problem["errors"][0]["field"]),
            (422, &json!("statusPageId"))
        );
    }
    let (_, cur, _) = ed.send(Method::GET, "/api/statuspages/current", None).await;
    assert_eq!(cur["data"]["id"], b2, "a refusal changed nothing");
    let (_, other, _) = ad.send(Method::GET, "/api/statuspages/current", None).await;
    assert_eq!(other["data"]["id"], a, "each person has their own");
    assert_eq!(
        s.get("/api/statuspages/current").await.status,
        401,
        "a key has no current page"
    );

    // System: what runs, for admins (signed in or with an admin key).
    let (status, sys, _) = ad.send(Method::GET, "/api/admin/system", None).await;
    assert_eq!(status, 200, "{sys}");
    let sys = &sys["data"];
    let backend = if b == Backend::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    assert_eq!(sys["backend"], backend);
    assert!(sys["databaseBytes"].as_i64().unwrap() > 0, "{sys}");
    assert_eq!(sys["instanceId"].as_str().unwrap().len(), 16);
    assert_eq!(sys["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        s.get("/api/admin/system").await.data(200)["backend"],
        backend
    );
    let (status, _, _) = ed.send(Method::GET, "/api/admin/system", None).await;
    assert_eq!(status, 403);

    // The cache: filled by a read, dropped on demand, refilled by the next.
    assert_eq!(s.get("/api/public/status/alpha").await.status, 200);
    let (_, before, _) = ad.send(Method::GET, "/api/admin/cache", None).await;
    assert!(before["data"]["pages"].as_u64().unwrap() >= 1, "{before}");
    assert!(before["data"]["bytes"].as_u64().unwrap() > 0, "{before}");
    let (status, _, _) = ed.send(Method::POST, "/api/admin/cache", None).await;
    assert_eq!(status, 403);
    let (status, after, _) = ad.send(Method::POST, "/api/admin/cache", None).await;
    assert_eq!((status, &after["data"]["pages"]), (200, &json!(0)));
    assert_eq!(s.get("/api/public/status/alpha").await.status, 200);
    let (_, again, _) = ad.send(Method::GET, "/api/admin/cache", None).await;
    assert_eq!(again["data"]["pages"], 1);
}

async fn incident_templates(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("ed@example.com", "editor", PASSWORD);
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let ed = Browser::signed_in(&s, "ed@example.com").await;
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let body = json!({"name": "Database degraded", "title": "Slow database", "impact": "major",
                      "message": "We see slow queries and are looking into it."});
    let (status, made, headers) = ed
        .send(Method::POST, "/api/incident-templates", Some(body.clone()))
        .await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_i64().unwrap();
    assert_eq!(headers["location"], format!("/api/incident-templates/{id}"));
    assert_eq!(
        (&made["data"]["status"], &made["data"]["impact"]),
        (&json!("investigating"), &json!("major"))
    );

    // Refusals: a taken name, missing fields, a wrong enum, a viewer.
    let (status, _, _) = ed
        .send(Method::POST, "/api/incident-templates", Some(body))
        .await;
    assert_eq!(status, 409);
    let (status, problem, _) = ed
        .send(
            Method::POST,
            "/api/incident-templates",
            Some(json!({"impact": "huge"})),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let (status, problem, _) = ed
        .send(
            Method::POST,
            "/api/incident-templates",
            Some(json!({"message": "x"})),
        )
        .await;
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!((status, fields), (422, vec!["name", "title"]));
    let (status, _, _) = vi
        .send(
            Method::POST,
            "/api/incident-templates",
            Some(json!({"name": "v", "title": "v"})),
        )
        .await;
    assert_eq!(status, 403);
    let (_, list, _) = vi.send(Method::GET, "/api/incident-templates", None).await;
    assert_eq!(
        list["data"].as_array().map(Vec::len),
        Some(1),
        "refusals stored nothing"
    );

    let (status, replaced, _) = ed
        .send(
            Method::PUT,
            &format!("/api/incident-templates/{id}"),
            Some(json!({"name": "DB slow", "title": "Slow database", "status": "identified"})),
        )
        .await;
    assert_eq!(
        (status, &replaced["data"]["status"]),
        (200, &json!("identified"))
    );
    let (status, _, _) = ed
        .send(
            Method::DELETE,
            &format!("/api/incident-templates/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _, _) = vi
        .send(Method::GET, &format!("/api/incident-templates/{id}"), None)
        .await;
    assert_eq!(status, 404);
    let actions =
        s.db.texts("SELECT action FROM audit_events WHERE target_type = 'template' ORDER BY seq")
            .await;
    assert_eq!(
        actions,
        ["template.create", "template.update", "template.delete"]
    );
}

/// `POST /api/markdown/preview` renders as the public page does: cleaned,
/// line breaks kept in messages; refusals are clear.
async fn markdown_preview(b: Backend) {
    let s = Server::start(b).await;
    s.db.user_with("vi@example.com", "viewer", PASSWORD);
    let vi = Browser::signed_in(&s, "vi@example.com").await;
    let (status, body, _) = vi
        .send(
            Method::POST,
            "/api/markdown/preview",
            Some(json!({"markdown": "We are **on it**.\nNext line<script>alert(1)</script>"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let html = body["data"]["html"].as_str().unwrap();
    assert!(html.contains("<strong>on it</strong>"), "{html}");
    assert!(html.contains("<br"), "a typed line break stays: {html}");
    assert!(!html.contains("<script"), "{html}");
    let (_, doc, _) = vi
        .send(
            Method::POST,
            "/api/markdown/preview",
            Some(json!({"markdown": "# Title\n\ntext", "kind": "document"})),
        )
        .await;
    assert!(
        doc["data"]["html"]
            .as_str()
            .unwrap()
            .contains("<h1>Title</h1>")
    );
    for (bad, field) in [
        (json!({}), "markdown"),
        (json!({"markdown": "x", "kind": "poem"}), "kind"),
        (json!({"markdown": "x".repeat(400_001)}), "markdown"),
    ] {
        let (status, p, _) = vi
            .send(Method::POST, "/api/markdown/preview", Some(bad))
            .await;
        assert_eq!(
            (status, &p["errors"][0]["field"]),
            (422, &json!(field)),
            "{p}"
        );
    }
    let anonymous = reqwest::Client::new()
        .post(format!("{}/api/markdown/preview", s.base))
        .json(&json!({"markdown": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}
