use crate::on_both_backends;
use crate::support::{BIN, Backend, Running, Server, TestDb, spawn};
use reqwest::Method;

on_both_backends!(
    api_key_commands,
    migrate_command,
    config_file_and_environment
);

async fn api_key_commands(b: Backend) {
    let s = Server::start(b).await;
    let (ok, out, err) = s.db.cli(&[
        "api-key",
        "create",
        "--name",
        "deploy bot",
        "--scopes",
        "read,write",
        "--expires-in-days",
        "30",
    ]);
    assert!(ok, "{err}");
    let secret = out.lines().last().unwrap();
    assert!(
        secret.starts_with("upk_")
            && secret.len() == 68
            && secret[4..].bytes().all(|c| c.is_ascii_hexdigit()),
        "{out}"
    );
    assert!(
        out.contains("deploy bot") && out.contains("read,write") && out.contains("expires"),
        "{out}"
    );
    assert_eq!(
        s.send(Method::GET, "/api/v1/statuspages", Some(secret), None)
            .await
            .status,
        200
    );

    let (ok, list, _) = s.db.cli(&["api-key", "list"]);
    assert!(ok);
    assert!(
        list.contains("deploy bot") && list.contains(&secret[..12]),
        "{list}"
    );
    assert!(!list.contains(secret), "secrets are never listed");
    assert!(!list.contains(&s.key), "secrets are never listed");

    for bad in [
        vec![
            "api-key",
            "create",
            "--name",
            "x",
            "--scopes",
            "read,superuser",
        ],
        vec!["api-key", "create", "--name", "x", "--scopes", ""],
        vec!["api-key", "create", "--name", "   ", "--scopes", "read"],
        vec![
            "api-key",
            "create",
            "--name",
            "x",
            "--scopes",
            "read",
            "--expires-in-days",
            "0",
        ],
        // The HTTP route's limit holds here too (one rule in core).
        vec![
            "api-key",
            "create",
            "--name",
            "x",
            "--scopes",
            "read",
            "--expires-in-days",
            "3651",
        ],
        vec!["api-key", "revoke", "424242"],
    ] {
        let (ok, _, err) = s.db.cli(&bad);
        assert!(!ok, "{bad:?} should fail");
        assert!(err.contains("error"), "{bad:?}: {err}");
    }
    let (_, after, _) = s.db.cli(&["api-key", "list"]);
    assert_eq!(
        after.lines().count(),
        list.lines().count(),
        "refused commands created no key"
    );
}

async fn migrate_command(b: Backend) {
    let db = TestDb::empty(b).await;
    let (ok, out, err) = db.cli(&["migrate"]);
    assert!(ok, "{err}");
    assert!(out.contains("migrations applied"));
    let (ok, _, _) = db.cli(&["migrate"]);
    assert!(ok, "migrate is idempotent");
    // An unsupported URL is refused at start-up with a message saying what works.
    let out = std::process::Command::new(BIN)
        .args(["serve"])
        .env("UPSTATE_DATABASE_URL", "mysql://root@localhost/x")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sqlite://") && err.contains("postgres://"),
        "{err}"
    );
}

async fn config_file_and_environment(b: Backend) {
    let db = TestDb::new(b).await;
    let key = db.create_key("read");
    std::fs::write(
        db.dir.path().join("upstate.toml"),
        "api_rate_per_minute = 2\n",
    )
    .unwrap();
    let (child, base) = spawn(&db, &[]);
    let child = Running(child);
    let client = reqwest::Client::new();
    let statuses = async |n: usize, base: &str| {
        let mut out = vec![];
        for _ in 0..n {
            out.push(
                client
                    .get(format!("{base}/api/v1/statuspages"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16(),
            );
        }
        out
    };
    assert_eq!(
        statuses(3, &base).await,
        [200, 200, 429],
        "upstate.toml sets the limit"
    );
    drop(child);
    // The environment beats the file.
    let (child, base) = spawn(&db, &[("UPSTATE_API_RATE_PER_MINUTE", "4")]);
    let child = Running(child);
    assert_eq!(statuses(5, &base).await, [200, 200, 200, 200, 429]);
    drop(child);
    // Every setting has its variable, nested ones too; a flag beats both.
    let (child, base) = spawn(
        &db,
        &[
            ("UPSTATE_MAX_BODY_BYTES", "64"),
            ("UPSTATE_PUBLIC_RATE_SUMMARY", "1"),
        ],
    );
    let child = Running(child);
    let writer = db.create_key("write");
    let big = client
        .post(format!("{base}/api/v1/statuspages"))
        .bearer_auth(&writer)
        .header("content-type", "application/json")
        .body(format!("{{\"name\": \"{}\"}}", "x".repeat(100)))
        .send()
        .await
        .unwrap();
    assert_eq!(big.status(), 413, "UPSTATE_MAX_BODY_BYTES");
    let summary = async |base: &str| {
        let url = format!("{base}/api/public/status/none");
        let first = client.get(&url).send().await.unwrap().status().as_u16();
        let second = client.get(&url).send().await.unwrap().status().as_u16();
        (first, second)
    };
    assert_eq!(
        summary(&base).await,
        (404, 429),
        "UPSTATE_PUBLIC_RATE_SUMMARY"
    );
    drop(child);
    // A broken file is a clear start-up error that names the unknown key.
    std::fs::write(db.dir.path().join("upstate.toml"), "no_such_setting = 1\n").unwrap();
    let out = std::process::Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("UPSTATE_DATABASE_URL", &db.url)
        .current_dir(db.dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("upstate.toml") && err.contains("no_such_setting"),
        "{err}"
    );
}
