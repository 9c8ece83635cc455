//! Configuration: one struct, `Settings`, read in layers with figment: its
//! defaults, then `upstate.toml` (the same keys), then `UPSTATE_<KEY>`
//! environment variables, then command-line flags. A new setting is one
//! field of `Settings` (with its default and doc comment); its file key and
//! environment variable follow from the field's name. A flag is optional.
//!
//! The database URL may carry a password: it is a `Secret`, which never
//! prints in logs or `Debug` output.

use anyhow::{Context, bail};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use upstate_server::{PublicLimits, ServerSettings};

pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = "./data";

/// A value that must not reach logs: `Debug` shows it redacted.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(#[serde(deserialize_with = "text")] String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", upstate_store::redact(&self.0))
    }
}

/// Requests per minute and client address for each public route (0 = off).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct PublicRates {
    pub summary: u32,
    pub components: u32,
    pub incidents: u32,
    pub maintenance: u32,
    pub uptime: u32,
    /// `/api/v1/public/{slug}` and the HTML page.
    pub page: u32,
}

impl Default for PublicRates {
    fn default() -> Self {
        let d = PublicLimits::default();
        PublicRates {
            summary: d.summary,
            components: d.components,
            incidents: d.incidents,
            maintenance: d.maintenance,
            uptime: d.uptime,
            page: d.page,
        }
    }
}

/// Every setting, as `upstate.toml` spells it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Address to listen on.
    #[serde(deserialize_with = "text")]
    pub addr: String,
    /// `sqlite://PATH` or `postgres://USER@HOST/DB` (default: SQLite in `data_dir`).
    pub database_url: Option<Secret>,
    /// Where the embedded SQLite database lives.
    #[serde(deserialize_with = "path")]
    pub data_dir: PathBuf,
    /// Management API requests per key per minute (0 = off).
    pub api_rate_per_minute: u32,
    /// Management API requests per key per hour (0 = off).
    pub api_rate_per_hour: u32,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Connections held open at once, in all (fewer if the open-file limit
    /// is lower); past it new clients wait in the kernel's backlog.
    pub max_connections: usize,
    /// Connections held open at once from one client address (trusted
    /// proxies are exempt); the one over it is answered 429.
    pub max_connections_per_client: usize,
    /// Seconds a request's head may take to arrive; an idle keep-alive
    /// connection is closed after as long.
    pub header_timeout_secs: u64,
    /// Seconds a whole request body may take to arrive (408 after).
    pub body_timeout_secs: u64,
    /// Seconds an answer's write may wait on a client that reads nothing
    /// of it; then the connection is closed.
    pub write_timeout_secs: u64,
    /// `Strict-Transport-Security` max-age in seconds, sent when
    /// `public_url` is https (0: never; browsers then stop trying plain
    /// http for this long, so lower it while trying https out).
    pub hsts_max_age_secs: u64,
    /// `[public_rate_limits]`; as variables `UPSTATE_PUBLIC_RATE_<ROUTE>`.
    pub public_rate_limits: PublicRates,
    /// Proxies whose `X-Forwarded-For` is believed: addresses or CIDR ranges
    /// (a list, or one comma-separated string).
    #[serde(deserialize_with = "list_or_commas")]
    pub trusted_proxies: Vec<String>,
    /// Where visitors reach this server, for absolute links (default: the
    /// address it is bound to).
    #[serde(deserialize_with = "text")]
    pub public_url: String,
    /// The slug of the page served at `/` for hosts that are no page's custom domain.
    #[serde(deserialize_with = "opt_text")]
    pub default_page: Option<String>,
    /// Mark cookies Secure (default: when `public_url` is https; without a
    /// `public_url`, unless listening on a loopback address).
    pub secure_cookies: Option<bool>,
    /// Development mode: opens `POST /api/admin/reset-rate-limits`. Never
    /// in production: it lets an admin wipe the counters that slow guessing.
    pub dev: bool,
    /// Private or loopback address ranges that webhooks, chat messages and
    /// (later) monitors may reach although the SSRF rule refuses them
    /// (a list, or one comma-separated string), e.g. `10.0.0.0/8`.
    #[serde(deserialize_with = "list_or_commas")]
    pub outgoing_allow: Vec<String>,
    /// Private or loopback ranges monitors may check (watching internal
    /// services is what they are for), e.g. `10.0.0.0/8, 127.0.0.1`.
    #[serde(deserialize_with = "list_or_commas")]
    pub monitor_allow: Vec<String>,
    /// Telegram's Bot API base URL.
    #[serde(deserialize_with = "text")]
    pub telegram_api_url: String,
    /// How long a failing notification is retried before it is given up.
    pub delivery_give_up_hours: u32,
    /// Seconds one notification request (webhook, chat, mail) may take.
    pub delivery_timeout_secs: u64,
    /// The SMTP relay mail goes through: `smtps://user:pass@host:465` (TLS),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or
    /// `smtp://host:25` (plain, for a local relay). Unset: no mail.
    pub smtp_url: Option<Secret>,
    /// A bearer token `/api/metrics` asks for (unset: open to anyone, as
    /// status pages are; private pages are left out either way).
    pub metrics_token: Option<Secret>,
    /// The sender of mail, `Name <address>`; required with `smtp_url`.
    #[serde(deserialize_with = "text")]
    pub smtp_from: String,
    /// The folder the static copy's directory targets live under (default:
    /// `static` in `data_dir`); point a static web server at it.
    #[serde(deserialize_with = "text")]
    pub static_copy_root: String,
    /// Redis (`redis://host:6379/0`) where instances count rate limits
    /// together; unset, each instance counts its own.
    pub redis_url: Option<Secret>,
    /// Put before every key kept in Redis (several installs may share one).
    #[serde(deserialize_with = "text")]
    pub redis_prefix: String,
    /// The server key that seals stored secrets: 32 bytes in base64
    /// (`upstate rotate-key --print` makes one). Unset: `secret.key` in
    /// `data_dir`, made on first start. Several instances need the same key.
    pub secret_key: Option<Secret>,
    /// Earlier server keys (comma-separated) that still open secrets while
    /// instances move to a new `secret_key`; each start re-seals with it.
    pub secret_key_previous: Option<Secret>,
    /// Single sign-on's identity provider, from configuration rather than
    /// the Settings screen (which then shows it read-only): its issuer URL,
    /// with `sso_client_id` and `sso_client_secret`. Who may come in, and
    /// with which role, stays on the Settings screen.
    #[serde(deserialize_with = "text")]
    pub sso_issuer: String,
    #[serde(deserialize_with = "text")]
    pub sso_client_id: String,
    pub sso_client_secret: Option<Secret>,
}

impl Default for Settings {
    fn default() -> Self {
        let d = ServerSettings::default();
        Settings {
            addr: DEFAULT_ADDR.into(),
            database_url: None,
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            api_rate_per_minute: d.api_rate_per_minute,
            api_rate_per_hour: d.api_rate_per_hour,
            max_body_bytes: d.max_body_bytes,
            max_connections: d.connections.max_total,
            max_connections_per_client: d.connections.max_per_client,
            header_timeout_secs: d.connections.header_timeout.as_secs(),
            body_timeout_secs: d.connections.body_timeout.as_secs(),
            write_timeout_secs: d.connections.write_timeout.as_secs(),
            hsts_max_age_secs: d.hsts_max_age_secs,
            public_rate_limits: PublicRates::default(),
            trusted_proxies: Vec::new(),
            public_url: String::new(),
            default_page: None,
            secure_cookies: None,
            dev: false,
            outgoing_allow: Vec::new(),
            monitor_allow: Vec::new(),
            telegram_api_url: upstate_jobs::DeliverySettings::default().telegram_api,
            delivery_give_up_hours: 24,
            delivery_timeout_secs: 10,
            smtp_url: None,
            metrics_token: None,
            smtp_from: String::new(),
            static_copy_root: String::new(),
            redis_url: None,
            redis_prefix: "upstate:".into(),
            secret_key: None,
            secret_key_previous: None,
            sso_issuer: String::new(),
            sso_client_id: String::new(),
            sso_client_secret: None,
        }
    }
}

/// Text as environment variables give it: figment reads `UPSTATE_DEFAULT_PAGE=2024`
/// as a number, which is still the slug "2024".
#[derive(Deserialize)]
#[serde(untagged)]
enum Text {
    S(String),
    U(u64),
    I(i64),
    F(f64),
    B(bool),
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        match t {
            Text::S(s) => s,
            Text::U(n) => n.to_string(),
            Text::I(n) => n.to_string(),
            Text::F(n) => n.to_string(),
            Text::B(b) => b.to_string(),
        }
    }
}

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Text::deserialize(d).map(String::from)
}

fn opt_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<Text>::deserialize(d).map(|t| t.map(String::from))
}

fn path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    text(d).map(PathBuf::from)
}

fn list_or_commas<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        List(Vec<Text>),
        One(Text),
    }
    Ok(match Form::deserialize(d)? {
        Form::List(v) => v.into_iter().map(String::from).collect(),
        Form::One(s) => String::from(s)
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
    })
}

/// Command-line flags: each one, when given, beats every other layer.
#[derive(Debug, Clone, Default, clap::Args, Serialize)]
pub struct Overrides {
    /// Configuration file (default: ./upstate.toml when it exists).
    #[arg(long, env = "UPSTATE_CONFIG", global = true)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Address to listen on [env: UPSTATE_ADDR].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// sqlite://PATH or postgres://USER@HOST/DB [env: UPSTATE_DATABASE_URL].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    /// Where the embedded SQLite database lives [env: UPSTATE_DATA_DIR].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// The address visitors use, for absolute links [env: UPSTATE_PUBLIC_URL].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
    /// The page served at `/` for other hosts [env: UPSTATE_DEFAULT_PAGE].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_page: Option<String>,
    /// Management API requests per key per minute, 0 = off [env: UPSTATE_API_RATE_PER_MINUTE].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_rate_per_minute: Option<u32>,
    /// Management API requests per key per hour, 0 = off [env: UPSTATE_API_RATE_PER_HOUR].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_rate_per_hour: Option<u32>,
    /// Mark session cookies Secure [env: UPSTATE_SECURE_COOKIES].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_cookies: Option<bool>,
    /// Proxies whose X-Forwarded-For is trusted, comma-separated [env: UPSTATE_TRUSTED_PROXIES].
    #[arg(long, global = true, value_delimiter = ',')]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted_proxies: Option<Vec<String>>,
    /// Private ranges outgoing notifications may reach, comma-separated [env: UPSTATE_OUTGOING_ALLOW].
    #[arg(long, global = true, value_delimiter = ',')]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outgoing_allow: Option<Vec<String>>,
    /// Private ranges monitors may check, comma-separated [env: UPSTATE_MONITOR_ALLOW].
    #[arg(long, global = true, value_delimiter = ',')]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor_allow: Option<Vec<String>>,
    /// Development mode: opens POST /api/admin/reset-rate-limits; never in production [env: UPSTATE_DEV].
    #[arg(long, global = true)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dev: bool,
    #[command(flatten)]
    pub public_rate_limits: PublicRateFlags,
}

/// The `--public-rate-<route>` flags, merged into `[public_rate_limits]`.
#[derive(Debug, Clone, Default, clap::Args, Serialize)]
pub struct PublicRateFlags {
    /// Public summary requests per client address per minute, 0 = off [env: UPSTATE_PUBLIC_RATE_SUMMARY].
    #[arg(long = "public-rate-summary", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<u32>,
    /// Public components requests per address per minute [env: UPSTATE_PUBLIC_RATE_COMPONENTS].
    #[arg(long = "public-rate-components", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<u32>,
    /// Public incidents requests per address per minute [env: UPSTATE_PUBLIC_RATE_INCIDENTS].
    #[arg(long = "public-rate-incidents", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incidents: Option<u32>,
    /// Public maintenance requests per address per minute [env: UPSTATE_PUBLIC_RATE_MAINTENANCE].
    #[arg(long = "public-rate-maintenance", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<u32>,
    /// Public uptime requests per address per minute [env: UPSTATE_PUBLIC_RATE_UPTIME].
    #[arg(long = "public-rate-uptime", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime: Option<u32>,
    /// Whole-page requests per address per minute [env: UPSTATE_PUBLIC_RATE_PAGE].
    #[arg(long = "public-rate-page", global = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// The dotted names of every setting (`public_rate_limits.summary`, ...).
fn known_keys() -> BTreeSet<String> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut BTreeSet<String>) {
        if let Some(map) = v.as_object() {
            for (k, child) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                if child.is_object() {
                    walk(&key, child, out);
                }
                out.insert(key);
            }
        }
    }
    let mut keys = BTreeSet::new();
    walk(
        "",
        &serde_json::to_value(Settings::default()).unwrap_or_default(),
        &mut keys,
    );
    // Optional settings are absent from the serialized defaults.
    keys.extend(
        [
            "database_url",
            "default_page",
            "secure_cookies",
            "smtp_url",
            "metrics_token",
            "redis_url",
        ]
        .map(String::from),
    );
    keys
}

/// `UPSTATE_<KEY>` for every setting; `UPSTATE_PUBLIC_RATE_<ROUTE>` for the
/// `[public_rate_limits]` table. Other `UPSTATE_*` variables (the tests',
/// `UPSTATE_CONFIG`) are not settings and are left alone.
fn environment() -> Env {
    let known = known_keys();
    // figment's keys keep the variable's case: compare in lower case.
    Env::prefixed("UPSTATE_")
        .map(|k| {
            let k = k.as_str().to_ascii_lowercase();
            match k.strip_prefix("public_rate_") {
                Some(route) if !route.starts_with("limits") => {
                    format!("public_rate_limits.{route}").into()
                }
                _ => k.into(),
            }
        })
        .filter(move |k| known.contains(&k.as_str().to_ascii_lowercase()))
}

/// The keys a configuration file sets that are no setting (typos).
fn unknown_in_file(text: &str) -> Vec<String> {
    fn walk(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
        if let Some(table) = v.as_table() {
            for (k, child) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(key.clone());
                walk(&key, child, out);
            }
        }
    }
    let mut keys = Vec::new();
    if let Ok(v) = text.parse::<toml::Table>() {
        walk("", &toml::Value::Table(v), &mut keys);
    }
    let known = known_keys();
    keys.into_iter().filter(|k| !known.contains(k)).collect()
}

/// Where the server key comes from (`server_key`).
#[derive(Clone)]
pub enum KeySource {
    /// A key file (made on first start if the database has no sealed secret).
    File(PathBuf),
    /// Given by configuration: the current key first.
    Given(Vec<upstate_store::sealed::ServerKey>),
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::File(p) => write!(f, "File({})", p.display()),
            KeySource::Given(keys) => write!(f, "Given({} keys)", keys.len()),
        }
    }
}

/// `secret_key` and `secret_key_previous`, parsed.
fn key_source(s: &Settings) -> anyhow::Result<KeySource> {
    let Some(current) = s
        .secret_key
        .as_ref()
        .map(|k| k.expose().trim())
        .filter(|k| !k.is_empty())
    else {
        return Ok(KeySource::File(s.data_dir.join("secret.key")));
    };
    let previous = s
        .secret_key_previous
        .as_ref()
        .map(|k| k.expose().to_string())
        .unwrap_or_default();
    let mut keys = vec![
        upstate_store::sealed::ServerKey::parse(current)
            .map_err(|e| anyhow::anyhow!("secret_key (UPSTATE_SECRET_KEY): {e}"))?,
    ];
    for k in previous.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        keys.push(upstate_store::sealed::ServerKey::parse(k).map_err(|e| {
            anyhow::anyhow!("secret_key_previous (UPSTATE_SECRET_KEY_PREVIOUS): {e}")
        })?);
    }
    Ok(KeySource::Given(keys))
}

pub struct Config {
    pub addr: String,
    /// Where the key sealing stored secrets comes from.
    pub keys: KeySource,
    pub database_url: String,
    pub data_dir: PathBuf,
    pub server: ServerSettings,
    pub delivery: upstate_jobs::DeliverySettings,
    pub monitors: upstate_jobs::monitors::MonitorSettings,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("addr", &self.addr)
            .field("database_url", &upstate_store::redact(&self.database_url))
            .field("data_dir", &self.data_dir)
            .field("server", &self.server)
            .field("delivery", &self.delivery)
            .finish()
    }
}

/// `redis_url`, checked for a scheme Redis clients speak.
fn redis_url(url: Option<&Secret>) -> anyhow::Result<Option<String>> {
    let Some(url) = url
        .map(|u| u.expose().trim().to_string())
        .filter(|u| !u.is_empty())
    else {
        return Ok(None);
    };
    if ["redis://", "rediss://", "unix://", "redis+unix://"]
        .iter()
        .any(|s| url.starts_with(s))
    {
        Ok(Some(url))
    } else {
        anyhow::bail!(
            "redis_url (UPSTATE_REDIS_URL) must start with redis://, rediss:// or unix://, such as redis://127.0.0.1:6379/0"
        )
    }
}

/// Parses `10.0.0.1` or `10.0.0.0/8` style entries of the setting `what`.
fn parse_ranges(what: &str, list: &[String]) -> anyhow::Result<Vec<ipnet::IpNet>> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<ipnet::IpNet>()
                .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    anyhow::anyhow!("{what} {s:?} is neither an IP address nor a CIDR range")
                })
        })
        .collect()
}

impl Config {
    /// The settings from every layer, checked.
    pub fn settings(o: &Overrides) -> anyhow::Result<Settings> {
        let path = match &o.config {
            Some(p) => Some(p.clone()),
            None if Path::new("upstate.toml").exists() => Some(PathBuf::from("upstate.toml")),
            None => None,
        };
        let mut figment = Figment::from(Serialized::defaults(Settings::default()));
        if let Some(path) = &path {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let unknown = unknown_in_file(&text);
            if !unknown.is_empty() {
                bail!(
                    "invalid configuration in {}: unknown setting(s) {}",
                    path.display(),
                    unknown.join(", ")
                );
            }
            figment = figment.merge(Toml::string(&text));
        }
        figment
            .merge(environment())
            .merge(Serialized::defaults(o))
            .extract::<Settings>()
            .map_err(|e| match &path {
                Some(p) => anyhow::anyhow!(
                    "invalid configuration (in {} or UPSTATE_*): {e}",
                    p.display()
                ),
                None => anyhow::anyhow!("invalid configuration (UPSTATE_*): {e}"),
            })
    }

    pub fn resolve(o: &Overrides) -> anyhow::Result<Config> {
        let s = Config::settings(o)?;
        let database_url = match &s.database_url {
            Some(url) => url.expose().to_string(),
            None => format!("sqlite://{}", s.data_dir.join("upstate.db").display()),
        };
        if !(database_url.starts_with("sqlite:")
            || database_url.starts_with("postgres://")
            || database_url.starts_with("postgresql://"))
        {
            bail!(
                "UPSTATE_DATABASE_URL {:?} is not supported: use sqlite://PATH or postgres://USER@HOST/DB",
                upstate_store::redact(&database_url)
            );
        }
        let loopback = s
            .addr
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
            || s.addr.starts_with("localhost:");
        let p = &s.public_rate_limits;
        let smtp = match (&s.smtp_url, s.smtp_from.trim()) {
            (None, _) => None,
            (Some(_), "") => bail!(
                "smtp_from (UPSTATE_SMTP_FROM) is required with smtp_url: the address mail comes from, such as \"Status <status@example.com>\""
            ),
            (Some(url), from) => Some(upstate_jobs::SmtpSettings {
                url: url.expose().to_string(),
                from: from.to_string(),
            }),
        };
        let sso_connection = sso_connection(&s)?;
        Ok(Config {
            database_url,
            keys: key_source(&s)?,
            data_dir: s.data_dir.clone(),
            server: ServerSettings {
                api_rate_per_minute: s.api_rate_per_minute,
                api_rate_per_hour: s.api_rate_per_hour,
                max_body_bytes: s.max_body_bytes,
                public_limits: PublicLimits {
                    summary: p.summary,
                    components: p.components,
                    incidents: p.incidents,
                    maintenance: p.maintenance,
                    uptime: p.uptime,
                    page: p.page,
                },
                trusted_proxies: parse_ranges("trusted proxy", &s.trusted_proxies)?,
                // Where visitors reach it decides, when said: behind a
                // TLS proxy the server listens on loopback over plain http
                // while every browser speaks https to the proxy.
                secure_cookies: s.secure_cookies.unwrap_or_else(|| {
                    let public = s.public_url.trim().to_ascii_lowercase();
                    if public.is_empty() {
                        !loopback
                    } else {
                        public.starts_with("https://")
                    }
                }),
                // Unset stays empty: `serve` fills in the address it is bound to.
                public_url: s.public_url.trim_end_matches('/').to_string(),
                default_page: s.default_page.clone().filter(|d| !d.is_empty()),
                dev: s.dev,
                metrics_token: s
                    .metrics_token
                    .as_ref()
                    .map(|t| t.expose().trim().to_string())
                    .filter(|t| !t.is_empty())
                    .map(upstate_server::Token),
                hsts_max_age_secs: s.hsts_max_age_secs,
                stopping: tokio_util::sync::CancellationToken::new(),
                redis_url: redis_url(s.redis_url.as_ref())?.map(upstate_server::SecretUrl),
                redis_prefix: s.redis_prefix.clone(),
                sso_connection,
                static_copy_root: match s.static_copy_root.trim() {
                    "" => s.data_dir.join("static"),
                    root => PathBuf::from(root),
                },
                connections: upstate_server::ConnectionLimits {
                    max_total: s.max_connections.max(1),
                    max_per_client: s.max_connections_per_client.max(1),
                    header_timeout: std::time::Duration::from_secs(s.header_timeout_secs.max(1)),
                    body_timeout: std::time::Duration::from_secs(s.body_timeout_secs.max(1)),
                    write_timeout: std::time::Duration::from_secs(s.write_timeout_secs.max(1)),
                },
            },
            delivery: upstate_jobs::DeliverySettings {
                allow: parse_ranges("outgoing_allow entry", &s.outgoing_allow)?,
                // Filled in by `serve` with `server.public_url` once bound.
                public_url: String::new(),
                telegram_api: s.telegram_api_url.trim_end_matches('/').to_string(),
                give_up_after: std::time::Duration::from_secs(
                    u64::from(s.delivery_give_up_hours.max(1)) * 3600,
                ),
                timeout: std::time::Duration::from_secs(s.delivery_timeout_secs.clamp(1, 120)),
                smtp,
                ..Default::default()
            },
            monitors: upstate_jobs::monitors::MonitorSettings {
                allow: parse_ranges("monitor_allow entry", &s.monitor_allow)?,
                ..Default::default()
            },
            addr: s.addr,
        })
    }

    /// Creates the directory an SQLite file will live in.
    pub fn prepare_storage(&self) -> anyhow::Result<()> {
        if let Some(path) = self
            .database_url
            .strip_prefix("sqlite://")
            .or_else(|| self.database_url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or(path);
            if let Some(dir) = Path::new(path)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
        }
        Ok(())
    }
}

/// The identity provider given in configuration: all three settings or
/// none, the issuer a URL.
fn sso_connection(s: &Settings) -> anyhow::Result<Option<upstate_core::sso::Connection>> {
    let issuer = s.sso_issuer.trim();
    let client_id = s.sso_client_id.trim();
    let secret = s
        .sso_client_secret
        .as_ref()
        .map(|x| x.expose().trim().to_string())
        .unwrap_or_default();
    if issuer.is_empty() && client_id.is_empty() && secret.is_empty() {
        return Ok(None);
    }
    if issuer.is_empty() || client_id.is_empty() || secret.is_empty() {
        bail!(
            "sso_issuer, sso_client_id and sso_client_secret (UPSTATE_SSO_*) go together: set all three or none"
        );
    }
    let issuer =
        upstate_core::validate::url(issuer).map_err(|e| anyhow::anyhow!("sso_issuer {e}"))?;
    Ok(Some(upstate_core::sso::Connection {
        issuer: issuer.trim_end_matches('/').to_string(),
        client_id: client_id.to_string(),
        client_secret: secret,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_has_a_file_key_and_the_secret_never_prints() {
        let keys = known_keys();
        for k in [
            "addr",
            "database_url",
            "max_body_bytes",
            "public_rate_limits.summary",
            "trusted_proxies",
        ] {
            assert!(keys.contains(k), "{k}: {keys:?}");
        }
        assert_eq!(
            unknown_in_file("addr = \"x\"\n[public_rate_limits]\nsummary = 1\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            unknown_in_file("no_such_setting = 1\n"),
            vec!["no_such_setting".to_string()]
        );
        let secret = Secret("postgres://u:hunter2@h/db".into());
        assert!(!format!("{secret:?}").contains("hunter2"));
    }
}
