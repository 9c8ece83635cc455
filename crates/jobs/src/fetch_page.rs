//! Reading another product's status page over HTTP, for an importer: the
//! public files of an Atlassian Statuspage page, fetched with the guarded
//! client every outgoing request of Upstate uses.

use crate::outgoing::Outgoing;
use upstate_store::transfer::{STATUSPAGE_FILES, StatuspageFiles};

/// The files of the page at `address` (its root, or its `summary.json`),
/// and the ones it did not serve. Only `summary.json` is required.
pub async fn statuspage(
    client: &Outgoing,
    address: &str,
) -> Result<(StatuspageFiles, Vec<String>), String> {
    let base = address
        .trim()
        .trim_end_matches('/')
        .trim_end_matches("/api/v2/summary.json")
        .trim_end_matches('/');
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(format!("{address:?} is not an http(s) address"));
    }
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for file in STATUSPAGE_FILES {
        let url = format!("{base}/api/v2/{file}");
        let answer = client
            .request(
                "GET",
                &url,
                &[("accept", "application/json".into())],
                &[],
                None,
            )
            .await
            .map_err(|f| format!("cannot read {url}: {}", f.reason))?;
        if answer.status != 200 {
            missing.push(format!("{file}: {url} answered {}", answer.status));
            found.push(None);
            continue;
        }
        let doc = serde_json::from_str(&answer.body)
            .map_err(|_| format!("{url} is not JSON: is this a Statuspage page?"))?;
        found.push(Some(doc));
    }
    let mut found = found.into_iter();
    let summary = found.next().flatten().ok_or_else(|| {
        format!("no summary.json at {base}/api/v2/: it is the one file a Statuspage import needs")
    })?;
    Ok((
        StatuspageFiles {
            summary,
            incidents: found.next().flatten(),
            maintenances: found.next().flatten(),
        },
        missing,
    ))
}
