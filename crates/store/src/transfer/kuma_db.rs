//! Uptime Kuma's database file (`kuma.db`, SQLite) read directly, opened
//! read-only, as the document `kuma::translate` reads: the monitors under
//! the names Kuma's JSON backup gives them, and beside them what the
//! backup never held (status pages, their groups, maintenance, incidents).

use serde_json::{Map, Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqliteRow};
use sqlx::{ConnectOptions, Connection, Row, TypeInfo, ValueRef};
use std::path::Path;

/// Kuma's tables, and the list each becomes.
const TABLES: [(&str, &str); 9] = [
    ("monitor", "monitorList"),
    ("status_page", "statusPageList"),
    ("group", "groupList"),
    ("monitor_group", "monitorGroupList"),
    ("maintenance", "maintenanceList"),
    ("monitor_maintenance", "monitorMaintenanceList"),
    ("maintenance_status_page", "maintenanceStatusPageList"),
    ("incident", "incidentList"),
    ("notification", "notificationList"),
];

/// A column's value as JSON, whatever SQLite stored in it.
fn cell(row: &SqliteRow, i: usize) -> Value {
    let Ok(raw) = row.try_get_raw(i) else {
        return Value::Null;
    };
    if raw.is_null() {
        return Value::Null;
    }
    match raw.type_info().name() {
        "INTEGER" => row
            .try_get_unchecked::<i64, _>(i)
            .map_or(Value::Null, Value::from),
        "REAL" => row
            .try_get_unchecked::<f64, _>(i)
            .map_or(Value::Null, Value::from),
        "TEXT" => row
            .try_get_unchecked::<String, _>(i)
            .map_or(Value::Null, Value::from),
        _ => Value::Null,
    }
}

/// The file as Kuma's backup document, with the lists the backup lacks.
pub async fn read(path: &Path) -> Result<Value, String> {
    let shown = path.display();
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .map_err(|e| format!("{shown} cannot be opened as SQLite: {e}"))?;
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut conn)
            .await
            .map_err(|e| format!("{shown} is not a SQLite database: {e}"))?;
    if !tables.iter().any(|t| t == "monitor") || !tables.iter().any(|t| t == "status_page") {
        return Err(format!(
            "{shown} is not Uptime Kuma's database: it has no monitor and status_page tables"
        ));
    }
    let mut doc = Map::new();
    doc.insert("version".into(), json!("kuma.db"));
    for (table, list) in TABLES {
        if !tables.iter().any(|t| t == table) {
            continue;
        }
        // Names from the fixed list above; `group` is a keyword.
        let sql = format!("SELECT * FROM \"{table}\" ORDER BY id");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut conn)
            .await
            .map_err(|e| format!("{shown}: reading {table}: {e}"))?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut item = Map::new();
            for (i, column) in row.columns().iter().enumerate() {
                let name = sqlx::Column::name(column);
                let value = cell(row, i);
                // The backup's names for what the table calls otherwise.
                match (table, name) {
                    ("monitor", "push_token") => item.insert("pushToken".into(), value),
                    ("monitor", "ignore_tls") => item.insert("ignoreTls".into(), value),
                    ("monitor", "accepted_statuscodes_json") => item.insert(
                        "accepted_statuscodes".into(),
                        value
                            .as_str()
                            .and_then(|s| serde_json::from_str(s).ok())
                            .unwrap_or(Value::Null),
                    ),
                    _ => item.insert(name.to_string(), value),
                };
            }
            out.push(Value::Object(item));
        }
        doc.insert(list.into(), Value::Array(out));
    }
    conn.close().await.ok();
    Ok(Value::Object(doc))
}

/// `read` of a database sent as bytes (the admin interface's upload):
/// SQLite opens files, so the bytes go to a private temporary file, which
/// is removed once read.
pub async fn read_bytes(bytes: &[u8]) -> Result<Value, String> {
    use std::io::Write;
    let path =
        std::env::temp_dir().join(format!("upstate-kuma-{}.db", crate::subscribers::token()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| format!("cannot keep the upload to read it: {e}"));
    let read = match written {
        Ok(()) => read(&path).await,
        Err(e) => Err(e),
    };
    std::fs::remove_file(&path).ok();
    read.map_err(|e| e.replace(&path.display().to_string(), "the file"))
}
