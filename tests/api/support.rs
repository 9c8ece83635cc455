//! Test support: a fresh database per test (a temp SQLite file, or a new
//! PostgreSQL database created from UPSTATE_TEST_POSTGRES_URL), copied from
//! one migrated template per test process (as crates.io's test-db does), the
//! service `upstate serve` runs serving it on a free port (in this process,
//! or the real binary where a test needs a process), and a small HTTP client.

use reqwest::Method;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_upstate");
static COUNTER: AtomicU32 = AtomicU32::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server tests may create databases on, if configured.
pub fn postgres_admin_url() -> Option<String> {
    std::env::var("UPSTATE_TEST_POSTGRES_URL")
        .ok()
        .filter(|s| !s.is_empty())
}

/// Runs a test body once per backend. Without UPSTATE_TEST_POSTGRES_URL at
/// build time (see build.rs) the PostgreSQL run is compiled as ignored, so the
/// summary line of the run says how many were left out; CI always sets it.
///
/// `long:` marks the probes that take minutes (the contract fuzzer, the
/// SIGKILL crash test): they run when the tests are built with
/// `UPSTATE_TEST_LONG=1` (CI does) and are otherwise listed as ignored, so a
/// change's own run stays short. `browser:` marks the journeys in Chromium:
/// half the suite's CPU on two cores, so each runs once, on one database,
/// and only when the tests are built with `UPSTATE_TEST_BROWSER=1` (CI
/// does, and so should a change to a page).
#[macro_export]
macro_rules! on_both_backends {
    (long: $($name:ident),* $(,)?) => {
        $crate::on_both_backends!(@asked long_tests,
            "a long probe: build the tests with UPSTATE_TEST_LONG=1 to run it (CI does)",
            "a long probe on PostgreSQL: build the tests with UPSTATE_TEST_LONG=1 and UPSTATE_TEST_POSTGRES_URL (CI does)",
            $($name),*);
    };
    // A journey in Chromium runs once, on one database: what a page does in
    // a browser is the same on both, and the API suite runs every scenario
    // on both. `browser:` runs on SQLite; `browser(postgres):` on
    // PostgreSQL, for the journeys whose work below the page takes another
    // path there (bulk imports, which set PostgreSQL's id sequences after
    // them). Named `…::journey::{sqlite,postgres}`, so CI can run them apart.
    (browser: $($name:ident),* $(,)?) => {
        $crate::on_both_backends!(@journey sqlite, Sqlite, browser_tests,
            "a Chromium journey: build the tests with UPSTATE_TEST_BROWSER=1 to run it (CI does)",
            $($name),*);
    };
    (browser(postgres): $($name:ident),* $(,)?) => {
        $crate::on_both_backends!(@journey postgres, Postgres, all(browser_tests, postgres_tests),
            "a Chromium journey on PostgreSQL: build the tests with UPSTATE_TEST_BROWSER=1 and UPSTATE_TEST_POSTGRES_URL (CI does)",
            $($name),*);
    };
    (@journey $db:ident, $backend:ident, $asked:meta, $why:literal, $($name:ident),*) => {$(
        mod $name {
            mod journey {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(not($asked), ignore = $why)]
                async fn $db() {
                    $crate::support::timed(concat!(module_path!(), "::", stringify!($db)), super::super::$name($crate::support::Backend::$backend)).await
                }
            }
        }
    )*};
    // Tests that run only when the tests were built with `$asked` set.
    (@asked $asked:ident, $why:literal, $why_pg:literal, $($name:ident),*) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not($asked), ignore = $why)]
            async fn sqlite() {
                $crate::support::timed(concat!(module_path!(), "::sqlite"), super::$name($crate::support::Backend::Sqlite)).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not(all(postgres_tests, $asked)), ignore = $why_pg)]
            async fn postgres() {
                $crate::support::timed(concat!(module_path!(), "::postgres"), super::$name($crate::support::Backend::Postgres)).await
            }
        }
    )*};
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                $crate::support::timed(concat!(module_path!(), "::sqlite"), super::$name($crate::support::Backend::Sqlite)).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not(postgres_tests), ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built")]
            async fn postgres() {
                $crate::support::timed(concat!(module_path!(), "::postgres"), super::$name($crate::support::Backend::Postgres)).await
            }
        }
    )*};
}

/// The whole `Set-Cookie` line an answer sets for cookie `name`
/// (attributes included: `.split(';').next()` is the pair to send back).
pub fn set_cookie(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    let prefix = format!("{name}=");
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&prefix))
        .map(str::to_string)
}

/// Adds `text` to the file `UPSTATE_TEST_NOTES` names, if any: what a long
/// probe reached in its time, which `.ci/run` prints at the end of the run
/// (a passing test's own output is not shown).
pub fn note(text: &str) {
    if let Some(file) = std::env::var_os("UPSTATE_TEST_NOTES") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(file)
        {
            let _ = f.write_all(format!("{}\n", text.trim_end()).as_bytes());
        }
    }
}

/// Runs a test and, when `UPSTATE_TEST_TIMES` names a file, adds a line
/// of its seconds and name to it (`.ci/run` prints the slowest, so the next
/// slowdown is seen at the test that made it). Only a test that returns is
/// written down; a failure shows in cargo's own report.
pub async fn timed(name: &str, test: impl std::future::Future<Output = ()>) {
    let started = std::time::Instant::now();
    test.await;
    if let Some(file) = std::env::var_os("UPSTATE_TEST_TIMES") {
        use std::io::Write;
        let line = format!(
            "{:.1} {}\n",
            started.elapsed().as_secs_f64(),
            name.trim_start_matches("api::")
        );
        // One write of one short line: lines of tests ending together stay whole.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(file)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// A database that exists for one test and is dropped after it.
pub struct TestDb {
    pub backend: Backend,
    pub url: String,
    pub dir: tempfile::TempDir,
    pg: Option<(String, String)>,
}

fn with_database(admin_url: &str, db: &str) -> String {
    let (base, query) = admin_url
        .split_once('?')
        .map(|(b, q)| (b, format!("?{q}")))
        .unwrap_or((admin_url, String::new()));
    let root = match base.rfind('/') {
        Some(i) if i > base.find("://").map(|j| j + 2).unwrap_or(0) => &base[..i],
        _ => base,
    };
    format!("{root}/{db}{query}")
}

/// A unique database name (test databases are swept by `.ci/run` by their
/// `upstate_test_` prefix).
fn unique_name(what: &str) -> String {
    format!(
        "upstate_test_{what}{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    )
}

/// Runs `work` to its end on a runtime of its own (the templates outlive
/// the test whose runtime made them).
fn on_own_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> T {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(work)
    })
    .join()
    .expect("template thread")
}

/// Each backend's migrated template, looked up once per test process: a
/// SQLite file to copy, or a PostgreSQL database to copy with `TEMPLATE`.
static TEMPLATES: std::sync::Mutex<(Option<std::path::PathBuf>, Option<String>)> =
    std::sync::Mutex::new((None, None));

/// The migrations' files, hashed: templates are named by it and shared by
/// every test process (nextest runs each test in a process of its own, so
/// a template per process migrated as often as there were tests) until a
/// migration changes.
fn migrations_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        use sha2::Digest;
        let mut hash = sha2::Sha256::new();
        for backend in ["postgres", "sqlite"] {
            let dir = root().join("crates/store/migrations").join(backend);
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .expect("the migrations")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            files.sort();
            for file in files {
                hash.update(file.to_string_lossy().as_bytes());
                hash.update(std::fs::read(&file).expect("a migration"));
            }
        }
        hex::encode(&hash.finalize()[..6])
    })
}

/// `CREATE DATABASE name` on the server `admin` names (`template`: empty,
/// or ` TEMPLATE other`).
async fn create_database(admin: &str, name: &str, template: &str) {
    admin_sql(admin, &format!("CREATE DATABASE {name}{template}"))
        .await
        .expect("create a test database");
}

/// A connection to the server's administrative database.
async fn admin_conn(admin: &str) -> sqlx::PgConnection {
    <sqlx::PgConnection as sqlx::Connection>::connect(admin)
        .await
        .expect("connect to PostgreSQL")
}

/// One statement on the server's administrative database.
async fn admin_sql(admin: &str, sql: &str) -> Result<(), sqlx::Error> {
    sqlx::Executor::execute(
        &mut admin_conn(admin).await,
        sqlx::AssertSqlSafe(sql.to_string()),
    )
    .await
    .map(|_| ())
}

async fn database_exists(admin: &str, name: &str) -> bool {
    sqlx::query_scalar::<_, i32>("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(name)
        .fetch_optional(&mut admin_conn(admin).await)
        .await
        .expect("look for a database")
        .is_some()
}

async fn migrated(url: String) {
    let db = upstate_store::Db::connect(&url)
        .await
        .expect("connect to the template");
    db.migrate().await.expect("migrate the template");
    db.close().await;
}

/// `target/test-templates/<key>.db`, written by the first process that
/// needs it (to a file of its own, then renamed into place: a process never
/// copies a half-written template).
fn sqlite_template() -> std::path::PathBuf {
    let mut t = TEMPLATES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = &t.0 {
        return path.clone();
    }
    let dir = root().join("target/test-templates");
    let path = dir.join(format!("{}.db", migrations_key()));
    if !path.exists() {
        std::fs::create_dir_all(&dir).expect("template dir");
        let work = tempfile::tempdir_in(&dir).expect("temp dir");
        let made = work.path().join("made.db");
        let url = format!("sqlite://{}", made.display());
        on_own_runtime(migrated(url.clone()));
        // One self-contained file (no WAL beside it) to copy.
        let whole = work.path().join("template.db");
        let into = whole.display().to_string();
        on_own_runtime(async move {
            let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
                .await
                .expect("sqlite");
            sqlx::Executor::execute(&mut c, sqlx::AssertSqlSafe(format!("VACUUM INTO '{into}'")))
                .await
                .expect("vacuum into the template");
        });
        std::fs::rename(&whole, &path).expect("place the template");
    }
    t.0 = Some(path.clone());
    path
}

/// `upstate_test_template_<key>`, made by the first process that needs it
/// under a name of its own and renamed when migrated; a process that lost
/// the race to rename drops its copy and uses the winner's.
fn postgres_template(admin: &str) -> String {
    let mut t = TEMPLATES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(name) = &t.1 {
        return name.clone();
    }
    let name = format!("upstate_test_template_{}", migrations_key());
    let (admin_url, wanted) = (admin.to_string(), name.clone());
    on_own_runtime(async move {
        if !database_exists(&admin_url, &wanted).await {
            let building = unique_name("building_");
            create_database(&admin_url, &building, "").await;
            migrated(with_database(&admin_url, &building)).await;
            let renamed = admin_sql(
                &admin_url,
                &format!("ALTER DATABASE {building} RENAME TO {wanted}"),
            )
            .await;
            if let Err(e) = renamed {
                let _ = admin_sql(&admin_url, &format!("DROP DATABASE IF EXISTS {building}")).await;
                assert!(
                    database_exists(&admin_url, &wanted).await,
                    "the template could not be put in place: {e}"
                );
            }
        }
    });
    t.1 = Some(name.clone());
    name
}

impl TestDb {
    /// A database with every migration applied (copied from the template).
    pub async fn new(backend: Backend) -> TestDb {
        Self::make(backend, true).await
    }

    /// A database with nothing in it, for what migrating itself does.
    pub async fn empty(backend: Backend) -> TestDb {
        Self::make(backend, false).await
    }

    async fn make(backend: Backend, migrated: bool) -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        match backend {
            Backend::Sqlite => {
                let file = dir.path().join("upstate.db");
                if migrated {
                    std::fs::copy(sqlite_template(), &file).expect("copy the template");
                }
                let url = format!("sqlite://{}", file.display());
                TestDb {
                    backend,
                    url,
                    dir,
                    pg: None,
                }
            }
            Backend::Postgres => {
                let admin = postgres_admin_url().expect("UPSTATE_TEST_POSTGRES_URL");
                let name = unique_name("");
                let template = if migrated {
                    let admin = admin.clone();
                    let made = tokio::task::spawn_blocking(move || postgres_template(&admin))
                        .await
                        .expect("template");
                    format!(" TEMPLATE {made}")
                } else {
                    String::new()
                };
                create_database(&admin, &name, &template).await;
                let url = with_database(&admin, &name);
                TestDb {
                    backend,
                    url,
                    dir,
                    pg: Some((admin, name)),
                }
            }
        }
    }

    /// Runs SQL directly against the test database (to age a key, say).
    pub async fn execute(&self, sql: &str) {
        match self.backend {
            Backend::Sqlite => {
                let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&self.url)
                    .await
                    .expect("sqlite");
                sqlx::Executor::execute(&mut c, sqlx::AssertSqlSafe(sql.to_string()))
                    .await
                    .expect("execute");
            }
            Backend::Postgres => {
                let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(&self.url)
                    .await
                    .expect("postgres");
                sqlx::Executor::execute(&mut c, sqlx::AssertSqlSafe(sql.to_string()))
                    .await
                    .expect("execute");
            }
        }
    }

    /// Everything the database holds, as an attacker with a copy reads
    /// it: SQLite's file and its write-ahead log byte for byte; every
    /// PostgreSQL table's rows as text.
    pub async fn everything_stored(&self) -> String {
        match self.backend {
            Backend::Sqlite => {
                let path = self.url.trim_start_matches("sqlite://");
                let path = path.split('?').next().unwrap_or(path);
                let mut all = Vec::new();
                for suffix in ["", "-wal"] {
                    if let Ok(bytes) = std::fs::read(format!("{path}{suffix}")) {
                        all.extend(bytes);
                    }
                }
                assert!(all.len() > 4096, "the database file {path} was read");
                String::from_utf8_lossy(&all).into_owned()
            }
            Backend::Postgres => {
                let tables = self
                    .texts(
                        "SELECT table_name::text FROM information_schema.tables \
                         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
                    )
                    .await;
                assert!(tables.len() > 10, "tables: {tables:?}");
                let mut all = String::new();
                for t in tables {
                    for row in self.texts(&format!("SELECT t::text FROM \"{t}\" t")).await {
                        all.push_str(&row);
                        all.push('\n');
                    }
                }
                all
            }
        }
    }

    /// The integers a one-column query returns (to look at rows the API
    /// does not show, such as jobs).
    pub async fn integers(&self, sql: &str) -> Vec<i64> {
        self.column(sql).await
    }

    /// The texts a one-column query returns (the outbox's kinds, say).
    pub async fn texts(&self, sql: &str) -> Vec<String> {
        self.column(sql).await
    }

    async fn column<T>(&self, sql: &str) -> Vec<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite>
            + sqlx::Type<sqlx::Sqlite>
            + for<'r> sqlx::Decode<'r, sqlx::Postgres>
            + sqlx::Type<sqlx::Postgres>
            + Send
            + Unpin,
    {
        let sql = sqlx::AssertSqlSafe(sql.to_string());
        match self.backend {
            Backend::Sqlite => {
                let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&self.url)
                    .await
                    .expect("sqlite");
                sqlx::query_scalar(sql)
                    .fetch_all(&mut c)
                    .await
                    .expect("query")
            }
            Backend::Postgres => {
                let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(&self.url)
                    .await
                    .expect("postgres");
                sqlx::query_scalar(sql)
                    .fetch_all(&mut c)
                    .await
                    .expect("query")
            }
        }
    }

    /// Runs the CLI against this database; returns (success, stdout, stderr).
    pub fn cli(&self, args: &[&str]) -> (bool, String, String) {
        self.cli_with(args, &[])
    }

    /// `cli` with more environment.
    pub fn cli_with(&self, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
        let out = Command::new(BIN)
            .args(args)
            .env("UPSTATE_DATABASE_URL", &self.url)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .current_dir(self.dir.path())
            .output()
            .expect("run upstate");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Creates a key with the CLI and returns its secret (the last stdout line).
    /// A key with `scopes`, made in process by the store, as the CLI's
    /// `api-key create` makes it (tests/api/cli.rs drives the CLI itself).
    pub fn create_key(&self, scopes: &str) -> String {
        let scopes = upstate_core::scope::parse_scopes(scopes).expect("scopes");
        let url = self.url.clone();
        on_own_runtime(async move {
            // Migrated already: a copy of the template (`TestDb::new`).
            let db = upstate_store::Db::connect(&url).await.expect("connect");
            let ctx = upstate_store::AuditCtx::of(upstate_core::audit::Actor::cli());
            let (_, key) = upstate_store::api_keys::create(&db, &ctx, "test", &scopes, None)
                .await
                .expect("api-key create");
            db.close().await;
            key
        })
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take() {
            let _ = std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(async move {
                    if let Ok(mut c) =
                        <sqlx::PgConnection as sqlx::Connection>::connect(&admin).await
                    {
                        let _ = sqlx::Executor::execute(
                            &mut c,
                            sqlx::AssertSqlSafe(format!(
                                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                            )),
                        )
                        .await;
                    }
                });
            })
            .join();
        }
    }
}

/// The service of a `Server` running in the test's process.
struct Here {
    /// Its store, whose clock `advance` moves.
    store: upstate_store::Db,
    /// Cancelled: the service stops.
    stop: tokio_util::sync::CancellationToken,
    /// The setup link's token it announced at start, if it had no users.
    setup_token: Option<String>,
}

/// A running `upstate serve`.
pub struct Server {
    pub base: String,
    pub key: String,
    pub db: TestDb,
    child: Option<Child>,
    /// Served in this process instead (`start`, `in_process`).
    here: Option<Here>,
    client: reqwest::Client,
}

/// The test's HTTP client. It lets a pooled connection go after 5 s idle,
/// before the server's 10 s (`header_timeout`) closes it: otherwise a
/// request sent just as the server closes an idle connection fails with
/// "connection closed before message completed".
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(5))
        .build()
        .expect("an HTTP client")
}

pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// `body.data`, asserting the status first.
    #[track_caller]
    pub fn data(&self, status: u16) -> Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        self.body["data"].clone()
    }

    /// Asserts an RFC 9457 problem with this status; returns the body.
    #[track_caller]
    pub fn problem(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "not problem+json"
        );
        assert_eq!(self.body["status"], json!(status));
        for field in ["type", "title", "detail"] {
            assert!(
                self.body[field].as_str().is_some_and(|s| !s.is_empty()),
                "problem lacks {field}: {}",
                self.body
            );
        }
        &self.body
    }

    /// Asserts a 422 whose `errors` name exactly these fields.
    #[track_caller]
    pub fn invalid_fields(&self, fields: &[&str]) {
        let body = self.problem(422);
        let mut got: Vec<&str> = body["errors"]
            .as_array()
            .expect("errors list")
            .iter()
            .filter_map(|e| e["field"].as_str())
            .collect();
        got.sort_unstable();
        let mut want = fields.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "body: {body}");
    }
}

/// A server process a test started beside its `Server`: killed when dropped,
/// so a failing assertion leaves no process behind.
pub struct Running(pub Child);

impl Running {
    /// Stops it as an operator would (SIGTERM), letting it finish what it
    /// is writing; whether it exited cleanly. It goes on the moment the
    /// process is gone: the minute is only where a hung stop fails.
    pub fn terminate(&mut self) -> bool {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.0.try_wait() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn spawn(db: &TestDb, env: &[(&str, &str)]) -> (Child, String) {
    spawn_at(db, "127.0.0.1:0", env)
}

/// `spawn`, listening on `addr` (an instance restarted where a load
/// balancer expects it).
pub fn spawn_at(db: &TestDb, addr: &str, env: &[(&str, &str)]) -> (Child, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--addr", addr])
        .env("UPSTATE_DATABASE_URL", &db.url)
        .env("RUST_LOG", "warn")
        .current_dir(db.dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(db.dir.path().join("server.log")).expect("log file"),
        ));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start upstate");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        while let Some(Ok(line)) = lines.next() {
            if let Some(addr) = line.strip_prefix("upstate listening on ") {
                let _ = tx.send(addr.to_string());
            }
        }
    });
    let base = match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(base) => base,
        Err(_) => {
            let _ = child.kill();
            let log = std::fs::read_to_string(db.dir.path().join("server.log")).unwrap_or_default();
            panic!("server did not start; log:\n{log}");
        }
    };
    (child, base)
}

impl Server {
    /// The service `upstate serve` runs (HTTP and job loops), started in
    /// this process on a fresh database with the binary's configuration:
    /// no process to start, and a clock the test may move (`advance`).
    /// Process-level behaviour (signals, restarts, the log, environment)
    /// needs `process` or `start_with`.
    pub async fn start(backend: Backend) -> Server {
        if std::env::var_os("UPSTATE_TEST_PROCESS").is_some() {
            return Self::process(backend).await;
        }
        Self::in_process(backend, |_| {}).await
    }

    /// `start` with its configuration changed by `settings`.
    pub async fn in_process(
        backend: Backend,
        settings: impl FnOnce(&mut upstate::config::Config),
    ) -> Server {
        let db = TestDb::new(backend).await;
        let key = db.create_key("admin");
        // An empty file of its own, as the binary started in the test's
        // directory finds none: a developer's ./upstate.toml stays out.
        let file = db.dir.path().join("upstate.toml");
        std::fs::write(&file, "").expect("configuration file");
        let mut config = upstate::config::Config::resolve(&upstate::config::Overrides {
            config: Some(file),
            database_url: Some(db.url.clone()),
            addr: Some("127.0.0.1:0".into()),
            // Where the binary started in the test's directory keeps its
            // files (the server key): the CLI run beside reads the same.
            data_dir: Some(db.dir.path().join("data")),
            ..Default::default()
        })
        .expect("configuration");
        settings(&mut config);
        let store = upstate::service::open(&config)
            .await
            .expect("open database");
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let stop = tokio_util::sync::CancellationToken::new();
        let until = stop.clone();
        let (tell, told) = tokio::sync::oneshot::channel();
        tokio::spawn(upstate::service::run(
            config,
            store.clone(),
            listener,
            async move { until.cancelled().await },
            move |started| {
                let _ = tell.send(started.setup_token.map(String::from));
            },
        ));
        let setup_token = told.await.expect("the service started");
        Server {
            base,
            key,
            db,
            child: None,
            here: Some(Here {
                store,
                stop,
                setup_token,
            }),
            client: client(),
        }
    }

    /// The real binary in its own process, for what needs one: signals,
    /// restarts, its log.
    pub async fn process(backend: Backend) -> Server {
        Self::start_with(backend, &[]).await
    }

    /// The binary started with extra environment (limits, say), and an admin key.
    pub async fn start_with(backend: Backend, env: &[(&str, &str)]) -> Server {
        Self::process_on(TestDb::new(backend).await, env)
    }

    /// The binary on a database the caller made, with extra environment.
    pub fn process_on(db: TestDb, env: &[(&str, &str)]) -> Server {
        let key = db.create_key("admin");
        let (child, base) = spawn(&db, env);
        Server {
            base,
            key,
            db,
            child: Some(child),
            here: None,
            client: client(),
        }
    }

    /// The process id of this server's binary (`process`, `start_with`).
    pub fn child_id(&self) -> u32 {
        self.child.as_ref().expect("a server process").id()
    }

    /// Moves the in-process server's clock on.
    pub fn advance(&self, by: Duration) {
        let here = self
            .here
            .as_ref()
            .expect("advance needs an in-process server");
        here.store.clock.advance(by);
    }

    /// The server's now in Unix seconds (what an authenticator app's clock
    /// must read for its codes to match): moved by `advance` in process.
    pub fn unix_secs(&self) -> u64 {
        match &self.here {
            Some(here) => (here.store.clock.now().millis() / 1000) as u64,
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .as_secs(),
        }
    }

    /// Waits until the server has nothing due left to do: no job due (but
    /// the hourly prune) and no delivery pending. Whatever a change was to
    /// send has been sent (and answered) by then, so a count of what
    /// arrived is final: the wait for "and nothing more comes".
    pub async fn quiet(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.unix_secs() * 1000 + 999;
            let left = self
                .db
                .integers(&format!(
                    "SELECT (SELECT COUNT(*) FROM jobs WHERE run_at <= {now} AND kind <> 'prune') \
                          + (SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND run_at <= {now})"
                ))
                .await[0];
            if left == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{left} jobs and deliveries still due after 20 s"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The first-owner setup link's token of an install with no users yet,
    /// as the service announced it at start (the binary logs it).
    pub async fn setup_token(&self) -> String {
        if let Some(here) = &self.here {
            return here
                .setup_token
                .clone()
                .expect("a setup link (no users at start)");
        }
        for _ in 0..50 {
            if let Some(t) = setup_token_in(&self.log()) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("a fresh install logs a setup link: {}", self.log());
    }

    /// Sends SIGTERM and waits for the process to exit; returns whether it exited cleanly.
    pub fn stop(&mut self) -> bool {
        self.signal_term();
        self.wait_exit()
    }

    pub fn signal_term(&self) {
        assert!(self.here.is_none(), "signals need Server::process");
        if let Some(child) = &self.child {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
    }

    /// Waits up to 15 s for the process to exit; returns whether it exited with success.
    pub fn wait_exit(&mut self) -> bool {
        let Some(mut child) = self.child.take() else {
            return false;
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.success();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server again on the same database; one still running
    /// (not `stop`ped first) is killed, so no test leaves a server behind.
    pub fn restart(&mut self, env: &[(&str, &str)]) {
        if let Some(mut old) = self.child.take() {
            let _ = old.kill();
            let _ = old.wait();
        }
        assert!(self.here.is_none(), "restarts need Server::process");
        let (child, base) = spawn(&self.db, env);
        self.child = Some(child);
        self.base = base;
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path));
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Resp {
            status,
            headers,
            body,
        }
    }

    /// Sends a raw body with a chosen content type.
    pub async fn send_raw(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Resp {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path))
            .bearer_auth(&self.key)
            .body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let res = req.send().await.expect("request");
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let text = res.text().await.expect("body");
        Resp {
            status,
            headers,
            body: serde_json::from_str(&text).unwrap_or(Value::String(text)),
        }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.send(Method::GET, path, Some(&self.key), None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Resp {
        self.send(Method::POST, path, Some(&self.key), Some(body))
            .await
    }
    pub async fn post_empty(&self, path: &str) -> Resp {
        self.send(Method::POST, path, Some(&self.key), None).await
    }
    pub async fn patch(&self, path: &str, body: Value) -> Resp {
        self.send(Method::PATCH, path, Some(&self.key), Some(body))
            .await
    }
    pub async fn put(&self, path: &str, body: Value) -> Resp {
        self.send(Method::PUT, path, Some(&self.key), Some(body))
            .await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.send(Method::DELETE, path, Some(&self.key), None).await
    }

    // ---- fixtures

    /// Turns the install's switches (`PUT /api/features`) as `switches` say.
    pub async fn features(&self, switches: Value) {
        self.put("/api/features", switches).await.data(200);
    }

    pub async fn page(&self, slug: &str) -> i64 {
        let r = self
            .post(
                "/api/v1/statuspages",
                json!({"name": format!("Page {slug}"), "slug": slug}),
            )
            .await;
        r.data(201)["id"].as_i64().expect("page id")
    }

    pub async fn component(&self, page: i64, name: &str) -> i64 {
        let r = self
            .post(
                "/api/v1/components",
                json!({"name": name, "statusPageId": page}),
            )
            .await;
        r.data(201)["id"].as_i64().expect("component id")
    }

    pub async fn group(&self, page: i64, name: &str) -> i64 {
        let r = self
            .post(
                "/api/v1/component-groups",
                json!({"name": name, "statusPageId": page}),
            )
            .await;
        r.data(201)["id"].as_i64().expect("group id")
    }

    pub async fn incident(&self, page: i64, title: &str) -> Value {
        let r = self
            .post(
                "/api/v1/incidents",
                json!({"title": title, "statusPageId": page, "message": "Looking into it"}),
            )
            .await;
        r.data(201)
    }

    /// Sets a page's visitor password; returns the page's detail view.
    pub async fn set_page_password(&self, page: i64, password: &str) -> Value {
        let path = format!("/api/v1/statuspages/{page}/password");
        self.send(
            Method::PUT,
            &path,
            Some(&self.key),
            Some(json!({"password": password})),
        )
        .await
        .data(200)
    }

    /// Makes a page private, opened by `password`.
    pub async fn make_private(&self, page: i64, password: &str) {
        self.patch(
            &format!("/api/v1/statuspages/{page}"),
            json!({"isPublic": false}),
        )
        .await
        .data(200);
        self.set_page_password(page, password).await;
    }

    /// A team webhook channel at `{base}/hook` and a webhook subscriber of
    /// `page` at `{base}/subscriber`: who hears of a change, told apart.
    pub async fn hook_and_subscriber(&self, page: i64, base: &str) {
        self.post(
            "/api/notifications",
            json!({"name": "Ops hook", "kind": "webhook", "target": format!("{base}/hook")}),
        )
        .await
        .data(201);
        self.post(
            "/api/subscribers",
            json!({"statusPageId": page, "kind": "webhook", "target": format!("{base}/subscriber")}),
        )
        .await
        .data(201);
    }

    pub async fn component_status(&self, id: i64) -> String {
        self.get(&format!("/api/v1/components/{id}"))
            .await
            .data(200)["status"]
            .as_str()
            .expect("status")
            .to_string()
    }

    /// Everything the management API can list, to show a refused request
    /// changed nothing.
    pub async fn snapshot(&self) -> Value {
        let mut pages = vec![];
        for p in self
            .get("/api/v1/statuspages")
            .await
            .data(200)
            .as_array()
            .expect("pages")
        {
            pages.push(
                self.get(&format!("/api/v1/statuspages/{}", p["id"]))
                    .await
                    .data(200),
            );
        }
        json!({
            "pages": pages,
            "components": self.get("/api/v1/components").await.data(200),
            "groups": self.get("/api/v1/component-groups").await.data(200),
            "incidents": self.get("/api/v1/incidents?limit=100").await.data(200),
            "maintenance": self.get("/api/v1/maintenance").await.data(200),
        })
    }

    /// Polls until `check` passes or `timeout` runs out; returns whether it passed.
    pub async fn eventually<F, Fut>(&self, timeout: Duration, mut check: F) -> bool
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if check().await {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    pub fn log(&self) -> String {
        assert!(self.here.is_none(), "the log needs Server::process");
        std::fs::read_to_string(self.db.dir.path().join("server.log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(here) = self.here.take() {
            here.stop.cancel();
        }
    }
}

/// The token of the setup link a log announces, if any.
pub fn setup_token_in(log: &str) -> Option<String> {
    let at = log.find("no users yet")?;
    log[at..]
        .split(|c: char| !c.is_ascii_hexdigit())
        .find(|w| w.len() == 64)
        .map(String::from)
}

/// RFC 3339 for now plus an offset in milliseconds.
pub fn at_offset_ms(ms: i64) -> String {
    let t = time::OffsetDateTime::now_utc() + time::Duration::milliseconds(ms);
    t.format(&time::format_description::well_known::Rfc3339)
        .expect("format")
}

/// The password every test user gets.
pub const PASSWORD: &str = "correct horse battery";

impl TestDb {
    /// Creates a user with the real CLI, the password on standard input
    /// (the CLI's own tests; fixtures use `user_with`, in process);
    /// returns (success, stdout, stderr).
    pub fn add_user(&self, email: &str, role: &str, password: &str) -> (bool, String, String) {
        use std::io::Write;
        let mut child = Command::new(BIN)
            .args([
                "user",
                "create",
                "--email",
                email,
                "--name",
                "Test User",
                "--role",
                role,
                "--password-stdin",
            ])
            .env("UPSTATE_DATABASE_URL", &self.url)
            .env("RUST_LOG", "warn")
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run upstate user create");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(format!("{password}\n").as_bytes())
            .expect("write password");
        let out = child.wait_with_output().expect("wait");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Creates a user who signs in with `PASSWORD`; returns their id.
    pub fn user(&self, email: &str, role: &str) -> i64 {
        self.user_with(email, role, PASSWORD)
    }

    /// Creates a user who signs in with `password`; returns their id. Made
    /// in process by the store, as the CLI's `user create` makes one
    /// (`add_user` and tests/api/cli.rs drive the CLI itself); each
    /// password's hash is computed once per test process.
    pub fn user_with(&self, email: &str, role: &str, password: &str) -> i64 {
        static HASHES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
        let hash = {
            let mut known = HASHES.lock().unwrap_or_else(|e| e.into_inner());
            match known.iter().find(|(p, _)| p == password) {
                Some((_, h)) => h.clone(),
                None => {
                    let h = upstate_server::hash_password(password).expect("hash");
                    known.push((password.to_string(), h.clone()));
                    h
                }
            }
        };
        let email = upstate_core::values::Email::parse(email).expect("email");
        let role: upstate_core::roles::Role = role.parse().expect("role");
        let url = self.url.clone();
        on_own_runtime(async move {
            // Migrated already: a copy of the template (`TestDb::new`).
            let db = upstate_store::Db::connect(&url).await.expect("connect");
            let ctx = upstate_store::AuditCtx::of(upstate_core::audit::Actor::cli());
            let user =
                upstate_store::users::create(&db, &ctx, &email, "Test User", role, &hash, false)
                    .await
                    .expect("user create");
            db.close().await;
            user.id
        })
    }
}

/// A signed-in browser: its session cookie, CSRF token and (once verified) step-up.
#[derive(Clone)]
pub struct Browser {
    pub base: String,
    pub cookie: String,
    pub csrf: String,
    pub user: Value,
    pub step_up: Option<String>,
}

impl Browser {
    /// Signs in; the refusal comes back as the raw response.
    pub async fn login(
        s: &Server,
        email: &str,
        password: &str,
    ) -> Result<Browser, reqwest::Response> {
        let r = reqwest::Client::new()
            .post(format!("{}/api/auth/login", s.base))
            .json(&json!({"email": email, "password": password}))
            .send()
            .await
            .expect("login request");
        if r.status() != 200 {
            return Err(r);
        }
        let cookie = r.headers()["set-cookie"]
            .to_str()
            .expect("cookie")
            .split(';')
            .next()
            .unwrap_or("")
            .to_string();
        let body: Value = r.json().await.expect("login body");
        Ok(Browser {
            base: s.base.clone(),
            cookie,
            csrf: body["data"]["csrfToken"].as_str().unwrap_or("").to_string(),
            user: body["data"]["user"].clone(),
            step_up: None,
        })
    }

    /// Signs in with `PASSWORD`, which must work.
    pub async fn signed_in(s: &Server, email: &str) -> Browser {
        match Browser::login(s, email, PASSWORD).await {
            Ok(b) => b,
            Err(r) => panic!("login of {email} failed: {}", r.status()),
        }
    }

    /// The HTML of an interface screen (`path`), as this person sees it.
    pub async fn screen(&self, path: &str) -> String {
        reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .send()
            .await
            .expect("screen request")
            .text()
            .await
            .expect("screen body")
    }

    /// A request with the cookie, the CSRF token and any step-up token.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value, reqwest::header::HeaderMap) {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .header("cookie", &self.cookie)
            .header("x-csrf-token", &self.csrf);
        if let Some(t) = &self.step_up {
            req = req.header("x-step-up-token", t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let (status, headers) = (r.status().as_u16(), r.headers().clone());
        (status, r.json().await.unwrap_or(Value::Null), headers)
    }

    /// Creates a step-up and verifies it with `PASSWORD`.
    pub async fn step_up(&mut self) {
        let (status, created, _) = self.send(Method::POST, "/api/admin/step-up", None).await;
        assert_eq!(status, 201);
        let token = created["data"]["token"]
            .as_str()
            .expect("token")
            .to_string();
        let proof = json!({"token": token, "password": PASSWORD});
        let (status, body, _) = self
            .send(
                Method::POST,
                "/api/admin/step-up/verify-password",
                Some(proof),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        self.step_up = Some(token);
    }
}

/// The repository's root. Read when the test runs (cargo sets it for the
/// run too), not baked in when it was built: CI keeps its build outside the
/// clone and reuses it from the next clone, where a path compiled in would
/// name a folder that is gone.
pub fn root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// Where scripts/test-deps put the peers installed from npm and PyPI
/// (`browser-test/node_modules`, `consumers/venv`): `UPSTATE_TEST_PEERS`
/// (.ci/run keeps them beside its build, outside the clone, so a new clone
/// does not install them again), else the repository's `target/`.
pub fn peers() -> std::path::PathBuf {
    std::env::var_os("UPSTATE_TEST_PEERS")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// Whether the real peers a test drives (Chromium, npm or PyPI packages; see
/// scripts/test-deps) are installed. Without them the test says SKIPPED in
/// the run's output (and counts as passed: libtest has no skip), unless
/// `UPSTATE_TEST_EXTERNAL=required` (CI), which makes it a failure.
/// A TCP port nothing listens on now, for a peer the test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The Prometheus text a server's `/api/metrics` answers.
pub async fn metrics_text(base: &str) -> String {
    reqwest::get(format!("{base}/api/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text")
}

pub fn peers_available(test: &str, paths: &[std::path::PathBuf]) -> bool {
    let missing: Vec<String> = paths
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!("{test}: missing {missing:?}; run scripts/test-deps");
    assert!(
        std::env::var("UPSTATE_TEST_EXTERNAL").as_deref() != Ok("required"),
        "{msg}"
    );
    // Straight to the process's stderr: `eprintln!` is captured by the test
    // harness and shown only for failures, and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {msg}");
    false
}

/// Runs a consumer script of `tests/consumers` with the test peers' Python,
/// `input` on its stdin, and reads the JSON it prints. None when the peers
/// are not installed (and not required).
pub fn consumer(test: &str, script: &str, input: &[u8]) -> Option<serde_json::Value> {
    use std::io::Write;
    let python = peers().join("consumers/venv/bin/python");
    if !peers_available(test, std::slice::from_ref(&python)) {
        return None;
    }
    let mut child = std::process::Command::new(python)
        .arg(root().join("tests/consumers").join(script))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("input written");
    let out = child.wait_with_output().expect("the consumer ends");
    assert!(
        out.status.success(),
        "{script} refused:\n{}",
        String::from_utf8_lossy(input)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the consumer prints JSON"))
}
