//! Readers of what arrives from outside, as plain functions of bytes and
//! text: the one strict JSON body reader, query strings, form bodies and
//! quality-weighted headers. They live here, away from the HTTP layer, so
//! `cargo fuzz` (see `fuzz/`) can feed them arbitrary input without a server.

use crate::{FieldErrors, Id, IncidentStatus};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a JSON body was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonError {
    /// Not one well-formed JSON value, trailing bytes, or nested too deep
    /// (the server answers 400).
    Malformed(String),
    /// Well-formed JSON of the wrong shape, every bad field named (422).
    Invalid(FieldErrors),
}

/// How deep a body's arrays and objects may nest. Ours nest three deep at
/// most; serde skips unknown fields without a depth limit of its own.
pub const MAX_DEPTH: usize = 32;

/// The one strict reading of every JSON body: exactly one JSON object and
/// nothing after it, nested at most `MAX_DEPTH` deep, no NUL character in
/// any string or key (PostgreSQL cannot store one, and no text of ours needs
/// it). A number with no fraction (`1.0`) counts as the integer it is, as
/// JSON Schema says. Well-formed JSON of the wrong shape names every field
/// that did not fit (not only the first serde stops at).
pub fn read_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, JsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde::Deserialize::deserialize(&mut de)
        .and_then(|v: Unique| de.end().map(|()| v.0))
        .map_err(|e| JsonError::Malformed(format!("malformed JSON: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(JsonError::Invalid(FieldErrors::single(
            "body",
            "must be a JSON object",
        )));
    };
    let mut nul = None;
    for (key, v) in fields.iter_mut() {
        if let Err(e) = tidy(v, 1) {
            return Err(JsonError::Malformed(format!("malformed JSON: {e}")));
        }
        if key.contains('\0') {
            nul.get_or_insert_with(|| key.clone());
        } else if let Some(rest) = nul_at(v) {
            // A top field by its name, as every field error names it; a
            // place deeper in by its whole pointer.
            nul.get_or_insert_with(|| {
                if rest.is_empty() {
                    key.clone()
                } else {
                    format!("/{}{rest}", key.replace('~', "~0").replace('/', "~1"))
                }
            });
        }
    }
    if let Some(field) = nul {
        return Err(JsonError::Invalid(FieldErrors::single(
            &field,
            "must not contain a NUL character",
        )));
    }
    let err = match serde_path_to_error::deserialize(&Value::Object(fields.clone())) {
        Ok(t) => return Ok(t),
        Err(err) => err,
    };
    // Each round names one bad field and sets it aside, until the rest fits
    // or what is left to report is only the absence of a field set aside.
    let mut errors = FieldErrors::new();
    let mut next = Some(err);
    while let Some(err) = next.take() {
        let top = match err.path().iter().next() {
            Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
            _ => None,
        };
        let path = err.path().to_string();
        match top {
            Some(key) if fields.remove(&key).is_some() => {
                errors.push(&path, clean_message(&err.into_inner().to_string()));
                let rest = Value::Object(fields.clone());
                next = serde_path_to_error::deserialize::<_, T>(&rest).err();
            }
            _ if errors.is_empty() => {
                let field = if path == "." || path.is_empty() {
                    "body".to_string()
                } else {
                    path
                };
                errors.push(&field, clean_message(&err.into_inner().to_string()));
            }
            _ => {}
        }
    }
    Err(JsonError::Invalid(errors))
}

/// Checks nesting depth and turns whole numbers written with a fraction
/// (`1.0`) into integers.
/// A JSON value whose objects name each key once. serde_json keeps the
/// last of a repeated key; a body that says two things of one field is
/// refused instead, as a reader that keeps the first would understand it
/// otherwise (RFC 8259 4: names SHOULD be unique).
struct Unique(Value);

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(v) = map.next_value()?;
            if fields.insert(key.clone(), v).is_some() {
                return Err(serde::de::Error::custom(format!(
                    "the key {key:?} appears twice in one object"
                )));
            }
        }
        Ok(Value::Object(fields))
    }
}

fn tidy(v: &mut Value, depth: usize) -> Result<(), String> {
    match v {
        Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
            Err(format!("nested deeper than {MAX_DEPTH} levels"))
        }
        Value::Array(items) => items.iter_mut().try_for_each(|i| tidy(i, depth + 1)),
        Value::Object(map) => map.values_mut().try_for_each(|i| tidy(i, depth + 1)),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether a NUL character is in any string or key inside `v`.
/// Where in `v` the first NUL is, as a JSON pointer below it (`""`: `v`
/// itself), so a refusal names the place in a document (an export's
/// `/tables/components/1/name`), not only its top field.
fn nul_at(v: &Value) -> Option<String> {
    let escape = |k: &str| k.replace('~', "~0").replace('/', "~1");
    match v {
        Value::String(s) => s.contains('\0').then(String::new),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_at(item).map(|rest| format!("/{i}{rest}"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k.contains('\0') {
                Some(format!("/{}", escape(k)))
            } else {
                nul_at(v).map(|rest| format!("/{}{rest}", escape(k)))
            }
        }),
        _ => None,
    }
}

/// serde's messages end with " at line L column C", noise next to a field name.
fn clean_message(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// An HTML form body (`application/x-www-form-urlencoded`) as the JSON
/// object `read_json` takes: every field a string, but `name[]` fields
/// (checkboxes) gather into a list and `name:int` fields (hidden ids) go as
/// numbers when they are whole numbers.
pub fn form_as_json(bytes: &[u8]) -> Vec<u8> {
    let mut fields = serde_json::Map::new();
    let number_or_text = |v: std::borrow::Cow<'_, str>| {
        v.parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::String(v.into_owned()))
    };
    for (k, v) in form_urlencoded::parse(bytes) {
        if let Some(list) = k.strip_suffix("[]") {
            let entry = fields
                .entry(list.to_string())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = entry {
                items.push(number_or_text(v));
            }
        } else if let Some(name) = k.strip_suffix(":int") {
            fields.insert(name.to_string(), number_or_text(v));
        } else {
            fields.insert(k.into_owned(), Value::String(v.into_owned()));
        }
    }
    Value::Object(fields).to_string().into_bytes()
}

/// The items of one comma-separated, quality-weighted header value
/// (`Accept-Encoding`, `Accept-Language`, `Accept`) as (token, q), q
/// defaulting to 1. A q that is not a number from 0 to 1 counts as 0 (not
/// wanted), so `q=NaN` or `q=inf` cannot outrank a real preference.
pub fn weighted(value: &str) -> impl Iterator<Item = (&str, f32)> {
    value.split(',').map(|item| {
        let mut parts = item.split(';').map(str::trim);
        let token = parts.next().unwrap_or("");
        let q = match parts.find_map(|p| p.strip_prefix("q=")) {
            None => 1.0,
            Some(q) => q
                .parse::<f32>()
                .ok()
                .filter(|q| (0.0..=1.0).contains(q))
                .unwrap_or(0.0),
        };
        (token, q)
    })
}

/// Query parameters, parsed leniently into strings so each bad value can be
/// reported by name (instead of one opaque deserializer message).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query(pub Vec<(String, String)>);

impl Query {
    pub fn parse(q: &str) -> Query {
        Query(form_urlencoded::parse(q.as_bytes()).into_owned().collect())
    }

    /// The first value given for a parameter; an empty value counts as absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// Whether the parameter is named at all, with or without a value.
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }

    /// The `page` parameter: a page's slug, required.
    pub fn page_slug(&self, errors: &mut FieldErrors) -> String {
        let slug = self.get("page").map(str::to_string);
        if slug.is_none() {
            errors.push("page", "is required: the page's slug");
        }
        slug.unwrap_or_default()
    }

    /// A parameter that must be one of `allowed` (the first is the default).
    pub fn one_of(
        &self,
        name: &str,
        allowed: &[&'static str],
        errors: &mut FieldErrors,
    ) -> &'static str {
        let Some(raw) = self.get(name) else {
            return allowed.first().copied().unwrap_or("");
        };
        match allowed.iter().find(|a| **a == raw) {
            Some(a) => a,
            None => {
                errors.push(name, format!("must be one of {}", allowed.join(", ")));
                allowed.first().copied().unwrap_or("")
            }
        }
    }

    /// Parses a parameter with `FromStr`, recording a bad value under its name.
    pub fn parsed<T: std::str::FromStr>(
        &self,
        name: &str,
        what: &str,
        errors: &mut FieldErrors,
    ) -> Option<T> {
        let raw = self.get(name)?;
        errors.check(
            name,
            raw.parse::<T>().map_err(|_| format!("must be {what}")),
        )
    }

    pub fn id(&self, name: &str, errors: &mut FieldErrors) -> Option<Id> {
        let id: Option<Id> = self.parsed(name, "a positive integer id", errors);
        match id {
            Some(i) if i <= 0 => {
                errors.push(name, "must be a positive integer id");
                None
            }
            other => other,
        }
    }

    pub fn bool(&self, name: &str, errors: &mut FieldErrors) -> Option<bool> {
        match self.get(name)? {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => {
                errors.push(name, "must be true or false");
                None
            }
        }
    }

    /// An incident status filter: one of the four states, or `unresolved`
    /// for every state but resolved.
    pub fn incident_status(&self, errors: &mut FieldErrors) -> Option<&'static str> {
        match self.get("status")? {
            "unresolved" => Some("unresolved"),
            raw => match raw.parse::<IncidentStatus>() {
                Ok(s) => Some(s.as_str()),
                Err(_) => {
                    errors.push(
                        "status",
                        format!("must be one of: {}, unresolved", IncidentStatus::expected()),
                    );
                    None
                }
            },
        }
    }

    /// A page size: `default` when absent, refused outside 1..=max.
    pub fn limit(&self, name: &str, default: i64, max: i64, errors: &mut FieldErrors) -> i64 {
        let value: Option<i64> = self.parsed(name, &format!("an integer from 1 to {max}"), errors);
        match value {
            None => default,
            Some(v) if (1..=max).contains(&v) => v,
            Some(_) => {
                errors.push(name, format!("must be an integer from 1 to {max}"));
                default
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Sample {
        n: Option<i64>,
        s: Option<String>,
    }

    #[test]
    fn json_is_one_object_and_nothing_after() {
        assert!(read_json::<Sample>(br#"{"n": 1.0}"#).is_ok_and(|s| s.n == Some(1)));
        assert!(matches!(
            read_json::<Sample>(br#"{"n": 1} zz"#),
            Err(JsonError::Malformed(_))
        ));
        assert!(matches!(
            read_json::<Sample>(b"[1]"),
            Err(JsonError::Invalid(_))
        ));
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(40), "]".repeat(40));
        assert!(matches!(
            read_json::<Sample>(deep.as_bytes()),
            Err(JsonError::Malformed(_))
        ));
        let Err(JsonError::Invalid(e)) = read_json::<Sample>(b"{\"s\": \"a\\u0000b\"}") else {
            panic!("NUL accepted")
        };
        assert_eq!(e.0[0].field, "s");
        let Err(JsonError::Invalid(e)) =
            read_json::<Sample>(b"{\"t\": {\"rows\": [{\"a\": 1}, {\"name\": \"x\\u0000\"}]}}")
        else {
            panic!("NUL accepted")
        };
        assert_eq!(e.0[0].field, "/t/rows/1/name");
        let Err(JsonError::Invalid(e)) = read_json::<Sample>(br#"{"n": "x", "s": 2}"#) else {
            panic!("wrong types accepted")
        };
        assert_eq!(e.0.len(), 2, "{e:?}");
        // A key said twice is refused, wherever it is, not read as the last.
        for twice in [
            &br#"{"n": 1, "n": 2}"#[..],
            br#"{"s": "a", "x": {"k": 1, "k": 1}}"#,
        ] {
            let Err(JsonError::Malformed(why)) = read_json::<Sample>(twice) else {
                panic!("a repeated key accepted")
            };
            assert!(why.contains("appears twice"), "{why}");
        }
        assert!(read_json::<Sample>(br#"{"n": 1, "x": [{"k": 1}, {"k": 2}]}"#).is_ok());
    }

    #[test]
    fn form_fields_become_json() {
        let json = form_as_json(b"a=1&ids[]=2&ids[]=x&id:int=7&id2:int=z");
        let v: Value = serde_json::from_slice(&json).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({"a": "1", "ids": [2, "x"], "id": 7, "id2": "z"})
        );
    }

    #[test]
    fn weights_outside_zero_to_one_count_as_unwanted() {
        let items: Vec<_> = weighted("de;q=NaN, fr;q=inf, en;q=0.5, nl").collect();
        assert_eq!(
            items,
            vec![("de", 0.0), ("fr", 0.0), ("en", 0.5), ("nl", 1.0)]
        );
    }

    #[test]
    fn query_values_are_named_when_bad() {
        let q = Query::parse("limit=0&id=-3&flag=maybe&empty=");
        let mut e = FieldErrors::new();
        assert_eq!(q.limit("limit", 20, 100, &mut e), 20);
        assert_eq!(q.id("id", &mut e), None);
        assert_eq!(q.bool("flag", &mut e), None);
        assert_eq!(q.get("empty"), None);
        assert!(q.has("empty"));
        let fields: Vec<_> = e.0.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(fields, ["limit", "id", "flag"]);
    }
}
