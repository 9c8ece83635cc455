use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};

on_both_backends!(statuspage_v2_shapes_and_vocabulary);
on_both_backends!(browser: atlassians_clients_read_a_page_by_its_path);

async fn get(s: &Server, path: &str) -> Value {
    let r = s
        .send(Method::GET, &format!("/s/acme/api/v2/{path}"), None, None)
        .await;
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert!(r.header("etag").is_some());
    r.body
}

async fn statuspage_v2_shapes_and_vocabulary(b: Backend) {
    let s = Server::start(b).await;
    let p = s
        .post(
            "/api/v1/statuspages",
            json!({"name": "Acme", "slug": "acme", "timeZone": "Europe/Paris"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let g = s.group(p, "Core").await;
    let api = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "statusPageId": p, "groupId": g, "status": "degraded", "description": "REST"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let web = s.component(p, "Web").await;
    let inc = s.post("/api/v1/incidents", json!({"title": "Slow API", "statusPageId": p, "impact": "minor", "message": "Looking", "componentIds": [api]})).await.data(201)["id"].as_i64().unwrap();
    s.post(
        &format!("/api/v1/incidents/{inc}/updates"),
        json!({"message": "Watching", "status": "monitoring"}),
    )
    .await
    .data(201);
    let old = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Old", "statusPageId": p, "status": "resolved"}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let later = s.post("/api/v1/maintenance", json!({"title": "DB", "statusPageId": p, "scheduledStartTime": "2099-01-01T00:00:00.000Z", "scheduledEndTime": "2099-01-01T02:00:00.000Z", "componentIds": [web]})).await.data(201)["id"].as_i64().unwrap();
    let now = s.post("/api/v1/maintenance", json!({"title": "Cache", "statusPageId": p, "scheduledStartTime": "2020-01-01T00:00:00.000Z", "scheduledEndTime": "2099-01-01T00:00:00.000Z", "componentIds": [web]})).await.data(201)["id"].as_i64().unwrap();
    s.post_empty(&format!("/api/v1/maintenance/{now}/start"))
        .await
        .data(200);

    let summary = get(&s, "summary.json").await;
    let mut keys: Vec<&str> = summary
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "components",
            "incidents",
            "page",
            "scheduled_maintenances",
            "status"
        ]
    );
    let page = &summary["page"];
    assert_eq!(page["id"], p.to_string());
    assert_eq!(page["name"], "Acme");
    assert_eq!(
        page["url"],
        format!("{}/s/acme", s.base),
        "absolute, like Statuspage's"
    );
    assert_eq!(page["time_zone"], "Europe/Paris");
    assert!(page["updated_at"].is_string());
    assert_eq!(
        summary["status"],
        json!({"indicator": "minor", "description": "Partially Degraded Service"}),
        "Statuspage's words"
    );

    let comps = summary["components"].as_array().unwrap();
    let by_name = |n: &str| comps.iter().find(|c| c["name"] == n).unwrap().clone();
    let a = by_name("API");
    assert_eq!(a["id"], api.to_string());
    assert_eq!(a["status"], "degraded_performance");
    assert_eq!(a["group_id"], format!("group-{g}"));
    assert_eq!(a["group"], false);
    assert_eq!(a["page_id"], p.to_string());
    assert_eq!(a["description"], "REST");
    for field in [
        "created_at",
        "updated_at",
        "position",
        "showcase",
        "start_date",
        "only_show_if_degraded",
    ] {
        assert!(a.get(field).is_some(), "component field {field}");
    }
    assert_eq!(by_name("Web")["status"], "under_maintenance");
    let group = by_name("Core");
    assert_eq!(group["group"], true);
    assert_eq!(group["id"], format!("group-{g}"));
    assert_eq!(group["components"], json!([api.to_string()]));
    assert_eq!(
        group["status"], "degraded_performance",
        "a group shows its worst member"
    );
    // As Statuspage lists them: the group's row, its members, then the rest,
    // counted through from 1.
    let order: Vec<(&str, i64)> = comps
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["position"].as_i64().unwrap()))
        .collect();
    assert_eq!(order, [("Core", 1), ("API", 2), ("Web", 3)]);

    let open = summary["incidents"].as_array().unwrap();
    assert_eq!(open.len(), 1, "summary lists unresolved incidents");
    let i = &open[0];
    assert_eq!(i["id"], inc.to_string());
    assert_eq!(i["name"], "Slow API");
    assert_eq!(i["status"], "monitoring");
    assert_eq!(i["impact"], "minor");
    assert!(i["monitoring_at"].is_string() && i["resolved_at"].is_null());
    assert_eq!(i["shortlink"], format!("{}/s/acme/incidents/{inc}", s.base));
    assert_eq!(i["components"][0]["id"], api.to_string());
    let u = &i["incident_updates"][0];
    assert_eq!(
        (
            u["status"].clone(),
            u["body"].clone(),
            u["incident_id"].clone()
        ),
        (
            json!("monitoring"),
            json!("Watching"),
            json!(inc.to_string())
        )
    );
    for field in [
        "id",
        "created_at",
        "updated_at",
        "display_at",
        "affected_components",
        "deliver_notifications",
        "custom_tweet",
        "tweet_id",
    ] {
        assert!(u.get(field).is_some(), "update field {field}");
    }
    let sm = summary["scheduled_maintenances"].as_array().unwrap();
    assert_eq!(sm.len(), 2);
    let active = sm
        .iter()
        .find(|m| m["id"].as_str() == Some(now.to_string().as_str()))
        .unwrap();
    assert_eq!(active["status"], "in_progress");
    assert_eq!(active["impact"], "maintenance");
    assert_eq!(active["scheduled_for"], "2020-01-01T00:00:00.000Z");
    assert_eq!(active["scheduled_until"], "2099-01-01T00:00:00.000Z");

    assert_eq!(
        get(&s, "status.json").await,
        json!({"page": page, "status": summary["status"]})
    );
    assert_eq!(
        get(&s, "components.json").await["components"],
        summary["components"]
    );
    let all = get(&s, "incidents.json").await["incidents"].clone();
    let ids: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [old.to_string(), inc.to_string()],
        "all states, newest first"
    );
    assert_eq!(
        get(&s, "incidents/unresolved.json").await["incidents"],
        summary["incidents"]
    );
    assert_eq!(
        get(&s, "scheduled-maintenances.json").await["scheduled_maintenances"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let up =
        get(&s, "scheduled-maintenances/upcoming.json").await["scheduled_maintenances"].clone();
    assert_eq!(
        up.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].clone())
            .collect::<Vec<_>>(),
        [json!(later.to_string())]
    );
    let act = get(&s, "scheduled-maintenances/active.json").await["scheduled_maintenances"].clone();
    assert_eq!(
        act.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].clone())
            .collect::<Vec<_>>(),
        [json!(now.to_string())]
    );

    // scheduled-maintenances.json keeps completed windows, as Statuspage's does.
    s.post_empty(&format!("/api/v1/maintenance/{now}/complete"))
        .await
        .data(200);
    let recent = get(&s, "scheduled-maintenances.json").await["scheduled_maintenances"].clone();
    let states: Vec<(Value, Value)> = recent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].clone(), m["status"].clone()))
        .collect();
    assert_eq!(
        states,
        [
            (json!(later.to_string()), json!("scheduled")),
            (json!(now.to_string()), json!("completed"))
        ]
    );
    assert_eq!(
        get(&s, "scheduled-maintenances/active.json").await["scheduled_maintenances"],
        json!([])
    );

    // A write shows at once; a private page is not there.
    s.post(
        &format!("/api/v1/incidents/{inc}/resolve"),
        json!({"message": "Fine"}),
    )
    .await
    .data(200);
    assert_eq!(
        get(&s, "incidents/unresolved.json").await["incidents"],
        json!([])
    );
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    s.send(Method::GET, "/s/acme/api/v2/summary.json", None, None)
        .await
        .problem(404);
}

/// The clients people already use with Statuspage, pointed at an Upstate
/// page's URL: the `statuspage.io` npm client (which reads below the URL it
/// is given) and Atlassian's own embeddable `<statuspage-widget>` in
/// Chromium on another site (which replaces the URL's path with
/// `/api/v2/summary.json` and keeps its query: `?page=` names the page).
async fn atlassians_clients_read_a_page_by_its_path(b: Backend) {
    use crate::browser::{Driver, browser_available, other_site};
    use crate::support::{peers, root};
    let modules = peers().join("browser-test/node_modules");
    if !browser_available("atlassians_clients_read_a_page_by_its_path")
        || !crate::support::peers_available(
            "atlassians_clients_read_a_page_by_its_path",
            &[
                modules.join("statuspage.io/package.json"),
                modules.join("@statuspage/status-widget/dist/index.js"),
            ],
        )
    {
        return;
    }
    let s = Server::start(b).await;
    // Another page first, so the page asked for is not the default one.
    s.page("other").await;
    let p = s.page("acme").await;
    let g = s.group(p, "Core").await;
    let api = s
        .post(
            "/api/v1/components",
            json!({"name": "API", "statusPageId": p, "groupId": g}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.component(p, "Web").await;
    s.post(
        "/api/v1/incidents",
        json!({"title": "API errors", "statusPageId": p, "impact": "major", "message": "Looking",
               "componentIds": [api],
               "componentStatuses": [{"componentId": api, "status": "partial_outage"}]}),
    )
    .await
    .data(201);

    let out = std::process::Command::new("node")
        .arg(root().join("tests/consumers/statuspage_client.js"))
        .arg(&modules)
        .arg(format!("{}/s/acme", s.base))
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(read["summary"]["page"]["name"], "Page acme");
    assert_eq!(
        read["status"]["status"],
        json!({"indicator": "major", "description": "Partial System Outage"})
    );
    let names: Vec<&str> = read["components"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Core", "API", "Web"]);
    assert_eq!(read["unresolved"]["incidents"][0]["name"], "API errors");
    assert_eq!(read["incidents"]["incidents"][0]["name"], "API errors");
    assert!(read["maintenances"]["scheduled_maintenances"].is_array());
    assert!(read["upcoming"]["scheduled_maintenances"].is_array());

    // The widget on someone else's site.
    let widget = std::fs::read_to_string(modules.join("@statuspage/status-widget/dist/index.js"))
        .unwrap()
        .replace("</script", "<\\/script");
    let host = other_site(format!(
        "<!doctype html><html lang=en><head><title>Our app</title><script>{widget}</script></head>\
         <body><statuspage-widget src=\"{}/s/acme?page=acme\" appearance=\"badge\"></statuspage-widget></body></html>",
        s.base
    ))
    .await;
    let d = Driver::start(&[]).await;
    d.c().goto(&host).await.unwrap();
    let shown = d
        .until(
            "const w = document.querySelector('statuspage-widget'); \
             return !!w && !!w.shadowRoot && w.shadowRoot.textContent.includes('Partial System Outage')",
            crate::browser::STEP_WITHIN,
        )
        .await;
    let text = d
        .js("const w = document.querySelector('statuspage-widget'); return w && w.shadowRoot ? w.shadowRoot.innerHTML : 'no shadow root'")
        .await;
    assert!(
        shown.is_some(),
        "the widget shows the page's status: {text}"
    );
    assert!(
        text.as_str().unwrap().contains("major"),
        "the indicator is its class: {text}"
    );
    d.screenshot("public/atlassian-widget").await;
    d.quit().await;
}
