//! The mail Upstate sends, as the tests read it: JSON of the envelope, the
//! headers and the decoded text and HTML parts.
//!
//! Two ways in. `Mail` keeps the in-process server's mail in memory and
//! reads it with a real MIME parser (mail-parser): for the tests of what a
//! message says. `SmtpSink` is a real SMTP server (PyPI aiosmtpd,
//! `tests/consumers/smtp_sink.py`, parsed by Python's email parser): for the
//! few tests that prove the wire (the relay's answer, the self-test, the
//! binary's settings).

use crate::support::{Backend, Server, peers, peers_available, root};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The mail of an in-process server, kept in its memory.
pub struct Mail {
    kept: upstate_jobs::mailer::KeptMail,
}

impl Mail {
    pub fn new() -> Mail {
        Mail {
            kept: Default::default(),
        }
    }

    /// Makes `delivery` keep its mail here, from `status@example.com`.
    pub fn keep(&self, delivery: &mut upstate_jobs::DeliverySettings) {
        delivery.smtp = Some(upstate_jobs::SmtpSettings {
            // Never dialled: the mail is kept.
            url: "smtp://127.0.0.1:9".into(),
            from: "Status <status@example.com>".into(),
        });
        delivery.keep_mail = Some(self.kept.clone());
    }

    /// A server in this process that keeps its mail here.
    pub async fn server(&self, b: Backend) -> Server {
        Server::in_process(b, |c| self.keep(&mut c.delivery)).await
    }

    pub async fn got(&self) -> Vec<Value> {
        self.kept.messages().await.iter().map(read).collect()
    }

    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        at_least(n, within, async || self.got().await).await
    }
}

/// What `got` says once it holds `n` messages (or links in them; fails
/// after `within`).
pub(crate) async fn at_least<T: std::fmt::Debug, F: AsyncFn() -> Vec<T>>(
    n: usize,
    within: Duration,
    got: F,
) -> Vec<T> {
    let deadline = Instant::now() + within;
    loop {
        let got = got().await;
        if got.len() >= n {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "expected {n} messages within {within:?}, got {}: {got:?}",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A kept message as the SMTP sink reports one: every header by its
/// lower-cased name (unfolded; the subject decoded), and the text and HTML
/// parts decoded.
fn read(m: &upstate_jobs::mailer::KeptMessage) -> Value {
    let msg = mail_parser::MessageParser::default()
        .parse(m.raw.as_bytes())
        .unwrap_or_else(|| panic!("a MIME message: {}", m.raw));
    let mut headers = serde_json::Map::new();
    for h in msg.headers() {
        let raw = &m.raw[h.offset_start as usize..h.offset_end as usize];
        let value = raw.replace("\r\n", "").trim().to_string();
        headers.insert(h.name().to_ascii_lowercase(), Value::String(value));
    }
    if let Some(subject) = msg.subject() {
        headers.insert("subject".into(), Value::String(subject.into()));
    }
    let mut parts = serde_json::Map::new();
    if let Some(text) = msg.body_text(0) {
        parts.insert("text/plain".into(), Value::String(text.into_owned()));
    }
    if let Some(html) = msg.body_html(0) {
        parts.insert("text/html".into(), Value::String(html.into_owned()));
    }
    serde_json::json!({
        "mail_from": m.from,
        "rcpt_tos": m.to,
        "headers": headers,
        "parts": parts,
    })
}

pub struct SmtpSink {
    pub port: u16,
    child: Child,
    got: Arc<Mutex<Vec<Value>>>,
}

impl SmtpSink {
    /// `None` (the test skips, or fails under CI) without aiosmtpd.
    pub fn start(test: &str) -> Option<SmtpSink> {
        Self::answering_after(test, Duration::ZERO)
    }

    /// `start`, a relay that answers each message `slow` later.
    pub fn answering_after(test: &str, slow: Duration) -> Option<SmtpSink> {
        Self::on(test, crate::support::free_port(), slow)
    }

    /// A new relay where this one was (it stops first): the same server
    /// restarted, as far as a client can tell.
    pub fn restart(self, test: &str) -> SmtpSink {
        let port = self.port;
        drop(self);
        Self::on(test, port, Duration::ZERO).expect("the SMTP sink again")
    }

    fn on(test: &str, port: u16, slow: Duration) -> Option<SmtpSink> {
        let python = peers().join("consumers/venv/bin/python");
        if !peers_available(test, std::slice::from_ref(&python)) {
            return None;
        }
        let mut child = Command::new(python)
            .arg(root().join("tests/consumers/smtp_sink.py"))
            .arg(port.to_string())
            .arg(slow.as_secs_f64().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the SMTP sink");
        let stdout = child.stdout.take().expect("stdout");
        let got = Arc::new(Mutex::new(Vec::new()));
        let keep = got.clone();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line == "ready" {
                    let _ = ready_tx.send(());
                } else if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    keep.lock().expect("sink lock").push(v);
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the SMTP sink started");
        Some(SmtpSink { port, child, got })
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// A server that sends its mail here, from `status@example.com`.
    pub async fn server(&self, b: Backend) -> Server {
        let url = self.url();
        Server::start_with(
            b,
            &[
                ("UPSTATE_SMTP_URL", url.as_str()),
                ("UPSTATE_SMTP_FROM", "Status <status@example.com>"),
            ],
        )
        .await
    }

    pub fn got(&self) -> Vec<Value> {
        self.got.lock().expect("sink lock").clone()
    }

    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        at_least(n, within, async || self.got()).await
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
