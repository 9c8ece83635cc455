//! The two migration folders (crates/store/migrations/{sqlite,postgres})
//! must define the same schema: the same tables with the same columns and
//! the same NOT NULL rules. Types differ by design (INTEGER PRIMARY KEY
//! AUTOINCREMENT against BIGINT identity columns), names must not.

use crate::support::{Backend, TestDb};
use std::collections::BTreeSet;

type Schema = BTreeSet<(String, String, bool)>;

async fn sqlite_schema(db: &TestDb) -> Schema {
    let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
        .await
        .unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    let mut schema = Schema::new();
    for t in tables {
        let cols: Vec<(String, bool, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT name, \"notnull\", pk FROM pragma_table_info('{t}')"
        )))
        .fetch_all(&mut c)
        .await
        .unwrap();
        for (name, not_null, pk) in cols {
            // SQLite does not mark primary keys NOT NULL; PostgreSQL does.
            schema.insert((t.clone(), name, not_null || pk > 0));
        }
    }
    schema
}

async fn postgres_schema(db: &TestDb) -> Schema {
    let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url)
        .await
        .unwrap();
    let cols: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text, is_nullable::text FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    cols.into_iter()
        .map(|(t, c, nullable)| (t, c, nullable == "NO"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(postgres_tests),
    ignore = "UPSTATE_TEST_POSTGRES_URL was not set when the tests were built"
)]
async fn both_backends_migrate_to_the_same_tables_and_columns() {
    let sqlite = TestDb::empty(Backend::Sqlite).await;
    let postgres = TestDb::empty(Backend::Postgres).await;
    for db in [&sqlite, &postgres] {
        let (ok, _, err) = db.cli(&["migrate"]);
        assert!(ok, "migrate failed: {err}");
    }
    let (lite, pg) = (
        sqlite_schema(&sqlite).await,
        postgres_schema(&postgres).await,
    );
    assert!(lite.len() > 50, "the schema was read: {lite:?}");
    let only_sqlite: Vec<_> = lite.difference(&pg).collect();
    let only_postgres: Vec<_> = pg.difference(&lite).collect();
    assert!(
        only_sqlite.is_empty() && only_postgres.is_empty(),
        "the migrations drifted apart:\n only SQLite: {only_sqlite:?}\n only PostgreSQL: {only_postgres:?}"
    );
}
