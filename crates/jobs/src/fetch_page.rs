//! Reading another product's status page over HTTP, for an importer: the
//! files its description names (`transfer::Product::wanted`), fetched
//! with the guarded client every outgoing request of Upstate uses, with
//! every page of a long list followed.

use crate::outgoing::Outgoing;
use serde_json::Value;
use upstate_store::transfer::{
    Access, Files, MAX_PAGES, PAGE_ID_FILE, Paging, Product, Wanted, items_in, merge, next_page,
};

/// The largest answer read at once (a page of a list, or a whole file).
pub const ANSWER_MAX_BYTES: usize = 32 * 1024 * 1024;

/// How many items a numbered page asks for (the most Statuspage and
/// Instatus give).
const PER_PAGE: usize = 100;

/// Why nothing was read.
#[derive(Debug)]
pub enum Unread {
    /// No page there, or it could not be read whole.
    Missing(String),
    /// The key reads several pages and none was named.
    Choose(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Missing(m) | Unread::Choose(m) => f.write_str(m),
        }
    }
}

impl From<String> for Unread {
    fn from(m: String) -> Unread {
        Unread::Missing(m)
    }
}

/// The files of the page at `address` and, for each file it did not
/// serve, why. A required file missing is an error; so is any answer that
/// is not JSON or a connection that fails, so that nothing is half-read.
/// A key given without a page reads the one page it opens.
pub async fn foreign(
    client: &Outgoing,
    product: Product,
    address: &str,
    access: Option<&Access>,
) -> Result<(Files, Vec<String>), Unread> {
    let mut base = address.trim().trim_end_matches('/');
    // A Statuspage page given by the address of its JSON.
    for tail in ["/api/v2/summary.json", "/api/v2", "/api/v1", "/api"] {
        base = base.trim_end_matches(tail);
    }
    if product == Product::Statuspage && access.is_some() {
        base = address.trim().trim_end_matches('/');
    }
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(Unread::Missing(format!(
            "{address:?} is not an http(s) address"
        )));
    }
    let headers = product.headers(access);
    let chosen;
    let access = match (access, product.pages_path()) {
        (Some(a), Some(path)) if a.page.trim().is_empty() => {
            chosen = Access {
                key: a.key.clone(),
                page: the_page(client, &format!("{base}{path}"), &headers).await?,
            };
            Some(&chosen)
        }
        (a, _) => a,
    };
    let mut files = Files::new();
    // Which page was read, for a translation that names it from the
    // product's list of pages (Instatus's components need not say).
    if let Some(a) = access.filter(|a| !a.page.trim().is_empty()) {
        files.insert(
            PAGE_ID_FILE.into(),
            Value::String(a.page.trim().to_string()),
        );
    }
    let mut missing = Vec::new();
    read(
        client,
        base,
        &headers,
        product.wanted(access),
        &mut files,
        &mut missing,
    )
    .await?;
    let more = product.then(&files);
    read(client, base, &headers, more, &mut files, &mut missing).await?;
    Ok((files, missing))
}

/// The one page a key reads.
async fn the_page(
    client: &Outgoing,
    url: &str,
    headers: &[(&str, String)],
) -> Result<String, Unread> {
    let pages = match list(client, url, headers, Paging::Numbered).await? {
        Ok(v) => v,
        Err(status) => {
            return Err(Unread::Missing(format!(
                "{url} answered {status}: is the key right?"
            )));
        }
    };
    let pages: Vec<&Value> = pages.as_array().into_iter().flatten().collect();
    match pages.as_slice() {
        [one] => Ok(upstate_store::transfer::text_of(&one["id"])),
        [] => Err(Unread::Missing("the key reads no page".into())),
        many => Err(Unread::Choose(format!(
            "the key reads {} pages: name one ({})",
            many.len(),
            many.iter()
                .map(|p| format!(
                    "{} {}",
                    upstate_store::transfer::text_of(&p["id"]),
                    upstate_store::transfer::text_of(&p["name"])
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

async fn read(
    client: &Outgoing,
    base: &str,
    headers: &[(&str, String)],
    wanted: Vec<Wanted>,
    files: &mut Files,
    missing: &mut Vec<String>,
) -> Result<(), String> {
    for w in wanted {
        let mut got = None;
        let mut why = String::new();
        for path in &w.paths {
            let url = format!("{base}{path}");
            match list(client, &url, headers, w.paging).await? {
                Ok(v) => {
                    got = Some(v);
                    break;
                }
                Err(status) => why = format!("{url} answered {status}"),
            }
        }
        match got {
            Some(v) => {
                let mut slot = files.remove(w.name);
                merge(&mut slot, v);
                if let Some(v) = slot {
                    files.insert(w.name.to_string(), v);
                }
            }
            None if w.required => return Err(format!("{}: {why}", w.name)),
            None => {
                let note = format!("{}: {why}", w.name);
                if !missing
                    .iter()
                    .any(|m: &String| m.starts_with(&format!("{}:", w.name)))
                {
                    missing.push(note);
                }
            }
        }
    }
    Ok(())
}

/// One file, every page of it: `Ok(Err(status))` when the first answer
/// is not 200 (the file is not there), `Err` when reading failed.
async fn list(
    client: &Outgoing,
    url: &str,
    headers: &[(&str, String)],
    paging: Paging,
) -> Result<Result<Value, u16>, String> {
    let mut headers = headers.to_vec();
    headers.push(("accept", "application/json".into()));
    let get = |url: String| {
        let headers = headers.clone();
        async move {
            let answer = client
                .read_whole(&url, &headers, ANSWER_MAX_BYTES)
                .await
                .map_err(|f| format!("cannot read {url}: {}", f.reason))?;
            if answer.status != 200 {
                return Ok(Err(answer.status));
            }
            serde_json::from_str::<Value>(&answer.body)
                .map(Ok)
                .map_err(|_| format!("{url} is not JSON: is this the right address?"))
        }
    };
    let join = |q: &str| {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}{q}")
    };
    match paging {
        Paging::None => get(url.to_string()).await,
        Paging::Numbered => {
            let mut all = None;
            for n in 1..=MAX_PAGES {
                let page = match get(join(&format!("page={n}&per_page={PER_PAGE}"))).await? {
                    Ok(v) => v,
                    Err(status) if n == 1 => return Ok(Err(status)),
                    Err(_) => break,
                };
                let short = items_in(&page) < PER_PAGE;
                merge(&mut all, page);
                if short {
                    break;
                }
            }
            Ok(all.ok_or(404))
        }
        Paging::Linked => {
            let mut all = None;
            let mut next = join(&format!("per_page={PER_PAGE}"));
            for _ in 0..MAX_PAGES {
                let page = match get(next.clone()).await? {
                    Ok(v) => v,
                    Err(status) if all.is_none() => return Ok(Err(status)),
                    Err(_) => break,
                };
                // The next page's query, asked of the address we were
                // given: Cachet builds its links from its own configured
                // address, which may not be the one it is reached at.
                let follow =
                    next_page(&page).and_then(|n| n.split_once('?').map(|(_, q)| q.to_string()));
                let empty = items_in(&page) == 0;
                merge(&mut all, page);
                match follow {
                    Some(q) if !empty => {
                        next = format!("{}?{q}", url.split('?').next().unwrap_or(url))
                    }
                    _ => break,
                }
            }
            Ok(all.ok_or(404))
        }
    }
}
