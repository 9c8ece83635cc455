//! The static copy (`upstate export-static`): written by the binary, served
//! by a real static file server (Python's `http.server`), read as visitors
//! and integrations read the live service.

use crate::on_both_backends;
use crate::support::{Backend, Server, peers, peers_available};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

on_both_backends!(
    the_copy_reads_like_the_live_page,
    export_settings_refuse_bad_input_and_never_show_the_secret,
    the_copy_is_published_to_a_directory_after_each_change,
    the_copy_is_published_to_an_s3_bucket,
    one_bad_page_never_stops_the_copy_of_the_others,
    a_change_just_before_a_stop_is_in_the_copy
);
on_both_backends!(browser: the_static_copy_is_set_up_on_the_settings_screen_in_chromium);

/// A static file server over a directory: no knowledge of Upstate.
struct StaticHost {
    base: String,
    child: Child,
}

impl StaticHost {
    async fn start(dir: &Path) -> StaticHost {
        let port = crate::support::free_port();
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .arg("--directory")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3's http.server");
        // Dropped (killed and waited for) on every path from here.
        let host = StaticHost {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        for _ in 0..200 {
            if reqwest::get(&host.base).await.is_ok() {
                return host;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the static server did not start");
    }
}

impl Drop for StaticHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body at `url`.
async fn text_of(http: &reqwest::Client, url: &str) -> String {
    http.get(url).send().await.unwrap().text().await.unwrap()
}

/// Same-site links (`href`/`src` starting with one `/`) of a page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [" href=\"", " src=\""] {
        for part in html.split(attr).skip(1) {
            let value = part.split('"').next().unwrap_or("");
            if value.starts_with('/') && !value.starts_with("//") {
                let url = value.replace("&amp;", "&");
                out.push(url.split('#').next().unwrap_or("").to_string());
            }
        }
    }
    out
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read the copy") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

async fn the_copy_reads_like_the_live_page(b: Backend) {
    let s = Server::start(b).await;
    s.features(json!({"feeds": true, "calendar": true, "history": true, "comments": true}))
        .await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    s.component(page, "Website").await;
    let incident = s
        .post(
            "/api/v1/incidents",
            json!({"title": "API errors", "statusPageId": page, "impact": "major",
                "message": "Looking into it", "componentStatuses": [{"componentId": api, "status": "major_outage"}]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    s.post(
        &format!("/api/v1/incidents/{incident}/updates"),
        json!({"message": "Found the cause", "status": "identified"}),
    )
    .await
    .data(201);
    s.post(
        "/api/v1/maintenance",
        json!({"title": "DB upgrade", "statusPageId": page, "componentIds": [api],
            "scheduledStartTime": "2099-03-01T02:00:00.000Z", "scheduledEndTime": "2099-03-01T04:00:00.000Z"}),
    )
    .await
    .data(201);
    // Neither a private page nor one behind a password is copied.
    let hidden = s.page("hidden-one").await;
    s.component(hidden, "Secret service").await;
    s.patch(
        &format!("/api/v1/statuspages/{hidden}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    let gated = s.page("gated-one").await;
    s.patch(
        &format!("/api/v1/statuspages/{gated}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    s.set_page_password(gated, "open sesame").await;

    // Run as the live service is configured: its links are the live ones.
    let out = s.db.dir.path().join("copy");
    let out_arg = out.to_str().unwrap();
    let (ok, said, err) =
        s.db.cli(&["export-static", "--out", out_arg, "--public-url", &s.base]);
    assert!(ok, "{err}");
    assert!(said.contains("copied"), "{said}");
    assert!(
        !err.contains("not copied"),
        "every link of the copy was copied: {err}"
    );

    let host = StaticHost::start(&out).await;
    let http = reqwest::Client::new();

    // Every page, language and link a visitor can follow from the copy's
    // page is there.
    let mut todo = VecDeque::from(["/s/acme.html".to_string()]);
    let mut seen = BTreeSet::from(["/s/acme.html".to_string()]);
    let mut pages = 0;
    while let Some(url) = todo.pop_front() {
        let r = http
            .get(format!("{}{url}", host.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{url} is in the copy");
        if !url.ends_with(".html") {
            continue;
        }
        pages += 1;
        let html = r.text().await.unwrap();
        assert!(
            html.contains("class=\"copy-note\""),
            "{url} says it is a copy"
        );
        assert!(!html.contains("<form"), "{url}: a copy offers no form");
        assert!(!html.contains("data-events"), "{url}: no live updates");
        assert!(
            !html.contains("?lang="),
            "{url}: links are files, not queries"
        );
        for link in links(&html) {
            if seen.insert(link.clone()) {
                todo.push_back(link);
            }
        }
    }
    assert!(
        seen.contains("/s/acme/lang=de.html")
            && seen.contains(&format!("/s/acme/incidents/{incident}.html"))
            && seen.contains("/s/acme/history.html"),
        "{seen:?}"
    );
    assert!(pages >= 20, "each page in six languages: {pages}");
    let german = text_of(&http, &format!("{}/s/acme/lang=de.html", host.base)).await;
    assert!(german.contains("Eine Kopie dieser Seite"), "{german}");
    let detail = text_of(
        &http,
        &format!("{}/s/acme/incidents/{incident}.html", host.base),
    )
    .await;
    assert!(
        detail.contains("Found the cause") && detail.contains("Looking into it"),
        "the timeline is in the copy"
    );

    // What integrations read says what the live service says.
    for path in [
        "/s/acme/api/v2/summary.json",
        "/s/acme/api/v2/incidents/unresolved.json",
    ] {
        let copied: Value = http
            .get(format!("{}{path}", host.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let live = s.get(path).await.body;
        assert_eq!(copied, live, "{path}");
    }
    let status: Value = serde_json::from_str(
        &text_of(&http, &format!("{}/api/public/status/acme.json", host.base)).await,
    )
    .unwrap();
    assert_eq!(status, s.get("/api/public/status/acme").await.body);
    let rss = text_of(&http, &format!("{}/api/feed/rss/page=acme.rss", host.base))
        .await
        .into_bytes();
    let channel = rss::Channel::read_from(&rss[..]).expect("RSS 2.0");
    assert!(
        channel
            .items()
            .iter()
            .any(|i| i.title().is_some_and(|t| t.starts_with("API errors")))
    );
    let atom = text_of(
        &http,
        &format!("{}/api/feed/rss/format=atom&page=acme.atom", host.base),
    )
    .await
    .into_bytes();
    atom_syndication::Feed::read_from(&atom[..]).expect("Atom");
    let ics = text_of(&http, &format!("{}/api/calendar/page=acme.ics", host.base)).await;
    let cal: icalendar::Calendar = ics.parse().expect("iCalendar");
    assert_eq!(cal.components.len(), 1, "{ics}");
    let badge = text_of(&http, &format!("{}/api/badge/page=acme.svg", host.base)).await;
    assert!(
        badge.starts_with("<svg") && badge.contains("major outage"),
        "{badge}"
    );

    // Nothing of the private or password pages, not even their names.
    for f in files_under(&out) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
        for secret in ["hidden-one", "gated-one", "Secret service"] {
            assert!(!text.contains(secret), "{} names {secret}", f.display());
        }
    }

    // Again at once: a file whose bytes did not change is not written
    // again (the HTML says "as of" to the minute, and uptime moves with the
    // clock: those may change).
    let stamp = |f: &PathBuf| std::fs::metadata(f).unwrap().modified().unwrap();
    let before: Vec<_> = files_under(&out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(&f).unwrap(), stamp(&f)))
        .collect();
    let (ok, said, err) =
        s.db.cli(&["export-static", "--out", out_arg, "--public-url", &s.base]);
    assert!(ok, "{err}");
    let mut same = 0;
    for (f, bytes, at) in &before {
        if std::fs::read(f).unwrap() == *bytes && !f.ends_with(".upstate-copy") {
            same += 1;
            assert_eq!(
                stamp(f),
                *at,
                "{} was rewritten with the same bytes",
                f.display()
            );
        }
    }
    assert!(same >= 20, "{same} files the same: {said}");
    assert!(said.contains(&format!("{same} unchanged")), "{said}");

    // A page taken private leaves the copy; files the copy did not write
    // stay.
    std::fs::write(out.join("robots.txt"), "User-agent: *\n").unwrap();
    s.patch(
        &format!("/api/v1/statuspages/{page}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    let (ok, said, err) =
        s.db.cli(&["export-static", "--out", out_arg, "--public-url", &s.base]);
    assert!(ok, "{err}");
    assert!(!out.join("s/acme.html").exists(), "{said}");
    assert!(!out.join("s/acme").exists(), "{said}");
    assert!(!out.join("api/public/status/acme.json").exists(), "{said}");
    assert!(out.join("robots.txt").exists(), "not the copy's to remove");
}

/// Two instances publish into one folder (their first publishes at once do
/// not trip over each other's temporary files), and a change made just
/// before one is stopped with SIGTERM is in the copy when it has stopped.
async fn a_change_just_before_a_stop_is_in_the_copy(b: Backend) {
    let root = tempfile::tempdir().unwrap().keep();
    let root_arg = root.to_str().unwrap().to_string();
    let env = [("UPSTATE_STATIC_COPY_ROOT", root_arg.as_str())];
    let mut s = Server::start_with(b, &env).await;
    let (other, _) = crate::support::spawn(&s.db, &env);
    let other = crate::support::Running(other);
    let page = s.page("acme").await;
    s.component(page, "API").await;
    set_export(&s, json!({"enabled": true, "directory": "status"})).await;
    let done = export_when(&s, "a first publish", |v| {
        !v["status"]["lastPublishedAt"].is_null() || !v["status"]["lastError"].is_null()
    })
    .await;
    assert_eq!(done["status"]["lastError"], Value::Null, "{done}");
    // Only the one about to stop is left to publish the change. The other
    // stops cleanly: killed in the middle of a publish, it would leave its
    // temporary file behind (seen once on a loaded machine).
    let mut other = other;
    assert!(other.terminate(), "the other instance stops cleanly");
    let html = root.join("status/s/acme.html");
    s.post(
        "/api/v1/incidents",
        json!({"title": "Said just before the stop", "statusPageId": page, "message": "Looking"}),
    )
    .await
    .data(201);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(s.stop(), "a clean stop:\n{}", s.log());
    let copied = std::fs::read_to_string(&html).unwrap_or_default();
    assert!(copied.contains("Said just before the stop"), "{copied}");
    let strays: Vec<_> = files_under(&root)
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with(".part"))
        .collect();
    assert!(strays.is_empty(), "temporary files left: {strays:?}");
    assert!(!s.log().contains("cannot publish"), "{}", s.log());
}

/// A slug stored before every door kept the rules (an old import) is
/// left out of the copy, said, and writes nothing outside it; the other
/// pages are copied.
async fn one_bad_page_never_stops_the_copy_of_the_others(b: Backend) {
    let s = Server::start(b).await;
    let good = s.page("acme").await;
    s.component(good, "API").await;
    let bad = s.page("bad").await;
    s.db.execute(&format!(
        "UPDATE status_pages SET slug = '../../../x' WHERE id = {bad}"
    ))
    .await;
    let out = s.db.dir.path().join("deep/er/copy");
    let out_arg = out.to_str().unwrap();
    let (ok, said, err) =
        s.db.cli(&["export-static", "--out", out_arg, "--public-url", &s.base]);
    assert!(ok, "{said}{err}");
    assert!(out.join("s/acme.html").exists(), "{said}{err}");
    assert!(
        err.contains("../../../x") || said.contains("../../../x"),
        "the page left out is named: {said}{err}"
    );
    let outside: Vec<_> = files_under(s.db.dir.path())
        .into_iter()
        .filter(|f| !f.starts_with(&out) && f.to_string_lossy().contains("x"))
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("x"))
        })
        .collect();
    assert!(outside.is_empty(), "written outside the copy: {outside:?}");
}

/// An S3-compatible server (PyPI moto's), started for one test.
struct S3Server {
    base: String,
    child: Child,
}

impl S3Server {
    /// With a bucket `status-copy`; `None` (skip, or fail under CI) without moto.
    async fn start(test: &str) -> Option<S3Server> {
        let python = peers().join("consumers/venv/bin/python");
        if !peers_available(test, std::slice::from_ref(&python)) {
            return None;
        }
        let port = crate::support::free_port();
        let child = Command::new(python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto's server");
        let s3 = S3Server {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        for _ in 0..400 {
            if let Ok(r) = reqwest::Client::new()
                .put(format!("{}/status-copy", s3.base))
                .send()
                .await
            {
                assert!(
                    r.status().is_success(),
                    "the bucket was made: {}",
                    r.status()
                );
                return Some(s3);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("moto's server did not start");
    }

    /// Every object of the bucket: key → (content type, body), read by
    /// boto3 (AWS's own Python client) with the bucket's credentials.
    fn objects(&self) -> BTreeMap<String, (String, String)> {
        const READ: &str = r#"
import boto3, json, sys
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
out = {}
for page in s3.get_paginator("list_objects_v2").paginate(Bucket="status-copy"):
    for o in page.get("Contents", []):
        got = s3.get_object(Bucket="status-copy", Key=o["Key"])
        out[o["Key"]] = [got["ContentType"], got["Body"].read().decode("utf-8", "replace")]
print(json.dumps(out))
"#;
        let out = Command::new(peers().join("consumers/venv/bin/python"))
            .args(["-c", READ, &self.base])
            .output()
            .expect("boto3");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("the bucket as JSON")
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server whose copy root is a folder of its own test directory.
async fn publishing_server(b: Backend) -> (Server, PathBuf) {
    publishing_server_allowing(b, &[]).await
}

/// `publishing_server` with `outgoing_allow` set to `allow`.
async fn publishing_server_allowing(b: Backend, allow: &[&str]) -> (Server, PathBuf) {
    let dir = tempfile::tempdir().unwrap().keep();
    let copies = dir.join("copies");
    let root = copies.clone();
    let allow: Vec<ipnet::IpNet> = allow.iter().map(|a| a.parse().expect("a range")).collect();
    let s = Server::in_process(b, move |c| {
        c.server.static_copy_root = root;
        c.delivery.allow = allow;
        // The waits below ask often; limits are not what is tested here.
        c.server.api_rate_per_minute = 0;
    })
    .await;
    (s, copies)
}

/// Saves the export settings with the admin key.
async fn set_export(s: &Server, body: Value) -> Value {
    s.put("/api/export-settings", body).await.data(200)
}

/// The export settings once `ready` says they are.
async fn export_when(s: &Server, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = s.get("/api/export-settings").await.data(200);
        if ready(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} within 15 s: {last}");
}

async fn export_settings_refuse_bad_input_and_never_show_the_secret(b: Backend) {
    let (s, _) = publishing_server(b).await;
    let off = s.get("/api/export-settings").await.data(200);
    assert_eq!(off["enabled"], false);
    assert_eq!(off["directory"], Value::Null);
    assert_eq!(off["status"]["lastPublishedAt"], Value::Null);
    let put = |body: Value| {
        s.send(
            Method::PUT,
            "/api/export-settings",
            Some(&s.key),
            Some(body),
        )
    };
    for (bad, fields) in [
        (json!({"enabled": true}), vec!["enabled"]),
        (
            json!({"enabled": true, "directory": "/etc"}),
            vec!["directory"],
        ),
        (
            json!({"enabled": true, "directory": "../outside"}),
            vec!["directory"],
        ),
        (
            json!({"enabled": false, "directory": "a/../../b"}),
            vec!["directory"],
        ),
        (
            json!({"enabled": true, "s3": {"bucket": "No_Such", "accessKeyId": "k"}}),
            vec!["s3.bucket", "s3.secretAccessKey"],
        ),
        (
            json!({"enabled": true, "s3": {"bucket": "fine", "endpoint": "ftp://x", "accessKeyId": "k", "secretAccessKey": "s"}}),
            vec!["s3.endpoint"],
        ),
    ] {
        put(bad.clone()).await.invalid_fields(&fields);
    }
    put(json!({"enabled": true, "colour": "red"}))
        .await
        .problem(422);
    assert_eq!(
        s.get("/api/export-settings").await.data(200),
        off,
        "nothing was stored"
    );

    let saved = put(
        json!({"enabled": false, "s3": {"endpoint": "http://127.0.0.1:9", "bucket": "status-copy",
        "accessKeyId": "AKIDEXAMPLE", "secretAccessKey": "wJalrXUtnFEMI-very-secret"}}),
    )
    .await
    .data(200);
    assert_eq!(saved["s3"]["secretAccessKeySet"], true);
    assert_eq!(saved["s3"]["region"], "us-east-1");
    assert!(!saved.to_string().contains("very-secret"), "{saved}");
    // The same key without its secret keeps the saved one.
    put(json!({"enabled": false, "s3": {"endpoint": "http://127.0.0.1:9", "bucket": "status-copy", "accessKeyId": "AKIDEXAMPLE"}}))
        .await
        .data(200);
    let audit = s
        .get("/api/audit-events?action=export_settings.update")
        .await
        .data(200);
    assert_eq!(audit.as_array().map(Vec::len), Some(2), "{audit}");
    assert!(audit.to_string().contains("AKIDEXAMPLE"), "{audit}");
    assert!(
        !audit.to_string().contains("very-secret"),
        "the audit keeps no secret: {audit}"
    );

    // Editors and viewers neither see nor change where the copy goes.
    let editor = s.db.create_key("read,write");
    assert_eq!(
        s.send(Method::GET, "/api/export-settings", Some(&editor), None)
            .await
            .status,
        403
    );
    let refused = s
        .send(
            Method::PUT,
            "/api/export-settings",
            Some(&editor),
            Some(json!({"enabled": false})),
        )
        .await;
    assert_eq!(refused.status, 403);
}

async fn the_copy_is_published_to_a_directory_after_each_change(b: Backend) {
    let (s, copies) = publishing_server(b).await;
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    set_export(&s, json!({"enabled": true, "directory": "status"})).await;
    let done = export_when(&s, "a first publish", |v| {
        !v["status"]["lastPublishedAt"].is_null()
    })
    .await;
    assert_eq!(done["status"]["lastError"], Value::Null);
    assert!(done["status"]["files"].as_u64().unwrap() > 20, "{done}");
    let html = copies.join("status/s/acme.html");
    assert!(std::fs::read_to_string(&html).unwrap().contains("API"));

    // A change is in the copy within seconds, with no one asking.
    s.post(
        "/api/v1/incidents",
        json!({"title": "Queue backlog", "statusPageId": page, "impact": "minor",
            "message": "Working through it", "componentStatuses": [{"componentId": api, "status": "degraded"}]}),
    )
    .await
    .data(201);
    // The files are written one after another: wait for both.
    let json_file = copies.join("status/s/acme/api/v2/summary.json");
    let read_summary = || -> Value {
        std::fs::read(&json_file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null)
    };
    let mut seen = String::new();
    for _ in 0..300 {
        seen = std::fs::read_to_string(&html).unwrap_or_default();
        if seen.contains("Queue backlog")
            && read_summary()["incidents"][0]["name"] == "Queue backlog"
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen.contains("Queue backlog"), "{seen}");
    assert_eq!(read_summary()["incidents"][0]["name"], "Queue backlog");

    // A target it cannot write: the error is on record and in the metrics,
    // and the next good publish clears it.
    std::fs::write(copies.join("blocked"), "a file, not a folder").unwrap();
    set_export(&s, json!({"enabled": true, "directory": "blocked"})).await;
    let failing = export_when(&s, "a failed publish", |v| {
        !v["status"]["lastError"].is_null()
    })
    .await;
    assert!(
        failing["status"]["lastError"]
            .as_str()
            .unwrap()
            .contains("directory blocked"),
        "{failing}"
    );
    let metrics = crate::support::metrics_text(&s.base).await;
    assert!(
        metrics.contains("upstate_static_copy_failing 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("upstate_static_copy_enabled 1"),
        "{metrics}"
    );
    set_export(&s, json!({"enabled": true, "directory": "status"})).await;
    export_when(&s, "the error cleared", |v| {
        v["status"]["lastError"].is_null()
    })
    .await;
}

async fn the_copy_is_published_to_an_s3_bucket(b: Backend) {
    let Some(s3) = S3Server::start("the_copy_is_published_to_an_s3_bucket").await else {
        return;
    };
    let target = json!({"enabled": true, "s3": {"endpoint": s3.base, "bucket": "status-copy",
        "prefix": "pages", "accessKeyId": "test", "secretAccessKey": "test"}});
    // The bucket is on loopback: refused as a webhook there would be, until
    // the operator allows it (outgoing_allow); nothing reaches it.
    {
        let (s, _) = publishing_server(b).await;
        s.page("acme").await;
        s.send(
            Method::PUT,
            "/api/export-settings",
            Some(&s.key),
            Some(target.clone()),
        )
        .await
        .data(200);
        let done = export_when(&s, "a refused publish", |v| {
            !v["status"]["lastError"].is_null()
        })
        .await;
        let error = done["status"]["lastError"].as_str().unwrap_or_default();
        assert!(
            error.contains("refused") && error.contains("outgoing_allow"),
            "{done}"
        );
        assert!(s3.objects().is_empty(), "nothing went out");
    }
    let (s, _) = publishing_server_allowing(b, &["127.0.0.0/8"]).await;
    let page = s.page("acme").await;
    s.component(page, "API").await;
    let other = s.page("beta").await;
    s.send(
        Method::PUT,
        "/api/export-settings",
        Some(&s.key),
        Some(
            json!({"enabled": true, "s3": {"endpoint": s3.base, "bucket": "status-copy",
            "prefix": "pages", "accessKeyId": "test", "secretAccessKey": "test"}}),
        ),
    )
    .await
    .data(200);
    let done = export_when(&s, "a publish to the bucket", |v| {
        !v["status"]["lastPublishedAt"].is_null() || !v["status"]["lastError"].is_null()
    })
    .await;
    assert_eq!(done["status"]["lastError"], Value::Null, "{done}");
    let bucket = s3.objects();
    let (ct, html) = &bucket["pages/s/acme.html"];
    assert_eq!(ct, "text/html; charset=utf-8");
    assert!(html.contains("class=\"copy-note\""), "{html}");
    let (ct, _) = &bucket["pages/s/acme/api/v2/summary.json"];
    assert!(ct.starts_with("application/json"), "{ct}");
    assert!(bucket.contains_key("pages/s/beta.html"));
    assert!(
        bucket.keys().all(|k| k.starts_with("pages/")),
        "under the prefix only: {:?}",
        bucket.keys()
    );
    assert_eq!(
        bucket.len() - 1,
        done["status"]["files"].as_u64().unwrap() as usize,
        "every file, and the list of them"
    );

    // A page taken off is taken out of the bucket at the next publish.
    s.patch(
        &format!("/api/v1/statuspages/{other}"),
        json!({"isPublic": false}),
    )
    .await
    .data(200);
    let after = export_when(&s, "the removal published", |v| {
        v["status"]["removed"].as_u64() > Some(0)
    })
    .await;
    assert_eq!(after["status"]["lastError"], Value::Null, "{after}");
    let bucket = s3.objects();
    assert!(
        !bucket.keys().any(|k| k.contains("beta")),
        "the private page's files were removed: {:?}",
        bucket.keys()
    );
    assert!(bucket.contains_key("pages/s/acme.html"));
}

/// The operator's way: the Settings screen's "Static copy" card, a refused
/// folder explained beside its field with nothing saved, then a working one
/// and the card saying what was published.
async fn the_static_copy_is_set_up_on_the_settings_screen_in_chromium(b: Backend) {
    use crate::admin_ui::{PW, browser_of, check, fill, no_axe_violations, press, shot, text};
    use crate::browser::browser_available;
    if !browser_available("the_static_copy_is_set_up_on_the_settings_screen_in_chromium") {
        return;
    }
    let (s, copies) = publishing_server(b).await;
    s.page("acme").await;
    s.db.user_with("ad@example.com", "admin", PW);
    let d = browser_of(&s, "ad@example.com").await;
    d.c()
        .goto(&format!("{}/admin/settings", s.base))
        .await
        .unwrap();
    check(&d, "Publish after every change").await;
    fill(&d, "Folder", "../elsewhere").await;
    press(&d, "Save static copy").await;
    let refused = text(&d, "#f-directory-error").await;
    assert!(refused.contains("folder under the copy root"), "{refused}");
    assert_eq!(
        s.get("/api/export-settings").await.data(200)["enabled"],
        false,
        "nothing was saved"
    );
    d.c()
        .execute(
            "document.getElementById('static-copy').scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
    d.screenshot(&shot(b, "static-copy-refused")).await;

    fill(&d, "Folder", "status").await;
    press(&d, "Save static copy").await;
    export_when(&s, "a publish", |v| {
        !v["status"]["lastPublishedAt"].is_null()
    })
    .await;
    d.c().refresh().await.unwrap();
    let state = text(&d, "#static-state").await;
    assert!(state.starts_with("Published"), "{state}");
    assert!(copies.join("status/s/acme.html").exists());
    no_axe_violations(&d, "settings with the static copy").await;
    d.c()
        .execute(
            "document.getElementById('static-copy').scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
    d.screenshot(&shot(b, "static-copy-published")).await;
}
