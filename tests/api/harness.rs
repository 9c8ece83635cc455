//! The in-process harness: the application built in the test's own process
//! (like zero-to-production's `spawn_app` and crates.io's `TestApp`), still
//! served over HTTP on a real socket against a real database, but with the
//! store in the test's hands. No job worker runs on its own: the test moves
//! its clock and runs the jobs that are due by then, so "an hour later" takes
//! no time and nothing happens behind the test's back.
//!
//! `support::Server` runs the whole service (job loops too) the way the
//! binary does; this is for a test that must say when each job and
//! delivery runs: deliveries go to real local receivers
//! (`receiver::Receiver`), and the test runs the sender when it chooses. A test
//! ends with no due job or delivery left unrun unless it says why
//! (checked on drop).

use crate::support::{Backend, TestDb};
use reqwest::Method;
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use upstate_core::Timestamp;
use upstate_core::audit::Actor;
use upstate_core::scope::Scope;
use upstate_store::{AuditCtx, Db};

/// The application serving `db` on a free port of this process: the same
/// router the binary serves, without its job loops (whoever holds it runs
/// the jobs, or does not need them).
pub struct Here {
    pub base: String,
    pub sender: upstate_jobs::Sender,
    pub checker: upstate_jobs::monitors::Checker,
    /// Cancelled: the server stops.
    pub stop: CancellationToken,
}

/// Serves `db` here with `settings` (its public URL set to where it
/// listens) and `delivery`; 127.0.0.1 is allowed to deliveries and monitor
/// checks (the receivers live there).
pub async fn serve_here(
    db: &Db,
    mut settings: upstate_server::ServerSettings,
    mut delivery: upstate_jobs::DeliverySettings,
) -> Here {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    settings.public_url = base.clone();
    delivery.allow.push("127.0.0.1/32".parse().expect("range"));
    // Links in messages lead back to this server.
    delivery.public_url = base.clone();
    let sender = upstate_jobs::Sender::new(delivery).expect("sender");
    let checker = upstate_jobs::monitors::Checker::new(&upstate_jobs::monitors::MonitorSettings {
        allow: vec!["127.0.0.1/32".parse().expect("range")],
        ..Default::default()
    })
    .expect("checker");
    let app = upstate_server::app(db.clone(), &settings, sender.clone(), checker.clone());
    let stop = CancellationToken::new();
    let until = stop.clone();
    tokio::spawn(upstate_server::serve(
        listener,
        app,
        &settings,
        async move { until.cancelled().await },
    ));
    Here {
        base,
        sender,
        checker,
        stop,
    }
}

pub struct TestApp {
    pub base: String,
    pub db: Db,
    key: String,
    checker: upstate_jobs::monitors::Checker,
    stop: CancellationToken,
    pub test_db: TestDb,
    http: reqwest::Client,
    pub sender: upstate_jobs::Sender,
    leave_pending: bool,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, upstate_jobs::DeliverySettings::default()).await
    }

    /// With these delivery settings; 127.0.0.1 is always allowed (the
    /// receivers live there).
    pub async fn spawn_with(backend: Backend, delivery: upstate_jobs::DeliverySettings) -> TestApp {
        let test_db = TestDb::new(backend).await;
        let db = Db::connect(&test_db.url).await.expect("connect");
        db.migrate().await.expect("migrate");
        // The key file where the binary run in the test's directory finds it.
        let keys = upstate::config::KeySource::File(test_db.dir.path().join("data/secret.key"));
        let (db, _) = upstate::server_key::unlock(&keys, db)
            .await
            .expect("server key");
        let ctx = AuditCtx::of(Actor::system("test"));
        let (_, key) = upstate_store::api_keys::create(&db, &ctx, "harness", &[Scope::Admin], None)
            .await
            .expect("key");
        let settings = upstate_server::ServerSettings {
            api_rate_per_minute: 100_000,
            api_rate_per_hour: 1_000_000,
            ..Default::default()
        };
        let Here {
            base,
            sender,
            checker,
            stop,
        } = serve_here(&db, settings, delivery).await;
        TestApp {
            base,
            db,
            key,
            checker,
            stop,
            test_db,
            http: reqwest::Client::new(),
            sender,
            leave_pending: false,
        }
    }

    /// The app's "now": the wall clock moved by every `advance`. The
    /// routes, the store and the jobs read the same clock (`Db::clock`).
    pub fn now(&self) -> Timestamp {
        self.db.clock.now()
    }

    pub fn advance(&mut self, by: Duration) {
        self.db.clock.advance(by);
    }

    /// Moves the clock by `at_least`, or on to the next monitor check if
    /// that is later (each monitor keeps its own slot in its interval).
    pub async fn advance_to_next_check(&mut self, at_least: Duration) {
        let next = self
            .test_db
            .integers("SELECT COALESCE(MIN(next_run_at), 0) FROM monitors WHERE enabled")
            .await[0];
        let now = self.now().millis();
        let by = (next - now).max(at_least.as_millis() as i64);
        self.db.clock.advance(Duration::from_millis(by as u64));
    }

    /// Runs every job due at the harness's now; returns how many finished.
    pub async fn run_jobs(&self) -> usize {
        upstate_jobs::run_due(&self.db, &self.sender.settings, self.now())
            .await
            .expect("job round")
    }

    /// Runs every monitor check due at the harness's now; returns how many
    /// it recorded.
    pub async fn run_monitors(&self) -> usize {
        upstate_jobs::monitors::run_due(&self.db, &self.checker, self.now())
            .await
            .expect("monitor round")
    }

    /// Makes every delivery due at the harness's now; returns how many it
    /// settled.
    pub async fn send_deliveries(&self) -> usize {
        upstate_jobs::send_due(&self.db, &self.sender, self.now())
            .await
            .expect("delivery round")
    }

    /// Runs what is due until nothing is: jobs, then the deliveries they
    /// made. Returns how many of each ran, for the test to say what it
    /// expected (the drop check refuses a test that leaves them unrun).
    pub async fn settle(&self) -> (usize, usize) {
        let (mut jobs, mut deliveries) = (0, 0);
        loop {
            let j = self.run_jobs().await;
            let d = self.send_deliveries().await;
            if j + d == 0 {
                return (jobs, deliveries);
            }
            jobs += j;
            deliveries += d;
        }
    }

    /// Sends a keyed request; returns (status, JSON body or Null).
    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The `data` of a keyed request that must answer `want`.
    pub async fn data(&self, method: Method, path: &str, body: Option<Value>, want: u16) -> Value {
        let (status, body) = self.send(method, path, body).await;
        assert_eq!(status, want, "{path}: {body}");
        body["data"].clone()
    }

    /// `/api/components/{id}/details`: the component as operators ask about it.
    pub async fn details(&self, component: &Value) -> Value {
        self.data(
            Method::GET,
            &format!("/api/components/{component}/details"),
            None,
            200,
        )
        .await
    }

    /// A page made through the harness; its id.
    pub async fn page(&self, slug: &str) -> Value {
        self.data(
            Method::POST,
            "/api/v1/statuspages",
            Some(serde_json::json!({"name": slug, "slug": slug})),
            201,
        )
        .await["id"]
            .clone()
    }

    /// A component of `page` made through the harness; its id.
    pub async fn component(&self, page: &Value, name: &str) -> Value {
        self.data(
            Method::POST,
            "/api/v1/components",
            Some(serde_json::json!({"name": name, "statusPageId": page})),
            201,
        )
        .await["id"]
            .clone()
    }
}

impl TestApp {
    /// Says that this test leaves due work unrun on purpose (it is about
    /// something else); the drop check then lets it be.
    pub fn leave_pending(&mut self) {
        self.leave_pending = true;
    }

    /// Due jobs and deliveries nobody ran, as "N jobs, M deliveries", or None.
    fn pending(&self) -> Option<String> {
        let now = self.now().millis();
        let db = &self.test_db;
        // Its own thread and runtime: a drop cannot await, and the test's
        // runtime may be a current-thread one.
        let (jobs, deliveries) = std::thread::scope(|s| {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(async {
                    let jobs = db
                        .integers(&format!("SELECT COUNT(*) FROM jobs WHERE run_at <= {now} AND kind <> 'prune'"))
                        .await[0];
                    let deliveries = db
                        .integers(&format!(
                            "SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND run_at <= {now}"
                        ))
                        .await[0];
                    (jobs, deliveries)
                })
            })
            .join()
            .expect("pending check")
        });
        (jobs + deliveries > 0).then(|| format!("{jobs} jobs, {deliveries} deliveries"))
    }
}

/// Like crates.io's `TestApp`: a test ends with nothing due left behind
/// unnoticed (a job it forgot to run, a message it never sent), unless it
/// said so (`leave_pending`) or failed already.
impl Drop for TestApp {
    fn drop(&mut self) {
        self.stop.cancel();
        if self.leave_pending || std::thread::panicking() {
            return;
        }
        if let Some(left) = self.pending() {
            panic!(
                "the test left due work unrun ({left}): run it (run_jobs, send_deliveries) \
                 and check what it did, or say why with leave_pending"
            );
        }
    }
}
