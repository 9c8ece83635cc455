//! The whole install as one JSON document, and back: `GET`/`POST
//! /api/admin/export`, `upstate export` and `upstate import`.
//!
//! The document mirrors the tables (one array of rows per table, columns by
//! their names) rather than an object model of its own: that is what makes
//! it lossless, lets a round trip compare equal, and keeps the format in
//! step with the migrations by construction. `schema` names the last
//! migration of the install that wrote it; an older document imports (the
//! columns added since take their defaults), a newer one is refused.
//! The format is described in `docs/export.schema.json` (made by
//! `upstate export --schema`, checked by a test) and docs/operations.md.

mod cachet;
mod copy;
mod foreign;
mod import;
mod instatus;
mod kuma;
mod kuma_db;
mod shape;
mod statuspage;
mod tables;

use crate::db::{Db, Pools};
use crate::error::{StoreError, StoreResult};
use crate::writer::AuditCtx;
use serde_json::{Map, Value, json};
use shape::{Kind, Shape};
use tables::{CARRIED, CREDENTIALS, LOCAL_SETTINGS, SEALED, WITHHELD};
use upstate_core::audit::Action;

pub use copy::{
    BACKUP_FORMAT, Rows, backup_document, read_everything, rows_of_backup, sqlite_backup,
    write_everything,
};
pub use foreign::{
    Access, Files, MAX_PAGES, PAGE_ID_FILE, Paging, Product, Translated, Wanted, count as items_in,
    merge, next_page, text as text_of,
};
pub use import::{Imported, Mode, Origin, import, import_from};
pub use kuma::translate as from_uptime_kuma;
pub use kuma_db::{read as read_kuma_db, read_bytes as read_kuma_db_bytes};

/// The last migration this install applied (an export's `schema`).
pub async fn schema_version(db: &Db) -> StoreResult<i64> {
    shape::schema_version(db).await
}

/// The document's `format` field.
pub const FORMAT: &str = "upstate-export";
/// The document's `version` field: changes only when the envelope does.
pub const VERSION: i64 = 1;

/// What an export carries besides the install's records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Include {
    /// Sealed secrets, opened (channel secrets, second-factor seeds, the
    /// push key, monitor header values, bucket credentials).
    pub secrets: bool,
    /// Password, page password, API key and recovery code hashes.
    pub passwords: bool,
}

/// The shapes of the carried tables, in their order.
async fn shapes(db: &Db) -> StoreResult<Vec<Shape>> {
    let mut out = Vec::with_capacity(CARRIED.len());
    for table in CARRIED {
        out.push(shape::shape(db, table).await?);
    }
    Ok(out)
}

/// Every row of every carried table, as one document, recorded in the
/// audit log with what it held (a copy of the install is a sensitive read).
pub async fn export_as(db: &Db, ctx: &AuditCtx, include: Include) -> StoreResult<Value> {
    let doc = export(db, include).await?;
    let mut tx = db.begin_as(ctx).await?;
    let audited = tx
        .audit(
            Action::InstallExport,
            "install",
            None,
            json!({ "secrets": include.secrets, "passwords": include.passwords }),
        )
        .await?;
    tx.commit(audited).await?;
    Ok(doc)
}

/// Every row of every carried table, as one document.
pub async fn export(db: &Db, include: Include) -> StoreResult<Value> {
    // A migration that adds a table decides where it goes, or no export
    // pretends to be whole.
    let unplaced = unplaced_tables(db).await?;
    if !unplaced.is_empty() {
        return Err(StoreError::Config(format!(
            "tables with no place in the export format: {}",
            unplaced.join(", ")
        )));
    }
    let shapes = shapes(db).await?;
    let schema = shape::schema_version(db).await?;
    let mut tables = Map::new();
    let mut withheld = Vec::new();
    let read = read_all(db, &shapes).await?;
    for (shape, rows) in shapes.iter().zip(read) {
        let mut out = Vec::with_capacity(rows.len());
        for mut row in rows {
            if shape.table == "settings"
                && row
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| LOCAL_SETTINGS.contains(&n))
            {
                continue;
            }
            for (table, column) in CREDENTIALS {
                if *table == shape.table && !include.passwords {
                    withhold(&mut row, column, &mut withheld, table);
                }
            }
            for s in SEALED.iter().filter(|s| s.table == shape.table) {
                if !row_matches(&row, s.row) {
                    continue;
                }
                let mut fail = None;
                reach(&mut row, s.column, s.pointer, &mut |v: &mut Value| {
                    let Some(stored) = v.as_str() else { return };
                    if include.secrets {
                        match db.keys.open(s.purpose, stored) {
                            Ok(plain) => *v = Value::String(plain),
                            Err(e) => fail = Some(e),
                        }
                    } else {
                        *v = Value::String(WITHHELD.into());
                        let name = format!("{}.{}", s.table, s.column);
                        if !withheld.contains(&name) {
                            withheld.push(name);
                        }
                    }
                });
                if let Some(e) = fail {
                    return Err(e);
                }
            }
            out.push(Value::Object(row));
        }
        tables.insert(shape.table.to_string(), Value::Array(out));
    }
    withheld.sort();
    Ok(json!({
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": db.clock.now(),
        "schema": schema,
        "withheld": withheld,
        "tables": tables,
    }))
}

fn withhold(row: &mut Map<String, Value>, column: &str, withheld: &mut Vec<String>, table: &str) {
    if let Some(v) = row.get_mut(column)
        && !v.is_null()
    {
        *v = Value::String(WITHHELD.into());
        let name = format!("{table}.{column}");
        if !withheld.contains(&name) {
            withheld.push(name);
        }
    }
}

fn row_matches(row: &Map<String, Value>, name: Option<&str>) -> bool {
    name.is_none_or(|n| row.get("name").and_then(Value::as_str) == Some(n))
}

/// Calls `f` on each value at `pointer` inside the JSON text of `column`
/// (or on the column itself when the pointer is empty), writing the text
/// back.
fn reach(
    row: &mut Map<String, Value>,
    column: &str,
    pointer: &[&str],
    f: &mut dyn FnMut(&mut Value),
) {
    let Some(cell) = row.get_mut(column) else {
        return;
    };
    if pointer.is_empty() {
        f(cell);
        return;
    }
    let Some(text) = cell.as_str() else { return };
    let Ok(mut doc) = serde_json::from_str::<Value>(text) else {
        return;
    };
    walk(&mut doc, pointer, f);
    *cell = Value::String(doc.to_string());
}

fn walk(v: &mut Value, pointer: &[&str], f: &mut dyn FnMut(&mut Value)) {
    let Some((first, rest)) = pointer.split_first() else {
        f(v);
        return;
    };
    if *first == "*" {
        if let Some(items) = v.as_array_mut() {
            for item in items {
                walk(item, rest, f);
            }
        }
    } else if let Some(inner) = v.get_mut(*first) {
        walk(inner, rest, f);
    }
}

/// Reads every carried table in one snapshot of the database, so the
/// document is consistent even while the install keeps serving.
async fn read_all(db: &Db, shapes: &[Shape]) -> StoreResult<Vec<Vec<Map<String, Value>>>> {
    macro_rules! read {
        ($tx:expr) => {{
            let mut all = Vec::with_capacity(shapes.len());
            for shape in shapes {
                let sql = format!(
                    "SELECT {} FROM {} ORDER BY {}",
                    shape.names().join(", "),
                    shape.table,
                    shape.order()
                );
                // Names from the fixed list and the database's catalog.
                let rows = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .fetch_all(&mut *$tx)
                    .await?;
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    use sqlx::Row as _;
                    let mut row = Map::new();
                    for (i, c) in shape.columns.iter().enumerate() {
                        let v = match c.kind {
                            Kind::Int => r.try_get::<Option<i64>, _>(i)?.map(Value::from),
                            Kind::Int4 => r.try_get::<Option<i32>, _>(i)?.map(Value::from),
                            Kind::Bool => r.try_get::<Option<bool>, _>(i)?.map(Value::from),
                            Kind::Text => r.try_get::<Option<String>, _>(i)?.map(Value::from),
                        };
                        row.insert(c.name.clone(), v.unwrap_or(Value::Null));
                    }
                    out.push(row);
                }
                all.push(out);
            }
            all
        }};
    }
    Ok(match &db.pools {
        Pools::Sqlite { read, .. } => {
            let mut tx = read.begin().await?;
            let all = read!(tx);
            tx.rollback().await?;
            all
        }
        Pools::Postgres { pool, .. } => {
            let mut tx = pool.begin().await?;
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .execute(&mut *tx)
                .await?;
            let all = read!(tx);
            tx.rollback().await?;
            all
        }
    })
}

/// The JSON Schema (2020-12) of the documents this install writes and reads.
pub async fn json_schema(db: &Db) -> StoreResult<Value> {
    let shapes = shapes(db).await?;
    let mut tables = Map::new();
    for shape in &shapes {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for c in &shape.columns {
            let ty = match c.kind {
                Kind::Int | Kind::Int4 => "integer",
                Kind::Bool => "boolean",
                Kind::Text => "string",
            };
            let mut p = if c.nullable {
                json!({ "type": [ty, "null"] })
            } else {
                json!({ "type": ty })
            };
            if let Some(values) = tables::allowed(shape.table, &c.name) {
                let mut values: Vec<Value> = values.into_iter().map(Value::from).collect();
                if c.nullable {
                    values.push(Value::Null);
                }
                p["enum"] = Value::Array(values);
            }
            if let Some(to) = &c.references {
                p["description"] = json!(format!("the id of a row of {to}"));
            }
            if !c.nullable && !c.has_default {
                required.push(Value::from(c.name.clone()));
            }
            properties.insert(c.name.clone(), p);
        }
        tables.insert(
            shape.table.to_string(),
            json!({
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": required,
                    "properties": properties,
                }
            }),
        );
    }
    Ok(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Upstate export",
        "description": "The whole install: every carried table's rows, columns by name. Values withheld from the export read \"<withheld>\".",
        "type": "object",
        "additionalProperties": false,
        "required": ["format", "version", "exportedAt", "schema", "withheld", "tables"],
        "properties": {
            "format": { "const": FORMAT },
            "version": { "const": VERSION },
            "exportedAt": { "type": "string", "format": "date-time" },
            "schema": { "type": "integer", "description": "the last migration of the install that wrote it" },
            "withheld": {
                "type": "array",
                "description": "table.column of the values left out (asked for neither secrets nor passwords)",
                "items": { "type": "string" }
            },
            "tables": {
                "type": "object",
                "additionalProperties": false,
                "properties": tables,
            }
        }
    }))
}

/// Tables the database holds that have no place in the format: empty
/// unless a migration added a table and nobody decided where it goes.
async fn unplaced_tables(db: &Db) -> StoreResult<Vec<String>> {
    Ok(shape::table_names(db)
        .await?
        .into_iter()
        .filter(|t| {
            !CARRIED.contains(&t.as_str()) && !tables::LEFT_OUT.iter().any(|(name, _)| name == t)
        })
        .collect())
}

/// Appends a row to a document's table (an importer's translation).
fn push_row(tables: &mut Map<String, Value>, table: &str, row: Value) {
    if let Some(list) = tables
        .entry(table.to_string())
        .or_insert_with(|| Value::Array(vec![]))
        .as_array_mut()
    {
        list.push(row);
    }
}

/// A document of `tables`, as an importer's translation makes it.
fn document(schema: i64, at: upstate_core::Timestamp, tables: Map<String, Value>) -> Value {
    json!({
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": at,
        "schema": schema,
        "withheld": [],
        "tables": tables,
    })
}

fn invalid(path: String, message: impl Into<String>) -> StoreError {
    StoreError::Invalid(upstate_core::FieldErrors::single(&path, message))
}
