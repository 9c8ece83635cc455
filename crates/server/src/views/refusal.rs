//! A refusal as a person at a public page's plain HTML form reads it: a
//! short page in their language. Here, beside the other pages, so the error
//! type stays free of rendering.

use crate::error::ApiError;
use axum::response::{IntoResponse, Response};

impl ApiError {
    /// The refusal for a plain HTML form (a person at a public page's form
    /// reads it as a short page headed in their language), or the problem
    /// document for the rest.
    pub fn answer(self, html_form: Option<crate::i18n::Lang>) -> Response {
        let Some(lang) = html_form else {
            return self.into_response();
        };
        let (status, text) = self.for_people();
        (
            status,
            axum::response::Html(super::notice_page(
                lang,
                lang.t("notice.failed_title"),
                &text,
                None,
                None,
            )),
        )
            .into_response()
    }
}
