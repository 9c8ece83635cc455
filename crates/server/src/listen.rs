//! The accept loop: how many connections the server holds, and how long a
//! connection may take to say what it wants. axum's own `serve` has neither
//! a header timeout nor a cap, so 2,000 half-sent requests from one client
//! stayed open for ever and, with the file limit reached, `accept` failed
//! for everyone ("Too many open files"). Here:
//!
//! - a request's head must arrive within `header_timeout` of the connection
//!   waiting for it, which also closes idle keep-alive connections (hyper
//!   starts the same timer when it waits for the next request);
//! - at most `max_per_client` connections per client address (trusted
//!   proxies, which carry everyone's traffic, are exempt): the one over it is
//!   answered `429` and closed at once;
//! - at most `max_total` connections in all: past it the server stops
//!   accepting (new clients wait in the kernel's backlog) until one closes,
//!   so the process never runs out of file descriptors;
//! - request bodies are bounded in size and in time by `request_gate`.

use crate::connection::{Conn, ProblemListener};
use axum::extract::ConnectInfo;
use axum::serve::Listener;
use dashmap::DashMap;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use ipnet::IpNet;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// How many connections, and how slow, the server accepts.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Connections open at once, in all.
    pub max_total: usize,
    /// Connections open at once from one client address (at most a
    /// quarter of `max_total`, whatever is set).
    pub max_per_client: usize,
    /// Time for a request's head to arrive; also the idle keep-alive time.
    pub header_timeout: Duration,
    /// Time for a whole request body to arrive.
    pub body_timeout: Duration,
    /// Time a write may wait on a client that reads nothing.
    pub write_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_total: 4_096,
            max_per_client: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            write_timeout: crate::connection::WRITE_WITHIN,
        }
    }
}

/// Descriptors kept free of connections: the database pools, log files,
/// outgoing requests of monitors and notifications.
const RESERVED_FDS: u64 = 256;

/// Raises the soft open-file limit to the hard one (the usual 1,024 is far
/// below what a server needs) and returns how many connections fit in it.
fn fitting_connections(wanted: usize) -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return wanted;
    };
    let limit = if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        hard
    } else {
        soft
    };
    let fit = limit.saturating_sub(RESERVED_FDS).max(16);
    wanted.min(usize::try_from(fit).unwrap_or(usize::MAX))
}

/// Open connections per client address; an entry goes with its last one.
#[derive(Clone, Default)]
struct PerClient(Arc<DashMap<IpAddr, usize>>);

/// One client's hold on a connection slot, given back on drop.
struct ClientSlot {
    map: PerClient,
    ip: IpAddr,
}

impl PerClient {
    fn take(&self, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let mut n = self.0.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            map: self.clone(),
            ip,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        self.map.0.remove_if_mut(&self.ip, |_, n| {
            *n -= 1;
            *n == 0
        });
    }
}

/// The answer to a connection over its client's cap, written before any
/// request is read: the client learns why instead of seeing a reset.
const TOO_MANY: &[u8] = b"HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\n\
content-type: application/problem+json\r\nretry-after: 1\r\ncontent-length: 139\r\n\r\n\
{\"type\":\"urn:upstate:problem:rate-limited\",\"title\":\"Too many requests\",\"status\":429,\
\"detail\":\"too many open connections from this address\"}";

/// Serves `app` until `shutdown` resolves, then stops accepting and lets
/// the connections in flight finish (endless ones, the event streams, end
/// when the server's `stopping` token is cancelled, as `shutdown` resolves).
pub async fn serve<S>(
    listener: TcpListener,
    service: S,
    limits: ConnectionLimits,
    trusted_proxies: Vec<IpNet>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: tower::Service<
            axum::extract::Request,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut listener = ProblemListener {
        listener,
        write_within: limits.write_timeout,
    };
    let fitting = fitting_connections(limits.max_total);
    let total = Arc::new(Semaphore::new(fitting));
    // One address never holds more than a quarter of all slots, so two or
    // three clients that hold theirs open (slow readers, a siege from a
    // few hosts) still leave room for everyone else.
    let per_client = limits.max_per_client.min((fitting / 4).max(1));
    let clients = PerClient::default();
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // The request head is bounded by hyper's read buffer (about 400 KiB,
    // then 431) and 100 headers; the URL by 64 KiB (414).
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = total.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (conn, addr) = tokio::select! {
            c = listener.accept() => c,
            () = &mut shutdown => break,
        };
        if let Err(e) = conn.stream().set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let ip = addr.ip().to_canonical();
        let exempt = trusted_proxies.iter().any(|net| net.contains(&ip));
        let slot = if exempt {
            None
        } else {
            match clients.take(ip, per_client) {
                Some(slot) => Some(slot),
                None => {
                    tokio::spawn(refuse(conn));
                    continue;
                }
            }
        };
        let svc = service
            .clone()
            .map_request(move |req: hyper::Request<hyper::body::Incoming>| {
                let mut req = req.map(axum::body::Body::new);
                req.extensions_mut().insert(ConnectInfo(addr));
                req
            });
        let conn = http.serve_connection(TokioIo::new(conn), TowerToHyperService::new(svc));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, %addr, "connection ended with an error");
            }
            drop(slot);
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Tells a client over its cap why, then closes.
async fn refuse(mut conn: Conn) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = conn.write_all(TOO_MANY).await;
        let _ = conn.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_is_a_whole_problem_document() {
        let text = String::from_utf8_lossy(super::TOO_MANY);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let doc: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(doc["status"], 429);
    }

    #[test]
    fn a_client_holds_at_most_its_share_and_gives_it_back() {
        let clients = super::PerClient::default();
        let ip: std::net::IpAddr = [192, 0, 2, 1].into();
        let a = clients.take(ip, 2);
        let b = clients.take(ip, 2);
        assert!(a.is_some() && b.is_some());
        assert!(clients.take(ip, 2).is_none(), "a third is over the cap");
        drop(a);
        assert!(
            clients.take(ip, 2).is_some(),
            "a slot given back is free again"
        );
        drop(b);
        assert!(
            clients.0.is_empty(),
            "no entry stays for a client with none"
        );
    }
}
