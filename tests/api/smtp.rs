//! A real SMTP server (PyPI aiosmtpd, `tests/consumers/smtp_sink.py`) for
//! the mail Upstate sends: each message arrives as SMTP, is parsed by
//! Python's email parser, and reaches the test as JSON (envelope, headers,
//! decoded text and HTML parts).

use crate::support::{Backend, Server, peers_available, root};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct SmtpSink {
    pub port: u16,
    child: Child,
    got: Arc<Mutex<Vec<Value>>>,
}

impl SmtpSink {
    /// `None` (the test skips, or fails under CI) without aiosmtpd.
    pub fn start(test: &str) -> Option<SmtpSink> {
        let python = root().join("target/consumers/venv/bin/python");
        if !peers_available(test, std::slice::from_ref(&python)) {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new(python)
            .arg(root().join("tests/consumers/smtp_sink.py"))
            .arg(port.to_string())
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
        let deadline = Instant::now() + within;
        loop {
            let got = self.got();
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
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
