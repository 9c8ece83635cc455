//! Secrets at rest (docs/operations.md, "Secrets at rest"): what the
//! service must read back (TOTP seeds, channel signing secrets, the VAPID
//! private key, monitor header values, the bucket's secret key) is sealed
//! with the server key, so a copy of the database gives none of them away;
//! `upstate rotate-key` moves them to a new key while the service reads on;
//! an instance without the database's key refuses to start.

use crate::on_both_backends;
use crate::support::{Backend, Browser, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

on_both_backends!(
    no_stored_secret_reads_in_clear,
    rotating_the_key_reseals_every_secret_and_the_service_reads_on,
    a_database_refuses_an_instance_without_its_key,
    the_debug_log_names_routes_not_tokens,
);

/// Everything secret the service keeps, made through the API; returns the
/// secrets in clear (TOTP seed, channel secret, header value, bucket key).
async fn secrets_made(s: &Server) -> Vec<String> {
    s.db.user("owner@example.com", "owner");
    let me = Browser::signed_in(s, "owner@example.com").await;
    let (status, setup, _) = me.send(Method::POST, "/api/auth/2fa/setup", None).await;
    assert_eq!(status, 200, "{setup}");
    let totp = setup["data"]["secret"].as_str().expect("seed").to_string();
    let channel = s
        .post(
            "/api/notifications",
            json!({"name": "On-call", "kind": "webhook", "target": "https://hooks.example.com/on-call"}),
        )
        .await
        .data(201);
    let signing = channel["secret"]
        .as_str()
        .expect("signing secret")
        .to_string();
    let page = s.page("acme").await;
    let api = s.component(page, "API").await;
    let header = "Bearer monitor-credential-0123456789-xyz";
    s.post(
        "/api/monitors",
        json!({"componentId": api, "kind": "http", "target": "http://127.0.0.1:9/health",
               "enabled": false, "headers": [{"name": "Authorization", "value": header}]}),
    )
    .await
    .data(201);
    let bucket = "bucket-secret-key-0123456789abcdef";
    s.send(
        Method::PUT,
        "/api/export-settings",
        Some(&s.key),
        Some(
            json!({"enabled": false, "s3": {"bucket": "status-copy", "region": "us-east-1",
                    "accessKeyId": "AKIAEXAMPLE", "secretAccessKey": bucket}}),
        ),
    )
    .await
    .data(200);
    // The push key pair is made on first use.
    s.get("/api/push/subscribe").await.data(200);
    let integration = s
        .post(
            "/api/integrations",
            json!({"kind": "generic", "name": "Cron", "statusPageId": page}),
        )
        .await
        .data(201);
    let alerts = integration["secret"]
        .as_str()
        .expect("generic signing secret")
        .to_string();
    vec![
        totp,
        signing,
        header.to_string(),
        bucket.to_string(),
        alerts,
    ]
}

/// The key id each stored secret is sealed with (`sealed:v1:<id>:…`).
async fn sealed_ids(s: &Server) -> Vec<String> {
    let mut stored = vec![];
    for sql in [
        "SELECT totp_pending FROM users WHERE totp_pending IS NOT NULL",
        "SELECT secret FROM notification_channels",
        "SELECT private_key FROM vapid_keys",
        "SELECT secret FROM integrations",
    ] {
        stored.extend(s.db.texts(sql).await);
    }
    for config in s.db.texts("SELECT config FROM monitors").await {
        let c: Value = serde_json::from_str(&config).expect("config");
        stored.push(c["headers"][0]["value"].as_str().expect("header").into());
    }
    for export in
        s.db.texts("SELECT value FROM settings WHERE name = 'export'")
            .await
    {
        let e: Value = serde_json::from_str(&export).expect("export");
        stored.push(e["s3"]["secretAccessKey"].as_str().expect("key").into());
    }
    assert_eq!(stored.len(), 6, "{stored:?}");
    stored
        .iter()
        .map(|v| {
            let rest = v
                .strip_prefix("sealed:v1:")
                .unwrap_or_else(|| panic!("{v} is not sealed"));
            rest.split(':').next().expect("key id").to_string()
        })
        .collect()
}

/// The key file the service made, and its lines.
fn key_file(s: &Server) -> (std::path::PathBuf, Vec<String>) {
    let path = s.db.dir.path().join("data/secret.key");
    let text = std::fs::read_to_string(&path).expect("secret.key");
    let keys = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(String::from)
        .collect();
    (path, keys)
}

async fn no_stored_secret_reads_in_clear(b: Backend) {
    let s = Server::start(b).await;
    let secrets = secrets_made(&s).await;
    let stored = s.db.everything_stored().await;
    for secret in &secrets {
        assert!(
            !stored.contains(secret.as_str()),
            "{secret} is stored in clear"
        );
    }
    // Nor the VAPID private key, which the service never shows: every
    // stored secret is sealed, with the one key of the key file.
    let ids = sealed_ids(&s).await;
    let (path, keys) = key_file(&s);
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    }
    // And what is sealed still reads: the hints shown come from the
    // opened values.
    let channels = s.get("/api/notifications").await.data(200);
    let tail = &secrets[1][secrets[1].len() - 4..];
    assert_eq!(channels[0]["secretHint"], format!("…{tail}"));
    let monitors = s.get("/api/monitors").await.data(200);
    assert_eq!(monitors[0]["headers"][0]["value"], "Bearer …xyz");
}

async fn rotating_the_key_reseals_every_secret_and_the_service_reads_on(b: Backend) {
    let s = Server::start(b).await;
    let secrets = secrets_made(&s).await;
    let before = sealed_ids(&s).await;
    let (_, old) = key_file(&s);

    let (ok, out, err) = s.db.cli(&["rotate-key"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("6 secrets sealed again"), "{out}");
    let after = sealed_ids(&s).await;
    let (_, new) = key_file(&s);
    assert_eq!(new.len(), 1, "only the new key is kept: {new:?}");
    assert_ne!(new, old);
    assert!(
        after.iter().all(|id| id == &after[0] && id != &before[0]),
        "{before:?} → {after:?}"
    );
    assert!(out.contains(&after[0]) && out.contains(&before[0]), "{out}");

    // The running service follows the new key: it opens and seals with it.
    let channels = s.get("/api/notifications").await.data(200);
    let tail = &secrets[1][secrets[1].len() - 4..];
    assert_eq!(channels[0]["secretHint"], format!("…{tail}"));
    let export = s.get("/api/export-settings").await.data(200);
    assert_eq!(export["s3"]["secretAccessKeySet"], true, "{export}");
    let made = s
        .post(
            "/api/notifications",
            json!({"name": "Room", "kind": "webhook", "target": "https://hooks.example.com/room"}),
        )
        .await
        .data(201);
    let id = made["id"].as_i64().expect("id");
    let sealed =
        s.db.texts(&format!(
            "SELECT secret FROM notification_channels WHERE id = {id}"
        ))
        .await;
    assert!(
        sealed[0].starts_with(&format!("sealed:v1:{}:", after[0])),
        "{sealed:?}"
    );
    // Audited, by the command line.
    let audit = s
        .get("/api/audit-events?action=server_key.rotate")
        .await
        .data(200);
    let events = audit.as_array().expect("events");
    assert_eq!(events.len(), 1, "{audit}");
    assert_eq!(events[0]["summary"]["resealed"], 6, "{audit}");
    assert_eq!(events[0]["actor"]["kind"], "cli", "{audit}");
    // A copy of the database still gives nothing away.
    let stored = s.db.everything_stored().await;
    for secret in &secrets {
        assert!(!stored.contains(secret.as_str()), "{secret} in clear");
    }
}

async fn a_database_refuses_an_instance_without_its_key(b: Backend) {
    let s = Server::start(b).await;
    let secrets = secrets_made(&s).await;
    let ids = sealed_ids(&s).await;

    // Another key, given by configuration: refused before anything is
    // sealed with it.
    let other = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let (ok, out, err) =
        s.db.cli_with(&["migrate"], &[("UPSTATE_SECRET_KEY", other)]);
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!("sealed with server key {}", ids[0])),
        "{err}"
    );
    // A malformed key is named as such.
    let (ok, _, err) =
        s.db.cli_with(&["migrate"], &[("UPSTATE_SECRET_KEY", "short")]);
    assert!(!ok);
    assert!(
        err.contains("UPSTATE_SECRET_KEY") && err.contains("32 bytes"),
        "{err}"
    );
    // No key file where the database has sealed secrets: refused, and no
    // new key is made.
    let empty = tempfile::tempdir().expect("dir");
    let (ok, _, err) = s.db.cli_with(
        &["migrate"],
        &[("UPSTATE_DATA_DIR", empty.path().to_str().expect("path"))],
    );
    assert!(!ok);
    assert!(err.contains("secret.key is missing"), "{err}");
    assert!(!empty.path().join("secret.key").exists());
    // The right key given by configuration (with a new one as current, the
    // old as previous) opens everything and seals it anew at start.
    let (_, keys) = key_file(&s);
    let (ok, out, err) = s.db.cli_with(
        &["migrate"],
        &[
            ("UPSTATE_SECRET_KEY", other),
            ("UPSTATE_SECRET_KEY_PREVIOUS", keys[0].as_str()),
        ],
    );
    assert!(ok, "{out}{err}");
    let moved = sealed_ids(&s).await;
    assert!(moved.iter().all(|id| id != &ids[0]), "{ids:?} → {moved:?}");

    // A secret stored before sealing existed is sealed at the next start.
    s.db.execute("UPDATE notification_channels SET secret = 'whsec_from-an-older-version'")
        .await;
    let (ok, out, err) =
        s.db.cli_with(&["migrate"], &[("UPSTATE_SECRET_KEY", other)]);
    assert!(ok, "{out}{err}");
    let now = s.db.texts("SELECT secret FROM notification_channels").await;
    assert!(now[0].starts_with("sealed:v1:"), "{now:?}");
    let stored = s.db.everything_stored().await;
    assert!(!stored.contains("whsec_from-an-older-version"));
    assert!(!stored.contains(secrets[0].as_str()));
}

/// Paths and query strings carry tokens (a heartbeat's, an integration's, a
/// viewer's `?token=`): even at debug level the log names the route's
/// pattern, never the URI.
async fn the_debug_log_names_routes_not_tokens(b: Backend) {
    let s = Server::start_with(b, &[("RUST_LOG", "debug")]).await;
    let heartbeat = "hb0secret0in0the0path0a1b2c3d4";
    let integration = "ig0secret0in0the0path0e5f6a7b8";
    let query = "qs0secret0in0the0query0c9d0e1f2";
    let r = s
        .send(
            Method::GET,
            &format!("/api/heartbeat/{heartbeat}"),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, 404, "no such heartbeat: {:?}", r.body);
    let r = s
        .send(
            Method::POST,
            &format!("/api/integrations/generic/{integration}"),
            None,
            Some(json!({"status": "firing"})),
        )
        .await;
    assert_eq!(r.status, 404, "no such integration: {:?}", r.body);
    let r = s
        .send(
            Method::GET,
            &format!("/api/v1/incidents?token={query}"),
            Some(&s.key),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let routes = [
        "route=\"/api/heartbeat/{token}\"",
        "route=\"/api/integrations/generic/{token}\"",
        "route=\"/api/v1/incidents\"",
    ];
    assert!(
        s.eventually(Duration::from_secs(5), || async {
            let log = s.log();
            routes.iter().all(|r| log.contains(r))
        })
        .await,
        "each request is logged by its route: {}",
        s.log()
    );
    let log = s.log();
    for token in [heartbeat, integration, query] {
        assert!(!log.contains(token), "{token} is in the log");
    }
}
