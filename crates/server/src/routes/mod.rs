//! Route families, one folder each (`api_v1`, `api_v2`, `public`, `app`,
//! `html`, and `content` for what keys and people share), and the fallbacks that keep unknown routes
//! and wrong methods inside the problem+json contract.

mod admin;
mod api_v1;
mod api_v2;
mod app;
mod content;
mod html;
mod public;

use crate::error::ApiError;
use crate::state::AppState;
use axum::Router;
use utoipa::openapi::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// The routes in two families, and the OpenAPI document of exactly those routes.
pub struct Routes {
    /// Unauthenticated reads served from memory (public API, health): kept on
    /// a lean middleware stack because every layer costs on the hottest path.
    pub public: Router<AppState>,
    /// The keyed management API.
    pub managed: Router<AppState>,
    pub doc: OpenApi,
}

pub fn routes(state: &AppState) -> Routes {
    let (public, mut doc) = OpenApiRouter::new()
        .merge(public::router(state))
        .split_for_parts();
    let public = public.merge(html::router(state));
    let (managed, managed_doc) = OpenApiRouter::new()
        .nest("/api/v1", api_v1::router(state, content::router("/api/v1")))
        .nest("/api/v2", api_v2::router(state, content::v2_aliases()))
        .merge(app::router(state))
        .nest("/api", content::router("/api").merge(content::app_only()))
        .split_for_parts();
    doc.merge(managed_doc);
    let managed = managed.merge(admin::router());
    Routes {
        public: public.method_not_allowed_fallback(method_not_allowed),
        managed: managed.method_not_allowed_fallback(method_not_allowed),
        doc,
    }
}

/// The answer to a path no route matches.
pub async fn not_found() -> ApiError {
    ApiError::NotFound("no route matches this path".into())
}

/// The answer to a known path with a method it does not take.
async fn method_not_allowed() -> ApiError {
    ApiError::MethodNotAllowed
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Route families never import each other: what two of them need lives
    /// lower (extractors, responders, snapshot access), so a family can be
    /// changed or moved without reaching into another. Inside a family a
    /// module may take what its own family root shares (`super::`: the
    /// admin screens' `Screen`), never reach past it (`super::super`,
    /// `crate::routes`).
    #[test]
    fn route_modules_import_nothing_from_each_other() {
        let root = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("src/routes");
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        assert!(files.len() > 20, "the route modules were found: {files:?}");
        // The root composes the families; it is the one module that names them.
        for file in files.into_iter().filter(|f| !f.ends_with("routes/mod.rs")) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            // A family's root (`routes/app/mod.rs`) or a file right under
            // `routes/` has the routes root as its parent.
            let at_top = file.parent() == Some(root.as_path())
                || (file.ends_with("mod.rs")
                    && file.parent().and_then(Path::parent) == Some(root.as_path()));
            let offending: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.contains("crate::routes")
                        || l.contains("super::super")
                        || (at_top && l.contains("super::") && !l.contains("use super::*;"))
                })
                .collect();
            assert!(
                offending.is_empty(),
                "{} imports another route module: {offending:?}",
                file.display()
            );
        }
    }
}
