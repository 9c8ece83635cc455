//! `GET /api/admin/export`: the whole install as one document (the format
//! is `docs/export.schema.json`); `POST /api/admin/export`: such a document
//! read into this install, all or nothing. Admins only, signed in, with a
//! fresh step-up: the document holds every account and subscriber, and on
//! request what opens the channels and second factors.
//! `POST /api/admin/import/{statuspage,instatus,cachet}`: another
//! product's page, fetched from its address, brought in beside the pages
//! here.

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, QueryParams, Upload, Uploaded};
use crate::openapi::{BadQuery, BodyErrors, NotFound, SessionErrors};
use crate::respond::{Data, data};
use crate::session::SignedIn;
use crate::state::AppState;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;
use upstate_core::FieldErrors;
use upstate_core::roles::Permission;
use upstate_jobs::fetch_page::Unread;
use upstate_store::transfer::{self, Access, Include, Mode, Product};
use utoipa_axum::{router::OpenApiRouter, routes};

/// The largest document `POST` reads (the CLI reads any size).
pub const IMPORT_MAX_BYTES: usize = 256 * 1024 * 1024;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export, import))
        .layer(DefaultBodyLimit::max(IMPORT_MAX_BYTES))
        .routes(routes!(from_statuspage))
        .routes(routes!(from_instatus))
        .routes(routes!(from_cachet))
}

/// Admins, with a step-up verified in the last minutes.
async fn admin(state: &AppState, me: &SignedIn, headers: &HeaderMap) -> ApiResult<()> {
    me.require(Permission::SettingsWrite)?;
    me.require(Permission::UsersManage)?;
    me.require_step_up(state, headers).await
}

#[utoipa::path(get, path = "/api/admin/export", tag = "system", operation_id = "exportInstall",
    summary = "The whole install as one versioned JSON document (needs a step-up)",
    description = "Every page with its settings and theme, groups, components and their status history, incidents with updates, maintenance (one-off and recurring), postmortems, templates, quick links, subscribers, channels, monitors with their checks and rollups, users, API keys and settings. Credential hashes and sealed secrets read \"<withheld>\" unless asked for. Described by docs/export.schema.json; recorded in the audit log as install.export.",
    params(
        ("secrets" = Option<bool>, Query, description = "include channel secrets, second-factor seeds, the push key, monitor header values and bucket credentials, in clear"),
        ("passwords" = Option<bool>, Query, description = "include password, page password, API key and recovery code hashes"),
    ),
    responses((status = 200, description = "The document, as a download", content_type = "application/json", body = Object),
        SessionErrors, BadQuery))]
async fn export(
    State(state): State<AppState>,
    me: SignedIn,
    headers: HeaderMap,
    q: QueryParams,
) -> ApiResult<Response> {
    let mut e = FieldErrors::new();
    let include = Include {
        secrets: q.bool("secrets", &mut e).unwrap_or(false),
        passwords: q.bool("passwords", &mut e).unwrap_or(false),
    };
    e.into_result()?;
    admin(&state, &me, &headers).await?;
    let doc = transfer::export_as(&state.db, &me.audit, include).await?;
    let name = format!(
        "attachment; filename=\"upstate-export-{}.json\"",
        state.db.clock.now().to_rfc3339().get(..10).unwrap_or("now")
    );
    let mut res = axum::Json(doc).into_response();
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&name) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

#[utoipa::path(post, path = "/api/admin/export", tag = "system", operation_id = "importInstall",
    summary = "Read an export into this install, in one transaction (needs a step-up)",
    description = "mode=empty (the default) takes everything into an install without pages, keeping ids; accounts already here are matched by email. mode=add_pages adds the document's pages, with all that belongs to them, beside the pages here under new ids, and answers the ids that changed. A document that does not fit is refused naming the first wrong field's path, and nothing is written.",
    params(("mode" = inline(Option<ImportMode>), Query, description = "empty (the default) or add_pages"),
        ("source" = inline(Option<ImportSource>), Query, description = "upstate (an export, the default) or uptime_kuma (an Uptime Kuma JSON backup, or its database file as application/vnd.sqlite3: its monitors become components with monitors, and its status pages, maintenance and incidents come too, beside the pages here)")),
    request_body(description = "A document GET /api/admin/export wrote, or with source=uptime_kuma Kuma's JSON backup or its database file (kuma.db)",
        content(
            (Object = "application/json"),
            (Vec<u8> = "application/vnd.sqlite3"),
        )),
    responses((status = 200, body = Data<ImportedView>), SessionErrors, BodyErrors,
        (status = 409, description = "The install is not empty (mode=empty)", content_type = "application/problem+json")))]
async fn import(
    State(state): State<AppState>,
    me: SignedIn,
    headers: HeaderMap,
    q: QueryParams,
    upload: Upload,
) -> ApiResult<Response> {
    let mode = match q.get("mode") {
        None | Some("empty") => Mode::Empty,
        Some("add_pages") => Mode::AddPages,
        Some(_) => return Err(ApiError::validation("mode", "must be empty or add_pages")),
    };
    let kuma = match q.get("source") {
        None | Some("upstate") => false,
        Some("uptime_kuma") => true,
        Some(_) => {
            return Err(ApiError::validation(
                "from",
                "must be upstate or uptime_kuma",
            ));
        }
    };
    admin(&state, &me, &headers).await?;
    let done = match (kuma, upload.read()?) {
        (true, upload) => {
            // Kuma's JSON backup, or its database file.
            let doc = match upload {
                Uploaded::Json(doc) => doc,
                Uploaded::Sqlite(bytes) => transfer::read_kuma_db_bytes(&bytes)
                    .await
                    .map_err(|e| ApiError::validation("body", e))?,
            };
            let schema = transfer::schema_version(&state.db).await?;
            let made = transfer::from_uptime_kuma(&doc, schema, state.db.clock.now())
                .map_err(|e| ApiError::validation("body", e))?;
            foreign(&state, &me, made).await?
        }
        (false, Uploaded::Json(doc)) => transfer::import(&state.db, &me.audit, &doc, mode).await?,
        (false, Uploaded::Sqlite(_)) => {
            return Err(ApiError::validation(
                "body",
                "a database file is read only as Uptime Kuma's (source=uptime_kuma)",
            ));
        }
    };
    // Pages, settings and accounts changed together: rebuild what is served.
    state.snapshots.drop_all();
    Ok(data(ImportedView {
        mode: match done.mode {
            Mode::Empty => "empty",
            Mode::AddPages => "add_pages",
        },
        rows: done.rows,
        ids: done.ids,
        notes: done.notes,
    }))
}

/// Where an import's document goes (`mode`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Describes the query parameter; the handler reads the text.
#[schema(rename_all = "snake_case")]
enum ImportMode {
    Empty,
    AddPages,
}

/// What the document is (`source`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Describes the query parameter; the handler reads the text.
#[schema(rename_all = "snake_case")]
enum ImportSource {
    Upstate,
    UptimeKuma,
}

/// What an import brought.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ImportedView {
    /// `empty` or `add_pages`.
    mode: &'static str,
    /// Rows written, by table.
    rows: BTreeMap<String, usize>,
    /// The ids that differ from the document's, by table: `{"components": {"3": 17}}`.
    ids: BTreeMap<String, BTreeMap<String, i64>>,
    /// What must be done by hand (withheld passwords, second factors, the
    /// push key) and what stayed out.
    notes: Vec<String>,
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StatuspageSource {
    /// The page's address, such as `https://status.example.com`; with an
    /// API key, the management API's, `https://api.statuspage.io/v1`.
    #[schema(pattern = "^https?://[^/]+")]
    url: String,
    /// A management API key: subscribers come too, and a private page can
    /// be read.
    #[schema(min_length = 1)]
    api_key: Option<String>,
    /// The page's id, when the key reads several.
    #[schema(min_length = 1)]
    page_id: Option<String>,
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct InstatusSource {
    /// Instatus's API address (`https://api.instatus.com`, the default).
    #[schema(pattern = "^https?://[^/]+")]
    url: Option<String>,
    /// An API key of the page's team (Instatus: User settings, Developer).
    #[schema(min_length = 1)]
    api_key: String,
    /// The page's id, when the key reads several.
    #[schema(min_length = 1)]
    page_id: Option<String>,
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CachetSource {
    /// The Cachet install's address, such as `https://status.example.com`.
    #[schema(pattern = "^https?://[^/]+")]
    url: String,
    /// An API token, sent as X-Cachet-Token (public reads need none).
    #[schema(min_length = 1)]
    api_key: Option<String>,
}

/// What an import from another product brought and left.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct FromProduct {
    /// Rows written, by table (all zero when everything was there before).
    rows: BTreeMap<String, usize>,
    /// What stayed out, with the reason.
    left_out: Vec<String>,
    /// Files the source did not serve.
    not_read: Vec<String>,
}

#[utoipa::path(post, path = "/api/admin/import/statuspage", tag = "system", operation_id = "importStatuspage",
    summary = "Bring an Atlassian Statuspage page in, with its history, beside the pages here",
    description = "Without a key, reads the page's public JSON (summary, incidents, scheduled maintenance) from its address. With a management API key, reads the page, components, incidents, maintenance and subscribers from the API address. Requests keep within the outgoing_allow rule. Imported again, only what is new is added. An address that is not http(s) is 422 on url; one where no page can be read is 404; a key that reads several pages without a pageId is 422 on pageId; nothing changes either way.",
    request_body = StatuspageSource,
    responses((status = 200, body = Data<FromProduct>), SessionErrors, BodyErrors, NotFound))]
async fn from_statuspage(
    State(state): State<AppState>,
    me: SignedIn,
    Body(source): Body<StatuspageSource>,
) -> ApiResult<Response> {
    let access = source.api_key.map(|key| Access {
        key,
        page: source.page_id.unwrap_or_default(),
    });
    bring(&state, &me, Product::Statuspage, &source.url, access).await
}

#[utoipa::path(post, path = "/api/admin/import/instatus", tag = "system", operation_id = "importInstatus",
    summary = "Bring an Instatus page in, with its history, beside the pages here",
    description = "Reads the page's components, incidents with every update and maintenance through Instatus's API with the key, within the outgoing_allow rule. Imported again, only what is new is added. No page read is 404; a key that reads several pages without a pageId is 422 on pageId; nothing changes either way.",
    request_body = InstatusSource,
    responses((status = 200, body = Data<FromProduct>), SessionErrors, BodyErrors, NotFound))]
async fn from_instatus(
    State(state): State<AppState>,
    me: SignedIn,
    Body(source): Body<InstatusSource>,
) -> ApiResult<Response> {
    let url = source
        .url
        .unwrap_or_else(|| "https://api.instatus.com".into());
    let access = Access {
        key: source.api_key,
        page: source.page_id.unwrap_or_default(),
    };
    bring(&state, &me, Product::Instatus, &url, Some(access)).await
}

#[utoipa::path(post, path = "/api/admin/import/cachet", tag = "system", operation_id = "importCachet",
    summary = "Bring a Cachet page in, with its history, beside the pages here",
    description = "Reads Cachet 2's API (/api/v1) or Cachet 3's (/api): component groups, components, incidents with their updates, and schedules, within the outgoing_allow rule. Imported again, only what is new is added. An address that is not http(s) is 422 on url; one where no Cachet can be read is 404; nothing changes either way.",
    request_body = CachetSource,
    responses((status = 200, body = Data<FromProduct>), SessionErrors, BodyErrors, NotFound))]
async fn from_cachet(
    State(state): State<AppState>,
    me: SignedIn,
    Body(source): Body<CachetSource>,
) -> ApiResult<Response> {
    let access = source.api_key.map(|key| Access {
        key,
        page: String::new(),
    });
    bring(&state, &me, Product::Cachet, &source.url, access).await
}

/// Reads another product's page and brings it in beside the pages here.
async fn bring(
    state: &AppState,
    me: &SignedIn,
    product: Product,
    url: &str,
    access: Option<Access>,
) -> ApiResult<Response> {
    me.require(Permission::SettingsWrite)?;
    me.require(Permission::PagesWrite)?;
    let url = url.trim();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(ApiError::validation("url", "must be an http(s) address"));
    }
    let (files, not_read) =
        upstate_jobs::fetch_page::foreign(state.sender.outgoing(), product, url, access.as_ref())
            .await
            .map_err(|e| match e {
                Unread::Choose(message) => ApiError::validation("pageId", message),
                Unread::Missing(e) => {
                    ApiError::NotFound(format!("no {} page read: {e}", product.title()))
                }
            })?;
    let schema = transfer::schema_version(&state.db).await?;
    let made = product
        .translate(&files, schema, state.db.clock.now())
        .map_err(|e| ApiError::NotFound(format!("no {} page read: {e}", product.title())))?;
    let done = foreign(state, me, made).await?;
    state.snapshots.drop_all();
    Ok(data(FromProduct {
        rows: done.rows,
        left_out: done.notes,
        not_read,
    }))
}

/// Another product's page, translated, joins the pages here; what the
/// translation left out leads the notes.
async fn foreign(
    state: &AppState,
    me: &SignedIn,
    made: transfer::Translated,
) -> ApiResult<transfer::Imported> {
    let mut done = transfer::import_from(
        &state.db,
        &me.audit,
        &made.doc,
        Mode::AddPages,
        Some(&made.origin),
    )
    .await?;
    done.notes.splice(0..0, made.left_out);
    Ok(done)
}
