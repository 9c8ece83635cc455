//! What a table holds, read from the live database: its columns, their
//! kinds, which may be empty, its key and what each column refers to. The
//! export format follows the schema the migrations made, so a migration
//! that adds a column adds it to the format without a second list to keep.

use crate::db::{Db, Pools};
use crate::error::{StoreError, StoreResult};

/// The kinds of value the schema uses (time is integer milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    /// PostgreSQL's 4-byte `INTEGER` (SQLite's integers are all one kind).
    Int4,
    Bool,
    Text,
}

#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub name: String,
    pub kind: Kind,
    pub nullable: bool,
    /// The database fills it when an insert leaves it out.
    pub has_default: bool,
    /// The table a foreign key points at.
    pub references: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub table: &'static str,
    pub columns: Vec<Column>,
    pub key: Vec<String>,
}

impl Shape {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// Whether rows are numbered by the database (`id`, made on insert).
    pub fn numbered(&self) -> bool {
        self.key == ["id"]
            && !matches!(self.table, "vapid_keys" | "audit_head" | "selftest")
            && self
                .column("id")
                .is_some_and(|c| matches!(c.kind, Kind::Int | Kind::Int4))
    }

    /// `ORDER BY` that lists rows the same way every time.
    pub fn order(&self) -> String {
        self.key.join(", ")
    }

    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

fn sqlite_kind(declared: &str) -> Option<Kind> {
    match declared.to_ascii_uppercase().as_str() {
        "INTEGER" | "BIGINT" => Some(Kind::Int),
        "BOOLEAN" => Some(Kind::Bool),
        "TEXT" => Some(Kind::Text),
        _ => None,
    }
}

fn postgres_kind(declared: &str) -> Option<Kind> {
    match declared {
        "bigint" => Some(Kind::Int),
        "integer" => Some(Kind::Int4),
        "boolean" => Some(Kind::Bool),
        "text" => Some(Kind::Text),
        _ => None,
    }
}

/// The shape of `table` as the database holds it.
pub(crate) async fn shape(db: &Db, table: &'static str) -> StoreResult<Shape> {
    let unknown = |column: &str, declared: &str| {
        StoreError::Config(format!(
            "{table}.{column} has type {declared}, which the export format does not carry"
        ))
    };
    let (mut columns, key) = match &db.pools {
        Pools::Sqlite { read, .. } => {
            let rows: Vec<(String, String, bool, bool, i64)> = sqlx::query_as(
                "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk \
                 FROM pragma_table_info($1) ORDER BY cid",
            )
            .bind(table)
            .fetch_all(read)
            .await?;
            let mut key: Vec<(i64, String)> = Vec::new();
            let mut columns = Vec::new();
            // A lone `INTEGER` key is the rowid: numbered on insert.
            let keys = rows.iter().filter(|r| r.4 > 0).count();
            for (name, declared, not_null, has_default, pk) in rows {
                let kind = sqlite_kind(&declared).ok_or_else(|| unknown(&name, &declared))?;
                if pk > 0 {
                    key.push((pk, name.clone()));
                }
                let rowid = pk > 0 && keys == 1 && declared.eq_ignore_ascii_case("INTEGER");
                columns.push(Column {
                    nullable: !not_null && pk == 0,
                    has_default: has_default || rowid,
                    name,
                    kind,
                    references: None,
                });
            }
            key.sort();
            let foreign: Vec<(String, String)> =
                sqlx::query_as("SELECT \"from\", \"table\" FROM pragma_foreign_key_list($1)")
                    .bind(table)
                    .fetch_all(read)
                    .await?;
            for (from, to) in foreign {
                if let Some(c) = columns.iter_mut().find(|c| c.name == from) {
                    c.references = Some(to);
                }
            }
            (columns, key.into_iter().map(|(_, n)| n).collect::<Vec<_>>())
        }
        Pools::Postgres { pool, .. } => {
            let rows: Vec<(String, String, bool, bool)> = sqlx::query_as(
                "SELECT column_name::text, data_type::text, is_nullable = 'YES', \
                 column_default IS NOT NULL OR is_identity = 'YES' \
                 FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 \
                 ORDER BY ordinal_position",
            )
            .bind(table)
            .fetch_all(pool)
            .await?;
            let mut columns = Vec::new();
            for (name, declared, nullable, has_default) in rows {
                let kind = postgres_kind(&declared).ok_or_else(|| unknown(&name, &declared))?;
                columns.push(Column {
                    name,
                    kind,
                    nullable,
                    has_default,
                    references: None,
                });
            }
            let key: Vec<String> = sqlx::query_scalar(
                "SELECT a.attname::text FROM pg_index i \
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
                 WHERE i.indrelid = to_regclass($1) AND i.indisprimary \
                 ORDER BY array_position(i.indkey::int2[], a.attnum)",
            )
            .bind(table)
            .fetch_all(pool)
            .await?;
            let foreign: Vec<(String, String)> = sqlx::query_as(
                "SELECT a.attname::text, t.relname::text FROM pg_constraint c \
                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] \
                 JOIN pg_class t ON t.oid = c.confrelid \
                 WHERE c.contype = 'f' AND c.conrelid = to_regclass($1)",
            )
            .bind(table)
            .fetch_all(pool)
            .await?;
            for (from, to) in foreign {
                if let Some(c) = columns.iter_mut().find(|c| c.name == from) {
                    c.references = Some(to);
                }
            }
            (columns, key)
        }
    };
    if columns.is_empty() {
        return Err(StoreError::Config(format!(
            "the database has no table {table}: is it migrated?"
        )));
    }
    // A key column is never empty, whatever the dialect reports.
    for c in &mut columns {
        if key.contains(&c.name) {
            c.nullable = false;
        }
    }
    Ok(Shape {
        table,
        columns,
        key,
    })
}

/// The tables the database holds (besides the migrations' own), to check
/// that each has a place in the format.
pub(crate) async fn table_names(db: &Db) -> StoreResult<Vec<String>> {
    Ok(match &db.pools {
        Pools::Sqlite { read, .. } => {
            sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx%' ORDER BY name",
            )
            .fetch_all(read)
            .await?
        }
        Pools::Postgres { pool, .. } => {
            sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
                 AND table_name NOT LIKE '\\_sqlx%' ORDER BY 1",
            )
            .fetch_all(pool)
            .await?
        }
    })
}

/// The last migration the database has applied: the export's `schema`.
pub(crate) async fn schema_version(db: &Db) -> StoreResult<i64> {
    let sql = "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success";
    Ok(on_db!(db, |c| sqlx::query_scalar(sql).fetch_one(c).await?))
}
