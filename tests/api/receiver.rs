//! A real HTTP receiver on a local port, for what Upstate sends out
//! (webhooks, chat messages): it keeps every request it got and answers
//! what the test planned (200 unless told otherwise), so tests read exactly
//! what arrived, as an integration's endpoint would.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone)]
pub struct Got {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Got {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// What the receiver answers next.
#[derive(Debug, Clone)]
pub enum Plan {
    Status(u16),
    Redirect(String),
    /// 200, after this many milliseconds.
    Slow(u64),
}

#[derive(Default)]
struct Inner {
    got: Vec<Got>,
    plan: VecDeque<Plan>,
    /// Answered when the plan is empty.
    otherwise: Option<Plan>,
}

pub struct Receiver {
    /// `http://127.0.0.1:<port>`
    pub base: String,
    inner: Arc<Mutex<Inner>>,
    stop: CancellationToken,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let keep = inner.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let keep = keep.clone();
            async move {
                let plan = {
                    let mut i = keep.lock().expect("receiver lock");
                    i.got.push(Got {
                        path: uri.path().to_string(),
                        headers,
                        body,
                    });
                    i.plan.pop_front().or(i.otherwise.clone())
                };
                answer(plan).await
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let stop = CancellationToken::new();
        let until = stop.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { until.cancelled().await })
                .await;
        });
        Receiver { base, inner, stop }
    }

    /// Answers these, in order, to the next requests.
    pub fn plan(&self, plans: impl IntoIterator<Item = Plan>) {
        self.inner.lock().expect("receiver lock").plan.extend(plans);
    }

    /// Answers this whenever nothing is planned (default: 200).
    pub fn otherwise(&self, plan: Plan) {
        self.inner.lock().expect("receiver lock").otherwise = Some(plan);
    }

    pub fn got(&self) -> Vec<Got> {
        self.inner.lock().expect("receiver lock").got.clone()
    }

    /// Waits until at least `n` requests arrived (failing after `within`).
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Got> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.got();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "expected {n} requests within {within:?}, got {}: {got:?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

async fn answer(plan: Option<Plan>) -> Response {
    match plan {
        None => (StatusCode::OK, "ok").into_response(),
        Some(Plan::Status(code)) => (
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            format!("planned answer {code}"),
        )
            .into_response(),
        Some(Plan::Slow(ms)) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            (StatusCode::OK, "slow ok").into_response()
        }
        Some(Plan::Redirect(to)) => {
            (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)], "").into_response()
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
