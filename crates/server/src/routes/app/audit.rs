//! The audit log's application routes: query, statistics, export, verify.
//!
//! Reading the audit log needs a signed-in user whose role has AUDIT_VIEW, or
//! an API key with the `admin` scope (for scripts and SIEM exports).

use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::QueryParams;
use crate::openapi::{BadQuery, KeyErrors};
use crate::respond::{Data, data};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use upstate_core::audit::{AuditEvent, Verification};
use upstate_core::roles::Permission;
use upstate_core::{FieldErrors, Timestamp};
use upstate_store::audit::{self, AuditFilter};
use utoipa_axum::{router::OpenApiRouter, routes};

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 500;
const EXPORT_PAGE: i64 = 500;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(list_alias))
        .routes(routes!(export))
        .routes(routes!(statistics))
        .routes(routes!(verify))
}

/// Someone allowed to read the audit log.
pub struct AuditReader;

impl FromRequestParts<AppState> for AuditReader {
    type Rejection = ApiError;

    /// AUDIT_VIEW: an owner or admin, or a key with the `admin` scope.
    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        caller.require(Permission::AuditView)?;
        Ok(AuditReader)
    }
}

/// Filters shared by list, export and statistics.
fn filter(q: &QueryParams, paged: bool) -> ApiResult<AuditFilter> {
    let mut e = FieldErrors::new();
    let actor_kind = q
        .parsed::<upstate_core::audit::ActorKind>(
            "actorKind",
            "one of key, user, cli, system, anonymous",
            &mut e,
        )
        .map(|k| k.as_str().to_string());
    let time = |e: &mut FieldErrors, name: &str| {
        q.get(name).and_then(|v| e.check(name, Timestamp::parse(v)))
    };
    let f = AuditFilter {
        actor_kind,
        actor_id: q.id("actorId", &mut e),
        // An action, or what comes before its dot (every action of it).
        action: q.get("action").and_then(|a| {
            let known = upstate_core::audit::Action::ALL.iter().any(|k| {
                let name = k.as_str();
                name == a || name.split('.').next() == Some(a)
            });
            if known {
                Some(a.to_string())
            } else {
                e.push(
                    "action",
                    "must be an audit action such as incident.resolve, or its first part such as incident",
                );
                None
            }
        }),
        target_type: q.get("targetType").map(str::to_string),
        target_id: q.id("targetId", &mut e),
        since: time(&mut e, "since"),
        until: time(&mut e, "until"),
        before_seq: if paged {
            // `?cursor=` with nothing after it is no cursor the server gave:
            // refused rather than read as the first page.
            if q.has("cursor") && q.get("cursor").is_none() {
                e.push("cursor", "must be a cursor returned by an earlier page");
            }
            q.parsed::<i64>("cursor", "a cursor returned by an earlier page", &mut e)
        } else {
            None
        },
        limit: if paged {
            q.limit("limit", DEFAULT_LIMIT, MAX_LIMIT, &mut e)
        } else {
            EXPORT_PAGE
        },
    };
    e.into_result()?;
    Ok(f)
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Count {
    key: String,
    count: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Aggregations {
    total: i64,
    by_action: Vec<Count>,
    by_actor: Vec<Count>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct EventPage {
    data: Vec<AuditEvent>,
    /// Pass as `cursor` for the next (older) page; null on the last page.
    next_cursor: Option<String>,
    aggregations: Aggregations,
}

async fn aggregations(state: &AppState, f: &AuditFilter) -> ApiResult<Aggregations> {
    let (total, by_action, by_actor) = audit::counts(&state.db, f).await?;
    let counts = |v: Vec<(String, i64)>| {
        v.into_iter()
            .map(|(key, count)| Count { key, count })
            .collect()
    };
    Ok(Aggregations {
        total,
        by_action: counts(by_action),
        by_actor: counts(by_actor),
    })
}

async fn page(state: AppState, q: QueryParams) -> ApiResult<Response> {
    let f = filter(&q, true)?;
    let events = audit::list(&state.db, &f).await?;
    let next_cursor = (events.len() as i64 == f.limit)
        .then(|| events.last().map(|e| e.seq.to_string()))
        .flatten();
    let aggregations = aggregations(&state, &f).await?;
    Ok(crate::respond::nosniff(
        axum::Json(EventPage {
            data: events,
            next_cursor,
            aggregations,
        })
        .into_response(),
    ))
}

#[utoipa::path(
    get,
    path = "/api/audit-events",
    tag = "audit",
    operation_id = "listAuditEvents",
    summary = "Audit events, newest first, with filters, cursor pagination and aggregations",
    params(
        ("actorKind" = Option<String>, Query, description = "key, user, cli, system or anonymous"),
        ("actorId" = Option<i64>, Query),
        ("action" = Option<String>, Query, description = "An action (incident.resolve), or what comes before its dot (incident: every incident action)"),
        ("targetType" = Option<String>, Query),
        ("targetId" = Option<i64>, Query),
        ("since" = Option<String>, Query, description = "RFC 3339, inclusive"),
        ("until" = Option<String>, Query, description = "RFC 3339, exclusive"),
        ("cursor" = Option<String>, Query, description = "nextCursor of the previous page"),
        ("limit" = Option<i64>, Query, description = "1 to 500, default 50"),
    ),
    responses((status = 200, body = EventPage), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
async fn list(
    State(state): State<AppState>,
    _: AuditReader,
    q: QueryParams,
) -> ApiResult<Response> {
    page(state, q).await
}

/// The seed's other name for the same listing.
#[utoipa::path(
    get,
    path = "/api/audit",
    tag = "audit",
    operation_id = "listAudit",
    summary = "Same as GET /api/audit-events",
    responses((status = 200, body = EventPage), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
async fn list_alias(
    State(state): State<AppState>,
    _: AuditReader,
    q: QueryParams,
) -> ApiResult<Response> {
    page(state, q).await
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Statistics {
    total: i64,
    by_action: Vec<Count>,
    by_actor: Vec<Count>,
    first_at: Option<Timestamp>,
    last_at: Option<Timestamp>,
}

#[utoipa::path(
    get,
    path = "/api/audit-events/statistics",
    tag = "audit",
    operation_id = "auditStatistics",
    summary = "Counts by action and actor, and the time span (same filters as the listing)",
    responses((status = 200, body = Data<Statistics>), KeyErrors, BadQuery),
    security(("api_key" = []), ("session" = []))
)]
async fn statistics(
    State(state): State<AppState>,
    _: AuditReader,
    q: QueryParams,
) -> ApiResult<Response> {
    let f = filter(&q, false)?;
    let a = aggregations(&state, &f).await?;
    let newest = audit::list(
        &state.db,
        &AuditFilter {
            limit: 1,
            ..f.clone()
        },
    )
    .await?;
    let oldest = audit::first(&state.db, &f).await?;
    Ok(data(Statistics {
        total: a.total,
        by_action: a.by_action,
        by_actor: a.by_actor,
        first_at: oldest.map(|e| e.at),
        last_at: newest.first().map(|e| e.at),
    }))
}

#[utoipa::path(
    post,
    path = "/api/audit-events/verify",
    tag = "audit",
    operation_id = "verifyAuditChain",
    summary = "Walk the hash chain: intact, or the first broken event and why",
    responses((status = 200, body = Data<Verification>), KeyErrors),
    security(("api_key" = []), ("session" = []))
)]
async fn verify(State(state): State<AppState>, _: AuditReader) -> ApiResult<Response> {
    Ok(data(audit::verify(&state.db).await?))
}

const CSV_HEADER: [&str; 13] = [
    "seq",
    "at",
    "actor_kind",
    "actor_id",
    "actor_label",
    "action",
    "target_type",
    "target_id",
    "summary",
    "client_addr",
    "user_agent",
    "prev_hash",
    "hash",
];

fn csv_rows(events: &[AuditEvent], header: bool) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if header {
        let _ = w.write_record(CSV_HEADER);
    }
    for e in events {
        let opt = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
        let _ = w.write_record([
            e.seq.to_string(),
            e.at.to_rfc3339(),
            e.actor.kind.clone(),
            opt(e.actor.id),
            e.actor.label.clone(),
            e.action.clone(),
            e.target_type.clone(),
            opt(e.target_id),
            e.summary.to_string(),
            e.client_addr.clone().unwrap_or_default(),
            e.user_agent.clone().unwrap_or_default(),
            e.prev_hash.clone(),
            e.hash.clone(),
        ]);
    }
    w.into_inner().unwrap_or_default()
}

fn json_rows(events: &[AuditEvent], first: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if !(first && i == 0) {
            out.push(b',');
        }
        out.extend(serde_json::to_vec(e).unwrap_or_default());
    }
    out
}

#[utoipa::path(
    get,
    path = "/api/audit-events/export",
    tag = "audit",
    operation_id = "exportAuditEvents",
    summary = "All matching events, newest first, streamed as JSON (an array) or CSV",
    params(("format" = Option<String>, Query, description = "json (default) or csv; the listing's filters apply")),
    responses(
        (status = 200, description = "The events: a JSON array (the default), or CSV with format=csv",
            content((Vec<AuditEvent> = "application/json"), ("text/csv"))),
        KeyErrors, BadQuery
    ),
    security(("api_key" = []), ("session" = []))
)]
async fn export(
    State(state): State<AppState>,
    _: AuditReader,
    q: QueryParams,
) -> ApiResult<Response> {
    let csv = match q.get("format") {
        None | Some("json") => false,
        Some("csv") => true,
        Some(_) => return Err(ApiError::validation("format", "must be json or csv")),
    };
    let f = filter(&q, false)?;
    // One page per step: (filter with the cursor, first page?, done?).
    let stream = futures_util::stream::unfold((f, true, false), move |(f, first, done)| {
        let db = state.db.clone();
        async move {
            if done {
                return None;
            }
            let events = match audit::list(&db, &f).await {
                Ok(ev) => ev,
                Err(e) => {
                    return Some((Err(std::io::Error::other(e.to_string())), (f, first, true)));
                }
            };
            let last = events.len() < EXPORT_PAGE as usize;
            let mut chunk = if csv {
                csv_rows(&events, first)
            } else {
                json_rows(&events, first)
            };
            if !csv && first {
                chunk.insert(0, b'[');
            }
            if !csv && last {
                chunk.push(b']');
            }
            let next = AuditFilter {
                before_seq: events.last().map(|e| e.seq),
                ..f
            };
            Some((Ok::<_, std::io::Error>(chunk), (next, false, last)))
        }
    });
    let mut res = Body::from_stream(stream).into_response();
    let (ctype, name) = if csv {
        ("text/csv; charset=utf-8", "audit.csv")
    } else {
        ("application/json", "audit.json")
    };
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(res)
}
