//! SIGKILL at random moments while writers are busy, on both databases:
//! after each restart every acknowledged write is there, the audit chain is
//! intact, and every acknowledged change's notification is delivered (the
//! outbox and the deliveries are in the database, so a crash only delays
//! them).

use crate::on_both_backends;
use crate::receiver::Receiver;
use crate::support::{Backend, Server};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

on_both_backends!(long: sigkill_under_concurrent_writers_loses_nothing_acknowledged);

const ENV: [(&str, &str); 3] = [
    ("UPSTATE_OUTGOING_ALLOW", "127.0.0.1"),
    ("UPSTATE_API_RATE_PER_MINUTE", "0"),
    ("UPSTATE_API_RATE_PER_HOUR", "0"),
];

/// A pseudo-random number below `n` (the clock's nanoseconds; the moment of
/// the kill only needs to differ between runs).
fn below(n: u64) -> u64 {
    u64::from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0),
    ) % n
}

async fn sigkill_under_concurrent_writers_loses_nothing_acknowledged(b: Backend) {
    let rx = Receiver::start().await;
    let mut s = Server::start_with(b, &ENV).await;
    s.post(
        "/api/notifications",
        json!({"name": "Ops", "kind": "webhook", "target": format!("{}/hook", rx.base)}),
    )
    .await
    .data(201);
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let web = s.component(page, "Web").await;
    let acked: Arc<Mutex<Vec<i64>>> = Arc::default();
    for round in 0..3 {
        let mut writers = Vec::new();
        for w in 0..6 {
            let (base, key, acked) = (s.base.clone(), s.key.clone(), acked.clone());
            // The management API and its application twin share handlers,
            // not transactions: both are written to.
            let prefix = if w % 2 == 0 { "/api/v1" } else { "/api" };
            writers.push(tokio::spawn(async move {
                let http = reqwest::Client::new();
                for i in 0.. {
                    let (first, second) = if (w + i) % 2 == 0 {
                        (api, web)
                    } else {
                        (web, api)
                    };
                    let sent = http
                        .post(format!("{base}{prefix}/incidents"))
                        .bearer_auth(&key)
                        .json(
                            &json!({"title": format!("r{round} w{w} #{i}"), "statusPageId": page,
                                      "message": "Looking", "componentStatuses": [
                                          {"componentId": first, "status": "major_outage"},
                                          {"componentId": second, "status": "degraded"}]}),
                        )
                        .send()
                        .await;
                    let Ok(res) = sent else { break };
                    if res.status() != 201 {
                        continue;
                    }
                    // Acknowledged only once the whole answer arrived.
                    let Ok(body) = res.json::<Value>().await else {
                        break;
                    };
                    if let Some(id) = body["data"]["id"].as_i64() {
                        acked.lock().unwrap().push(id);
                    }
                }
            }));
        }
        // Killed mid-writes once this round's writers got some answers
        // (ten more; a slow machine takes longer to get there), at a
        // moment of chance after that.
        let wanted = (round + 1) * 10;
        let started = Instant::now();
        while acked.lock().unwrap().len() < wanted && started.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(below(500))).await;
        s.restart(&ENV);
        for w in writers {
            w.await.unwrap();
        }
    }
    let acked: Vec<i64> = acked.lock().unwrap().clone();
    assert!(acked.len() >= 30, "the writers got going: {}", acked.len());
    for id in &acked {
        let r = s.get(&format!("/api/v1/incidents/{id}")).await;
        assert_eq!(r.status, 200, "acknowledged incident {id} is there");
    }
    let audit = s.post_empty("/api/audit-events/verify").await.data(200);
    assert_eq!(audit["intact"], true, "{audit}");
    // Every acknowledged creation is told to the webhook, after the crashes.
    let want: BTreeSet<i64> = acked.iter().copied().collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let missing = loop {
        let told: BTreeSet<i64> = rx
            .got()
            .iter()
            .map(|g| g.json())
            .filter(|m| m["type"] == "incident.created")
            .filter_map(|m| m["data"]["subject"]["id"].as_i64())
            .collect();
        let missing: Vec<i64> = want.difference(&told).copied().collect();
        if missing.is_empty() || Instant::now() > deadline {
            break missing;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        missing.is_empty(),
        "acknowledged changes never told: {missing:?}; log:\n{}",
        s.log()
    );
}
