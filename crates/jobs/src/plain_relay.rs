//! A relay reached without TLS (`smtp://host:25`: one on the same host or
//! network, the setup for sending in volume), over connections kept here
//! with `TCP_NODELAY`. lettre writes a message and its closing `.` in two
//! writes on sockets without that option, so each message waited for the
//! relay's delayed ACK, about 40 ms: 100 connections carried ~2,000
//! messages a second whatever the relay's speed (docs/performance.md,
//! "Notifications"). lettre's `AsyncSmtpConnection` still speaks SMTP;
//! only the socket and the reuse are ours. Relays behind TLS keep lettre's
//! own pool, where the network's round trips dominate anyway.

use lettre::Message;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::AsyncSmtpConnection;
use lettre::transport::smtp::extension::ClientId;
use lettre::transport::smtp::response::Response;
use std::time::{Duration, Instant};

/// A connection idle longer than this is closed rather than reused: relays
/// drop idle clients (Postfix after 300 s), and a send on a dropped one
/// would fail and wait for its retry.
const IDLE: Duration = Duration::from_secs(30);

/// A connection idle longer than this is checked before it is reused.
const CHECK_AFTER: Duration = Duration::from_secs(1);

pub(crate) struct PlainRelay {
    host: String,
    port: u16,
    hello: ClientId,
    credentials: Option<Credentials>,
    timeout: Duration,
    idle: std::sync::Mutex<Vec<(AsyncSmtpConnection, Instant)>>,
}

/// Why a send failed: what the relay answered (permanent for a 5xx), or
/// why it could not be reached.
pub(crate) enum Failed {
    Smtp(lettre::transport::smtp::Error),
    Unreachable(String),
}

impl PlainRelay {
    /// The relay of an `smtp://` URL without a `tls` parameter; None for
    /// any other (TLS, which lettre's pool keeps).
    pub(crate) fn from_url(url: &str, timeout: Duration) -> Option<PlainRelay> {
        let u = url::Url::parse(url).ok()?;
        if u.scheme() != "smtp" || u.query_pairs().any(|(k, _)| k == "tls") {
            return None;
        }
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|c| c.into_owned())
                .ok()
        };
        let credentials = match u.password() {
            Some(p) => Some(Credentials::new(decode(u.username())?, decode(p)?)),
            None => None,
        };
        let name = u.path().trim_matches('/');
        Some(PlainRelay {
            host: u.host_str()?.to_string(),
            port: u.port().unwrap_or(25),
            hello: match name.is_empty() {
                true => ClientId::default(),
                false => ClientId::Domain(name.to_string()),
            },
            credentials,
            timeout,
            idle: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A connection greeted (and signed in), reused while fresh.
    async fn connection(&self) -> Result<AsyncSmtpConnection, Failed> {
        loop {
            let kept = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            match kept {
                // One that waited a while is asked first (NOOP): the relay
                // may have gone away meanwhile. In a burst none waits.
                Some((mut c, since)) if since.elapsed() < IDLE && !c.has_broken() => {
                    if since.elapsed() < CHECK_AFTER || c.test_connected().await {
                        return Ok(c);
                    }
                }
                Some(_) => continue,
                None => break,
            }
        }
        let stream = tokio::time::timeout(
            self.timeout,
            tokio::net::TcpStream::connect((self.host.as_str(), self.port)),
        )
        .await
        .map_err(|_| Failed::Unreachable(format!("no answer within {} s", self.timeout.as_secs())))?
        .map_err(|e| Failed::Unreachable(e.to_string()))?;
        stream
            .set_nodelay(true)
            .map_err(|e| Failed::Unreachable(e.to_string()))?;
        let mut c = AsyncSmtpConnection::connect_with_transport(Box::new(stream), &self.hello)
            .await
            .map_err(Failed::Smtp)?;
        if let Some(creds) = &self.credentials {
            c.auth(&[Mechanism::Plain, Mechanism::Login], creds)
                .await
                .map_err(Failed::Smtp)?;
        }
        Ok(c)
    }

    /// Sends one message; the connection goes back for the next one
    /// unless the exchange broke it.
    pub(crate) async fn send(&self, message: &Message) -> Result<Response, Failed> {
        let mut c = self.connection().await?;
        let sent = c.send(message.envelope(), &message.formatted()).await;
        if !c.has_broken() {
            self.idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((c, Instant::now()));
        }
        sent.map_err(Failed::Smtp)
    }

    /// Opens a connection and greets the relay (the self-test).
    pub(crate) async fn reachable(&self) -> Result<(), String> {
        let mut c = self.connection().await.map_err(|e| match e {
            Failed::Smtp(e) => format!("cannot reach the relay: {e}"),
            Failed::Unreachable(e) => format!("cannot reach the relay: {e}"),
        })?;
        match c.test_connected().await {
            true => {
                let _ = c.quit().await;
                Ok(())
            }
            false => Err("the relay did not answer as SMTP".into()),
        }
    }
}
