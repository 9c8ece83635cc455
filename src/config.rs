//! Configuration, layered: built-in defaults, then `upstate.toml`, then
//! `UPSTATE_*` environment variables and command-line flags (clap reads both;
//! a flag beats its variable).

use anyhow::{Context, bail};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = "./data";

/// The options every subcommand shares; each `None` falls through to the file.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Overrides {
    /// Address to listen on.
    #[arg(long, env = "UPSTATE_ADDR", global = true)]
    pub addr: Option<String>,
    /// sqlite://PATH or postgres://USER@HOST/DB (default: sqlite in the data dir).
    #[arg(
        long,
        env = "UPSTATE_DATABASE_URL",
        global = true,
        hide_env_values = true
    )]
    pub database_url: Option<String>,
    /// Where the embedded SQLite database lives.
    #[arg(long, env = "UPSTATE_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// Configuration file (default: ./upstate.toml when it exists).
    #[arg(long, env = "UPSTATE_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Management API requests per key per minute (0 turns the limit off).
    #[arg(long, env = "UPSTATE_API_RATE_PER_MINUTE", global = true)]
    pub api_rate_per_minute: Option<u32>,
    /// Management API requests per key per hour (0 turns the limit off).
    #[arg(long, env = "UPSTATE_API_RATE_PER_HOUR", global = true)]
    pub api_rate_per_hour: Option<u32>,
    /// Public summary requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_SUMMARY", global = true)]
    pub public_rate_summary: Option<u32>,
    /// Public components requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_COMPONENTS", global = true)]
    pub public_rate_components: Option<u32>,
    /// Public incidents requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_INCIDENTS", global = true)]
    pub public_rate_incidents: Option<u32>,
    /// Public maintenance requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_MAINTENANCE", global = true)]
    pub public_rate_maintenance: Option<u32>,
    /// Public uptime requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_UPTIME", global = true)]
    pub public_rate_uptime: Option<u32>,
    /// Whole-page (`/api/v1/public/{slug}`) requests per client address per minute (0 = off).
    #[arg(long, env = "UPSTATE_PUBLIC_RATE_PAGE", global = true)]
    pub public_rate_page: Option<u32>,
    /// The address visitors use, for absolute links in feeds (default: http://ADDR).
    #[arg(long, env = "UPSTATE_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,
    /// The slug of the page served at `/` for hosts that are no page's custom domain.
    #[arg(long, env = "UPSTATE_DEFAULT_PAGE", global = true)]
    pub default_page: Option<String>,
    /// Mark session cookies Secure (default: yes, unless listening on a loopback address over plain http).
    #[arg(long, env = "UPSTATE_SECURE_COOKIES", global = true)]
    pub secure_cookies: Option<bool>,
    /// Proxies whose X-Forwarded-For is trusted: comma-separated addresses or CIDR ranges.
    #[arg(
        long,
        env = "UPSTATE_TRUSTED_PROXIES",
        global = true,
        value_delimiter = ','
    )]
    pub trusted_proxies: Option<Vec<String>>,
}

/// `upstate.toml`: the same keys as the flags, in snake_case.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    addr: Option<String>,
    database_url: Option<String>,
    data_dir: Option<PathBuf>,
    api_rate_per_minute: Option<u32>,
    api_rate_per_hour: Option<u32>,
    max_body_bytes: Option<usize>,
    secure_cookies: Option<bool>,
    public_url: Option<String>,
    default_page: Option<String>,
    #[serde(default)]
    public_rate_limits: FilePublicLimits,
    trusted_proxies: Option<Vec<String>>,
}

/// `[public_rate_limits]` in `upstate.toml`: requests per minute per client address.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePublicLimits {
    summary: Option<u32>,
    components: Option<u32>,
    incidents: Option<u32>,
    maintenance: Option<u32>,
    uptime: Option<u32>,
    page: Option<u32>,
}

/// Parses `10.0.0.1` or `10.0.0.0/8` style entries.
fn parse_proxies(list: &[String]) -> anyhow::Result<Vec<ipnet::IpNet>> {
    list.iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<ipnet::IpNet>()
                .or_else(|_| s.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    anyhow::anyhow!("trusted proxy {s:?} is neither an IP address nor a CIDR range")
                })
        })
        .collect()
}

pub struct Config {
    pub addr: String,
    pub database_url: String,
    pub data_dir: PathBuf,
    pub server: upstate_server::ServerSettings,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("addr", &self.addr)
            .field("database_url", &upstate_store::redact(&self.database_url))
            .field("data_dir", &self.data_dir)
            .field("server", &self.server)
            .finish()
    }
}

fn read_file(explicit: Option<&Path>) -> anyhow::Result<FileConfig> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None if Path::new("upstate.toml").exists() => PathBuf::from("upstate.toml"),
        None => return Ok(FileConfig::default()),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid configuration in {}", path.display()))
}

impl Config {
    pub fn resolve(o: &Overrides) -> anyhow::Result<Config> {
        let file = read_file(o.config.as_deref())?;
        let data_dir = o
            .data_dir
            .clone()
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let database_url = match o.database_url.clone().or(file.database_url) {
            Some(url) => url,
            None => format!("sqlite://{}", data_dir.join("upstate.db").display()),
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
        let defaults = upstate_server::ServerSettings::default();
        let (dp, fp) = (&defaults.public_limits, &file.public_rate_limits);
        let public_limits = upstate_server::PublicLimits {
            summary: o.public_rate_summary.or(fp.summary).unwrap_or(dp.summary),
            components: o
                .public_rate_components
                .or(fp.components)
                .unwrap_or(dp.components),
            incidents: o
                .public_rate_incidents
                .or(fp.incidents)
                .unwrap_or(dp.incidents),
            maintenance: o
                .public_rate_maintenance
                .or(fp.maintenance)
                .unwrap_or(dp.maintenance),
            uptime: o.public_rate_uptime.or(fp.uptime).unwrap_or(dp.uptime),
            page: o.public_rate_page.or(fp.page).unwrap_or(dp.page),
        };
        let trusted_proxies = parse_proxies(
            &o.trusted_proxies
                .clone()
                .or(file.trusted_proxies)
                .unwrap_or_default(),
        )?;
        let addr = o
            .addr
            .clone()
            .or(file.addr)
            .unwrap_or_else(|| DEFAULT_ADDR.to_string());
        let loopback = addr
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback())
            || addr.starts_with("localhost:");
        let secure_cookies = o
            .secure_cookies
            .or(file.secure_cookies)
            .unwrap_or(!loopback);
        // Unset stays empty: `serve` fills in the address it is bound to.
        let public_url = o.public_url.clone().or(file.public_url).unwrap_or_default();
        let public_url = public_url.trim_end_matches('/').to_string();
        Ok(Config {
            addr,
            database_url,
            data_dir,
            server: upstate_server::ServerSettings {
                api_rate_per_minute: o
                    .api_rate_per_minute
                    .or(file.api_rate_per_minute)
                    .unwrap_or(defaults.api_rate_per_minute),
                api_rate_per_hour: o
                    .api_rate_per_hour
                    .or(file.api_rate_per_hour)
                    .unwrap_or(defaults.api_rate_per_hour),
                max_body_bytes: file.max_body_bytes.unwrap_or(defaults.max_body_bytes),
                public_limits,
                trusted_proxies,
                secure_cookies,
                public_url,
                default_page: o
                    .default_page
                    .clone()
                    .or(file.default_page)
                    .filter(|s| !s.is_empty()),
            },
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
