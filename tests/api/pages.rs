use crate::on_both_backends;
use crate::support::{Backend, Server};
use serde_json::json;

on_both_backends!(
    page_lifecycle,
    page_list_and_detail_views,
    page_slug_and_domain_conflicts,
    page_validation,
    page_delete_cascades
);

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
    k.sort();
    k
}

async fn page_lifecycle(b: Backend) {
    let s = Server::start(b).await;
    let r = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Acme Cloud", "slug": "acme", "description": "Our services", "isPublic": false}),
        )
        .await;
    let page = r.data(201);
    let id = page["id"].as_i64().unwrap();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/statuspages/{id}").as_str())
    );
    assert_eq!(
        r.header("cache-control"),
        Some("no-store"),
        "management answers are never cached"
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page["name"], "Acme Cloud");
    assert_eq!(page["slug"], "acme");
    assert_eq!(page["description"], "Our services");
    assert_eq!(page["isPublic"], false);
    // Documented defaults of the detail fields.
    assert_eq!(page["accentColor"], "#2563eb");
    assert_eq!(page["timeZone"], "UTC");
    assert_eq!(page["uptimeDays"], 90);
    assert_eq!(page["showUptime"], true);
    assert_eq!(page["showSubscribe"], true);
    assert_eq!(page["logoUrl"], json!(null));
    assert!(page["createdAt"].as_str().unwrap().ends_with('Z'));

    let patched = s
        .patch(
            &format!("/api/v1/statuspages/{id}"),
            json!({"name": "Acme", "description": "All of it", "accentColor": "#ABC", "timeZone": "Europe/Berlin",
                   "uptimeDays": 30, "logoUrl": "https://acme.test/logo.png", "customDomain": "Status.Acme.test",
                   "showUptime": false, "isPublic": true}),
        )
        .await
        .data(200);
    assert_eq!(patched["name"], "Acme");
    assert_eq!(patched["description"], "All of it");
    assert_eq!(patched["accentColor"], "#aabbcc");
    assert_eq!(patched["timeZone"], "Europe/Berlin");
    assert_eq!(patched["uptimeDays"], 30);
    assert_eq!(patched["logoUrl"], "https://acme.test/logo.png");
    assert_eq!(patched["customDomain"], "status.acme.test");
    assert_eq!(patched["showUptime"], false);
    assert_eq!(patched["slug"], "acme", "unnamed fields stay");

    // null clears a nullable field; the change is persistent.
    s.patch(
        &format!("/api/v1/statuspages/{id}"),
        json!({"logoUrl": null}),
    )
    .await
    .data(200);
    let again = s.get(&format!("/api/v1/statuspages/{id}")).await.data(200);
    assert_eq!(again["logoUrl"], json!(null));
    assert_eq!(again["timeZone"], "Europe/Berlin");

    let del = s.delete(&format!("/api/v1/statuspages/{id}")).await;
    assert_eq!(del.status, 200);
    assert!(del.body["message"].as_str().unwrap().contains("deleted"));
    s.get(&format!("/api/v1/statuspages/{id}"))
        .await
        .problem(404);
    s.delete(&format!("/api/v1/statuspages/{id}"))
        .await
        .problem(404);
    s.patch(&format!("/api/v1/statuspages/{id}"), json!({"name": "x"}))
        .await
        .problem(404);
}

async fn page_list_and_detail_views(b: Backend) {
    let s = Server::start(b).await;
    let a = s.page("alpha").await;
    let g = s.group(a, "Core").await;
    let c = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "statusPageId": a, "groupId": g}),
        )
        .await
        .data(201);
    s.page("beta").await;

    let list = s.get("/api/v1/statuspages").await.data(200);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(
        keys(&list[0]),
        [
            "createdAt",
            "description",
            "id",
            "isPublic",
            "logoUrl",
            "name",
            "slug"
        ]
    );
    assert_eq!(list[0]["slug"], "alpha");

    let detail = s.get(&format!("/api/v1/statuspages/{a}")).await.data(200);
    assert_eq!(
        keys(&detail),
        [
            "accentColor",
            "componentGroups",
            "components",
            "createdAt",
            "customCss",
            "customDomain",
            "description",
            "faviconUrl",
            "headerImageUrl",
            "id",
            "isPublic",
            "logoUrl",
            "name",
            "passwordProtected",
            "pastIncidentDays",
            "showResponseTimes",
            "showSubscribe",
            "showUptime",
            "slug",
            "timeZone",
            "uptimeDays"
        ]
    );
    assert_eq!(detail["components"], json!([c]));
    assert_eq!(
        detail["componentGroups"],
        json!([{"id": g, "name": "Core", "statusPageId": a, "order": 0}])
    );
}

async fn page_slug_and_domain_conflicts(b: Backend) {
    let s = Server::start(b).await;
    let a = s.page("taken").await;
    let other = s.page("other").await;
    s.patch(
        &format!("/api/v1/statuspages/{a}"),
        json!({"customDomain": "status.a.test"}),
    )
    .await
    .data(200);
    let before = s.snapshot().await;

    let r = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Copy", "slug": "taken"}),
        )
        .await;
    assert!(r.problem(409)["detail"].as_str().unwrap().contains("slug"));
    s.patch(
        &format!("/api/v1/statuspages/{other}"),
        json!({"slug": "taken"}),
    )
    .await
    .problem(409);
    let r = s
        .patch(
            &format!("/api/v1/statuspages/{other}"),
            json!({"customDomain": "status.a.test"}),
        )
        .await;
    assert!(
        r.problem(409)["detail"]
            .as_str()
            .unwrap()
            .contains("customDomain")
    );
    assert_eq!(
        s.snapshot().await,
        before,
        "a refused request changed nothing"
    );
}

async fn page_validation(b: Backend) {
    let s = Server::start(b).await;
    let id = s.page("valid").await;
    let before = s.snapshot().await;
    let cases = [
        (json!({"slug": "x"}), vec!["name"]),
        (json!({"name": "x"}), vec!["slug"]),
        (
            json!({"name": "   ", "slug": "Bad Slug"}),
            vec!["name", "slug"],
        ),
        (
            json!({"name": "x".repeat(256), "slug": "-edge-"}),
            vec!["name", "slug"],
        ),
        (
            json!({"name": "x", "slug": "ok", "accentColor": "blue", "timeZone": "Mars/Base", "uptimeDays": 0}),
            vec!["accentColor", "timeZone", "uptimeDays"],
        ),
        (
            json!({"name": "x", "slug": "ok", "logoUrl": "ftp://x", "faviconUrl": "not a url", "customDomain": "no_tld"}),
            vec!["logoUrl", "faviconUrl", "customDomain"],
        ),
        (
            json!({"name": "x", "slug": "ok", "description": "d".repeat(10_001)}),
            vec!["description"],
        ),
        (json!({"name": 5, "slug": "ok"}), vec!["name"]),
        (
            json!({"name": "x", "slug": "ok", "isPublic": "yes"}),
            vec!["isPublic"],
        ),
    ];
    for (body, fields) in cases {
        s.post("/api/v1/statuspages", body)
            .await
            .invalid_fields(&fields);
    }
    let patches = [
        (json!({}), vec!["body"]),
        (json!({"name": ""}), vec!["name"]),
        (json!({"uptimeDays": 366}), vec!["uptimeDays"]),
        (json!({"slug": "UPPER"}), vec!["slug"]),
    ];
    for (body, fields) in patches {
        s.patch(&format!("/api/v1/statuspages/{id}"), body)
            .await
            .invalid_fields(&fields);
    }
    assert_eq!(
        s.snapshot().await,
        before,
        "refused requests changed nothing"
    );
}

async fn page_delete_cascades(b: Backend) {
    let s = Server::start(b).await;
    let gone = s.page("gone").await;
    let kept = s.page("kept").await;
    let g = s.group(gone, "G").await;
    let c = s.component(gone, "C").await;
    let kept_c = s.component(kept, "K").await;
    let i = s.incident(gone, "I").await["id"].as_i64().unwrap();
    let m = s
        .post(
            "/api/v1/maintenance",
            json!({"title": "M", "statusPageId": gone, "scheduledStartTime": "2030-01-01T00:00:00.000Z",
              "scheduledEndTime": "2030-01-01T01:00:00.000Z", "componentIds": [c]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.delete(&format!("/api/v1/statuspages/{gone}"))
        .await
        .data(200);
    for path in [
        format!("/api/v1/component-groups/{g}"),
        format!("/api/v1/components/{c}"),
        format!("/api/v1/incidents/{i}"),
        format!("/api/v1/maintenance/{m}"),
    ] {
        s.get(&path).await.problem(404);
    }
    assert_eq!(
        s.get(&format!("/api/v1/components/{kept_c}"))
            .await
            .data(200)["statusPageId"],
        kept
    );
    assert_eq!(
        s.get("/api/v1/components")
            .await
            .data(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
