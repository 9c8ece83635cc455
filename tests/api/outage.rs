//! PostgreSQL going away under load (docs/operations.md, "When the database
//! goes away"): the instance keeps answering public reads from its snapshots
//! (stale beats down), says it is not ready, refuses writes with a clear 503
//! problem, and recovers by itself when the database is back; nothing
//! acknowledged is lost.
//!
//! The database "restarts" behind a TCP proxy the test controls, so the
//! instance sees what a restart looks like on the wire (its connections cut,
//! new ones refused) while the other tests keep their PostgreSQL.

use crate::support::{Backend, Server, TestDb};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy to PostgreSQL that can go away as a restarting server does:
/// every connection cut and the port refusing new ones, until it is back.
struct Proxy {
    addr: std::net::SocketAddr,
    target: String,
    links: Links,
    accepting: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

type Links = Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>;

impl Proxy {
    async fn start(target: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let links = Links::default();
        let accepting = tokio::spawn(Self::accept(listener, target.clone(), links.clone()));
        Proxy {
            addr,
            target,
            links,
            accepting: std::sync::Mutex::new(Some(accepting)),
        }
    }

    async fn accept(listener: TcpListener, target: String, links: Links) {
        while let Ok((mut client, _)) = listener.accept().await {
            let target = target.clone();
            let link = tokio::spawn(async move {
                if let Ok(mut server) = TcpStream::connect(&target).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
            links
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(link.abort_handle());
        }
    }

    /// The database goes away: every connection cut, the port closed.
    fn cut(&self) {
        if let Some(task) = self
            .accepting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
        for link in self
            .links
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            link.abort();
        }
    }

    /// It is back, on the same port.
    async fn restore(&self) {
        let listener = TcpListener::bind(self.addr).await.expect("bind again");
        let task = tokio::spawn(Self::accept(
            listener,
            self.target.clone(),
            self.links.clone(),
        ));
        *self.accepting.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }
}

/// `url` with its host and port replaced by the proxy's.
fn through(url: &str, proxy: std::net::SocketAddr) -> String {
    let mut u = url::Url::parse(url).expect("database url");
    u.set_host(Some(&proxy.ip().to_string())).expect("host");
    u.set_port(Some(proxy.port())).expect("port");
    u.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn postgres_going_away_under_load_leaves_pages_up_and_refuses_writes_clearly() {
    let admin = std::env::var("UPSTATE_TEST_POSTGRES_URL").unwrap_or_default();
    let pg = url::Url::parse(&admin).expect("UPSTATE_TEST_POSTGRES_URL");
    let target = format!(
        "{}:{}",
        pg.host_str().unwrap_or("127.0.0.1"),
        pg.port().unwrap_or(5432)
    );
    let proxy = Proxy::start(target).await;
    let db = TestDb::new(Backend::Postgres).await;
    let proxied = through(&db.url, proxy.addr);
    let s = Server::process_on(
        db,
        &[
            ("UPSTATE_DATABASE_URL", &proxied),
            ("RUST_LOG", "info,sqlx=warn"),
            // The readers below are one busy client: not limited here.
            ("UPSTATE_PUBLIC_RATE_SUMMARY", "0"),
            ("UPSTATE_PUBLIC_RATE_COMPONENTS", "0"),
            ("UPSTATE_PUBLIC_RATE_INCIDENTS", "0"),
            ("UPSTATE_PUBLIC_RATE_MAINTENANCE", "0"),
            ("UPSTATE_PUBLIC_RATE_UPTIME", "0"),
            ("UPSTATE_PUBLIC_RATE_PAGE", "0"),
        ],
    );
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let before = s
        .post(
            "/api/v1/incidents",
            json!({"title": "Slow logins", "statusPageId": page, "message": "Looking",
                   "componentStatuses": [{"componentId": api, "status": "degraded"}]}),
        )
        .await
        .data(201);

    // Visitors and integrations read all along.
    let reads = [
        "/api/public/status/acme",
        "/s/acme/api/v2/summary.json",
        "/s/acme",
        "/api/feed/rss?page=acme",
    ];
    let client = reqwest::Client::new();
    for path in reads {
        let r = client
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .expect("read");
        assert_eq!(r.status(), 200, "{path}");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicUsize::new(0));
    let failures: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let mut readers = vec![];
    for n in 0..2 {
        let (stop, served, failures) = (stop.clone(), served.clone(), failures.clone());
        let (client, base) = (client.clone(), s.base.clone());
        readers.push(tokio::spawn(async move {
            let mut i = n;
            while !stop.load(Ordering::SeqCst) {
                let path = reads[i % reads.len()];
                i += 1;
                let failed = match client.get(format!("{base}{path}")).send().await {
                    Ok(r) if r.status() == 200 => {
                        let text = r.text().await.unwrap_or_default();
                        (!path.starts_with("/api/feed/rss") && !text.contains("Slow logins"))
                            .then(|| "without the incident".to_string())
                    }
                    Ok(r) => Some(r.status().to_string()),
                    Err(e) => Some(e.to_string()),
                };
                match failed {
                    Some(why) => failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("{path}: {why}")),
                    None => {
                        served.fetch_add(1, Ordering::SeqCst);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    // Some reads are served while the database is there.
    let served_at_least = |n: usize| {
        let served = &served;
        s.eventually(Duration::from_secs(20), move || async move {
            served.load(Ordering::SeqCst) >= n
        })
    };
    assert!(served_at_least(10).await, "readers read before the outage");

    // Writers keep changing a component: those under way when the
    // database goes are answered soon, not after the pool's timeouts.
    let cut_at: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
    let slow: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let mut writers = vec![];
    for n in 0..3 {
        let (stop, cut_at, slow) = (stop.clone(), cut_at.clone(), slow.clone());
        let (client, base, key) = (client.clone(), s.base.clone(), s.key.clone());
        writers.push(tokio::spawn(async move {
            let mut i = n;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let status = ["degraded", "partial_outage"][i % 2];
                let sent = Instant::now();
                let answer = client
                    .patch(format!("{base}/api/v1/components/{api}/status"))
                    .bearer_auth(&key)
                    .json(&json!({"status": status}))
                    .timeout(Duration::from_secs(60))
                    .send()
                    .await;
                let done = Instant::now();
                let cut = *cut_at.lock().unwrap_or_else(|e| e.into_inner());
                // Under way at the cut (or sent after it): answered within
                // seconds of whichever came later.
                if let Some(cut) = cut
                    && done > cut
                    && done.duration_since(sent.max(cut)) > Duration::from_secs(5)
                {
                    slow.lock().unwrap_or_else(|e| e.into_inner()).push(format!(
                        "answered {:?} after the cut: {:?}",
                        done.duration_since(sent.max(cut)),
                        answer.map(|r| r.status())
                    ));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The database goes away.
    *cut_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    proxy.cut();
    assert!(
        s.eventually(Duration::from_secs(10), || async {
            client
                .get(format!("{}/api/health?ready", s.base))
                .send()
                .await
                .is_ok_and(|r| r.status() == 503)
        })
        .await,
        "not ready without the database"
    );
    let live = client
        .get(format!("{}/api/health", s.base))
        .send()
        .await
        .expect("live");
    assert_eq!(live.status(), 200, "still serving pages");
    let live: Value = live.json().await.expect("json");
    assert_eq!(live["database"], "unreachable", "{live}");
    // A write is refused, clearly and soon.
    let started = Instant::now();
    let refused = client
        .post(format!("{}/api/v1/incidents", s.base))
        .bearer_auth(&s.key)
        .json(&json!({"title": "During the outage", "statusPageId": page, "message": "x"}))
        .send()
        .await
        .expect("write");
    let took = started.elapsed();
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    let problem: Value = refused.json().await.expect("problem");
    assert_eq!(
        problem["type"], "urn:upstate:problem:database-unavailable",
        "{problem}"
    );
    assert!(took < Duration::from_secs(12), "refused after {took:?}");
    eprintln!("a write was refused after {took:?} without the database");
    // Readers go on being served while the database is away.
    let so_far = served.load(Ordering::SeqCst);
    assert!(
        served_at_least(so_far + 40).await,
        "reads served during the outage: {} so far; failures {:?}",
        served.load(Ordering::SeqCst) - so_far,
        failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
    );

    // It comes back: the instance recovers by itself.
    proxy.restore().await;
    let back = Instant::now();
    loop {
        let r = client
            .get(format!("{}/api/health?ready", s.base))
            .send()
            .await
            .expect("ready");
        if r.status() == 200 {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(20),
            "never ready again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("ready {:?} after the database came back", back.elapsed());
    let after = s
        .post(
            "/api/v1/incidents",
            json!({"title": "After the outage", "statusPageId": page, "message": "Back"}),
        )
        .await
        .data(201);
    assert!(
        s.eventually(Duration::from_secs(5), || async {
            let r = client
                .get(format!("{}/api/public/status/acme", s.base))
                .send()
                .await;
            match r {
                Ok(r) => r.text().await.is_ok_and(|t| t.contains("After the outage")),
                Err(_) => false,
            }
        })
        .await,
        "the pages show writes again: {}\n{}",
        client
            .get(format!("{}/api/public/status/acme", s.base))
            .send()
            .await
            .expect("read")
            .text()
            .await
            .expect("text"),
        s.log()
    );
    stop.store(true, Ordering::SeqCst);
    for r in readers {
        r.await.expect("reader");
    }
    for w in writers {
        w.await.expect("writer");
    }
    let slow = slow.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(slow.is_empty(), "writes under way at the cut: {slow:?}");
    let failures = failures.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(failures.is_empty(), "public reads failed: {failures:?}");
    assert!(served.load(Ordering::SeqCst) > 50, "reads ran");
    // Nothing acknowledged was lost; the refused write is nowhere.
    let titles = s.db.texts("SELECT title FROM incidents ORDER BY id").await;
    assert_eq!(
        titles,
        ["Slow logins", "After the outage"],
        "{before} {after}"
    );
    assert!(!s.log().contains("ERROR"), "{}", s.log());
}
