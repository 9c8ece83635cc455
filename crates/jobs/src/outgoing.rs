//! The one HTTP client that talks to the world on an operator's behalf
//! (webhooks, chat, later push and monitors), and the rule that keeps it
//! from being turned against the network it runs in (SSRF).
//!
//! A target is refused when any address it reaches is loopback, private,
//! link-local (cloud metadata lives there), shared, unspecified, multicast or
//! reserved, unless the operator allowed that range (`outgoing_allow`). The
//! rule is applied to addresses after DNS resolution (our resolver drops
//! forbidden ones, so a name that resolves to 127.0.0.1 is refused, and
//! DNS rebinding gains nothing), to addresses written in the URL (which
//! reqwest never resolves), and again on every redirect. Answers are read up
//! to a limit, every request has a timeout, and no proxy from the
//! environment is used (it would see past the rule).

use ipnet::IpNet;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// How much of an answer is read: enough for the log and for errors.
const ANSWER_LIMIT: usize = 64 * 1024;
const MAX_REDIRECTS: usize = 5;

/// Which addresses may be reached.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Ranges the operator allowed although the rule forbids them.
    pub allow: Vec<IpNet>,
    /// The setting that allows them (`outgoing_allow`, `monitor_allow`),
    /// named in a refusal so the operator knows which one to change.
    pub setting: &'static str,
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // Benchmarking 198.18.0.0/15 and reserved 240.0.0.0/4.
        || (a == 198 && (18..20).contains(&b))
        || a >= 240
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local fc00::/7 (cloud metadata at fd00:ec2::254), link-local
        // fe80::/10, site-local fec0::/10, documentation 2001:db8::/32, and
        // NAT64 64:ff9b::/96 (which reaches IPv4 addresses of any kind).
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        || (first == 0x0064 && ip.segments()[1] == 0xff9b)
}

impl Default for Guard {
    fn default() -> Self {
        Guard {
            allow: Vec::new(),
            setting: "outgoing_allow",
        }
    }
}

impl Guard {
    pub fn permits(&self, ip: IpAddr) -> bool {
        if self.allow.iter().any(|n| n.contains(&ip)) {
            return true;
        }
        !match ip {
            IpAddr::V4(v4) => forbidden_v4(v4),
            IpAddr::V6(v6) => forbidden_v6(v6),
        }
    }

    /// Checks a URL before it is requested (and each redirect): http(s),
    /// and an address written in it must be permitted. Names are checked
    /// when they resolve.
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("refused: {} is not an http(s) URL", url.scheme()));
        }
        let ip = match url.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(_)) => return Ok(()),
            None => return Err("refused: the URL names no host".into()),
        };
        if self.permits(ip) {
            Ok(())
        } else {
            Err(self.refusal(ip))
        }
    }

    /// `check_url`, and a name resolved now with every address it gives
    /// checked: for clients that do their own requests (object_store's),
    /// where the resolver of `Outgoing` cannot stand guard.
    pub async fn check_resolved(&self, url: &str) -> Result<(), String> {
        let url = reqwest::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        let url = &url;
        self.check_url(url)?;
        let Some(url::Host::Domain(host)) = url.host() else {
            return Ok(());
        };
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("{host} does not resolve: {e}"))?;
        for a in addrs {
            if !self.permits(a.ip()) {
                return Err(self.refusal(a.ip()));
            }
        }
        Ok(())
    }

    pub(crate) fn refusal(&self, ip: IpAddr) -> String {
        format!(
            "refused: {ip} is a private, loopback, link-local or reserved address \
             (allow it with {} if this target is meant)",
            self.setting
        )
    }
}

/// Our rule said no: retrying cannot help until the configuration changes.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Why a request came to no answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub reason: String,
    /// Refused by our own rule (or unusable): trying again changes nothing.
    pub permanent: bool,
}

impl Failure {
    pub fn permanent(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            permanent: true,
        }
    }
}

/// Resolves names with the system's configuration (resolv.conf, hosts)
/// and keeps only permitted addresses; a name left with none is an error
/// that says why. The lookup is hickory's, asynchronous: the system call
/// (`getaddrinfo`) holds a blocking thread for as long as an unreachable
/// name server makes it wait, and a burst of webhooks to names that do
/// not answer would take the blocking pool from password hashing.
struct GuardedResolver {
    guard: Arc<Guard>,
    dns: Option<Arc<hickory_resolver::TokioResolver>>,
}

impl GuardedResolver {
    fn new(guard: Arc<Guard>, timeout: Duration) -> GuardedResolver {
        let provider = hickory_resolver::net::runtime::TokioRuntimeProvider::default();
        let dns = match hickory_resolver::TokioResolver::builder(provider) {
            Ok(mut b) => {
                let opts = b.options_mut();
                opts.timeout = timeout.min(Duration::from_secs(5));
                opts.attempts = 2;
                b.build().ok().map(Arc::new)
            }
            Err(e) => {
                tracing::warn!(error = %e, "no DNS configuration: names are looked up by the system");
                None
            }
        };
        GuardedResolver { guard, dns }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let dns = self.dns.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let all: Vec<SocketAddr> = match dns {
                Some(dns) => dns
                    .lookup_ip(host.as_str())
                    .await?
                    .iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect(),
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            let kept: Vec<SocketAddr> = all
                .iter()
                .copied()
                .filter(|a| guard.permits(a.ip()))
                .collect();
            match (kept.is_empty(), all.first()) {
                (false, _) => Ok(Box::new(kept.into_iter()) as Addrs),
                (true, Some(first)) => {
                    Err(Box::new(Refused(format!("{host}: {}", guard.refusal(first.ip())))) as _)
                }
                (true, None) => Err(format!("{host} has no address").into()),
            }
        })
    }
}

/// What a receiver answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    /// https, on a client that asked for it: when the peer's certificate
    /// expires (ms since the epoch).
    pub cert_expires_at: Option<i64>,
    /// The answer's validators, for a conditional GET next time.
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// What the body is (a protocol client checks it is JSON).
    pub content_type: Option<String>,
}

/// How a client treats TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// Verify certificates (notifications).
    Verify,
    /// Verify, and report the peer certificate's expiry (monitors).
    VerifyAndWatch,
    /// Accept any certificate but report its expiry (monitors of targets
    /// with their own authority, by the operator's choice).
    AcceptAndWatch,
}

/// The guarded client. Cheap to clone.
#[derive(Clone)]
pub struct Outgoing {
    client: reqwest::Client,
    guard: Arc<Guard>,
}

impl Outgoing {
    /// The rule this client's requests keep, for clients of other crates
    /// (the static copy's S3 client) that must keep it too.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn new(guard: Guard, timeout: Duration) -> Result<Outgoing, String> {
        Outgoing::build(
            guard,
            timeout,
            true,
            "status page notifications",
            Tls::Verify,
        )
    }

    /// `follow`: follow redirects (each checked by the rule) or answer with
    /// the redirect itself; `purpose` goes into the User-Agent.
    pub fn build(
        guard: Guard,
        timeout: Duration,
        follow: bool,
        purpose: &str,
        tls: Tls,
    ) -> Result<Outgoing, String> {
        let guard = Arc::new(guard);
        let for_redirects = guard.clone();
        // TLS by rustls on ring (a small C and assembly build, where the
        // default aws-lc is a large one). The process's provider is set once,
        // by whichever client comes first; it is the same one every time.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(guard.clone(), timeout)))
            .no_proxy()
            .tls_info(tls != Tls::Verify)
            .tls_danger_accept_invalid_certs(tls == Tls::AcceptAndWatch)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .user_agent(format!(
                "Upstate/{} (+{purpose})",
                env!("CARGO_PKG_VERSION")
            ))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if !follow {
                    return attempt.stop();
                }
                if attempt.previous().len() >= MAX_REDIRECTS {
                    return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
                }
                match for_redirects.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(e) => attempt.error(Refused(format!("redirect {e}"))),
                }
            }))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Outgoing { client, guard })
    }

    /// POSTs `body` with `headers` (as JSON unless they name another
    /// Content-Type); an answer of any status is `Ok`, a refusal, timeout
    /// or connection failure is `Err` with its reason.
    pub async fn post_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &[u8],
    ) -> Result<Answer, Failure> {
        let mut all: Vec<(&str, String)> = headers.to_vec();
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            all.push(("content-type", "application/json".into()));
        }
        self.request("POST", url, &all, body, None).await
    }

    /// Sends any request (a monitor's check), with its own timeout when
    /// given; the answer's body is read up to the limit.
    pub async fn request(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Answer, Failure> {
        self.request_up_to(method, url, headers, body, timeout, ANSWER_LIMIT)
            .await
    }

    /// A `GET` whose whole answer matters (an importer reading another
    /// product's lists): up to `limit` bytes, and an answer longer than
    /// that is a failure rather than cut short.
    pub async fn read_whole(
        &self,
        url: &str,
        headers: &[(&str, String)],
        limit: usize,
    ) -> Result<Answer, Failure> {
        self.send_whole("GET", url, headers, &[], limit).await
    }

    /// `read_whole` of any request (the CLI driving a server's API).
    pub async fn send_whole(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &[u8],
        limit: usize,
    ) -> Result<Answer, Failure> {
        let answer = self
            .request_up_to(method, url, headers, body, None, limit + 1)
            .await?;
        if answer.body.len() > limit {
            return Err(Failure::permanent(format!(
                "the answer is longer than {} MB",
                limit / (1024 * 1024)
            )));
        }
        Ok(answer)
    }

    async fn request_up_to(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: &[u8],
        timeout: Option<Duration>,
        limit: usize,
    ) -> Result<Answer, Failure> {
        let url =
            reqwest::Url::parse(url).map_err(|e| Failure::permanent(format!("bad URL: {e}")))?;
        self.guard.check_url(&url).map_err(Failure::permanent)?;
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| Failure::permanent(format!("bad method {method}")))?;
        let mut req = self.client.request(method, url);
        if !body.is_empty() {
            req = req.body(body.to_vec());
        }
        if let Some(t) = timeout {
            req = req.timeout(t);
        }
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let mut resp = req.send().await.map_err(describe)?;
        let status = resp.status().as_u16();
        let cert_expires_at = resp
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|i| i.peer_certificate())
            .and_then(not_after);
        let header = |name: reqwest::header::HeaderName| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let etag = header(reqwest::header::ETAG);
        let last_modified = header(reqwest::header::LAST_MODIFIED);
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(describe)? {
            let room = limit.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if bytes.len() >= limit {
                break;
            }
        }
        Ok(Answer {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
            cert_expires_at,
            etag,
            last_modified,
            content_type,
        })
    }
}

/// When a DER certificate stops being valid (ms since the epoch).
fn not_after(der: &[u8]) -> Option<i64> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    Some(cert.validity().not_after.timestamp().saturating_mul(1_000))
}

/// A failure in words an operator can act on, with the cause reqwest keeps
/// underneath (our refusal, a DNS error, a refused connection).
fn describe(e: reqwest::Error) -> Failure {
    let mut text = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_redirect() {
        "redirect refused".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(&e);
    let mut last = String::new();
    let mut permanent = false;
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<Refused>() {
            return Failure::permanent(r.0.clone());
        }
        last = s.to_string();
        source = s.source();
    }
    if !last.is_empty() {
        text.push_str(": ");
        text.push_str(&last);
        permanent = last.contains("refused: ");
    }
    Failure {
        reason: text,
        permanent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type R = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn private_and_metadata_addresses_are_refused_unless_allowed() -> R {
        let g = Guard::default();
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!g.permits(ip.parse()?), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "1.1.1.1",
        ] {
            assert!(g.permits(ip.parse()?), "{ip}");
        }
        let allowed = Guard {
            allow: vec!["127.0.0.1/32".parse()?],
            setting: "monitor_allow",
        };
        assert!(allowed.permits(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        assert!(
            allowed
                .check_url(&"http://10.0.0.1/".parse()?)
                .is_err_and(|e| e.contains("monitor_allow")),
            "a refusal names the setting that would allow it"
        );
        assert!(!allowed.permits("127.0.0.2".parse()?));
        Ok(())
    }

    #[test]
    fn urls_with_forbidden_addresses_or_schemes_are_refused() -> R {
        let g = Guard::default();
        for bad in [
            "http://127.0.0.1:8080/hook",
            "http://[::1]/hook",
            "http://2130706433/",
            "http://0x7f.1/",
            "file:///etc/passwd",
        ] {
            assert!(g.check_url(&reqwest::Url::parse(bad)?).is_err(), "{bad}");
        }
        assert!(
            g.check_url(&reqwest::Url::parse("https://hooks.example.com/x")?)
                .is_ok()
        );
        Ok(())
    }
}
