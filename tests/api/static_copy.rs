//! The static copy (`upstate export-static`): written by the binary, served
//! by a real static file server (Python's `http.server`), read as visitors
//! and integrations read the live service.

use crate::on_both_backends;
use crate::support::{Backend, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

on_both_backends!(the_copy_reads_like_the_live_page);

/// A static file server over a directory: no knowledge of Upstate.
struct StaticHost {
    base: String,
    child: Child,
}

impl StaticHost {
    async fn start(dir: &Path) -> StaticHost {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
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
    s.send(
        Method::PUT,
        "/api/features",
        Some(&s.key),
        Some(json!({"feeds": true, "calendar": true, "history": true, "comments": true})),
    )
    .await
    .data(200);
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
    let german = http
        .get(format!("{}/s/acme/lang=de.html", host.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(german.contains("Eine Kopie dieser Seite"), "{german}");
    let detail = http
        .get(format!("{}/s/acme/incidents/{incident}.html", host.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
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
    let status: Value = http
        .get(format!("{}/api/public/status/acme.json", host.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(status, s.get("/api/public/status/acme").await.body);
    let rss = http
        .get(format!("{}/api/feed/rss/page=acme.rss", host.base))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let channel = rss::Channel::read_from(&rss[..]).expect("RSS 2.0");
    assert!(
        channel
            .items()
            .iter()
            .any(|i| i.title().is_some_and(|t| t.starts_with("API errors")))
    );
    let atom = http
        .get(format!(
            "{}/api/feed/rss/format=atom&page=acme.atom",
            host.base
        ))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    atom_syndication::Feed::read_from(&atom[..]).expect("Atom");
    let ics = http
        .get(format!("{}/api/calendar/page=acme.ics", host.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let cal: icalendar::Calendar = ics.parse().expect("iCalendar");
    assert_eq!(cal.components.len(), 1, "{ics}");
    let badge = http
        .get(format!("{}/api/badge/page=acme.svg", host.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
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
