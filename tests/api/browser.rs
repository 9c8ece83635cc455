//! The public page in a real browser: headless Chromium driven over
//! WebDriver (Debian's `chromium` and `chromium-driver`), with axe-core
//! (from npm) checking accessibility. Screenshots land in
//! `target/screenshots/`. Without Chromium these tests say they skipped,
//! unless `UPSTATE_TEST_EXTERNAL=required` (CI) makes that a failure.

use crate::on_both_backends;
use crate::status_html::{quick_link, seeded};
use crate::support::{Backend, Server, peers, peers_available, root};
use fantoccini::actions::InputSource;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use reqwest::Method;
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

on_both_backends!(browser: page_works_in_chromium_and_passes_axe);
on_both_backends!(browser: password_gate_in_chromium);
on_both_backends!(browser: the_live_stream_comes_back_after_a_refusal);
on_both_backends!(browser: a_stream_never_answered_is_tried_again);

/// When a browser step that has not shown is a failure. Every step waits on
/// its condition and goes on the moment it holds, so this is no estimate
/// of how long a step takes: it only ends a journey whose page never gets
/// there. Far above anything seen (a loaded two-core machine stretched a
/// form's answer to 15-30 s, and CI failed on limits of 5-30 s).
pub(crate) const STEP_WITHIN: Duration = Duration::from_secs(180);

/// The same for a page's live stream to connect, which also waits out the
/// scripts' own retries (a request left unanswered is given up after 15 s
/// and asked again 2 s later, then 4 s, 8 s, ... after refusals).
const LIVE_WITHIN: Duration = Duration::from_secs(180);

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

fn axe_path() -> PathBuf {
    std::env::var_os("UPSTATE_TEST_AXE")
        .map(PathBuf::from)
        .unwrap_or_else(|| peers().join("browser-test/node_modules/axe-core/axe.min.js"))
}

pub(crate) fn browser_available(test: &str) -> bool {
    peers_available(
        test,
        &[
            PathBuf::from(CHROMEDRIVER),
            PathBuf::from(CHROMIUM),
            axe_path(),
        ],
    )
}

/// A chromedriver process and a headless Chromium session on it.
pub(crate) struct Driver {
    process: Child,
    client: Option<Client>,
    _profile: tempfile::TempDir,
}

impl Driver {
    pub(crate) async fn start(extra_args: &[&str]) -> Driver {
        Driver::launch(extra_args, true).await
    }

    /// `start` with the renderer in a process of its own, as Chromium runs
    /// outside tests. For a journey whose page's stream must open after a
    /// cookie was set by a form's answer: twice in CI (never in a loop of
    /// reruns, loaded or not) such a stream stayed pending in a
    /// single-process browser for three minutes while a plain client with
    /// the same cookie was answered at once. Chromium does not support
    /// `--single-process`; it costs this journey about a second of CPU.
    pub(crate) async fn start_apart(extra_args: &[&str]) -> Driver {
        Driver::launch(extra_args, false).await
    }

    async fn launch(extra_args: &[&str], single_process: bool) -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Its own process group, so the browsers it starts end with it.
        let process = Command::new(CHROMEDRIVER)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + STEP_WITHIN;
        while reqwest::get(format!("{url}/status")).await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        // The flags the machine notes ask for: no sandbox as root, and no
        // background traffic (this network is closed).
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        if single_process {
            // Renderer and browser in one process: half the CPU per page load
            // on two cores (measured: 40 loads of a status page, 5.6 s of
            // Chromium CPU in separate processes, 3.0 s in one), and these
            // tests open only pages of their own server.
            args.push("--single-process".into());
        }
        args.extend(extra_args.iter().map(|a| a.to_string()));
        let caps = json!({
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        });
        // A single-process Chromium now and then dies while it starts on a
        // loaded machine ("Unable to receive message from renderer"): a
        // fresh browser is asked for twice more before the test fails.
        let mut tries = 0;
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.as_object().unwrap().clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if tries < 2 => {
                    tries += 1;
                    eprintln!("WebDriver session failed ({e}); trying again");
                }
                Err(e) => panic!("WebDriver session: {e:?}"),
            }
        };
        Driver {
            process,
            client: Some(client),
            _profile: profile,
        }
    }

    pub(crate) fn c(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    pub(crate) async fn js(&self, script: &str) -> Value {
        self.c()
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Waits up to `within` for a script to return true; returns the time it took.
    /// A script that fails because the page is between documents (a form
    /// just submitted, a navigation under way) counts as "not yet".
    pub(crate) async fn until(&self, script: &str, within: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(v) = self.c().execute(script, vec![]).await
                && v == json!(true)
            {
                return Some(start.elapsed());
            }
            // Each look is a script run in the page: at 25 ms a long wait
            // kept Chromium busy enough to slow the tests beside it.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// The console's errors since the last call (Chromium's log endpoint).
    pub(crate) async fn console_errors(&self) -> Vec<String> {
        let entries = self.c().issue_cmd(BrowserLog).await.expect("browser log");
        entries
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// Writes the page as it looks to `target/screenshots/NAME.png`, for a
    /// person to open; `UPSTATE_TEST_SCREENSHOTS=0` (CI, where nobody
    /// looks) skips the capture and its PNG encoding.
    pub(crate) async fn screenshot(&self, name: &str) {
        if std::env::var("UPSTATE_TEST_SCREENSHOTS").as_deref() == Ok("0") {
            return;
        }
        let png = self.c().screenshot().await.expect("screenshot");
        let path = root()
            .join("target/screenshots")
            .join(format!("{name}.png"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }

    /// axe-core's WCAG 2.0–2.2 A/AA violations on the current page, and two
    /// best practices a page must keep: one h1, landmarks told apart.
    pub(crate) async fn axe(&self) -> Vec<Value> {
        let source = std::fs::read_to_string(axe_path()).expect("axe-core");
        self.c()
            .execute(&source, vec![])
            .await
            .expect("load axe-core");
        let script = "const done = arguments[arguments.length - 1];
            axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']},
                                rules: {'page-has-heading-one': {enabled: true}, 'landmark-unique': {enabled: true}}})
              .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                  nodes: v.nodes.map(n => n.html).slice(0, 3)}))))
              .catch(e => done([{id: 'axe-error', help: String(e)}]));";
        let out = self
            .c()
            .execute_async(script, vec![])
            .await
            .expect("axe.run");
        out.as_array().cloned().unwrap_or_default()
    }
}

impl Driver {
    /// Ends the session (the browser quits), then the driver.
    pub(crate) async fn quit(mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
    }
}

impl Drop for Driver {
    /// Also on a failed assertion: the driver's whole process group (it and
    /// every browser process it started) is killed.
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.process.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.process.wait();
    }
}

/// chromedriver's `POST /session/{id}/se/log` (outside the W3C standard).
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or("")))
    }
    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(r#"{"type":"browser"}"#.to_string()),
        )
    }
}

/// The page of the HTML tests, its logo moved to this server (the test
/// network reaches nothing else), and a quick link.
async fn seed(s: &Server) -> (i64, i64) {
    let (p, ids) = seeded(s).await;
    let logo = format!("{}/assets/favicon.svg", s.base);
    s.patch(
        &format!("/api/v1/statuspages/{p}"),
        json!({"logoUrl": logo}),
    )
    .await
    .data(200);
    quick_link(s, p, "Support", "https://support.example.com/").await;
    (p, ids["api"].as_i64().unwrap())
}

/// Another site (its own origin, `localhost` rather than `127.0.0.1`)
/// serving one HTML page; returns its URL.
pub(crate) async fn other_site(html: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || async move { axum::response::Html(html) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://localhost:{port}/")
}

pub(crate) fn report(violations: &[Value]) -> String {
    serde_json::to_string_pretty(violations).unwrap_or_default()
}

async fn page_works_in_chromium_and_passes_axe(b: Backend) {
    if !browser_available("page_works_in_chromium_and_passes_axe") {
        return;
    }
    let s = Server::start(b).await;
    let (_, api) = seed(&s).await;
    let name = match b {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let d = Driver::start(&[]).await;
    d.c().set_window_size(1280, 1000).await.unwrap();
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();

    // Every section renders.
    for css in [
        ".banner",
        "#inc-h",
        "#mnt-h",
        "#cmp-h",
        "details.group",
        ".links",
        ".bar .cell",
        "footer .langs",
    ] {
        d.c()
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|_| panic!("{css} missing"));
    }
    assert_eq!(
        d.js("return document.querySelector('.banner .label').textContent")
            .await,
        "Partial System Outage"
    );
    assert_eq!(
        d.js("return document.querySelectorAll('.bar').length")
            .await,
        2
    );
    // The script is running: the live stream is connected.
    let live = d
        .until("return document.body.dataset.live === 'on'", LIVE_WITHIN)
        .await;
    assert!(live.is_some(), "event stream connected");

    // Uptime tooltips: today's cell shows its tooltip on focus, another on hover.
    let cell = d
        .c()
        .find(Locator::Css(".bar .cell:last-child"))
        .await
        .unwrap();
    let hidden =
        "return getComputedStyle(document.querySelector('.bar .cell:nth-child(3) .tip')).display";
    assert_eq!(d.js(hidden).await, "none");
    d.js("document.querySelector('.bar .cell:last-child').focus()")
        .await;
    let tip =
        "return getComputedStyle(document.querySelector('.bar .cell:last-child .tip')).display";
    assert_eq!(d.js(tip).await, "block", "focus shows the tooltip");
    let text = cell.text().await.unwrap();
    assert!(
        text.contains("Errors <script>alert(1)</script>"),
        "today's tooltip names the incident: {text}"
    );
    let other = d
        .c()
        .find(Locator::Css(".bar .cell:nth-child(3)"))
        .await
        .unwrap();
    let hover = fantoccini::actions::MouseActions::new("mouse".to_string()).then(
        fantoccini::actions::PointerAction::MoveToElement {
            element: other.clone(),
            duration: None,
            x: 0.0,
            y: 0.0,
        },
    );
    d.c().perform_actions(hover).await.unwrap();
    assert_eq!(d.js(hidden).await, "block", "hover shows the tooltip");
    // Keyboard: one tab stop per bar, arrows move along it.
    assert_eq!(
        d.js("return document.querySelectorAll('.bar .cell[tabindex=\"0\"]').length")
            .await,
        2
    );
    cell.send_keys("\u{E012}").await.unwrap(); // ArrowLeft
    assert_eq!(
        d.js("return document.activeElement === document.querySelector('.bar .cell:nth-last-child(2)')").await,
        true
    );

    // Accessibility, desktop.
    let violations = d.axe().await;
    assert!(
        violations.is_empty(),
        "axe (desktop): {}",
        report(&violations)
    );
    d.screenshot(&format!("{name}-desktop")).await;

    // A status change arrives live, without a reload. How soon is the
    // bench's to measure (bench/instances.sh), not a timed test's: a busy
    // machine stretches it.
    d.js("window.__noReload = 'still here'").await;
    let changed = Instant::now();
    s.send(
        Method::PATCH,
        &format!("/api/v1/components/{api}/status"),
        Some(&s.key),
        Some(json!({"status": "major_outage"})),
    )
    .await
    .data(200);
    let seen = d
        .until(
            "return document.querySelector('.banner .label').textContent === 'Major System Outage'",
            STEP_WITHIN,
        )
        .await;
    assert!(seen.is_some(), "the change never showed");
    eprintln!("live update shown {:?} after the write", changed.elapsed());
    assert_eq!(
        d.js("return window.__noReload").await,
        "still here",
        "no reload"
    );
    let status = "return document.querySelector('[data-component] .st').dataset.status";
    assert_eq!(d.js(status).await, "major_outage");

    // Phone width: no sideways scrolling, still accessible.
    d.c().set_window_size(390, 844).await.unwrap();
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    let sideways =
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth";
    assert_eq!(d.js(sideways).await, 0, "nothing wider than the phone");
    let violations = d.axe().await;
    assert!(
        violations.is_empty(),
        "axe (phone): {}",
        report(&violations)
    );
    d.screenshot(&format!("{name}-phone")).await;

    // Other pages of the site, too.
    for path in [
        "/s/acme/history",
        "/s/acme?lang=ja",
        "/api/widget?page=acme",
    ] {
        d.c().goto(&format!("{}{path}", s.base)).await.unwrap();
        let violations = d.axe().await;
        assert!(
            violations.is_empty(),
            "axe ({path}): {}",
            report(&violations)
        );
    }
    // The widget follows the status live too, without reloading.
    d.c()
        .goto(&format!("{}/api/widget?page=acme", s.base))
        .await
        .unwrap();
    d.js("window.__noReload = 'still here'").await;
    assert_eq!(
        d.js("return document.querySelector('.label').textContent")
            .await,
        "Major System Outage"
    );
    // Once the widget's stream is connected, change the page.
    let connected = d
        .until("return document.body.dataset.live === 'on'", LIVE_WITHIN)
        .await;
    assert!(connected.is_some(), "the widget's event stream connected");
    s.send(
        Method::PATCH,
        &format!("/api/v1/components/{api}/status"),
        Some(&s.key),
        Some(json!({"status": "operational"})),
    )
    .await
    .data(200);
    let now_label = "return document.querySelector('.label').textContent";
    let back = d
        .until(
            &format!("{now_label} === 'Partial System Outage'"),
            STEP_WITHIN,
        )
        .await;
    assert!(back.is_some(), "widget: {}", d.js(now_label).await);
    assert_eq!(d.js("return window.__noReload").await, "still here");
    assert_eq!(
        d.js("return document.querySelector('.w').className").await,
        "w s-partial"
    );

    // The snippet site owners paste: on a site of another origin it places
    // the widget right after itself.
    let snippet = format!(
        "<!doctype html><html lang=en><title>Shop</title><link rel=icon href=\"data:,\"><p>Our status:</p>\
         <script src=\"{}/api/widget?page=acme&format=js\" async></script><p>after</p>",
        s.base
    );
    let site = other_site(snippet).await;
    d.c().goto(&site).await.unwrap();
    let placed = "const f = document.querySelector('iframe');
        return !!f && f.previousElementSibling.tagName === 'SCRIPT' && f.src.includes('/api/widget?page=acme')";
    let ok = d.until(placed, STEP_WITHIN).await.is_some();
    assert!(
        ok,
        "the iframe is placed after the script: {:?}",
        d.console_errors().await
    );
    let framed = d.until(
        "return document.querySelector('iframe').contentWindow.length === 0",
        STEP_WITHIN,
    );
    assert!(framed.await.is_some());
    d.c().enter_frame(0).await.unwrap();
    let label = d
        .until("return !!document.querySelector('.label')", STEP_WITHIN)
        .await;
    assert!(label.is_some(), "the widget loads inside the frame");
    assert_eq!(
        d.js("return document.querySelector('.label').textContent")
            .await,
        "Partial System Outage"
    );
    d.c().enter_parent_frame().await.unwrap();

    // On a dark site, in a narrow column: the widget takes the site's dark
    // colours and its iframe grows to the lines the wrapped name needs.
    let dark_site = other_site(format!(
        "<!doctype html><html lang=en><title>Dark shop</title><link rel=icon href=\"data:,\">\
         <body style=\"background:#111;color:#eee\"><div style=\"width:170px\">\
         <script src=\"{}/api/widget?page=acme&format=js\" async></script></div></body></html>",
        s.base
    ))
    .await;
    d.c().goto(&dark_site).await.unwrap();
    let grown = d
        .until(
            "const f = document.querySelector('iframe'); return !!f && parseInt(f.style.height) > 48",
            crate::browser::STEP_WITHIN,
        )
        .await;
    assert!(
        grown.is_some(),
        "the iframe fits its content: {}",
        d.js("const f = document.querySelector('iframe'); return f ? f.style.height + ' ' + f.src : 'none'").await
    );
    assert!(
        d.js("return document.querySelector('iframe').src")
            .await
            .as_str()
            .unwrap()
            .ends_with("&theme=dark")
    );
    d.c().enter_frame(0).await.unwrap();
    assert_eq!(
        d.js("return getComputedStyle(document.querySelector('.w')).backgroundColor")
            .await,
        "rgb(13, 17, 23)"
    );
    let inner = d
        .js("return Math.ceil(document.body.getBoundingClientRect().height)")
        .await;
    d.c().enter_parent_frame().await.unwrap();
    assert_eq!(
        d.js("return parseInt(document.querySelector('iframe').style.height)")
            .await,
        inner,
        "no clipping, no empty space"
    );
    d.screenshot(&format!("{name}-widget-dark")).await;

    let errors = d.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    // The page a visitor gets for a wrong address is accessible too (its 404
    // is the only console message).
    d.c()
        .goto(&format!("{}/s/no-such-page", s.base))
        .await
        .unwrap();
    assert_eq!(
        d.js("return document.querySelector('h1').textContent")
            .await,
        "There is nothing at this address."
    );
    let violations = d.axe().await;
    assert!(violations.is_empty(), "axe (404): {}", report(&violations));
    let errors: Vec<String> = d
        .console_errors()
        .await
        .into_iter()
        .filter(|e| !e.contains("404 (Not Found)"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    d.quit().await;

    // Dark mode follows the visitor's preference, and stays accessible.
    let dark = Driver::start(&["--blink-settings=preferredColorScheme=0"]).await;
    dark.c().set_window_size(1280, 1000).await.unwrap();
    dark.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    assert_eq!(
        dark.js("return matchMedia('(prefers-color-scheme: dark)').matches")
            .await,
        true
    );
    assert_eq!(
        dark.js("return getComputedStyle(document.body).backgroundColor")
            .await,
        "rgb(13, 17, 23)"
    );
    let violations = dark.axe().await;
    assert!(violations.is_empty(), "axe (dark): {}", report(&violations));
    dark.screenshot(&format!("{name}-dark")).await;
    let errors = dark.console_errors().await;
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    dark.quit().await;
}

/// An event stream answered with a refusal is closed for good by the
/// browser; the page's script tries again (2 s, then twice as late), so a
/// page that was away for a while is live again by itself, showing what
/// changed meanwhile, without a reload.
async fn the_live_stream_comes_back_after_a_refusal(b: Backend) {
    if !browser_available("the_live_stream_comes_back_after_a_refusal") {
        return;
    }
    let s = Server::start(b).await;
    let (p, _) = seed(&s).await;
    let d = Driver::start(&[]).await;
    let live = "return document.body.dataset.live === 'on'";
    let closed = "return document.body.dataset.live === undefined";
    // The page (told of an incident while away), then the widget.
    for (url, told) in [
        ("/s/acme", Some("Told while away")),
        ("/api/widget?page=acme", None),
    ] {
        d.c().goto(&format!("{}{url}", s.base)).await.unwrap();
        assert!(
            d.until(live, LIVE_WITHIN).await.is_some(),
            "{url}: the stream connects"
        );
        d.js("document.body.dataset.loaded = 'once'").await;
        // Made private, the page ends the stream; the browser's own
        // reconnect is refused, which closes the stream.
        s.make_private(p, "open sesame").await;
        assert!(
            d.until(closed, STEP_WITHIN).await.is_some(),
            "{url}: the refused stream is seen closed"
        );
        if let Some(title) = told {
            s.post(
                "/api/v1/incidents",
                json!({"title": title, "statusPageId": p, "message": "Looking"}),
            )
            .await
            .data(201);
        }
        s.patch(
            &format!("/api/v1/statuspages/{p}"),
            json!({"isPublic": true}),
        )
        .await
        .data(200);
        assert!(
            d.until(live, LIVE_WITHIN).await.is_some(),
            "{url}: the script connects again by itself"
        );
        if let Some(title) = told {
            let shown = format!("return document.body.innerText.includes('{title}')");
            assert!(
                d.until(&shown, STEP_WITHIN).await.is_some(),
                "what changed while it was away is shown"
            );
        }
        assert_eq!(
            d.js("return document.body.dataset.loaded").await,
            "once",
            "{url}: without a reload"
        );
    }
}

/// A load balancer in front of the server whose first event-stream request
/// lands on a hung instance: accepted, never answered. Everything else is
/// passed through, streams included.
struct HungOnce {
    base: String,
    streams: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl HungOnce {
    async fn start(upstream: &str) -> HungOnce {
        use axum::body::Body;
        use axum::extract::Request;
        use std::sync::atomic::Ordering;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let streams = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let upstream = upstream.to_string();
        let seen = streams.clone();
        let client = reqwest::Client::new();
        let app = axum::Router::new().fallback(move |req: Request| {
            let (upstream, seen, client) = (upstream.clone(), seen.clone(), client.clone());
            async move {
                if req.uri().path().ends_with("/events") && seen.fetch_add(1, Ordering::SeqCst) == 0
                {
                    std::future::pending::<()>().await;
                }
                let (parts, body) = req.into_parts();
                let path = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.as_str())
                    .unwrap_or("/");
                let mut headers = parts.headers.clone();
                headers.remove(http::header::HOST);
                let body = axum::body::to_bytes(body, 1 << 20)
                    .await
                    .unwrap_or_default();
                let answer = client
                    .request(parts.method, format!("{upstream}{path}"))
                    .headers(headers)
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let mut res = axum::http::Response::builder().status(answer.status());
                for (k, v) in answer.headers() {
                    if k != http::header::TRANSFER_ENCODING && k != http::header::CONNECTION {
                        res = res.header(k, v);
                    }
                }
                res.body(Body::from_stream(answer.bytes_stream())).unwrap()
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        HungOnce { base, streams }
    }

    fn streams(&self) -> usize {
        self.streams.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A browser waits for ever on a stream request that is never answered; the
/// page's and the widget's scripts give up on it after 15 s and ask again,
/// which the balancer sends to an instance that answers.
async fn a_stream_never_answered_is_tried_again(b: Backend) {
    if !browser_available("a_stream_never_answered_is_tried_again") {
        return;
    }
    let s = Server::start(b).await;
    seed(&s).await;
    let d = Driver::start(&[]).await;
    let live = "return document.body.dataset.live === 'on'";
    for url in ["/s/acme", "/api/widget?page=acme"] {
        let lb = HungOnce::start(&s.base).await;
        d.c().goto(&format!("{}{url}", lb.base)).await.unwrap();
        let asked = Instant::now();
        assert!(
            s.eventually(STEP_WITHIN, || async { lb.streams() == 1 })
                .await,
            "{url}: the stream is asked for"
        );
        assert!(
            d.until(live, LIVE_WITHIN).await.is_some(),
            "{url}: live after a hung stream request"
        );
        assert!(
            asked.elapsed() >= Duration::from_secs(12),
            "{url}: given up on only after a while: {:?}",
            asked.elapsed()
        );
        assert_eq!(lb.streams(), 2, "{url}: asked once more");
    }
    d.quit().await;
}

async fn password_gate_in_chromium(b: Backend) {
    if !browser_available("password_gate_in_chromium") {
        return;
    }
    let s = Server::start(b).await;
    let (p, _) = seed(&s).await;
    s.make_private(p, "open sesame").await;
    let d = Driver::start_apart(&[]).await;
    d.c()
        .goto(&format!("{}/s/acme/history", s.base))
        .await
        .unwrap();
    assert_eq!(
        d.js("return document.body.innerText.includes('Public API')")
            .await,
        false,
        "no content"
    );
    let violations = d.axe().await;
    assert!(violations.is_empty(), "axe (gate): {}", report(&violations));
    d.screenshot(&format!(
        "{}-gate",
        if b == Backend::Sqlite {
            "sqlite"
        } else {
            "postgres"
        }
    ))
    .await;

    // A wrong password: back to the form, with the message announced.
    d.c()
        .find(Locator::Css("#page-password"))
        .await
        .unwrap()
        .send_keys("nope nope")
        .await
        .unwrap();
    d.c()
        .find(Locator::Css("form button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let shown = d
        .until(
            "return !!document.querySelector('.error[role=alert]')",
            STEP_WITHIN,
        )
        .await;
    assert!(shown.is_some(), "wrong-password message");
    assert_eq!(
        d.js("return document.cookie").await,
        "",
        "nothing readable by scripts"
    );

    // The right one: the page the visitor asked for, with its content.
    d.c()
        .find(Locator::Css("#page-password"))
        .await
        .unwrap()
        .send_keys("open sesame")
        .await
        .unwrap();
    d.c()
        .find(Locator::Css("form button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let opened = d
        .until(
            "return location.pathname === '/s/acme/history'",
            STEP_WITHIN,
        )
        .await;
    assert!(opened.is_some());
    d.c().goto(&format!("{}/s/acme", s.base)).await.unwrap();
    // Under a loaded machine the page may still be laying out: wait for it.
    let shown = d
        .until(
            "return document.body.innerText.includes('Public API')",
            STEP_WITHIN,
        )
        .await;
    assert!(shown.is_some(), "the page opens with its components");
    assert_eq!(
        d.js("return document.cookie").await,
        "",
        "the page cookie is HttpOnly"
    );
    let live = d
        .until("return document.body.dataset.live === 'on'", LIVE_WITHIN)
        .await;
    if live.is_none() {
        // The stream requests the browser saw finish (a pending one is not
        // listed): their answers and when.
        let seen = d
            .js(
                "return JSON.stringify(performance.getEntriesByType('resource')\
                 .filter(e => e.name.includes('/events'))\
                 .map(e => [e.responseStatus, Math.round(e.startTime), Math.round(e.duration)]))",
            )
            .await;
        // What the stream answers this browser's cookies, to tell a refusal
        // from a slow machine.
        let cookies: Vec<String> = d
            .c()
            .get_all_cookies()
            .await
            .unwrap()
            .iter()
            .map(|c| format!("{}={}", c.name(), c.value()))
            .collect();
        let r = reqwest::Client::new()
            .get(format!("{}/api/public/status/acme/events", s.base))
            .header("cookie", cookies.join("; "))
            .send()
            .await
            .unwrap();
        // What the page's script and the browser said meanwhile (a refused
        // or reset stream shows there).
        let console = d.console_errors().await;
        let state = d
            .js("return JSON.stringify({live: document.body.dataset.live, visible: document.visibilityState})")
            .await;
        panic!(
            "the event stream did not open with the cookie: it answers {} {:?}; \
             the browser's finished requests (status, start ms, ms): {seen}; \
             the page: {state}; its console: {console:?}",
            r.status(),
            r.headers()
        );
    }
    d.screenshot(&format!(
        "{}-private",
        if b == Backend::Sqlite {
            "sqlite"
        } else {
            "postgres"
        }
    ))
    .await;
    let errors: Vec<String> = d
        .console_errors()
        .await
        .into_iter()
        .filter(|e| !e.contains("401 (Unauthorized)"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    d.quit().await;
}
