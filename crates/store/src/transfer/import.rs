//! Reading an export into an install, in one transaction: every row is
//! checked before the first is written, and any failure leaves the install
//! as it was.

use super::shape::{Kind, Shape};
use super::tables::{
    self, CARRIED, CREDENTIALS, HIDDEN, LOCAL_SETTINGS, PAGE_TABLES, SEALED, UNUSABLE, WITHHELD,
};
use super::{FORMAT, VERSION, invalid, reach, row_matches, shape, shapes};
use crate::db::{Db, Tx};
use crate::error::{StoreError, StoreResult};
use crate::writer::AuditCtx;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use upstate_core::audit::Action;
use upstate_core::events::Event;
use upstate_core::rules::Rule;

/// Where the document's records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Into an install with no pages yet: everything, ids kept. Accounts
    /// already there (the one importing) are matched by email.
    Empty,
    /// The document's pages (with all that belongs to them) beside the
    /// pages already there, under new ids; accounts, keys, channels and
    /// settings stay as they are.
    AddPages,
}

/// What an import brought.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    pub mode: Mode,
    /// Rows written, by table.
    pub rows: BTreeMap<String, usize>,
    /// Ids that differ from the document's, by table (`"old": new`).
    pub ids: BTreeMap<String, BTreeMap<String, i64>>,
    /// What the install has to do by hand, and what stayed out.
    pub notes: Vec<String>,
}

/// What an importer brings again of rows it brought before: where an
/// incident stands (a new update moved it on, the source resolved it), a
/// component's status, a window's status and times.
const REFRESHED: &[(&str, &[&str])] = &[
    (
        "incidents",
        &["title", "status", "impact", "updated_at", "resolved_at"],
    ),
    ("components", &["status"]),
    (
        "maintenance",
        &["title", "status", "scheduled_start", "scheduled_end"],
    ),
];

/// Capabilities of a page's rows that are unique across the install.
const FRESH_WHEN_TAKEN: &[(&str, &str)] = &[
    ("subscribers", "token"),
    ("subscribers", "confirm_token"),
    ("monitors", "heartbeat_token"),
];

/// Tables an install may already have rows in when it counts as empty.
const MAY_HOLD: &[&str] = &[
    "users",
    "recovery_codes",
    "settings",
    "api_keys",
    "vapid_keys",
];

/// Where a document made from another product's data came from: each
/// row's id in the document and in its source, so that the same source
/// imported again adds only what is new.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The importer (`statuspage`, …).
    pub kind: String,
    /// (table, id in the document, id in the source).
    pub sources: Vec<(&'static str, i64, String)>,
}

/// Checks `doc` and writes it into the install as `mode` says.
pub async fn import(db: &Db, ctx: &AuditCtx, doc: &Value, mode: Mode) -> StoreResult<Imported> {
    import_from(db, ctx, doc, mode, None).await
}

/// `import` of a document an importer made from `origin`: rows it brought
/// before are found by their source ids and left as they are.
pub async fn import_from(
    db: &Db,
    ctx: &AuditCtx,
    doc: &Value,
    mode: Mode,
    origin: Option<&Origin>,
) -> StoreResult<Imported> {
    let tables = envelope(db, doc).await?;
    let shapes = shapes(db).await?;
    let mut rows: Vec<(&Shape, Vec<Map<String, Value>>)> = Vec::new();
    let mut notes = Vec::new();
    for (name, _) in tables.iter() {
        if !CARRIED.contains(&name.as_str()) {
            return Err(invalid(
                format!("/tables/{name}"),
                "not a table of this export format",
            ));
        }
    }
    for shape in &shapes {
        let Some(list) = tables.get(shape.table) else {
            continue;
        };
        let path = format!("/tables/{}", shape.table);
        let list = list
            .as_array()
            .ok_or_else(|| invalid(path.clone(), "must be an array of rows"))?;
        let mut checked = Vec::with_capacity(list.len());
        for (i, row) in list.iter().enumerate() {
            checked.push(check_row(shape, row, &format!("{path}/{i}"))?);
        }
        check_unique(shape.table, &checked)?;
        if mode == Mode::AddPages && !PAGE_TABLES.contains(&shape.table) {
            if !checked.is_empty() {
                notes.push(format!(
                    "{}: {} rows left out (adding pages brings only what belongs to them)",
                    shape.table,
                    checked.len()
                ));
            }
            continue;
        }
        rows.push((shape, checked));
    }

    check_same_page(&rows)?;
    let mut tx = db.begin_as(ctx).await?;
    // Its history rows are written as rows, not through `record_history`.
    tx.rewrote_history();
    if mode == Mode::Empty {
        for table in CARRIED.iter().filter(|t| !MAY_HOLD.contains(t)) {
            let sql = format!("SELECT COUNT(*) FROM {table}");
            let n: i64 = on_tx!(&mut tx, |c| sqlx::query_scalar(
                // Names from the fixed list of tables.
                sqlx::AssertSqlSafe(sql.as_str())
            )
            .fetch_one(c)
            .await?);
            if n > 0 {
                return Err(StoreError::Conflict(format!(
                    "this install already holds {table} ({n} rows): import into an empty install, or add the document's pages with mode=add_pages"
                )));
            }
        }
    }
    // What this importer brought before: read once, matched in memory.
    let mut known: HashMap<&'static str, HashMap<i64, i64>> = HashMap::new();
    if let Some(origin) = origin {
        let sql = "SELECT target_table, source_id, local_id FROM import_sources WHERE kind = $1";
        let before: Vec<(String, String, i64)> = on_tx!(&mut tx, |c| sqlx::query_as(sql)
            .bind(&origin.kind)
            .fetch_all(c)
            .await?);
        let before: HashMap<(&str, &str), i64> = before
            .iter()
            .map(|(t, s, l)| ((t.as_str(), s.as_str()), *l))
            .collect();
        for (table, doc_id, source_id) in &origin.sources {
            if let Some(local) = before.get(&(*table, source_id.as_str())) {
                known.entry(*table).or_default().insert(*doc_id, *local);
            }
        }
    }
    // Another product's page takes the slug it had there, unless a page
    // here has it: then the first free `slug-2`, `slug-3`, … (said).
    if origin.is_some() {
        for (shape, list) in rows.iter_mut() {
            if shape.table != "status_pages" {
                continue;
            }
            for row in list.iter_mut() {
                let doc_id = row.get("id").and_then(Value::as_i64).unwrap_or(0);
                if known
                    .get("status_pages")
                    .is_some_and(|k| k.contains_key(&doc_id))
                {
                    continue;
                }
                let Some(slug) = row.get("slug").and_then(Value::as_str).map(str::to_string) else {
                    continue;
                };
                let mut free = slug.clone();
                for n in 2.. {
                    let taken: Option<i64> = on_tx!(&mut tx, |c| sqlx::query_scalar(
                        "SELECT id FROM status_pages WHERE slug = $1"
                    )
                    .bind(&free)
                    .fetch_optional(c)
                    .await?);
                    if taken.is_none() {
                        break;
                    }
                    free = format!("{slug}-{n}");
                }
                if free != slug {
                    notes.push(format!(
                        "status_pages: a page here has the address /s/{slug}; the one brought is at /s/{free}"
                    ));
                    row.insert("slug".into(), Value::String(free));
                }
            }
        }
    }
    let mut load = Load {
        mode,
        ids: known.clone(),
        known,
        moved: BTreeMap::new(),
        matched_users: HashSet::new(),
        explicit: HashSet::new(),
        second_factor_off: 0,
        withheld: Default::default(),
        refreshed: BTreeMap::new(),
        touched: Default::default(),
    };
    let mut written = BTreeMap::new();
    let mut pages = Vec::new();
    for (shape, list) in rows {
        let mut n = 0;
        for (i, row) in list.into_iter().enumerate() {
            let path = format!("/tables/{}/{i}", shape.table);
            if let Some(new) = load.row(db, &mut tx, shape, row, &path, &mut notes).await? {
                n += 1;
                if shape.table == "status_pages" {
                    pages.push(new);
                }
            }
        }
        written.insert(shape.table.to_string(), n);
    }
    if load.second_factor_off > 0 {
        notes.push(format!(
            "users.totp_secret was withheld: the second factor of {} users is off until they set it up again",
            load.second_factor_off
        ));
    }
    for what in &load.withheld {
        notes.push(format!("{what} were withheld: enter them again"));
    }
    for (table, column) in CREDENTIALS {
        if written.get(*table).is_some_and(|n| *n > 0)
            && doc_withheld(doc).contains(&format!("{table}.{column}"))
        {
            notes.push(format!(
                "{table}.{column} was withheld: those passwords or keys must be set again"
            ));
        }
    }
    if let Some(origin) = origin {
        let now = db.clock.now().millis();
        for (table, doc_id, source_id) in &origin.sources {
            let Some(local) = load.lookup(table, *doc_id) else {
                continue;
            };
            let sql = "INSERT INTO import_sources (kind, target_table, source_id, local_id, imported_at) \
                       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING";
            on_tx!(&mut tx, |c| sqlx::query(sql)
                .bind(&origin.kind)
                .bind(*table)
                .bind(source_id)
                .bind(local)
                .bind(now)
                .execute(c)
                .await?
                .rows_affected());
        }
    }
    for (table, n) in &load.refreshed {
        notes.push(format!(
            "{table}: {n} brought before, updated to what the source says now"
        ));
    }
    load.advance_sequences(&mut tx).await?;
    for page in load.touched.iter().filter(|p| !pages.contains(p)) {
        tx.record_unstamped(Event::PageUpdated { page: *page })
            .await?;
    }
    for page in &pages {
        tx.record_unstamped(Event::PageUpdated { page: *page })
            .await?;
    }
    let audited = tx
        .audit(
            Action::InstallImport,
            "install",
            None,
            json!({ "mode": mode, "rows": written }),
        )
        .await?;
    tx.commit(audited).await?;
    // Settings, keys and accounts changed under every cache of this process.
    db.changes.bump_all();
    // The rows are in; the planner's picture of the tables is not, and a
    // failure to update it takes nothing from the import.
    if let Err(e) = db.refresh_statistics().await {
        tracing::warn!(error = %e, "the tables' statistics were not updated after the import");
    }
    Ok(Imported {
        mode,
        rows: written,
        ids: load.moved,
        notes,
    })
}

fn doc_withheld(doc: &Value) -> Vec<String> {
    doc.get("withheld")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The envelope's fields, checked; answers the `tables` object.
async fn envelope<'a>(db: &Db, doc: &'a Value) -> StoreResult<&'a Map<String, Value>> {
    let obj = doc
        .as_object()
        .ok_or_else(|| invalid("/".into(), "must be a JSON object (an Upstate export)"))?;
    // Another product's file, taken for ours: said, with where it goes.
    if obj.contains_key("page") && obj.contains_key("components") && !obj.contains_key("format") {
        return Err(invalid(
            "/page".into(),
            "this is a Statuspage summary.json, not an Upstate export: bring the page with Settings → \
             Move in and out → From Atlassian Statuspage (its address), or `upstate import --from \
             statuspage FILE`",
        ));
    }
    if obj.contains_key("monitorList") && !obj.contains_key("format") {
        return Err(invalid(
            "/monitorList".into(),
            "this is an Uptime Kuma backup, not an Upstate export: choose Uptime Kuma under What it \
             is, or run `upstate import --from uptime-kuma FILE`",
        ));
    }
    for key in obj.keys() {
        if !matches!(
            key.as_str(),
            "format" | "version" | "exportedAt" | "schema" | "withheld" | "tables"
        ) {
            return Err(invalid(
                format!("/{key}"),
                "not a field of an Upstate export",
            ));
        }
    }
    if obj.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(invalid(
            "/format".into(),
            format!("must be \"{FORMAT}\": this is not an Upstate export"),
        ));
    }
    if obj.get("version").and_then(Value::as_i64) != Some(VERSION) {
        return Err(invalid(
            "/version".into(),
            format!("must be {VERSION}, the version this Upstate reads"),
        ));
    }
    let ours = shape::schema_version(db).await?;
    match obj.get("schema").and_then(Value::as_i64) {
        Some(s) if s <= ours => {}
        Some(s) => {
            return Err(invalid(
                "/schema".into(),
                format!(
                    "written by a newer Upstate (schema {s}; this one has {ours}): upgrade first"
                ),
            ));
        }
        None => return Err(invalid("/schema".into(), "must be an integer")),
    }
    if let Some(w) = obj.get("withheld")
        && !w.as_array().is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err(invalid("/withheld".into(), "must be an array of strings"));
    }
    obj.get("tables")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("/tables".into(), "must be an object of tables"))
}

/// One row, checked against its table: known columns, the right kinds, no
/// empty value where none may be, enumerations by their values.
fn check_row(shape: &Shape, row: &Value, path: &str) -> StoreResult<Map<String, Value>> {
    let obj = row
        .as_object()
        .ok_or_else(|| invalid(path.into(), "must be an object"))?;
    for (key, value) in obj {
        let at = format!("{path}/{key}");
        let Some(c) = shape.column(key) else {
            return Err(invalid(at, format!("{} has no column {key}", shape.table)));
        };
        if value.is_null() {
            if !c.nullable {
                return Err(invalid(at, "must not be null"));
            }
            continue;
        }
        let fits = match c.kind {
            Kind::Int => value.as_i64().is_some(),
            Kind::Int4 => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
            Kind::Bool => value.is_boolean(),
            Kind::Text => value.is_string(),
        };
        if !fits {
            let want = match c.kind {
                Kind::Int => "an integer",
                Kind::Int4 => "an integer of 32 bits",
                Kind::Bool => "true or false",
                Kind::Text => "a string",
            };
            return Err(invalid(at, format!("must be {want}")));
        }
        if let Some(allowed) = tables::allowed(shape.table, key)
            && let Some(text) = value.as_str()
            && !allowed.contains(&text)
        {
            return Err(invalid(
                at,
                format!("must be one of: {}", allowed.join(", ")),
            ));
        }
    }
    for c in &shape.columns {
        if !c.nullable && !c.has_default && !obj.contains_key(&c.name) {
            return Err(invalid(format!("{path}/{}", c.name), "is missing"));
        }
    }
    let mut row = obj.clone();
    // The entity's own rules, as the API applies them to the field that
    // fills the column; the value stored is the one the rule gives (a
    // colour lowercased, line ends folded), as the API would store it.
    for (key, value) in row.iter_mut() {
        let ruled = match (upstate_core::rules::of(shape.table, key), &*value) {
            (Some(Rule::Text(rule)), Value::String(text)) => rule(text).map(Value::String),
            (Some(Rule::Number(rule)), Value::Number(n)) => n
                .as_i64()
                .ok_or_else(|| "must be an integer".to_string())
                .and_then(rule)
                .map(Value::from),
            _ => continue,
        };
        *value = ruled.map_err(|why| invalid(format!("{path}/{key}"), why))?;
    }
    Ok(row)
}

/// Rows of one table that repeat an id, or a value the install keeps
/// unique: refused at the second row, before anything is written (the
/// second page would otherwise take a new id and the first page's
/// components with it).
fn check_unique(table: &str, rows: &[Map<String, Value>]) -> StoreResult<()> {
    let unique = upstate_core::rules::UNIQUE
        .iter()
        .filter(|(t, _)| *t == table)
        .map(|(_, c)| *c);
    for column in std::iter::once("id").chain(unique) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, row) in rows.iter().enumerate() {
            let Some(value) = row.get(column).filter(|v| !v.is_null()) else {
                continue;
            };
            if let Some(first) = seen.insert(value.to_string(), i) {
                return Err(invalid(
                    format!("/tables/{table}/{i}/{column}"),
                    format!("repeats the {column} of /tables/{table}/{first}"),
                ));
            }
        }
    }
    Ok(())
}

type SamePage<'a> = (
    &'a str,
    &'a str,
    &'a HashMap<i64, i64>,
    &'a str,
    &'a HashMap<i64, i64>,
);

/// A component's group, and the components of an incident or a window,
/// are on the component's own page: a reference across pages is refused,
/// as the API refuses it.
fn check_same_page(rows: &[(&Shape, Vec<Map<String, Value>>)]) -> StoreResult<()> {
    let int = |row: &Map<String, Value>, c: &str| row.get(c).and_then(Value::as_i64);
    let pages_of = |table: &str| -> HashMap<i64, i64> {
        rows.iter()
            .filter(|(s, _)| s.table == table)
            .flat_map(|(_, list)| list.iter())
            .filter_map(|r| Some((int(r, "id")?, int(r, "page_id")?)))
            .collect()
    };
    // Pages the document does not hold are the reference checks' to name.
    let pages: HashSet<i64> = rows
        .iter()
        .filter(|(s, _)| s.table == "status_pages")
        .flat_map(|(_, list)| list.iter())
        .filter_map(|r| int(r, "id"))
        .collect();
    let groups = pages_of("component_groups");
    let components = pages_of("components");
    let incidents = pages_of("incidents");
    let windows = pages_of("maintenance");
    // (table, column naming the referenced row, its pages, column naming
    // the owning row, their pages)
    let checks: [SamePage; 3] = [
        ("components", "group_id", &groups, "id", &components),
        (
            "incident_components",
            "component_id",
            &components,
            "incident_id",
            &incidents,
        ),
        (
            "maintenance_components",
            "component_id",
            &components,
            "maintenance_id",
            &windows,
        ),
    ];
    for (table, reference, referenced, owner, owners) in checks {
        for (shape, list) in rows.iter().filter(|(s, _)| s.table == table) {
            for (i, row) in list.iter().enumerate() {
                let (Some(to), Some(of)) = (int(row, reference), int(row, owner)) else {
                    continue;
                };
                if let (Some(a), Some(b)) = (referenced.get(&to), owners.get(&of))
                    && a != b
                    && pages.contains(a)
                    && pages.contains(b)
                {
                    return Err(invalid(
                        format!("/tables/{}/{i}/{reference}", shape.table),
                        "belongs to another page",
                    ));
                }
            }
        }
    }
    Ok(())
}

struct Load {
    mode: Mode,
    /// Document id → install id, by table.
    ids: HashMap<&'static str, HashMap<i64, i64>>,
    /// Rows an importer brought before: mapped, not written again.
    known: HashMap<&'static str, HashMap<i64, i64>>,
    /// The same, where they differ, for the answer.
    moved: BTreeMap<String, BTreeMap<String, i64>>,
    /// Accounts of the document that are accounts already here.
    matched_users: HashSet<i64>,
    /// Tables written with the document's ids (their sequences advance).
    explicit: HashSet<&'static str>,
    second_factor_off: usize,
    /// What sealed values the document withheld.
    withheld: std::collections::BTreeSet<String>,
    /// Rows brought before and changed at the source since, by table.
    refreshed: BTreeMap<&'static str, usize>,
    /// Pages whose rows were brought up to date.
    touched: std::collections::BTreeSet<i64>,
}

impl Load {
    fn map(&mut self, table: &'static str, old: i64, new: i64) {
        self.ids.entry(table).or_default().insert(old, new);
        if old != new {
            self.moved
                .entry(table.to_string())
                .or_default()
                .insert(old.to_string(), new);
        }
    }

    fn lookup(&self, table: &str, old: i64) -> Option<i64> {
        self.ids.get(table).and_then(|m| m.get(&old)).copied()
    }

    /// Writes one row; answers its id in the install (numbered tables) or
    /// 0, and `None` when the row was not written.
    async fn row(
        &mut self,
        db: &Db,
        tx: &mut Tx,
        shape: &Shape,
        mut row: Map<String, Value>,
        path: &str,
        notes: &mut Vec<String>,
    ) -> StoreResult<Option<i64>> {
        let table = shape.table;
        if table == "settings"
            && row
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| LOCAL_SETTINGS.contains(&n))
        {
            return Ok(None);
        }
        if table == "vapid_keys" && row.get("private_key").and_then(Value::as_str) == Some(WITHHELD)
        {
            notes.push(
                "vapid_keys: the push key was withheld; push subscribers must subscribe again"
                    .into(),
            );
            return Ok(None);
        }
        if table == "recovery_codes"
            && row
                .get("user_id")
                .and_then(Value::as_i64)
                .is_some_and(|u| self.matched_users.contains(&u))
        {
            return Ok(None);
        }
        if shape.numbered()
            && let Some(old) = row.get("id").and_then(Value::as_i64)
            && let Some(local) = self.known.get(table).and_then(|k| k.get(&old)).copied()
        {
            // Brought before: what the source says of it now (a status, a
            // resolution) is carried; the rest stays as it is here.
            if let Some((_, columns)) = REFRESHED.iter().find(|(t, _)| *t == table)
                && refresh(tx, shape, local, &row, columns, path).await?
            {
                *self.refreshed.entry(table).or_insert(0) += 1;
                if let Some(page) = row
                    .get("page_id")
                    .and_then(Value::as_i64)
                    .and_then(|p| self.lookup("status_pages", p))
                {
                    self.touched.insert(page);
                }
            }
            return Ok(None);
        }
        // References: to what the install calls the same rows.
        for c in &shape.columns {
            let Some(to) = &c.references else { continue };
            let Some(old) = row.get(&c.name).and_then(Value::as_i64) else {
                continue;
            };
            let new = self.lookup(to, old).ok_or_else(|| {
                invalid(
                    format!("{path}/{}", c.name),
                    format!("refers to {to} {old}, which the document does not hold"),
                )
            })?;
            row.insert(c.name.clone(), Value::from(new));
        }
        for h in HIDDEN.iter().filter(|h| h.table == table) {
            let Some(cell) = row.get(h.column).cloned() else {
                continue;
            };
            if h.list {
                let Some(ids) = cell
                    .as_str()
                    .and_then(|t| serde_json::from_str::<Vec<i64>>(t).ok())
                else {
                    return Err(invalid(
                        format!("{path}/{}", h.column),
                        "must be a JSON array of ids, as text",
                    ));
                };
                let kept: Vec<i64> = ids.iter().filter_map(|id| self.lookup(h.to, *id)).collect();
                row.insert(h.column.into(), Value::String(json!(kept).to_string()));
            } else if let Some(old) = cell.as_i64() {
                // Nothing keeps these in step in the source either: a page
                // or incident deleted since leaves nothing to point at.
                row.insert(
                    h.column.into(),
                    self.lookup(h.to, old).map_or(Value::Null, Value::from),
                );
            }
        }
        // Secrets: sealed with this install's key, or filled in where the
        // export withheld them.
        for s in SEALED.iter().filter(|s| s.table == table) {
            if !row_matches(&row, s.row) {
                continue;
            }
            let mut fail = None;
            let mut withheld = false;
            reach(&mut row, s.column, s.pointer, &mut |v: &mut Value| {
                let Some(plain) = v.as_str() else { return };
                if plain == WITHHELD {
                    withheld = true;
                    *v = if s.pointer.is_empty() {
                        Value::Null
                    } else {
                        Value::String(String::new())
                    };
                    return;
                }
                match db.keys.seal(s.purpose, plain) {
                    Ok(sealed) => *v = Value::String(sealed),
                    Err(e) => fail = Some(e),
                }
            });
            if let Some(e) = fail {
                return Err(e);
            }
            if withheld && table == "users" && s.column == "totp_secret" {
                row.insert("totp_enabled".into(), Value::Bool(false));
                self.second_factor_off += 1;
            } else if withheld {
                self.withheld.insert(s.what.to_string());
            }
        }
        for (t, column) in CREDENTIALS {
            if *t == table && row.get(*column).and_then(Value::as_str) == Some(WITHHELD) {
                row.insert((*column).into(), Value::String(UNUSABLE.into()));
            }
        }
        // Accounts already here are the same people.
        if table == "users"
            && let Some(old) = row.get("id").and_then(Value::as_i64)
            && let Some(email) = row.get("email").and_then(Value::as_str)
        {
            let sql = "SELECT id FROM users WHERE lower(email) = lower($1)";
            let found: Option<i64> = on_tx!(tx, |c| sqlx::query_scalar(sql)
                .bind(email)
                .fetch_optional(c)
                .await?);
            if let Some(id) = found {
                self.matched_users.insert(old);
                self.map("users", old, id);
                return Ok(None);
            }
        }
        // Pages added beside others may come from this very install (a copy
        // of a page): a capability another row here already holds gets a
        // new one, as a new subscription or monitor would.
        if self.mode == Mode::AddPages {
            for (t, column) in FRESH_WHEN_TAKEN.iter().filter(|(t, _)| *t == table) {
                let Some(value) = row.get(*column).and_then(Value::as_str).map(str::to_string)
                else {
                    continue;
                };
                let sql = format!("SELECT COUNT(*) FROM {t} WHERE {column} = $1");
                let taken: i64 = on_tx!(tx, |c| sqlx::query_scalar(
                    // Names from the fixed list above.
                    sqlx::AssertSqlSafe(sql.as_str())
                )
                .bind(&value)
                .fetch_one(c)
                .await?);
                if taken > 0 {
                    row.insert((*column).into(), Value::String(crate::subscribers::token()));
                    let note = format!(
                        "{t}.{column}: taken here already, so the rows brought have new ones (their old links and senders must use the new ones)"
                    );
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
        }
        let old_id = if shape.numbered() {
            row.remove("id").and_then(|v| v.as_i64())
        } else {
            None
        };
        let keep = self.mode == Mode::Empty && old_id.is_some();
        let mut new_id = None;
        if keep && let Some(id) = old_id {
            let mut with_id = row.clone();
            with_id.insert("id".into(), Value::from(id));
            new_id = insert(
                tx,
                shape,
                &with_id,
                " ON CONFLICT DO NOTHING RETURNING id",
                path,
            )
            .await?;
            if new_id.is_some() {
                self.explicit.insert(table);
            }
        }
        if new_id.is_none() {
            let tail = if shape.numbered() {
                " RETURNING id"
            } else {
                match table {
                    "settings" => {
                        " ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
                    }
                    "vapid_keys" => {
                        " ON CONFLICT (id) DO UPDATE SET private_key = excluded.private_key, \
                         public_key = excluded.public_key, created_at = excluded.created_at"
                    }
                    // A link between rows an importer brought before:
                    // answers a row only when it is new.
                    _ if !self.known.is_empty() => {
                        " ON CONFLICT DO NOTHING RETURNING CAST(0 AS BIGINT)"
                    }
                    _ => "",
                }
            };
            new_id = insert(tx, shape, &row, tail, path).await?;
            if new_id.is_none() && tail.contains("DO NOTHING") {
                return Ok(None);
            }
        }
        let new = new_id.unwrap_or(0);
        if let Some(old) = old_id {
            self.map(table, old, new);
        }
        Ok(Some(new))
    }

    /// PostgreSQL's identity columns do not notice ids written explicitly:
    /// each table written so goes on from its highest id.
    async fn advance_sequences(&self, tx: &mut Tx) -> StoreResult<()> {
        if !matches!(tx.inner, crate::db::TxInner::Postgres(..)) {
            return Ok(());
        }
        for table in &self.explicit {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), \
                 (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
            );
            on_tx!(tx, |c| {
                sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .execute(c)
                    .await?;
            });
        }
        Ok(())
    }
}

/// `INSERT` of one checked row; answers the id `tail`'s `RETURNING` gave.
/// Sets `columns` of row `local` to `row`'s values; true when any differed.
async fn refresh(
    tx: &mut Tx,
    shape: &Shape,
    local: i64,
    row: &Map<String, Value>,
    columns: &[&str],
    path: &str,
) -> StoreResult<bool> {
    let columns: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| row.contains_key(*c) && shape.column(c).is_some())
        .collect();
    if columns.is_empty() {
        return Ok(false);
    }
    let set: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ${}", i + 1))
        .collect();
    let differs: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} IS DISTINCT FROM ${}", i + 1))
        .collect();
    let sql = format!(
        "UPDATE {} SET {} WHERE id = ${} AND ({}) RETURNING id",
        shape.table,
        set.join(", "),
        columns.len() + 1,
        differs.join(" OR ")
    );
    let changed = run_row(tx, shape, &sql, row, &columns, Some(local), path).await?;
    Ok(changed.is_some())
}

async fn insert(
    tx: &mut Tx,
    shape: &Shape,
    row: &Map<String, Value>,
    tail: &str,
    path: &str,
) -> StoreResult<Option<i64>> {
    let columns: Vec<&str> = shape
        .columns
        .iter()
        .filter(|c| row.contains_key(&c.name))
        .map(|c| c.name.as_str())
        .collect();
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({}){tail}",
        shape.table,
        columns.join(", "),
        marks.join(", ")
    );
    run_row(tx, shape, &sql, row, &columns, None, path).await
}

/// Runs `sql` with `columns` of `row` bound in order (then `last`, if
/// any), as their kinds say; a refusal of the database names the row.
async fn run_row(
    tx: &mut Tx,
    shape: &Shape,
    sql: &str,
    row: &Map<String, Value>,
    columns: &[&str],
    last: Option<i64>,
    path: &str,
) -> StoreResult<Option<i64>> {
    let result: Result<Option<i64>, sqlx::Error> = on_tx!(tx, |c| {
        // Table and column names come from the database's own catalog.
        let mut q = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql));
        for name in columns {
            let Some(col) = shape.column(name) else {
                continue;
            };
            let v = row.get(*name).unwrap_or(&Value::Null);
            q = match col.kind {
                Kind::Int => q.bind(v.as_i64()),
                Kind::Int4 => q.bind(v.as_i64().and_then(|n| i32::try_from(n).ok())),
                Kind::Bool => q.bind(v.as_bool()),
                Kind::Text => q.bind(v.as_str().map(String::from)),
            };
        }
        if let Some(last) = last {
            q = q.bind(last);
        }
        q.fetch_optional(c).await
    });
    result.map_err(|e| match e {
        sqlx::Error::Database(d) => invalid(
            path.into(),
            format!("the database refused this row: {}", d.message()),
        ),
        other => StoreError::Database(other),
    })
}
