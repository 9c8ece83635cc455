//! The status page products people leave, each read as a set of named
//! JSON files: where each file is under the product's address (so the
//! jobs crate can fetch them with the guarded client) or in a folder of
//! saved answers (so the CLI can read them), and the translation of those
//! files into an export document for `import_from`.
//!
//! One description serves both readers, so a folder of saved answers and
//! a live fetch give the importer the same input.

use super::import::Origin;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use upstate_core::Timestamp;

/// The files read from one source, by name (`components.json`).
pub type Files = BTreeMap<String, Value>;

/// The entry of `Files` holding the id of the page read, when the product's
/// API was asked for one page (given, or the one a key reads).
pub const PAGE_ID_FILE: &str = "page-id";

/// A document ready for `import_from`, where it came from, and what stayed
/// out.
#[derive(Debug)]
pub struct Translated {
    pub doc: Value,
    pub origin: Origin,
    pub left_out: Vec<String>,
}

/// A product Upstate imports pages from over HTTP or from saved files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    /// Atlassian Statuspage: the public v2 JSON of a page, or its
    /// management API with a key (subscribers too).
    Statuspage,
    /// Instatus: its REST API, with a key.
    Instatus,
    /// Cachet 2 (`/api/v1`) or Cachet 3 (`/api`).
    Cachet,
}

/// What opens a product's API: the key and the page it reads.
#[derive(Debug, Clone)]
pub struct Access {
    pub key: String,
    pub page: String,
}

/// How a list continues past its first answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// One answer holds everything.
    None,
    /// `?page=N&per_page=100` until an answer holds fewer than 100 items
    /// (Statuspage's and Instatus's APIs answer bare arrays).
    Numbered,
    /// Laravel's paginator (Cachet): `?per_page=100`, then the next page's
    /// address the answer names.
    Linked,
}

/// One file an importer reads.
#[derive(Debug, Clone)]
pub struct Wanted {
    /// Its name in a folder of saved answers.
    pub name: &'static str,
    /// Where it is under the source's address, tried in order (a product
    /// that moved its API between versions has several).
    pub paths: Vec<String>,
    /// Without it there is nothing to import.
    pub required: bool,
    pub paging: Paging,
}

/// The largest number of pages of one list read (100 items each).
pub const MAX_PAGES: usize = 200;

impl Product {
    pub const ALL: [Product; 3] = [Product::Statuspage, Product::Instatus, Product::Cachet];

    pub fn parse(name: &str) -> Option<Product> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The name used in routes, the CLI and `import_sources.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Product::Statuspage => "statuspage",
            Product::Instatus => "instatus",
            Product::Cachet => "cachet",
        }
    }

    /// The product's name, for people.
    pub fn title(self) -> &'static str {
        match self {
            Product::Statuspage => "Statuspage",
            Product::Instatus => "Instatus",
            Product::Cachet => "Cachet",
        }
    }

    /// Whether reading it needs a key.
    pub fn needs_access(self) -> bool {
        self == Product::Instatus
    }

    /// Where the API lists the pages a key reads, for a key given without
    /// a page.
    pub fn pages_path(self) -> Option<&'static str> {
        match self {
            Product::Statuspage => Some("/pages"),
            Product::Instatus => Some("/v2/pages"),
            Product::Cachet => None,
        }
    }

    /// The files to read, given the access (if any).
    pub fn wanted(self, access: Option<&Access>) -> Vec<Wanted> {
        let one = |name, path: String, required, paging| Wanted {
            name,
            paths: vec![path],
            required,
            paging,
        };
        match (self, access) {
            (Product::Statuspage, None) => super::statuspage::FILES
                .iter()
                .enumerate()
                .map(|(i, f)| one(f, format!("/api/v2/{f}"), i == 0, Paging::None))
                .collect(),
            (Product::Statuspage, Some(a)) => {
                let page = format!("/pages/{}", a.page);
                vec![
                    one("page.json", page.clone(), true, Paging::None),
                    one(
                        "components.json",
                        format!("{page}/components"),
                        true,
                        Paging::Numbered,
                    ),
                    one(
                        "all-incidents.json",
                        format!("{page}/incidents"),
                        false,
                        Paging::Numbered,
                    ),
                    one(
                        "subscribers.json",
                        format!("{page}/subscribers"),
                        false,
                        Paging::Numbered,
                    ),
                ]
            }
            (Product::Instatus, a) => {
                let page = a.map(|a| a.page.as_str()).unwrap_or_default();
                vec![
                    one("pages.json", "/v2/pages".into(), false, Paging::Numbered),
                    one(
                        "components.json",
                        format!("/v2/{page}/components"),
                        true,
                        Paging::Numbered,
                    ),
                    one(
                        "incidents.json",
                        format!("/v1/{page}/incidents"),
                        false,
                        Paging::Numbered,
                    ),
                    one(
                        "maintenances.json",
                        format!("/v1/{page}/maintenances"),
                        false,
                        Paging::Numbered,
                    ),
                ]
            }
            (Product::Cachet, _) => {
                let both = |name, v2: &str, v3: &str, required| Wanted {
                    name,
                    paths: vec![format!("/api/v1/{v2}"), format!("/api/{v3}")],
                    required,
                    paging: Paging::Linked,
                };
                vec![
                    both("components.json", "components", "components", true),
                    both(
                        "component-groups.json",
                        "components/groups",
                        "component-groups",
                        false,
                    ),
                    both("incidents.json", "incidents", "incidents", false),
                    both("schedules.json", "schedules", "schedules", false),
                ]
            }
        }
    }

    /// Files that can only be named once the first ones are read: the
    /// updates of each of Cachet's incidents, which its API lists apart.
    /// Every entry has the same name; the fetcher puts their lists together.
    pub fn then(self, files: &Files) -> Vec<Wanted> {
        if self != Product::Cachet {
            return Vec::new();
        }
        super::cachet::items(files.get("incidents.json"))
            .iter()
            .filter(|i| super::cachet::embedded_updates(i).is_none())
            .map(super::cachet::id)
            .filter(|id| !id.is_empty())
            .map(|id| Wanted {
                name: "incident-updates.json",
                paths: vec![
                    format!("/api/v1/incidents/{id}/updates"),
                    format!("/api/incidents/{id}/updates"),
                ],
                required: false,
                paging: Paging::Linked,
            })
            .collect()
    }

    /// The headers that carry the key, if any.
    pub fn headers(self, access: Option<&Access>) -> Vec<(&'static str, String)> {
        let Some(a) = access else {
            return Vec::new();
        };
        match self {
            Product::Statuspage => vec![("authorization", format!("OAuth {}", a.key))],
            Product::Instatus => vec![("authorization", format!("Bearer {}", a.key))],
            Product::Cachet => vec![("x-cachet-token", a.key.clone())],
        }
    }

    /// Every file name a folder of saved answers may hold.
    pub fn folder_files(self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .wanted(None)
            .into_iter()
            .chain(self.wanted(Some(&Access {
                key: String::new(),
                page: String::new(),
            })))
            .map(|w| w.name)
            .collect();
        if self == Product::Cachet {
            names.push("incident-updates.json");
        }
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The files as one export document of one page. `now` stamps what
    /// has no time of its own.
    pub fn translate(
        self,
        files: &Files,
        schema: i64,
        now: Timestamp,
    ) -> Result<Translated, String> {
        match self {
            Product::Statuspage => super::statuspage::translate_files(files, schema, now),
            Product::Instatus => super::instatus::translate(files, schema, now),
            Product::Cachet => super::cachet::translate(files, schema, now),
        }
    }
}

/// Puts together the pages of one list (or the lists of several files of
/// the same name): bare arrays, or Laravel's `{data: [...]}`.
pub fn merge(into: &mut Option<Value>, more: Value) {
    let Some(have) = into else {
        *into = Some(more);
        return;
    };
    let items = |v: Value| match v {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("data") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let more = items(more);
    match have {
        Value::Array(a) => a.extend(more),
        Value::Object(o) => {
            if let Some(Value::Array(a)) = o.get_mut("data") {
                a.extend(more);
            }
        }
        _ => {}
    }
}

/// How many items one answer of a list holds.
pub fn count(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.len(),
        Value::Object(o) => o.get("data").and_then(Value::as_array).map_or(0, Vec::len),
        _ => 0,
    }
}

/// The next page's address in a Laravel answer (Cachet 2 and 3 name it in
/// different places).
pub fn next_page(v: &Value) -> Option<String> {
    [
        "/meta/pagination/links/next_page",
        "/links/next",
        "/meta/next_page_url",
        "/next_page_url",
    ]
    .iter()
    .find_map(|p| v.pointer(p).and_then(Value::as_str))
    .filter(|s| !s.is_empty())
    .map(str::to_string)
}

/// Text of a string or number.
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// Milliseconds of an RFC 3339 time, or of Cachet 2's `2015-08-01 12:00:00`
/// (read as UTC, the zone Cachet stores in by default).
pub(crate) fn millis(v: &Value) -> Option<i64> {
    let s = v.as_str()?;
    if let Ok(t) = Timestamp::parse(s) {
        return Some(t.millis());
    }
    let civil: jiff::civil::DateTime = s.trim().replace(' ', "T").parse().ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp().as_millisecond())
}

/// A slug from a page's name: lower-case letters, digits and dashes.
pub(crate) fn slug_of(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out
        .trim_end_matches('-')
        .chars()
        .take(60)
        .collect::<String>();
    if out.is_empty() {
        "imported".into()
    } else {
        out
    }
}

/// Numbers rows of the document and remembers each one's source id.
pub(crate) struct Ids {
    next: HashMap<&'static str, i64>,
    by_source: HashMap<(&'static str, String), i64>,
    pub origin: Origin,
}

impl Ids {
    pub fn new(kind: &str) -> Ids {
        Ids {
            next: HashMap::new(),
            by_source: HashMap::new(),
            origin: Origin {
                kind: kind.into(),
                sources: Vec::new(),
            },
        }
    }

    pub fn give(&mut self, table: &'static str, source: &str) -> i64 {
        if let Some(id) = self.by_source.get(&(table, source.to_string())) {
            return *id;
        }
        let n = self.next.entry(table).or_insert(0);
        *n += 1;
        self.by_source.insert((table, source.to_string()), *n);
        self.origin.sources.push((table, *n, source.to_string()));
        *n
    }

    pub fn of(&self, table: &'static str, source: &str) -> Option<i64> {
        self.by_source.get(&(table, source.to_string())).copied()
    }
}

/// A status change a source tells of: when, to what, and a name for it
/// that stays the same when the source is read again.
pub(crate) type Move = (i64, &'static str, String);

/// One component's history as a source tells it: operational from its
/// start (or from its first move, if earlier), each move in order, then
/// where it is now if the moves did not end there. Rows are named
/// `{source}:start`, `{source}:{move}` and `{source}:now:{status}`, so that
/// an import run again finds them.
pub(crate) fn history(
    ids: &mut Ids,
    tables: &mut Map<String, Value>,
    component: i64,
    source: &str,
    created: i64,
    moves: &[Move],
    (status, at): (&str, i64),
) {
    let mut row = |ids: &mut Ids, name: String, to: &str, when: i64| {
        let id = ids.give("component_status_history", &name);
        super::push_row(
            tables,
            "component_status_history",
            json!({"id": id, "component_id": component, "status": to, "changed_at": when}),
        );
    };
    let first = moves.first().map_or(created, |m| m.0.min(created));
    row(ids, format!("{source}:start"), "operational", first);
    let mut last = "operational";
    for (when, to, name) in moves {
        row(ids, format!("{source}:{name}"), to, *when);
        last = to;
    }
    if last != status {
        row(ids, format!("{source}:now:{status}"), status, at.max(first));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cachet_times_read_as_utc() {
        assert_eq!(
            millis(&json!("2015-08-01 12:00:00")),
            millis(&json!("2015-08-01T12:00:00Z"))
        );
        assert_eq!(millis(&json!("yesterday")), None);
    }

    #[test]
    fn lists_join_across_pages() {
        let mut all = None;
        merge(&mut all, json!({"data": [1, 2], "meta": {}}));
        merge(&mut all, json!({"data": [3]}));
        assert_eq!(all.map(|a| a["data"].clone()), Some(json!([1, 2, 3])));
        let mut all = None;
        merge(&mut all, json!([1]));
        merge(&mut all, json!([2]));
        assert_eq!(all, Some(json!([1, 2])));
    }
}
