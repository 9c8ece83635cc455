use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use reqwest::Method;
use serde_json::json;
use std::collections::BTreeSet;

on_both_backends!(
    openapi_documents_every_route,
    documented_answers_are_the_ones_served,
    the_document_passes_a_real_validator_and_says_what_the_server_accepts,
    every_guarded_operation_refuses_strangers
);

/// Every route the server serves, as this test suite exercises them.
const SERVED: &[(&str, &str)] = &[
    ("get", "/api/health"),
    ("get", "/api/public/status/{slug}/events"),
    ("post", "/api/verify-page-password"),
    ("get", "/api/calendar"),
    ("get", "/api/badge"),
    ("get", "/api/widget"),
    ("get", "/api/manifest"),
    ("get", "/api/v1/status"),
    ("post", "/api/translate"),
    ("put", "/api/v1/statuspages/{id}/password"),
    ("patch", "/api/statuspages/{id}"),
    ("put", "/api/statuspages/{id}/password"),
    ("delete", "/api/statuspages/{id}/password"),
    ("delete", "/api/v1/statuspages/{id}/password"),
    ("get", "/api/v1/statuspages/{id}/access"),
    ("put", "/api/v1/statuspages/{id}/access"),
    ("get", "/api/statuspages/{id}/access"),
    ("put", "/api/statuspages/{id}/access"),
    ("get", "/api/v1/statuspages/{id}/viewers"),
    ("post", "/api/v1/statuspages/{id}/viewers"),
    ("delete", "/api/v1/statuspages/{id}/viewers/{viewerId}"),
    ("get", "/api/statuspages/{id}/viewers"),
    ("post", "/api/statuspages/{id}/viewers"),
    ("delete", "/api/statuspages/{id}/viewers/{viewerId}"),
    ("post", "/api/viewer-sign-in"),
    ("get", "/api/viewer-sign-in"),
    ("post", "/api/viewer-sign-in/confirm"),
    ("get", "/api/viewer-links"),
    ("post", "/api/viewer-links/reset"),
    ("post", "/api/v1/statuspages/{id}/viewers/{viewerId}/reset"),
    ("get", "/api/auth/sso/viewer"),
    ("post", "/api/viewer-sign-out"),
    ("post", "/api/statuspages/{id}/viewers/{viewerId}/reset"),
    ("get", "/api/v1/statuspages/{id}/audiences"),
    ("post", "/api/v1/statuspages/{id}/audiences"),
    ("put", "/api/v1/statuspages/{id}/audiences/{audienceId}"),
    ("delete", "/api/v1/statuspages/{id}/audiences/{audienceId}"),
    ("get", "/api/statuspages/{id}/audiences"),
    ("post", "/api/statuspages/{id}/audiences"),
    ("put", "/api/statuspages/{id}/audiences/{audienceId}"),
    ("delete", "/api/statuspages/{id}/audiences/{audienceId}"),
    ("get", "/api/v1/statuspages/{id}/viewer-provider"),
    ("put", "/api/v1/statuspages/{id}/viewer-provider"),
    ("delete", "/api/v1/statuspages/{id}/viewer-provider"),
    ("get", "/api/statuspages/{id}/viewer-provider"),
    ("put", "/api/statuspages/{id}/viewer-provider"),
    ("delete", "/api/statuspages/{id}/viewer-provider"),
    ("get", "/api/quicklinks"),
    ("get", "/api/incidents"),
    ("get", "/api/incident-templates"),
    ("post", "/api/incident-templates"),
    ("get", "/api/incident-templates/{id}"),
    ("put", "/api/incident-templates/{id}"),
    ("delete", "/api/incident-templates/{id}"),
    ("get", "/api/incidents/{id}/rca"),
    ("put", "/api/incidents/{id}/rca"),
    ("post", "/api/incidents/{id}/rca/generate"),
    ("get", "/api/admin/system"),
    ("get", "/api/admin/cache"),
    ("post", "/api/admin/reset-rate-limits"),
    ("post", "/api/markdown/preview"),
    ("get", "/api/settings"),
    ("put", "/api/settings"),
    ("get", "/api/features"),
    ("put", "/api/features"),
    ("get", "/api/sso-settings"),
    ("put", "/api/sso-settings"),
    ("post", "/api/sso-settings/check"),
    ("get", "/api/auth/sso"),
    ("get", "/api/auth/sso/step-up"),
    ("get", "/api/auth/sso/callback"),
    ("get", "/api/export-settings"),
    ("put", "/api/export-settings"),
    ("post", "/api/admin/cache"),
    ("get", "/api/admin/export"),
    ("post", "/api/admin/export"),
    ("post", "/api/admin/import/statuspage"),
    ("post", "/api/admin/import/instatus"),
    ("post", "/api/admin/import/cachet"),
    ("get", "/api/statuspages/current"),
    ("post", "/api/statuspages/current"),
    ("put", "/api/components/{id}"),
    ("put", "/api/incidents/{id}"),
    ("put", "/api/maintenance/{id}"),
    ("get", "/api/groups"),
    ("post", "/api/groups"),
    ("get", "/api/groups/{id}"),
    ("put", "/api/groups/{id}"),
    ("patch", "/api/groups/{id}"),
    ("delete", "/api/groups/{id}"),
    ("put", "/api/groups/reorder"),
    ("post", "/api/incident-updates"),
    ("delete", "/api/incident-updates/{id}"),
    ("patch", "/api/incident-updates/{id}"),
    ("get", "/api/components/{id}/details"),
    ("get", "/api/components/{id}/response-times"),
    ("post", "/api/components/{id}/reset-stats"),
    ("get", "/api/components"),
    ("post", "/api/components"),
    ("get", "/api/components/{id}"),
    ("patch", "/api/components/{id}"),
    ("delete", "/api/components/{id}"),
    ("patch", "/api/components/{id}/status"),
    ("get", "/api/component-groups"),
    ("post", "/api/component-groups"),
    ("get", "/api/component-groups/{id}"),
    ("patch", "/api/component-groups/{id}"),
    ("delete", "/api/component-groups/{id}"),
    ("get", "/api/maintenance"),
    ("post", "/api/maintenance"),
    ("get", "/api/maintenance/{id}"),
    ("patch", "/api/maintenance/{id}"),
    ("delete", "/api/maintenance/{id}"),
    ("post", "/api/maintenance/{id}/start"),
    ("post", "/api/maintenance/{id}/complete"),
    ("post", "/api/maintenance/{id}/cancel"),
    ("post", "/api/incidents"),
    ("get", "/api/incidents/{id}"),
    ("patch", "/api/incidents/{id}"),
    ("delete", "/api/incidents/{id}"),
    ("post", "/api/incidents/{id}/updates"),
    ("post", "/api/incidents/{id}/resolve"),
    ("post", "/api/quicklinks"),
    ("get", "/api/quicklinks/{id}"),
    ("put", "/api/quicklinks/{id}"),
    ("delete", "/api/quicklinks/{id}"),
    ("get", "/api/notifications"),
    ("post", "/api/notifications"),
    ("get", "/api/notifications/{id}"),
    ("put", "/api/notifications/{id}"),
    ("delete", "/api/notifications/{id}"),
    ("post", "/api/notifications/{id}/test"),
    ("get", "/api/notifications/{id}/deliveries"),
    ("get", "/api/subscribers"),
    ("post", "/api/subscribers"),
    ("get", "/api/subscribers/verify"),
    ("get", "/api/subscribers/unsubscribe"),
    ("post", "/api/subscribers/unsubscribe"),
    ("delete", "/api/subscribers/{id}"),
    ("get", "/api/subscribers/{id}/deliveries"),
    ("post", "/api/subscribers/import"),
    ("get", "/api/monitor/check"),
    ("post", "/api/monitor/check"),
    ("get", "/api/maintenance/recurring"),
    ("post", "/api/maintenance/recurring"),
    ("post", "/api/incidents/notice-preview"),
    ("post", "/api/maintenance/recurring/preview"),
    ("get", "/api/maintenance/recurring/{id}"),
    ("put", "/api/maintenance/recurring/{id}"),
    ("delete", "/api/maintenance/recurring/{id}"),
    ("get", "/api/integrations"),
    ("post", "/api/integrations"),
    ("get", "/api/integrations/{id}"),
    ("put", "/api/integrations/{id}"),
    ("delete", "/api/integrations/{id}"),
    ("post", "/api/integrations/{id}/token"),
    ("post", "/api/integrations/{id}/rules"),
    ("delete", "/api/integrations/{id}/rules/{index}"),
    ("get", "/api/integrations/{id}/events"),
    ("post", "/api/integrations/alertmanager/{token}"),
    ("post", "/api/integrations/grafana/{token}"),
    ("post", "/api/integrations/pagerduty/{token}"),
    ("post", "/api/integrations/opsgenie/{token}"),
    ("post", "/api/integrations/datadog/{token}"),
    ("post", "/api/integrations/generic/{token}"),
    ("get", "/api/alert-drafts"),
    ("get", "/api/alert-drafts/{id}"),
    ("post", "/api/alert-drafts/{id}/approve"),
    ("post", "/api/alert-drafts/{id}/dismiss"),
    ("get", "/api/monitors"),
    ("post", "/api/monitors"),
    ("get", "/api/monitors/{id}"),
    ("put", "/api/monitors/{id}"),
    ("delete", "/api/monitors/{id}"),
    ("get", "/api/monitors/{id}/checks"),
    ("post", "/api/monitors/{id}/test"),
    ("get", "/api/third-party"),
    ("post", "/api/third-party"),
    ("get", "/api/third-party/{id}"),
    ("patch", "/api/third-party/{id}"),
    ("delete", "/api/third-party/{id}"),
    ("post", "/api/third-party/{id}/poll"),
    ("get", "/api/managed"),
    ("put", "/api/managed"),
    ("get", "/api/selftest"),
    ("get", "/api/metrics"),
    ("get", "/api/heartbeat/{token}"),
    ("post", "/api/heartbeat/{token}"),
    ("get", "/api/subscribers/manage"),
    ("post", "/api/subscribers/manage"),
    ("get", "/api/push/subscribe"),
    ("post", "/api/push/subscribe"),
    ("delete", "/api/push/subscribe"),
    ("get", "/api/comments"),
    ("post", "/api/comments"),
    ("get", "/api/comments/admin"),
    ("patch", "/api/comments/admin/{id}"),
    ("delete", "/api/comments/admin/{id}"),
    ("get", "/api/v2/summary.json"),
    ("get", "/api/v2/status.json"),
    ("get", "/api/v2/components.json"),
    ("get", "/api/v2/incidents.json"),
    ("get", "/api/v2/incidents/unresolved.json"),
    ("get", "/api/v2/scheduled-maintenances.json"),
    ("get", "/api/v2/scheduled-maintenances/upcoming.json"),
    ("get", "/api/v2/scheduled-maintenances/active.json"),
    ("get", "/api/public/status/{slug}"),
    ("get", "/api/public/status/{slug}/components"),
    ("get", "/api/public/status/{slug}/incidents"),
    ("get", "/api/public/status/{slug}/maintenance"),
    ("get", "/api/public/status/{slug}/uptime"),
    ("get", "/api/v1/public/{slug}"),
    ("get", "/api/v1/statuspages"),
    ("post", "/api/v1/statuspages"),
    ("get", "/api/v1/statuspages/{id}"),
    ("patch", "/api/v1/statuspages/{id}"),
    ("delete", "/api/v1/statuspages/{id}"),
    ("get", "/api/v1/components"),
    ("post", "/api/v1/components"),
    ("get", "/api/v1/components/{id}"),
    ("patch", "/api/v1/components/{id}"),
    ("delete", "/api/v1/components/{id}"),
    ("patch", "/api/v1/components/{id}/status"),
    ("get", "/api/v1/component-groups"),
    ("post", "/api/v1/component-groups"),
    ("get", "/api/v1/component-groups/{id}"),
    ("patch", "/api/v1/component-groups/{id}"),
    ("delete", "/api/v1/component-groups/{id}"),
    ("get", "/api/v1/incidents"),
    ("post", "/api/v1/incidents"),
    ("get", "/api/v1/incidents/{id}"),
    ("patch", "/api/v1/incidents/{id}"),
    ("delete", "/api/v1/incidents/{id}"),
    ("post", "/api/v1/incidents/{id}/updates"),
    ("post", "/api/v1/incidents/{id}/resolve"),
    ("get", "/api/v1/maintenance"),
    ("post", "/api/v1/maintenance"),
    ("get", "/api/v1/maintenance/{id}"),
    ("patch", "/api/v1/maintenance/{id}"),
    ("delete", "/api/v1/maintenance/{id}"),
    ("post", "/api/v1/maintenance/{id}/start"),
    ("post", "/api/v1/maintenance/{id}/complete"),
    ("post", "/api/v1/maintenance/{id}/cancel"),
    ("get", "/api/v2/status"),
    ("get", "/api/v2/components"),
    ("post", "/api/v2/incidents"),
    ("patch", "/api/v2/incidents/{id}"),
    ("post", "/api/v2/maintenance"),
    ("get", "/api/v2/metrics"),
    ("get", "/api/audit"),
    ("get", "/api/audit-events"),
    ("get", "/api/audit-events/export"),
    ("get", "/api/audit-events/statistics"),
    ("post", "/api/audit-events/verify"),
    ("post", "/api/auth/login"),
    ("post", "/api/auth/logout"),
    ("get", "/api/auth/me"),
    ("get", "/api/auth/permissions"),
    ("post", "/api/auth/change-password"),
    ("post", "/api/auth/setup"),
    ("get", "/api/csrf"),
    ("get", "/api/admin/roles"),
    ("post", "/api/auth/2fa/setup"),
    ("post", "/api/auth/2fa/verify-setup"),
    ("get", "/api/auth/2fa/status"),
    ("post", "/api/auth/2fa/disable"),
    ("post", "/api/auth/2fa/regenerate-codes"),
    ("post", "/api/auth/verify-2fa"),
    ("post", "/api/admin/step-up"),
    ("get", "/api/admin/step-up"),
    ("post", "/api/admin/step-up/verify-password"),
    ("post", "/api/admin/step-up/verify-totp"),
    ("get", "/api/admin/step-up/{token}"),
    ("get", "/api/admin/users"),
    ("post", "/api/admin/users"),
    ("get", "/api/admin/users/{id}"),
    ("patch", "/api/admin/users/{id}"),
    ("delete", "/api/admin/users/{id}"),
    ("post", "/api/admin/users/{id}/actions"),
    ("post", "/api/admin/users/{id}/reset-password"),
    ("post", "/api/admin/users/{id}/reset-2fa"),
    ("post", "/api/admin/users/{id}/revoke-sessions"),
    ("get", "/api/api-keys"),
    ("post", "/api/api-keys"),
    ("delete", "/api/api-keys"),
    ("patch", "/api/api-keys/{id}"),
    ("delete", "/api/api-keys/{id}"),
    ("get", "/api/statuspages"),
    ("post", "/api/statuspages"),
    ("get", "/api/statuspages/{id}"),
    ("put", "/api/statuspages/{id}"),
    ("delete", "/api/statuspages/{id}"),
    ("get", "/s/{slug}/api/v2/summary.json"),
    ("get", "/s/{slug}/api/v2/status.json"),
    ("get", "/s/{slug}/api/v2/components.json"),
    ("get", "/s/{slug}/api/v2/incidents.json"),
    ("get", "/s/{slug}/api/v2/incidents/unresolved.json"),
    ("get", "/s/{slug}/api/v2/scheduled-maintenances.json"),
    (
        "get",
        "/s/{slug}/api/v2/scheduled-maintenances/upcoming.json",
    ),
    ("get", "/s/{slug}/api/v2/scheduled-maintenances/active.json"),
    ("get", "/api/feed/rss"),
];

async fn openapi_documents_every_route(b: Backend) {
    let s = Server::start(b).await;
    let r = s.send(Method::GET, "/api/openapi.json", None, None).await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    assert_eq!(
        doc["info"]["license"]["name"], "AGPL-3.0-only",
        "Upstate's license, not a library's"
    );
    assert!(
        doc["info"]["contact"].is_null(),
        "no library author as the contact"
    );
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if ["get", "post", "patch", "put", "delete"].contains(&method.as_str()) {
                documented.insert((method.clone(), path.clone()));
                assert!(
                    op["responses"].as_object().is_some_and(|r| !r.is_empty()),
                    "{method} {path} has responses"
                );
                if path.starts_with("/api/v1/")
                    && !path.contains("/public/")
                    && path != "/api/v1/status"
                    || path.starts_with("/api/v2/") && !path.ends_with(".json")
                    || path.starts_with("/api/audit")
                {
                    assert!(
                        op["responses"]["401"].is_object(),
                        "{method} {path} documents 401"
                    );
                    assert!(
                        op["security"]
                            .as_array()
                            .unwrap()
                            .contains(&json!({"api_key": []})),
                        "{method} {path} takes a key"
                    );
                }
            }
        }
    }
    let served: BTreeSet<(String, String)> = SERVED
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(
        documented, served,
        "documented routes are exactly the served ones"
    );
    // Bodies and errors have schemas.
    for schema in [
        "Problem",
        "StatusPage",
        "Component",
        "Incident",
        "Maintenance",
        "NewIncidentInput",
        "StatusSummary",
    ] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema}"
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["api_key"]["scheme"],
        "bearer"
    );
    let mut refs = vec![];
    collect_refs(&doc, &mut refs);
    assert!(refs.len() > 50);
    for r in refs {
        let name = r
            .strip_prefix("#/components/schemas/")
            .expect("local schema ref");
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling $ref {r}"
        );
    }

    // And every documented operation is really routed: no "no route" 404, no 405.
    let p = s.page("docs").await;
    let c = s.component(p, "A").await;
    let g = s.group(p, "G").await;
    let i = s.incident(p, "I").await["id"].as_i64().unwrap();
    let m = s.post("/api/v1/maintenance", json!({"title": "M", "statusPageId": p, "scheduledStartTime": "2030-01-01T00:00:00.000Z", "scheduledEndTime": "2030-01-01T01:00:00.000Z"})).await.data(201)["id"].as_i64().unwrap();
    for (method, path) in &documented {
        let id = if path.contains("component-groups") {
            g
        } else if path.contains("components") {
            c
        } else if path.contains("incidents") {
            i
        } else if path.contains("maintenance") {
            m
        } else {
            p
        };
        let url = path
            .replace("{slug}", "docs")
            .replace("{id}", &id.to_string())
            .replace("{token}", "t");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        if method == Method::DELETE || path.ends_with("/events") {
            // Proven routed by the method table above and by the resource
            // tests (an event stream never ends, so it is not read here).
            continue;
        }
        let r = s
            .send(method.clone(), &url, Some(&s.key), Some(json!({})))
            .await;
        assert_ne!(r.status, 405, "{method} {url}");
        assert!(
            !(r.status == 404 && r.body["detail"] == "no route matches this path"),
            "{method} {url} is documented but not routed"
        );
    }
    // The reference page and its assets are served from the binary.
    let ui = reqwest::get(format!("{}/api/docs/", s.base)).await.unwrap();
    assert_eq!(ui.status(), 200);
    let html = ui.text().await.unwrap();
    assert!(
        html.contains("swagger-ui-bundle.js") && !html.contains("https://"),
        "no external assets"
    );
    assert_eq!(
        reqwest::get(format!("{}/api/docs/swagger-ui-bundle.js", s.base))
            .await
            .unwrap()
            .status(),
        200
    );
}

fn collect_refs(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                match (k.as_str(), x.as_str()) {
                    ("$ref", Some(r)) => out.push(r.to_string()),
                    _ => collect_refs(x, out),
                }
            }
        }
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

/// Asserts the document lists `status` for the operation, with `content_type`
/// among its media types when given.
#[track_caller]
fn documented(
    doc: &serde_json::Value,
    method: &str,
    path: &str,
    status: u16,
    content_type: Option<&str>,
) {
    let response = &doc["paths"][path][method]["responses"][status.to_string()];
    assert!(
        response.is_object(),
        "{method} {path} answers {status} but does not document it"
    );
    if let Some(ct) = content_type {
        let media = ct.split(';').next().unwrap().trim();
        assert!(
            response["content"][media].is_object(),
            "{method} {path} {status} answers {media}: {response}"
        );
    }
}

async fn documented_answers_are_the_ones_served(b: Backend) {
    let s = Server::start(b).await;
    let doc = s
        .send(Method::GET, "/api/openapi.json", None, None)
        .await
        .body;
    s.page("acme").await;
    for (query, ct) in [
        ("", "image/svg+xml"),
        ("&format=shields", "application/json"),
    ] {
        let r = s
            .send(
                Method::GET,
                &format!("/api/badge?page=acme{query}"),
                None,
                None,
            )
            .await;
        assert_eq!(
            r.header("content-type").map(|c| c.starts_with(ct)),
            Some(true),
            "{query}"
        );
        documented(&doc, "get", "/api/badge", 200, r.header("content-type"));
    }
    for query in ["", "?format=json", "?format=csv"] {
        let r = s.get(&format!("/api/audit-events/export{query}")).await;
        assert_eq!(r.status, 200);
        documented(
            &doc,
            "get",
            "/api/audit-events/export",
            200,
            r.header("content-type"),
        );
    }
    let r = s
        .send(
            Method::POST,
            "/api/verify-page-password",
            None,
            Some(json!({"slug": "nope", "password": "x"})),
        )
        .await;
    r.problem(404);
    documented(
        &doc,
        "post",
        "/api/verify-page-password",
        404,
        r.header("content-type"),
    );
    s.db.user("me@example.com", "viewer");
    let me = Browser::signed_in(&s, "me@example.com").await;
    for path in [
        "/api/auth/2fa/verify-setup",
        "/api/auth/2fa/regenerate-codes",
    ] {
        let (status, body, headers) = me
            .send(Method::POST, path, Some(json!({"code": "123456"})))
            .await;
        assert_eq!(status, 409, "{path}: {body}");
        documented(
            &doc,
            "post",
            path,
            409,
            headers.get("content-type").and_then(|v| v.to_str().ok()),
        );
    }
}

/// The document as a real validator (PyPI `openapi-spec-validator`) reads
/// it, every operation declaring who may call it, and every enum it lists
/// accepted by the server as written (the reference page's "Try it out"
/// sends exactly these).
async fn the_document_passes_a_real_validator_and_says_what_the_server_accepts(b: Backend) {
    let validator = crate::support::peers().join("consumers/venv/bin/openapi-spec-validator");
    if !crate::support::peers_available("openapi validator", std::slice::from_ref(&validator)) {
        return;
    }
    let s = Server::start(b).await;
    let r = s.get("/api/openapi.json").await;
    assert_eq!(r.status, 200);
    let doc = r.body;
    let file = s.db.dir.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = std::process::Command::new(&validator)
        .arg(&file)
        .output()
        .expect("run openapi-spec-validator");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Two more readers people point at documents: swagger-cli's validator
    // (it wants the license as an SPDX identifier) and Redocly's linter with
    // its recommended rules (no errors; warnings are advice).
    let bin = crate::support::peers().join("browser-test/node_modules/.bin");
    let (swagger, redocly) = (bin.join("swagger-cli"), bin.join("redocly"));
    if crate::support::peers_available("openapi linters", &[swagger.clone(), redocly.clone()]) {
        for (tool, args) in [
            (&swagger, vec!["validate".to_string()]),
            (&redocly, vec!["lint".into(), "--format=summary".into()]),
        ] {
            let out = std::process::Command::new(tool)
                .args(&args)
                .arg(&file)
                // Nothing leaves this machine: no telemetry, no update check.
                .env("REDOCLY_TELEMETRY", "off")
                .env("REDOCLY_SUPPRESS_UPDATE_NOTICE", "true")
                .output()
                .expect("run the linter");
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{}: {said}", tool.display());
            assert!(!said.contains("error "), "{}: {said}", tool.display());
        }
    }

    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert!(
                op["security"].is_array(),
                "{method} {path} declares no security"
            );
        }
    }
    let enums = |name: &str| -> Vec<String> {
        doc["components"]["schemas"][name]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} is an enum"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };

    // A body the server cannot do without says so: changing a password
    // without either is refused, and the document requires both.
    let schema = &doc["components"]["schemas"]["ChangePasswordInput"];
    assert_eq!(
        schema["required"],
        json!(["currentPassword", "newPassword"]),
        "{schema}"
    );
    // A proof is the password or a code, a second factor a code or a
    // recovery code: one of them.
    for (name, fields) in [
        ("ProofInput", ["password", "code"]),
        ("SecondFactorInput", ["code", "recoveryCode"]),
    ] {
        let schema = &doc["components"]["schemas"][name];
        let branches = schema["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {schema}"));
        let required: Vec<&serde_json::Value> = branches.iter().map(|b| &b["required"]).collect();
        assert_eq!(
            required,
            [&json!([fields[0]]), &json!([fields[1]])],
            "{schema}"
        );
    }
    // A preview is of a change to an incident or of a new one on a page:
    // exactly one of the two ids.
    let preview = &doc["components"]["schemas"]["NoticeInput"];
    let branches: Vec<&serde_json::Value> = preview["allOf"][1]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{preview}"))
        .iter()
        .map(|b| &b["required"])
        .collect();
    assert_eq!(
        branches,
        [&json!(["incidentId"]), &json!(["statusPageId"])],
        "{preview}"
    );
    // A scope list names each scope once (uniqueItems), as the server asks.
    let keys = doc["paths"]["/api/api-keys"]["post"]["requestBody"].to_string();
    let keys = if keys.contains("$ref") {
        doc["components"]["schemas"]["NewKeyInput"].to_string()
    } else {
        keys
    };
    assert!(keys.contains("\"uniqueItems\":true"), "{keys}");

    let p = s.page("acme").await;
    let c = s.component(p, "API").await;
    for status in enums("ComponentStatus") {
        let r = s
            .patch(
                &format!("/api/v1/components/{c}/status"),
                json!({"status": status}),
            )
            .await;
        assert_eq!(r.data(200)["status"], status.as_str());
    }
    let impacts = enums("Impact");
    for (i, status) in enums("IncidentStatus").iter().enumerate() {
        let impact = &impacts[i % impacts.len()];
        let body = json!({"title": "T", "statusPageId": p, "status": status, "impact": impact, "message": "m"});
        let made = s.post("/api/v1/incidents", body).await.data(201);
        assert_eq!(
            (&made["status"], &made["impact"]),
            (&json!(status), &json!(impact))
        );
    }
    for impact in &impacts {
        let body = json!({"title": "T", "statusPageId": p, "impact": impact});
        s.post("/api/v1/incidents", body).await.data(201);
    }
    for status in enums("MaintenanceStatus") {
        s.get(&format!("/api/v1/maintenance?status={status}"))
            .await
            .data(200);
    }
    for (i, role) in enums("Role").iter().enumerate() {
        s.db.user_with(&format!("u{i}@example.com"), role, crate::support::PASSWORD);
    }
    let owner = Browser::signed_in(&s, "u3@example.com").await;
    let (status, perms, _) = owner.send(Method::GET, "/api/auth/permissions", None).await;
    assert_eq!(status, 200);
    let mut served: Vec<String> = perms["data"]["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut documented = enums("Permission");
    served.sort();
    documented.sort();
    assert_eq!(
        served, documented,
        "an owner holds every documented permission"
    );
}

/// Every operation the document does not mark open (an empty security
/// requirement) answers a caller without a key or a session with a 401
/// problem, whatever it is sent; and the database is left as it was.
async fn every_guarded_operation_refuses_strangers(b: Backend) {
    let s = Server::start(b).await;
    let page = s.page("docs").await;
    let doc = s
        .send(Method::GET, "/api/openapi.json", None, None)
        .await
        .body;
    let audit_before = s.db.integers("SELECT COUNT(*) FROM audit_events").await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !["get", "post", "patch", "put", "delete"].contains(&method.as_str()) {
                continue;
            }
            let open = op["security"].as_array().is_some_and(|list| {
                list.iter()
                    .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
            });
            if open || path.ends_with("/events") {
                continue;
            }
            let url = path
                .replace("{slug}", "docs")
                .replace("{id}", &page.to_string())
                .replace("{token}", "t");
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = s.send(m, &url, None, Some(json!({"name": "x"}))).await;
            // The development-only route does not exist outside --dev.
            if path == "/api/admin/reset-rate-limits" {
                assert_eq!(r.status, 404, "{method} {path}");
                continue;
            }
            assert_eq!(r.status, 401, "{method} {path}: {}", r.body);
            r.problem(401);
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} guarded operations found");
    assert_eq!(
        s.db.integers("SELECT COUNT(*) FROM audit_events").await,
        audit_before,
        "nothing was written"
    );
}
