//! `upstate incident …` and `upstate maintenance …`: a server driven
//! through its management API (`/api/v1`) with an API key, for scripts and
//! chat-ops. Nothing here opens a database: the server may be anywhere,
//! and what it refuses is printed as it said it (its problem's detail and
//! each field's message), with a failing exit status.

use anyhow::Context;
use serde_json::{Value, json};

/// Where the server is and what opens it.
#[derive(clap::Args)]
pub struct Remote {
    /// The server's address.
    #[arg(long, env = "UPSTATE_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// An API key with the scopes the command needs (incidents:write,
    /// maintenance:write; reading needs none beyond the key).
    #[arg(long = "key", env = "UPSTATE_API_KEY", hide_env_values = true)]
    api_key: String,
    /// Print the server's JSON answer instead of a line per record.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Subcommand)]
pub enum IncidentCommand {
    /// List a page's incidents, newest first.
    List {
        #[command(flatten)]
        remote: Remote,
        /// The status page's id.
        #[arg(long = "status-page")]
        status_page_id: Option<i64>,
        /// Only these: investigating, identified, monitoring or resolved.
        #[arg(long)]
        status: Option<String>,
    },
    /// Open an incident on a page.
    Open {
        #[command(flatten)]
        remote: Remote,
        /// The status page's id.
        #[arg(long = "status-page")]
        status_page_id: i64,
        #[arg(long)]
        title: String,
        /// The first update's words.
        #[arg(long)]
        message: String,
        /// none, minor, major or critical.
        #[arg(long, default_value = "minor")]
        impact: String,
        /// investigating (the default), identified or monitoring.
        #[arg(long, default_value = "investigating")]
        status: String,
        /// A component it touches, `ID` or `ID=STATUS` (degraded,
        /// partial_outage, major_outage…); repeat for several.
        #[arg(long = "component")]
        component: Vec<String>,
    },
    /// Post an update to an incident.
    Update {
        #[command(flatten)]
        remote: Remote,
        /// The incident's id.
        incident: String,
        #[arg(long)]
        status: String,
        #[arg(long)]
        message: String,
    },
    /// Resolve an incident; the components it touched go back to
    /// operational.
    Resolve {
        #[command(flatten)]
        remote: Remote,
        /// The incident's id.
        incident: String,
        #[arg(long)]
        message: Option<String>,
        /// Leave the components as they are.
        #[arg(long)]
        keep_components: bool,
    },
}

#[derive(clap::Subcommand)]
pub enum MaintenanceCommand {
    /// List a page's maintenance windows.
    List {
        #[command(flatten)]
        remote: Remote,
        /// The status page's id.
        #[arg(long = "status-page")]
        status_page_id: Option<i64>,
        /// Only windows still to come.
        #[arg(long)]
        upcoming: bool,
    },
    /// Schedule a maintenance window.
    Schedule {
        #[command(flatten)]
        remote: Remote,
        /// The status page's id.
        #[arg(long = "status-page")]
        status_page_id: i64,
        #[arg(long)]
        title: String,
        #[arg(long, default_value = "")]
        description: String,
        /// When it starts (RFC 3339, such as 2026-12-01T02:00:00Z).
        #[arg(long)]
        start: String,
        /// When it ends (RFC 3339).
        #[arg(long)]
        end: String,
        /// Start and complete it at its times, without an operator.
        #[arg(long)]
        auto_start: bool,
        /// A component it concerns, by id; repeat for several.
        #[arg(long = "component")]
        component: Vec<i64>,
    },
}

/// The guarded client, allowed everywhere: the operator names the server.
fn client() -> anyhow::Result<upstate_jobs::outgoing::Outgoing> {
    let everywhere = ["0.0.0.0/0", "::/0"]
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    upstate_jobs::outgoing::Outgoing::build(
        upstate_jobs::outgoing::Guard {
            allow: everywhere,
            setting: "--server",
        },
        std::time::Duration::from_secs(30),
        false,
        "the upstate command",
        upstate_jobs::outgoing::Tls::Verify,
    )
    .map_err(anyhow::Error::msg)
}

/// One request to the management API; the answer's `data`, or the
/// server's refusal as an error.
async fn call(
    remote: &Remote,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    request(
        &remote.server,
        &remote.api_key,
        method,
        &format!("/api/v1{path}"),
        body,
    )
    .await
}

/// One request to `server` (any path under it) with `key`; the answer's
/// `data`, or the server's refusal as an error that says its status,
/// detail and each field's message.
pub(crate) async fn request(
    server: &str,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let doc = answer(server, key, method, path, body).await?;
    Ok(doc.get("data").cloned().unwrap_or(doc))
}

/// `request`'s whole answer, for lists that come a page at a time (their
/// `nextCursor` beside `data`).
pub(crate) async fn answer(
    server: &str,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let url = format!("{}{path}", server.trim_end_matches('/'));
    let mut headers = vec![
        ("authorization", format!("Bearer {key}")),
        ("accept", "application/json".to_string()),
    ];
    let bytes = match &body {
        Some(b) => {
            headers.push(("content-type", "application/json".to_string()));
            serde_json::to_vec(b)?
        }
        None => Vec::new(),
    };
    let answer = client()?
        .send_whole(method, &url, &headers, &bytes, 16 * 1024 * 1024)
        .await
        .map_err(|f| anyhow::anyhow!("{url}: {}", f.reason))?;
    let doc: Value = serde_json::from_str(&answer.body).with_context(|| {
        format!(
            "{url} answered {} with no JSON: is it Upstate?",
            answer.status
        )
    })?;
    if !(200..300).contains(&answer.status) {
        let mut why = doc["detail"]
            .as_str()
            .or_else(|| doc["title"].as_str())
            .unwrap_or("refused")
            .to_string();
        for e in doc["errors"].as_array().into_iter().flatten() {
            why.push_str(&format!(
                "\n  {}: {}",
                e["field"].as_str().unwrap_or("?"),
                e["message"].as_str().unwrap_or("")
            ));
        }
        anyhow::bail!("the server answered {}: {why}", answer.status);
    }
    Ok(doc)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The answer as JSON, or one line per record.
fn show(remote: &Remote, data: &Value, line: fn(&Value) -> String) {
    if remote.json {
        println!("{}", serde_json::to_string_pretty(data).unwrap_or_default());
        return;
    }
    match data {
        Value::Array(items) if items.is_empty() => println!("none"),
        Value::Array(items) => items.iter().for_each(|i| println!("{}", line(i))),
        one => println!("{}", line(one)),
    }
}

fn incident_line(i: &Value) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}",
        text(&i["id"]),
        text(&i["status"]),
        text(&i["impact"]),
        text(&i["createdAt"]),
        text(&i["title"])
    )
}

fn maintenance_line(m: &Value) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}",
        text(&m["id"]),
        text(&m["status"]),
        text(&m["scheduledStartTime"]),
        text(&m["scheduledEndTime"]),
        text(&m["title"])
    )
}

/// `ID` or `ID=STATUS`: the ids, and the statuses where given.
fn component_statuses(list: &[String]) -> anyhow::Result<(Vec<i64>, Vec<Value>)> {
    let mut ids = Vec::new();
    let mut statuses = Vec::new();
    for c in list {
        let (id, status) = match c.split_once('=') {
            Some((id, status)) => (id, Some(status.trim())),
            None => (c.as_str(), None),
        };
        let id: i64 = id
            .trim()
            .parse()
            .with_context(|| format!("--component {c:?}: a component's id, or ID=STATUS"))?;
        ids.push(id);
        if let Some(status) = status {
            statuses.push(json!({"componentId": id, "status": status}));
        }
    }
    Ok((ids, statuses))
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    let mut q = Vec::new();
    for (name, value) in pairs {
        if let Some(v) = value {
            q.push(format!("{name}={}", percent(v)));
        }
    }
    if q.is_empty() {
        String::new()
    } else {
        format!("?{}", q.join("&"))
    }
}

/// Query-safe text (ids and statuses are plain, but a script may pass
/// anything).
fn percent(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

pub async fn incident(cmd: IncidentCommand) -> anyhow::Result<()> {
    match cmd {
        IncidentCommand::List {
            remote,
            status_page_id,
            status,
        } => {
            let q = query(&[
                ("statusPageId", status_page_id.map(|i| i.to_string())),
                ("status", status),
            ]);
            let data = call(&remote, "GET", &format!("/incidents{q}"), None).await?;
            show(&remote, &data, incident_line);
        }
        IncidentCommand::Open {
            remote,
            status_page_id,
            title,
            message,
            impact,
            status,
            component,
        } => {
            let (ids, statuses) = component_statuses(&component)?;
            let mut body = json!({"statusPageId": status_page_id, "title": title,
                "message": message, "impact": impact, "status": status, "componentIds": ids});
            if !statuses.is_empty() {
                body["componentStatuses"] = json!(statuses);
            }
            let data = call(&remote, "POST", "/incidents", Some(body)).await?;
            show(&remote, &data, incident_line);
        }
        IncidentCommand::Update {
            remote,
            incident,
            status,
            message,
        } => {
            let path = format!("/incidents/{}/updates", percent(&incident));
            let body = json!({"status": status, "message": message});
            let data = call(&remote, "POST", &path, Some(body)).await?;
            show(&remote, &data, |u| {
                format!(
                    "{}\t{}\t{}",
                    text(&u["id"]),
                    text(&u["status"]),
                    text(&u["message"])
                )
            });
        }
        IncidentCommand::Resolve {
            remote,
            incident,
            message,
            keep_components,
        } => {
            let path = format!("/incidents/{}", percent(&incident));
            let mut body = json!({});
            if let Some(m) = message {
                body["message"] = json!(m);
            }
            if !keep_components {
                // What a person resolving it would do: every component it
                // touched is working again.
                let open = call(&remote, "GET", &path, None).await?;
                let back: Vec<Value> = open["affectedComponents"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|id| json!({"componentId": id, "status": "operational"}))
                    .collect();
                body["componentStatuses"] = json!(back);
            }
            let data = call(&remote, "POST", &format!("{path}/resolve"), Some(body)).await?;
            show(&remote, &data, incident_line);
        }
    }
    Ok(())
}

pub async fn maintenance(cmd: MaintenanceCommand) -> anyhow::Result<()> {
    match cmd {
        MaintenanceCommand::List {
            remote,
            status_page_id,
            upcoming,
        } => {
            let q = query(&[
                ("statusPageId", status_page_id.map(|i| i.to_string())),
                ("upcoming", upcoming.then(|| "true".to_string())),
            ]);
            let data = call(&remote, "GET", &format!("/maintenance{q}"), None).await?;
            show(&remote, &data, maintenance_line);
        }
        MaintenanceCommand::Schedule {
            remote,
            status_page_id,
            title,
            description,
            start,
            end,
            auto_start,
            component,
        } => {
            let body = json!({"statusPageId": status_page_id, "title": title,
                "description": description, "scheduledStartTime": start,
                "scheduledEndTime": end, "autoStart": auto_start, "componentIds": component});
            let data = call(&remote, "POST", "/maintenance", Some(body)).await?;
            show(&remote, &data, maintenance_line);
        }
    }
    Ok(())
}
