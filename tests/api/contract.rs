//! The document tells the truth: schemathesis (PyPI) generates requests for
//! every operation of `/api/openapi.json` and checks each answer against it,
//! once with an admin API key and once as a signed-in owner (cookie and
//! CSRF token), on both databases, for a bounded time. No answer may be a
//! server error, and every answer's status, content type, headers and body
//! must be ones the document lists for that operation.

use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use serde_json::json;

on_both_backends!(schemathesis_finds_no_server_error_and_no_undocumented_answer);

/// What every answer is held to (schemathesis's names).
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_headers_conformance,response_schema_conformance";

/// Seconds of generated requests per caller.
const SECONDS: &str = "40";

fn run(s: &Server, caller: &str, headers: &[String], only: Option<&str>, skip: Option<&str>) {
    let st = crate::support::root().join("target/consumers/venv/bin/schemathesis");
    let report = s.db.dir.path().join(format!("schemathesis-{caller}"));
    let mut cmd = std::process::Command::new(&st);
    cmd.arg("run")
        .arg(format!("{}/api/openapi.json", s.base))
        .args(["--checks", CHECKS])
        // The coverage phase fails inside schemathesis 4.32 itself (a
        // Hypothesis lambda-source error, not an answer of ours).
        .args(["--phases", "examples,fuzzing,stateful"])
        .args(["--max-time", SECONDS, "--workers", "2"])
        .args(["--request-timeout", "30", "--seed", "24"])
        .args(["--report", "ndjson", "--report-dir"])
        .arg(&report)
        .env("SCHEMATHESIS_HOOKS", "")
        .env(
            "HYPOTHESIS_STORAGE_DIRECTORY",
            s.db.dir.path().join("hypothesis"),
        );
    for h in headers {
        cmd.args(["-H", h]);
    }
    if let Some(regex) = only {
        cmd.args(["--include-path-regex", regex]);
    }
    if let Some(regex) = skip {
        cmd.args(["--exclude-path-regex", regex]);
    }
    let out = cmd.output().expect("run schemathesis");
    let said = String::from_utf8_lossy(&out.stdout);
    let summary = said.find("SUMMARY").map_or(said.as_ref(), |at| &said[at..]);
    assert!(
        out.status.success(),
        "schemathesis as {caller} found failures:\n{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        summary.contains("Tested:"),
        "schemathesis as {caller} tested nothing:\n{said}"
    );
    eprintln!("schemathesis as {caller}:\n{summary}");
}

async fn schemathesis_finds_no_server_error_and_no_undocumented_answer(b: Backend) {
    let st = crate::support::root().join("target/consumers/venv/bin/schemathesis");
    if !crate::support::peers_available("schemathesis", std::slice::from_ref(&st)) {
        return;
    }
    let s = Server::start_with(
        b,
        &[
            ("UPSTATE_API_RATE_PER_MINUTE", "0"),
            ("UPSTATE_API_RATE_PER_HOUR", "0"),
        ],
    )
    .await;
    // Something to find: a page with a group, components, an incident and
    // a maintenance window, so ids in paths meet real rows.
    let page = s.page("acme").await;
    let group = s.group(page, "Europe").await;
    let api = s.component(page, "API").await;
    s.post(
        "/api/v1/components",
        json!({"name": "Web", "statusPageId": page, "groupId": group}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/incidents",
        json!({"title": "Slow API", "statusPageId": page, "message": "Looking",
               "componentStatuses": [{"componentId": api, "status": "degraded"}]}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/maintenance",
        json!({"title": "Upgrade", "statusPageId": page, "componentIds": [api],
               "scheduledStartTime": crate::support::at_offset_ms(86_400_000),
               "scheduledEndTime": crate::support::at_offset_ms(90_000_000)}),
    )
    .await
    .data(201);
    let key = s.key.clone();
    s.db.user("owner@example.com", "owner");
    let person = Browser::signed_in(&s, "owner@example.com").await;
    let (cookie, csrf) = (person.cookie.clone(), person.csrf.clone());
    let server = &s;
    tokio::task::block_in_place(|| {
        run(
            server,
            "key",
            &[format!("Authorization: Bearer {key}")],
            None,
            None,
        );
        // The application routes people use, with the session and its CSRF
        // token (the management API takes keys only).
        run(
            server,
            "session",
            &[format!("Cookie: {cookie}"), format!("X-CSRF-Token: {csrf}")],
            Some("^/api/(?!v1/|v2/)"),
            // What would end the session the pass runs in (its own
            // routes are tested by tests/api/auth.rs and accounts.rs).
            Some("^/api/auth/(logout|change-password|2fa/disable)$"),
        );
    });
    assert!(
        !s.log().contains("ERROR"),
        "no server error was logged:\n{}",
        s.log()
    );
}
