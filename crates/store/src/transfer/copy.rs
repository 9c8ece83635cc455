//! Every table as it is stored, and back: `upstate backup` (PostgreSQL),
//! `upstate restore` and `upstate migrate-db`. Unlike an export nothing is
//! left out, opened or re-numbered: the audit log, sessions and work in
//! flight move too, sealed secrets stay sealed (the server key goes with
//! the backup), so the audit chain verifies on the other side.

use super::shape::{self, Kind, Shape};
use super::tables::{CARRIED, LEFT_OUT};
use super::{invalid, read_all};
use crate::db::{Db, Pools};
use crate::error::{StoreError, StoreResult};
use serde_json::{Map, Value, json};

/// The `format` of a backup document.
pub const BACKUP_FORMAT: &str = "upstate-backup";

/// Every table, parents first.
fn every_table() -> Vec<&'static str> {
    CARRIED
        .iter()
        .copied()
        .chain(LEFT_OUT.iter().map(|(t, _)| *t))
        .collect()
}

async fn every_shape(db: &Db) -> StoreResult<Vec<Shape>> {
    let mut out = Vec::new();
    for table in every_table() {
        out.push(shape::shape(db, table).await?);
    }
    Ok(out)
}

/// Rows by table, in one snapshot of the database.
pub type Rows = Vec<(&'static str, Vec<Map<String, Value>>)>;

/// Every row of every table as stored.
pub async fn read_everything(db: &Db) -> StoreResult<Rows> {
    let shapes = every_shape(db).await?;
    let rows = read_all(db, &shapes).await?;
    Ok(shapes.iter().map(|s| s.table).zip(rows).collect())
}

/// A backup document: every table as stored.
pub async fn backup_document(db: &Db) -> StoreResult<Value> {
    let rows = read_everything(db).await?;
    let mut tables = Map::new();
    for (table, list) in rows {
        tables.insert(
            table.to_string(),
            Value::Array(list.into_iter().map(Value::Object).collect()),
        );
    }
    Ok(json!({
        "format": BACKUP_FORMAT,
        "version": super::VERSION,
        "takenAt": db.clock.now(),
        "schema": shape::schema_version(db).await?,
        "tables": tables,
    }))
}

/// The rows of a backup document, checked against this database's tables.
pub async fn rows_of_backup(db: &Db, doc: &Value) -> StoreResult<Rows> {
    if doc.get("format").and_then(Value::as_str) != Some(BACKUP_FORMAT) {
        return Err(invalid(
            "/format".into(),
            format!("must be \"{BACKUP_FORMAT}\": this is not an Upstate backup"),
        ));
    }
    let ours = shape::schema_version(db).await?;
    if doc.get("schema").and_then(Value::as_i64) != Some(ours) {
        return Err(invalid(
            "/schema".into(),
            format!(
                "a backup restores into the schema it was taken from ({ours} here); use an export to move between versions"
            ),
        ));
    }
    let tables = doc
        .get("tables")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("/tables".into(), "must be an object of tables"))?;
    let mut out = Vec::new();
    for shape in every_shape(db).await? {
        let list = tables
            .get(shape.table)
            .and_then(Value::as_array)
            .ok_or_else(|| invalid(format!("/tables/{}", shape.table), "is missing"))?;
        let mut rows = Vec::with_capacity(list.len());
        for (i, row) in list.iter().enumerate() {
            let row = row.as_object().ok_or_else(|| {
                invalid(format!("/tables/{}/{i}", shape.table), "must be an object")
            })?;
            rows.push(row.clone());
        }
        out.push((shape.table, rows));
    }
    Ok(out)
}

/// Whether an install holds anything of its own yet.
async fn holds_anything(db: &Db) -> StoreResult<bool> {
    let sql = "SELECT (SELECT COUNT(*) FROM users) + (SELECT COUNT(*) FROM status_pages) \
               + (SELECT COUNT(*) FROM audit_events)";
    let n: i64 = on_db!(db, |c| sqlx::query_scalar(sql).fetch_one(c).await?);
    Ok(n > 0)
}

/// Writes `rows` into `db`, which must hold nothing yet (only what its
/// migrations put there, which is replaced), in one transaction; ids kept.
pub async fn write_everything(db: &Db, rows: Rows) -> StoreResult<usize> {
    if holds_anything(db).await? {
        return Err(StoreError::Conflict(
            "the target database is not empty: restore and migrate-db write only into a new one"
                .into(),
        ));
    }
    let shapes = every_shape(db).await?;
    let mut written = 0;
    macro_rules! write {
        ($tx:expr, $postgres:expr) => {{
            for shape in shapes.iter().rev() {
                let sql = format!("DELETE FROM {}", shape.table);
                sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                    .execute(&mut *$tx)
                    .await?;
            }
            for (table, list) in &rows {
                let Some(shape) = shapes.iter().find(|s| s.table == *table) else {
                    continue;
                };
                for (i, row) in list.iter().enumerate() {
                    let columns: Vec<&super::shape::Column> = shape
                        .columns
                        .iter()
                        .filter(|c| row.contains_key(&c.name))
                        .collect();
                    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                    let marks: Vec<String> = (1..=columns.len()).map(|n| format!("${n}")).collect();
                    let sql = format!(
                        "INSERT INTO {table} ({}) VALUES ({})",
                        names.join(", "),
                        marks.join(", ")
                    );
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
                    for c in &columns {
                        let v = row.get(&c.name).unwrap_or(&Value::Null);
                        q = match c.kind {
                            Kind::Int => q.bind(v.as_i64()),
                            Kind::Int4 => q.bind(v.as_i64().and_then(|n| i32::try_from(n).ok())),
                            Kind::Bool => q.bind(v.as_bool()),
                            Kind::Text => q.bind(v.as_str().map(String::from)),
                        };
                    }
                    q.execute(&mut *$tx).await.map_err(|e| match e {
                        sqlx::Error::Database(d) => invalid(
                            format!("/tables/{table}/{i}"),
                            format!("the database refused this row: {}", d.message()),
                        ),
                        other => StoreError::Database(other),
                    })?;
                    written += 1;
                }
            }
            if $postgres {
                for shape in shapes.iter().filter(|s| s.numbered()) {
                    let sql = format!(
                        "SELECT setval(pg_get_serial_sequence('{t}', 'id'), \
                         (SELECT COALESCE(MAX(id), 0) + 1 FROM {t}), false)",
                        t = shape.table
                    );
                    sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                        .execute(&mut *$tx)
                        .await?;
                }
            }
        }};
    }
    match &db.pools {
        Pools::Sqlite { write, .. } => {
            let mut tx = write.begin().await?;
            write!(tx, false);
            tx.commit().await?;
        }
        Pools::Postgres { pool, .. } => {
            let mut tx = pool.begin().await?;
            write!(tx, true);
            tx.commit().await?;
        }
    }
    Ok(written)
}

/// `VACUUM INTO`: a consistent copy of a SQLite database while it serves.
pub async fn sqlite_backup(db: &Db, to: &std::path::Path) -> StoreResult<()> {
    let Pools::Sqlite { read, .. } = &db.pools else {
        return Err(StoreError::Config(
            "a file copy is for SQLite; PostgreSQL backs up as a document".into(),
        ));
    };
    sqlx::query("VACUUM INTO $1")
        .bind(to.display().to_string())
        .execute(read)
        .await?;
    Ok(())
}
