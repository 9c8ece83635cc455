//! Several instances on one PostgreSQL database (the scale-out setup).

use crate::status_html::{next_event, next_sse};
use crate::support::{Backend, Running, Server, at_offset_ms, spawn};
use serde_json::json;
use std::time::{Duration, Instant};

/// Instance A (a test server on a fresh PostgreSQL database) and the base
/// URL of instance B on the same database.
async fn two_instances() -> (Server, String, Running) {
    let a = Server::start(Backend::Postgres).await;
    let (child, b_base) = spawn(&a.db, &[]);
    (a, b_base, Running(child))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn instances_share_writes_snapshots_and_the_scheduler() {
    let (a, b_base, _b) = two_instances().await;
    let client = reqwest::Client::new();
    let p = a.page("shared").await;
    let c = a.component(p, "API").await;
    let read_b = async || -> serde_json::Value {
        client
            .get(format!("{b_base}/api/public/status/shared"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };
    assert_eq!(read_b().await["components"][0]["status"], "operational");

    // B has the page in memory now; a write through A must reach it.
    a.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let start = Instant::now();
    let mut seen = false;
    while start.elapsed() < Duration::from_secs(1) {
        if read_b().await["components"][0]["status"] == "major_outage" {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(seen, "instance B saw A's write within 1 s");
    eprintln!("instance B saw the change after {:?}", start.elapsed());

    // A feature switched off through A is off on B too (B has the page's
    // snapshot in memory; the change names no page).
    let feed_b = async || {
        client
            .get(format!("{b_base}/api/feed/rss?page=shared"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(feed_b().await, 200);
    let admin = a.db.create_key("admin");
    let r = a
        .send(
            reqwest::Method::PUT,
            "/api/features",
            Some(&admin),
            Some(json!({"feeds": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let start = Instant::now();
    let mut gone = false;
    while start.elapsed() < Duration::from_secs(3) {
        if feed_b().await == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "instance B turned feeds off within 3 s");

    // Both instances run the scheduler; the window moves once.
    let m = a
        .post(
            "/api/v1/maintenance",
            json!({"title": "w", "statusPageId": p, "scheduledStartTime": at_offset_ms(300),
               "scheduledEndTime": at_offset_ms(1_300), "autoStart": true, "componentIds": [c]}),
        )
        .await
        .data(201)["id"]
        .as_i64()
        .unwrap();
    let done = a
        .eventually(Duration::from_secs(8), || async {
            a.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["status"] == "completed"
        })
        .await;
    assert!(done);
    let updates = a.get(&format!("/api/v1/maintenance/{m}")).await.data(200)["updates"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(updates, 2, "started once and completed once");
    assert_eq!(
        a.component_status(c).await,
        "major_outage",
        "its status before the window came back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn live_events_carry_writes_made_on_another_instance() {
    let (a, b_base, _b) = two_instances().await;
    let p = a.page("shared").await;
    let c = a.component(p, "API").await;
    // A visitor's page on B listens; the operator writes through A.
    let r = reqwest::get(format!("{b_base}/api/public/status/shared/events"))
        .await
        .unwrap();
    let mut stream = futures_util::StreamExt::boxed(r.bytes_stream());
    let mut buf = String::new();
    let first = next_event(
        &mut stream,
        &mut buf,
        Instant::now() + Duration::from_secs(5),
    )
    .await
    .expect("first event");
    assert_eq!(first["status"], "operational");
    let changed = Instant::now();
    a.patch(
        &format!("/api/v1/components/{c}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    // B reads A's change event from the outbox row A's notification names.
    // Earlier events may come first: B's listener connecting counts as
    // "anything may have changed", and the notification of A's earlier
    // component creation may reach B after its stream opened.
    let change = loop {
        let (name, data) = next_sse(&mut stream, &mut buf, changed + Duration::from_secs(1))
            .await
            .expect("B's stream reports A's write within 1 s");
        if name == "change" && data["kind"] == "component.status_changed" {
            break data;
        }
    };
    assert_eq!(
        (&change["component"], &change["from"]),
        (&json!(c), &json!("operational"))
    );
    let next = next_event(&mut stream, &mut buf, changed + Duration::from_secs(1)).await;
    assert_eq!(
        next.expect("B's stream reports A's write within 1 s")["status"],
        "major_outage"
    );
}

/// When three instances' checks that have not run are a failure: each wait
/// goes on the moment its condition holds, so this only ends a test whose
/// checks never run (a loaded two-core machine once took longer than 10 s).
const SETTLE_WITHIN: Duration = Duration::from_secs(180);

/// Three instances on one database race for the same due checks: each
/// monitor's first check runs once, on one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn instances_run_each_monitor_check_once() {
    let allow = [("UPSTATE_MONITOR_ALLOW", "127.0.0.1")];
    let a = Server::start_with(Backend::Postgres, &allow).await;
    let (b, _) = spawn(&a.db, &allow);
    let (c, _) = spawn(&a.db, &allow);
    let (_b, _c) = (Running(b), Running(c));
    let rx = crate::receiver::Receiver::start().await;
    let p = a.page("shared").await;
    // Each monitor's next check is at least half its interval (five
    // minutes) after its first, so after now by that much however long a
    // loaded machine takes to get here: none comes round again within the
    // test.
    let first_possible = a.unix_secs() as i64 * 1000;
    for n in 0..12 {
        let comp = a.component(p, &format!("Service {n}")).await;
        a.post(
            "/api/monitors",
            json!({"componentId": comp, "target": format!("{}/m{n}", rx.base), "intervalSeconds": 600}),
        )
        .await
        .data(201);
    }
    assert!(
        a.eventually(SETTLE_WITHIN, || async { rx.got().len() >= 12 })
            .await,
        "checks ran: {}",
        rx.got().len()
    );
    // Settled: no check is leased and each monitor's next one is five
    // minutes or more after its first.
    let far = first_possible + 290_000;
    let settled =
        format!("SELECT COUNT(*) FROM monitors WHERE locked_until IS NULL AND next_run_at > {far}");
    assert!(
        a.eventually(SETTLE_WITHIN, || async {
            a.db.integers(&settled).await == [12]
        })
        .await,
        "every check done and the next one five minutes away"
    );
    let mut paths: Vec<String> = rx.got().into_iter().map(|g| g.path).collect();
    paths.sort();
    let mut want: Vec<String> = (0..12).map(|n| format!("/m{n}")).collect();
    want.sort();
    assert_eq!(paths, want, "each check once");
    let checks = a.db.integers("SELECT COUNT(*) FROM monitor_checks").await;
    assert_eq!(checks, [12]);
}

/// A Redis of the test's own (Debian's `redis-server`, nothing kept on
/// disk), so the test may stop and start it.
struct OwnRedis {
    port: u16,
    child: Option<std::process::Child>,
}

impl OwnRedis {
    fn start(test: &str) -> Option<OwnRedis> {
        let bin = std::path::PathBuf::from("/usr/bin/redis-server");
        if !crate::support::peers_available(test, std::slice::from_ref(&bin)) {
            return None;
        }
        let port = crate::support::free_port();
        let mut r = OwnRedis { port, child: None };
        r.up();
        Some(r)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn up(&mut self) {
        let child = std::process::Command::new("/usr/bin/redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server");
        self.child = Some(child);
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not start");
    }

    fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.down();
    }
}

/// One request with the key: (status, X-RateLimit-Remaining).
async fn keyed(client: &reqwest::Client, base: &str, key: &str) -> (u16, Option<u32>) {
    let r = client
        .get(format!("{base}/api/v1/statuspages"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let left = r
        .headers()
        .get("x-ratelimit-remaining")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (r.status().as_u16(), left)
}

/// With `redis_url`, three instances count a key's 100 requests a minute
/// together: the 101st is refused whichever instance it reaches. Redis
/// gone, they keep answering (each counting alone) and say so in the
/// self-test and the metrics; Redis back, they count together again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn a_keys_limit_holds_across_three_instances_through_redis() {
    let Some(mut redis) =
        OwnRedis::start("a_keys_limit_holds_across_three_instances_through_redis")
    else {
        return;
    };
    let url = redis.url();
    let env = [
        ("UPSTATE_REDIS_URL", url.as_str()),
        ("UPSTATE_API_RATE_PER_MINUTE", "100"),
        ("UPSTATE_API_RATE_PER_HOUR", "0"),
    ];
    let a = Server::start_with(Backend::Postgres, &env).await;
    let (b, b_base) = spawn(&a.db, &env);
    let (c, c_base) = spawn(&a.db, &env);
    let (_b, _c) = (Running(b), Running(c));
    let bases = [a.base.clone(), b_base, c_base];
    let client = reqwest::Client::new();
    for i in 0..100u32 {
        let got = keyed(&client, &bases[(i % 3) as usize], &a.key).await;
        assert_eq!(got, (200, Some(99 - i)), "request {} counted by all", i + 1);
    }
    for base in &bases {
        assert_eq!(keyed(&client, base, &a.key).await.0, 429, "{base}");
    }

    // Redis gone: answered all the same, counted per instance.
    redis.down();
    for base in &bases {
        assert_eq!(keyed(&client, base, &a.key).await.0, 200, "{base}");
    }
    let selftest: serde_json::Value = client
        .get(format!("{}/api/selftest", a.base))
        .bearer_auth(&a.key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let check = selftest["data"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "shared limits")
        .cloned()
        .unwrap_or_else(|| panic!("{selftest}"));
    assert_eq!(
        (check["ok"].clone(), check["degraded"].clone()),
        (json!(true), json!(true)),
        "{check}"
    );
    assert_eq!(selftest["data"]["ok"], true, "degraded is not failed");
    let metrics = crate::support::metrics_text(&a.base).await;
    assert!(metrics.contains("upstate_shared_limits_up 0"), "{metrics}");
    let log = std::fs::read_to_string(a.db.dir.path().join("server.log")).unwrap_or_default();
    assert!(log.contains("Redis does not answer"), "{log}");

    // Redis back (empty): once each instance tries it again (five seconds
    // after its last failure, the connection remade), they count there
    // together: one request on each takes one count from a single window.
    redis.up();
    // An instance nobody calls sees it back too (it tries Redis every five
    // seconds while it is away), not only after its next counted request.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !crate::support::metrics_text(&a.base)
        .await
        .contains("upstate_shared_limits_up 1")
    {
        assert!(
            Instant::now() < deadline,
            "an idle instance reports Redis back within 20 s"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut lefts = Vec::new();
        for base in &bases {
            let (status, left) = keyed(&client, base, &a.key).await;
            assert_eq!(status, 200);
            lefts.push(left.unwrap());
        }
        if lefts[1] + 1 == lefts[0] && lefts[2] + 1 == lefts[1] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "counted together again within 30 s: {lefts:?}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let metrics = crate::support::metrics_text(&a.base).await;
    assert!(metrics.contains("upstate_shared_limits_up 1"), "{metrics}");
}

crate::on_both_backends!(the_redis_password_stays_out_of_the_log);

/// The start-up log names the Redis it counts in, with its password masked
/// as the database's is.
async fn the_redis_password_stays_out_of_the_log(b: Backend) {
    let url = format!(
        "redis://:pw-in-the-url-61@127.0.0.1:{}/0",
        crate::support::free_port()
    );
    let s = Server::start_with(
        b,
        &[("UPSTATE_REDIS_URL", url.as_str()), ("RUST_LOG", "info")],
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = loop {
        let log = s.log();
        if log.contains("starting") || Instant::now() > deadline {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        log.contains("redis_url: Some(\"redis://:***@127.0.0.1:"),
        "{log}"
    );
    assert!(!log.contains("pw-in-the-url-61"), "{log}");
}

/// nginx (Debian's) balancing `upstreams` on a port of its own, as the
/// README's recipe configures it; returns the process and its base URL.
fn nginx_in_front(dir: &std::path::Path, upstreams: &[String]) -> (Running, String) {
    let port = crate::support::free_port();
    let servers: String = upstreams
        .iter()
        .map(|u| format!("    server {};\n", u.trim_start_matches("http://")))
        .collect();
    let prefix = dir.display();
    let site = include_str!("../../docs/nginx.conf")
        .replace(
            "    server 127.0.0.1:8081;\n    server 127.0.0.1:8082;\n    server 127.0.0.1:8083;\n",
            &servers,
        )
        .replace("listen 80;", &format!("listen 127.0.0.1:{port};"));
    assert!(
        site.contains(&servers),
        "docs/nginx.conf names three servers"
    );
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {prefix}/nginx.pid;\nerror_log {prefix}/nginx.log warn;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n\
         fastcgi_temp_path {prefix}/fastcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n  scgi_temp_path {prefix}/scgi;\n\
         {site}\n}}\n"
    );
    let file = dir.join("nginx.conf");
    std::fs::write(&file, conf).expect("nginx.conf");
    // One process (no master and workers): killed when the test ends, it
    // leaves no worker behind holding the test run's output open.
    let child = std::process::Command::new("nginx")
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nginx");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx did not start: {}",
            std::fs::read_to_string(dir.join("nginx.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Running(child), base)
}

/// Three instances behind nginx, a steady stream of reads and a write every
/// 100 ms through it; one instance is restarted mid-run (SIGTERM, then
/// started again on its port). Not one request fails: the stopping instance
/// stops accepting (nginx sends new requests to the others), finishes what
/// it holds, and ends its event streams with a hint to reconnect soon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn a_rolling_restart_behind_nginx_drops_no_request() {
    if !crate::support::peers_available("nginx", &[std::path::PathBuf::from("/usr/sbin/nginx")]) {
        return;
    }
    // One client (nginx, on 127.0.0.1) asks for everything: no limits.
    let env = [
        ("UPSTATE_API_RATE_PER_MINUTE", "0"),
        ("UPSTATE_API_RATE_PER_HOUR", "0"),
        ("UPSTATE_PUBLIC_RATE_SUMMARY", "0"),
        ("UPSTATE_PUBLIC_RATE_PAGE", "0"),
        ("UPSTATE_TRUSTED_PROXIES", "127.0.0.1"),
    ];
    let a = Server::start_with(Backend::Postgres, &env).await;
    let b_addr = format!("127.0.0.1:{}", crate::support::free_port());
    let (b, b_base) = crate::support::spawn_at(&a.db, &b_addr, &env);
    let (c, c_base) = spawn(&a.db, &env);
    let (mut b, _c) = (Running(b), Running(c));
    let p = a.page("shared").await;
    let comp = a.component(p, "API").await;
    let lb_dir = tempfile::tempdir().expect("dir");
    let (_nginx, lb) = nginx_in_front(lb_dir.path(), &[a.base.clone(), b_base.clone(), c_base]);

    // A visitor's live stream, held by B.
    let r = reqwest::get(format!("{b_base}/api/public/status/shared/events"))
        .await
        .expect("events");
    assert_eq!(r.status(), 200);
    let mut events = futures_util::StreamExt::boxed(r.bytes_stream());

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failures = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut load = vec![];
    for n in 0..3 {
        let (stop, failures, served, lb, key) = (
            stop.clone(),
            failures.clone(),
            served.clone(),
            lb.clone(),
            a.key.clone(),
        );
        load.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let statuses = ["degraded", "operational"];
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                i += 1;
                let (what, sent) = if n == 0 {
                    // The writer: a status change every 100 ms.
                    let body = json!({"status": statuses[i % 2]});
                    (
                        "write",
                        client
                            .patch(format!("{lb}/api/v1/components/{comp}/status"))
                            .bearer_auth(&key)
                            .json(&body)
                            .send()
                            .await,
                    )
                } else {
                    let path = ["/api/public/status/shared", "/s/shared"][i % 2];
                    ("read", client.get(format!("{lb}{path}")).send().await)
                };
                match sent {
                    Ok(r) if r.status().is_success() => {
                        served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Ok(r) => failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("{what}: {}", r.status())),
                    Err(e) => failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("{what}: {e}")),
                }
                let pause = if n == 0 { 100 } else { 10 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
        }));
    }
    let served_at_least = |n: usize| {
        let served = &served;
        a.eventually(Duration::from_secs(20), move || async move {
            served.load(std::sync::atomic::Ordering::SeqCst) >= n
        })
    };
    assert!(
        served_at_least(40).await,
        "the load runs before the restart"
    );

    // B is restarted: asked to stop, it ends its stream with a retry hint.
    let pid = nix::unistd::Pid::from_raw(b.0.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, futures_util::StreamExt::next(&mut events)).await {
            Ok(Some(Ok(chunk))) => said.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(_) => break,
            Err(_) => panic!("B's stream did not end: {said}"),
        }
    }
    assert!(
        said.contains("retry: 1000"),
        "the stream ends with a retry hint: {said}"
    );
    let exited = tokio::task::block_in_place(|| b.0.wait()).expect("B exits");
    assert!(exited.success(), "B stopped cleanly: {exited:?}");
    let (again, _) = crate::support::spawn_at(&a.db, &b_addr, &env);
    b = Running(again);
    // B is back, and the load goes on through all three for a while.
    assert!(
        a.eventually(Duration::from_secs(20), || async {
            reqwest::get(format!("{b_base}/api/health?ready"))
                .await
                .is_ok_and(|r| r.status() == 200)
        })
        .await,
        "B is ready again"
    );
    let so_far = served.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        served_at_least(so_far + 60).await,
        "the load runs after the restart"
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for l in load {
        l.await.expect("load");
    }
    drop(b);
    let failures = failures.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(failures.is_empty(), "requests failed: {failures:?}");
    let served = served.load(std::sync::atomic::Ordering::SeqCst);
    assert!(served > 100, "the load ran: {served}");
    eprintln!("{served} requests through nginx while B restarted, none failed");
}

/// The pid of the process (one of `children`) holding a connection to
/// `port` on 127.0.0.1, as `ss` (iproute2) reports it.
fn holder_of(port: u16, children: &[u32]) -> Option<u32> {
    let out = std::process::Command::new("ss")
        .args(["-Htnp", "state", "established"])
        .arg(format!("dst 127.0.0.1:{port}"))
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    children
        .iter()
        .copied()
        .find(|pid| text.contains(&format!("pid={pid},")))
}

/// A webhook being sent when the instance sending it dies (SIGKILL, no
/// chance to clean up) is not lost: once its lease runs out another of the
/// three instances sends it again, with the same `webhook-id`, so a
/// receiver that deduplicates by it (as Standard Webhooks asks) acts on it
/// exactly once, and the delivery log says delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn a_notification_survives_the_death_of_the_instance_sending_it() {
    // Requests time out after 3 s (the instance is killed well before its
    // attempt could), so a lease runs out 24 s after it was taken.
    let env = [
        ("UPSTATE_OUTGOING_ALLOW", "127.0.0.1"),
        ("UPSTATE_DELIVERY_TIMEOUT_SECS", "3"),
    ];
    let a = Server::start_with(Backend::Postgres, &env).await;
    let (b, _) = spawn(&a.db, &env);
    let (c, _) = spawn(&a.db, &env);
    let rx = crate::receiver::Receiver::start().await;
    let port: u16 = rx
        .base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("receiver port");
    // The first attempt hangs (until its sender dies); later ones succeed.
    rx.plan([crate::receiver::Plan::Slow(60_000)]);
    let p = a.page("shared").await;
    let comp = a.component(p, "API").await;
    let made = a
        .post(
            "/api/notifications",
            json!({"name": "On-call", "kind": "webhook", "target": format!("{}/hook", rx.base)}),
        )
        .await
        .data(201);
    assert!(made["secret"].is_string());
    a.patch(
        &format!("/api/v1/components/{comp}/status"),
        json!({"status": "major_outage"}),
    )
    .await
    .data(200);
    let first = rx.wait_for(1, Duration::from_secs(10)).await;
    let id = first[0].header("webhook-id").to_string();
    assert!(!id.is_empty());
    let children = [(a.child_id(), "A"), (b.id(), "B"), (c.id(), "C")];
    let pids: Vec<u32> = children.iter().map(|(p, _)| *p).collect();
    let mut holder = None;
    let deadline = Instant::now() + Duration::from_secs(5);
    while holder.is_none() && Instant::now() < deadline {
        holder = holder_of(port, &pids);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let holder = holder.expect("an instance holds the webhook's connection");
    let killed = Instant::now();
    let name = children.iter().find(|(p, _)| *p == holder).map(|(_, n)| *n);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(holder as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
    eprintln!("killed instance {name:?} mid-delivery");
    let (_b, _c) = (Running(b), Running(c));
    // Another instance takes it over once the lease runs out.
    let again = rx.wait_for(2, Duration::from_secs(40)).await;
    assert_eq!(again[1].header("webhook-id"), id, "the same message again");
    eprintln!("sent again {:?} after the kill", killed.elapsed());
    // The delivery log says delivered, which no instance sends again: from
    // here nothing more comes, and the receiver, deduplicating by the id,
    // acted once.
    let delivered = "SELECT status FROM deliveries WHERE channel_id IS NOT NULL";
    assert!(
        a.eventually(Duration::from_secs(10), || async {
            a.db.texts(delivered).await == ["delivered"]
        })
        .await,
        "the delivery is logged as delivered"
    );
    let ids: std::collections::BTreeSet<String> = rx
        .got()
        .iter()
        .map(|g| g.header("webhook-id").to_string())
        .collect();
    assert_eq!(ids.len(), 1, "one message: {ids:?}");
}
