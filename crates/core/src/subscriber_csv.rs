//! Subscribers brought in as CSV (the import of the subscribers screen and
//! `POST /api/subscribers/import`): a header row naming the columns, then one
//! subscriber per row. Here rather than in the route so `cargo fuzz` can
//! feed it arbitrary files.

use crate::notify::{SubscribeInput, Subscription};
use crate::{FieldErrors, Id};

/// Rows one file may hold; more is refused, to be imported in parts.
pub const IMPORT_MAX: usize = 10_000;

/// Reads every row; any bad row refuses the whole file (nothing stored),
/// each bad row named by its line.
pub fn parse(page: Id, text: &str) -> Result<Vec<Subscription>, FieldErrors> {
    let mut rows = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = match rows.headers() {
        Ok(h) => h.iter().map(|c| c.to_ascii_lowercase()).collect(),
        Err(e) => return Err(FieldErrors::single("csv", format!("cannot be read: {e}"))),
    };
    let col = |names: &[&str]| headers.iter().position(|h| names.contains(&h.as_str()));
    let Some(target_col) = col(&["target", "email"]) else {
        return Err(FieldErrors::single(
            "csv",
            "needs a header row with a target (or email) column",
        ));
    };
    let kind_col = col(&["kind"]);
    let comp_col = col(&["componentids", "component_ids", "components"]);
    let mut e = FieldErrors::new();
    let mut out = Vec::new();
    for (i, row) in rows.records().enumerate() {
        let line = i + 2;
        let row = match row {
            Ok(r) => r,
            Err(err) => {
                e.push("csv", format!("line {line}: cannot be read: {err}"));
                continue;
            }
        };
        if row.iter().all(str::is_empty) {
            continue;
        }
        if out.len() + 1 > IMPORT_MAX {
            e.push(
                "csv",
                format!("has more than {IMPORT_MAX} rows; import it in parts"),
            );
            break;
        }
        let ids: Result<Vec<Id>, _> = comp_col
            .and_then(|c| row.get(c))
            .unwrap_or("")
            .split([' ', ';', ','])
            .filter(|t| !t.is_empty())
            .map(str::parse::<Id>)
            .collect();
        let Ok(ids) = ids else {
            e.push(
                "csv",
                format!("line {line}: componentIds must be ids separated by spaces or semicolons"),
            );
            continue;
        };
        let input = SubscribeInput {
            status_page_id: Some(page),
            kind: kind_col
                .and_then(|c| row.get(c))
                .filter(|k| !k.is_empty())
                .map(String::from),
            target: row.get(target_col).map(String::from),
            component_ids: Some(ids),
            ..Default::default()
        };
        match input.validate() {
            Ok(sub) => out.push(sub),
            Err(errors) => {
                for f in errors.0 {
                    e.push("csv", format!("line {line}: {}: {}", f.field, f.message));
                }
            }
        }
    }
    if out.is_empty() && e.is_empty() {
        e.push("csv", "holds no subscriber");
    }
    e.into_result().map(|()| out)
}
