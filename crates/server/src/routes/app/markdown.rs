//! `POST /api/markdown/preview`: the HTML the public page will show for a
//! message or postmortem, rendered and cleaned exactly as the page does, so
//! the admin interface's live preview never promises what the page will not
//! show.

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::openapi::{BodyErrors, SessionErrors};
use crate::respond::{Data, data};
use crate::views;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use upstate_core::roles::Permission;
use upstate_core::validate::MESSAGE_MAX;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<crate::state::AppState> {
    OpenApiRouter::new().routes(routes!(preview))
}

#[derive(Deserialize, utoipa::ToSchema)]
struct PreviewInput {
    #[schema(schema_with = upstate_core::schema::description, required)]
    markdown: Option<String>,
    /// `message` (a timeline update: line breaks kept) or `document` (a
    /// postmortem). Default `message`.
    #[schema(nullable = false, value_type = Option<String>, pattern = "^(message|document)$")]
    kind: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Preview {
    /// Sanitised HTML: no scripts, event handlers or styles.
    html: String,
}

/// Postmortems run longer than messages; the request body limit bounds it too.
const PREVIEW_MAX: usize = MESSAGE_MAX * 20;

#[utoipa::path(post, path = "/api/markdown/preview", tag = "incidents", operation_id = "previewMarkdown",
    summary = "Render Markdown as the public page will show it (needs PAGES_READ)",
    request_body = PreviewInput,
    responses((status = 200, body = Data<Preview>), SessionErrors, BodyErrors),
    security(("session" = []), ("api_key" = [])))]
async fn preview(caller: Caller, Body(input): Body<PreviewInput>) -> ApiResult<Response> {
    caller.require(Permission::PagesRead)?;
    let text = input
        .markdown
        .ok_or_else(|| ApiError::validation("markdown", "is required"))?;
    if text.chars().count() > PREVIEW_MAX {
        return Err(ApiError::validation(
            "markdown",
            format!("must be at most {PREVIEW_MAX} characters"),
        ));
    }
    let html = match input.kind.as_deref().unwrap_or("message") {
        "message" => views::message_markdown(&text),
        "document" => views::markdown(&text),
        _ => {
            return Err(ApiError::validation("kind", "must be message or document"));
        }
    };
    Ok(data(Preview { html: html.0 }))
}
