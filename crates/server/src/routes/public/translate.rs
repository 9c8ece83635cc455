//! `POST /api/translate`: dictionary-based translation (as the seed says) of
//! UI keys or known phrases, with the same dictionaries the public page
//! uses. Nothing is guessed: an item with no dictionary entry comes back
//! with `found: false` and is listed under `missing`.

use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::i18n::{self, LANGS, Lang};
use crate::openapi::BodyErrors;
use crate::respond::{Data, data};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use upstate_core::FieldErrors;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::state::AppState;

/// At most this many items per request, each at most `ITEM_MAX` characters.
const ITEMS_MAX: usize = 200;
const ITEM_MAX: usize = 500;

pub fn router(state: &AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(crate::public_reads::limited(
        state,
        routes!(translate),
        state.settings.public_limits.page,
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct TranslateInput {
    /// The target language: en, de, fr, es, ja or ar.
    #[schema(schema_with = upstate_core::schema::lang, required)]
    to: Option<String>,
    /// UI keys (`status.degraded`) or known phrases in any supported
    /// language (`Degraded Performance`, `Behoben`).
    #[schema(schema_with = texts_schema, required)]
    texts: Option<Vec<String>>,
}

/// `texts` as `translate` reads it: 1 to `ITEMS_MAX` items of 1 to
/// `ITEM_MAX` characters with something to read.
fn texts_schema() -> utoipa::openapi::schema::Array {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let item = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(ITEM_MAX))
        .pattern(Some(r"^[^\u0000]*[^\s\u0000][^\u0000]*$"));
    ArrayBuilder::new()
        .items(item)
        .min_items(Some(1))
        .max_items(Some(ITEMS_MAX))
        .build()
}

#[derive(Serialize, utoipa::ToSchema)]
struct Translation {
    input: String,
    found: bool,
    /// The dictionary key the input stood for.
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'static str>,
    /// The text in the target language; absent when not found.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'static str>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Translated {
    to: &'static str,
    translations: Vec<Translation>,
    /// The inputs no dictionary has an entry for.
    missing: Vec<String>,
}

#[utoipa::path(post, path = "/api/translate", tag = "public", operation_id = "translate",
    summary = "Translate UI keys or known phrases with the page dictionaries (no entry: found=false)",
    request_body = TranslateInput, responses((status = 200, body = Data<Translated>), BodyErrors))]
async fn translate(Body(input): Body<TranslateInput>) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let codes = LANGS
        .iter()
        .map(|l| l.code())
        .collect::<Vec<_>>()
        .join(", ");
    let to = match input.to.as_deref() {
        None => {
            e.push("to", format!("is required: one of {codes}"));
            None
        }
        Some(t) => {
            let lang = LANGS.into_iter().find(|l| l.code() == t);
            if lang.is_none() {
                e.push("to", format!("has no dictionary; supported: {codes}"));
            }
            lang
        }
    };
    let texts = input.texts.unwrap_or_default();
    if texts.is_empty() {
        e.push(
            "texts",
            "is required: a non-empty list of UI keys or phrases",
        );
    } else if texts.len() > ITEMS_MAX {
        e.push("texts", format!("has more than {ITEMS_MAX} items"));
    }
    for (i, t) in texts.iter().enumerate() {
        if t.trim().is_empty() || t.chars().count() > ITEM_MAX {
            e.push(
                &format!("texts[{i}]"),
                format!("must be 1 to {ITEM_MAX} characters"),
            );
        }
    }
    e.into_result()?;
    let to: Lang = to.ok_or_else(|| ApiError::Internal("target language checked above".into()))?;
    let translations: Vec<Translation> = texts
        .into_iter()
        .map(|input| {
            let key = i18n::key_of(&input);
            let text = key.and_then(|k| to.entry(k));
            Translation {
                found: text.is_some(),
                key,
                text,
                input,
            }
        })
        .collect();
    let missing = translations
        .iter()
        .filter(|t| !t.found)
        .map(|t| t.input.clone())
        .collect();
    Ok(data(Translated {
        to: to.code(),
        translations,
        missing,
    }))
}
